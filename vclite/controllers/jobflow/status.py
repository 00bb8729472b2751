"""JobFlowStatus as a pure function of (JobFlow with its previous status, its vcjobs, now, notes).

The shape is Volcano's (`pendingJobs … unKnowJobs`, `jobStatusList` with `runningHistories`,
`conditions[<vcjob>]` with `createTime`/`runningDuration`/`taskStatusCount`, `state.phase`), and so
are the rules users depend on; Volcano's bugs are fixed, each on purpose:

Where a job is listed (`BUCKETS`; `conditions[<vcjob>].phase` always carries the exact phase):
- `Pending` and `""` (just created, no phase yet) -> pendingJobs. Volcano puts `""` in unKnowJobs.
- `Running` and `Completing` -> runningJobs: a Completing job still has pods at work and does not yet
  satisfy dependents (only `Completed` does). Volcano reports Completing nowhere.
- `Completed` -> completedJobs; `Failed` -> failedJobs.
- `Terminated` and `Terminating` -> terminatedJobs: Terminating only ever ends in Terminated, so it is
  reported (and fails the flow) as soon as it is seen. Volcano reports Terminating nowhere.
- `Aborting`, `Aborted` (a suspended job), `Restarting` -> unKnowJobs, as Volcano: they neither fail
  nor advance the flow; a suspended job keeps its flow Running until it is resumed.

Flows whose vcjob does not exist are visible too (Volcano shows only existing jobs): their future
vcjob name is listed with a condition `{phase: Pending, reason, message}` — `WaitingForDependencies`,
`JobTemplateNotFound`, `UndefinedTarget`, … — so "what is this flow waiting for" has an answer. The
phase stays a valid batch JobPhase (`Pending`, or `Failed` when the generated vcjob was rejected by
admission) so no Volcano client meets a value outside the enum; such entries have no `createTime`,
which is how a client tells them from a real vcjob. `reason`/`message` are extra fields: a Volcano
CRD on a real cluster prunes them, which loses the explanation but breaks nothing.

Phase (`PHASE_RULES`, first match wins): deletionTimestamp -> Terminating; Succeed and Failed are
final; any job Failed/Terminated/Terminating -> Failed; every distinct flow's job Completed ->
Succeed (so `flows: []` succeeds at once, duplicates cannot block success, and Pending may go straight
to Succeed); Running once started (a job Running/Completing/Completed), never back to Pending.

Histories: each phase change closes the last `runningHistories` entry and opens a new one at the
vcjob's own `status.state.lastTransitionTime` (Volcano uses the controller's sync time); `now` only
when the vcjob does not say. The controller records every phase its watch delivered, even one a
coalesced sync never sees (engine.Engine.record). `endTimestamp` = creationTimestamp +
runningDuration, omitted when unknown (Volcano writes `null`, which its own CRD rejected: issue
#3234). Entries of vanished jobs are kept (as Volcano). Once the flow is Succeed/Failed/Terminating
no vcjob is (re)created, so a vanished job keeps its last condition: with `jobRetainPolicy: delete`
the lists still name the deleted jobs.

Beyond Volcano (JobFlows using vclite's flow primitives; a plain Volcano JobFlow never meets these):
- a flow that can never run is `Skipped` (its condition phase, listed in `skippedJobs`); a flow's
  failure is *handled* when a flow depending on it still can run with it failed (an expression
  accepting `Failed`, `strategy: any`); only unhandled failures fail the JobFlow. With an exit
  handler (`spec.onExit`) the JobFlow stays Running until the handler has finished.
- a vcjob deleted after it finished (its ttlSecondsAfterFinished, a user) keeps its outcome and its
  condition (marked `deleted: true`) and is not created again; Volcano re-creates it, over and over
  with a TTL. A plain JobFlow still re-creates a Completed vcjob deleted without a TTL, as Volcano.
- conditions may carry `retries`, `output` (the job's result), `podFailureRatio` (`failed/replicas`,
  when a pod failed); loop flows keep a flow-level condition under `<jobflow>-<flow>`
  (`items`/`iterations`), listed only until their vcjobs exist; `nextFlows` names the flows that
  start next (while suspended: those the resume starts too). `runningHistories` keep the last HISTORY_LIMIT entries.
The JobFlow's run state is kept incrementally by engine.Engine; `compute` builds it from scratch.

Pure: no I/O; timestamps come from the jobs or from `now`.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vclite.api import batch, flow, meta
from vclite.lib import clock as clock_mod
from vclite.lib import jsoncopy

Obj = dict[str, Any]
JP, FP = batch.JobPhase, flow.FlowPhase

PENDING_JOBS, RUNNING_JOBS, FAILED_JOBS = "pendingJobs", "runningJobs", "failedJobs"
COMPLETED_JOBS, TERMINATED_JOBS, UNKNOWN_JOBS = "completedJobs", "terminatedJobs", "unKnowJobs"
SKIPPED_JOBS = "skippedJobs"     # vclite: flows that will never run
NEXT_FLOWS = "nextFlows"         # vclite: flows that start next (their unfinished dependencies all run; suspended:
#                                  also those ready, which the resume starts)
LISTS = (PENDING_JOBS, RUNNING_JOBS, FAILED_JOBS, COMPLETED_JOBS, TERMINATED_JOBS, UNKNOWN_JOBS, SKIPPED_JOBS)
KNOWN_FIELDS = frozenset(LISTS) | {"jobStatusList", "conditions", "state", NEXT_FLOWS}
SKIPPED = "Skipped"              # the condition phase of a flow that will never run (not a vcjob phase)
HISTORY_LIMIT = 10               # runningHistories entries kept per job (the oldest go first)

BUCKETS: Mapping[str, str] = {
    "": PENDING_JOBS,               # deviation: Volcano -> unKnowJobs
    JP.PENDING: PENDING_JOBS,
    JP.RUNNING: RUNNING_JOBS,
    JP.COMPLETING: RUNNING_JOBS,    # deviation: Volcano -> nowhere
    JP.COMPLETED: COMPLETED_JOBS,
    JP.FAILED: FAILED_JOBS,
    JP.TERMINATING: TERMINATED_JOBS,  # deviation: Volcano -> nowhere
    JP.TERMINATED: TERMINATED_JOBS,
    JP.ABORTING: UNKNOWN_JOBS,
    JP.ABORTED: UNKNOWN_JOBS,
    JP.RESTARTING: UNKNOWN_JOBS,
    SKIPPED: SKIPPED_JOBS,
}
FAILING = frozenset({JP.FAILED, JP.TERMINATING, JP.TERMINATED})
ENDED = frozenset({JP.COMPLETED, JP.FAILED, JP.TERMINATED})   # a vcjob in these phases is done
RETRY_AT = "retryAt"   # condition field: when a failed vcjob's retry (its next attempt) is due, to the second
DELETED = "deleted"    # condition field: the vcjob was deleted after it finished (TTL, a user); its outcome stands
STARTED = frozenset({JP.RUNNING, JP.COMPLETING, JP.COMPLETED})
# In a big flow, the vcjobs in these phases (most of them, at any moment) keep only their phase in
# their condition and no runningHistories (engine.Engine.compact)
COMPACTED = frozenset({JP.COMPLETED, JP.PENDING})
# A job that ran: started, or ended in failure (a quick pod may fail before the controller sees it Running;
# a failing phase makes a plain JobFlow Failed first, so this matters only for a handled failure).
RAN = STARTED | FAILING
FINAL = frozenset({FP.SUCCEED, FP.FAILED})
FROZEN = FINAL | {FP.TERMINATING}   # no vcjob is created in these phases


class Reason(enum.StrEnum):
    """`reason` of a condition for a flow whose vcjob does not exist."""

    WAITING = "WaitingForDependencies"
    WAITING_PROBE = "WaitingForProbe"
    WAITING_OUTPUT = "WaitingForOutput"
    WAITING_EXIT = "WaitingForOtherFlows"   # the exit handler
    UNDEFINED_TARGET = "UndefinedTarget"
    CYCLE = "DependencyCycle"
    INVALID_SPEC = "InvalidSpec"
    CREATING = "Creating"
    SUSPENDED = "Suspended"
    TEMPLATE_NOT_FOUND = "JobTemplateNotFound"
    JOB_EXISTS = "JobAlreadyExists"
    FAILED_CREATE = "FailedCreate"
    CREATE_REFUSED = "CreateRefused"   # refused for now (a ResourceQuota): tried again with back-off
    INVALID_TEMPLATE = "InvalidTemplate"
    INVALID_CONDITION = "InvalidCondition"
    INVALID_PARAM = "InvalidParam"
    NOT_CREATED = "NotCreated"
    NEVER_MET = "DependencyNeverMet"
    WHEN_FALSE = "WhenFalse"
    RETRY_BACKOFF = "RetryBackoff"
    RETRYING = "Retrying"
    RETRIES_EXHAUSTED = "RetriesExhausted"   # a retried flow's vcjob failed for good (limit or maxDuration)
    NOT_RETRIED = "NotRetried"               # a failed vcjob left in its back-off: the JobFlow stopped
    FAN_OUT = "FanOut"
    REPEAT = "Repeat"
    REPEAT_LIMIT = "RepeatLimitReached"
    NO_ITEMS = "NoItems"


# A flow-level failure recorded in a condition: kept when the controller rebuilds its state.
STICKY_FAILURES = frozenset({Reason.FAILED_CREATE, Reason.INVALID_TEMPLATE, Reason.INVALID_CONDITION,
                             Reason.INVALID_PARAM, Reason.REPEAT_LIMIT})


@dataclasses.dataclass(frozen=True)
class Note:
    """What the controller learned in this sync about a flow whose vcjob it could not create."""

    phase: batch.JobPhase
    reason: Reason
    message: str
    since: str = ""   # CreateRefused: when the vcjob was first refused (the condition's refusedSince)


@dataclasses.dataclass(frozen=True)
class Facts:
    """What the phase rules read. `failed` (an unhandled failure; by default any failing phase, as for a
    plain Volcano JobFlow) and `holding` (an exit handler has still to run) come from the engine."""

    previous: str
    deleting: bool
    phases: frozenset[str]
    all_completed: bool
    failed: bool | None = None
    holding: bool = False

    @property
    def failing(self) -> bool:
        return bool(self.phases & FAILING) if self.failed is None else self.failed


@dataclasses.dataclass(frozen=True)
class Rule:
    name: str
    when: Callable[[Facts], bool]
    then: flow.FlowPhase | None   # None: keep the previous phase


PHASE_RULES: tuple[Rule, ...] = (
    Rule("deleting", lambda f: f.deleting, FP.TERMINATING),       # deviation: Volcano never sets it
    Rule("final", lambda f: f.previous in FINAL, None),
    Rule("a job failed", lambda f: f.failing and not f.holding, FP.FAILED),
    Rule("every flow completed", lambda f: f.all_completed and not f.failing, FP.SUCCEED),
    Rule("started", lambda f: f.previous == FP.RUNNING or bool(f.phases & RAN), FP.RUNNING),
    Rule("otherwise", lambda f: True, FP.PENDING),
)


def next_phase(facts: Facts) -> flow.FlowPhase:
    for rule in PHASE_RULES:
        if rule.when(facts):
            return rule.then if rule.then is not None else flow.FlowPhase(facts.previous)
    raise AssertionError("the last rule always matches")


# ---- conditions -----------------------------------------------------------------------------------
def job_condition(job: Obj) -> Obj:
    status = job.get("status") or {}
    cond: Obj = {}
    if meta.phase(job):
        cond["phase"] = meta.phase(job)
    if job.get("metadata", {}).get("creationTimestamp"):
        cond["createTime"] = job["metadata"]["creationTimestamp"]
    if status.get("runningDuration"):
        cond["runningDuration"] = status["runningDuration"]
    if status.get("taskStatusCount"):
        cond["taskStatusCount"] = jsoncopy.deep_copy(status["taskStatusCount"])
    return cond


# ---- jobStatusList ----------------------------------------------------------------------------------
def histories(previous: Sequence[Obj], phase: str, at: str) -> list[Obj]:
    """`runningHistories` after observing `phase`, which began at `at` (RFC 3339). A new list; its
    entries may be `previous`'s own (entries are never changed in place: a closed one is replaced)."""
    out = list(previous)
    if not phase or (out and out[-1].get("state") == phase):
        return out
    if out:
        last = out[-1]
        start = last.get("startTimestamp")
        # (texts of one length compare as times: Kubernetes writes them all in UTC, "…Z")
        if start and (at < start or len(at) != len(start)) and clock_mod.parse_time(at) < clock_mod.parse_time(start):
            at = start   # never let a history run backwards
        out[-1] = {**last, "endTimestamp": at}
    out.append({"startTimestamp": at, "state": phase})
    return out[-HISTORY_LIMIT:]


