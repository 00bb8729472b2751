"""A JobFlow's spec compiled once into what the controller decides with: one FlowDef per distinct flow
(its dependency as a single flowexpr tree, its condition, loop, retry and patch), the reverse edges
(`dependents`, so a finished flow re-examines only the flows that wait on it) and why a flow can
never run (`blocked`).

What a flow waits on (`FlowDef.dependency`, a flowexpr dependency tree):
- `dependsOn.targets` with `strategy: all` (the default, Volcano's only rule): every target
  `Completed` (a fan-out target: all its items); with `strategy: any`: some target has a completed
  item (`AnyCompleted`) or Completed (a fan-out with no items).
- a target covered by `dependsOn.probe` (an entry whose `taskName` is one of the target's tasks) is
  met by the probe instead: its atom is the pseudo-flow `probe_flow(target)`, whose facts the
  controller derives from the probe checks (Completed when every entry holds, Failed when the target
  finished without them). A probe entry that names no target's task is ignored, as Volcano ignores
  every probe.
- `dependsOn.expression` (Argo-style `depends`): ANDed with the targets when both are given.
- implicit: the flows whose outputs the flow reads (`when`, `withParam`, `repeat.until` of other
  flows, `{{outputs.<flow>}}` in its patch), which must be finished first (`Finished`). A JobTemplate
  reading `{{outputs.<flow>}}` makes its vcjob wait at creation time (the template is not known here).

Blocked (never runs, the reason is shown): an undefined name, a dependency cycle (through any edge
kind), a malformed expression or loop, a dependency on the exit handler, or a vcjob name clash with a
loop's items (`<jobflow>-<loop>-<n>`). Admission rejects all of these; a JobFlow can still reach a
cluster whose webhook is off.

`extended` is False for a plain Volcano JobFlow (no field beyond Volcano's, probes aside): the
controller then behaves exactly as Volcano's contract says. Pure: no I/O.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vclite.api import flow, flowexpr, flowsyntax, flowtemplate
from vclite.lib import clock as clock_mod
from vclite.lib import dag

Obj = dict[str, Any]
O = flowexpr.Outcome
PROBE_PREFIX = "probe:"
PARAM_REF = re.compile(r"^\s*\{\{\s*outputs\.([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_-]+)*)\s*\}\}\s*$")   # + a path
FAILURES_REF = re.compile(r"^\s*\{\{\s*workflow\.failures\s*\}\}\s*$")   # the exit handler's withParam
NEW_FLOW_FIELDS = ("when", "withItems", "withParam", "repeat", "retry", "patch")
NEW_DEPENDS_FIELDS = ("strategy", "expression")


class Strategy(enum.StrEnum):
    ALL = "all"
    ANY = "any"


class Loop(enum.StrEnum):
    NONE = ""
    ITEMS = "withItems"
    PARAM = "withParam"
    REPEAT = "repeat"


@dataclasses.dataclass(frozen=True)
class Backoff:
    """A flow's `retry.backoff`, read as Argo's retryStrategy reads it."""

    duration: float = 0.0
    factor: float = 1.0   # (as Argo: without a factor every wait is `duration`)
    cap: float | None = None            # Argo's `cap`: the longest wait
    max_duration: float | None = None   # Argo's `maxDuration`: no retry starts later, from the first attempt

    def delay(self, retries_done: int) -> float:
        """Seconds to wait before re-creating a job that failed after `retries_done` retries."""
        try:
            d = min(self.duration * (self.factor ** retries_done), flow.MAX_BACKOFF_SECONDS)
        except OverflowError:   # factor^n beyond a float: as long as a wait can be
            d = flow.MAX_BACKOFF_SECONDS
        return min(d, self.cap) if self.cap is not None else d


def retry_refusal(limit: int, backoff: Backoff, retries_done: int, first_start: dt.datetime | None,
                  failed_at: dt.datetime | None) -> str:
    """Why a failed attempt is not retried ("": it is), with Argo's rules: `limit` retries at most, and
    with `maxDuration` no retry once that long has passed since the first attempt started, nor one whose
    back-off would end after that. Times come from the vcjobs, so a rebuilt controller decides the same."""
    attempt = retries_done + 1
    if retries_done >= limit:
        return f"attempt {attempt} failed; no retries left (limit {limit})"
    if backoff.max_duration is None or first_start is None or failed_at is None:
        return ""
    deadline = first_start + dt.timedelta(seconds=backoff.max_duration)
    limit_text = f"maxDuration {clock_mod.format_duration(backoff.max_duration)} from the first attempt " \
                 f"({clock_mod.format_time(first_start)})"
    if failed_at > deadline:
        return f"attempt {attempt} failed; not retried: {limit_text} has passed"
    wait = backoff.delay(retries_done)
    if failed_at + dt.timedelta(seconds=wait) > deadline:
        return f"attempt {attempt} failed; not retried: a {clock_mod.format_duration(wait)} back-off would end " \
               f"after {limit_text}"
    return ""


@dataclasses.dataclass(frozen=True)
class ProbeEntry:
    kind: str          # taskStatus | httpGet | tcpSocket
    task: str
    phase: str = ""    # taskStatus: the pod phase every replica of the task must be in
    port: int = 0
    path: str = ""
    header: tuple[str, str] | None = None

    def describe(self) -> str:
        if self.kind == "taskStatus":
            return f"task {self.task} {self.phase}"
        if self.kind == "httpGet":
            return f"task {self.task} answers HTTP GET :{self.port}{self.path or '/'}"
        return f"task {self.task} accepts TCP :{self.port}"


@dataclasses.dataclass(frozen=True)
class FlowDef:
    name: str
    index: int
    targets: tuple[str, ...] = ()
    strategy: Strategy = Strategy.ALL
    dependency: flowexpr.Expr | None = None   # None: no dependency at all (ready at once)
    expression: flowexpr.Expr | None = None   # dependsOn.expression as written (part of dependency)
    probe: tuple[ProbeEntry, ...] = ()
    when: flowexpr.Expr | None = None
    loop: Loop = Loop.NONE
    items: tuple[Any, ...] = ()               # withItems
    param_from: str = ""                      # withParam: the flow whose output lists the items
    param_path: tuple[str, ...] = ()          # withParam: where in that output (JSON) the list is: fields, indexes
    over_failures: bool = False               # withParam "{{workflow.failures}}" (the exit handler): one item each
    until: flowexpr.Expr | None = None        # repeat
    limit: int = 1                            # repeat: at most this many iterations
    retry_limit: int = 0
    retried: bool = False                     # a `retry` is given (limit 0 included)
    backoff: Backoff = Backoff()
    patch: Obj | None = None
    exit: bool = False
    refs: tuple[str, ...] = ()                # every flow this one waits on, spec order, no duplicates
    readers_of: tuple[str, ...] = ()          # the refs waited on only because their output is read
    atoms: tuple[str, ...] = ()               # the flows (and probe pseudo-flows) its dependency tree reads
    simple: bool = False                      # dependency is only targets (all/any), no probe: counted
    error: str = ""                           # a malformed field: the flow is blocked

    @property
    def fanout(self) -> bool:
        return self.loop in (Loop.ITEMS, Loop.PARAM)

    @property
    def written(self) -> str:
        """Its dependency in the terms the user wrote (what status messages show, never the compiled
        tree): `targets a, b` (`any of targets a, b`, `… (probed)`), the expression as written on one
        line, and `reads the output of c` for the flows it waits for only because it reads them."""
        parts = []
        targets = list(dict.fromkeys(self.targets))
        if targets:
            parts.append(("any of targets " if self.strategy is Strategy.ANY and len(targets) > 1 else
                          "targets " if len(targets) > 1 else "target ") + ", ".join(targets)
                         + (" (probed)" if self.probe else ""))
        if self.expression is not None:
            parts.append(str(self.expression))
        if self.readers_of and not self.exit:
            parts.append("reads the output of " + ", ".join(self.readers_of))
        return "; ".join(parts)

    def probes_for(self, target: str, tasks: Sequence[str]) -> tuple[ProbeEntry, ...]:
        return tuple(p for p in self.probe if p.task in tasks) if target in self.targets else ()


@dataclasses.dataclass(frozen=True)
class Plan:
    flows: Mapping[str, FlowDef]              # spec order (the exit handler last)
    dependents: Mapping[str, tuple[str, ...]]
    blocked: Mapping[str, str]                # flow -> why it can never run
    undefined: Mapping[str, tuple[str, ...]]  # flow -> targets that name no flow (a kind of blocked)
    cycle: tuple[str, ...]
    params: Mapping[str, str]
    exit: str = ""
    extended: bool = False


def probe_flow(target: str) -> str:
    """The pseudo-flow whose facts say whether `target`'s probe entries held."""
    return PROBE_PREFIX + target


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _probe_entries(probe: Any) -> tuple[ProbeEntry, ...]:
    if not isinstance(probe, dict):
        return ()
    out: list[ProbeEntry] = []
    for e in probe.get("taskStatusList") or []:
        if isinstance(e, dict) and e.get("taskName"):
            out.append(ProbeEntry("taskStatus", str(e["taskName"]), phase=str(e.get("phase") or "Running")))
    for e in probe.get("httpGetList") or []:
        if isinstance(e, dict) and e.get("taskName"):
            h = e.get("httpHeader") or {}
            header = (str(h["name"]), str(h.get("value", ""))) if isinstance(h, dict) and h.get("name") else None
            out.append(ProbeEntry("httpGet", str(e["taskName"]), port=int(e.get("port") or 0),
                                  path=str(e.get("path") or "/"), header=header))
    for e in probe.get("tcpSocketList") or []:
        if isinstance(e, dict) and e.get("taskName"):
            out.append(ProbeEntry("tcpSocket", str(e["taskName"]), port=int(e.get("port") or 0)))
    return tuple(out)


