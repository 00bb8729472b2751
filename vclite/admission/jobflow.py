"""Admission for JobFlows (flow.volcano.sh): the flow graph must be a DAG of defined, uniquely named
flows whose vcjob names (`<jobflow>-<flow>`) Kubernetes will accept; spec updates are refused; the
fields vclite adds (below) are well formed and refer only to what exists.

Volcano's webhook (pkg/webhooks/admission/jobflows/validate) checks only undefined targets and
cycles, with the messages used here. vclite also takes the two unmerged upstream fixes (PR #5876:
duplicate flow names rejected, since they make a flow that can never succeed; PR #5707: spec
updates rejected, since the controller would act on them inconsistently), names the cycle, hints
at quote characters pasted into a target, and checks names and label values against the limits
that otherwise make vcjob creation fail later (issue D18). Pure functions; no store reads.

Additive fields (all optional; a plain Volcano JobFlow is admitted exactly as before):

    spec.arguments.parameters[]: {name, value}   name [A-Za-z0-9_][A-Za-z0-9_-]*, unique; value a string
    spec.onExit: <flow>          the exit handler: runs once every other flow finished; it has no
                                 dependsOn and no other flow may depend on or read it (it may read them)
    spec.flows[].dependsOn.targets: [<flow>]      (Volcano)
    spec.flows[].dependsOn.strategy: all | any    over targets (default all)
    spec.flows[].dependsOn.expression: "<depends>"  instead of targets (api/flowexpr), e.g.
                                 "train.Completed && (eval.Failed || eval.Skipped)"
    spec.flows[].dependsOn.probe: (Volcano) httpGetList[{taskName, port 1..65535, path "/…",
                                 httpHeader{name, value}}], tcpSocketList[{taskName, port}],
                                 taskStatusList[{taskName, phase: a pod phase}]; taskName a DNS label
    spec.flows[].when: "<condition>"    (api/flowexpr) over params, outputs, item, iteration
    spec.flows[].withItems: [...]       fan-out, one vcjob `<jobflow>-<flow>-<index>` per item
    spec.flows[].withParam: "{{outputs.<flow>}}"  (that flow's output, a JSON list; "{{outputs.<flow>.<field>…}}"
                                 a list inside it), or in the exit handler
                                 "{{workflow.failures}}" (one item per failed flow; {{item.<field>}} its fields)
    spec.flows[].repeat: {until: "<condition>", limit: 1..100}   both required; not with withItems/withParam
    spec.flows[].retry: {limit: 0..20, backoff: {duration: "10s", factor: >=1, maxDuration: "5m", cap: "5m"}}
    spec.flows[].patch.jobSpec: (Volcano) merged onto the template (api/flowtemplate.apply_patch)

References: `params.<name>` must be declared in spec.arguments; `item` only in the patch of a flow
with withItems/withParam (`when` is evaluated once per flow, before its items), `{{iteration}}` only
in the patch of a flow with repeat; `outputs.<flow>` (in when, repeat.until, withParam and `{{…}}` in patch)
and every flow in an expression must be a defined flow. Each such reference is an edge of the
DAG like a target (the flow waits for it; `dependencies(flow)` lists them), so cycles through
expressions or outputs are refused, except that repeat.until may read the flow's own output.
A `when` cannot read its own flow's output. Expression errors name the flow and the position.
A flow cannot be named like an item or iteration of a loop or repeat flow (`<loop>-<n>`): both
would make the vcjob `<jobflow>-<loop>-<n>`. `template_errors` checks the JobTemplates' own
placeholders by the same rules, for `vcctl validate` / `vcctl run`, which read them with the JobFlow.
"""
from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from vclite.admission import base, common, vcjob
from vclite.api import core, flow, flowexpr, flowsyntax, flowtemplate, meta, yamlio
from vclite.lib import dag, errors

Obj = dict[str, Any]
FieldError = errors.FieldError

NOT_DAG = "jobflow Flow is not DAG"
NOT_DEFINED = "jobflow Flow is not DAG: vertex is not defined"
NOT_UNIQUE = "jobflow Flow names must be unique"
NO_SPEC_UPDATES = "jobflow spec updates are not supported"
QUOTES = "‘’“”'\""
STRATEGIES = ("all", "any")
MAX_ITEMS = 10000
REPEAT_LIMIT = (1, 100)
RETRY_LIMIT = (0, 20)
_RETAIN_POLICIES = tuple(p.value for p in flow.RetainPolicy)
_POD_PHASES = tuple(p.value for p in core.PodPhase)
_PARAM_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_WITH_PARAM = re.compile(r"\s*\{\{\s*outputs\.([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_-]+)*)\s*\}\}\s*")   # + a path
_ARGO_RESULT = re.compile(r"\s*\{\{\s*(?:tasks|steps)\.([A-Za-z0-9_-]+)\.outputs\.(?:result|parameters\.[A-Za-z0-9_-]+)"
                          r"\s*\}\}\s*")   # Argo's output of a task, which is vclite's {{outputs.<flow>}}
_WITH_PARAM_WORKFLOW = re.compile(r"\s*\{\{\s*(workflow(?:\.[A-Za-z0-9_-]+)*)\s*\}\}\s*")   # the exit handler's


