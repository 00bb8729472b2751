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

import dataclasses
import enum
import os
import pathlib
from fractions import Fraction
from typing import Any, Iterable, Mapping

from vclite.api import disruption
from vclite.api import meta
from vclite.api import quantity
from vclite.lib import jsoncopy

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


# ---- the volume controller's decisions (controllers/volume.py: kube's PV controller, pvc-/pv-protection) ----
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"   # (the scheduler's pick for a delayed claim)
NO_PROVISIONER = "kubernetes.io/no-provisioner"            # a class of static volumes only: nothing provisions
PV_CONTROLLER = "persistentvolume-controller"              # the source of the PV controller's Events
POD_DONE = ("Succeeded", "Failed")

Event = tuple[str, str, str]   # (type, reason, message)


class ClaimStep(enum.Enum):
    """What syncing a claim does (kube's syncUnboundClaim / syncBoundClaim)."""
    BIND = "bind"             # bind the claim and `volume` (both sides; a no-op when both already say so)
    PROVISION = "provision"   # vclite's provisioner makes a volume for it, then binds it
    PENDING = "pending"       # status Pending (and `event`, once per reason)
    LOST = "lost"             # status Lost, `event` with the change of phase
    INVALID = "invalid"       # a binding the controller made and that cannot be (kube: an error, retried)
    NOTHING = "nothing"       # (being deleted before it was bound: not bound now)


class VolumeStep(enum.Enum):
    """What syncing a volume does (kube's syncVolume)."""
    AVAILABLE = "available"   # no claim, or pre-bound to one not bound yet: phase Available
    BOUND = "bound"           # both sides agree: phase Bound
    RELEASE = "release"       # its claim is gone: phase Released, then its reclaim policy
    SYNC_CLAIM = "sync-claim"  # the claim has not finished binding: its own sync does it
    UNBIND = "unbind"         # the claim is bound elsewhere: undo the controller's binding (a user's stays pre-bound)


class Reclaim(enum.Enum):
    RETAIN = "retain"         # stays Released, data kept
    DELETE = "delete"         # the volume deleted (its directory too when vclite provisioned it)
    RECYCLE = "recycle"       # its directory emptied, the volume Available again
    FAIL = "fail"             # cannot be done here: phase Failed with a Warning


@dataclasses.dataclass(frozen=True)
class ClaimDecision:
    step: ClaimStep
    volume: Obj | None = None
    event: Event | None = None    # PENDING/LOST: the Event; PROVISION: a Normal note (a class not found here)


def is_bind_completed(claim: Obj) -> bool:
    return ANN_BIND_COMPLETED in meta.annotations(claim)


def delays_binding(claim: Obj, cls: Obj | None, has_consumer: bool) -> bool:
    """Whether binding waits for a pod (volumeBindingMode WaitForFirstConsumer): until a pod naming the claim
    exists (vclite's stand-in for the scheduler's pick, which it also takes: the selected-node annotation)."""
    return bool(cls) and cls.get("volumeBindingMode") == "WaitForFirstConsumer" and not has_consumer \
        and ANN_SELECTED_NODE not in meta.annotations(claim)


def mismatch(volume: Obj, claim: Obj) -> str:
    """Why the volume a claim names in spec.volumeName cannot be bound to it (kube's checkVolumeSatisfyClaim);
    "" when it can."""
    if meta.is_deleting(volume):
        return f'the volume is marked for deletion "{meta.name(volume)}"'
    if volume_capacity(volume) < requested_storage(claim):
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if volume_mode(volume) != volume_mode(claim):
        return "incompatible volumeMode"
    if not set((claim.get("spec") or {}).get("accessModes") or ()) <= set((volume.get("spec") or {}).get("accessModes") or ()):
        return "incompatible accessMode"
    return ""


