"""The PodGroup of a vcjob: MINRES-01..04 (+ the two further upstream TestCalcPGMinResources rows),
priority ordering, minTaskMember, and the update rule."""
from __future__ import annotations

import pytest

from vclite.controllers.job import podgroup


def _task(name, replicas, cpu, min_available=None, pc=None, **extra):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if pc:
        spec["priorityClassName"] = pc
    t = {"name": name, "replicas": replicas, "template": {"spec": spec}, **extra}
    if min_available is not None:
        t["minAvailable"] = min_available
    return t


def _job(tasks, min_available, **spec):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "ns", "uid": "u-1", "labels": {"l": "1"},
                         "annotations": {"a": "1", "vclite.volcano.sh/command": "AbortJob"}},
            "spec": {"minAvailable": min_available, "queue": "q", "tasks": tasks, **spec}}


def _quota(cpu, pods):
    return {"cpu": cpu, "requests.cpu": cpu, "pods": str(pods), "count/pods": str(pods)}


@pytest.mark.parametrize("master_min,worker_min,job_min,want", [
    pytest.param(1, None, 2, _quota("100m", 2), id="MINRES-01"),
    pytest.param(None, 1, 2, _quota("100m", 2), id="MINRES-02"),
    pytest.param(None, None, 3, _quota("200m", 3), id="MINRES-03"),
    pytest.param(1, 1, 3, _quota("200m", 3), id="MINRES-04"),
    pytest.param(1, None, 3, _quota("250m", 3), id="upstream-equal-sum"),
    pytest.param(1, 1, 2, _quota("150m", 2), id="upstream-min-per-task"),
])
def test_min_resources(master_min, worker_min, job_min, want):
    job = _job([_task("master", 2, "50m", master_min), _task("worker", 2, "100m", worker_min)], job_min)
    assert podgroup.min_resources(job, {}) == want


@pytest.mark.parametrize("priorities,job_min,want", [
    pytest.param({}, 1, _quota("50m", 1), id="equal-priority-keeps-spec-order"),
    pytest.param({"high": 100}, 1, _quota("100m", 1), id="higher-priority-first"),
    pytest.param({"high": 100}, 3, _quota("250m", 3), id="higher-priority-fills-first"),
    pytest.param({"high": -5}, 1, _quota("50m", 1), id="negative-priority-last"),
])
def test_min_resources_priority_order(priorities, job_min, want):
    job = _job([_task("master", 2, "50m"), _task("worker", 2, "100m", pc="high")], job_min)
    assert podgroup.min_resources(job, priorities) == want


def test_min_resources_count_limits_as_kubernetes_pod_quota_usage():
    """Volcano's CalTaskRequests is quota usage: limits.cpu / limits.memory beside the requests (the
    e2e `Generate PodGroup and valid minResource when creating job`)."""
    task = _task("a", 3, "1", 2)
    task["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "2", "memory": "1Gi"}
    assert podgroup.min_resources(_job([task], 2), {}) == {   # (a limit without a request is requested)
        **_quota("2", 2), "memory": "2Gi", "requests.memory": "2Gi", "limits.cpu": "4", "limits.memory": "2Gi"}


def test_build():
    job = _job([_task("a", 3, "1", 2), _task("b", 4, "1", partitionPolicy={"totalPartitions": 2,
                                                                           "partitionSize": 2, "minPartitions": 1})],
               3, priorityClassName="pc", networkTopology={"mode": "hard", "highestTierAllowed": 2})
    pg = podgroup.build(job, {})
    assert pg["metadata"] == {"name": "j-u-1", "namespace": "ns", "labels": {"l": "1"}, "annotations": {"a": "1"},
                              "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                                   "name": "j", "uid": "u-1", "controller": True,
                                                   "blockOwnerDeletion": True}]}
    spec = pg["spec"]
    assert spec["minMember"] == 3 and spec["queue"] == "q" and spec["priorityClassName"] == "pc"
    assert spec["minTaskMember"] == {"a": 2, "b": 2}
    assert spec["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert spec["subGroupPolicy"] == [{"name": "b", "subGroupSize": 2, "minSubGroups": 1,
                                       "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "b"}},
                                       "matchLabelKeys": ["volcano.sh/partition-id"]}]
    assert spec["minResources"] == {"cpu": "3", "requests.cpu": "3", "pods": "3", "count/pods": "3"}


