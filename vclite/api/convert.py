"""Conversion between a vcjob (batch.volcano.sh/v1alpha1 Job) and a JobTemplate (flow.volcano.sh/v1alpha1).

A JobTemplate's `spec` *is* a vcjob `JobSpec` (Volcano declares `JobTemplate.Spec batch.JobSpec`), so the
conversion copies the spec verbatim (a deep copy: the round trip job -> template -> job is lossless on
spec) and rewrites the envelope: apiVersion/kind, and metadata stripped of what the server or a
controller wrote (uid, resourceVersion, generation, creationTimestamp, managedFields, ownerReferences,
finalizers, deletion fields, selfLink) and of the labels/annotations Volcano's JobFlow controller adds
(`volcano.sh/createdByJobFlow`, `volcano.sh/createdByJobTemplate`). Status is never carried over: a
vcjob's status means nothing to a template and a template's `jobDependsOnList` nothing to a job.

Volcano itself has no such conversion (its design doc promises one); vclite's CLI uses this module.
Pure data: no I/O, no admission (the result is validated when it is created, like any manifest).
"""
from __future__ import annotations

from typing import Any

from vclite.api import flow, kinds
from vclite.lib import errors, jsoncopy

Obj = dict[str, Any]

SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                   "ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds",
                   "selfLink")
CONTROLLER_KEYS = (flow.CREATED_BY_JOB_FLOW, flow.CREATED_BY_JOB_TEMPLATE)


def _check_kind(obj: Obj, kind: kinds.Kind) -> None:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a {kind.kind} object, got {errors.json_type(obj)}")
    given = obj.get("kind")
    if given is not None and given != kind.kind:
        raise ValueError(f"expected kind {kind.kind}, got {given}")
    api_version = obj.get("apiVersion")
    if api_version is not None and kinds.lookup(api_version, kind.kind) is None:
        raise ValueError(f"expected apiVersion {kind.api_version} for kind {kind.kind}, got {api_version}")


def clean_metadata(metadata: Obj | None, name: str | None = None) -> Obj:
    """A copy of `metadata` without server-written fields and controller-added labels/annotations;
    `name` replaces the name when given. Empty labels/annotations maps are dropped."""
    out = {k: jsoncopy.deep_copy(v) for k, v in (metadata or {}).items() if k not in SERVER_METADATA}
    for field in ("labels", "annotations"):
        kept = {k: v for k, v in (out.get(field) or {}).items() if k not in CONTROLLER_KEYS}
        if kept:
            out[field] = kept
        else:
            out.pop(field, None)
    if name is not None:
        out["name"] = name
    return out


def _convert(obj: Obj, source: kinds.Kind, target: kinds.Kind, name: str | None) -> Obj:
    _check_kind(obj, source)
    out: Obj = {"apiVersion": target.api_version, "kind": target.kind,
                "metadata": clean_metadata(obj.get("metadata"), name)}
    out["spec"] = jsoncopy.deep_copy(obj.get("spec") or {})
    return out


def job_to_template(job: Obj, name: str | None = None) -> Obj:
    """A JobTemplate whose spec is the vcjob's spec (deep copy); `name` defaults to the job's name."""
    return _convert(job, kinds.JOB, kinds.JOBTEMPLATE, name)


def template_to_job(template: Obj, name: str | None = None) -> Obj:
    """A vcjob whose spec is the template's spec (deep copy); `name` defaults to the template's name."""
    return _convert(template, kinds.JOBTEMPLATE, kinds.JOB, name)
