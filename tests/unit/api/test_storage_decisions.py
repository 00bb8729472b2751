"""The volume controller's decisions (api/storage.py): what syncing a claim or a volume does, as kube's
PV controller decides it (syncUnboundClaim, syncBoundClaim, syncVolume, checkVolumeSatisfyClaim, bind,
unbindVolume, reclaimVolume) and the protection controllers' finalizer rules."""
from __future__ import annotations

import pathlib

import pytest

from vclite.api import storage

ROOT = pathlib.Path("/w")
S = storage.ClaimStep
V = storage.VolumeStep


def claim(name="c", cls="standard", size="1Gi", modes=("ReadWriteOnce",), volume_name=None, bound=False,
          uid="c-uid", by_controller=False, deleting=False, mode=None, selector=None, ann=None, phase=None):
    md = {"name": name, "namespace": "ns", "uid": uid, "annotations": dict(ann or {})}
    if bound:
        md["annotations"][storage.ANN_BIND_COMPLETED] = "yes"
    if by_controller:
        md["annotations"][storage.ANN_BOUND_BY_CONTROLLER] = "yes"
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume_name:
        spec["volumeName"] = volume_name
    if mode:
        spec["volumeMode"] = mode
    if selector:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec,
            "status": {"phase": phase} if phase else {}}


def volume(name="v", cls="standard", size="1Gi", modes=("ReadWriteOnce",), ref=None, labels=None, phase=None,
           policy=None, provisioned=False, path=None, deleting=False, ann=None):
    md = {"name": name, "labels": labels or {}, "annotations": dict(ann or {})}
    if provisioned:
        md["annotations"][storage.ANN_PROVISIONED_BY] = storage.PROVISIONER
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
            "hostPath": {"path": path or f"/data/{name}"}}
    if ref:
        spec["claimRef"] = ref
    if policy:
        spec["persistentVolumeReclaimPolicy"] = policy
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec,
            "status": {"phase": phase} if phase else {}}


