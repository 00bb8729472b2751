"""Pods built for a vcjob (names, Volcano's labels/annotations, inheritance, volumes) and the env and
svc plugins."""
from __future__ import annotations

import pytest

from vclite.controllers.job import pods


def _job(plugins=None, **spec):
    tasks = spec.pop("tasks", None) or [
        {"name": "ps", "replicas": 1, "template": {"metadata": {"labels": {"role": "ps"}, "annotations": {"x": "y"}},
                                                   "spec": {"containers": [{"name": "c", "command": ["true"]}]}}},
        {"name": "my-worker", "replicas": 2, "topologyPolicy": "best-effort",
         "template": {"spec": {"schedulerName": "other", "priorityClassName": "low",
                               "initContainers": [{"name": "init", "command": ["true"]}],
                               "containers": [{"name": "c", "command": ["true"]},
                                              {"name": "d", "command": ["true"]}]}}}]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "tf", "namespace": "ns", "uid": "uid-9",
                         "annotations": {"volcano.sh/preemptable": "true", "volcano.sh/jdb-max-unavailable": "1"},
                         "labels": {"volcano.sh/cooldown-time": "60s", "other": "no"}},
            "spec": {"schedulerName": "volcano", "queue": "q1", "priorityClassName": "high", "tasks": tasks,
                     "plugins": plugins or {}, **spec},
            "status": {"version": 2, "retryCount": 1}}


def test_pod_metadata():
    job = _job()
    pod = pods.build_pod(job, job["spec"]["tasks"][0], 0)
    md = pod["metadata"]
    assert md["name"] == "tf-ps-0" and md["namespace"] == "ns"
    assert md["ownerReferences"][0]["uid"] == "uid-9" and md["ownerReferences"][0]["controller"] is True
    assert md["annotations"] == {
        "x": "y", "volcano.sh/task-index": "0", "volcano.sh/task-spec": "ps",
        "scheduling.k8s.io/group-name": "tf-uid-9", "volcano.sh/job-name": "tf", "volcano.sh/queue-name": "q1",
        "volcano.sh/job-version": "2", "volcano.sh/template-uid": "tf-ps", "volcano.sh/job-retry-count": "1",
        "volcano.sh/preemptable": "true", "volcano.sh/jdb-max-unavailable": "1"}
    assert md["labels"] == {"role": "ps", "volcano.sh/task-index": "0", "volcano.sh/job-name": "tf",
                            "volcano.sh/task-spec": "ps", "volcano.sh/job-namespace": "ns",
                            "volcano.sh/queue-name": "q1", "volcano.sh/cooldown-time": "60s"}
    assert pod["status"] == {"phase": "Pending"}
    assert job["spec"]["tasks"][0]["template"]["metadata"]["labels"] == {"role": "ps"}  # template untouched


COPIED = ("volcano.sh/preemptable", "volcano.sh/cooldown-time", "volcano.sh/revocable-zone",
          "volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")


@pytest.mark.parametrize("job_annotations, copied", [
    pytest.param({"volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "5m",
                  "volcano.sh/revocable-zone": "*", "other": "x"},
                 {"volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "5m",
                  "volcano.sh/revocable-zone": "*"},
                 id="preemptable-cooldown-revocable-zone"),
    pytest.param({"volcano.sh/jdb-min-available": "2", "volcano.sh/jdb-max-unavailable": "1"},
                 {"volcano.sh/jdb-min-available": "2"}, id="jdb-min-available-wins-over-max-unavailable"),
    pytest.param({"volcano.sh/jdb-max-unavailable": "30%"}, {"volcano.sh/jdb-max-unavailable": "30%"},
                 id="jdb-max-unavailable-alone"),
    pytest.param({}, {}, id="none"),
])
def test_job_annotations_copied_to_pods(job_annotations, copied):
    """Volcano's createJobPod copies these job annotations (the JDB pair: min-available, else max-unavailable)."""
    job = _job()
    job["metadata"]["annotations"] = job_annotations
    ann = pods.build_pod(job, job["spec"]["tasks"][1], 0)["metadata"]["annotations"]
    assert {k: v for k, v in ann.items() if k in COPIED or k == "other"} == copied


