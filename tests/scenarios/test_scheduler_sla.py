"""sla: jobs past their service-level waiting time go first and are let in (Volcano's plugins/sla), in
sessions over snapshots and through a running control plane (a deadline wakes the scheduler)."""
import datetime as dt

import pytest

from vclite.api import kinds, meta
from vclite.lib import clock
from vclite.runtime import runtime
from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import sla

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue


def tiers(args=None):
    return [[P("priority", enableJobOrder=True), P("sla", args or {}, enableJobOrder=True, enableJobEnqueued=True,
                                                    enableJobPipelined=True),
             P("gang", enableJobReady=True, enableJobPipelined=True, enableJobOrder=True)],
            [P("proportion", enableJobEnqueued=True, enabledAllocatable=True, enabledOverused=True),
             P("predicates", enablePredicate=True)]]


def ago(seconds):
    return (NOW - dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def group(name, created_ago, wait=None, key="sla-waiting-time", phase="Pending"):
    g = pg(f"c1/{name}", "q1", 1, phase=phase, created=ago(created_ago), min_resources={"cpu": "2"})
    if wait is not None:
        g["metadata"]["annotations"] = {key: wait}
    return g


def run(groups, pods=(), args=None, capability=None):
    state = snapshot.ClusterState(nodes=[node("n1", 8, "16Gi")], queues=[queue("q1", capability=capability)],
                                  podgroups=groups, pods=list(pods))
    return session.run_session(state, conf.build("enqueue, allocate", tiers(args)), NOW)


def inqueue(result):
    return sorted(k for k, st in result.podgroup_status.items() if st.get("phase") == "Inqueue")


FULL = {"cpu": "2"}           # the queue holds one 2-cpu job
RUNNING = [pod("c1/busy", "busy", cpu="2", node="n1", phase="Running")]
BUSY = pg("c1/busy", "q1", 1, phase="Running", created=ago(600), min_resources={"cpu": "2"})   # (none elastic)


@pytest.mark.parametrize("groups, args, want", [
    pytest.param([group("old", 300), group("new", 10)], None, ["c1/old"], id="no-sla-oldest-first"),
    pytest.param([group("old", 300), group("new", 10, "1h")], None, ["c1/new"], id="a-job-with-sla-goes-first"),
    pytest.param([group("old", 300, "2h"), group("new", 10, "1h")], None, ["c1/new"], id="earlier-deadline-first"),
    pytest.param([group("old", 300), group("new", 10)], {"sla-waiting-time": "1h"}, ["c1/old"],
                 id="global-waiting-time-keeps-creation-order"),
    pytest.param([group("old", 300, "xyz"), group("new", 10, "1h")], None, ["c1/new"],
                 id="a-bad-annotation-is-no-sla"),
    pytest.param([group("old", 300), group("new", 10, "1h", key="volcano.sh/sla-waiting-time")], None, ["c1/new"],
                 id="the-volcano-sh-annotation"),
])
def test_job_order(groups, args, want):
    assert inqueue(run(groups, args=args, capability=FULL)) == want


@pytest.mark.parametrize("created_ago, wait, want", [
    pytest.param(120, "1m", ["c1/late"], id="past-its-deadline-let-in-over-capability"),
    pytest.param(30, "1m", [], id="before-its-deadline-waits"),
    pytest.param(120, None, [], id="without-sla-waits"),
])
def test_a_job_past_its_deadline_is_enqueued_even_over_the_queue_capability(created_ago, wait, want):
    result = run([BUSY, group("late", created_ago, wait)], RUNNING, capability=FULL)
    assert inqueue(result) == want
    due = NOW + dt.timedelta(seconds=30) if (wait and created_ago < 60) else None
    assert result.recheck_at == due      # the scheduler looks again when the deadline comes


@pytest.mark.parametrize("args, message", [
    pytest.param({"sla-waiting-time": "soon"}, 'expected a positive Go duration such as "1h30m"'),
    pytest.param({"sla-waiting-time": "-5m"}, "got '-5m'"),
    pytest.param({"sla-waiting-time": 5}, "expected a string"),
    pytest.param({"sla-waiting": "5m"}, 'unknown argument "sla-waiting"'),
])
def test_bad_arguments_fail_at_load(args, message):
    with pytest.raises(ValueError) as e:
        conf.build("enqueue, allocate", [[P("sla", args)]])
    assert message in str(e.value)


@pytest.mark.parametrize("text, seconds", [("1h2m3s", 3723), ("90s", 90), ("0", None), ("-1s", None), ("1", None),
                                           ("", None), (None, None)])
def test_waiting_time(text, seconds):
    got = sla.waiting_time(text)
    assert (got.total_seconds() if got else None) == seconds


JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: NAME, annotations: ANNOTATIONS}
spec:
  minAvailable: 1
  schedulerName: volcano
  queue: q1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          containers: [{name: c, image: x, command: ["true"], resources: {requests: {cpu: "2"}}}]
"""


def test_a_waiting_job_is_let_in_when_its_deadline_comes_with_nothing_else_happening():
    from vclite.api import yamlio
    cfg = conf.build("enqueue, allocate", tiers())
    n1 = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
          "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "10"},
                     "capacity": {"cpu": "8", "memory": "16Gi", "pods": "10"}}}
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[n1], run_pods=False, scheduler_config=cfg)
    rt.start()
    rt.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
                      "spec": {"weight": 1, "capability": {"cpu": "2"}}})
    for name, notes in (("first", "{}"), ("second", "{sla-waiting-time: 10m}")):
        text = JOB.replace("NAME", name).replace("ANNOTATIONS", notes)
        rt.client.create(yamlio.load_string(text, "job.yaml")[0].obj)
        rt.step()
    start = rt.clock.now()
    for _ in range(50):
        rt.step()
    phases = {meta.name(p).split("-")[0]: meta.phase(p) for p in rt.client.list(kinds.PODGROUP)}
    assert phases == {"first": "Running", "second": "Pending"}, phases
    rt.settle()     # nothing happens but time: the deadline wakes the scheduler
    phases = {meta.name(p).split("-")[0]: meta.phase(p) for p in rt.client.list(kinds.PODGROUP)}
    assert phases["second"] in ("Inqueue", "Running"), phases
    assert rt.clock.now() - start >= dt.timedelta(minutes=10)
