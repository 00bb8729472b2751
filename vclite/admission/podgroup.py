"""Admission for PodGroups (scheduling.volcano.sh), light: the CRD default queue, and the fields the
scheduler reads must have the right shape (minMember ≥ 0, minTaskMember integers, minResources
quantities that parse, networkTopology not both tier fields).

Volcano's PodGroup webhook also refuses a PodGroup whose queue is missing or not Open; vclite leaves
that to the scheduler (a vcjob's queue was checked when the job was admitted). Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import scheduling
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError


def mutate(op: base.Operation, obj: Obj) -> None:
    spec = obj.get("spec")
    if op is base.Operation.CREATE and isinstance(spec, dict) and not spec.get("queue"):
        spec["queue"] = scheduling.DEFAULT_QUEUE


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec") or {}
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    common.check_int(spec, "minMember", "spec.minMember", errs, minimum=0)
    common.check_type(spec, "queue", "spec.queue", errs, str, "string")
    members = common.check_type(spec, "minTaskMember", "spec.minTaskMember", errs, dict, "object") or {}
    for task in members:
        common.check_int(members, task, f"spec.minTaskMember.{task}", errs, minimum=0)
    common.parse_resource_list(spec.get("minResources"), "spec.minResources", errs)
    errs += common.network_topology(spec.get("networkTopology"), "spec.networkTopology")
    return errs
