"""Volcano's job_controller_actions_test.go, case by case, against vclite's KillJob / KillTarget / SyncJob,
PodGroup and plugin upkeep over the real in-process API (the test acting as scheduler and kubelet)."""
from __future__ import annotations

import pytest

from vclite.api import batch
from vclite.api import kinds
from vclite.controllers.job import actions
from vclite.controllers.job import commands
from vclite.controllers.job import podgroup
from vclite.lib import errors
from tests.scenarios.test_vcjob_lifecycle import Cluster, task, vcjob
from tests.unit.controllers.job.test_upstream_state import _pod

A = batch.Action


def _names(c, kind):
    return sorted(o["metadata"]["name"] for o in c.client.list(kind, "default"))


def test_kill_job_deletes_the_plugins_objects_and_the_podgroup():
    """TestKillJobFunc "KillJob success Case": svc, ssh and env plugins; KillJob deletes the job's Service,
    ConfigMap and ssh Secret, its pods and its PodGroup. (The "version lt 1.5" case, a PodGroup named `<job>`,
    is not looked up: see actions.py.)"""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 2)], plugins={"svc": [], "ssh": [], "env": []}))
    c.enqueue()
    assert _names(c, kinds.POD) == ["job1-task1-0", "job1-task1-1"]
    assert "job1" in _names(c, kinds.SERVICE) and "job1-ssh" in _names(c, kinds.SECRET)
    c.ctrl._run(c.ctrl._get("default/job1"), A.TERMINATE_JOB, "", "", "")
    assert "job1" not in _names(c, kinds.SERVICE) and "job1-svc" not in _names(c, kinds.CONFIGMAP)
    assert "job1-ssh" not in _names(c, kinds.SECRET)
    assert _names(c, kinds.POD) == [] and c.podgroups() == []
    assert "controlledResources" not in c.job("job1")["status"]


@pytest.mark.parametrize("tasks, existing, want", [
    # TestSyncJobFunc "SyncJob success Case": 2 of 6 pods exist, the PodGroup is Inqueue: the other 4 are made
    pytest.param([task("task1", 6)], [("task1", "Running")] * 2, [f"job1-task1-{i}" for i in range(6)],
                 id="SyncJob-success"),
    # "SyncJob with dependsOn job can't find the dependent task": master missing, work-0/1 exist. Upstream's
    # fake job has no task minAvailable (its webhook is not run), so work-2 is made too (4 pods); through
    # the API the webhook defaults master's minAvailable to 1, as Volcano's, and work-2 waits for the master.
    pytest.param([task("master", 1), task("work", 3, dependsOn={"name": ["master"]})],
                 [("work", "Running")] * 2, ["job1-master-0", "job1-work-0", "job1-work-1"],
                 id="SyncJob-dependsOn-master-missing"),
])
def test_sync_job_creates_the_missing_pods(tasks, existing, want):
    c = Cluster()
    c.create(vcjob("job1", tasks=tasks))
    for name, phase in existing:
        seen = sum(1 for p in c.pods("job1") if p["metadata"]["annotations"]["volcano.sh/task-spec"] == name)
        _pod(c, c.job("job1"), name, seen, phase)
    c.enqueue()
    assert c.pod_names("job1") == want


def _minTaskMember(partition):
    return [task("task1", 6, partitionPolicy=partition)]


NT = {"mode": "hard", "highestTierAllowed": 1}


# TestCreatePodGroupIfNotExistFunc: the PodGroup's minTaskMember for a partitioned task
@pytest.mark.parametrize("partition, want", [
    pytest.param({"totalPartitions": 2, "partitionSize": 3, "networkTopology": NT}, {"task1": 6}, id="success"),
    pytest.param({"totalPartitions": 2, "partitionSize": 3, "minPartitions": 1, "networkTopology": NT},
                 {"task1": 3}, id="with-MinPartitions"),
    pytest.param({"totalPartitions": 2, "partitionSize": 3,
                  "networkTopology": {"mode": "hard", "highestTierName": "volcano.sh/hypernode"}}, {"task1": 6},
                 id="with-highestTierName"),
])
def test_create_podgroup_min_task_member(partition, want):
    c = Cluster()
    c.create(vcjob("job1", tasks=_minTaskMember(partition)))
    [pg] = c.podgroups()
    assert pg["metadata"]["name"] == f"job1-{c.job('job1')['metadata']['uid']}"
    assert pg["spec"]["minTaskMember"] == want