@pytest.mark.parametrize("task_index,index,scheduler,priority,numa", [
    pytest.param(0, 0, "volcano", "high", None, id="inherits-from-job"),
    pytest.param(1, 1, "other", "low", "best-effort", id="template-wins"),
])
def test_inheritance(task_index, index, scheduler, priority, numa):
    job = _job()
    pod = pods.build_pod(job, job["spec"]["tasks"][task_index], index)
    assert pod["spec"]["schedulerName"] == scheduler
    assert pod["spec"]["priorityClassName"] == priority
    assert pod["metadata"]["annotations"].get("volcano.sh/numa-topology-policy") == numa


def test_partition_label_and_volumes():
    job = _job(volumes=[{"mountPath": "/data", "volumeClaimName": "claim"}, {"mountPath": "/gen", "volumeClaim": {}}],
               tasks=[{"name": "w", "replicas": 4, "partitionPolicy": {"partitionSize": 2, "totalPartitions": 2},
                       "template": {"spec": {"containers": [{"name": "c"}]}}}])
    pod = pods.build_pod(job, job["spec"]["tasks"][0], 3)
    assert pod["metadata"]["labels"]["volcano.sh/partition-id"] == "1"
    assert pod["spec"]["volumes"] == [{"name": "tf-volume-0", "persistentVolumeClaim": {"claimName": "claim"}}]
    assert pod["spec"]["containers"][0]["volumeMounts"] == [{"mountPath": "/data", "name": "tf-volume-0"}]


def _env(container):
    return [(e["name"], e.get("value") or e["valueFrom"]["configMapKeyRef"]["key"]) for e in container.get("env", [])]


def test_env_plugin():
    job = _job({"env": []})
    pod = pods.build_pod(job, job["spec"]["tasks"][1], 1)
    for c in pod["spec"]["containers"] + pod["spec"]["initContainers"]:
        assert _env(c) == [("VK_TASK_INDEX", "1"), ("VC_TASK_INDEX", "1")]


def test_svc_plugin_pod():
    job = _job({"svc": []})
    pod = pods.build_pod(job, job["spec"]["tasks"][1], 0)
    spec = pod["spec"]
    assert spec["hostname"] == "tf-my-worker-0" and spec["subdomain"] == "tf"
    want_env = [("VC_PS_HOSTS", "VC_PS_HOSTS"), ("VC_PS_NUM", "VC_PS_NUM"),
                ("VC_MY_WORKER_HOSTS", "VC_MY_WORKER_HOSTS"), ("VC_MY_WORKER_NUM", "VC_MY_WORKER_NUM")]
    for c in spec["containers"] + spec["initContainers"]:
        assert _env(c) == want_env
        assert all(e["valueFrom"]["configMapKeyRef"]["name"] == "tf-svc" for e in c["env"])
        assert {"mountPath": "/etc/volcano", "name": "tf-svc"} in c["volumeMounts"]
    assert {"name": "tf-svc", "configMap": {"name": "tf-svc"}} in spec["volumes"]


def test_plugins_over_null_lists():
    """`env: null`, `volumeMounts: null`, `volumes: null` mean none, as in Kubernetes (was a crash)."""
    tasks = [{"name": "ps", "replicas": 1, "template": {"spec": {"volumes": None, "containers": [
        {"name": "c", "command": ["true"], "env": None, "volumeMounts": None}]}}}]
    job = _job({"svc": [], "env": []}, tasks=tasks)
    spec = pods.build_pod(job, job["spec"]["tasks"][0], 0)["spec"]
    assert [n for n, _ in _env(spec["containers"][0])] == ["VC_PS_HOSTS", "VC_PS_NUM", "VK_TASK_INDEX", "VC_TASK_INDEX"]
    assert spec["containers"][0]["volumeMounts"] == [{"mountPath": "/etc/volcano", "name": "tf-svc"}]
    assert spec["volumes"] == [{"name": "tf-svc", "configMap": {"name": "tf-svc"}}]


def test_svc_plugin_without_env_injection():
    job = _job({"svc": ["--inject-hosts-env=false"], "env": []})
    pod = pods.build_pod(job, job["spec"]["tasks"][0], 0)
    assert _env(pod["spec"]["containers"][0]) == [("VK_TASK_INDEX", "0"), ("VC_TASK_INDEX", "0")]
    assert pod["spec"]["containers"][0]["volumeMounts"] == [{"mountPath": "/etc/volcano", "name": "tf-svc"}]


