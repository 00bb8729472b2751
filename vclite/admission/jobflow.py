"""Admission for JobFlows (flow.volcano.sh): the flow graph must be a DAG of defined, uniquely named
flows whose vcjob names (`<jobflow>-<flow>`) Kubernetes will accept; spec updates are refused.

Volcano's webhook (pkg/webhooks/admission/jobflows/validate) checks only undefined targets and
cycles, with the messages used here. vclite also takes the two unmerged upstream fixes (PR #5876:
duplicate flow names rejected, since they make a flow that can never succeed; PR #5707: spec
updates rejected, since the controller would act on them inconsistently), names the cycle, hints
at quote characters pasted into a target, and checks names and label values against the limits
that otherwise make vcjob creation fail later (issue D18). `probe` and `patch` are accepted and
kept untouched. Pure functions; no store reads.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import core, flow, meta
from vclite.lib import dag, errors

Obj = dict[str, Any]
FieldError = errors.FieldError

NOT_DAG = "jobflow Flow is not DAG"
NOT_DEFINED = "jobflow Flow is not DAG: vertex is not defined"
NOT_UNIQUE = "jobflow Flow names must be unique"
NO_SPEC_UPDATES = "jobflow spec updates are not supported"
QUOTES = "‘’“”'\""
_RETAIN_POLICIES = tuple(p.value for p in flow.RetainPolicy)


def mutate(op: base.Operation, obj: Obj) -> None:
    """JobFlows get no defaults (the CRD declares none; jobRetainPolicy unset means retain)."""


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    if op is base.Operation.UPDATE and old is not None:
        if (new.get("spec") or {}) != (old.get("spec") or {}):
            return [FieldError("spec", NO_SPEC_UPDATES)]
        return []
    return validate_spec(new.get("spec"), meta.name(new), meta.namespace(new) or core.DEFAULT_NAMESPACE)


def validate_spec(spec: Any, jobflow: str, namespace: str) -> list[FieldError]:
    if spec is None:
        return []
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    policy = spec.get("jobRetainPolicy")
    if policy not in (None, "") and policy not in _RETAIN_POLICIES:
        errs.append(FieldError("spec.jobRetainPolicy", common.unsupported(policy, _RETAIN_POLICIES)))
    if jobflow:
        errs += _label_errors("metadata.name", flow.CREATED_BY_JOB_FLOW, flow.object_string(namespace, jobflow))
    flows = spec.get("flows")
    if flows is None:
        return errs
    if not isinstance(flows, list):
        return errs + [FieldError("spec.flows", common.type_error(flows, "array"))]
    graph: dict[str, list[str]] = {}
    paths: dict[str, str] = {}
    for i, f in enumerate(flows):
        errs += _validate_flow(f, i, jobflow, namespace, graph, paths)
    errs += _graph_errors(flows, graph, paths)
    return errs


def _validate_flow(f: Any, i: int, jobflow: str, namespace: str, graph: dict[str, list[str]],
                   paths: dict[str, str]) -> list[FieldError]:
    """One flow's own fields; records its edges in `graph` (first occurrence of a name wins)."""
    fp = f"spec.flows[{i}]"
    if not isinstance(f, dict):
        return [FieldError(fp, common.type_error(f, "object"))]
    errs: list[FieldError] = []
    name = f.get("name")
    if name in (None, ""):
        errs.append(FieldError(f"{fp}.name", common.REQUIRED))
    elif not isinstance(name, str):
        errs.append(FieldError(f"{fp}.name", common.type_error(name, "string")))
        name = None
    else:
        errs += _name_errors(name, f"{fp}.name", jobflow, namespace)
        if name in graph:
            errs.append(FieldError(f"{fp}.name", f'{NOT_UNIQUE}: "{name}"'))
    targets = _targets(f.get("dependsOn"), f"{fp}.dependsOn", errs)
    if name and name not in graph:
        graph[name] = targets
        paths[name] = f"{fp}.dependsOn.targets"
    return errs


def _name_errors(name: str, path: str, jobflow: str, namespace: str) -> list[FieldError]:
    """The flow name names a JobTemplate and becomes part of a vcjob name, pod names and a label value."""
    errs = [FieldError(path, common.invalid(name, m)) for m in common.dns1123_label(name)]
    if errs:
        return errs
    job = flow.job_name(jobflow, name)
    if jobflow and len(job) > 63:
        errs.append(FieldError(path, f'flow "{name}" would create vcjob "{job}" ({len(job)} characters): '
                                     "a vcjob name must be no more than 63 characters"))
    return errs + _label_errors(path, flow.CREATED_BY_JOB_TEMPLATE, flow.object_string(namespace, name))


def _label_errors(path: str, key: str, value: str) -> list[FieldError]:
    return [FieldError(path, f'the vcjobs it creates would carry label {key}="{value}", which is invalid: {m}')
            for m in common.label_value(value)]


def _targets(dep: Any, path: str, errs: list[FieldError]) -> list[str]:
    if dep is None:
        return []
    if not isinstance(dep, dict):
        errs.append(FieldError(path, common.type_error(dep, "object")))
        return []
    targets = dep.get("targets")
    if targets is None:
        return []
    if not isinstance(targets, list):
        errs.append(FieldError(f"{path}.targets", common.type_error(targets, "array")))
        return []
    out: list[str] = []
    for j, t in enumerate(targets):
        if isinstance(t, str):
            out.append(t)
        else:
            errs.append(FieldError(f"{path}.targets[{j}]", common.type_error(t, "string")))
    return out


def _graph_errors(flows: list, graph: dict[str, list[str]], paths: dict[str, str]) -> list[FieldError]:
    """Undefined targets (every occurrence, with a quote hint) and the first cycle, as a path."""
    errs: list[FieldError] = []
    for i, f in enumerate(flows):
        targets = common.list_at(common.dict_at(f, "dependsOn"), "targets")
        for j, t in enumerate(targets):
            if isinstance(t, str) and t not in graph:
                errs.append(FieldError(f"spec.flows[{i}].dependsOn.targets[{j}]", f"{NOT_DEFINED}: {t}{quote_hint(t)}"))
    cycle = dag.find_cycle({v: [t for t in ts if t in graph] for v, ts in graph.items()})
    if cycle:
        errs.append(FieldError(paths[cycle[0]], f"{NOT_DAG} (cycle: {' -> '.join(cycle)})"))
    return errs


def quote_hint(target: str) -> str:
    """` (the name contains quote characters ‘’; write targets: ['a'] or [a])` when quotes were pasted in."""
    found = "".join(dict.fromkeys(c for c in target if c in QUOTES))
    if not found:
        return ""
    bare = "".join(c for c in target if c not in QUOTES).strip()
    return f" (the name contains quote characters {found}; write targets: ['{bare}'] or [{bare}])"
