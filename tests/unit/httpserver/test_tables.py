"""Table output: each kind's printer columns and cells, as kubectl shows them."""
import datetime

import pytest

from vclite.api import kinds
from vclite.httpserver import tables

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
CREATED = "2026-01-01T11:55:00Z"  # 5 minutes before NOW


def md(name="x", **extra):
    return {"name": name, "namespace": "default", "creationTimestamp": CREATED, "uid": "u1",
            "resourceVersion": "7", "labels": {"app": "a"}, **extra}


def headers(kind):
    return [(c["name"], c["priority"]) for c in tables.table(kind, [], NOW)["columnDefinitions"]]


@pytest.mark.parametrize("kind, expected", [
    pytest.param(kinds.JOBFLOW, [("Name", 0), ("Status", 0), ("Age", 0)], id="jobflow-as-volcano-crd"),
    pytest.param(kinds.JOBTEMPLATE, [("Name", 0), ("Age", 0)], id="jobtemplate-default-age"),
    pytest.param(kinds.JOB, [("Name", 0), ("STATUS", 0), ("minAvailable", 0), ("RUNNINGS", 0), ("AGE", 0),
                             ("QUEUE", 1)], id="vcjob-as-volcano-crd"),
    pytest.param(kinds.PODGROUP, [("Name", 0), ("STATUS", 0), ("minMember", 0), ("RUNNINGS", 0), ("AGE", 0),
                                  ("QUEUE", 1)], id="podgroup-as-volcano-crd"),
    pytest.param(kinds.QUEUE, [("Name", 0), ("PARENT", 0)], id="queue-as-volcano-crd"),
    pytest.param(kinds.POD, [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1),
                             ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1)], id="pod-as-kubectl"),
    pytest.param(kinds.EVENT, [("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1),
                               ("Source", 1), ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)],
                 id="events-as-kubectl"),
    pytest.param(kinds.RESOURCEQUOTA, [("Name", 0), ("Age", 0), ("Request", 0), ("Limit", 0)],
                 id="resourcequota-as-kube-apiserver"),
    pytest.param(kinds.NODE, [("Name", 0), ("Status", 0), ("Roles", 0), ("Age", 0), ("Version", 0),
                              ("Internal-IP", 1), ("External-IP", 1), ("OS-Image", 1), ("Kernel-Version", 1),
                              ("Container-Runtime", 1)], id="nodes-as-kubectl"),
    pytest.param(kinds.PODDISRUPTIONBUDGET, [("Name", 0), ("Min Available", 0), ("Max Unavailable", 0),
                                             ("Allowed Disruptions", 0), ("Age", 0)], id="pdb-as-kubectl"),
])
def test_columns(kind, expected):
    assert headers(kind) == expected