def _end_timestamp(created: str | None, running_duration: str | None) -> str | None:
    if not created or not running_duration:
        return None
    try:
        seconds = clock_mod.parse_duration(running_duration)
    except ValueError:
        return None
    return clock_mod.format_time(clock_mod.parse_time(created) + dt.timedelta(seconds=seconds))


def job_entry(job: Obj, previous: Obj | None, now: dt.datetime) -> Obj:
    status = job.get("status") or {}
    phase = meta.phase(job)
    created = job.get("metadata", {}).get("creationTimestamp")
    entry: Obj = {"name": meta.name(job)}
    if phase:
        entry["state"] = phase
    if created:
        entry["startTimestamp"] = created
    end = _end_timestamp(created, status.get("runningDuration"))
    if end:
        entry["endTimestamp"] = end
    if status.get("retryCount"):
        entry["restartCount"] = status["retryCount"]
    at = (status.get("state") or {}).get("lastTransitionTime") or clock_mod.format_time(now)
    hist = histories((previous or {}).get("runningHistories") or [], phase, at)
    if hist:
        entry["runningHistories"] = hist
    return entry


def compact_entry(entry: Obj) -> Obj:
    """A big flow's jobStatusList entry of a Completed or Pending vcjob: its name, state and restarts."""
    return {k: v for k, v in entry.items() if k in ("name", "state", "restartCount")}


