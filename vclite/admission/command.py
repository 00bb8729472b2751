"""Admission for bus.volcano.sh Commands: the shape Volcano's CRD schema enforces, nothing more.

Volcano has no webhook for Commands; the apiserver checks them against the CRD's schema: `action`,
`reason` and `message` are strings, and `target` (an OwnerReference) is an object that carries
`apiVersion`, `kind`, `name` and `uid` (strings), with boolean `controller` / `blockOwnerDeletion`.
What a command means is the controllers' business (controllers/job, controllers/queue): one whose
target is not theirs is left alone. Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
REFERENCE_STRINGS = ("apiVersion", "kind", "name", "uid")
REFERENCE_BOOLEANS = ("controller", "blockOwnerDeletion")


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("action", "reason", "message"):
        common.check_type(new, key, key, errs, str, "string")
    target = new.get("target")
    if target is None:
        return errs
    if not isinstance(target, dict):
        return errs + [FieldError("target", common.type_error(target, "object"))]
    for key in REFERENCE_STRINGS:
        if key not in target:
            errs.append(FieldError(f"target.{key}", common.REQUIRED))
        else:
            common.check_type(target, key, f"target.{key}", errs, str, "string")
    for key in REFERENCE_BOOLEANS:
        common.check_type(target, key, f"target.{key}", errs, bool, "boolean")
    return errs
