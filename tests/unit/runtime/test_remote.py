"""remote.ControllerRuntime: vclite's JobFlow controllers over a Client they do not own, as `vcctl
controller` runs them against a cluster — here the "cluster" is an embedded runtime started without
its own JobFlow controllers (its vcjob controller, scheduler and executor run real processes).
Also: watch events handed to the loop's thread, the startup check, an invalid JobFlow failing visibly."""
import asyncio
import threading

import pytest

from vclite.api import kinds, meta, yamlio
from vclite.cli import manifests
from vclite.lib import clock, workqueue
from vclite.runtime import gates, remote, runtime
from vclite.runtime import loop as loop_mod

TEMPLATE = """---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  tasks: [{{name: main, replicas: 1, template: {{spec: {{restartPolicy: Never,
           containers: [{{name: main, image: busybox, command: ["true"]}}]}}}}}}]
"""
FLOW = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: pair}
spec:
  flows:
    - name: first
    - name: second
      dependsOn: {targets: [first]}
""" + TEMPLATE.format(name="first") + TEMPLATE.format(name="second")
WITHOUT_JOBFLOWS = gates.enabled(["*,-jobflow-controller,-jobtemplate-controller"])


@pytest.fixture
def cluster(tmp_path):
    rt = runtime.Runtime(clock.RealClock(), workdir=tmp_path, controllers=WITHOUT_JOBFLOWS)
    yield rt
    rt.close()


def phase(rt, kind, name):
    obj = rt.client.store.peek(kind, "default", name)
    return meta.phase(obj) if obj is not None else None


async def drive(cluster, ctl, done, seconds=60.0):
    """Run the cluster and the controller on one loop until `done()` (or fail after `seconds`)."""
    serving = asyncio.ensure_future(ctl.serve())
    deadline = asyncio.get_running_loop().time() + seconds
    try:
        while not done():
            assert asyncio.get_running_loop().time() < deadline, "the flow did not finish"
            await cluster.run_until(done, timeout=0.05)
            await asyncio.sleep(0.002)   # (the controller's turn when the cluster is idle)
    finally:
        ctl.request_stop()
        await serving
        await cluster.shutdown()


def test_a_flow_runs_with_the_controllers_outside_the_control_plane(cluster):
    async def go():
        ctl = remote.ControllerRuntime(remote.LoopThreadClient(cluster.client, asyncio.get_running_loop()))
        cluster.start()
        assert not manifests.apply_all(cluster.client, yamlio.load_string(FLOW, "pair.yaml"))
        await cluster.run_until(lambda: False, timeout=0.3)
        assert cluster.client.list(kinds.JOB) == []   # nothing in the cluster turns JobFlows into vcjobs
        ctl.start()
        await drive(cluster, ctl, lambda: phase(cluster, kinds.JOBFLOW, "pair") == "Succeed")
    asyncio.run(go())
    assert [phase(cluster, kinds.JOB, n) for n in ("pair-first", "pair-second")] == ["Completed", "Completed"]
    template = cluster.client.get(kinds.JOBTEMPLATE, "default", "first")
    assert template["status"]["jobDependsOnList"] == ["pair-first"]   # the JobTemplate controller ran too


def test_an_invalid_jobflow_fails_with_admissions_messages(cluster):
    """On a cluster nothing runs vclite's admission: the controller checks the spec itself."""
    bad = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "loop"},
           "spec": {"flows": [{"name": "a", "dependsOn": {"targets": ["b"]}},
                              {"name": "b", "dependsOn": {"targets": ["a"]}}]}}

    async def go():
        ctl = remote.ControllerRuntime(remote.LoopThreadClient(cluster.client, asyncio.get_running_loop()))
        cluster.start()
        ctl.start()
        cluster.client.store.create(kinds.JOBFLOW, bad)   # (past admission, as on a cluster)
        await drive(cluster, ctl, lambda: phase(cluster, kinds.JOBFLOW, "loop") == "Failed", seconds=20)
    asyncio.run(go())
    status = cluster.client.get(kinds.JOBFLOW, "default", "loop")["status"]
    assert status["conditions"]["spec"]["reason"] == "InvalidJobFlow"
    assert "cycle" in status["conditions"]["spec"]["message"]
    assert cluster.client.list(kinds.JOB) == []
    warnings = [e for e in cluster.client.list(kinds.EVENT) if e.get("reason") == "InvalidJobFlow"]
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"


def test_watch_events_are_handed_to_the_loops_thread(cluster):
    seen = []

    async def go():
        loop = asyncio.get_running_loop()
        client = remote.LoopThreadClient(cluster.client, loop)
        got = asyncio.Event()
        client.watch(kinds.QUEUE, lambda ev: (seen.append((threading.get_ident(), meta.name(ev.object))), got.set()))
        writer = threading.Thread(target=cluster.client.create, args=(
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
             "spec": {"weight": 1}},))
        writer.start()
        writer.join()
        assert seen == []   # not on the writer's thread
        await asyncio.wait_for(got.wait(), 5)
        return threading.get_ident()
    loop_thread = asyncio.run(go())
    assert seen == [(loop_thread, "q1")]


class Discovery:
    """What `missing_apis` reads of a client: discovery answers (resources served per group/version)."""

    def __init__(self, served):
        self.served = served

    def serves(self, group_version, plural):
        return (group_version, plural) in self.served


@pytest.mark.parametrize("served, missing", [
    ({("flow.volcano.sh/v1alpha1", "jobflows"), ("flow.volcano.sh/v1alpha1", "jobtemplates"),
      ("batch.volcano.sh/v1alpha1", "jobs")}, []),
    ({("batch.volcano.sh/v1alpha1", "jobs")},
     ["vclite's JobFlow CRD is not installed: flow.volcano.sh/v1alpha1 jobflows is not served",
      "vclite's JobTemplate CRD is not installed: flow.volcano.sh/v1alpha1 jobtemplates is not served"]),
    ({("flow.volcano.sh/v1alpha1", "jobflows"), ("flow.volcano.sh/v1alpha1", "jobtemplates")},
     ["Volcano is not installed (it serves batch.volcano.sh/v1alpha1 jobs): batch.volcano.sh/v1alpha1 jobs "
      "is not served"]),
])
def test_missing_apis(served, missing):
    assert remote.missing_apis(Discovery(served)) == missing


class Delayed:
    """A component whose watch handler only sets a timer (as the JobFlow controller's status refresh)."""
    name = "delayed"

    def __init__(self, client, clk):
        self.client, self.synced = client, []
        self.queue = workqueue.WorkQueue(clk)

    def start(self):
        self.client.watch(kinds.QUEUE, lambda ev: self.queue.add_after(meta.name(ev.object), 0.05))

    def sync(self, key):
        self.synced.append(key)


def test_a_timer_set_by_a_handed_over_event_wakes_the_sleeping_loop(cluster):
    async def go():
        client = remote.LoopThreadClient(cluster.client, asyncio.get_running_loop())
        component = Delayed(client, clock.RealClock())
        ctl = loop_mod.Loop(clock.RealClock(), [component])
        client.after_event = ctl._on_add
        ctl.start()
        serving = asyncio.ensure_future(ctl.serve())
        await asyncio.sleep(0.05)   # (serve() is asleep: nothing to do, no timer)
        writer = threading.Thread(target=cluster.client.create, args=(
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q2"},
             "spec": {"weight": 1}},))
        writer.start()
        writer.join()
        for _ in range(200):
            if component.synced:
                break
            await asyncio.sleep(0.025)
        ctl.request_stop()
        await serving
        return component.synced
    assert asyncio.run(go()) == ["q2"]