# In a big flow, these notes (thousands at once, in a wide fan-out) keep their reason and lose their message
TERSE_REASONS = frozenset({Reason.WAITING, Reason.WAITING_OUTPUT, Reason.WAITING_PROBE, Reason.CREATING,
                           Reason.SUSPENDED, Reason.NOT_CREATED})


def compact_condition(cond: Obj) -> Obj:
    """A big flow's condition of a flow not created yet (waiting, being created, suspended, not created
    after a failure): {phase, reason} without the message; any other condition as it is (the same object)."""
    if "message" in cond and cond.get("phase") == JP.PENDING and cond.get("reason") in TERSE_REASONS:
        return {k: v for k, v in cond.items() if k != "message"}
    return cond


def job_status_list(previous: Sequence[Obj], jobs: Sequence[Obj], now: dt.datetime) -> list[Obj]:
    """Previous entries (never pruned, order kept) with each current job's entry replaced or appended."""
    out = jsoncopy.deep_copy(list(previous))
    index = {e.get("name"): i for i, e in enumerate(out)}
    for job in jobs:
        name = meta.name(job)
        entry = job_entry(job, out[index[name]] if name in index else None, now)
        if name in index:
            out[index[name]] = entry
        else:
            index[name] = len(out)
            out.append(entry)
    return out


