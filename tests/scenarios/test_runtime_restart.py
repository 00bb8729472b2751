"""A durable Runtime (data_dir) dropped and rebuilt at different moments of a JobFlow, on a virtual
clock: the flow finishes, no vcjob (or pod group, or pod) is ever created twice, and nothing the
old runtime accepted is missing from the new one. The test plays the kubelet through the API."""
import os
import pathlib
import shutil
import tempfile

import pytest

from vclite.api import kinds, meta, yamlio
from vclite.lib import clock
from vclite.runtime import runtime
from tests.scenarios.test_embedded_control_plane import NODE, jobflow, kubelet, template

DEPS = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}
RETRY = "  policies:\n    - {event: PodFailed, action: RestartJob}\n  maxRetry: 3"
WATCHED = (kinds.JOB, kinds.PODGROUP, kinds.POD, kinds.JOBFLOW)


@pytest.fixture
def data_dir(tmp_path):
    """A data directory on tmpfs when there is one: fsync is free there, and what is tested here is
    reconciliation, not the disk (tests/unit/store covers durability)."""
    shm = pathlib.Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path / "data"
        return
    d = pathlib.Path(tempfile.mkdtemp(prefix="vclite-restart-", dir=shm))
    yield d / "data"
    shutil.rmtree(d, ignore_errors=True)


class Life:
    """Every runtime built on one data directory, with a record of every object ever ADDED."""

    def __init__(self, data_dir):
        self.data_dir, self.clock, self.rt = data_dir, clock.VirtualClock(), None
        self.added: list[tuple[str, str, str]] = []   # (kind, name, uid)
        self.restarts = 0

    def boot(self):
        self.rt = runtime.Runtime(self.clock, nodes=[NODE], run_pods=False, data_dir=self.data_dir)
        for kind in WATCHED:
            self.rt.client.watch(kind, self._on_event)
        self.rt.start()
        return self.rt

    def _on_event(self, ev):
        if ev.type == "ADDED":
            self.added.append((ev.kind.kind, meta.name(ev.object), meta.uid(ev.object)))

    def restart(self):
        before = snapshot(self.rt)
        rv = int(self.rt.client.store.resource_version)
        self.rt.close()
        self.boot()
        self.restarts += 1
        assert snapshot(self.rt) == before, "every accepted object survives the restart, unchanged"
        assert int(self.rt.client.store.resource_version) == rv


def snapshot(rt):
    return {(k.kind, meta.key(o)): (meta.uid(o), o["metadata"]["resourceVersion"])
            for k in kinds.ALL for o in rt.client.list(k)}


def run(life, restart_after, outcome=lambda pod: "Succeeded", limit=100):
    """Kubelet rounds, restarting where `restart_after` says: "apply" = before any work was processed;
    n = after round n's pod changes were all processed; "n-mid" = right after the kubelet wrote round
    n's pod changes, before any controller saw them."""
    if "apply" in restart_after:
        life.restart()
    for round_ in range(1, limit):
        life.rt.settle()
        if round_ - 1 in restart_after:
            life.restart()
            life.rt.settle()   # the new runtime's start-up reconcile runs before the next pod change
        moved = kubelet(life.rt, outcome)
        if f"{round_}-mid" in restart_after:
            life.restart()
        if not moved:
            life.rt.settle()
            return
    raise AssertionError("the flow never finished")


@pytest.mark.parametrize("restart_after", [
    pytest.param(set(), id="no-restart"),
    pytest.param({"apply"}, id="right-after-apply"),
    pytest.param({1}, id="after-first-pods-run"),
    pytest.param({"1-mid"}, id="before-the-first-pods-ran-were-seen"),
    pytest.param({2, "3-mid", 5}, id="three-times"),
    pytest.param({1, 2, 3, 4, 5, 6}, id="after-every-round"),
    pytest.param({f"{n}-mid" for n in range(1, 8)}, id="mid-every-round"),
])
def test_a_flow_survives_restarts_without_creating_anything_twice(data_dir, restart_after):
    life = Life(data_dir)
    rt = life.boot()
    for doc in yamlio.load_string(jobflow("dia", DEPS) + "".join(template(n, replicas=2) for n in DEPS), "t.yaml"):
        rt.client.create(doc.obj)
    run(life, restart_after)
    rt = life.rt
    assert meta.phase(rt.client.get(kinds.JOBFLOW, "default", "dia")) == "Succeed"
    assert sorted(meta.name(j) for j in rt.client.list(kinds.JOB)) == [f"dia-{f}" for f in DEPS]
    names = [(kind, name) for kind, name, _ in life.added]
    twice = {n for n in names if names.count(n) > 1}
    assert not twice, f"created twice: {sorted(twice)}"
    assert life.restarts == len(restart_after)
    rt.close()


def test_a_retried_job_keeps_its_retry_count_across_restarts(data_dir):
    life = Life(data_dir)
    rt = life.boot()
    for doc in yamlio.load_string(jobflow("r", {"a": []}) + template("a", policies=RETRY), "t.yaml"):
        rt.client.create(doc.obj)

    def outcome(pod):
        return "Failed" if meta.annotations(pod).get("volcano.sh/job-retry-count", "0") == "0" else "Succeeded"
    run(life, {1, 2, 3, 4}, outcome)   # not "n-mid": see the note below
    job = life.rt.client.get(kinds.JOB, "default", "r-a")
    assert job["status"]["retryCount"] == 1 and meta.phase(job) == "Completed"
    assert meta.phase(life.rt.client.get(kinds.JOBFLOW, "default", "r")) == "Succeed"
    assert [n for k, n, _ in life.added if k == "Job"] == ["r-a"]
    life.rt.close()


# Note: a restart between a pod's failure being written and the vcjob controller acting on it ("n-mid"
# on a failing round) loses the PodFailed edge: on start the controller re-lists and reconciles
# from levels (OutOfSync first), as Volcano's controller does after a restart, so the job is judged
# by its pod counts (Failed) rather than by its PodFailed policy (RestartJob).


def test_default_objects_and_nodes_are_not_recreated(data_dir):
    life = Life(data_dir)
    first = life.boot()
    uids = {(k.kind, meta.name(o)): meta.uid(o) for k in (kinds.QUEUE, kinds.NAMESPACE, kinds.NODE)
            for o in first.client.list(k)}
    life.restart()
    assert {(k.kind, meta.name(o)): meta.uid(o) for k in (kinds.QUEUE, kinds.NAMESPACE, kinds.NODE)
            for o in life.rt.client.list(k)} == uids
    assert life.rt.workdir == data_dir / "pods"
    life.rt.close()


def test_a_node_keeps_its_uid_and_takes_the_new_capacity(data_dir):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, data_dir=data_dir)
    uid = meta.uid(rt.client.get(kinds.NODE, "", "n1"))
    rt.close()
    bigger = {**NODE, "status": {**NODE["status"], "allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[bigger], run_pods=False, data_dir=data_dir)
    node = rt.client.get(kinds.NODE, "", "n1")
    assert meta.uid(node) == uid and node["status"]["allocatable"]["cpu"] == "8"
    rt.close()