@dataclasses.dataclass(frozen=True)
class _Ref:
    """A flow one flow reads. Errors go to `path`; a cycle through it is reported at `edge`; `pos` and
    `text` locate it in an expression (pos -1: a dependsOn target, reported Volcano's way)."""
    flow: str
    path: str
    edge: str
    pos: int = -1
    text: str = ""
    edgeless: bool = False   # the exit handler reading an outcome: the flow must exist; nothing waits for it


@dataclasses.dataclass
class _Ctx:
    """What one flow's checks need: its path and name, the declared parameters, whether it loops
    (withItems/withParam) or repeats."""
    fp: str
    name: str
    params: Mapping[str, str | None]   # declared parameters and their values (None: invalid value)
    loop: bool
    repeat: bool
    errs: list[FieldError]
    refs: list[_Ref] = dataclasses.field(default_factory=list)
    exit: bool = False   # the exit handler (spec.onExit): it may read the other flows' outcomes
    failures: bool = False   # it loops over workflow.failures: each item is a failure

    def error(self, path: str, message: str) -> None:
        self.errs.append(FieldError(path, message))

    def expr_error(self, path: str, e: flowexpr.ExprError) -> None:
        self.errs.append(FieldError(path, f'flow "{self.name}": {e}', offset=e.position))


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
    params = _arguments(spec.get("arguments"), errs)
    flows = spec.get("flows")
    if flows is None:
        return errs + _on_exit(spec, [], {})
    if not isinstance(flows, list):
        return errs + [FieldError("spec.flows", common.type_error(flows, "array"))]
    refs: list[tuple[str | None, list[_Ref]]] = []
    index: dict[str, int] = {}
    for i, f in enumerate(flows):
        name, flow_refs = _validate_flow(f, i, jobflow, namespace, params, index, errs,
                                         spec.get("onExit") if isinstance(spec.get("onExit"), str) else None)
        refs.append((name, flow_refs))
    errs += _on_exit(spec, flows, index)
    errs += _item_name_clashes(flows, index)
    handler = spec.get("onExit") if isinstance(spec.get("onExit"), str) else None
    errs += _graph_errors(refs, index, handler)
    return errs


def _item_name_clashes(flows: list, index: dict[str, int]) -> list[FieldError]:
    """A flow named `<loop>-<n>` for a loop or repeat flow `<loop>` would make the vcjob of the loop's
    item (iteration) n: the two would share a vcjob name and a status entry."""
    loops = {name: "iteration" if flows[i].get("repeat") is not None else "item" for name, i in index.items()
             if any(flows[i].get(k) is not None for k in ("withItems", "withParam", "repeat"))}
    errs = []
    for name, i in index.items():
        for loop, what in loops.items():
            if name != loop and re.fullmatch(re.escape(loop) + r"-[0-9]+", name):
                n = name[len(loop) + 1:]
                errs.append(FieldError(f"spec.flows[{i}].name", f'flow "{name}" would make the same vcjob name as '
                                       f'{what} {n} of flow "{loop}" (<jobflow>-{loop}-{n}): rename one of them'))
    return errs


class _Declared(dict):
    """The declared parameters: name -> value (None when the value is invalid). `complete` is False when
    some entry's name cannot be read (absent, not a string, malformed): a reference to a parameter not
    declared may then mean that one, so it is not reported again as unknown."""

    complete = True


def _string_error(value: Any) -> str:
    """`must be of type string`, and why a boolean or a number is not one (an unquoted `n`, `5`)."""
    hint = yamlio.quote_hint(value)
    return common.type_error(value, "string") + (f": {hint}" if hint else "")


def declared_parameters(spec: Obj) -> _Declared:
    """The parameters a JobFlow spec declares (name -> value, None when invalid; `complete`: whether
    every name could be read), for a spec admission may have refused."""
    return _arguments(spec.get("arguments") if isinstance(spec, dict) else None, [])


def _arguments(args: Any, errs: list[FieldError]) -> _Declared:
    """spec.arguments.parameters: names (well formed, unique) and string values; returns the names
    declared, each with its value (None when the value is invalid)."""
    path = "spec.arguments"
    names = _Declared()
    if args is None:
        return names
    if not isinstance(args, dict):
        errs.append(FieldError(path, common.type_error(args, "object")))
        names.complete = False
        return names
    params = args.get("parameters")
    if params is None:
        return names
    if not isinstance(params, list):
        errs.append(FieldError(f"{path}.parameters", common.type_error(params, "array")))
        names.complete = False
        return names
    for j, p in enumerate(params):
        pp = f"{path}.parameters[{j}]"
        if not isinstance(p, dict):
            errs.append(FieldError(pp, common.type_error(p, "object")))
            names.complete = False
            continue
        name, value = p.get("name"), p.get("value")
        if name in (None, ""):
            errs.append(FieldError(f"{pp}.name", common.REQUIRED))
        elif not isinstance(name, str):
            errs.append(FieldError(f"{pp}.name", _string_error(name)))
        elif not _PARAM_NAME.fullmatch(name):
            errs.append(FieldError(f"{pp}.name", common.invalid(
                name, "a parameter name must consist of letters, digits, '_' or '-', and not start with '-'")))
        elif name in names:
            errs.append(FieldError(f"{pp}.name", common.duplicate(name)))
        else:
            names[name] = value if isinstance(value, str) else None
        if not isinstance(name, str) or not _PARAM_NAME.fullmatch(name):
            names.complete = False
        if value is None:
            errs.append(FieldError(f"{pp}.value", common.REQUIRED))
        elif not isinstance(value, str):
            errs.append(FieldError(f"{pp}.value", _string_error(value)))
    return names


