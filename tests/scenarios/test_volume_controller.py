"""The volume controller on the embedded control plane (virtual clock, real directories): claims bound to
static volumes or provisioned as directories, volumes released and reclaimed, the protection finalizers,
and a durable control plane finishing a provisioning cut short. Objects carry what admission would set
(the protection finalizers), so these hold with or without it."""
from __future__ import annotations

import os
import pathlib
import stat

import pytest

from vclite.api import kinds, meta, storage
from vclite.lib import clock, errors
from vclite.runtime import runtime

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}


def claim(name="data", cls="standard", size="1Gi", modes=("ReadWriteOnce",), volume_name=None, selector=None):
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume_name:
        spec["volumeName"] = volume_name
    if selector:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", "finalizers": [storage.PVC_PROTECTION]},
            "spec": spec}


def volume(name, path, size="1Gi", cls="", modes=("ReadWriteOnce",), policy="Retain", labels=None, claim_ref=None):
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
            "persistentVolumeReclaimPolicy": policy, "hostPath": {"path": str(path)}}
    if claim_ref:
        spec["claimRef"] = claim_ref
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": labels or {}, "finalizers": [storage.PV_PROTECTION]}, "spec": spec}


def pod(name, claim_name, node="n1", phase="Running"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "restartPolicy": "Never",
                     "containers": [{"name": "main", "command": ["true"],
                                     "volumeMounts": [{"name": "d", "mountPath": "/d"}]}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim_name}}]},
            "status": {"phase": phase}}


@pytest.fixture
def rt(tmp_path):
    r = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, workdir=tmp_path / "work")
    r.start()
    yield r


def get_claim(rt, name="data"):
    try:
        return rt.client.get(kinds.PERSISTENTVOLUMECLAIM, "default", name)
    except errors.NotFound:
        return None


def get_volume(rt, name):
    try:
        return rt.client.get(kinds.PERSISTENTVOLUME, "", name)
    except errors.NotFound:
        return None


def phase(obj):
    return (obj.get("status") or {}).get("phase")


def events(rt, name="data"):
    return [(e["type"], e["reason"], e["message"]) for e in rt.client.list(kinds.EVENT)
            if e["involvedObject"]["name"] == name]


