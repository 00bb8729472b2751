"""A session's writes, at most scheduler.WRITES_PER_SYNC a sync, the rest in the next syncs, queued at once, with no
other session before every one is made — so the event loop of a server gets its turns between the binds of a big
gang, or the PodGroup statuses of hundreds of jobs enqueued at once."""
import pytest

from vclite.api import kinds
from vclite.lib import clock
from vclite.runtime import runtime
from vclite.scheduler import scheduler as scheduler_mod

PER = scheduler_mod.WRITES_PER_SYNC
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
        "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"}}}


def job(replicas: int, name: str = "big") -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": "volcano", "minAvailable": replicas, "tasks": [{
                "name": "t", "replicas": replicas, "template": {"spec": {"restartPolicy": "Never", "containers": [{
                    "name": "c", "image": "busybox", "command": ["true"],
                    "resources": {"requests": {"cpu": "10m"}}}]}}}]}}


@pytest.mark.parametrize("replicas", [
    pytest.param(PER, id="one-sync's-worth"),
    pytest.param(PER + 1, id="one-more"),
    pytest.param(3 * PER + 5, id="four-syncs"),
])
def test_a_big_gang_is_bound_a_bounded_number_of_pods_a_sync(replicas):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    try:
        rt.start()
        syncs = []   # per scheduler sync: (a session ran, pods bound after it)

        def on_sync(component, seconds):
            if component == "scheduler":
                bound = sum(1 for p in rt.client.list(kinds.POD, "default") if p["spec"].get("nodeName"))
                syncs.append((rt.scheduler.last_result is not None, bound))
        rt.on_sync = on_sync
        rt.client.create(job(replicas))
        rt.settle()
        binding = [i for i, (_, bound) in enumerate(syncs) if 0 < bound and (i == 0 or syncs[i - 1][1] < bound)]
        made = [syncs[i][1] - (syncs[i - 1][1] if i else 0) for i in binding]
        assert sum(made) == replicas and max(made) <= PER, syncs
        assert len(made) == -(-replicas // PER), syncs
        # the session that placed the gang, then only its writes going on, with no session in between
        first = binding[0]
        assert syncs[first][0] and not any(ran for ran, _ in syncs[first + 1:binding[-1] + 1]), syncs
        assert [g["status"]["phase"] for g in rt.client.list(kinds.PODGROUP, "default")] == ["Running"]
    finally:
        rt.close()


@pytest.mark.parametrize("jobs", [pytest.param(PER + 1, id="one-more"), pytest.param(3 * PER + 5, id="four-syncs")])
def test_podgroups_enqueued_at_once_are_written_a_bounded_number_a_sync(jobs):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    try:
        rt.start()
        inqueue = []   # per scheduler sync: PodGroups past Pending after it

        def on_sync(component, seconds):
            if component == "scheduler":
                inqueue.append(sum(1 for g in rt.client.list(kinds.PODGROUP, "default")
                                   if (g.get("status") or {}).get("phase") not in (None, "", "Pending")))
        rt.on_sync = on_sync
        for i in range(jobs):
            rt.client.create(job(1, f"j{i:03d}"))
        rt.settle()
        steps = [b - a for a, b in zip([0, *inqueue], inqueue) if b > a]
        assert steps[0] == PER and max(steps) <= PER and inqueue[-1] == jobs, inqueue
        assert len(rt.client.list(kinds.POD, "default")) == jobs
    finally:
        rt.close()
