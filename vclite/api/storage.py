"""Persistent storage as Kubernetes defines it: claims, volumes, classes — the shared names and the pure
decisions (which volume a claim binds to, what a provisioned volume looks like, where a volume's data lives).

A PersistentVolumeClaim asks for storage (`spec.resources.requests.storage`, `accessModes`, a class); the
volume controller (controllers/volume.py, kube-controller-manager's PV controller) binds it to a fitting
PersistentVolume or has vclite's provisioner make one: a directory. A volume's data lives where its source
says: `hostPath.path` or `local.path`, a directory on this machine (vclite's provisioned volumes are
hostPath volumes under the executor's work directory, as a local-path provisioner makes them); for any
other source (nfs, csi, a cloud disk), which this machine cannot attach, in `<root>/_pv/<volume name>`.

Nothing here reads the API or the file system: dicts in, values out.
"""
from __future__ import annotations

import pathlib
from fractions import Fraction
from typing import Any, Iterable, Mapping

from vclite.api import disruption
from vclite.api import meta
from vclite.api import quantity

Obj = dict[str, Any]

# finalizers the StorageObjectInUseProtection admission plugin adds, the protection controllers remove
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
# annotations of the PV controller and of provisioning
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"

# vclite's provisioner: a directory per claim under the executor's work directory
PROVISIONER = "vclite.io/local-dir"
DEFAULT_CLASS_NAME = "standard"     # (kind's and minikube's default class name)
PROVISIONED_DIR = "_pvc"            # <root>/<namespace>/_pvc/<claim>
UNATTACHABLE_DIR = "_pv"            # <root>/_pv/<volume>: a source this machine cannot attach

# phases
CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST = "Pending", "Bound", "Lost"
VOLUME_PENDING, VOLUME_AVAILABLE, VOLUME_BOUND, VOLUME_RELEASED, VOLUME_FAILED = (
    "Pending", "Available", "Bound", "Released", "Failed")
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
RECLAIM_POLICIES = ("Retain", "Delete", "Recycle")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def default_class() -> Obj:
    """The StorageClass every vclite control plane starts with (created if missing): the default class,
    vclite's provisioner, volumes deleted with their claims, bound at once."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": DEFAULT_CLASS_NAME, "annotations": {ANN_DEFAULT_CLASS: "true"}},
            "provisioner": PROVISIONER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
            "allowVolumeExpansion": True}


def is_default_class(cls: Obj) -> bool:
    ann = meta.annotations(cls)
    return ann.get(ANN_DEFAULT_CLASS) == "true" or ann.get(ANN_BETA_DEFAULT_CLASS) == "true"


def claim_class(claim: Obj) -> str:
    """The class a claim asks for ("" for none; kube's GetPersistentVolumeClaimClass: the beta annotation
    first, then spec.storageClassName)."""
    ann = meta.annotations(claim).get("volume.beta.kubernetes.io/storage-class")
    if ann is not None:
        return ann
    return (claim.get("spec") or {}).get("storageClassName") or ""


def volume_class(volume: Obj) -> str:
    ann = meta.annotations(volume).get("volume.beta.kubernetes.io/storage-class")
    if ann is not None:
        return ann
    return (volume.get("spec") or {}).get("storageClassName") or ""


def requested_storage(claim: Obj) -> Fraction:
    """spec.resources.requests.storage in bytes (0 when missing or not a quantity: admission refuses both)."""
    raw = (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return quantity.parse(raw) if raw is not None else Fraction(0)
    except ValueError:
        return Fraction(0)


def volume_capacity(volume: Obj) -> Fraction:
    raw = ((volume.get("spec") or {}).get("capacity") or {}).get("storage")
    try:
        return quantity.parse(raw) if raw is not None else Fraction(0)
    except ValueError:
        return Fraction(0)


def volume_mode(obj: Obj) -> str:
    return (obj.get("spec") or {}).get("volumeMode") or "Filesystem"


def claim_ref(claim: Obj) -> Obj:
    """What a volume's spec.claimRef says of the claim it is bound to."""
    return {"kind": "PersistentVolumeClaim", "namespace": meta.namespace(claim), "name": meta.name(claim),
            "uid": meta.uid(claim), "apiVersion": "v1"}


def refers_to(volume: Obj, claim: Obj) -> bool:
    """Whether the volume's claimRef names this claim (and, when it carries a uid, this very object)."""
    ref = (volume.get("spec") or {}).get("claimRef") or {}
    if ref.get("name") != meta.name(claim) or (ref.get("namespace") or "") != meta.namespace(claim):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.uid(claim)