def test_a_claim_of_a_class_is_provisioned_a_directory(rt):
    c = rt.client.create(claim())
    rt.settle()
    c = get_claim(rt)
    pv_name = f"pvc-{meta.uid(c)}"
    assert phase(c) == "Bound" and c["spec"]["volumeName"] == pv_name
    assert c["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    assert meta.annotations(c)[storage.ANN_STORAGE_PROVISIONER] == storage.PROVISIONER
    assert meta.annotations(c)[storage.ANN_BIND_COMPLETED] == "yes"
    pv = get_volume(rt, pv_name)
    path = rt.workdir / "default" / "_pvc" / "data"
    assert phase(pv) == "Bound" and pv["spec"]["hostPath"]["path"] == str(path)
    assert pv["spec"]["claimRef"]["uid"] == meta.uid(c) and pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert path.is_dir() and stat.S_IMODE(path.stat().st_mode) == 0o777
    assert events(rt) == [
        ("Normal", "Provisioning", 'External provisioner is provisioning volume for claim "default/data"'),
        ("Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}")]


def test_static_volumes_bind_by_best_fit_name_pre_binding_and_selector(rt, tmp_path):
    for name, size, labels in (("big", "10Gi", {}), ("small", "2Gi", {}), ("tiny", "1Mi", {}),
                               ("fast", "20Gi", {"tier": "fast"})):
        rt.client.create(volume(name, tmp_path / name, size, labels=labels))
    rt.client.create(volume("reserved", tmp_path / "r", "50Gi",
                            claim_ref={"namespace": "default", "name": "mine"}))
    rt.settle()
    assert {meta.name(v): phase(v) for v in rt.client.list(kinds.PERSISTENTVOLUME)} == dict.fromkeys(
        ("big", "small", "tiny", "fast", "reserved"), "Available")
    rt.client.create(claim("best", cls="", size="1Gi"))
    rt.client.create(claim("named", cls="", size="1Gi", volume_name="big"))
    rt.client.create(claim("selected", cls="", selector={"matchLabels": {"tier": "fast"}}))
    rt.client.create(claim("mine", cls="", size="1Gi"))
    rt.settle()
    bound = {n: get_claim(rt, n)["spec"].get("volumeName") for n in ("best", "named", "selected", "mine")}
    assert bound == {"best": "small", "named": "big", "selected": "fast", "mine": "reserved"}
    assert all(phase(get_volume(rt, v)) == "Bound" for v in bound.values())
    assert meta.annotations(get_volume(rt, "small"))[storage.ANN_BOUND_BY_CONTROLLER] == "yes"
    assert storage.ANN_BOUND_BY_CONTROLLER not in meta.annotations(get_volume(rt, "reserved"))   # (a user's)
    assert storage.ANN_BOUND_BY_CONTROLLER not in meta.annotations(get_claim(rt, "named"))
    assert list(rt.workdir.glob("*/_pvc/*")) == []    # nothing provisioned


def test_a_pre_bound_volume_waits_for_its_claim_and_a_named_volume_for_its_creation(rt, tmp_path):
    rt.client.create(volume("early", tmp_path / "e", claim_ref={"namespace": "default", "name": "late"}))
    rt.client.create(claim("waiting", cls="", volume_name="later"))
    rt.settle()
    assert phase(get_volume(rt, "early")) == "Available"
    assert phase(get_claim(rt, "waiting")) == "Pending" and events(rt, "waiting") == []
    rt.client.create(claim("late", cls=""))
    rt.client.create(volume("later", tmp_path / "l"))
    rt.settle()
    assert get_claim(rt, "late")["spec"]["volumeName"] == "early" and phase(get_claim(rt, "late")) == "Bound"
    assert phase(get_claim(rt, "waiting")) == "Bound" and phase(get_volume(rt, "later")) == "Bound"


def test_mismatches_stay_pending(rt, tmp_path):
    rt.client.create(volume("rwo", tmp_path / "v"))
    rt.client.create(claim("many", cls="", modes=("ReadWriteMany",)))
    rt.client.create(claim("none", cls="", size="5Gi"))
    rt.client.create(claim("named", cls="", size="5Gi", volume_name="rwo"))
    rt.settle()
    rt.client.create(volume("other", tmp_path / "o", size="1Mi"))   # (wakes the unbound claims: no new Event)
    rt.settle()
    assert [phase(get_claim(rt, n)) for n in ("many", "none", "named")] == ["Pending"] * 3
    assert phase(get_volume(rt, "rwo")) == "Available"
    no_class = ("Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
    assert events(rt, "many") == [no_class] and events(rt, "none") == [no_class]
    assert events(rt, "named") == [("Warning", "VolumeMismatch",
                                    'Cannot bind to requested volume "rwo": requested PV is too small')]


def test_an_unknown_class_is_provisioned_with_a_note(rt):
    rt.client.create(claim(cls="gp2"))
    rt.settle()
    c = get_claim(rt)
    assert phase(c) == "Bound"
    assert get_volume(rt, c["spec"]["volumeName"])["spec"]["storageClassName"] == "gp2"
    assert events(rt)[0] == ("Normal", "StorageClassNotFound", (
        'storageclass.storage.k8s.io "gp2" not found: vclite.io/local-dir provisions the claim '
        "(a directory on this machine), as for a class of its own"))
    assert [e[1] for e in events(rt)[1:]] == ["Provisioning", "ProvisioningSucceeded"]


def test_a_block_claim_is_not_provisioned(rt):
    c = claim()
    c["spec"]["volumeMode"] = "Block"
    rt.client.create(c)
    rt.settle()
    assert phase(get_claim(rt)) == "Pending" and rt.client.list(kinds.PERSISTENTVOLUME) == []
    assert events(rt) == [("Warning", "ProvisioningFailed", "vclite.io/local-dir does not support block volume "
                                                            "provisioning (vclite has no block devices)")]


def test_wait_for_first_consumer_binds_when_a_pod_names_the_claim(rt):
    rt.client.create({**storage.default_class(), "metadata": {"name": "later"},
                      "volumeBindingMode": "WaitForFirstConsumer"})
    rt.client.create(claim(cls="later"))
    rt.settle()
    assert phase(get_claim(rt)) == "Pending" and rt.client.list(kinds.PERSISTENTVOLUME) == []
    assert events(rt) == [("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")]
    rt.client.create(pod("user", "data", node=""))
    rt.settle()
    assert phase(get_claim(rt)) == "Bound"


@pytest.mark.parametrize("policy", ["Delete", "Retain"])
def test_a_deleted_claim_releases_its_volume_which_its_policy_reclaims(rt, policy):
    if policy == "Retain":
        rt.client.create({**storage.default_class(), "metadata": {"name": "keep"}, "reclaimPolicy": "Retain"})
    rt.client.create(claim(cls="standard" if policy == "Delete" else "keep"))
    rt.settle()
    c = get_claim(rt)
    pv_name, path = c["spec"]["volumeName"], rt.workdir / "default" / "_pvc" / "data"
    (path / "result.txt").write_text("42")
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    assert get_claim(rt) is None
    if policy == "Delete":
        assert get_volume(rt, pv_name) is None and not path.exists()
        assert (rt.workdir / "default" / "_pvc").is_dir()
    else:
        assert phase(get_volume(rt, pv_name)) == "Released" and (path / "result.txt").read_text() == "42"
        rt.client.create(claim())   # (a claim of that name anew: not this volume, another directory)
        rt.settle()
        again = get_claim(rt)
        assert again["spec"]["volumeName"] != pv_name
        assert get_volume(rt, again["spec"]["volumeName"])["spec"]["hostPath"]["path"] == \
            f"{path}-{meta.uid(again)[:8]}"


def test_delete_never_removes_what_is_not_vclites(rt, tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "f").write_text("keep")
    rt.client.create(volume("static", outside, policy="Delete"))
    rt.client.create(claim(cls=""))
    rt.settle()
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    assert get_volume(rt, "static") is None and (outside / "f").read_text() == "keep"


def test_a_provisioned_directory_is_removed_without_following_links(rt, tmp_path):
    rt.client.create(claim())
    rt.settle()
    path = rt.workdir / "default" / "_pvc" / "data"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("keep")
    (path / "link").symlink_to(outside)
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    assert not path.exists() and (outside / "f").read_text() == "keep"


def test_a_volume_gone_under_a_bound_claim_leaves_it_lost(rt, tmp_path):
    rt.client.create(volume("v", tmp_path / "v"))
    rt.client.create(claim(cls=""))
    rt.settle()
    assert phase(get_claim(rt)) == "Bound"
    rt.client.delete(kinds.PERSISTENTVOLUME, "", "v")
    rt.settle()
    held = rt.client.get(kinds.PERSISTENTVOLUME, "", "v")   # (pv-protection holds a Bound volume: forced away)
    held["metadata"]["finalizers"] = []
    rt.client.update(held)
    rt.settle()
    c = get_claim(rt)
    assert c["status"] == {"phase": "Lost"}
    assert events(rt)[-1] == ("Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume "
                                                      "is lost!")


def test_pvc_protection_holds_a_claim_while_a_running_pod_names_it(rt):
    rt.client.create(claim())
    rt.client.create(pod("running", "data"))
    rt.client.create(pod("done", "data", phase="Succeeded"))
    rt.client.create(pod("unscheduled", "data", node=""))
    rt.settle()
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    c = get_claim(rt)
    assert meta.is_deleting(c) and c["metadata"]["finalizers"] == [storage.PVC_PROTECTION]
    assert phase(c) == "Bound"
    p = rt.client.get(kinds.POD, "default", "running")
    rt.client.update_status({**p, "status": {"phase": "Succeeded"}})
    rt.settle()
    assert get_claim(rt) is None
    assert rt.client.list(kinds.PERSISTENTVOLUME) == []   # (then released and deleted: the class's Delete)


def test_pvc_protection_releases_when_the_pod_is_deleted(rt):
    rt.client.create(claim())
    rt.client.create(pod("running", "data"))
    rt.settle()
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    assert get_claim(rt) is not None
    rt.client.delete(kinds.POD, "default", "running", grace_period=0)
    rt.settle()
    assert get_claim(rt) is None


def test_pv_protection_holds_a_bound_volume(rt, tmp_path):
    rt.client.create(volume("v", tmp_path / "v"))
    rt.client.create(claim(cls=""))
    rt.settle()
    rt.client.delete(kinds.PERSISTENTVOLUME, "", "v")
    rt.settle()
    v = get_volume(rt, "v")
    assert meta.is_deleting(v) and phase(v) == "Bound" and phase(get_claim(rt)) == "Bound"
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    assert get_claim(rt) is None and get_volume(rt, "v") is None   # (Released: no longer protected)


def test_a_run_without_storage_follows_no_pods(rt):
    rt.client.create(pod("p", "nothing"))
    rt.settle()
    assert len(rt.volume_controller.pods) == 0


def test_a_restarted_control_plane_finishes_a_provisioning_cut_short(tmp_path):
    data, work = tmp_path / "data", tmp_path / "work"
    first = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, data_dir=data, workdir=work)
    assert first.client.get(kinds.STORAGECLASS, "", "standard")   # (the control plane makes the default class)
    c = first.client.create(claim())
    path = storage.provisioned_path(work, c)
    path.mkdir(parents=True)
    first.client.create(storage.provisioned_volume(c, storage.default_class(), path))  # (then the process died)
    first.close()
    second = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False, data_dir=data, workdir=work)
    try:
        second.start()
        second.settle()
        c = get_claim(second)
        assert phase(c) == "Bound" and c["spec"]["volumeName"] == f"pvc-{meta.uid(c)}"
        assert [meta.name(v) for v in second.client.list(kinds.PERSISTENTVOLUME)] == [f"pvc-{meta.uid(c)}"]
        assert phase(second.client.list(kinds.PERSISTENTVOLUME)[0]) == "Bound"
        assert os.listdir(work / "default" / "_pvc") == ["data"]
    finally:
        second.close()


