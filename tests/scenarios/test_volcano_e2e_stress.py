"""Volcano's stress e2e suite (test/e2e/stress/job.go, podgroup.go, queue.go: e2eutil.NumStress = 10 objects
made, or deleted, at once) on the embedded control plane on a virtual clock, with the test kubelet of
test_volcano_e2e_jobs.py. Upstream makes them from goroutines; here they are written back to back before the
control plane runs, which is what concurrent requests amount to for its controllers and scheduler.

podgroup.go waits for each bare PodGroup (no pods, minMember 0) to be Running. Volcano's scheduler has
computed Completed for such a group since 15a6a5a ("Only refresh podgroup to running when pods are
scheduled": 0 scheduled ≥ minMember 0, and all 0 of them finished), and the stress suite is not in Volcano's
CI workflows; vclite computes the same, so the group is checked to be admitted and Completed.
"""
from __future__ import annotations

from tests.scenarios.test_volcano_e2e_jobs import Cluster, node
from vclite.api import kinds, meta
from vclite.lib import errors

NUM_STRESS = 10


def cluster() -> Cluster:
    return Cluster([node("n1", "8"), node("n2", "8")])


def test_should_create_multiple_jobs_successfully():
    c = cluster()
    for i in range(NUM_STRESS):
        c.client.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                         "metadata": {"name": f"job-{i}", "namespace": "default"},
                         "spec": {"minAvailable": 1, "tasks": [{"name": "task", "replicas": 1, "template": {"spec": {
                             "restartPolicy": "OnFailure", "containers": [{
                                 "name": "nginx", "image": "nginx", "command": ["sleep", "1000"],
                                 "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}}}]}}}]}})
    c.start()
    assert c.pods() == {f"job-{i}-task-0": "Running" for i in range(NUM_STRESS)}
    assert {meta.phase(j) for j in c.client.list(kinds.JOB, "default")} == {"Running"}


def test_should_create_and_delete_multiple_pod_groups_successfully():
    c = cluster()
    for i in range(NUM_STRESS):
        c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                         "metadata": {"name": f"pod-group-{i}", "namespace": "default"}, "spec": {"minResources": {}}})
    c.rt.settle()
    assert {meta.name(pg): meta.phase(pg) for pg in c.client.list(kinds.PODGROUP, "default")} == \
        {f"pod-group-{i}": "Completed" for i in range(NUM_STRESS)}
    for i in range(NUM_STRESS):
        c.client.delete(kinds.PODGROUP, "default", f"pod-group-{i}")
    c.rt.settle()
    assert c.client.list(kinds.PODGROUP, "default") == []


def test_should_create_and_delete_multiple_queues_successfully():
    c = cluster()
    for i in range(NUM_STRESS):
        c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                         "metadata": {"name": f"queue-{i}"}, "spec": {"weight": 1}})
    c.rt.settle()
    assert {meta.name(q): q["status"]["state"] for q in c.client.list(kinds.QUEUE)
            if meta.name(q).startswith("queue-")} == {f"queue-{i}": "Open" for i in range(NUM_STRESS)}
    for i in range(NUM_STRESS):
        c.client.delete(kinds.QUEUE, "", f"queue-{i}")
    c.rt.settle()
    for i in range(NUM_STRESS):
        try:
            c.client.get(kinds.QUEUE, "", f"queue-{i}")
        except errors.NotFound:
            continue
        raise AssertionError(f"queue-{i} still exists")