def _validate_flow(f: Any, i: int, jobflow: str, namespace: str, params: Mapping[str, str | None],
                   index: dict[str, int], errs: list[FieldError],
                   handler: str | None = None) -> tuple[str | None, list[_Ref]]:
    """One flow's own fields; returns its name (None if unusable or a duplicate) and what it reads.
    `index` maps each name to its first flow's position; `handler`, the exit handler's name."""
    fp = f"spec.flows[{i}]"
    if not isinstance(f, dict):
        errs.append(FieldError(fp, common.type_error(f, "object")))
        return None, []
    name = f.get("name")
    if name in (None, ""):
        errs.append(FieldError(f"{fp}.name", common.REQUIRED))
        name = None
    elif not isinstance(name, str):
        errs.append(FieldError(f"{fp}.name", common.type_error(name, "string")))
        name = None
    else:
        errs += _name_errors(name, f"{fp}.name", jobflow, namespace)
        if name in index:
            errs.append(FieldError(f"{fp}.name", f'{NOT_UNIQUE}: "{name}"'))
            name = None
        else:
            index[name] = i
    loop = f.get("withItems") is not None or f.get("withParam") is not None
    ctx = _Ctx(fp, name or "", params, loop, f.get("repeat") is not None, errs,
               exit=bool(name) and name == handler, failures=_loops_over_failures(f))
    _depends_on(f.get("dependsOn"), ctx)
    _loop(f, ctx, jobflow)
    if f.get("when") is not None:
        _condition(f["when"], f"{fp}.when", ctx, own_output=False)
    _repeat(f.get("repeat"), ctx)
    _retry(f.get("retry"), f"{fp}.retry", errs)
    _patch(f.get("patch"), ctx)
    return name, ctx.refs


def dependencies(f: Obj) -> list[str]:
    """The flows a flow waits for, in first-reference order: its targets, the flows in its dependency
    expression, and every `outputs.<flow>` it reads (when, withParam, repeat.until except its own,
    `{{outputs.…}}` in its patch). For an admitted flow; malformed parts are skipped."""
    ctx = _Ctx("", str(f.get("name") or ""), {}, True, True, [])
    _depends_on(f.get("dependsOn"), ctx)
    _loop(f, ctx, "")
    if isinstance(f.get("when"), str):
        _condition(f["when"], "when", ctx, own_output=False)
    _repeat(f.get("repeat"), ctx)
    _patch(f.get("patch"), ctx)
    return list(dict.fromkeys(r.flow for r in ctx.refs if r.flow != ctx.name and not r.edgeless))


def template_errors(spec: Obj, reads: Mapping[str, Mapping[str, str] | set[str]]) -> list[FieldError]:
    """Problems of the placeholders each flow's JobTemplate uses, for a JobFlow `spec` (admission cannot
    see them: a JobTemplate may be created later). `reads`: flow name -> the
    placeholder names in its JobTemplate's spec (a mapping to the field path of each, which the
    message then names: flowtemplate.placeholder_paths(spec, "spec")). The same rules as in a patch (declared parameters,
    item only in loops, iteration only in repeats, outputs of defined flows, not of the exit handler,
    not the flow's own outside a repeat), and no cycle through them: a template reading
    `{{outputs.f}}` makes its vcjob wait for f. Each error is reported at `spec.flows[i].name`.
    A spec admission refused may be given, with `reads` for the flows it found no fault in: nothing it
    reported is reported again (a reference to a parameter whose name it refused is not unknown; no
    cycle through a template is looked for while the flows' own references are unsound)."""
    flows = spec.get("flows") if isinstance(spec.get("flows"), list) else []
    params = declared_parameters(spec)
    index: dict[str, int] = {}
    for i, f in enumerate(flows):
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            index.setdefault(f["name"], i)   # (a duplicate name: admission's error; the first flow is that name)
    errs: list[FieldError] = []
    refs: list[tuple[str | None, list[_Ref]]] = []
    own_refs: list[tuple[str | None, list[_Ref]]] = []
    handler = spec.get("onExit") if isinstance(spec.get("onExit"), str) else None
    for name, i in index.items():
        f = flows[i]
        ctx = _Ctx(f"spec.flows[{i}]", name, params, f.get("withItems") is not None or f.get("withParam") is not None,
                   f.get("repeat") is not None, [], exit=name == handler, failures=_loops_over_failures(f))
        _depends_on(f.get("dependsOn"), ctx)   # (the spec's own references: admitted, so without errors)
        _loop(f, ctx, "")
        if isinstance(f.get("when"), str):
            _condition(f["when"], "when", ctx, own_output=False)
        _repeat(f.get("repeat"), ctx)
        _patch(f.get("patch"), ctx)
        own_refs.append((name, list(ctx.refs)))
        path = f"{ctx.fp}.name"
        read = reads.get(name) or {}
        for placeholder in sorted(read):
            if not flowtemplate.in_context(placeholder, index, params=bool(params) or not params.complete,
                                           loop=ctx.loop, repeat=ctx.repeat, exit=ctx.exit):
                continue   # left as written, as Volcano leaves it (a warning says so: advice.py)
            root, *rest = placeholder.split(".")
            problem = _placeholder_problem(placeholder, ctx)
            if not problem and root == "outputs" and rest[0] == name and not ctx.repeat:
                problem = "a flow's template cannot read its own output (it has not run yet; in a repeat it is " \
                          "the previous iteration's)"
            if problem:
                where = f"{read[placeholder]}: " if isinstance(read, Mapping) and read[placeholder] else ""
                errs.append(FieldError(path, f'JobTemplate "{name}": {where}{problem}'))
            elif root == "outputs" and rest[0] != name:
                ctx.refs.append(_Ref(rest[0], path, path, -2, placeholder))
        refs.append((name, ctx.refs))
    if _graph_errors(own_refs, index, handler):
        return errs   # (admission's errors: the graph of the flows' own references is not sound)
    names = {f"spec.flows[{i}].name": name for name, i in index.items()}
    for e in _graph_errors(refs, index, handler):
        message = e.message
        if message.startswith(NOT_DAG):
            message += " (a JobTemplate reading {{outputs.<flow>}} makes its vcjob wait for that flow)"
        elif e.path in names:
            own = f'flow "{names[e.path]}": '
            message = f'JobTemplate "{names[e.path]}": {message[len(own):] if message.startswith(own) else message}'
        errs.append(FieldError(e.path, message))
    return errs