def fits(volume: Obj, claim: Obj) -> bool:
    """Whether `volume` can be bound to `claim` (kube's findMatchingVolume checks): not being deleted,
    free or pre-bound to this claim, the same class and volume mode, at least the requested capacity,
    every access mode asked for, and the labels the claim's selector asks for."""
    spec = volume.get("spec") or {}
    if meta.is_deleting(volume):
        return False
    ref = spec.get("claimRef")
    if ref and not refers_to(volume, claim):
        return False
    if (volume.get("status") or {}).get("phase") in (VOLUME_RELEASED, VOLUME_FAILED) and not ref:
        return False
    if volume_class(volume) != claim_class(claim) or volume_mode(volume) != volume_mode(claim):
        return False
    if volume_capacity(volume) < requested_storage(claim):
        return False
    if not set((claim.get("spec") or {}).get("accessModes") or ()) <= set(spec.get("accessModes") or ()):
        return False
    selector = (claim.get("spec") or {}).get("selector")
    return not selector or disruption.selector_matches(selector, meta.labels(volume))


def best_volume(volumes: Iterable[Obj], claim: Obj) -> Obj | None:
    """The volume a claim without spec.volumeName binds to: one pre-bound to it (its claimRef names the claim),
    else the smallest that fits, ties by name; None when nothing fits."""
    fitting = [v for v in volumes if fits(v, claim)]
    for v in fitting:
        if (v.get("spec") or {}).get("claimRef"):
            return v
    return min(fitting, key=lambda v: (volume_capacity(v), meta.name(v)), default=None)


def claim_names(pod_spec: Mapping[str, Any]) -> list[str]:
    """The claims a pod's volumes name, in order, each once."""
    names: list[str] = []
    for vol in pod_spec.get("volumes") or ():
        name = ((vol or {}).get("persistentVolumeClaim") or {}).get("claimName")
        if name and name not in names:
            names.append(name)
    return names


def provisioned_path(root: pathlib.Path, claim: Obj, taken: Iterable[str] = ()) -> pathlib.Path:
    """The directory vclite's provisioner gives a claim: `<root>/<namespace>/_pvc/<claim>`, or with the claim's
    uid appended when another volume (a retained one of an earlier claim of that name) still holds that path."""
    path = root / meta.namespace(claim) / PROVISIONED_DIR / meta.name(claim)
    if str(path) in set(taken):
        path = path.with_name(f"{meta.name(claim)}-{meta.uid(claim)[:8]}")
    return path


def provisioned_volume(claim: Obj, cls: Obj | None, path: pathlib.Path) -> Obj:
    """The PersistentVolume vclite's provisioner makes for `claim` (named `pvc-<claim uid>` as every external
    provisioner names them): a hostPath directory, the claim's request and access modes, pre-bound to it, with
    the class's reclaim policy (Delete without a class)."""
    spec = claim.get("spec") or {}
    storage = (((spec.get("resources") or {}).get("requests")) or {}).get("storage", "0")
    volume_spec: Obj = {
        "capacity": {"storage": storage},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "persistentVolumeReclaimPolicy": ((cls or {}).get("reclaimPolicy") or "Delete"),
        "storageClassName": claim_class(claim),
        "volumeMode": volume_mode(claim),
        "claimRef": claim_ref(claim),
        "hostPath": {"path": str(path), "type": "DirectoryOrCreate"},
    }
    if cls and cls.get("mountOptions"):
        volume_spec["mountOptions"] = list(cls["mountOptions"])
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": f"pvc-{meta.uid(claim)}", "annotations": {ANN_PROVISIONED_BY: PROVISIONER}},
            "spec": volume_spec}


def is_provisioned_here(volume: Obj) -> bool:
    """Whether vclite's provisioner made this volume (its directory is deleted with it under `Delete`)."""
    return meta.annotations(volume).get(ANN_PROVISIONED_BY) == PROVISIONER


def data_path(volume: Obj, root: pathlib.Path) -> tuple[pathlib.Path, str]:
    """Where a volume's data lives on this machine and the hostPath type that path is checked with:
    hostPath → its path and type; local → its path, which must be a directory that exists; any other source
    → `<root>/_pv/<volume>` (DirectoryOrCreate)."""
    spec = volume.get("spec") or {}
    host = spec.get("hostPath")
    if isinstance(host, dict) and host.get("path"):
        return pathlib.Path(host["path"]), host.get("type") or ""
    local = spec.get("local")
    if isinstance(local, dict) and local.get("path"):
        return pathlib.Path(local["path"]), "Directory"
    return root / UNATTACHABLE_DIR / meta.name(volume), "DirectoryOrCreate"
