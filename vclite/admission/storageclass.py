"""StorageClass (storage.k8s.io/v1) admission, as kube-apiserver's defaults and ValidateStorageClass(Update)
(pkg/apis/storage/validation) treat it.

- Defaults (every write, as decoding defaults): `reclaimPolicy` Delete, `volumeBindingMode` Immediate.
- Validation: `provisioner` required, a qualified name (checked lower-cased, as kube); `parameters` a map of
  strings with at most 512 entries, no empty key, 256 KiB at most in all; `reclaimPolicy` Delete|Retain;
  `volumeBindingMode` Immediate|WaitForFirstConsumer; `allowVolumeExpansion` a boolean, `mountOptions` strings;
  each `allowedTopologies` term has a requirement.
- Update: `provisioner`, `parameters` and `reclaimPolicy` may not change (`Forbidden: updates to provisioner
  are forbidden.`…), nor `volumeBindingMode` (`field is immutable`).
Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.admission import persistentvolume as pv
from vclite.api import storage
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
RECLAIM_POLICIES = ("Delete", "Retain")


def mutate(op: base.Operation, obj: Obj) -> None:
    if obj.get("reclaimPolicy") is None:
        obj["reclaimPolicy"] = "Delete"
    if obj.get("volumeBindingMode") is None:
        obj["volumeBindingMode"] = "Immediate"


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs: list[FieldError] = []
    provisioner = new.get("provisioner")
    if provisioner in (None, ""):
        errs.append(FieldError("provisioner", common.REQUIRED))
    elif not isinstance(provisioner, str):
        errs.append(FieldError("provisioner", common.type_error(provisioner, "string")))
    else:
        errs += [FieldError("provisioner", common.invalid(provisioner, m))
                 for m in common.qualified_name(provisioner.lower())]
    errs += _parameter_errors(new.get("parameters"))
    policy = new.get("reclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(FieldError("reclaimPolicy", common.unsupported(policy, RECLAIM_POLICIES)))
    mode = new.get("volumeBindingMode")
    if mode not in storage.BINDING_MODES:
        errs.append(FieldError("volumeBindingMode", common.unsupported(mode, storage.BINDING_MODES)))
    common.check_type(new, "allowVolumeExpansion", "allowVolumeExpansion", errs, bool, "boolean")
    pv.strings(new.get("mountOptions"), "mountOptions", errs)
    for at, term in common.objects_in(new.get("allowedTopologies"), "allowedTopologies", errs):
        if not term.get("matchLabelExpressions"):
            errs.append(FieldError(f"{at}.matchLabelExpressions",
                                   f"{common.REQUIRED}: must contain at least one requirement"))
    if op is base.Operation.UPDATE and isinstance(old, dict):
        errs += _update_errors(new, old)
    return errs


def _parameter_errors(params: Any) -> list[FieldError]:
    if params is None:
        return []
    if not isinstance(params, dict):
        return [FieldError("parameters", common.type_error(params, "object"))]
    if len(params) > MAX_PARAMETERS:
        return [FieldError("parameters", f"Too long: may not be more than {MAX_PARAMETERS} bytes")]
    errs: list[FieldError] = []
    size = 0
    for key, value in params.items():
        if not isinstance(value, str):
            errs.append(FieldError(f"parameters[{key}]", common.type_error(value, "string")))
            continue
        if key == "":
            errs.append(FieldError("parameters", common.invalid(key, "field can not be empty.")))
        size += len(str(key)) + len(value)
    if size > MAX_PARAMETERS_SIZE:
        errs.append(FieldError("parameters", f"Too long: may not be more than {MAX_PARAMETERS_SIZE} bytes"))
    return errs


def _update_errors(new: Obj, old: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        errs.append(FieldError("parameters", "Forbidden: updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errs.append(FieldError("provisioner", "Forbidden: updates to provisioner are forbidden."))
    if (new.get("reclaimPolicy") or "Delete") != (old.get("reclaimPolicy") or "Delete"):
        errs.append(FieldError("reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden."))
    if (new.get("volumeBindingMode") or "Immediate") != (old.get("volumeBindingMode") or "Immediate"):
        errs.append(FieldError("volumeBindingMode", common.invalid(new.get("volumeBindingMode"), pv.IMMUTABLE)))
    return errs