# ---- names -------------------------------------------------------------------------------------

def _name_errors(name: str, path: str, jobflow: str, namespace: str) -> list[FieldError]:
    """The flow name names a JobTemplate (a DNS-1123 subdomain: dots allowed, as upstream, which only
    requires a name) and becomes part of a vcjob name, pod names and a label value."""
    errs = [FieldError(path, common.invalid(name, m)) for m in common.dns1123_subdomain(name)]
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


# ---- dependsOn ---------------------------------------------------------------------------------

def _depends_on(dep: Any, ctx: _Ctx) -> None:
    path = f"{ctx.fp}.dependsOn"
    if dep is None:
        return
    if not isinstance(dep, dict):
        ctx.error(path, common.type_error(dep, "object"))
        return
    targets = _targets(dep, path, ctx)
    strategy, expression = dep.get("strategy"), dep.get("expression")
    if strategy is not None and strategy not in STRATEGIES:
        ctx.error(f"{path}.strategy", common.unsupported(strategy, STRATEGIES))
    if expression is None:
        pass
    elif not isinstance(expression, str):
        ctx.error(f"{path}.expression", common.type_error(expression, "string"))
    elif targets:
        ctx.error(f"{path}.expression", "set either dependsOn.targets or dependsOn.expression, not both")
    elif strategy is not None or dep.get("probe") is not None:
        field = "strategy" if strategy is not None else "probe"
        ctx.error(f"{path}.{field}", f"{field} applies to dependsOn.targets; an expression states its own logic")
    if isinstance(expression, str):   # (checked with targets, strategy or a probe too: one pass, every problem)
        try:
            parsed = flowexpr.parse_depends(expression)
        except flowexpr.ExprError as e:
            ctx.expr_error(f"{path}.expression", e)
        else:
            for node in flowexpr.nodes(parsed) if not targets else ():
                if isinstance(node, flowsyntax.Atom):
                    ctx.refs.append(_Ref(node.flow, f"{path}.expression", f"{path}.expression", node.pos, expression))
    _probe(dep.get("probe"), f"{path}.probe", ctx.errs)


def _targets(dep: Obj, path: str, ctx: _Ctx) -> list[str]:
    targets = dep.get("targets")
    if targets is None:
        return []
    if not isinstance(targets, list):
        ctx.error(f"{path}.targets", common.type_error(targets, "array"))
        return []
    out: list[str] = []
    for j, t in enumerate(targets):
        if isinstance(t, str):
            out.append(t)
            ctx.refs.append(_Ref(t, f"{path}.targets[{j}]", f"{path}.targets"))
        else:
            ctx.error(f"{path}.targets[{j}]", common.type_error(t, "string"))
    return out


def _probe(probe: Any, path: str, errs: list[FieldError]) -> None:
    """Volcano's probe lists: each entry names a task (a DNS label) and a port (1..65535) or a pod phase."""
    if probe is None:
        return
    if not isinstance(probe, dict):
        errs.append(FieldError(path, common.type_error(probe, "object")))
        return
    for key, required in (("httpGetList", "port"), ("tcpSocketList", "port"), ("taskStatusList", "phase")):
        entries = probe.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            errs.append(FieldError(f"{path}.{key}", common.type_error(entries, "array")))
            continue
        for j, entry in enumerate(entries):
            ep = f"{path}.{key}[{j}]"
            if not isinstance(entry, dict):
                errs.append(FieldError(ep, common.type_error(entry, "object")))
                continue
            _probe_entry(entry, ep, key, required, errs)