# TestUpdatePodGroupIfJobUpdateFunc: a PodGroup with an empty spec follows the job's priorityClassName and
# minTaskMember (the "version lt 1.5" PodGroup name `<job>` is not looked up: reconcile is given the PodGroup)
@pytest.mark.parametrize("tasks, want", [
    pytest.param([], {}, id="success"),
    pytest.param([{"name": "task1", "replicas": 6, "partitionPolicy": {
        "totalPartitions": 2, "partitionSize": 3, "networkTopology": NT}}], {"task1": 6}, id="PartitionPolicy"),
    pytest.param([{"name": "task1", "replicas": 6, "partitionPolicy": {
        "totalPartitions": 2, "partitionSize": 3, "minPartitions": 1, "networkTopology": NT}}], {"task1": 3},
        id="PartitionPolicy-MinPartitions"),
    pytest.param([{"name": "task1", "replicas": 6, "partitionPolicy": {
        "totalPartitions": 2, "partitionSize": 3,
        "networkTopology": {"mode": "hard", "highestTierName": "volcano.sh/hypernode"}}}], {"task1": 6},
        id="highestTierName"),
])
def test_update_podgroup_follows_the_job(tasks, want):
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "job1", "namespace": "test", "uid": "e7f18111"},
           "spec": {"priorityClassName": "new", "tasks": tasks}}
    pg = {"metadata": {"name": "job1-e7f18111", "namespace": "test"}, "spec": {"minResources": {}}}
    new = podgroup.reconcile(pg, job, {})
    assert new["spec"]["priorityClassName"] == "new" and new["spec"]["minTaskMember"] == want


T0, T1, T2 = "2024-07-01T15:04:05Z", "2024-07-01T15:15:05Z", "2024-07-01T15:20:05Z"


def _cond(type_, when):
    return {"type": type_, "status": "True", "reason": "test reason", "message": "test message",
            "lastTransitionTime": when}


# TestRecordPodGroupEvent
@pytest.mark.parametrize("conditions, want", [
    pytest.param([], None, id="no-conditions"),
    pytest.param([_cond("Unschedulable", T0)], "PodGroup default:job1 unschedulable, reason: test message",
                 id="Unschedulable"),
    pytest.param([_cond("Unschedulable", T1), _cond("Scheduled", T0)],
                 "PodGroup default:job1 unschedulable, reason: test message", id="Unschedulable-after-Scheduled"),
    pytest.param([_cond("Unschedulable", T1), _cond("Scheduled", T2)], None, id="Scheduled-after-Unschedulable"),
])
def test_record_podgroup_event(conditions, want):
    c = Cluster()
    ctx = actions.Context(c.client, c.clock)
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "job1", "namespace": "default", "uid": "e7f18111"}, "spec": {"tasks": []}}
    pg = {"metadata": {"name": "job1-e7f18111", "namespace": "default"},
          "status": {"phase": "Running", "conditions": conditions}}
    actions._record_podgroup_event(ctx, job, pg)
    got = [(e["type"], e["message"]) for e in c.events("PodGroupPending")]
    assert got == ([("Warning", want)] if want else [])


# TestPodsToKill: (action, task, pod, pods left) — KillTarget over task1 (2 pods) and task2 (1 pod)
@pytest.mark.parametrize("action, task_name, pod_name, left", [
    pytest.param(A.RESTART_TASK, "task1", "", ["job1-task2-0"], id="TargetTypeTask"),
    pytest.param(A.RESTART_POD, "task1", "job1-task1-0", ["job1-task1-1", "job1-task2-0"], id="TargetTypePod"),
    pytest.param(A.RESTART_TASK, "nonexistent", "", ["job1-task1-0", "job1-task1-1", "job1-task2-0"],
                 id="non-existent-task"),
    pytest.param(A.RESTART_POD, "task1", "nonexistent", ["job1-task1-0", "job1-task1-1", "job1-task2-0"],
                 id="non-existent-pod"),
])
def test_kill_target(action, task_name, pod_name, left):
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 2), task("task2", 1)]))
    c.enqueue()
    c.run_all("job1")
    c.ctrl._run(c.ctrl._get("default/job1"), action, task_name, pod_name, "")
    assert c.pod_names("job1") == left
    assert len(c.podgroups()) == 1   # TestKillPodsPodGroupDeletion: a targeted kill keeps the PodGroup


def test_full_kill_deletes_the_podgroup():
    """TestKillPodsPodGroupDeletion "full job kill (target=nil) deletes PodGroup"."""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 1)]))
    c.enqueue()
    c.ctrl._run(c.ctrl._get("default/job1"), A.RESTART_JOB, "", "", "")
    assert c.podgroups() == []


