"""Which flows of a JobFlow may start now: one pure decision per flow, over facts about other flows.

`decide(fd, plan, facts)` looks at a flow that has not started: its dependency (plan.FlowDef.dependency,
one flowexpr tree for targets, strategy, probes, expression and implicit output reads) evaluated
three-valued over what is known of the flows it reads (`facts(name)`: flowexpr facts, empty while a
flow waits or runs):
- True -> READY (its `when`, loop and template are the engine's business);
- False -> SKIPPED: the dependency can never hold (never waits forever); `skip_message` says why in
  the terms of the spec (targets, strategy, probe, or the expression as written);
- None -> WAITING, naming the flows that are not finished yet.
A flow that names an undefined flow, sits on a cycle, or is malformed is BLOCKED with the reason.

Volcano's contract, kept for plain flows: a target is met when its vcjob is `Completed` exactly
(`Completing` is not enough); no `dependsOn`, or `targets: []`, is ready at once; a probe entry whose
`taskName` is none of the target's tasks is ignored. Duplicate flow names (rejected at admission)
are treated as one flow: the first entry counts.

`evaluate(flows, observed)` is the same decision over Volcano's simple view — flow name -> the phase
of its vcjob — kept for tables and tools. Pure: no I/O, no clock.
"""
from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vclite.api import batch, flowexpr, flowsyntax
from vclite.controllers.jobflow import plan as plan_mod

Obj = dict[str, Any]
Observed = Mapping[str, str]
Facts = Callable[[str], frozenset[str]]
JP, O = batch.JobPhase, flowexpr.Outcome
NO_FACTS: frozenset[str] = frozenset()


class State(enum.StrEnum):
    CREATED = "Created"    # the flow has started (its vcjob exists)
    READY = "Ready"        # every dependency is met: start it now
    WAITING = "Waiting"    # some dependency is not decided yet
    BLOCKED = "Blocked"    # the flow can never run (undefined name, cycle, malformed field)
    SKIPPED = "Skipped"    # its dependency can never hold


@dataclasses.dataclass(frozen=True)
class Verdict:
    flow: str
    state: State
    waiting_for: tuple[str, ...] = ()   # WAITING: flows not finished yet that the dependency reads
    undefined: tuple[str, ...] = ()     # BLOCKED: names that are no flow
    cycle: tuple[str, ...] = ()         # BLOCKED: the cycle this flow is on, as a path
    message: str = ""                   # BLOCKED (malformed) / SKIPPED: why


@dataclasses.dataclass(frozen=True)
class DependencyKind:
    """One kind of dependency and the flowexpr atoms it contributes (documentation and tests)."""

    name: str
    applies: Callable[[Obj], bool]
    atoms: str


DEPENDENCY_KINDS: tuple[DependencyKind, ...] = (
    DependencyKind("targets", lambda f: bool(targets(f)), "t.Completed for each target (strategy all)"),
    DependencyKind("strategy", lambda f: _dep(f).get("strategy") == "any", "t.AnyCompleted || … (strategy any)"),
    DependencyKind("probe", lambda f: bool(_dep(f).get("probe")), "probe:t.Completed when every covering entry holds"),
    DependencyKind("expression", lambda f: bool(_dep(f).get("expression")), "the expression itself"),
    DependencyKind("outputs", lambda f: bool(f.get("when") or f.get("withParam") or f.get("repeat")),
                   "x.Completed for each other flow whose output it reads (x.Finished if the "
                   "expression names x: it says which outcomes it accepts)"),
)


def _dep(flow: Obj) -> Obj:
    return flow.get("dependsOn") if isinstance(flow.get("dependsOn"), dict) else {}


def targets(flow: Obj) -> list[str]:
    return list(_dep(flow).get("targets") or [])


def distinct_flows(flows: Sequence[Obj]) -> dict[str, Obj]:
    """Flow name -> its first entry, in spec order."""
    out: dict[str, Obj] = {}
    for f in flows or []:
        out.setdefault(f.get("name", ""), f)
    return out


def graph(flows: Sequence[Obj]) -> dict[str, list[str]]:
    return {name: targets(f) for name, f in distinct_flows(flows).items()}


def blocked_verdict(fd: plan_mod.FlowDef, plan: plan_mod.Plan) -> Verdict | None:
    if fd.name in plan.undefined:
        return Verdict(fd.name, State.BLOCKED, undefined=plan.undefined[fd.name])
    if fd.name in plan.cycle:
        return Verdict(fd.name, State.BLOCKED, cycle=plan.cycle)
    if fd.name in plan.blocked:
        return Verdict(fd.name, State.BLOCKED, message=plan.blocked[fd.name])
    return None


def unfinished(fd: plan_mod.FlowDef, facts: Facts) -> tuple[str, ...]:
    """The flows `fd` reads that have not finished (spec order of its refs)."""
    return tuple(r for r in fd.refs if O.FINISHED not in _closed(facts(r)))


def _closed(f: frozenset[str]) -> frozenset[str]:
    return f | {O.FINISHED} if f & flowexpr.FINAL else f


def decide(fd: plan_mod.FlowDef, plan: plan_mod.Plan, facts: Facts) -> Verdict:
    """The verdict for a flow that has not started."""
    blocked = blocked_verdict(fd, plan)
    if blocked is not None:
        return blocked
    if fd.dependency is None:
        return Verdict(fd.name, State.READY)
    value = flowexpr.evaluate_depends(fd.dependency, {r: facts(r) for r in fd.atoms})
    if value is True:
        return Verdict(fd.name, State.READY)
    if value is False:
        return Verdict(fd.name, State.SKIPPED, message=skip_message(fd, facts))
    return Verdict(fd.name, State.WAITING, waiting_for=unfinished(fd, facts))