def _provisioning(claim: Obj, cls: Obj | None) -> ClaimDecision:
    """A claim with a class and no volume: vclite's provisioner makes one, whatever the class names (the note
    says when the class is not here or names another provisioner), except for a class of static volumes or a
    block volume."""
    name = claim_class(claim)
    provisioner = (cls or {}).get("provisioner") or PROVISIONER
    if provisioner == NO_PROVISIONER:
        return ClaimDecision(ClaimStep.PENDING, event=("Normal", "ExternalProvisioning", (
            f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually "
            "by the system administrator. If volume creation is delayed, please verify that the provisioner is "
            "running and correctly registered.")))
    if volume_mode(claim) == "Block":
        return ClaimDecision(ClaimStep.PENDING, event=("Warning", "ProvisioningFailed", (
            f"{PROVISIONER} does not support block volume provisioning (vclite has no block devices)")))
    note: Event | None = None
    if cls is None:
        note = ("Normal", "StorageClassNotFound", (
            f'storageclass.storage.k8s.io "{name}" not found: {PROVISIONER} provisions the claim '
            "(a directory on this machine), as for a class of its own"))
    elif provisioner != PROVISIONER:
        note = ("Normal", "ProvisionerNotFound", (
            f'the provisioner "{provisioner}" of storage class "{name}" does not run here: {PROVISIONER} '
            "provisions the claim (a directory on this machine)"))
    return ClaimDecision(ClaimStep.PROVISION, event=note)


def decide_claim(claim: Obj, volumes: Mapping[str, Obj], cls: Obj | None, has_consumer: bool = False) -> ClaimDecision:
    """What the PV controller does with `claim`, given every volume by name and the claim's StorageClass
    (None when there is none of that name); `has_consumer`: a pod that has not finished names the claim."""
    name = (claim.get("spec") or {}).get("volumeName") or ""
    if not is_bind_completed(claim):
        if meta.is_deleting(claim):
            return ClaimDecision(ClaimStep.NOTHING)
        if not name:
            delay = delays_binding(claim, cls, has_consumer)
            candidates = [v for v in volumes.values() if not delay or (v.get("spec") or {}).get("claimRef")]
            volume = best_volume(candidates, claim)
            if volume is not None:
                return ClaimDecision(ClaimStep.BIND, volume)
            if delay:
                return ClaimDecision(ClaimStep.PENDING, event=(
                    "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding"))
            if not claim_class(claim):
                return ClaimDecision(ClaimStep.PENDING, event=(
                    "Normal", "FailedBinding", "no persistent volumes available for this claim and no storage class is set"))
            return _provisioning(claim, cls)
        volume = volumes.get(name)
        if volume is None:
            return ClaimDecision(ClaimStep.PENDING)   # (kube: will try again when it appears)
        if not (volume.get("spec") or {}).get("claimRef"):
            why = mismatch(volume, claim)
            if why:
                return ClaimDecision(ClaimStep.PENDING, event=(
                    "Warning", "VolumeMismatch", f'Cannot bind to requested volume "{name}": {why}'))
            return ClaimDecision(ClaimStep.BIND, volume)
        if refers_to(volume, claim):
            return ClaimDecision(ClaimStep.BIND, volume)
        if ANN_BOUND_BY_CONTROLLER in meta.annotations(claim):
            return ClaimDecision(ClaimStep.INVALID, volume)
        return ClaimDecision(ClaimStep.PENDING, event=(   # (bound to another claim by a user: retried when it changes)
            "Warning", "FailedBinding", f'volume "{name}" already bound to a different claim.'))
    if not name:
        return ClaimDecision(ClaimStep.LOST, event=(
            "Warning", "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"))
    volume = volumes.get(name)
    if volume is None:
        return ClaimDecision(ClaimStep.LOST, event=(
            "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!"))
    ref = (volume.get("spec") or {}).get("claimRef")
    if not ref or ref.get("uid") == meta.uid(claim):
        return ClaimDecision(ClaimStep.BIND, volume)
    return ClaimDecision(ClaimStep.LOST, event=(
        "Warning", "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly"))