def _duration(value: Any, path: str) -> float:
    if value in (None, ""):
        return 0.0
    seconds = flow.backoff_seconds(value)
    if seconds is None:
        raise ValueError(f"{path}: invalid duration {value!r}")
    return seconds


def _retry(spec: Any) -> tuple[int, Backoff]:
    if not isinstance(spec, dict):
        return 0, Backoff()
    limit = flow.retry_limit(spec.get("limit", 0))
    if limit is None or limit < 0:
        raise ValueError(f"retry.limit: must be a non-negative integer, got {spec.get('limit')!r}")
    b = spec.get("backoff") or {}
    factor = flow.backoff_factor(b.get("factor", 1))
    if factor is None:
        raise ValueError(f"retry.backoff.factor: must be a number >= 1, got {b.get('factor')!r}")
    cap, total = (_duration(b[k], f"retry.backoff.{k}") if b.get(k) not in (None, "") else None
                  for k in ("cap", "maxDuration"))
    return limit, Backoff(_duration(b.get("duration"), "retry.backoff.duration"), factor, cap, total)


def target_met(flow: str, strategy: Strategy) -> flowsyntax.Node:
    """When a target meets its dependent: Completed (a fan-out: every item); with strategy any, also once
    some item Completed (a fan-out with no items is Completed, and has no item)."""
    if strategy is Strategy.ANY:
        return flowsyntax.Or((flowsyntax.Atom(flow, O.ANY_COMPLETED), flowsyntax.Atom(flow, O.COMPLETED)))
    return flowsyntax.Atom(flow, O.COMPLETED)


