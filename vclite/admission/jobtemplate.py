"""Admission for JobTemplates (flow.volcano.sh): the spec IS a vcjob JobSpec, so it gets the vcjob
defaults and the vcjob CREATE rules (with the template's name standing in for the job name), on
CREATE and on every UPDATE, including the queue exists / Open / leaf check.

Volcano has no JobTemplate webhook (only CRD schema checks); vclite checks templates up front so a
JobFlow does not fail later when it creates a vcjob from a bad template. Updates are not restricted
beyond that: a template change only affects vcjobs created afterwards. Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, vcjob
from vclite.api import meta
from vclite.lib import errors

Obj = dict[str, Any]


def mutate(op: base.Operation, obj: Obj) -> None:
    """vcjob defaults on CREATE and UPDATE (the CRD defaults of the embedded JobSpec apply on every write)."""
    if op in (base.Operation.CREATE, base.Operation.UPDATE) and isinstance(obj.get("spec"), dict):
        vcjob.set_spec_defaults(obj["spec"])


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[errors.FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [errors.FieldError("spec", common.REQUIRED if spec is None else common.type_error(spec, "object"))]
    return vcjob.validate_spec(spec, meta.name(new), view, options)
