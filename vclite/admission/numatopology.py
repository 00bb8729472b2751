"""Admission for Numatopologies (nodeinfo.volcano.sh/v1alpha1): the CRD's schema, and what the scheduler
could not read.

The CRD (nodeinfo.volcano.sh_numatopologies.yaml) checks types only: `spec.policies` and
`spec.resReserved` string maps, `spec.numares.<resource>` objects of `allocatable` (string) and
`capacity` (integer), `spec.cpuDetail.<id>` objects of `numa`, `socket`, `core` (integers ≥ 0),
`spec.podAllocations` a list of objects (`uid`, `name`, `namespace` strings, `containerAllocations` a list of
`name` and an `allocations` string map). Volcano has no webhook for the kind, and its scheduler logs and
skips what it cannot parse — a cpuset that is not one (the set is then empty), a cpuDetail key that is not
an integer (read as CPU 0), a reservation of another resource than cpu, memory or ephemeral-storage or an
unparsable or negative quantity (the whole reservation is then dropped). vclite refuses those here, naming
the field (docs/differences.md). No defaults: nothing is mutated. Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import numatopo
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
RESERVABLE = ("cpu", "memory", "ephemeral-storage")   # Volcano's ParseResourceList
CPU_FIELDS = ("numa", "socket", "core")


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if spec is None:
        return []
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    _string_map(spec.get("policies"), "spec.policies", errs)
    for name, value in _string_map(spec.get("resReserved"), "spec.resReserved", errs).items():
        _reserved(name, value, f"spec.resReserved.{name}", errs)
    for name, res in _object_map(spec.get("numares"), "spec.numares", errs).items():
        path = f"spec.numares.{name}"
        text = common.check_type(res, "allocatable", f"{path}.allocatable", errs, str, "string")
        if text is not None:
            try:
                numatopo.parse_cpuset(text)
            except ValueError as e:
                errs.append(FieldError(f"{path}.allocatable", common.invalid(text, str(e))))
        common.check_int(res, "capacity", f"{path}.capacity", errs)
    for key, cpu in _object_map(spec.get("cpuDetail"), "spec.cpuDetail", errs).items():
        path = f"spec.cpuDetail.{key}"
        if numatopo.cpu_id(key) is None:
            errs.append(FieldError(path, common.invalid(key, "a CPU id must be a non-negative integer")))
        for name in CPU_FIELDS:
            common.check_int(cpu, name, f"{path}.{name}", errs, minimum=0)
    allocations = common.check_type(spec, "podAllocations", "spec.podAllocations", errs, list, "array")
    for i, pod in enumerate(allocations or ()):
        _pod_allocation(pod, f"spec.podAllocations[{i}]", errs)
    return errs


def _string_map(value: Any, path: str, errs: list[FieldError]) -> dict:
    """A map of strings (every other value an error)."""
    return _map_of(value, path, errs, str, "string", skip_null=False)


def _object_map(value: Any, path: str, errs: list[FieldError]) -> dict:
    """A map of objects (null values left out, as Go decodes them; other values an error)."""
    return _map_of(value, path, errs, dict, "object", skip_null=True)


def _map_of(value: Any, path: str, errs: list[FieldError], typ: type, type_name: str, skip_null: bool) -> dict:
    """The entries of the map `value` whose values are `typ`; an error at each other entry (and at `path`
    when `value` is no map)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.append(FieldError(path, common.type_error(value, "object")))
        return {}
    out = {}
    for k, v in value.items():
        if isinstance(v, typ):
            out[k] = v
        elif not (skip_null and v is None):
            errs.append(FieldError(f"{path}.{k}", common.type_error(v, type_name)))
    return out


def _reserved(name: str, value: str, path: str, errs: list[FieldError]) -> None:
    if name not in RESERVABLE:
        errs.append(FieldError(path, common.unsupported(name, RESERVABLE)))
        return
    common.nonnegative_quantity(value, path, errs)


def _pod_allocation(pod: Any, path: str, errs: list[FieldError]) -> None:
    if not isinstance(pod, dict):
        errs.append(FieldError(path, common.type_error(pod, "object")))
        return
    for key in ("uid", "name", "namespace"):
        common.check_type(pod, key, f"{path}.{key}", errs, str, "string")
    containers = common.check_type(pod, "containerAllocations", f"{path}.containerAllocations", errs, list, "array")
    for j, c in enumerate(containers or ()):
        where = f"{path}.containerAllocations[{j}]"
        if not isinstance(c, dict):
            errs.append(FieldError(where, common.type_error(c, "object")))
            continue
        common.check_type(c, "name", f"{where}.name", errs, str, "string")
        _string_map(c.get("allocations"), f"{where}.allocations", errs)