def test_recycle_empties_the_directory_and_frees_the_volume(rt):
    path = rt.workdir / "_pv" / "old"
    path.mkdir(parents=True)
    (path / "stale").mkdir()
    (path / "stale" / "f").write_text("x")
    (path / "g").write_text("y")
    rt.client.create(volume("old", path, policy="Recycle"))
    rt.client.create(claim(cls=""))
    rt.settle()
    rt.client.delete(kinds.PERSISTENTVOLUMECLAIM, "default", "data")
    rt.settle()
    v = get_volume(rt, "old")
    assert phase(v) == "Available" and "claimRef" not in v["spec"]
    assert path.is_dir() and list(path.iterdir()) == []
    assert ("Normal", "VolumeRecycled", "Volume recycled") in events(rt, "old")


def test_a_provisioned_claim_whose_request_grows_is_expanded(rt):
    """`kubectl patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'` on a claim of the
    default class (allowVolumeExpansion: true): its volume's capacity, then the claim's status.capacity, are
    the new size, with the Events an external resizer records; a directory needs nothing more."""
    rt.client.create(claim())
    rt.settle()
    c = get_claim(rt)
    c["spec"]["resources"]["requests"]["storage"] = "2Gi"
    rt.client.update(c)
    rt.settle()
    c = get_claim(rt)
    pv_name = c["spec"]["volumeName"]
    assert c["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    assert get_volume(rt, pv_name)["spec"]["capacity"] == {"storage": "2Gi"}
    assert events(rt)[-2:] == [("Normal", "Resizing", f"External resizer is resizing volume {pv_name}"),
                               ("Normal", "VolumeResizeSuccessful", "Resize volume succeeded")]
    rt.settle()
    assert len(events(rt)) == 4   # (once)


def test_a_static_volume_is_not_resized(rt, tmp_path):
    """A volume made by hand is not vclite's to resize (its class admits the growth: the request stays above
    the capacity, as with a resizer that does not run)."""
    rt.client.create(volume("pv1", tmp_path / "v", cls="standard"))
    rt.client.create(claim())
    rt.settle()
    c = get_claim(rt)
    c["spec"]["resources"]["requests"]["storage"] = "2Gi"
    rt.client.update(c)
    rt.settle()
    assert get_claim(rt)["status"]["capacity"] == {"storage": "1Gi"}
    assert get_volume(rt, "pv1")["spec"]["capacity"] == {"storage": "1Gi"}