@pytest.mark.parametrize("change,updated", [
    pytest.param(lambda pg, job: None, False, id="in-sync"),
    pytest.param(lambda pg, job: job["spec"].update(minAvailable=2), True, id="minAvailable"),
    pytest.param(lambda pg, job: job["spec"]["tasks"][0].update(minAvailable=1), True, id="task-minAvailable"),
    pytest.param(lambda pg, job: job["spec"].update(priorityClassName="x"), True, id="priorityClass"),
    pytest.param(lambda pg, job: pg["spec"].update(minResources={"cpu": "1", "requests.cpu": "1000m",
                                                                 "pods": "1", "count/pods": "1"}), False,
                 id="equal-quantities-differently-written"),
    pytest.param(lambda pg, job: pg["spec"].pop("minTaskMember"), True, id="minTaskMember-missing"),
])
def test_reconcile(change, updated):
    job = _job([_task("a", 2, "1")], 1)
    pg = podgroup.build(job, {})
    pg["status"] = {"phase": "Inqueue"}
    change(pg, job)
    new = podgroup.reconcile(pg, job, {})
    assert (new is not None) is updated
    if new is not None:
        assert new["spec"] == {**podgroup.build(job, {})["spec"]}
        assert new["status"] == {"phase": "Inqueue"}


def test_min_resources_count_a_pods_own_resources():
    """A task whose pods request resources themselves (PodLevelResources) counts that request, as
    Kubernetes' PodRequests does, not its containers' sum."""
    task = _task("a", 2, "100m", 2)
    task["template"]["spec"]["resources"] = {"requests": {"cpu": "1"}}
    assert podgroup.min_resources(_job([task], 2), {}) == _quota("2", 2)


@pytest.mark.parametrize("replicas, partition, min_sub_groups, size, topology", [
    pytest.param(6, {"totalPartitions": 2, "minPartitions": 1, "partitionSize": 3,
                     "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}, 1, 3,
                 {"mode": "hard", "highestTierAllowed": 1}, id="min-partitions-set"),
    pytest.param(9, {"totalPartitions": 3, "minPartitions": 3, "partitionSize": 3}, 3, 3, None,
                 id="min-partitions-equal-to-total"),
    pytest.param(6, {"totalPartitions": 2, "minPartitions": 0, "partitionSize": 3}, 0, 3, None,
                 id="min-partitions-0"),
    pytest.param(6, {"totalPartitions": 2, "partitionSize": 3}, 0, 3, None, id="min-partitions-not-written-is-0"),
])
def test_sub_group_policy(replicas, partition, min_sub_groups, size, topology):
    """job_controller_actions_test.go TestGetSubGroupPolicy: a partitioned task's subGroupPolicy."""
    [policy] = podgroup.sub_group_policies([{"name": "task1", "replicas": replicas, "partitionPolicy": partition}])
    assert (policy["minSubGroups"], policy["subGroupSize"]) == (min_sub_groups, size)
    assert policy["labelSelector"] == {"matchLabels": {"volcano.sh/task-spec": "task1"}}
    assert policy["matchLabelKeys"] == ["volcano.sh/partition-id"]
    assert policy.get("networkTopology") == topology


# job_controller_util_test.go TestTaskPriority_CalcPGMin: master (2 × 50m) and worker (2 × 100m), one of them of
# priority 2; (master min, worker min, job minAvailable (0: Σ task mins), high-priority task, cpu, pods).
# Its last rows (job minAvailable below Σ task mins) test the helper alone: the controller takes the first pods in
# priority order there (calcPGMinResources' CalcFirstCountResources), which rows "upstream-*" above and
# TestCalcPGMinResources check.
@pytest.mark.parametrize("master_min, worker_min, job_min, high, cpu, pods", [
    pytest.param(1, 1, 0, None, "150m", 2, id="job-0-both-1"),
    pytest.param(None, 1, 0, "master", "200m", 3, id="job-0-master-null"),
    pytest.param(None, 1, 3, None, "200m", 3, id="job-3-master-null"),
    pytest.param(1, None, 3, None, "250m", 3, id="job-3-worker-null"),
    pytest.param(1, 1, 2, None, "150m", 2, id="job-2-both-1"),
    pytest.param(1, 1, 3, "master", "200m", 3, id="job-3-master-high-priority"),
    pytest.param(1, 1, 3, "worker", "250m", 3, id="job-3-worker-high-priority"),
    pytest.param(0, 1, 3, "worker", "250m", 3, id="job-3-master-0-worker-high"),
    pytest.param(None, 1, 4, "worker", "300m", 4, id="job-4-master-null-worker-high"),
    pytest.param(1, 1, 4, "worker", "300m", 4, id="job-4-both-1-worker-high"),
    pytest.param(None, 1, 2, "master", "100m", 2, id="job-2-master-null-master-high"),
])
def test_upstream_task_priority_calc_pg_min(master_min, worker_min, job_min, high, cpu, pods):
    master = _task("master", 2, "50m", master_min, pc="high" if high == "master" else None)
    worker = _task("worker", 2, "100m", worker_min, pc="high" if high == "worker" else None)
    if not job_min:
        job_min = sum(podgroup.min_task_member(t) for t in (master, worker))
    assert podgroup.min_resources(_job([master, worker], job_min), {"high": 2}) == _quota(cpu, pods)