def skip_message(fd: plan_mod.FlowDef, facts: Facts) -> str:
    """Why `fd`'s dependency can never hold, in the terms the user wrote: its targets (strategy, probe)
    when they can no longer be met, else its `dependsOn.expression`."""
    targets = tuple(dict.fromkeys(fd.targets))
    dead = {t: why for t in targets if (why := _dead_target(fd, t, facts))}
    if fd.strategy is plan_mod.Strategy.ANY and len(dead) < len(targets):
        dead = {}   # (one target can still complete: the targets are not why)
    if len(targets) == 1 and dead:
        why = dead[targets[0]]
        return f"dependsOn target {targets[0]} {why if why.startswith('finished') else 'was ' + why}"
    if dead:
        names, whys = ", ".join(targets), ", ".join(f"{t} {why}" for t, why in dead.items())
        if fd.strategy is plan_mod.Strategy.ANY:
            return f"dependsOn targets {names} (strategy any): none of them can complete: {whys}"
        return f"dependsOn targets {names} can no longer all be Completed: {whys}"
    unread = [f"{r} {word}" for r in fd.readers_of if (word := _final_word(facts(r))) and word != O.COMPLETED]
    if unread:   # (an output is read only from a Completed flow, unless the expression names it)
        return f"it reads the output of {', '.join(unread)}: an output is read only from a Completed flow"
    done = [f"{r} {_final_word(facts(r))}" for r in fd.refs if _final_word(facts(r))]
    what = f"dependsOn.expression {fd.expression}" if fd.expression is not None else "dependsOn"
    return f"{what} can never hold" + (f": {', '.join(done)}" if done else "")


def _dead_target(fd: plan_mod.FlowDef, target: str, facts: Facts) -> str:
    """Why `target` can never meet `fd`'s targets ("" while it still can): its outcome (`Skipped`), or
    for a probed target that finished before its probe held, `finished (Completed) before its probe (…) held`."""
    atom = plan_mod.probe_flow(target) if fd.probe else target
    if flowexpr.evaluate_depends(plan_mod.target_met(atom, fd.strategy), {atom: facts(atom)}) is not False:
        return ""
    seen, own = _final_word(facts(atom)), _final_word(facts(target))
    if own and seen != own:   # the target's own outcome is not what its probe saw: the probe never held
        return f"finished ({own}) before its probe ({', '.join(e.describe() for e in fd.probe)}) held"
    return seen or "finished"


def _final_word(f: frozenset[str]) -> str:
    for o in (O.COMPLETED, O.FAILED, O.TERMINATED, O.SKIPPED, O.ABORTED):
        if o in f:
            return str(o)
    return ""


# ---- Volcano's simple view: flow -> phase of its vcjob ----------------------------------------------
PHASE_FACTS: Mapping[str, frozenset[str]] = {
    JP.COMPLETED: flowexpr.outcome_facts(O.COMPLETED),
    JP.FAILED: flowexpr.outcome_facts(O.FAILED),
    JP.TERMINATED: flowexpr.outcome_facts(O.TERMINATED),
}


def evaluate(flows: Sequence[Obj], observed: Observed) -> list[Verdict]:
    """One verdict per distinct flow name, in spec order; a flow with a vcjob is CREATED. Probes are
    not checked here (no target job is known): a probed target counts by its phase."""
    plan = plan_mod.compile_spec({"flows": list(flows or [])})

    def facts(name: str) -> frozenset[str]:
        if name.startswith(plan_mod.PROBE_PREFIX):
            name = name[len(plan_mod.PROBE_PREFIX):]
        return PHASE_FACTS.get(observed.get(name, ""), NO_FACTS)

    out = []
    for name, fd in plan.flows.items():
        out.append(Verdict(name, State.CREATED) if name in observed else decide(fd, plan, facts))
    return out


def flows_to_create(flows: Sequence[Obj], observed: Observed) -> list[str]:
    """The flows whose vcjob should be created now, in spec order."""
    return [v.flow for v in evaluate(flows, observed) if v.state is State.READY]


# ---- facts the engine derives ------------------------------------------------------------------------
def fanout_facts(final: str | None, n: int, done: int, completed: int, failed: int) -> frozenset[str]:
    """flowexpr.outcome_facts for a fan-out flow, from counts instead of a list of item outcomes."""
    facts = {flowexpr.FANOUT}
    if completed:
        facts.add(O.ANY_COMPLETED)
    if failed:
        facts.add(O.ANY_FAILED)
    if n and done == n:
        if completed == n:
            facts.add(O.ALL_COMPLETED)
        if failed == n:
            facts.add(O.ALL_FAILED)
    if final is not None:
        facts |= {str(final), O.FINISHED}
    return frozenset(str(f) for f in facts)


def closure(f: frozenset[str]) -> frozenset[str]:
    if not f:
        return f
    known = set(f)
    if known & flowexpr.FINAL:
        known.add(O.FINISHED)
        if flowexpr.FANOUT not in known:
            if O.COMPLETED in known:
                known |= {O.ANY_COMPLETED, O.ALL_COMPLETED}
            if O.FAILED in known:
                known |= {O.ANY_FAILED, O.ALL_FAILED}
    return frozenset(known)


def task_in_phase(job: Obj, task: str, phase: str) -> bool:
    """Every replica of `task` is in pod phase `phase`, by the vcjob's status.taskStatusCount."""
    spec = next((t for t in (job.get("spec") or {}).get("tasks") or [] if t.get("name") == task), None)
    if spec is None:
        return False
    counts = (((job.get("status") or {}).get("taskStatusCount") or {}).get(task) or {}).get("phase") or {}
    return int(counts.get(phase, 0) or 0) >= max(1, int(spec.get("replicas", 1) or 0))