# ---- the whole status -------------------------------------------------------------------------------
def compute(jobflow: Obj, jobs: Sequence[Obj], now: dt.datetime,
            notes: Mapping[str, Note] | None = None) -> Obj:
    """The JobFlow's new status, from scratch. `jobs` are the vcjobs this JobFlow created (label and
    owner checked by the caller); `notes` maps flow name -> what stopped its vcjob from being created
    this sync. The controller keeps the same state incrementally (engine.Engine)."""
    from vclite.controllers.jobflow import engine   # the engine builds on this module's entries and rules

    eng = engine.build(jobflow, jobs, now)
    for f, note in (notes or {}).items():
        inst = eng.insts.get(flow.job_name(meta.name(jobflow), f))
        if inst is not None and inst.job is None:
            eng.create_failed(inst, note)
    eng.decide(now)
    return eng.status(now)


LAST_ATTEMPT = "; last attempt: "   # joins a failed vcjob's retry verdict and why it failed, in its message
# (their messages say why, after it)
WHY_REASONS = frozenset({Reason.RETRIES_EXHAUSTED, Reason.NOT_RETRIED, Reason.RETRY_BACKOFF})


def with_failure(message: str, why: str) -> str:
    """A failed vcjob's condition message with why it failed (podfailure.job_failure): `why` alone when there is
    no other message, else after LAST_ATTEMPT."""
    if not why:
        return message
    return f"{message}{LAST_ATTEMPT}{why}" if message else why