def _dependency(targets: Sequence[str], strategy: Strategy, probe: Sequence[ProbeEntry],
                expression: flowexpr.Expr | None, implicit: Sequence[str]) -> flowexpr.Expr | None:
    """One dependency tree: targets (probed ones through their pseudo-flow) AND expression AND the
    outputs read (`implicit`): a flow the expression names need only have finished (the expression
    says which outcomes it accepts); any other must have Completed, as Argo requires of a task whose
    output is read — a failed or skipped flow's output is not read by accident."""
    parts: list[flowsyntax.Node] = []
    if targets:
        # Which target a probe entry covers is known only from the target job's tasks, so with a probe
        # every target atom reads the target's pseudo-flow; the controller gives it the target's own
        # facts when no entry covers it.
        met = [target_met(probe_flow(t) if probe else t, strategy) for t in dict.fromkeys(targets)]
        if strategy is Strategy.ANY:
            parts.append(flowsyntax.Or(tuple(a for node in met for a in node.operands)))
        else:
            parts.append(met[0] if len(met) == 1 else flowsyntax.And(tuple(met)))
    if expression is not None:
        parts.append(expression.root)
    named = flowexpr.flow_refs(expression) if expression is not None else frozenset()
    parts += [flowsyntax.Atom(f, O.FINISHED if f in named else O.COMPLETED) for f in implicit]
    if not parts:
        return None
    root = parts[0] if len(parts) == 1 else flowsyntax.And(tuple(parts))
    return flowsyntax.Expr(flowsyntax.DEPENDS, flowexpr.unparse(root), root)