def _probe_entry(entry: Obj, ep: str, key: str, required: str, errs: list[FieldError]) -> None:
    task = entry.get("taskName")
    if task in (None, ""):
        errs.append(FieldError(f"{ep}.taskName", common.REQUIRED))
    elif not isinstance(task, str):
        errs.append(FieldError(f"{ep}.taskName", common.type_error(task, "string")))
    else:
        errs += [FieldError(f"{ep}.taskName", common.invalid(task, m)) for m in common.dns1123_label(task)]
    if entry.get(required) is None:
        errs.append(FieldError(f"{ep}.{required}", common.REQUIRED))
    elif required == "port":
        common.check_int(entry, "port", f"{ep}.port", errs, minimum=1, maximum=65535)
    elif entry["phase"] not in _POD_PHASES:
        errs.append(FieldError(f"{ep}.phase", common.unsupported(entry["phase"], _POD_PHASES)))
    if key != "httpGetList":
        return
    p = common.check_type(entry, "path", f"{ep}.path", errs, str, "string")
    if p and not p.startswith("/"):
        errs.append(FieldError(f"{ep}.path", common.invalid(p, "must start with '/'")))
    header = entry.get("httpHeader")
    if header is not None and not isinstance(header, dict):
        errs.append(FieldError(f"{ep}.httpHeader", common.type_error(header, "object")))
    elif header is not None:
        for field in ("name", "value"):
            if not isinstance(header.get(field), str):
                errs.append(FieldError(f"{ep}.httpHeader.{field}", common.REQUIRED if header.get(field) is None
                                       else common.type_error(header[field], "string")))


# ---- conditions, loops, repeat, retry, patch ---------------------------------------------------

def _condition(text: Any, path: str, ctx: _Ctx, own_output: bool) -> None:
    """A `when` / `repeat.until` condition: parses, declared params, item only in loops, outputs of
    defined flows (recorded as references; the flow's own output only where `own_output`)."""
    if not isinstance(text, str):
        ctx.error(path, common.type_error(text, "string"))
        return
    try:
        parsed = flowexpr.parse_when(text)
    except flowexpr.ExprError as e:
        ctx.expr_error(path, e)
        return
    sound = True
    for node in flowexpr.nodes(parsed):
        if not isinstance(node, flowsyntax.Ref):
            continue
        problem = _ref_problem(node.root, node.path, ctx, in_condition=True)
        if problem:
            sound = False
            ctx.expr_error(path, flowexpr.ExprError(problem, node.pos, text))
        elif node.root == "params" and ctx.params.get(node.path[0]) is None:
            sound = False   # (its value is invalid: reported at spec.arguments)
        elif node.root == "outputs" and node.path[0] == ctx.name and ctx.name:
            if not own_output:
                ctx.expr_error(path, flowexpr.ExprError(
                    "a flow's when cannot read its own output (it has not run yet)", node.pos, text))
        elif node.root == "outputs":
            ctx.refs.append(_Ref(node.path[0], path, path, node.pos, text))
        elif node.root == "outcomes":
            ctx.refs.append(_Ref(node.path[0], path, path, node.pos, text, edgeless=True))
    if sound:
        for e in flowexpr.constant_errors(parsed, ctx.params):
            ctx.expr_error(path, e)


def _placeholder_problem(placeholder: str, ctx: _Ctx) -> str:
    """What is wrong with `{{placeholder}}` in a flow's patch or JobTemplate ("" if nothing)."""
    root, *rest = placeholder.split(".")
    if root not in flowsyntax.ROOTS or (root in ("params", "outputs", "outcomes", "workflow") and not rest):
        return (f"unknown placeholder {{{{{placeholder}}}}} (use params.<name>, outputs.<flow>, item, iteration "
                "or, in the exit handler, outcomes.<flow>, workflow.status and workflow.failures)")
    if root == "workflow" and flowsyntax.workflow_problem(rest):
        return flowsyntax.workflow_problem(rest)
    if root == "outcomes" and len(rest) > 1:
        return f"outcomes.{rest[0]} has no fields (it is Completed, Failed, Terminated, Skipped or NotCreated)"
    return _ref_problem(root, tuple(rest), ctx)


def _ref_problem(root: str, path: tuple[str, ...], ctx: _Ctx, in_condition: bool = False) -> str:
    if root == "params" and path[0] not in ctx.params and getattr(ctx.params, "complete", True):
        declared = ", ".join(sorted(ctx.params)) or "none"
        return f'unknown parameter "{path[0]}" (spec.arguments.parameters declares: {declared})'
    if root == "item" and ctx.loop and in_condition:
        return ("a condition cannot read item: it is evaluated once for the whole flow, before its items "
                "(use {{item}} in the patch)")
    if root == "item" and not ctx.loop:
        return "item is only defined in a flow with withItems or withParam"
    if root == "item" and ctx.failures and path:
        return flowsyntax.failure_field_problem(path, "item")
    if root == "iteration" and not ctx.repeat:
        return ("iteration is only defined in a flow with repeat" if in_condition
                else "{{iteration}} is only defined in a flow with repeat")
    if root == "outcomes" and not ctx.exit:
        return ("outcomes are read by the exit handler (spec.onExit) only: another flow says which outcomes it "
                f"accepts in dependsOn.expression ({path[0]}.Failed)")
    if root == "workflow" and not ctx.exit:
        return ("workflow is read by the exit handler (spec.onExit) only: the JobFlow's status and failures are "
                "known once every other flow has finished")
    if root == "outcomes" and path[0] == ctx.name:
        return "the exit handler cannot read its own outcome (it has none while it runs)"
    return ""


