"""PersistentVolumeClaim (v1) admission, as kube-apiserver's defaults, admission plugins, registry strategy
and ValidatePersistentVolumeClaim(Update) (pkg/apis/core/validation) treat it.

- Defaults (every write, as decoding defaults): `spec.volumeMode` Filesystem.
- `resolve`, at create (not for a cluster's existing state, already admitted there): the status is reset to
  `phase: Pending` (the strategy's PrepareForCreate; the volume controller binds the claim); the
  DefaultStorageClass plugin gives a claim that names no class (`storageClassName` absent or null, no beta
  class annotation) the default StorageClass's name — the newest class annotated default, ties by name;
  none: the claim stays without — while `""` ("no class") stays; the StorageObjectInUseProtection plugin
  adds the `kubernetes.io/pvc-protection` finalizer.
- Validation: at least one access mode (`at least 1 access mode is required`), each known, ReadWriteOncePod
  alone; `spec.selector` a label selector; `spec.resources[storage]` required, a quantity greater than zero;
  a class name a DNS subdomain; volumeMode Block|Filesystem; a dataSource/dataSourceRef names a kind and a
  name (a kind of the core group must be PersistentVolumeClaim).
- Update: the spec is immutable except that an empty `volumeName` may be set (the binder), a class may be set
  once where none was, and a Bound claim's `resources.requests` and `volumeAttributesClassName` may change
  (`spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName
  for bound claims`); a smaller request may not go down to `status.capacity` (kube 1.32+, where recovering from
  a failed expansion is on: `spec.resources.requests.storage: Forbidden: field can not be less than
  status.capacity`); `volumeMode` is immutable (kube's path `volumeMode`). The PersistentVolumeClaimResize plugin
  lets a request grow only where the claim's class is a StorageClass with `allowVolumeExpansion: true`
  (`persistentvolumeclaims "x" is forbidden: only dynamically provisioned pvc can be resized and the
  storageclass that provisions the pvc must support resize`).
Pure over the View.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, pdb
from vclite.admission import persistentvolume as pv
from vclite.api import kinds, meta, quantity, storage
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
IMMUTABLE_SPEC = ("spec is immutable after creation except resources.requests and volumeAttributesClassName "
                  "for bound claims")


def mutate(op: base.Operation, obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"


def resolve(op: base.Operation, obj: Obj, old: Obj | None, view: base.View) -> None:
    if getattr(view, "existing_state", False):
        return
    if op is base.Operation.UPDATE and isinstance(old, dict):
        refusal = resize_refusal(obj, old, view)
        if refusal:
            raise errors.Forbidden(f'persistentvolumeclaims "{meta.name(obj)}" is forbidden: {refusal}')
        return
    if op is not base.Operation.CREATE:
        return
    obj["status"] = {"phase": storage.CLAIM_PENDING}
    spec = obj["spec"]
    if spec.get("storageClassName") is None and BETA_CLASS not in meta.annotations(obj):
        default = default_class(view.list(kinds.STORAGECLASS))
        if default is not None:
            spec["storageClassName"] = meta.name(default)
    pv.add_finalizer(obj, storage.PVC_PROTECTION)


RESIZE_REFUSED = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc "
                  "must support resize")


def resize_refusal(new: Obj, old: Obj, view: base.View) -> str:
    """kube's PersistentVolumeClaimResize plugin: a claim's request may grow only when its class (the same before
    and after, not "") is a StorageClass with `allowVolumeExpansion: true`; "" when it may (or does not grow)."""
    old_size, new_size = _requested(old.get("spec") or {}), _requested(new.get("spec") or {})
    if old_size is None or new_size is None or new_size <= old_size:
        return ""
    if (old.get("status") or {}).get("phase") != storage.CLAIM_BOUND:
        return "Only bound persistent volume claims can be expanded"
    name = storage.claim_class(new)
    if not name or name != storage.claim_class(old):
        return RESIZE_REFUSED
    cls = next((c for c in view.list(kinds.STORAGECLASS) if meta.name(c) == name), None)
    return "" if cls is not None and cls.get("allowVolumeExpansion") is True else RESIZE_REFUSED


def default_class(classes: list[Obj]) -> Obj | None:
    """kube's GetDefaultClass: of the classes annotated default, the newest (ties by name); None without."""
    defaults = [c for c in classes if storage.is_default_class(c)]
    defaults.sort(key=meta.name)
    defaults.sort(key=lambda c: str((c.get("metadata") or {}).get("creationTimestamp") or ""), reverse=True)
    return defaults[0] if defaults else None


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs = spec_errors(spec, "spec")
    if op is base.Operation.UPDATE and isinstance(old, dict) and isinstance(old.get("spec"), dict):
        errs += _update_errors(new, old)
    return errs