def _compile_flow(f: Obj, index: int, exit_name: str) -> FlowDef:
    name = str(f.get("name", ""))
    dep = f.get("dependsOn") if isinstance(f.get("dependsOn"), dict) else {}
    targets = tuple(_str_list(dep.get("targets")))
    base = FlowDef(name, index, targets=targets, exit=name == exit_name)
    try:
        strategy = Strategy(dep.get("strategy") or "all")
        expression = flowexpr.parse_depends(dep["expression"]) if dep.get("expression") else None
        when = flowexpr.parse_when(f["when"]) if f.get("when") not in (None, "") else None
        probe = _probe_entries(dep.get("probe"))
        loop, items, param_from, until, limit = _loop(f, name, base.exit)
        param_path = _param_path(f) if param_from else ()
        retry_limit, backoff = _retry(f.get("retry"))
        patch = (f.get("patch") or {}).get("jobSpec") if isinstance(f.get("patch"), dict) else None
    except (flowexpr.ExprError, ValueError, TypeError) as e:
        return dataclasses.replace(base, error=flowsyntax.one_line(e))
    implicit = [r for r in sorted(_output_refs(when, until, param_from) | _patch_refs(patch)) if r != name]
    named = sorted(flowexpr.flow_refs(expression)) if expression else []
    declared = [*targets, *named]
    refs = tuple(dict.fromkeys([*declared, *implicit]))
    # Targets that must be Completed anyway (all of them, unprobed): reading their output adds nothing. With
    # strategy any or a probe, a target whose output is read must still complete before the flow starts.
    covered = set(targets) if strategy is Strategy.ALL and not probe else set()
    reads = [r for r in implicit if r not in covered]
    # (the exit handler runs once every other flow has finished: what it reads is final, never waited for)
    dependency = _dependency(targets, strategy, probe, expression, [] if base.exit else reads)
    atoms = tuple(dict.fromkeys(n.flow for n in flowexpr.nodes(dependency) if isinstance(n, flowsyntax.Atom))) \
        if dependency is not None else ()
    return dataclasses.replace(
        base, strategy=strategy, expression=expression, probe=probe, when=when, loop=loop, items=items,
        param_from=param_from, param_path=param_path, over_failures=loop is Loop.PARAM and not param_from,
        until=until, limit=limit,
        retry_limit=retry_limit, retried=isinstance(f.get("retry"), dict), backoff=backoff, patch=patch,
        refs=refs, readers_of=tuple(r for r in reads if r not in named), dependency=dependency, atoms=atoms,
        simple=bool(targets) and not probe and expression is None and not reads)


def _loop(f: Obj, name: str, exit: bool = False) -> tuple[Loop, tuple, str, flowexpr.Expr | None, int]:
    """A flow's loop: its kind, withItems' items, the flow a withParam reads ("" for `{{workflow.failures}}`, which
    only the exit handler (`exit`) may loop over), repeat's condition and limit."""
    given = [k for k in ("withItems", "withParam", "repeat") if f.get(k) is not None]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)} cannot be combined on one flow")
    if not given:
        return Loop.NONE, (), "", None, 1
    if given[0] == "withItems":
        if not isinstance(f["withItems"], list):
            raise ValueError("withItems: must be a list")
        return Loop.ITEMS, tuple(f["withItems"]), "", None, 1
    if given[0] == "withParam":
        if FAILURES_REF.match(str(f["withParam"])):
            if not exit:
                raise ValueError("withParam: {{workflow.failures}} is read by the exit handler (spec.onExit) only")
            return Loop.PARAM, (), "", None, 1
        m = PARAM_REF.match(str(f["withParam"]))
        if not m:
            raise ValueError(f'withParam: must be "{{{{outputs.<flow>}}}}", got {f["withParam"]!r}')
        if m.group(1) == name:
            raise ValueError("withParam: a flow cannot loop over its own output")
        return Loop.PARAM, (), m.group(1), None, 1
    rep = f["repeat"]
    if not isinstance(rep, dict) or not rep.get("until"):
        raise ValueError("repeat: needs until (a condition)")
    limit = rep.get("limit", 1)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"repeat.limit: must be an integer >= 1, got {limit!r}")
    return Loop.REPEAT, (), "", flowexpr.parse_when(rep["until"]), limit