def ref(name="c", uid="c-uid"):
    r = {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": name}
    if uid:
        r["uid"] = uid
    return r


STANDARD = storage.default_class()
WAIT = {**STANDARD, "volumeBindingMode": "WaitForFirstConsumer"}
STATIC = {**STANDARD, "provisioner": storage.NO_PROVISIONER}
FOREIGN = {**STANDARD, "metadata": {"name": "gp2"}, "provisioner": "ebs.csi.aws.com"}


def by_name(*vols):
    return {v["metadata"]["name"]: v for v in vols}


@pytest.mark.parametrize("c, vols, cls, consumer, step, chosen, reason", [
    pytest.param(claim(), [], STANDARD, False, S.PROVISION, None, None, id="no-volume-provisioned"),
    pytest.param(claim(), [volume("big", size="5Gi"), volume("small", size="2Gi"), volume("tiny", size="500Mi")],
                 STANDARD, False, S.BIND, "small", None, id="smallest-that-fits"),
    pytest.param(claim(), [volume("a", size="5Gi"), volume("pre", size="9Gi", ref=ref(uid=None))], STANDARD, False,
                 S.BIND, "pre", None, id="pre-bound-first"),
    pytest.param(claim(), [volume("other", ref=ref("d", "d-uid"))], STANDARD, False, S.PROVISION, None, None,
                 id="volume-of-another-claim-not-taken"),
    pytest.param(claim(modes=("ReadWriteMany",)), [volume()], STANDARD, False, S.PROVISION, None, None,
                 id="access-modes-mismatch-provisions"),
    pytest.param(claim(cls="", modes=("ReadWriteMany",)), [volume(cls="")], None, False, S.PENDING, None,
                 "FailedBinding", id="no-class-access-mismatch-pending"),
    pytest.param(claim(cls=""), [], None, False, S.PENDING, None, "FailedBinding", id="no-class-no-volume"),
    pytest.param(claim(cls=""), [volume(cls="")], None, False, S.BIND, "v", None, id="no-class-static"),
    pytest.param(claim(cls="", selector={"matchLabels": {"tier": "fast"}}),
                 [volume("slow", cls="", labels={"tier": "slow"}), volume("fast", cls="", size="3Gi",
                                                                           labels={"tier": "fast"})],
                 None, False, S.BIND, "fast", None, id="selector"),
    pytest.param(claim(cls="gp2"), [], None, False, S.PROVISION, None, "StorageClassNotFound", id="unknown-class"),
    pytest.param(claim(cls="gp2"), [], FOREIGN, False, S.PROVISION, None, "ProvisionerNotFound",
                 id="foreign-provisioner"),
    pytest.param(claim(), [], STATIC, False, S.PENDING, None, "ExternalProvisioning", id="no-provisioner-class"),
    pytest.param(claim(mode="Block"), [], STANDARD, False, S.PENDING, None, "ProvisioningFailed", id="block"),
    pytest.param(claim(mode="Block"), [{**volume(), "spec": {**volume()["spec"], "volumeMode": "Block"}}],
                 STANDARD, False, S.BIND, "v", None, id="block-static-binds"),
    pytest.param(claim(), [volume()], WAIT, False, S.PENDING, None, "WaitForFirstConsumer", id="wffc-waits"),
    pytest.param(claim(), [volume(ref=ref(uid=None))], WAIT, False, S.BIND, "v", None, id="wffc-pre-bound"),
    pytest.param(claim(), [volume()], WAIT, True, S.BIND, "v", None, id="wffc-consumer"),
    pytest.param(claim(), [], WAIT, True, S.PROVISION, None, None, id="wffc-consumer-provisions"),
    pytest.param(claim(ann={storage.ANN_SELECTED_NODE: "n1"}), [], WAIT, False, S.PROVISION, None, None,
                 id="wffc-selected-node"),
    pytest.param(claim(deleting=True), [], STANDARD, False, S.NOTHING, None, None, id="deleting-unbound"),
    # spec.volumeName
    pytest.param(claim(volume_name="v"), [], STANDARD, False, S.PENDING, None, None, id="named-missing"),
    pytest.param(claim(volume_name="v"), [volume()], STANDARD, False, S.BIND, "v", None, id="named-free"),
    pytest.param(claim(volume_name="v", size="2Gi"), [volume()], STANDARD, False, S.PENDING, None, "VolumeMismatch",
                 id="named-too-small"),
    pytest.param(claim(volume_name="v"), [volume(ref=ref())], STANDARD, False, S.BIND, "v", None,
                 id="named-bound-to-it"),
    pytest.param(claim(volume_name="v"), [volume(ref=ref("d", "d-uid"))], STANDARD, False, S.PENDING, None,
                 "FailedBinding", id="named-bound-elsewhere"),
    pytest.param(claim(volume_name="v", by_controller=True), [volume(ref=ref("d", "d-uid"))], STANDARD, False,
                 S.INVALID, "v", None, id="controller-binding-invalid"),
    # bound claims
    pytest.param(claim(volume_name="v", bound=True), [volume(ref=ref())], STANDARD, False, S.BIND, "v", None,
                 id="bound-ok"),
    pytest.param(claim(volume_name="v", bound=True), [volume()], STANDARD, False, S.BIND, "v", None,
                 id="bound-volume-came-unbound"),
    pytest.param(claim(volume_name="v", bound=True), [], STANDARD, False, S.LOST, None, "ClaimLost",
                 id="bound-volume-gone"),
    pytest.param(claim(bound=True), [], STANDARD, False, S.LOST, None, "ClaimLost", id="bound-name-gone"),
    pytest.param(claim(volume_name="v", bound=True), [volume(ref=ref("d", "d-uid"))], STANDARD, False, S.LOST, None,
                 "ClaimMisbound", id="misbound"),
])
def test_decide_claim(c, vols, cls, consumer, step, chosen, reason):
    d = storage.decide_claim(c, by_name(*vols), cls, consumer)
    assert d.step is step
    assert (d.volume or {}).get("metadata", {}).get("name") == chosen
    assert (d.event[1] if d.event else None) == reason


@pytest.mark.parametrize("v, c, step", [
    pytest.param(volume(), None, V.AVAILABLE, id="free"),
    pytest.param(volume(ref=ref(uid=None)), None, V.AVAILABLE, id="pre-bound-claim-missing"),
    pytest.param(volume(ref=ref()), None, V.RELEASE, id="claim-gone"),
    pytest.param(volume(ref=ref()), claim(uid="new"), V.RELEASE, id="claim-made-anew"),
    pytest.param(volume(ref=ref()), claim(), V.SYNC_CLAIM, id="claim-not-finished"),
    pytest.param(volume(ref=ref()), claim(volume_name="v", bound=True), V.BOUND, id="bound"),
    pytest.param(volume(ref=ref(), ann={storage.ANN_BOUND_BY_CONTROLLER: "yes"}), claim(volume_name="w"), V.UNBIND,
                 id="claim-bound-elsewhere"),
    pytest.param(volume(ref=ref(), provisioned=True, policy="Delete"), claim(volume_name="w"), V.RELEASE,
                 id="provisioned-not-needed"),
])
def test_decide_volume(v, c, step):
    assert storage.decide_volume(v, c) is step


@pytest.mark.parametrize("v, step, path", [
    pytest.param(volume(), storage.Reclaim.RETAIN, None, id="default-retain"),
    pytest.param(volume(policy="Retain"), storage.Reclaim.RETAIN, None, id="retain"),
    pytest.param(volume(policy="Delete", provisioned=True, path="/w/ns/_pvc/c"), storage.Reclaim.DELETE,
                 "/w/ns/_pvc/c", id="delete-provisioned"),
    pytest.param(volume(policy="Delete", path="/w/ns/_pvc/c"), storage.Reclaim.DELETE, None,
                 id="delete-static-keeps-data"),
    pytest.param(volume(policy="Delete", provisioned=True, path="/home/me"), storage.Reclaim.DELETE, None,
                 id="delete-provisioned-elsewhere-keeps-data"),
    pytest.param(volume(policy="Recycle", path="/w/ns/_pvc/c"), storage.Reclaim.RECYCLE, "/w/ns/_pvc/c",
                 id="recycle-under-root"),
    pytest.param({**volume(policy="Recycle"), "spec": {"persistentVolumeReclaimPolicy": "Recycle",
                                                       "nfs": {"server": "s", "path": "/"}}},
                 storage.Reclaim.RECYCLE, "/w/_pv/v", id="recycle-unattachable"),
    pytest.param(volume(policy="Recycle", path="/data/x"), storage.Reclaim.FAIL, None, id="recycle-elsewhere"),
])
def test_reclaim(v, step, path):
    got, where, message = storage.reclaim(v, ROOT)
    assert got is step and (str(where) if where else None) == path
    assert bool(message) == (step is storage.Reclaim.FAIL)


@pytest.mark.parametrize("path, ok", [
    pytest.param("/w/ns/_pvc/c", True, id="provisioned"),
    pytest.param("/w/_pv/v", True, id="unattachable"),
    pytest.param("/w/ns/_pvc", False, id="the-claims-dir"),
    pytest.param("/w/ns/_pvc/c/sub", False, id="deeper"),
    pytest.param("/w/ns/_pvc/../../etc", False, id="dot-dot"),
    pytest.param("/w/ns/other/c", False, id="not-pvc"),
    pytest.param("/w", False, id="root"),
    pytest.param("/etc/_pv/x", False, id="outside"),
    pytest.param("w/ns/_pvc/c", False, id="relative"),
])
def test_removable(path, ok):
    assert storage.removable(pathlib.PurePath(path), ROOT) is ok


@pytest.mark.parametrize("v, c, expect_ref, by_controller", [
    pytest.param(volume(), claim(), True, True, id="free-volume"),
    pytest.param(volume(ref=ref(uid=None)), claim(), True, False, id="user-pre-bound"),
    pytest.param(volume(ref=ref()), claim(), False, False, id="already"),
])
def test_bound_volume(v, c, expect_ref, by_controller):
    new = storage.bound_volume(v, c)
    if not expect_ref:
        assert new is None
        return
    assert new["spec"]["claimRef"]["uid"] == "c-uid" and new["spec"]["claimRef"]["name"] == "c"
    assert (storage.ANN_BOUND_BY_CONTROLLER in new["metadata"]["annotations"]) is by_controller
    assert "claimRef" not in v["spec"] or "uid" not in v["spec"]["claimRef"]   # (the input is not changed)


@pytest.mark.parametrize("c, anns, unchanged", [
    pytest.param(claim(), {storage.ANN_BIND_COMPLETED, storage.ANN_BOUND_BY_CONTROLLER}, False, id="chosen"),
    pytest.param(claim(volume_name="v"), {storage.ANN_BIND_COMPLETED}, False, id="named-by-user"),
    pytest.param(claim(volume_name="v", bound=True), None, True, id="already"),
])
def test_bound_claim(c, anns, unchanged):
    new = storage.bound_claim(c, volume())
    if unchanged:
        assert new is None
        return
    assert new["spec"]["volumeName"] == "v" and set(new["metadata"]["annotations"]) == anns


def test_unbound_volume_undoes_only_the_controllers_binding():
    mine = volume(ref=ref(), ann={storage.ANN_BOUND_BY_CONTROLLER: "yes"})
    assert "claimRef" not in storage.unbound_volume(mine)["spec"]
    users = storage.unbound_volume(volume(ref=ref()))
    assert users["spec"]["claimRef"] == ref(uid=None)


def test_claim_status_carries_the_volumes_modes_and_capacity():
    v = volume(size="5Gi", modes=("ReadWriteOnce", "ReadOnlyMany"))
    assert storage.claim_status(claim(), "Bound", v) == {
        "phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "capacity": {"storage": "5Gi"}}
    was = {**claim(), "status": {"phase": "Bound", "accessModes": ["x"], "capacity": {"storage": "1"}}}
    assert storage.claim_status(was, "Lost", None) == {"phase": "Lost"}


def pod(claims, phase="Running", node="n1"):
    return {"spec": {"nodeName": node, "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}}
                                                  for c in claims]},
            "status": {"phase": phase}}


@pytest.mark.parametrize("p, uses, names", [
    pytest.param(pod(["c"]), True, True, id="running"),
    pytest.param(pod(["c"], phase="Pending"), True, True, id="scheduled-not-started"),
    pytest.param(pod(["c"], node=""), False, True, id="not-scheduled"),
    pytest.param(pod(["c"], phase="Succeeded"), False, False, id="succeeded"),
    pytest.param(pod(["c"], phase="Failed"), False, False, id="failed"),
    pytest.param(pod(["d"]), False, False, id="other-claim"),
])
def test_pods_and_claims(p, uses, names):
    assert storage.pod_uses_claim(p, "c") is uses
    assert storage.pod_names_claim(p, "c") is names


def with_finalizers(obj, *finalizers):
    return {**obj, "metadata": {**obj["metadata"], "finalizers": list(finalizers)}}


UNCHANGED = "unchanged"


@pytest.mark.parametrize("obj, in_use, left", [
    pytest.param(claim(deleting=True), False, UNCHANGED, id="no-finalizer"),
    pytest.param(with_finalizers(claim(deleting=True), storage.PVC_PROTECTION, "x"), False, ["x"], id="released"),
    pytest.param(with_finalizers(claim(deleting=True), storage.PVC_PROTECTION), False, None, id="released-last"),
    pytest.param(with_finalizers(claim(deleting=True), storage.PVC_PROTECTION), True, UNCHANGED, id="in-use"),
    pytest.param(with_finalizers(claim(), storage.PVC_PROTECTION), False, UNCHANGED, id="not-deleted"),
])
def test_protection_done(obj, in_use, left):
    new = storage.protection_done(obj, storage.PVC_PROTECTION, in_use)
    if left == UNCHANGED:
        assert new is None
    else:
        assert new["metadata"].get("finalizers") == left
        assert storage.PVC_PROTECTION in obj["metadata"]["finalizers"]   # (the input is not changed)


def test_provisioner_annotations_set_once():
    new = storage.provisioner_annotated(claim())
    assert new["metadata"]["annotations"][storage.ANN_STORAGE_PROVISIONER] == storage.PROVISIONER
    assert new["metadata"]["annotations"][storage.ANN_BETA_STORAGE_PROVISIONER] == storage.PROVISIONER
    assert storage.provisioner_annotated(new) is None


@pytest.mark.parametrize("v, c, grown_to", [
    pytest.param(volume(provisioned=True, ref=ref()), claim(size="2Gi", bound=True), "2Gi", id="grows"),
    pytest.param(volume(provisioned=True, ref=ref()), claim(size="1024Mi", bound=True), None, id="holds it already"),
    pytest.param(volume(provisioned=True, size="5Gi", ref=ref()), claim(size="2Gi", bound=True), None,
                 id="larger already"),
    pytest.param(volume(ref=ref()), claim(size="2Gi", bound=True), None, id="made by hand: not vclite's"),
    pytest.param(volume(provisioned=True, ref=ref()), claim(size="2Gi"), None, id="not bound yet"),
    pytest.param(volume(provisioned=True, ref=ref(uid="other")), claim(size="2Gi", bound=True), None,
                 id="bound to another claim"),
])
def test_expanded_volume(v, c, grown_to):
    grown = storage.expanded_volume(v, c)
    assert (grown["spec"]["capacity"]["storage"] if grown else None) == grown_to
    assert v["spec"]["capacity"]["storage"] != "2Gi" or grown_to is None   # (the volume given is not changed)


def test_a_claim_naming_a_volume_a_user_bound_to_another_claim_says_so_as_kube():
    d = storage.decide_claim(claim(volume_name="v"), by_name(volume(ref=ref("d", "d-uid"))), None)
    assert d.event == ("Warning", "FailedBinding", 'volume "v" already bound to a different claim.')
