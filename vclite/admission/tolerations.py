"""A pod spec's `tolerations`, checked as Kubernetes' ValidateTolerations checks them (a Pod's, and a vcjob
task's template, which Volcano's webhook checks with ValidatePodTemplate):

- a `key`, when given, is a qualified name (`example.com/gpu`); without one the `operator` must be `Exists`
  (a toleration of every taint);
- `operator` is `Equal` (or empty: the same), whose `value` is a label value, or `Exists`, without a value;
- `effect`, when given, is `NoSchedule`, `PreferNoSchedule` or `NoExecute`, and must be `NoExecute` when
  `tolerationSeconds` is set.
Messages and field paths as kube-apiserver's (it names the `operator` field for a bad value too); the value
of an `Exists` toleration with a value is shown as JSON where kube prints the Go struct. Mistyped fields are
the shape check's (shapes.py). Pure.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import common
from vclite.lib import errors

FieldError = errors.FieldError
OPERATORS = ("Equal", "Exists")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NO_EXECUTE = "NoExecute"


def errors_of(tolerations: Any, path: str) -> list[FieldError]:
    """Every problem of a `tolerations` list at `path` (`spec.tolerations`)."""
    if not isinstance(tolerations, list):
        return []
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        if isinstance(t, dict):
            errs += _one(t, f"{path}[{i}]")
    return errs


def _text(t: dict, key: str) -> str | None:
    value = t.get(key)
    return value if isinstance(value, str) else "" if value is None else None


def _one(t: dict, at: str) -> list[FieldError]:
    key, operator, value, effect = (_text(t, k) for k in ("key", "operator", "value", "effect"))
    if None in (key, operator, value, effect):
        return []   # (a field of another type: the shape check's error)
    errs: list[FieldError] = []
    if key:
        errs += [FieldError(f"{at}.key", common.invalid(key, m)) for m in common.qualified_name(key)]
    if not key and operator != "Exists":
        errs.append(FieldError(f"{at}.operator", common.invalid(
            operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"')))
    if t.get("tolerationSeconds") is not None and effect != NO_EXECUTE:
        errs.append(FieldError(f"{at}.effect", common.invalid(
            effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")))
    if operator in ("", "Equal"):
        problems = common.label_value(value)
        if problems:
            errs.append(FieldError(f"{at}.operator", common.invalid(value, ";".join(problems))))
    elif operator == "Exists":
        if value:
            errs.append(FieldError(f"{at}.operator", common.invalid(t, "value must be empty when `operator` is "
                                                                       "'Exists'")))
    else:
        errs.append(FieldError(f"{at}.operator", common.unsupported(operator, OPERATORS)))
    if effect and effect not in EFFECTS:
        errs.append(FieldError(f"{at}.effect", common.unsupported(effect, EFFECTS)))
    return errs