def _param_path(f: Obj) -> tuple[str, ...]:
    """Where a withParam's list is in its flow's output: `{{outputs.gen.items.0}}` -> ("items", "0")."""
    m = PARAM_REF.match(str(f["withParam"]))
    return tuple(m.group(2).split(".")[1:]) if m else ()


def _output_refs(when: flowexpr.Expr | None, until: flowexpr.Expr | None, param_from: str) -> set[str]:
    out = set(flowexpr.flow_refs(when)) if when is not None else set()
    if until is not None:
        out |= flowexpr.flow_refs(until)
    if param_from:
        out.add(param_from)
    return out


def _patch_refs(patch: Obj | None) -> set[str]:
    """Flows whose output a patch reads (`{{outputs.<flow>}}`)."""
    return {n.split(".")[1] for n in flowtemplate.placeholders(patch or {})
            if n.startswith("outputs.") and len(n.split(".")) > 1}


def is_extended(spec: Obj) -> bool:
    """Whether a JobFlow uses anything beyond Volcano's fields (probes are Volcano's)."""
    if ((spec.get("arguments") or {}).get("parameters") if isinstance(spec.get("arguments"), dict) else None) \
            or spec.get("onExit"):
        return True
    for f in spec.get("flows") or []:
        if not isinstance(f, dict):
            continue
        dep = f.get("dependsOn") if isinstance(f.get("dependsOn"), dict) else {}
        if any(f.get(k) is not None for k in NEW_FLOW_FIELDS) or any(dep.get(k) for k in NEW_DEPENDS_FIELDS):
            return True
    return False


def compile_spec(spec: Obj | None, jobflow: str = "") -> Plan:
    spec = spec if isinstance(spec, dict) else {}
    exit_name = str(spec.get("onExit") or "")
    raw: dict[str, Obj] = {}
    for f in spec.get("flows") or []:
        if isinstance(f, dict):
            raw.setdefault(str(f.get("name", "")), f)
    if exit_name and exit_name not in raw:
        raw[exit_name] = {"name": exit_name}
    elif exit_name:   # the exit handler goes last
        raw[exit_name] = raw.pop(exit_name)
    flows = {n: _compile_flow(f, i, exit_name) for i, (n, f) in enumerate(raw.items())}
    blocked: dict[str, str] = {}
    undefined: dict[str, tuple[str, ...]] = {}
    for fd in flows.values():
        if fd.error:
            blocked[fd.name] = fd.error
        missing = tuple(r for r in fd.refs if r not in flows)
        if missing:
            undefined[fd.name] = missing
        if fd.exit and fd.dependency is not None:
            blocked[fd.name] = "the exit handler (spec.onExit) cannot have dependencies"
        elif exit_name and exit_name in fd.refs and not fd.exit:
            blocked[fd.name] = f"flows cannot depend on the exit handler {exit_name!r}"
    _name_clashes(flows, blocked)
    graph = {n: [r for r in fd.refs if r in flows] for n, fd in flows.items()}
    cycle = tuple(dag.find_cycle(graph) or ())
    dependents: dict[str, list[str]] = {n: [] for n in flows}
    for n, refs in graph.items():
        for r in refs:
            dependents[r].append(n)
    return Plan(flows, {n: tuple(d) for n, d in dependents.items()}, blocked, undefined, cycle,
                flowtemplate.arguments(spec), exit_name, is_extended(spec))


def _name_clashes(flows: Mapping[str, FlowDef], blocked: dict[str, str]) -> None:
    """`<loop>-<n>` names item/iteration n of a loop flow: no other flow may be called that."""
    loops = {n for n, fd in flows.items() if fd.loop is not Loop.NONE}
    if not loops:
        return
    for name in flows:
        stem, dash, tail = name.rpartition("-")
        if dash and tail.isdigit() and stem in loops:
            what = "iteration" if flows[stem].loop is Loop.REPEAT else "item"
            blocked[name] = (f"its vcjob name would clash with {what} {tail} of loop flow {stem!r} "
                             f"(<jobflow>-{stem}-{tail})")
