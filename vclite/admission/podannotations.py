"""The annotations kube-apiserver reads on a Pod (ValidatePodSpecificAnnotations and
ValidatePodSpecificAnnotationUpdates):

- `controller.kubernetes.io/pod-deletion-cost` must be a 32-bit integer written plainly (no `+`, no leading
  zero): `must be a 32bit integer`;
- the mirror-pod annotation `kubernetes.io/config.mirror` needs `spec.nodeName`, and an update may not add,
  change or remove it, nor AppArmor's container annotations (`container.apparmor.security.beta.kubernetes.io/…`).
Field paths `metadata.annotations[<key>]`, messages as kube-apiserver's. Pure.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.admission import common
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_PLAIN_INT = re.compile(r"-?(0|[1-9][0-9]*)")


def _at(key: str) -> str:
    return f"metadata.annotations[{key}]"


def errors_of(annotations: Any, spec: Any) -> list[FieldError]:
    """The problems of a pod's annotations, at its create or update."""
    if not isinstance(annotations, dict):
        return []
    errs: list[FieldError] = []
    if MIRROR_ANNOTATION in annotations and not (isinstance(spec, dict) and spec.get("nodeName")):
        errs.append(FieldError(_at(MIRROR_ANNOTATION), common.invalid(
            annotations[MIRROR_ANNOTATION], "must set spec.nodeName if mirror pod annotation is set")))
    cost = annotations.get(DELETION_COST)
    if cost is not None and not _is_int32(cost):
        errs.append(FieldError(_at(DELETION_COST), common.invalid(cost, "must be a 32bit integer")))
    return errs


def _is_int32(value: Any) -> bool:
    """GetDeletionCostFromPodAnnotations: a first digit other than `+` or a leading 0, then strconv.ParseInt(32)."""
    return isinstance(value, str) and bool(_PLAIN_INT.fullmatch(value)) and -2**31 <= int(value) < 2**31


def update_errors(new: Obj, old: Obj) -> list[FieldError]:
    """ValidatePodSpecificAnnotationUpdates: the mirror-pod and AppArmor annotations stay as they were."""
    now = _annotations(new)
    before = _annotations(old)
    errs: list[FieldError] = []
    for key, value in before.items():
        if key in now and now[key] == value:
            continue
        if key.startswith(APPARMOR_PREFIX):
            errs.append(FieldError(_at(key), "Forbidden: may not remove or update AppArmor annotations"))
        if key == MIRROR_ANNOTATION:
            errs.append(FieldError(_at(key), "Forbidden: may not remove or update mirror pod annotation"))
    for key in now:
        if key in before:
            continue
        if key.startswith(APPARMOR_PREFIX):
            errs.append(FieldError(_at(key), "Forbidden: may not add AppArmor annotations"))
        if key == MIRROR_ANNOTATION:
            errs.append(FieldError(_at(key), "Forbidden: may not add mirror pod annotation"))
    return errs


def _annotations(obj: Obj) -> dict:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return md.get("annotations") if isinstance(md.get("annotations"), dict) else {}
