"""Admission for PriorityClasses (scheduling.k8s.io): `value` is a required integer, at most
1000000000 for user-defined classes, as Kubernetes' ValidatePriorityClass words it. Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import meta
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

HIGHEST_USER_DEFINABLE = 1_000_000_000
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def mutate(op: base.Operation, obj: Obj) -> None:
    """PriorityClasses get no defaults from admission."""


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs: list[FieldError] = []
    value = new.get("value")
    if value is None:
        errs.append(FieldError("value", common.REQUIRED))
    elif not common.is_int(value):
        errs.append(FieldError("value", common.type_error(value, "integer")))
    elif value > HIGHEST_USER_DEFINABLE and not meta.name(new).startswith("system-"):
        errs.append(FieldError("value", f"Forbidden: maximum allowed value of a user defined priority is "
                                        f"{HIGHEST_USER_DEFINABLE}"))
    common.check_type(new, "globalDefault", "globalDefault", errs, bool, "boolean")
    policy = new.get("preemptionPolicy")
    if policy not in (None, "") and policy not in _PREEMPTION_POLICIES:
        errs.append(FieldError("preemptionPolicy", common.unsupported(policy, _PREEMPTION_POLICIES)))
    return errs
