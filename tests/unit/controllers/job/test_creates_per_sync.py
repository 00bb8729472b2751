"""A vcjob of many pods is created over several SyncJobs of at most actions.CREATES_PER_SYNC pods each (the
controller syncs it again at once), so the event loop of a server gets its turns in between; the gang is still
whole before the scheduler places any of it."""
import pytest

from vclite.api import kinds
from vclite.controllers.job import actions
from vclite.lib import clock
from vclite.runtime import runtime

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
        "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"}}}


def job(replicas: int, min_available: int) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {"schedulerName": "volcano", "minAvailable": min_available, "tasks": [{
                "name": "t", "replicas": replicas, "template": {"spec": {"restartPolicy": "Never", "containers": [{
                    "name": "c", "image": "busybox", "command": ["true"],
                    "resources": {"requests": {"cpu": "10m"}}}]}}}]}}


@pytest.mark.parametrize("replicas, min_available", [
    pytest.param(actions.CREATES_PER_SYNC, actions.CREATES_PER_SYNC, id="one-sync's-worth"),
    pytest.param(actions.CREATES_PER_SYNC + 1, 1, id="one-more"),
    pytest.param(3 * actions.CREATES_PER_SYNC + 5, 3 * actions.CREATES_PER_SYNC + 5, id="a-gang-of-four-syncs"),
])
def test_a_big_job_is_created_a_bounded_number_of_pods_a_sync(replicas, min_available):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False)
    try:
        rt.start()
        counts, bound_before_all = [], []

        def on_sync(component, seconds):
            pods = rt.client.list(kinds.POD, "default")
            if component == "job-controller":
                counts.append(len(pods))
            elif component == "scheduler" and any(p["spec"].get("nodeName") for p in pods):
                bound_before_all.append(len(pods) < replicas)
        rt.on_sync = on_sync
        rt.client.create(job(replicas, min_available))
        rt.settle()
        made = [b - a for a, b in zip([0, *counts], counts) if b > a]
        assert sum(made) == replicas and max(made) <= actions.CREATES_PER_SYNC, made
        assert len(made) == -(-replicas // actions.CREATES_PER_SYNC)
        assert bound_before_all and not any(bound_before_all), "the scheduler ran before the job had all its pods"
        pods = rt.client.list(kinds.POD, "default")
        assert len(pods) == replicas and all(p["spec"].get("nodeName") == "n0" for p in pods)
    finally:
        rt.close()