def _loop(f: Obj, ctx: _Ctx, jobflow: str) -> None:
    items, param = f.get("withItems"), f.get("withParam")
    fp = ctx.fp
    if items is not None and param is not None:
        ctx.error(f"{fp}.withParam", "set either withItems or withParam, not both")
    if items is not None:
        if not isinstance(items, list):
            ctx.error(f"{fp}.withItems", common.type_error(items, "array"))
        elif len(items) > MAX_ITEMS:
            ctx.error(f"{fp}.withItems", f"Too many: {len(items)}: must have at most {MAX_ITEMS} items")
        elif items and jobflow and ctx.name:
            job = f"{flow.job_name(jobflow, ctx.name)}-{len(items) - 1}"
            if len(job) > 63:
                ctx.error(f"{fp}.withItems", f'flow "{ctx.name}" would create vcjob "{job}" ({len(job)} characters):'
                                             " a vcjob name must be no more than 63 characters")
    if param is None:
        return
    w = _WITH_PARAM_WORKFLOW.fullmatch(param) if isinstance(param, str) else None
    if w is not None:
        problem = _workflow_param_problem(w.group(1), ctx)
        if problem:
            ctx.expr_error(f"{fp}.withParam", flowexpr.ExprError(problem, w.start(1), param))
        return
    m = _WITH_PARAM.fullmatch(param) if isinstance(param, str) else None
    argo = _ARGO_RESULT.fullmatch(param) if isinstance(param, str) else None
    if m is None:
        hint = (f" (Argo's task output is the flow's output here, its pod's termination message: "
                f'"{{{{outputs.{argo.group(1)}}}}}")' if argo else "")
        ctx.error(f"{fp}.withParam", common.invalid(param, 'must be "{{outputs.<flow>}}": the output of an '
                                                           'earlier flow, a JSON list, or "{{outputs.<flow>.<field>}}"'
                                                           ": a list in its JSON (or, in the exit handler, "
                                                           f'"{{{{workflow.failures}}}}"){hint}'))
    else:
        ctx.refs.append(_Ref(m.group(1), f"{fp}.withParam", f"{fp}.withParam", m.start(1), param))


def _loops_over_failures(f: Obj) -> bool:
    """Whether flow `f` loops over `{{workflow.failures}}` (its items are failures, whose fields are known)."""
    w = _WITH_PARAM_WORKFLOW.fullmatch(f["withParam"]) if isinstance(f.get("withParam"), str) else None
    return w is not None and w.group(1) == "workflow.failures"


def _workflow_param_problem(ref: str, ctx: _Ctx) -> str:
    """What is wrong with `withParam: "{{<ref>}}"`, `ref` a `workflow…` reference ("" if nothing): only the exit
    handler reads the JobFlow's, and only `workflow.failures` is a list to loop over."""
    path = ref.split(".")[1:]
    if not path:
        return "workflow needs a name: withParam loops over workflow.failures"
    problem = _ref_problem("workflow", tuple(path), ctx) or flowsyntax.workflow_problem(path)
    if problem:
        return problem
    if path != ["failures"]:
        return (f"withParam needs a JSON list: {{{{{ref}}}}} is not one (loop over workflow.failures, "
                "one item per failed flow)")
    return ""


def _repeat(rep: Any, ctx: _Ctx) -> None:
    path = f"{ctx.fp}.repeat"
    if rep is None:
        return
    if not isinstance(rep, dict):
        ctx.error(path, common.type_error(rep, "object"))
        return
    if ctx.loop:
        ctx.error(path, "repeat cannot be combined with withItems or withParam")
    if rep.get("limit") is None:
        ctx.error(f"{path}.limit", common.REQUIRED + f": at most how many times to run ({REPEAT_LIMIT[0]}.."
                                                     f"{REPEAT_LIMIT[1]})")
    else:
        common.check_int(rep, "limit", f"{path}.limit", ctx.errs, *REPEAT_LIMIT)
    if rep.get("until") in (None, ""):
        ctx.error(f"{path}.until", common.REQUIRED + ": the condition that ends the repetition (it may read "
                                                     "the flow's own output and iteration)")
    else:
        _condition(rep["until"], f"{path}.until", ctx, own_output=True)


def _written_duration(value: Any) -> str:
    """A duration as the user wrote it, with its unit when it was a bare number of seconds (5, "5" -> 5s)."""
    text = str(value).strip()
    try:
        float(text)
    except ValueError:
        return text
    return f"{text}s"


