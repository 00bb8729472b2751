"""PodDisruptionBudget admission (policy/v1), as kube-apiserver's defaulting, strategy and
ValidatePodDisruptionBudget treat it.

- Defaults: neither `minAvailable` nor `maxUnavailable` given → `minAvailable: 1`; a create's status
  is reset to the zero status (the disruption controller writes it), as the registry strategy does.
- Validation: `minAvailable` and `maxUnavailable` are not both set (one error, on `spec`); each is
  a non-negative integer or a percentage (`[0-9]+%`) of at most 100%; `selector` is a label selector
  (matchLabels keys and values, matchExpressions operators with or without values);
  `unhealthyPodEvictionPolicy` IfHealthyBudget or AlwaysAllow. The spec may be updated (policy/v1).
- Status writes (`validate_status`, ValidatePodDisruptionBudgetStatusUpdate and what decoding refuses):
  the four counts and `observedGeneration` whole numbers, the counts not negative; `disruptedPods` a map
  of pod names to RFC 3339 times; `conditions` a list. The eviction API, the disruption controller and
  the scheduler's `pdb` plugin read them.
Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import disruption
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

PERCENT_MESSAGE = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  "
                   "or '93%', regex used for validation is '[0-9]+%')")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
ZERO_STATUS = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def mutate(op: base.Operation, obj: Obj) -> None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if isinstance(spec, dict) and spec.get("minAvailable") is None and spec.get("maxUnavailable") is None:
        spec.pop("minAvailable", None)
        spec.pop("maxUnavailable", None)
        spec["minAvailable"] = 1
    if op is base.Operation.CREATE:
        obj["status"] = dict(ZERO_STATUS)


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(FieldError("spec", common.invalid(
            {"minAvailable": spec["minAvailable"], "maxUnavailable": spec["maxUnavailable"]},
            "minAvailable and maxUnavailable cannot be both set")))
    for key in ("minAvailable", "maxUnavailable"):
        errs += int_or_percent(spec.get(key), f"spec.{key}")
    if spec.get("selector") is not None:
        errs += label_selector(spec["selector"], "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in disruption.UNHEALTHY_POLICIES:
        errs.append(FieldError("spec.unhealthyPodEvictionPolicy",
                               common.unsupported(policy, disruption.UNHEALTHY_POLICIES)))
    return errs


def validate_status(status: Any) -> list[FieldError]:
    """Problems of a budget's `status` (a status write, or a dry-run state's budget as written)."""
    if not isinstance(status, dict):
        return []   # (admit refuses a status that is no object)
    errs: list[FieldError] = []
    for key in COUNTS:
        value = common.check_int(status, key, f"status.{key}", errs)
        if value is not None and value < 0:   # (ValidateNonnegativeField's words)
            errs.append(FieldError(f"status.{key}", common.invalid(value, "must be greater than or equal to 0")))
    common.check_int(status, "observedGeneration", "status.observedGeneration", errs)
    disrupted = status.get("disruptedPods")
    if disrupted is not None and not isinstance(disrupted, dict):
        errs.append(FieldError("status.disruptedPods", common.type_error(disrupted, "object")))
    for pod, when in (disrupted or {}).items() if isinstance(disrupted, dict) else ():
        try:
            ok = isinstance(when, str) and clock_mod.parse_time(when) is not None
        except ValueError:
            ok = False
        if not ok:
            errs.append(FieldError(f"status.disruptedPods.{pod}", common.invalid(when, "not an RFC 3339 time")))
    common.check_type(status, "conditions", "status.conditions", errs, list, "array")
    return errs


def int_or_percent(value: Any, path: str) -> list[FieldError]:
    """ValidateNonnegativeIntOrPercent, then IsNotMoreThan100Percent."""
    if value is None:
        return []
    if common.is_int(value):
        if value < 0:
            return [FieldError(path, common.invalid(value, "must be greater than or equal to 0"))]
        return []
    if isinstance(value, str):
        if not disruption.is_percent(value):
            return [FieldError(path, common.invalid(value, PERCENT_MESSAGE))]
        if int(value[:-1]) > 100:
            return [FieldError(path, common.invalid(value, "must not be greater than 100%"))]
        return []
    return [FieldError(path, common.invalid(value, "must be an integer or percentage (e.g '5%')"))]


def label_selector(selector: Any, path: str) -> list[FieldError]:
    """metav1 ValidateLabelSelector: matchLabels as labels, each matchExpression's key, operator
    and values."""
    if not isinstance(selector, dict):
        return [FieldError(path, common.type_error(selector, "object"))]
    errs: list[FieldError] = []
    labels = selector.get("matchLabels")
    if labels is not None and not isinstance(labels, dict):
        errs.append(FieldError(f"{path}.matchLabels", common.type_error(labels, "object")))
    elif labels:
        for k, v in labels.items():
            errs += [FieldError(f"{path}.matchLabels", common.invalid(k, m)) for m in common.qualified_name(str(k))]
            if not isinstance(v, str):
                errs.append(FieldError(f"{path}.matchLabels.{k}", common.type_error(v, "string")))
            else:
                errs += [FieldError(f"{path}.matchLabels", common.invalid(v, m)) for m in common.label_value(v)]
    exprs = selector.get("matchExpressions")
    if exprs is not None and not isinstance(exprs, list):
        return errs + [FieldError(f"{path}.matchExpressions", common.type_error(exprs, "array"))]
    for i, expr in enumerate(exprs or ()):
        errs += _requirement(expr, f"{path}.matchExpressions[{i}]")
    return errs


def _requirement(expr: Any, path: str) -> list[FieldError]:
    if not isinstance(expr, dict):
        return [FieldError(path, common.type_error(expr, "object"))]
    errs: list[FieldError] = []
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values")
    if not isinstance(key, str):
        errs.append(FieldError(f"{path}.key", common.REQUIRED if key is None else common.type_error(key, "string")))
    else:
        errs += [FieldError(f"{path}.key", common.invalid(key, m)) for m in common.qualified_name(key)]
    if values is not None and not (isinstance(values, list) and all(isinstance(v, str) for v in values)):
        return errs + [FieldError(f"{path}.values", common.type_error(values, "array of strings"))]
    set_errors = common.set_operator_errors(op, values, path)
    errs += set_errors if set_errors is not None else [FieldError(f"{path}.operator",
                                                                  common.unsupported(op, OPERATORS))]
    for j, v in enumerate(values or ()):
        errs += [FieldError(f"{path}.values[{j}]", common.invalid(v, m)) for m in common.label_value(v)]
    return errs
