"""Where the manifests name ServiceAccounts, for `vcctl validate`/`run`'s warnings about the accounts the embedded
control plane makes: every account a pod spec names (`service_account_refs`), those a JobFlow fills in only when
it makes the vcjob (`filled_at_run_time`: `serviceAccountName: "sa-{{item}}"`, `"{{outputs.pick}}"`), and the
field that wrote an account made during a run (`made_source`, for apiserver/standins.Made). Pure, over the
loaded documents.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from vclite.admission import serviceaccount
from vclite.api import flow, flowtemplate, kinds, yamlio
from vclite.apiserver import standins

Obj = dict[str, Any]
_FLOW_AT = re.compile(r"spec\.flows\[(\d+)\]")


def service_account_refs(obj: Any, path: str = "") -> list[tuple[str, str]]:
    """(field path, ServiceAccount name) of each account a pod spec anywhere in `obj` names (a vcjob's or
    JobTemplate's tasks, a CronJob's job template, a JobFlow's patches, a bare Pod: `serviceAccountName`,
    else the deprecated `serviceAccount`), but `default`, which every namespace has; a name with placeholders
    is given as written. A pod spec is one with `containers`, or any `template.spec` (a patch may give only
    the account of its task's pods)."""
    refs: list[tuple[str, str]] = []
    _account_refs(obj, path, refs)
    return refs


def _account_refs(obj: Any, path: str, refs: list[tuple[str, str]]) -> None:
    """service_account_refs' walk: a field's path is written out only where an account is found or below it,
    not for every field (this runs over every manifest, several times, before a run starts)."""
    if isinstance(obj, dict):
        if isinstance(obj.get("containers"), list) or path.endswith("template.spec"):
            key = "serviceAccountName" if obj.get("serviceAccountName") else "serviceAccount"
            name = obj.get(key)
            if isinstance(name, str) and name and name != serviceaccount.DEFAULT:
                refs.append((f"{path}.{key}" if path else key, name))
        for k, v in obj.items():
            if type(v) is dict or type(v) is list:
                if k != "status" and _may_name_accounts(v):
                    _account_refs(v, f"{path}.{k}" if path else str(k), refs)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if (type(v) is dict or type(v) is list) and _may_name_accounts(v):
                _account_refs(v, f"{path}[{i}]", refs)


def _may_name_accounts(obj: dict | list) -> bool:
    """Whether a dict or list may lead to an account: it holds a dict or a list, or it is a dict with an account
    field (`template.spec` of a patch may give only that). Most of a manifest's leaves — labels, resources, a
    command, env entries — are skipped so, without a path written for them."""
    if type(obj) is dict:
        if "serviceAccountName" in obj or "serviceAccount" in obj:
            return True
        values: Any = obj.values()
    else:
        values = obj
    for v in values:
        if type(v) is dict or type(v) is list:
            return True
    return False


def namespace_of(obj: Obj) -> str:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(md.get("namespace") or "default")


def _name_of(obj: Obj) -> str:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(md.get("name") or "")


def _flows_using(d: yamlio.Document, path: str, docs: list[yamlio.Document]) -> Iterator[tuple[Obj, Obj]]:
    """(JobFlow spec, flow) of each flow whose vcjobs the field `path` of document `d` is written into: the flow
    whose patch it is in, or each flow (of a JobFlow of its namespace) running JobTemplate `d`."""
    if d.obj.get("kind") == kinds.JOBFLOW.kind:
        m = _FLOW_AT.match(path)
        spec = d.obj.get("spec")
        flows = spec.get("flows") if isinstance(spec, dict) else None
        if m and isinstance(flows, list) and int(m.group(1)) < len(flows) and isinstance(flows[int(m.group(1))], dict):
            yield spec, flows[int(m.group(1))]
        return
    if d.obj.get("kind") != kinds.JOBTEMPLATE.kind:
        return
    for f in docs:
        spec = f.obj.get("spec")
        if f.obj.get("kind") != kinds.JOBFLOW.kind or not isinstance(spec, dict) or \
                namespace_of(f.obj) != namespace_of(d.obj) or not isinstance(spec.get("flows"), list):
            continue
        for x in spec["flows"]:
            if isinstance(x, dict) and x.get("name") == _name_of(d.obj):
                yield spec, x


def _run_time_placeholders(written: str, spec: Obj, f: Obj) -> list[str]:
    """The placeholders of `written` that flow `f` of a JobFlow of `spec` fills in only when it makes a vcjob
    (all but its parameters, which are known before the run), as flowtemplate.in_context reads them."""
    flows = {x.get("name") for x in spec.get("flows") or () if isinstance(x, dict)}
    loop = f.get("withItems") is not None or f.get("withParam") is not None
    return [n for n in flowtemplate.placeholders(written) if not n.startswith("params.") and flowtemplate.in_context(
        n, flows, params=bool(flowtemplate.arguments(spec)), loop=loop, repeat=f.get("repeat") is not None,
        exit=f.get("name") == spec.get("onExit"))]


def filled_at_run_time(docs: list[yamlio.Document]) -> list[tuple[yamlio.Document, str, str]]:
    """(document, field path, name as written) of each ServiceAccount a flow's vcjobs will name that is known only
    when the vcjob is made (an item, an output, an iteration, the exit handler's outcomes or failures)."""
    out = []
    for d in docs:
        if d.obj.get("kind") not in (kinds.JOBTEMPLATE.kind, kinds.JOBFLOW.kind):
            continue
        for path, written in service_account_refs(d.obj):
            if any(_run_time_placeholders(written, spec, f) for spec, f in _flows_using(d, path, docs)):
                out.append((d, path, written))
    return out


def _matches(written: str, name: str) -> bool:
    """Whether `written` (with placeholders) could have been filled in as `name`."""
    parts = flowtemplate.PLACEHOLDER.split(written)
    literal = [re.escape(p) for p in parts[::2]]   # (split keeps the placeholder's name at odd positions)
    return re.fullmatch(".+".join(literal), name) is not None


def made_source(docs: list[yamlio.Document], made: standins.Made) -> tuple[yamlio.Document, str] | None:
    """The document and field that wrote the name of an account made for a vcjob of a JobFlow: of the flow's patch,
    else of its JobTemplate (None: another vcjob, or no field could have written it)."""
    labels = (made.job.get("metadata") or {}).get("labels") or {}
    ns = namespace_of(made.job)
    flow_of = labels.get(flow.CREATED_BY_JOB_FLOW, "")
    template = labels.get(flow.CREATED_BY_JOB_TEMPLATE, "")
    found = []
    for d, path, written in filled_at_run_time(docs):
        if namespace_of(d.obj) != ns or not _matches(written, made.name):
            continue
        if d.obj.get("kind") == kinds.JOBFLOW.kind and flow_of == flow.object_string(ns, _name_of(d.obj)) and any(
                f.get("name") == template.partition(".")[2] for _, f in _flows_using(d, path, docs)):
            found.insert(0, (d, path))   # (a patch wins over the template it is merged onto)
        elif d.obj.get("kind") == kinds.JOBTEMPLATE.kind and template == flow.object_string(ns, _name_of(d.obj)):
            found.append((d, path))
    return found[0] if found else None


def made_message(made: standins.Made) -> str:
    """The warning about an account made during the run, without its field (the caller places it)."""
    ns = namespace_of(made.job)
    return standins.message(ns, made.name, f"{ns}/{_name_of(made.job)}")