def _retry(retry: Any, path: str, errs: list[FieldError]) -> None:
    if retry is None:
        return
    if not isinstance(retry, dict):
        errs.append(FieldError(path, common.type_error(retry, "object")))
        return
    if retry.get("limit") is None:
        errs.append(FieldError(f"{path}.limit", common.REQUIRED + f": how many times to re-run a failed job "
                                                                  f"({RETRY_LIMIT[0]}..{RETRY_LIMIT[1]})"))
    else:
        limit = flow.retry_limit(retry["limit"])
        if limit is None:
            errs.append(FieldError(f"{path}.limit", common.type_error(retry["limit"], "integer") + ' (or a string of '
                                   'digits, as "2")'))
        else:
            common.check_int({"limit": limit}, "limit", f"{path}.limit", errs, *RETRY_LIMIT)
    backoff = retry.get("backoff")
    if backoff is None:
        return
    if not isinstance(backoff, dict):
        errs.append(FieldError(f"{path}.backoff", common.type_error(backoff, "object")))
        return
    duration = _duration(backoff, "duration", f"{path}.backoff", errs)
    _duration(backoff, "cap", f"{path}.backoff", errs)       # (shorter than duration: every wait is the cap)
    total = _duration(backoff, "maxDuration", f"{path}.backoff", errs)
    if duration is not None and total is not None and total < duration:
        errs.append(FieldError(f"{path}.backoff.maxDuration", common.invalid(
            backoff["maxDuration"], f"must not be shorter than duration ({_written_duration(backoff['duration'])}): "
                                    "no retry could ever start")))
    factor = backoff.get("factor")
    if factor is not None and flow.backoff_factor(factor) is None:
        errs.append(FieldError(f"{path}.backoff.factor", common.invalid(
            factor, f"must be a number from 1 to {flow.MAX_BACKOFF_FACTOR:g}")))


def _duration(obj: Obj, key: str, path: str, errs: list[FieldError]) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    seconds = flow.backoff_seconds(value)
    if seconds is None:
        errs.append(FieldError(f"{path}.{key}", common.invalid(
            value, 'must be a non-negative duration such as "10s", "1m30s" or "500ms", or seconds ("5"), '
                   'at most 2562047h (Go\'s longest)')))
    return seconds


def _patch(patch: Any, ctx: _Ctx) -> None:
    """Volcano's `patch.jobSpec`: the shape apply_patch needs, and the placeholders it uses."""
    path = f"{ctx.fp}.patch"
    if patch is None:
        return
    if not isinstance(patch, dict):
        ctx.error(path, common.type_error(patch, "object"))
        return
    spec = patch.get("jobSpec")
    if spec is None:
        return
    path += ".jobSpec"
    if not isinstance(spec, dict):
        ctx.error(path, common.type_error(spec, "object"))
        return
    for key, minimum in (("minAvailable", 0), ("maxRetry", 0), ("ttlSecondsAfterFinished", 0), ("minSuccess", 1)):
        common.check_int(spec, key, f"{path}.{key}", ctx.errs, minimum=minimum)
    for key in ("queue", "schedulerName", "priorityClassName"):
        common.check_type(spec, key, f"{path}.{key}", ctx.errs, str, "string")
    if not flowtemplate.PLACEHOLDER.search(str(spec.get("runningEstimate"))):   # (else known when the flow runs)
        vcjob.check_running_estimate(spec, f"{path}.runningEstimate", ctx.errs)
    common.check_type(spec, "policies", f"{path}.policies", ctx.errs, list, "array")
    _patch_list(spec, "tasks", "name", path, ctx.errs)
    _patch_list(spec, "volumes", "mountPath", path, ctx.errs)
    plugins = common.check_type(spec, "plugins", f"{path}.plugins", ctx.errs, dict, "object")
    for name, args in (plugins or {}).items():
        for e in common.string_array_errors(args, f"{path}.plugins.{name}", crd=True):
            ctx.error(e.path, e.message)
    for placeholder, where in sorted(flowtemplate.placeholder_paths(spec, path).items()):
        root, *rest = placeholder.split(".")
        problem = _placeholder_problem(placeholder, ctx)
        if not problem and root == "outputs" and rest[0] == ctx.name and not ctx.repeat:
            problem = "a flow's patch cannot read its own output (it has not run yet; in a repeat it is the " \
                      "previous iteration's)"
        if problem:
            ctx.errs.append(FieldError(where, f'flow "{ctx.name}": {problem}',
                                       offset=_placeholder_offset(spec, where[len(path):], placeholder)))
        elif root == "outputs" and rest[0] != ctx.name:   # (a repeat's own: the previous iteration's)
            ctx.refs.append(_Ref(rest[0], path, path, -2, placeholder))
        elif root == "outcomes":
            ctx.refs.append(_Ref(rest[0], path, path, -2, placeholder, edgeless=True))


