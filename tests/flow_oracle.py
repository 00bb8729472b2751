"""An oracle for the JobFlow outcome rules, written from docs/jobflow-primitives.md and
docs/jobflow-expressions.md (not from the engine): which flows run, which are Skipped and why, and the
JobFlow's final phase, given each vcjob's predetermined attempts.

It covers `targets` with `strategy: all|any`, `dependsOn.expression` (three-valued, with `Finished` and
the fan-out outcomes `AnyCompleted` … `AllFailed`), a `when` that is one of `params.<p> == '<v>'` /
`params.<p> != '<v>'`, `withItems`, `retry.limit`, and `spec.onExit`. Not covered: probes, outputs,
`withParam`, `repeat`, suspend, back-off timing.

`Oracle` is a state machine played in step with the engine: `running` is the set of vcjobs running now;
`finish(job)` ends the current attempt of `job` with its next predetermined phase. `predict` plays it to
the end in a given order. The rules, as the docs state them:

- a flow's dependency is true, false or undecided; false skips it (`DependencyNeverMet`), true starts it
  unless its `when` is false (`WhenFalse`) or the JobFlow has stopped;
- an atom `x.<Outcome>` is undecided until `x` has an outcome, except `AnyCompleted` / `AnyFailed`,
  true as soon as one item did, `AllCompleted` false as soon as one item Failed and `AllFailed` as soon
  as one Completed; a flow without items counts as one item; `strategy: any` meets a fan-out target as
  soon as one of its items completed;
- a failure (Failed or Terminated, once no retry is left) is handled while a flow that reads it is not
  Skipped and its dependency is not false; the first unhandled failure stops the JobFlow: nothing new
  starts (not even what became ready at the same moment), no retry starts (but the exit handler's),
  flows whose dependency is false are still Skipped, the others are `NotCreated`;
- the exit handler runs once every other flow has an outcome, or after a stop once none runs;
- the JobFlow is Failed after a stop or when the exit handler failed, else Succeed.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Iterable, Mapping, Sequence

FAILURES = ("Failed", "Terminated")
OUTCOMES = ("Completed", "Failed", "Terminated", "Skipped")
ALIASES = {"Succeeded": "Completed", "AnySucceeded": "AnyCompleted", "AllSucceeded": "AllCompleted"}

# ---- three-valued logic (None: undecided) --------------------------------------------------------------


def and3(values: Iterable[bool | None]) -> bool | None:
    values = list(values)
    return False if False in values else (None if None in values else True)


def or3(values: Iterable[bool | None]) -> bool | None:
    values = list(values)
    return True if True in values else (None if None in values else False)


def not3(value: bool | None) -> bool | None:
    return None if value is None else not value


# ---- dependency expressions -------------------------------------------------------------------------------

TOKEN = re.compile(r"\s*(&&|\|\||!|\(|\)|[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z]+)?)")
Expr = tuple   # ("atom", flow, outcome) | ("not", e) | ("and", l, r) | ("or", l, r)


def parse(text: str) -> Expr:
    """`!` binds tighter than `&&`, which binds tighter than `||`; a bare name means `.Completed`."""
    tokens, pos = [], 0
    while pos < len(text.rstrip()):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad expression {text!r} at {pos}")
        tokens.append(m.group(1))
        pos = m.end()
    expr, rest = _or(tokens)
    if rest:
        raise ValueError(f"trailing {rest} in {text!r}")
    return expr


def _or(tokens: list[str]) -> tuple[Expr, list[str]]:
    left, tokens = _and(tokens)
    while tokens[:1] == ["||"]:
        right, tokens = _and(tokens[1:])
        left = ("or", left, right)
    return left, tokens


def _and(tokens: list[str]) -> tuple[Expr, list[str]]:
    left, tokens = _unary(tokens)
    while tokens[:1] == ["&&"]:
        right, tokens = _unary(tokens[1:])
        left = ("and", left, right)
    return left, tokens


def _unary(tokens: list[str]) -> tuple[Expr, list[str]]:
    if tokens[0] == "!":
        inner, rest = _unary(tokens[1:])
        return ("not", inner), rest
    if tokens[0] == "(":
        inner, rest = _or(tokens[1:])
        if rest[:1] != [")"]:
            raise ValueError("missing )")
        return inner, rest[1:]
    flow, _, outcome = tokens[0].partition(".")
    outcome = outcome or "Completed"
    return ("atom", flow, ALIASES.get(outcome, outcome)), tokens[1:]


def atoms(expr: Expr) -> set[str]:
    if expr[0] == "atom":
        return {expr[1]}
    return set().union(*(atoms(e) for e in expr[1:]))


def evaluate(expr: Expr, fact: Callable[[str, str], bool | None]) -> bool | None:
    kind = expr[0]
    if kind == "atom":
        return fact(expr[1], expr[2])
    if kind == "not":
        return not3(evaluate(expr[1], fact))
    values = [evaluate(e, fact) for e in expr[1:]]
    return and3(values) if kind == "and" else or3(values)


WHEN = re.compile(r"^\s*params\.([A-Za-z0-9_-]+)\s*(==|!=)\s*'([^']*)'\s*$")


def when_holds(when: str | None, params: Mapping[str, str]) -> bool:
    if when is None:
        return True
    m = WHEN.match(when)
    if not m:
        raise ValueError(f"the oracle only reads params.<p> == / != '<v>', not {when!r}")
    equal = params[m.group(1)] == m.group(3)
    return equal if m.group(2) == "==" else not equal


# ---- the run ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Flow:
    name: str
    kind: str                       # "none", "all", "any", "expression"
    targets: tuple[str, ...]
    expr: Expr | None
    when: str | None
    items: int | None               # None: not a fan-out
    retry: int
    exit: bool
    state: str = "Pending"          # Pending, Running, Completed, Failed, Terminated, Skipped, NotCreated
    reason: str = ""                # for Skipped: DependencyNeverMet or WhenFalse
    item_outcomes: list = dataclasses.field(default_factory=list)   # per item: None while it runs

    @property
    def reads(self) -> set[str]:
        return atoms(self.expr) if self.expr is not None else set(self.targets)

    @property
    def finished(self) -> bool:
        return self.state in OUTCOMES


@dataclasses.dataclass(frozen=True)
class Result:
    states: dict[str, str]          # flow -> Completed, Failed, Terminated, Skipped or NotCreated
    reasons: dict[str, str]         # Skipped flow -> DependencyNeverMet or WhenFalse
    phase: str                      # Succeed or Failed
    created: frozenset[str]         # every vcjob created
    stopped: bool                   # an unhandled failure stopped the JobFlow


class Oracle:
    def __init__(self, flows: Sequence[dict], attempts: Mapping[str, Sequence[str]], on_exit: str | None = None,
                 params: Mapping[str, str] | None = None, name: str = "jf"):
        self.name = name
        self.params = dict(params or {})
        self.attempts = attempts                    # vcjob -> the phases its attempts end in (the last repeats)
        self.tries: dict[str, int] = {}             # vcjob -> attempts ended so far
        self.running: set[str] = set()
        self.created: set[str] = set()
        self.stopped = False
        self.flows: dict[str, Flow] = {}
        for f in flows:
            dep = f.get("dependsOn") or {}
            if "expression" in dep:
                kind, expr = "expression", parse(dep["expression"])
            elif dep.get("targets"):
                kind, expr = dep.get("strategy", "all"), None
            else:
                kind, expr = "none", None
            items = len(f["withItems"]) if "withItems" in f else None
            self.flows[f["name"]] = Flow(f["name"], kind, tuple(dep.get("targets") or ()), expr, f.get("when"),
                                         items, int((f.get("retry") or {}).get("limit", 0)), f["name"] == on_exit)
        self._settle()

    # ---- facts about a flow --------------------------------------------------------------------------
    def items(self, flow: Flow) -> list:
        """Item outcomes (None: running); a flow without items is one item; a Skipped flow has none."""
        if flow.state == "Skipped":
            return []
        return flow.item_outcomes if flow.items is not None else [flow.state if flow.finished else None]

    def fact(self, name: str, outcome: str) -> bool | None:
        flow = self.flows[name]
        items = self.items(flow)
        if outcome in ("AnyCompleted", "AnyFailed"):
            want = outcome[3:]
            if want in items:
                return True
            return False if flow.finished else None
        if outcome == "AllCompleted" and "Failed" in items or outcome == "AllFailed" and "Completed" in items:
            return False
        if not flow.finished:
            return None
        if outcome in ("AllCompleted", "AllFailed"):
            return bool(items) and all(o == outcome[3:] for o in items)
        if outcome == "Finished":
            return True
        return flow.state == outcome

    def dependency(self, flow: Flow) -> bool | None:
        if flow.kind == "none":
            return True
        if flow.kind == "expression":
            return evaluate(flow.expr, self.fact)
        met = [self.fact(t, "Completed") for t in flow.targets]
        if flow.kind == "all":
            return and3(met)
        return or3(or3([m, self.fact(t, "AnyCompleted")]) for m, t in zip(met, flow.targets))

    def handled(self, failed: Flow) -> bool:
        return any(failed.name in r.reads and r.state != "Skipped" and self.dependency(r) is not False
                   for r in self.flows.values() if not r.exit)

    def unhandled(self) -> list[str]:
        return [f.name for f in self.flows.values() if not f.exit and f.state in FAILURES and not self.handled(f)]

    # ---- moves ------------------------------------------------------------------------------------------
    def jobs(self, flow: Flow) -> list[str]:
        base = f"{self.name}-{flow.name}"
        return [base] if flow.items is None else [f"{base}-{i}" for i in range(flow.items)]

    def _start(self, flow: Flow) -> None:
        flow.state = "Running"
        flow.item_outcomes = [None] * (flow.items or 0)
        for job in self.jobs(flow):
            self.running.add(job)
            self.created.add(job)
        if flow.items == 0:
            flow.state = "Completed"

    def _skip(self, flow: Flow, reason: str) -> None:
        flow.state, flow.reason = "Skipped", reason

    def next_phase(self, job: str) -> str:
        phases = self.attempts.get(job) or ["Completed"]
        return phases[min(self.tries.get(job, 0), len(phases) - 1)]

    def finish(self, job: str) -> None:
        """The current attempt of `job` ends in its next predetermined phase."""
        assert job in self.running, job
        phase = self.next_phase(job)
        self.tries[job] = self.tries.get(job, 0) + 1
        flow = self._flow_of(job)
        if phase in FAILURES and self.tries[job] <= flow.retry and (flow.exit or not self.stopped):
            return                                   # deleted and created again after the back-off
        self.running.discard(job)
        if flow.items is None:
            flow.state = phase
        else:
            flow.item_outcomes[int(job.rsplit("-", 1)[1])] = phase
            if None not in flow.item_outcomes:
                outcomes = flow.item_outcomes
                flow.state = ("Completed" if all(o == "Completed" for o in outcomes)
                              else "Failed" if "Failed" in outcomes else "Terminated")
        self._settle()

    def _flow_of(self, job: str) -> Flow:
        for flow in self.flows.values():
            if job in self.jobs(flow):
                return flow
        raise KeyError(job)

    def _settle(self) -> None:
        pending = lambda: [f for f in self.flows.values() if not f.exit and f.state == "Pending"]   # noqa: E731
        while True:
            never = [f for f in pending() if self.dependency(f) is False]
            for f in never:
                self._skip(f, "DependencyNeverMet")
            if never:
                continue
            self.stopped = self.stopped or bool(self.unhandled())
            if self.stopped:
                break
            ready = [f for f in pending() if self.dependency(f) is True]
            whens = [f for f in ready if not when_holds(f.when, self.params)]
            for f in whens:
                self._skip(f, "WhenFalse")
            if whens:
                continue
            for f in ready:
                self._start(f)
            if not ready:
                break
        exit_flow = next((f for f in self.flows.values() if f.exit), None)
        others = [f for f in self.flows.values() if not f.exit]
        if exit_flow is not None and exit_flow.state == "Pending" and (
                all(f.finished for f in others) or (self.stopped and not any(f.state == "Running" for f in others))):
            if when_holds(exit_flow.when, self.params):
                self._start(exit_flow)
            else:
                self._skip(exit_flow, "WhenFalse")

    # ---- the end ----------------------------------------------------------------------------------------
    def result(self) -> Result:
        assert not self.running, f"still running: {sorted(self.running)}"
        states = {n: ("NotCreated" if f.state == "Pending" else f.state) for n, f in self.flows.items()}
        exit_failed = any(f.exit and f.state in FAILURES for f in self.flows.values())
        assert self.stopped or all(s in OUTCOMES for s in states.values()), states
        return Result(states, {n: f.reason for n, f in self.flows.items() if f.state == "Skipped"},
                      "Failed" if self.stopped or exit_failed else "Succeed", frozenset(self.created), self.stopped)


def predict(flows: Sequence[dict], attempts: Mapping[str, Sequence[str]], on_exit: str | None = None,
            params: Mapping[str, str] | None = None, pick: Callable[[list[str]], str] = min) -> Result:
    """Plays the run to its end, finishing the vcjob `pick` chooses among those running each time."""
    oracle = Oracle(flows, attempts, on_exit, params)
    for _ in range(10_000):
        if not oracle.running:
            return oracle.result()
        oracle.finish(pick(sorted(oracle.running)))
    raise AssertionError("the run does not end")