def spec_errors(spec: Obj, path: str) -> list[FieldError]:
    """ValidatePersistentVolumeClaimSpec (a vcjob's `volumes[].volumeClaim` is one too)."""
    errs: list[FieldError] = []
    raw = spec.get("accessModes")
    modes = pv.strings(raw, f"{path}.accessModes", errs)
    if raw is None or isinstance(raw, list):
        errs += pv.access_mode_errors(modes, f"{path}.accessModes", "at least 1 access mode is required")
    if spec.get("selector") is not None:
        errs += pdb.label_selector(spec["selector"], f"{path}.selector")
    errs += _storage_errors(spec.get("resources"), path)
    errs += pv.class_name_errors(spec, "storageClassName", f"{path}.storageClassName")
    errs += pv.volume_mode_errors(spec, f"{path}.volumeMode")
    for key in ("volumeName", "volumeAttributesClassName"):
        common.check_type(spec, key, f"{path}.{key}", errs, str, "string")
    errs += pv.class_name_errors(spec, "volumeAttributesClassName", f"{path}.volumeAttributesClassName")
    for key in ("dataSource", "dataSourceRef"):
        errs += _data_source_errors(spec.get(key), f"{path}.{key}")
    return errs


def _storage_errors(resources: Any, path: str) -> list[FieldError]:
    where = f"{path}.resources[storage]"
    if resources is not None and not isinstance(resources, dict):
        return [FieldError(f"{path}.resources", common.type_error(resources, "object"))]
    requests = (resources or {}).get("requests")
    if requests is not None and not isinstance(requests, dict):
        return [FieldError(f"{path}.resources.requests", common.type_error(requests, "object"))]
    if (requests or {}).get("storage") is None:
        return [FieldError(where, common.REQUIRED)]
    found, _ = pv.positive_quantity(requests["storage"], where)
    return found


def _data_source_errors(ref: Any, path: str) -> list[FieldError]:
    if ref is None:
        return []
    if not isinstance(ref, dict):
        return [FieldError(path, common.type_error(ref, "object"))]
    errs = [FieldError(f"{path}.{k}", common.REQUIRED) for k in ("name", "kind") if not ref.get(k)]
    if not ref.get("apiGroup") and ref.get("kind") != "PersistentVolumeClaim":
        errs.append(FieldError(path, common.invalid(ref.get("kind") or "",
                                                    "must be 'PersistentVolumeClaim' when referencing the default "
                                                    "apiGroup")))
    return errs


def _comparable(spec: Obj) -> Obj:
    out = pv.normal(spec)
    res = out.get("resources")
    if isinstance(res, dict):
        out["resources"] = {k: pv.quantities(v) for k, v in res.items()}
    return out


def _requested(spec: Obj) -> quantity.Fraction | None:
    raw = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return quantity.parse(raw) if raw is not None else None
    except ValueError:
        return None


def _update_errors(new: Obj, old: Obj) -> list[FieldError]:
    """ValidatePersistentVolumeClaimUpdate's spec rules."""
    new_spec, old_spec = dict(new["spec"]), dict(old["spec"])
    errs: list[FieldError] = []
    if not old_spec.get("volumeName"):   # (the binder sets it once)
        old_spec["volumeName"] = new_spec.get("volumeName")
    old_ann, new_ann = meta.annotations(old), meta.annotations(new)
    old_class, new_class = old_spec.get("storageClassName"), new_spec.get("storageClassName")
    if (BETA_CLASS in old_ann and old_class is None and new_class == old_ann[BETA_CLASS]
            and new_ann.get(BETA_CLASS, old_ann[BETA_CLASS]) == old_ann[BETA_CLASS]):
        new_spec["storageClassName"] = None   # (the beta annotation's class written in the spec)
    else:
        if new_ann.get(BETA_CLASS, "") != old_ann.get(BETA_CLASS, ""):
            errs.append(FieldError(f"metadata.annotations.{BETA_CLASS}",
                                   common.invalid(new_ann.get(BETA_CLASS, ""), pv.IMMUTABLE)))
        if (old_class is None and new_class is not None
                and (BETA_CLASS not in old_ann or new_class == old_ann[BETA_CLASS])):
            new_spec["storageClassName"] = None   # (a class set once where none was)
    bound = (new.get("status") or {}).get("phase") == storage.CLAIM_BOUND
    if bound:
        for key in ("volumeAttributesClassName",):
            new_spec[key] = old_spec.get(key)
        if isinstance(new_spec.get("resources"), dict) and new_spec["resources"].get("requests") is not None:
            old_storage = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
            requests = {**new_spec["resources"]["requests"], "storage": old_storage}
            new_spec["resources"] = {**new_spec["resources"], "requests": requests}
    before, after = _comparable(old_spec), _comparable(new_spec)
    if before != after:
        errs.append(FieldError("spec", f"Forbidden: {IMMUTABLE_SPEC}\n" + pv.diff(before, after, "")))
    old_size, new_size = _requested(old["spec"]), _requested(new["spec"])
    if old_size is not None and new_size is not None and new_size < old_size:
        capacity = storage.requested_storage({"spec": {"resources": {"requests": (old.get("status") or {}).get(
            "capacity") or {}}}})
        if new_size <= capacity:
            errs.append(FieldError("spec.resources.requests.storage",
                                   "Forbidden: field can not be less than status.capacity"))
    if (new["spec"].get("volumeMode") or "Filesystem") != (old["spec"].get("volumeMode") or "Filesystem"):
        errs.append(FieldError("volumeMode", common.invalid(new["spec"].get("volumeMode"), pv.IMMUTABLE)))
    return errs