def decide_volume(volume: Obj, claim: Obj | None) -> VolumeStep:
    """What the PV controller does with `volume`, given the claim its claimRef names (None when missing)."""
    ref = (volume.get("spec") or {}).get("claimRef")
    if not ref or not ref.get("uid"):
        return VolumeStep.AVAILABLE
    if claim is None or meta.uid(claim) != ref.get("uid"):
        return VolumeStep.RELEASE     # (a claim of that name made anew is another claim)
    bound_to = (claim.get("spec") or {}).get("volumeName") or ""
    if not bound_to:
        return VolumeStep.SYNC_CLAIM
    if bound_to == meta.name(volume):
        return VolumeStep.BOUND
    if is_provisioned_here(volume) and reclaim_policy(volume) == "Delete":
        return VolumeStep.RELEASE     # provisioned for a claim that got another volume: not needed
    return VolumeStep.UNBIND


def reclaim_policy(volume: Obj) -> str:
    return (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"   # (kube's default)


def removable(path: pathlib.PurePath, root: pathlib.Path) -> bool:
    """Whether the provisioner may remove or empty `path`: exactly `<root>/<namespace>/_pvc/<name>` or
    `<root>/_pv/<name>` (written without `.` or `..`), never anything else."""
    if not path.is_absolute() or pathlib.PurePath(os.path.normpath(path)) != path:
        return False
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return len(parts) == 3 and parts[1] == PROVISIONED_DIR or len(parts) == 2 and parts[0] == UNATTACHABLE_DIR


def reclaim(volume: Obj, root: pathlib.Path) -> tuple[Reclaim, pathlib.Path | None, str]:
    """What a Released volume's reclaim policy does here: (step, the directory to remove or empty, the
    Warning's message when it fails). Delete removes the directory only of a volume vclite provisioned;
    Recycle (kube's basic scrub) empties only a directory vclite's provisioner could have made."""
    policy = reclaim_policy(volume)
    path, _ = data_path(volume, root)
    if policy == "Delete":
        return Reclaim.DELETE, (path if is_provisioned_here(volume) and removable(path, root) else None), ""
    if policy == "Recycle":
        if removable(path, root):
            return Reclaim.RECYCLE, path, ""
        return Reclaim.FAIL, None, (f"vclite recycles only volumes under its work directory {root}: "
                                    f"{path} is left as it is")
    return Reclaim.RETAIN, None, ""


def bound_volume(volume: Obj, claim: Obj) -> Obj | None:
    """The volume bound to `claim` (kube's bindVolumeToClaim: claimRef, and bound-by-controller unless a user
    pre-bound it), or None when it says so already."""
    ref = (volume.get("spec") or {}).get("claimRef") or {}
    by_controller = not refers_to(volume, claim) and ANN_BOUND_BY_CONTROLLER not in meta.annotations(volume)
    same = (ref.get("name"), ref.get("namespace"), ref.get("uid")) == (meta.name(claim), meta.namespace(claim),
                                                                       meta.uid(claim))
    if same and not by_controller:
        return None
    new = jsoncopy.deep_copy(volume)
    if not same:
        new["spec"]["claimRef"] = {**claim_ref(claim), "resourceVersion": claim["metadata"].get("resourceVersion", "")}
    if by_controller:
        new["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
    return new


def bound_claim(claim: Obj, volume: Obj) -> Obj | None:
    """The claim bound to `volume` (kube's bindClaimToVolume: spec.volumeName, bind-completed, and
    bound-by-controller unless the user named the volume), or None when it says so already."""
    ann = meta.annotations(claim)
    named = (claim.get("spec") or {}).get("volumeName") == meta.name(volume)
    if named and ANN_BIND_COMPLETED in ann:
        return None
    new = jsoncopy.deep_copy(claim)
    annotations = new["metadata"].setdefault("annotations", {})
    if not named:
        new.setdefault("spec", {})["volumeName"] = meta.name(volume)
        annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    annotations.setdefault(ANN_BIND_COMPLETED, "yes")
    return new


def unbound_volume(volume: Obj) -> Obj:
    """kube's unbindVolume: a binding the controller made is undone; a user's pre-binding loses only its uid."""
    new = jsoncopy.deep_copy(volume)
    annotations = new["metadata"].get("annotations") or {}
    if ANN_BOUND_BY_CONTROLLER in annotations:
        new["spec"].pop("claimRef", None)
        annotations.pop(ANN_BOUND_BY_CONTROLLER)
        if not annotations:
            new["metadata"].pop("annotations", None)
    else:
        new["spec"]["claimRef"] = {k: v for k, v in new["spec"]["claimRef"].items() if k != "uid"}
    return new


def claim_status(claim: Obj, phase: str, volume: Obj | None) -> Obj:
    """The claim's status in `phase` (kube's updateClaimStatus): a bound volume's access modes and capacity,
    none without one; other fields as they are."""
    status = {k: v for k, v in (claim.get("status") or {}).items() if k not in ("accessModes", "capacity")}
    status["phase"] = phase
    if volume is not None:
        spec = volume.get("spec") or {}
        if spec.get("accessModes"):
            status["accessModes"] = list(spec["accessModes"])
        if spec.get("capacity"):
            status["capacity"] = dict(spec["capacity"])
    return status


def volume_status(volume: Obj, phase: str, message: str = "") -> Obj:
    status = {k: v for k, v in (volume.get("status") or {}).items() if k not in ("phase", "message")}
    status["phase"] = phase
    if message:
        status["message"] = message
    return status


def provisioner_annotated(claim: Obj, provisioner: str = PROVISIONER) -> Obj | None:
    """The claim with the annotations naming the provisioner that provisions it (set by kube's PV controller
    before an external provisioner acts), or None when it has them."""
    ann = meta.annotations(claim)
    if ann.get(ANN_STORAGE_PROVISIONER) == provisioner and ann.get(ANN_BETA_STORAGE_PROVISIONER) == provisioner:
        return None
    new = jsoncopy.deep_copy(claim)
    new["metadata"].setdefault("annotations", {}).update(
        {ANN_STORAGE_PROVISIONER: provisioner, ANN_BETA_STORAGE_PROVISIONER: provisioner})
    return new


def expanded_volume(volume: Obj, claim: Obj) -> Obj | None:
    """The volume grown to its Bound claim's larger request (what an external resizer does once admission let the
    request grow: kube's PersistentVolumeClaimResize), or None: it holds that much already, it is not bound to this
    claim, or vclite did not provision it (a directory has no size; a volume made by hand is not vclite's to
    resize). Only the capacity is written: a directory needs no file system resize on a node."""
    if not is_bind_completed(claim) or not refers_to(volume, claim) or not is_provisioned_here(volume):
        return None
    if requested_storage(claim) <= volume_capacity(volume):
        return None
    new = jsoncopy.deep_copy(volume)
    new["spec"]["capacity"] = {**(new["spec"].get("capacity") or {}),
                               "storage": claim["spec"]["resources"]["requests"]["storage"]}
    return new


def pod_names_claim(pod: Obj, claim_name: str) -> bool:
    """Whether a pod that has not finished names the claim (a consumer: a delayed binding proceeds)."""
    return (pod.get("status") or {}).get("phase") not in POD_DONE and \
        claim_name in claim_names(pod.get("spec") or {})


def pod_uses_claim(pod: Obj, claim_name: str) -> bool:
    """Whether the pod holds a deleted claim (pvc-protection): scheduled (kubelet sees only those, and
    starts none naming a claim being deleted) and not finished."""
    return bool((pod.get("spec") or {}).get("nodeName")) and pod_names_claim(pod, claim_name)


def protection_done(obj: Obj, finalizer: str, in_use: bool) -> Obj | None:
    """The object being deleted without its protection finalizer once nothing uses it; None: nothing to do."""
    finalizers = list((obj.get("metadata") or {}).get("finalizers") or ())
    if not meta.is_deleting(obj) or finalizer not in finalizers or in_use:
        return None
    new = jsoncopy.deep_copy(obj)
    new["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
    if not new["metadata"]["finalizers"]:
        new["metadata"].pop("finalizers")
    return new
