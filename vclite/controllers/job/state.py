"""The vcjob lifecycle as ONE table: (phase, action class) -> Transition, plus the named count rules.

Mirrors Volcano's `pkg/controllers/job/state/*.go`. A Transition names the primitive the shell runs
(KillJob with a pod retain set, KillTarget, or SyncJob), whether `status.retryCount` is bumped, and
how the phase moves afterwards: to a fixed phase, not at all, or by a count rule evaluated on the
counters the primitive leaves behind:

- `P` (Pending sync): -> Running iff spec.minAvailable <= running + succeeded + failed.
- `R` (Running sync, `state/running.go`): completion / failure / back-to-Pending by the counters.
- `S` (Restarting, `state/restarting.go`): retryCount >= maxRetry -> Failed; else Σreplicas -
  terminating >= **status**.minAvailable -> Pending; else stay.
- `drained`: -> the row's phase once terminating = pending = running = 0.

`decide` picks the row (and applies Volcano's last-retry rule: a KillJob(None) on the last retry,
retryCount >= maxRetry - 1, keeps Succeeded/Failed pods as Soft does); `apply` evaluates it on the
counters after the primitive ran. Unknown phases or actions raise ValueError. `render_markdown` /
`render_mermaid` draw the table for the docs. Volcano quirks kept on purpose (see the reference):
ResumeJob counts as a retry (issue #3067); Completed/Failed/Terminated are terminal for every action
(issue #3967); AbortJob while Restarting is not honoured (Volcano's Restarting state treats it as
"anything else": KillJob(None) with rule S).

Pure: no I/O, no client, no clock. The shell (controller.py) executes what this module decides.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Mapping

from vclite.api import batch
from vclite.api import core

Phase = batch.JobPhase
Act = batch.Action


class Primitive(enum.StrEnum):
    KILL_JOB = "KillJob"
    KILL_TARGET = "KillTarget"
    SYNC_JOB = "SyncJob"


class Retain(enum.StrEnum):
    """Which pod phases KillJob keeps (Volcano's PodRetainPhaseSoft / PodRetainPhaseNone)."""

    SOFT = "Soft"
    NONE = "None"


RETAINED_POD_PHASES: Mapping[Retain, frozenset[core.PodPhase]] = {
    Retain.SOFT: frozenset({core.PodPhase.SUCCEEDED, core.PodPhase.FAILED}),
    Retain.NONE: frozenset(),
}


class Rule(enum.StrEnum):
    STARTED = "P"
    RUNNING = "R"
    RESTARTING = "S"
    DRAINED = "drained"


# Phases a rule can lead to (for documentation diagrams).
RULE_OUTCOMES: Mapping[Rule, tuple[Phase, ...]] = {
    Rule.STARTED: (Phase.RUNNING,),
    Rule.RUNNING: (Phase.COMPLETED, Phase.FAILED, Phase.PENDING),
    Rule.RESTARTING: (Phase.FAILED, Phase.PENDING),
    Rule.DRAINED: (),  # the row's own `to`
}

ANY = "*"  # the "anything else" action class of a phase


@dataclasses.dataclass(frozen=True)
class Transition:
    primitive: Primitive
    retain: Retain | None = None      # KillJob only
    bump_retry: bool = False
    to: Phase | None = None           # fixed target; for rules P/drained the phase they lead to
    rule: Rule | None = None

    def describe(self) -> str:
        prim = f"{self.primitive}({self.retain})" if self.retain else str(self.primitive)
        parts = [prim]
        if self.bump_retry:
            parts.append("retryCount++")
        if self.rule is Rule.DRAINED:
            parts.append(f"-> {self.to} when drained")
        elif self.rule is Rule.STARTED:
            parts.append(f"-> {self.to} iff minAvailable <= running+succeeded+failed")
        elif self.rule is not None:
            parts.append(f"rule {self.rule}")
        elif self.to is not None:
            parts.append(f"-> {self.to}")
        else:
            parts.append("phase unchanged")
        return "; ".join(parts)


def _kill(retain: Retain, to: Phase | None = None, bump: bool = False, rule: Rule | None = None) -> Transition:
    return Transition(Primitive.KILL_JOB, retain, bump, to, rule)


_RESTART_TARGETS = (Act.RESTART_TASK, Act.RESTART_POD, Act.RESTART_PARTITION)


def _active_rows(phase: Phase, sync_rule: Rule) -> dict[tuple[Phase, str], Transition]:
    """Pending and Running share every row but their sync rule (`state/pending.go`, `running.go`)."""
    rows = {
        (phase, Act.RESTART_JOB): _kill(Retain.NONE, Phase.RESTARTING, bump=True),
        (phase, Act.ABORT_JOB): _kill(Retain.SOFT, Phase.ABORTING),
        (phase, Act.COMPLETE_JOB): _kill(Retain.SOFT, Phase.COMPLETING),
        (phase, Act.TERMINATE_JOB): _kill(Retain.SOFT, Phase.TERMINATING),
        (phase, ANY): Transition(Primitive.SYNC_JOB, to=Phase.RUNNING if sync_rule is Rule.STARTED else None,
                                 rule=sync_rule),
    }
    for act in _RESTART_TARGETS:
        rows[(phase, act)] = Transition(Primitive.KILL_TARGET, bump_retry=True, to=Phase.RESTARTING)
    return rows


def _build_table() -> dict[tuple[Phase, str], Transition]:
    t: dict[tuple[Phase, str], Transition] = {}
    t.update(_active_rows(Phase.PENDING, Rule.STARTED))
    t.update(_active_rows(Phase.RUNNING, Rule.RUNNING))
    t[(Phase.RESTARTING, Act.SYNC_JOB)] = Transition(Primitive.SYNC_JOB, rule=Rule.RESTARTING)
    for act in _RESTART_TARGETS:
        t[(Phase.RESTARTING, act)] = Transition(Primitive.KILL_TARGET, rule=Rule.RESTARTING)
    t[(Phase.RESTARTING, ANY)] = _kill(Retain.NONE, rule=Rule.RESTARTING)
    t[(Phase.ABORTING, Act.RESUME_JOB)] = _kill(Retain.SOFT, Phase.RESTARTING, bump=True)
    t[(Phase.ABORTING, ANY)] = _kill(Retain.SOFT, Phase.ABORTED, rule=Rule.DRAINED)
    t[(Phase.ABORTED, Act.RESUME_JOB)] = _kill(Retain.SOFT, Phase.RESTARTING, bump=True)
    t[(Phase.ABORTED, ANY)] = _kill(Retain.SOFT)
    t[(Phase.COMPLETING, ANY)] = _kill(Retain.SOFT, Phase.COMPLETED, rule=Rule.DRAINED)
    t[(Phase.TERMINATING, ANY)] = _kill(Retain.SOFT, Phase.TERMINATED, rule=Rule.DRAINED)
    for phase in (Phase.COMPLETED, Phase.FAILED, Phase.TERMINATED):
        t[(phase, ANY)] = _kill(Retain.SOFT)
    return t


TABLE: Mapping[tuple[Phase, str], Transition] = _build_table()


# ---- inputs ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TaskSummary:
    name: str
    replicas: int
    min_available: int | None = None


@dataclasses.dataclass(frozen=True)
class SpecSummary:
    """What the rules read from a job spec."""

    min_available: int = 0
    max_retry: int = batch.DEFAULT_MAX_RETRY
    min_success: int | None = None
    tasks: tuple[TaskSummary, ...] = ()

    @property
    def total(self) -> int:
        return sum(t.replicas for t in self.tasks)

    @property
    def total_task_min_available(self) -> int:
        return sum(t.replicas if t.min_available is None else t.min_available for t in self.tasks)


@dataclasses.dataclass(frozen=True)
class Counts:
    """Job status counters the rules read (after the primitive recounted them)."""

    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    retry_count: int = 0
    min_available: int = 0                                 # status.minAvailable
    task_succeeded: Mapping[str, int] = dataclasses.field(default_factory=dict)  # tasks in taskStatusCount


def summarize(spec: Mapping[str, Any]) -> SpecSummary:
    """SpecSummary of a vcjob spec dict (maxRetry 0/missing -> 3, as Volcano's webhook defaults it)."""
    tasks = tuple(TaskSummary(t.get("name", ""), int(t.get("replicas", 0) or 0),
                              None if t.get("minAvailable") is None else int(t["minAvailable"]))
                  for t in spec.get("tasks") or [])
    min_success = spec.get("minSuccess")
    return SpecSummary(int(spec.get("minAvailable", 0) or 0), int(spec.get("maxRetry") or batch.DEFAULT_MAX_RETRY),
                       None if min_success is None else int(min_success), tasks)


def counts_of(status: Mapping[str, Any]) -> Counts:
    """Counts of a vcjob status dict."""
    tsc = status.get("taskStatusCount") or {}
    return Counts(*(int(status.get(f, 0) or 0) for f in
                    ("pending", "running", "succeeded", "failed", "terminating", "unknown", "retryCount",
                     "minAvailable")),
                  task_succeeded={task: int(((st or {}).get("phase") or {}).get(core.PodPhase.SUCCEEDED, 0))
                                  for task, st in tsc.items()})


# ---- decisions ---------------------------------------------------------------------------------
# The members by value (a member is its own value's key): `Phase(x)` is a Python-level call on Python 3.11,
# a few times dearer than the lookup, and every sync resolves a phase and an action.
_PHASES = {str(p): p for p in Phase}
_ACTIONS = {str(a): a for a in Act}


def _phase(phase: Any) -> Phase:
    try:
        return _PHASES[phase]
    except (KeyError, TypeError):   # (TypeError: not hashable, so no phase either)
        raise ValueError(f"unknown job phase {phase!r}") from None


def _action(action: Any) -> Act:
    try:
        return _ACTIONS[action]
    except (KeyError, TypeError):
        raise ValueError(f"unknown action {action!r}") from None


def row(phase: Any, action: Any) -> Transition:
    """The table row for (phase, action), falling back to the phase's "anything else" row."""
    p, a = _phase(phase), _action(action)
    return TABLE.get((p, a)) or TABLE[(p, ANY)]


def decide(phase: Any, action: Any, counts: Counts, spec: SpecSummary) -> Transition:
    """The transition to execute. On the last retry (retryCount >= maxRetry - 1) KillJob keeps
    Succeeded/Failed pods even when the row asks for None (`killPods` in Volcano)."""
    t = row(phase, action)
    if t.primitive is Primitive.KILL_JOB and t.retain is Retain.NONE and counts.retry_count >= spec.max_retry - 1:
        return dataclasses.replace(t, retain=Retain.SOFT)
    return t


def decide_for(phase: Any, action: Any, status: Mapping[str, Any], spec: Callable[[], SpecSummary]) -> Transition:
    """`decide` over a vcjob's status dict; its counters and `spec()` are read only for the one row
    that needs them (KillJob without retention)."""
    t = row(phase, action)
    if t.primitive is Primitive.KILL_JOB and t.retain is Retain.NONE:
        return decide(phase, action, counts_of(status), spec())
    return t


def rule_running(counts: Counts, spec: SpecSummary) -> Phase | None:
    """Rule R (`state/running.go`)."""
    total = spec.total
    if total == 0:
        return None
    if spec.min_success is not None and counts.succeeded >= spec.min_success:
        return Phase.COMPLETED
    if counts.succeeded + counts.failed == total:
        if spec.min_available >= spec.total_task_min_available:
            for task in spec.tasks:
                if task.min_available is None or task.name not in counts.task_succeeded:
                    continue
                if counts.task_succeeded[task.name] < task.min_available:
                    return Phase.FAILED
        if spec.min_success is not None and counts.succeeded < spec.min_success:
            return Phase.FAILED
        return Phase.COMPLETED if counts.succeeded >= spec.min_available else Phase.FAILED
    if counts.pending > total - spec.min_available:
        return Phase.PENDING
    return None


def rule_restarting(counts: Counts, spec: SpecSummary) -> Phase | None:
    """Rule S (`state/restarting.go`); uses status.minAvailable, not the spec's."""
    if counts.retry_count >= spec.max_retry:
        return Phase.FAILED
    if spec.total - counts.terminating >= counts.min_available:
        return Phase.PENDING
    return None


def next_phase(t: Transition, counts: Counts, spec: SpecSummary) -> Phase | None:
    """The phase the transition's status update sets, or None when it leaves the phase alone."""
    if t.rule is None:
        return t.to
    if t.rule is Rule.STARTED:
        return t.to if spec.min_available <= counts.running + counts.succeeded + counts.failed else None
    if t.rule is Rule.RUNNING:
        return rule_running(counts, spec)
    if t.rule is Rule.RESTARTING:
        return rule_restarting(counts, spec)
    drained = counts.terminating == 0 and counts.pending == 0 and counts.running == 0
    return t.to if drained else None


@dataclasses.dataclass(frozen=True)
class Outcome:
    phase: Phase
    retry_count: int
    changed: bool  # Volcano's updateFn result: set lastTransitionTime and append a condition


def apply(t: Transition, phase: Any, counts: Counts, spec: SpecSummary) -> Outcome:
    """Evaluate the transition's status update on the counters the primitive left behind."""
    current = _phase(phase)
    new = next_phase(t, counts, spec)
    retry = counts.retry_count + (1 if t.bump_retry else 0)
    return Outcome(new if new is not None else current, retry, new is not None)


# ---- documentation -----------------------------------------------------------------------------
def _action_label(action: str) -> str:
    return "anything else" if action == ANY else str(action)


def render_markdown() -> str:
    """The table as a Markdown table (phase | action | transition)."""
    lines = ["| Phase | Action | Transition |", "|---|---|---|"]
    for (phase, action), t in TABLE.items():
        lines.append(f"| {phase} | {_action_label(action)} | {t.describe()} |")
    lines.append("")
    lines.append("Rules: P = Running iff spec.minAvailable <= running+succeeded+failed; "
                 "R = Running sync (minSuccess / all finished / too many pending); "
                 "S = Failed if retryCount >= maxRetry, Pending if Σreplicas - terminating >= status.minAvailable; "
                 "drained = terminating = pending = running = 0.")
    return "\n".join(lines)


def render_mermaid() -> str:
    """The table as a mermaid state diagram (one edge per reachable target phase)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for (phase, action), t in TABLE.items():
        label = _action_label(action)
        targets: list[Phase] = []
        if t.rule in (None, Rule.STARTED, Rule.DRAINED):
            if t.to is not None:
                targets.append(t.to)
        else:
            targets.extend(RULE_OUTCOMES[t.rule])
        for target in targets:
            suffix = f" [{t.rule}]" if t.rule else ""
            edges.setdefault((str(phase), str(target)), []).append(label + suffix)
    lines = ["stateDiagram-v2", f"    [*] --> {Phase.PENDING}"]
    for (src, dst), labels in edges.items():
        lines.append(f"    {src} --> {dst} : {', '.join(labels)}")
    for phase in sorted(batch.TERMINAL_PHASES):
        lines.append(f"    {phase} --> [*]")
    return "\n".join(lines)