def recorded_failure(cond: Obj) -> str | None:
    """Why a failed vcjob failed, as its condition recorded it (`with_failure`); None when it did not (read it)."""
    if cond.get("phase") not in (JP.FAILED, JP.TERMINATED) or not cond.get("message"):
        return None
    message, reason = str(cond["message"]), cond.get("reason")
    if not reason:
        return message
    if reason in WHY_REASONS and LAST_ATTEMPT in message:
        return message.partition(LAST_ATTEMPT)[2]
    return None


def failure_ratio(job: Obj) -> str:
    failed = int((job.get("status") or {}).get("failed", 0) or 0)
    if not failed:
        return ""
    total = sum(int(t.get("replicas", 0) or 0) for t in (job.get("spec") or {}).get("tasks") or [])
    return f"{failed}/{max(total, failed)}"


# ---- vcjobs that finished and are gone -------------------------------------------------------------
def ended_vcjob(cond: Obj) -> bool:
    """Whether a previous condition is a real vcjob's (not a note: those have no createTime) that had
    finished. A compacted Completed condition is `{phase}` only."""
    phase = cond.get("phase")
    return phase in ENDED and (bool(cond.get("createTime")) or phase == JP.COMPLETED) and \
        cond.get("reason") not in STICKY_FAILURES


def standin_job(namespace: str, name: str, cond: Obj, entry: Obj) -> Obj:
    """The last version of a finished vcjob that is gone, as far as the status recorded it: its condition
    (phase, createTime, runningDuration, taskStatusCount, podFailureRatio) and, from its jobStatusList
    entry, when it reached that phase."""
    status: Obj = {"state": {"phase": cond["phase"]}}
    last = (entry.get("runningHistories") or [{}])[-1]
    if last.get("state") == cond["phase"] and last.get("startTimestamp"):
        status["state"]["lastTransitionTime"] = last["startTimestamp"]
    for key in ("runningDuration", "taskStatusCount"):
        if cond.get(key) is not None:
            status[key] = jsoncopy.deep_copy(cond[key])
    spec: Obj = {}
    failed, _, total = str(cond.get("podFailureRatio") or "").partition("/")
    if failed.isascii() and failed.isdigit() and total.isascii() and total.isdigit():
        status["failed"] = int(failed)
        spec["tasks"] = [{"name": "-", "replicas": int(total)}]
    md: Obj = {"name": name, "namespace": namespace}
    if cond.get("createTime"):
        md["creationTimestamp"] = cond["createTime"]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": md, "spec": spec, "status": status}