# TestAppendJobCondition
@pytest.mark.parametrize("conditions, new, want", [
    pytest.param([], "Pending", ["Pending"], id="append-to-empty"),
    pytest.param(["Pending", "Running"], "Pending", ["Running", "Pending"], id="replace-same-phase"),
    pytest.param(["Pending", "Running"], "Completed", ["Pending", "Running", "Completed"], id="append-different"),
])
def test_append_job_condition(conditions, new, want):
    status = {"conditions": [{"status": s} for s in conditions]}
    actions._append_condition(status, new, T0)
    assert [cond["status"] for cond in status["conditions"]] == want


def test_delete_job_pod():
    """TestDeleteJobPod: the pod is gone, its sibling stays (here through a RestartPod)."""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 2)]))
    c.enqueue()
    c.ctrl._run(c.ctrl._get("default/job1"), A.RESTART_POD, "task1", "job1-task1-0", "")
    with pytest.raises(errors.NotFound):
        c.client.get(kinds.POD, "default", "job1-task1-0")
    assert c.client.get(kinds.POD, "default", "job1-task1-1")


@pytest.mark.parametrize("partitioned, left", [
    pytest.param(True, ["job1-task1-1"], id="task-with-partitionPolicy-kills-the-partition"),
    pytest.param(False, ["job1-task1-0", "job1-task1-1"], id="task-without-partitionPolicy-has-no-partitions"),
])
def test_restart_partition_only_for_a_partitioned_task(partitioned, left):
    """pkg/controllers/apis/job_info_test.go TestJobInfoPartitionPolicy "Test 6": a task without a partitionPolicy
    has no partitions, even when its pods carry a partition-id label (here written in the template), so
    RestartPartition on it kills nothing (Volcano's killPods: "has not partition group", the action skipped)."""
    c = Cluster()
    t = task("task1", 2)
    if partitioned:
        t["partitionPolicy"] = {"totalPartitions": 2, "partitionSize": 1}
    else:
        t["template"]["metadata"] = {"labels": {"volcano.sh/partition-id": "0"}}
    c.create(vcjob("job1", tasks=[t]))
    c.enqueue()
    c.run_all("job1")
    c.ctrl._run(c.ctrl._get("default/job1"), A.RESTART_PARTITION, "task1", "job1-task1-0", "0")
    assert c.pod_names("job1") == left


FORWARDING = "volcano.sh/job-forwarding"


@pytest.mark.parametrize("extend, forwarded", [
    pytest.param([{"name": "cluster-2", "weight": 1}], True, id="queue-with-extendClusters"),
    pytest.param(None, False, id="queue-without-extendClusters"),
])
def test_job_forwarding(extend, forwarded):
    """job_controller_util_test.go TestCreateJobPod_JobForwarding, and syncJob's queue look-up: a job whose queue
    names extendClusters is marked `volcano.sh/job-forwarding: "true"` (and so its PodGroup), and so are its
    pods, as annotation and label."""
    c = Cluster()
    spec = {"weight": 1, **({"extendClusters": extend} if extend else {})}
    c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
                     "spec": spec})
    c.create(vcjob("job1", tasks=[task("task1", 1)], queue="q1"))
    c.enqueue()
    want = "true" if forwarded else None
    assert c.job("job1")["metadata"].get("annotations", {}).get(FORWARDING) == want
    assert c.podgroups()[0]["metadata"].get("annotations", {}).get(FORWARDING) == want
    [pod] = c.pods("job1")
    assert pod["metadata"]["annotations"].get(FORWARDING) == want
    assert pod["metadata"]["labels"].get(FORWARDING) == want


def test_a_queue_that_names_extend_clusters_later_marks_the_job_at_its_next_sync_and_only_pods_made_then():
    """syncJob reads the queue at every sync: once it names extendClusters the job is annotated at its next sync
    (Jobs().Update), pods made from then on are marked; the pods and the PodGroup made before are not updated."""
    c = Cluster()
    c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
                     "spec": {"weight": 1}})
    c.create(vcjob("job1", tasks=[task("task1", 2)], queue="q1"))
    c.enqueue()
    for name in ("job1-task1-0", "job1-task1-1"):
        c.set_pod(name, "Running")
    c.step()
    assert c.phase("job1") == "Running" and FORWARDING not in (c.job("job1")["metadata"].get("annotations") or {})
    c.client.patch(kinds.QUEUE, "", "q1", {"spec": {"extendClusters": [{"name": "cluster-2", "weight": 1}]}})
    c.set_pod("job1-task1-0", "Running", ready=False)   # (any event that syncs the job)
    c.step()
    assert (c.job("job1")["metadata"].get("annotations") or {}).get(FORWARDING) == "true"
    assert FORWARDING not in (c.podgroups()[0]["metadata"].get("annotations") or {})
    assert all(FORWARDING not in p["metadata"]["annotations"] for p in c.pods("job1"))
    c.client.delete(kinds.POD, "default", "job1-task1-1", grace_period=0)
    c.step()
    made_now = c.client.get(kinds.POD, "default", "job1-task1-1")
    assert (made_now["metadata"]["annotations"].get(FORWARDING), made_now["metadata"]["labels"].get(FORWARDING)) == (
        "true", "true")
    assert FORWARDING not in c.client.get(kinds.POD, "default", "job1-task1-0")["metadata"]["annotations"]