def test_svc_configmap_and_service():
    job = _job({"svc": ["--publish-not-ready-addresses"]})
    cm = pods.svc_configmap(job)
    assert cm["metadata"]["name"] == "tf-svc"
    assert cm["data"] == {
        "ps.host": "tf-ps-0.tf", "VC_PS_HOSTS": "tf-ps-0.tf", "VC_PS_NUM": "1",
        "my_worker.host": "tf-my-worker-0.tf\ntf-my-worker-1.tf",
        "VC_MY_WORKER_HOSTS": "tf-my-worker-0.tf,tf-my-worker-1.tf", "VC_MY_WORKER_NUM": "2"}
    svc = pods.svc_service(job, job["spec"]["plugins"]["svc"])
    assert svc["metadata"]["name"] == "tf" and svc["metadata"]["ownerReferences"][0]["name"] == "tf"
    assert svc["spec"] == {"clusterIP": "None", "publishNotReadyAddresses": True,
                           "selector": {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "ns"}}


def test_svc_hosts_with_fixed_hostname():
    job = _job(tasks=[{"name": "m", "replicas": 3, "template": {"spec": {"hostname": "master", "subdomain": "sd"}}}])
    assert pods.svc_hosts(job) == {"m.host": "master.sd", "VC_M_HOSTS": "master.sd", "VC_M_NUM": "1"}


@pytest.mark.parametrize("args,want", [
    pytest.param([], (False, False, True), id="defaults"),
    pytest.param(["--publish-not-ready-addresses", "-disable-network-policy=true"], (True, True, True), id="set"),
    pytest.param(["--inject-hosts-env=false", "--bogus"], (False, False, False), id="off-and-unknown"),
    pytest.param(["--bogus", "--inject-hosts-env=false"], (False, False, True), id="an unknown flag ends parsing (Go)"),
])
def test_svc_flags(args, want):
    f = pods.svc_flags(args)
    assert (f["publish-not-ready-addresses"], f["disable-network-policy"], f["inject-hosts-env"]) == want


# job_controller_util_test.go TestCreateJobPod_PartitionPolicy, TestCreatePodWithPartitionPolicy,
# TestPartitionPolicyWithoutPolicy, TestPartitionPolicyEdgeCases: (partitionSize or None, index, partition-id label)
@pytest.mark.parametrize("size, index, want", [
    pytest.param(2, 0, "0", id="size-2-index-0"),
    pytest.param(2, 1, "0", id="size-2-index-1"),
    pytest.param(2, 2, "1", id="size-2-index-2"),
    pytest.param(2, 3, "1", id="size-2-index-3"),
    pytest.param(5, 10, "2", id="size-5-index-10"),
    pytest.param(1, 0, "0", id="size-1-index-0"),
    pytest.param(0, 5, "0", id="size-0-invalid"),
    pytest.param(None, 0, None, id="no-partition-policy"),
])
def test_upstream_partition_label(size, index, want):
    t = {"name": "test-task", "replicas": 12, "template": {}}
    if size is not None:
        t["partitionPolicy"] = {"partitionSize": size}
    pod = pods.build_pod(_job(tasks=[t]), t, index)
    assert pod["metadata"]["labels"].get("volcano.sh/partition-id") == want
    assert pod["metadata"]["labels"]["volcano.sh/task-spec"] == "test-task"


# TestCreateJobPod_Volumes and _DuplicateVolumes: each claim mounted once, at its path
@pytest.mark.parametrize("volumes, paths", [
    pytest.param([{"volumeClaimName": "pvc-1", "mountPath": "/data1"}, {"volumeClaimName": "pvc-2",
                                                                        "mountPath": "/data2"}],
                 ["/data1", "/data2"], id="two-claims"),
    pytest.param([{"volumeClaimName": "pvc-1", "mountPath": "/data1"}, {"volumeClaimName": "pvc-1",
                                                                        "mountPath": "/data1"}],
                 ["/data1"], id="duplicate-claim-skipped"),
])
def test_upstream_job_volumes(volumes, paths):
    t = {"name": "vol-task", "replicas": 1, "template": {"spec": {"containers": [{"name": "test"}]}}}
    pod = pods.build_pod(_job(tasks=[t], volumes=volumes), t, 0)
    assert len(pod["spec"]["volumes"]) == len(paths)
    assert [m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]] == paths