def _placeholder_offset(spec: Obj, field: str, placeholder: str) -> int | None:
    """Where `{{placeholder}}` starts in the string at `field` (`.tasks[0].template…`) of the patch: the
    CLI names its line and column."""
    value: Any = spec
    for seg in yamlio.split_path(field):
        value = value.get(seg) if isinstance(value, dict) else \
            value[int(seg)] if isinstance(value, list) and seg.isdigit() and int(seg) < len(value) else None
    if not isinstance(value, str):
        return None
    return next((m.start() for m in flowtemplate.PLACEHOLDER.finditer(value) if m.group(1) == placeholder), None)


def _patch_list(spec: Obj, key: str, match: str, path: str, errs: list[FieldError]) -> None:
    """tasks / volumes: arrays of objects, each `match` field (if given) a string, unique."""
    items = common.check_type(spec, key, f"{path}.{key}", errs, list, "array")
    seen: set[str] = set()
    for j, item in enumerate(items or []):
        ip = f"{path}.{key}[{j}]"
        if not isinstance(item, dict):
            errs.append(FieldError(ip, common.type_error(item, "object")))
            continue
        value = item.get(match)
        if key == "volumes" and value in (None, ""):
            errs.append(FieldError(f"{ip}.{match}", common.REQUIRED))
        elif value is not None and not isinstance(value, str):
            errs.append(FieldError(f"{ip}.{match}", common.type_error(value, "string")))
        elif value is not None and value in seen:
            errs.append(FieldError(f"{ip}.{match}", common.duplicate(value)))
        elif value is not None:
            seen.add(value)
        if key == "tasks":
            for field in ("replicas", "minAvailable", "maxRetry"):
                common.check_int(item, field, f"{ip}.{field}", errs, minimum=0)


# ---- the graph ---------------------------------------------------------------------------------

def _on_exit(spec: Obj, flows: list, index: dict[str, int]) -> list[FieldError]:
    handler = spec.get("onExit")
    if handler in (None, ""):
        return []
    if not isinstance(handler, str):
        return [FieldError("spec.onExit", common.type_error(handler, "string"))]
    if handler not in index:
        return [FieldError("spec.onExit", f'no flow is named "{handler}": spec.onExit must name one of spec.flows')]
    f = flows[index[handler]]
    if f.get("dependsOn") is not None:
        return [FieldError(f"spec.flows[{index[handler]}].dependsOn", f'flow "{handler}" is the exit handler '
                           "(spec.onExit): it runs after every other flow and cannot have dependsOn")]
    return []


def _graph_errors(refs: list[tuple[str | None, list[_Ref]]], index: dict[str, int],
                  handler: str | None = None) -> list[FieldError]:
    """Undefined references (every occurrence; targets with a quote hint), references to the exit
    handler, and the first cycle, as a path, reported at the field that makes its first edge."""
    errs: list[FieldError] = []
    graph: dict[str, list[str]] = {}
    edges: dict[tuple[str, str], str] = {}
    for name, flow_refs in refs:
        seen: set[tuple[str, str]] = set()
        for r in flow_refs:
            if r.edgeless and r.flow in index:
                continue   # (the exit handler reads an outcome: no edge, nothing waits)
            if r.flow not in index or (r.flow == handler and name != handler):
                if (r.flow, r.path) not in seen:
                    errs.append(FieldError(r.path, _undefined(name, r, index) if r.flow not in index else
                                           f'flow "{name}": flow "{handler}" is the exit handler (spec.onExit): '
                                           "it runs after every other flow, so no flow can depend on it or read "
                                           "its output", offset=r.pos if r.pos >= 0 else None))
                    seen.add((r.flow, r.path))
                continue
            if name is not None:
                graph.setdefault(name, [])
                if (name, r.flow) not in edges:
                    graph[name].append(r.flow)
                    edges[(name, r.flow)] = r.edge
    cycle = dag.find_cycle(graph)
    if cycle:
        errs.append(FieldError(edges[(cycle[0], cycle[1])], f"{NOT_DAG} (cycle: {' -> '.join(cycle)})"))
    return errs


def _undefined(name: str | None, r: _Ref, flows: Iterable[str]) -> str:
    hint = quote_hint(r.flow) or _closest(r.flow, flows)
    if r.pos == -1:
        return f"{NOT_DEFINED}: {r.flow}{hint}"
    if r.pos == -2:
        return f'flow "{name}": unknown flow "{r.flow}"{hint} in placeholder {{{{{r.text}}}}}'
    return f'flow "{name}": {flowexpr.ExprError(f"unknown flow {chr(34)}{r.flow}{chr(34)}{hint}", r.pos, r.text)}'


def _closest(name: str, flows: Iterable[str]) -> str:
    """` (did you mean "eval"?)` for a misspelt flow name, when one flow's name is close to it."""
    close = difflib.get_close_matches(name, [f for f in flows if isinstance(f, str)], n=1, cutoff=0.7)
    return f' (did you mean "{close[0]}"?)' if close else ""


def quote_hint(target: str) -> str:
    """` (the name contains quote characters ‘’; write targets: ['a'] or [a])` when quotes were pasted in."""
    found = "".join(dict.fromkeys(c for c in target if c in QUOTES))
    if not found:
        return ""
    bare = "".join(c for c in target if c not in QUOTES).strip()
    return f" (the name contains quote characters {found}; write targets: ['{bare}'] or [{bare}])"
