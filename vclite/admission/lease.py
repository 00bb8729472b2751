"""Lease admission (coordination.k8s.io/v1): what Kubernetes' Lease validation checks.

`spec.holderIdentity` and `spec.preferredHolder` are strings, `spec.strategy` one of the known
coordinated-election strategies, `spec.leaseDurationSeconds` an integer above 0,
`spec.leaseTransitions` an integer not below 0, `spec.acquireTime` / `spec.renewTime` RFC 3339
times (metav1.MicroTime); a preferredHolder needs a strategy. Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
STRATEGIES = ("OldestEmulationVersion",)


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if spec is None:
        return []
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    for key in ("holderIdentity", "preferredHolder", "strategy"):
        common.check_type(spec, key, f"spec.{key}", errs, str, "string")
    duration = common.check_type(spec, "leaseDurationSeconds", "spec.leaseDurationSeconds", errs, int, "integer")
    if duration is not None and duration <= 0:
        errs.append(FieldError("spec.leaseDurationSeconds", f"Invalid value: {duration}: must be greater than 0"))
    transitions = common.check_type(spec, "leaseTransitions", "spec.leaseTransitions", errs, int, "integer")
    if transitions is not None and transitions < 0:
        errs.append(FieldError("spec.leaseTransitions",
                               f"Invalid value: {transitions}: must be greater than or equal to 0"))
    for key in ("acquireTime", "renewTime"):
        value = common.check_type(spec, key, f"spec.{key}", errs, str, "string")
        if value:
            try:
                clock_mod.parse_time(value)
            except ValueError:
                errs.append(FieldError(f"spec.{key}", f"Invalid value: {value!r}: not an RFC 3339 time"))
    strategy = spec.get("strategy")
    if isinstance(strategy, str) and strategy and strategy not in STRATEGIES:
        errs.append(FieldError("spec.strategy", common.unsupported(strategy, STRATEGIES)))
    if isinstance(spec.get("preferredHolder"), str) and spec["preferredHolder"] and not strategy:
        errs.append(FieldError("spec.preferredHolder", "Forbidden: may only be specified if `strategy` is defined"))
    return errs