@pytest.mark.parametrize("kind, obj, cells", [
    pytest.param(kinds.JOBFLOW, {"metadata": md("f"), "status": {"state": {"phase": "Succeed"}}},
                 ["f", "Succeed", "5m"], id="jobflow"),
    pytest.param(kinds.JOBFLOW, {"metadata": md("f")}, ["f", None, "5m"], id="jobflow-no-status-is-null"),
    pytest.param(kinds.JOB, {"metadata": md("j"), "spec": {"queue": "q1"},
                             "status": {"state": {"phase": "Running"}, "minAvailable": 2, "running": 1}},
                 ["j", "Running", 2, 1, "5m", "q1"], id="vcjob"),
    pytest.param(kinds.PODGROUP, {"metadata": md("pg"), "spec": {"minMember": 3, "queue": "default"},
                                  "status": {"phase": "Inqueue"}}, ["pg", "Inqueue", 3, None, "5m", "default"],
                 id="podgroup"),
    pytest.param(kinds.QUEUE, {"metadata": md("q"), "spec": {"parent": "root"}}, ["q", "root"], id="queue"),
    pytest.param(kinds.JOBTEMPLATE, {"metadata": md("t")}, ["t", "5m"], id="jobtemplate"),
    pytest.param(kinds.NAMESPACE, {"metadata": md("default"), "status": {"phase": "Active"}},
                 ["default", "Active", "5m"], id="namespace"),
    pytest.param(kinds.CONFIGMAP, {"metadata": md("cm"), "data": {"a": "1", "b": "2"}}, ["cm", 2, "5m"],
                 id="configmap"),
    pytest.param(kinds.NODE, {"metadata": md("n"), "status": {
        "conditions": [{"type": "Ready", "status": "True"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
        "nodeInfo": {"kubeletVersion": "vclite", "osImage": "Debian", "kernelVersion": "",
                     "containerRuntimeVersion": "vclite://0.1.0"}}},
                 ["n", "Ready", "<none>", "5m", "vclite", "10.0.0.1", "<none>", "Debian", "<unknown>",
                  "vclite://0.1.0"], id="node-wide"),
    pytest.param(kinds.PRIORITYCLASS, {"metadata": md("high"), "value": 10, "preemptionPolicy": "Never"},
                 ["high", 10, False, "5m", "Never"], id="priorityclass"),
    pytest.param(kinds.PODDISRUPTIONBUDGET, {"metadata": md("b"), "spec": {"minAvailable": "50%"},
                                             "status": {"disruptionsAllowed": 2}}, ["b", "50%", "N/A", 2, "5m"],
                 id="pdb-min-available"),
    pytest.param(kinds.PODDISRUPTIONBUDGET, {"metadata": md("b"), "spec": {"maxUnavailable": 0}},
                 ["b", "N/A", "0", 0, "5m"], id="pdb-max-unavailable-zero-no-status"),
    # kube's printResourceQuota: `name: used/hard` sorted, limits.* apart, quantities as Quantity.String()
    pytest.param(kinds.RESOURCEQUOTA, {"metadata": md("q"), "status": {
        "hard": {"pods": "4", "requests.memory": "1024Mi", "limits.cpu": "2000m", "count/configmaps": "3"},
        "used": {"pods": "1", "requests.memory": "512Mi"}}},
                 ["q", "5m", "count/configmaps: 0/3, pods: 1/4, requests.memory: 512Mi/1Gi", "limits.cpu: 0/2"],
                 id="resourcequota"),
    pytest.param(kinds.RESOURCEQUOTA, {"metadata": md("q")}, ["q", "5m", "", ""], id="resourcequota-no-status"),
    # services as kubectl's printer shows them: node ports, external names and IPs, a load balancer pending
    pytest.param(kinds.SERVICE, {"metadata": md("web"), "spec": {"type": "NodePort", "ports": [
        {"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}},
                 ["web", "NodePort", "<none>", "<none>", "80:30080/TCP,53/UDP", "5m", "<none>"], id="service-nodeport"),
    pytest.param(kinds.SERVICE, {"metadata": md("ext"), "spec": {"type": "ExternalName", "externalName": "a.io"}},
                 ["ext", "ExternalName", "<none>", "a.io", "<none>", "5m", "<none>"], id="service-externalname"),
    pytest.param(kinds.SERVICE, {"metadata": md("lb"), "spec": {"type": "LoadBalancer", "ports": [{"port": 1}]}},
                 ["lb", "LoadBalancer", "<none>", "<pending>", "1/TCP", "5m", "<none>"], id="service-lb-pending"),
    pytest.param(kinds.SERVICE, {"metadata": md("lb"), "spec": {"type": "LoadBalancer", "externalIPs": ["1.2.3.4"]},
                                 "status": {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}]}}},
                 ["lb", "LoadBalancer", "<none>", "5.6.7.8,1.2.3.4", "<none>", "5m", "<none>"], id="service-lb"),
    pytest.param(kinds.SERVICE, {"metadata": md("c"), "spec": {"clusterIP": "None", "externalIPs": ["1.2.3.4"],
                                                              "selector": {"b": "2", "a": "1"}}},
                 ["c", "ClusterIP", "None", "1.2.3.4", "<none>", "5m", "a=1,b=2"], id="service-clusterip"),
])
def test_cells(kind, obj, cells):
    row = tables.table(kind, [obj], NOW, "9")["rows"][0]
    assert row["cells"] == cells
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["labels"] == {"app": "a"}  # feeds -L and --show-labels


def running(name, ready=True):
    return {"name": name, "ready": ready, "restartCount": 0, "state": {"running": {"startedAt": CREATED}}}


def terminated(name, code, reason=""):
    return {"name": name, "ready": False, "restartCount": 2,
            "state": {"terminated": {"exitCode": code, **({"reason": reason} if reason else {})}}}


def pod(status, init=(), deleting=False):
    metadata = md("p", **({"deletionTimestamp": CREATED} if deleting else {}))
    spec = {"containers": [{"name": c["name"]} for c in status.get("containerStatuses", [])] or [{"name": "c"}],
            "initContainers": [{"name": n} for n in init]}
    return {"metadata": metadata, "spec": spec, "status": status}


@pytest.mark.parametrize("obj, expected", [
    pytest.param(pod({"phase": "Pending"}), ("Pending", 0, 0), id="pending"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [running("a"), running("b", ready=False)]}),
                 ("Running", 1, 0), id="running-one-ready"),
    pytest.param(pod({"phase": "Succeeded", "containerStatuses": [terminated("a", 0, "Completed")]}),
                 ("Completed", 0, 2), id="completed"),
    pytest.param(pod({"phase": "Failed", "containerStatuses": [terminated("a", 3, "Error")]}), ("Error", 0, 2),
                 id="error"),
    pytest.param(pod({"phase": "Failed", "containerStatuses": [terminated("a", 3)]}), ("ExitCode:3", 0, 2),
                 id="exit-code-without-reason"),
    pytest.param(pod({"phase": "Pending", "containerStatuses": [
        {"name": "a", "restartCount": 0, "state": {"waiting": {"reason": "CreateContainerConfigError"}}}]}),
        ("CreateContainerConfigError", 0, 0), id="waiting-reason"),
    pytest.param(pod({"phase": "Pending", "initContainerStatuses": [
        {"name": "i0", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
        {"name": "i1", "restartCount": 1, "state": {"running": {}}}]}, init=("i0", "i1")),
        ("Init:1/2", 0, 1), id="init-progress"),
    pytest.param(pod({"phase": "Running", "containerStatuses": [running("a")]}, deleting=True),
                 ("Terminating", 1, 0), id="terminating"),
    pytest.param(pod({"phase": "Failed", "reason": "Evicted"}), ("Evicted", 0, 0), id="pod-reason"),
])
def test_pod_status(obj, expected):
    assert tables.pod_status_and_ready(obj) == expected


@pytest.mark.parametrize("seconds, text", [
    pytest.param(-5, "<invalid>", id="future"),
    pytest.param(-1, "0s", id="clock-skew"),
    pytest.param(0, "0s", id="zero"),
    pytest.param(119, "119s", id="under-two-minutes"),
    pytest.param(125, "2m5s", id="minutes-seconds"),
    pytest.param(600, "10m", id="ten-minutes"),
    pytest.param(3 * 3600 + 5 * 60, "3h5m", id="hours-minutes"),
    pytest.param(10 * 3600, "10h", id="hours"),
    pytest.param(3 * 86400 + 3600, "3d1h", id="days-hours"),
    pytest.param(30 * 86400, "30d", id="days"),
    pytest.param(3 * 365 * 86400 + 86400 * 2, "3y2d", id="years-days"),
])
def test_human_duration(seconds, text):
    assert tables.human_duration(seconds) == text


def test_include_object_none_and_object():
    obj = {"metadata": md("f")}
    assert "object" not in tables.table(kinds.JOBFLOW, [obj], NOW, include_object="None")["rows"][0]
    assert tables.table(kinds.JOBFLOW, [obj], NOW, include_object="Object")["rows"][0]["object"] is obj


def test_managed_fields_not_in_row_metadata():
    obj = {"metadata": md("f", managedFields=[{"manager": "kubectl"}])}
    assert "managedFields" not in tables.table(kinds.JOBFLOW, [obj], NOW)["rows"][0]["object"]["metadata"]


# ---- storage: kube-apiserver's printers ------------------------------------------------------------------

@pytest.mark.parametrize("kind, expected", [
    pytest.param(kinds.PERSISTENTVOLUMECLAIM, [("Name", 0), ("Status", 0), ("Volume", 0), ("Capacity", 0),
                                               ("Access Modes", 0), ("StorageClass", 0), ("VolumeAttributesClass", 0),
                                               ("Age", 0), ("VolumeMode", 1)], id="pvc"),
    pytest.param(kinds.PERSISTENTVOLUME, [("Name", 0), ("Capacity", 0), ("Access Modes", 0), ("Reclaim Policy", 0),
                                          ("Status", 0), ("Claim", 0), ("StorageClass", 0),
                                          ("VolumeAttributesClass", 0), ("Reason", 0), ("Age", 0), ("VolumeMode", 1)],
                 id="pv"),
    pytest.param(kinds.STORAGECLASS, [("Name", 0), ("Provisioner", 0), ("ReclaimPolicy", 0), ("VolumeBindingMode", 0),
                                      ("AllowVolumeExpansion", 0), ("Age", 0)], id="storageclass"),
])
def test_storage_columns(kind, expected):
    assert headers(kind) == expected


BOUND_CLAIM = {"metadata": md("data"), "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pvc-1",
                                                "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem",
                                                "storageClassName": "standard"},
               "status": {"phase": "Bound", "capacity": {"storage": "1Gi"},
                          "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]}}


@pytest.mark.parametrize("kind, obj, cells", [
    pytest.param(kinds.PERSISTENTVOLUMECLAIM, BOUND_CLAIM,
                 ["data", "Bound", "pvc-1", "1Gi", "RWO,RWX", "standard", "<unset>", "5m", "Filesystem"],
                 id="bound claim: its volume's capacity and modes"),
    pytest.param(kinds.PERSISTENTVOLUMECLAIM, {"metadata": md("p", deletionTimestamp=CREATED),
                                               "spec": {"accessModes": ["ReadWriteOnce"]}, "status": {"phase": "Pending"}},
                 ["p", "Terminating", "", "", "", "", "<unset>", "5m", "<unset>"], id="pending claim being deleted"),
    pytest.param(kinds.PERSISTENTVOLUME, {"metadata": md("pv1"), "spec": {
        "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOncePod"], "persistentVolumeReclaimPolicy": "Retain",
        "claimRef": {"namespace": "ns", "name": "data"}, "storageClassName": "manual", "volumeMode": "Block"},
        "status": {"phase": "Released", "reason": "x"}},
                 ["pv1", "5Gi", "RWOP", "Retain", "Released", "ns/data", "manual", "<unset>", "x", "5m", "Block"],
                 id="volume"),
    pytest.param(kinds.PERSISTENTVOLUME, {"metadata": md("pv2"), "spec": {}},
                 ["pv2", "0", "", "", "", "", "", "<unset>", "", "5m", "<unset>"], id="volume with nothing"),
    pytest.param(kinds.STORAGECLASS, {"metadata": md("standard", annotations={
        "storageclass.kubernetes.io/is-default-class": "true"}), "provisioner": "vclite.io/local-dir",
        "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": True},
                 ["standard (default)", "vclite.io/local-dir", "Delete", "Immediate", True, "5m"], id="default class"),
    pytest.param(kinds.STORAGECLASS, {"metadata": md("nfs"), "provisioner": "nfs.io/x"},
                 ["nfs", "nfs.io/x", "Delete", "Immediate", False, "5m"], id="class without the optional fields"),
])
def test_storage_cells(kind, obj, cells):
    assert tables.table(kind, [obj], NOW, "9")["rows"][0]["cells"] == cells