# ---- createJobIOIfNotExist, createPVC --------------------------------------------------------------------------
def _events(c, reason):
    return [e["message"] for e in c.client.list(kinds.EVENT, "default") if e["reason"] == reason]


def _claim(name, **spec):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


def test_create_job_io_a_claim_name_without_its_pvc_keeps_the_job_pending():
    """TestCreateJobIOIfNotExistFunc "Create Job IO case": volumeClaimName pvc1 names no PVC -> Volcano's error,
    as the PVCError Event of initiateJob; the job keeps its volumes, stays Pending, without PodGroup or pods, and
    is not retried (nothing is queued) until a PVC of that name is made: then it goes on."""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 1)], volumes=[{"mountPath": "/data", "volumeClaimName": "pvc1"}]))
    assert _events(c, "PVCError") == ["Failed to create PVC, err: pvc pvc1 is not found, the job will be in the "
                                      "Pending state until the PVC is created"]
    job = c.job("job1")
    assert job["status"]["state"]["phase"] == "Pending" and len(job["spec"]["volumes"]) == 1
    assert c.podgroups() == [] and c.ctrl.queue.get() is None
    c.client.create(_claim("other"))   # (another claim's creation wakes nothing)
    assert c.step() == 0
    c.client.create(_claim("pvc1"))
    c.step()
    assert len(c.podgroups()) == 1
    assert c.job("job1")["status"]["controlledResources"] == {"volume-pvc-pvc1": "pvc1"}
    c.enqueue()
    assert _names(c, kinds.POD) == ["job1-task1-0"]


def test_create_job_io_a_claim_deleted_before_the_job_is_enqueued_stops_its_pods():
    """initiateJob runs at every sync of a Pending job: a claim gone since its PodGroup was made keeps the pods
    from being made (the error returns before pods are synced)."""
    c = Cluster()
    c.client.create(_claim("pvc1"))
    c.create(vcjob("job1", tasks=[task("task1", 1)], volumes=[{"mountPath": "/data", "volumeClaimName": "pvc1"}]))
    assert len(c.podgroups()) == 1
    c.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "pvc1")
    held = c.client.get(kinds.PERSISTENTVOLUMECLAIM, "default", "pvc1")   # (pvc-protection's: no pod names it yet,
    held["metadata"]["finalizers"] = []                                   # so its controller lets it go)
    c.client.update(held)
    c.enqueue()
    assert _names(c, kinds.POD) == [] and len(_events(c, "PVCError")) == 1


def test_create_pvc_from_the_volume_claim_spec():
    """TestCreatePVCFunc "CreatePVC success Case": a volume with a volumeClaim (volumeName vol1) -> the PVC is
    made with that spec, in the job's namespace, the job its controller owner."""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 1)], volumes=[{"mountPath": "/data", "volumeClaim": {
        "volumeName": "vol1", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]))
    name = c.job("job1")["spec"]["volumes"][0]["volumeClaimName"]
    pvc = c.client.get(kinds.PERSISTENTVOLUMECLAIM, "default", name)
    assert pvc["spec"]["volumeName"] == "vol1" and pvc["metadata"]["ownerReferences"][0]["name"] == "job1"
    assert _events(c, "PVCError") == [] and len(c.podgroups()) == 1


def test_a_command_reaches_a_job_waiting_for_its_claim():
    """A job waiting for its claim is still a job: an abort issued meanwhile is executed."""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task("task1", 1)], volumes=[{"mountPath": "/data", "volumeClaimName": "pvc1"}]))
    c.client.patch(kinds.JOB, "default", "job1", commands.set_patch("AbortJob"))
    c.step()
    assert c.job("job1")["status"]["state"]["phase"] == "Aborted"
