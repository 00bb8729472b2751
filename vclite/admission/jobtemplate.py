"""Admission for JobTemplates (flow.volcano.sh): the spec IS a vcjob JobSpec, so it gets the vcjob
CREATE rules (with the template's name standing in for the job name), on CREATE and on every
UPDATE — except on a field holding a flow placeholder (`queue: "{{item}}"`), whose value is known
only in the vcjob a flow makes from it, and except the queue's live state (exists, Open, leaf): a
template may be applied before its queue (`kubectl apply -f dir/` goes in file-name order) or
outlive a queue's closing, as on Volcano; the vcjob made from it is checked when it is created.

Volcano has no JobTemplate webhook (only CRD schema checks); vclite checks templates up front so a
JobFlow does not fail later when it creates a vcjob from a bad template. The rules are applied to
the spec as the vcjob webhook would default it, but the template is stored with the CRD's defaults
only (`queue: default`, `maxRetry: 3` when absent), as on Volcano: the vcjob defaults (task and job
minAvailable from replicas, …) are made when a vcjob is created, after a flow's `patch.jobSpec` —
so a patch that changes `replicas` gets a matching `minAvailable`. Updates are not restricted
beyond that: a template change only affects vcjobs created afterwards. Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, vcjob
from vclite.api import batch, flowtemplate, meta, yamlio
from vclite.lib import errors, jsoncopy

Obj = dict[str, Any]


def mutate(op: base.Operation, obj: Obj) -> None:
    """The CRD defaults of the embedded JobSpec, on CREATE and UPDATE (fields absent only)."""
    spec = obj.get("spec")
    if op in (base.Operation.CREATE, base.Operation.UPDATE) and isinstance(spec, dict):
        spec.setdefault("queue", batch.DEFAULT_QUEUE)
        spec.setdefault("maxRetry", batch.DEFAULT_MAX_RETRY)


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[errors.FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [errors.FieldError("spec", common.REQUIRED if spec is None else common.type_error(spec, "object"))]
    as_job = jsoncopy.deep_copy(spec)
    vcjob.set_spec_defaults(as_job)   # (what a vcjob made from it will be)
    return [e for e in vcjob.validate_spec(as_job, meta.name(new), view, options, live_queue=False)
            if not _holds_placeholder({"spec": as_job}, e.path)]


def _holds_placeholder(obj: Any, path: str) -> bool:
    """Whether the field at `path` is a string with a flow placeholder (`queue: "{{item}}"`): its value is
    known only when a flow makes a vcjob from the template, and that vcjob is checked then."""
    for seg in yamlio.split_path(path):
        if isinstance(obj, dict) and seg in obj:
            obj = obj[seg]
        elif isinstance(obj, list) and seg.isdigit() and int(seg) < len(obj):
            obj = obj[int(seg)]
        else:
            return False
    return isinstance(obj, str) and flowtemplate.PLACEHOLDER.search(obj) is not None
