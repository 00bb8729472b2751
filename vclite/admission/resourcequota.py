"""ResourceQuota (v1): its validation.

`validate`: `spec.hard` maps quota resource names (api/quota.py: the standard ones, hugepages, or a
qualified name such as `count/pods` or `requests.nvidia.com/gpu`) to quantities that are not negative
(whole for object counts and extended resources), as kube's ValidateResourceQuota words it. Scopes
(`spec.scopes`, `spec.scopeSelector`) are refused: vclite does not evaluate them, and a quota that
silently counted everything would refuse what a cluster admits.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import quantity
from vclite.api import quota as quota_mod
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError


def mutate(op: base.Operation, obj: Obj) -> None:
    """ResourceQuotas get no defaults."""


def hard_errors(hard: Any, path: str) -> list[FieldError]:
    """Problems of a ResourceList of quota names and quantities (`spec.hard`, `status.used`)."""
    if hard is None:
        return []
    if not isinstance(hard, dict):
        return [FieldError(path, common.type_error(hard, "object"))]
    errs: list[FieldError] = []
    for name, value in hard.items():
        where = f"{path}[{name}]"
        name = str(name)
        why = quota_mod.name_problem(name)
        if why is None and "/" in name:
            why = next(iter(common.qualified_name(name)), None)
        if why is not None:
            errs.append(FieldError(where, common.invalid(name, why)))
            continue
        try:
            q = quantity.parse(value)
        except ValueError as e:
            errs.append(FieldError(where, str(e)))
            continue
        if q < 0:
            errs.append(FieldError(where, common.invalid(value, "must be greater than or equal to 0")))
        elif quota_mod.is_integer(name) and q.denominator != 1:
            errs.append(FieldError(where, common.invalid(value, "must be an integer")))
    return errs


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if spec is None:
        return []
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs = hard_errors(spec.get("hard"), "spec.hard")
    for key in ("scopes", "scopeSelector"):
        if spec.get(key):
            errs.append(FieldError(f"spec.{key}", "Forbidden: quota scopes are not supported by vclite "
                                                  "(a quota here counts every object of its namespace)"))
    return errs
