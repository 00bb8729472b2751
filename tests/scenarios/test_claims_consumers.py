"""Claims through the whole embedded control plane with real processes: a vcjob's volumeClaimName waits for its
PVC (PVCError, Pending, no PodGroup), its pods for the claim to be Bound (the scheduler's VolumeBinding reason),
then run with the bound volume's directory at their mountPath; a bare pod bound by spec.nodeName to a claim that is
not Bound waits in ContainerCreating. The claims are bound here by hand, as the volume controller binds them."""
from __future__ import annotations

import asyncio

import pytest

from vclite.api import kinds
from vclite.executor import mountview
from vclite.lib import clock
from vclite.runtime import runtime

NS = "default"


def pvc(name="data"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "storageClassName": ""}}


def bind(client, claim, path):
    """What the volume controller does for a claim it binds: a PV naming it, the claim naming the PV, Bound."""
    name = claim["metadata"]["name"]
    client.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
                   "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                            "persistentVolumeReclaimPolicy": "Retain",
                            "hostPath": {"path": str(path), "type": "DirectoryOrCreate"},
                            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": NS,
                                         "name": claim["metadata"]["name"], "uid": claim["metadata"]["uid"]}},
                   "status": {"phase": "Bound"}})
    claim = client.update({**claim, "spec": {**claim["spec"], "volumeName": f"pv-{claim['metadata']['name']}"}})
    client.update_status({**claim, "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                              "capacity": {"storage": "1Gi"}}})


def vcjob(script):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
            "spec": {"minAvailable": 1, "schedulerName": "volcano",
                     "volumes": [{"mountPath": "/data", "volumeClaimName": "data"}],
                     "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                         "restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", script]}]}}}]}}


@pytest.fixture
def rt(tmp_path):
    r = runtime.Runtime(clock.RealClock(), workdir=tmp_path / "work")
    yield r
    r.close()


def phase(rt, kind, name):
    return ((rt.client.get(kind, NS, name).get("status") or {}).get("state") or {}).get("phase") \
        if kind is kinds.JOB else (rt.client.get(kind, NS, name).get("status") or {}).get("phase")


def events(rt, reason):
    return [e["message"] for e in rt.client.list(kinds.EVENT, NS) if e["reason"] == reason]


def settle(rt):
    asyncio.run(rt.run_until(lambda: False, timeout=2))


@pytest.mark.skipif(mountview.available() is not None, reason=f"no mount namespace: {mountview.available()}")
def test_a_vcjob_waits_for_its_claim_then_its_pod_writes_into_the_bound_volume(rt, tmp_path):
    disk = tmp_path / "disk"
    rt.client.create(vcjob("echo written > /data/out"))
    settle(rt)
    assert phase(rt, kinds.JOB, "j") == "Pending" and rt.client.list(kinds.PODGROUP, NS) == []
    assert events(rt, "PVCError") == ["Failed to create PVC, err: pvc data is not found, the job will be in the "
                                      "Pending state until the PVC is created"]
    claim = rt.client.create(pvc())
    settle(rt)
    (pod,) = rt.client.list(kinds.POD, NS)
    assert "nodeName" not in pod["spec"]
    assert "pod has unbound immediate PersistentVolumeClaims" in pod["status"]["conditions"][0]["message"]
    bind(rt.client, rt.client.get(kinds.PERSISTENTVOLUMECLAIM, NS, "data"), disk)
    assert claim
    done = asyncio.run(rt.run_until(lambda: phase(rt, kinds.JOB, "j") == "Completed", timeout=30))
    assert done, rt.client.list(kinds.POD, NS)
    assert (disk / "out").read_text() == "written\n"


def test_a_pod_placed_by_hand_waits_for_its_claim_in_container_creating(rt, tmp_path):
    rt.client.create(pvc())
    rt.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                      "spec": {"nodeName": rt.node_names[0], "restartPolicy": "Never",
                               "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
                               "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "true"],
                                               "volumeMounts": [{"name": "v", "mountPath": "/data"}]}]}})
    settle(rt)
    waiting = rt.client.get(kinds.POD, NS, "p")["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting == {"reason": "ContainerCreating", "message": 'persistentvolumeclaim "data" is not bound'}
    assert any("PVC is not bound" in m for m in events(rt, "FailedMount"))
    bind(rt.client, rt.client.get(kinds.PERSISTENTVOLUMECLAIM, NS, "data"), tmp_path / "disk")
    assert asyncio.run(rt.run_until(lambda: phase(rt, kinds.POD, "p") == "Succeeded", timeout=30))
    assert (tmp_path / "disk").is_dir()
