"""The run state of one JobFlow, kept incrementally: what each flow is waiting on, which vcjobs to
create or replace, and the JobFlowStatus — recomputed only where something changed.

The controller builds an Engine once per JobFlow (from its spec, its previous status and its
vcjobs), then feeds it changes: `observe(name, job)` for a vcjob that changed, `set_meta` for the
JobFlow's own metadata. `decide(now)` settles every flow touched since the last call and returns
the Actions (vcjobs to create, failed vcjobs to delete for a retry, when to wake up). A vcjob's
change costs its own instance, its flow, and the flows that read that flow (plan.dependents) — never
a pass over the whole JobFlow — and fan-in dependencies on targets are counted, not re-evaluated.
`status(now)` assembles the JobFlowStatus from per-entry dictionaries kept up to date as they change.

Vocabulary: a *flow* is an entry of spec.flows; an *instance* is one vcjob name of a flow
(`<jobflow>-<flow>`; `<jobflow>-<flow>-<n>` for item n of withItems/withParam and iteration n of a
repeat). The rules each step applies are pure: readiness.decide (dependencies), flowexpr (when,
until), flowtemplate (items), status (entries and phase rules). I/O is injected: `reader` returns an
instance's output (its designated pod's termination message), `prober` whether an http/tcp probe
entry holds (None: not known yet). Without them (status.compute, tests) outputs are empty and such
probes are undecided.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import json
from collections.abc import Callable, Iterable
from typing import Any

from vclite.api import batch, flow, flowexpr, flowtemplate, meta
from vclite.controllers.jobflow import objects, readiness
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import status as st
from vclite.lib import clock as clock_mod
from vclite.lib import jsoncopy

Obj = dict[str, Any]
JP, FP, O, R = batch.JobPhase, flow.FlowPhase, flowexpr.Outcome, st.Reason
NO_FACTS: frozenset[str] = frozenset()
MISSING = object()
LIST_LIMIT = 10      # names spelled out in a condition message
NEXT_LIMIT = 20      # names in status.nextFlows
SUSPEND_ANNOTATION = flow.SUSPEND_ANNOTATION


class IState(enum.StrEnum):
    ABSENT = "Absent"          # no vcjob: to be created (or waiting for a note to clear)
    ACTIVE = "Active"          # a vcjob that has not finished (Pending … Completing, Aborted, Restarting)
    RETRY_WAIT = "RetryWait"   # failed; re-created after the back-off
    REPLACING = "Replacing"    # the failed vcjob is being deleted, to be created again
    COMPLETED = "Completed"
    FAILED = "Failed"
    TERMINATED = "Terminated"


FINAL_I = frozenset({IState.COMPLETED, IState.FAILED, IState.TERMINATED})
RUNNING_I = frozenset({IState.ACTIVE, IState.REPLACING})
OUTCOME_OF = {IState.COMPLETED: O.COMPLETED, IState.FAILED: O.FAILED, IState.TERMINATED: O.TERMINATED}
RETRIED_NOTES = frozenset({st.Reason.TEMPLATE_NOT_FOUND, st.Reason.JOB_EXISTS})   # tried again every sync


@dataclasses.dataclass(eq=False)
class Inst:
    name: str
    flow: str
    index: int = -1            # item index or iteration; -1: the flow's only vcjob
    item: Any = MISSING
    job: Obj | None = None
    state: IState = IState.ABSENT
    retries: int = 0
    retry_of: str = ""         # uid of the failed vcjob being replaced
    retry_at: dt.datetime | None = None
    output: str | None = None
    note: st.Note | None = None


@dataclasses.dataclass(eq=False)
class FlowRT:
    d: plan_mod.FlowDef
    started: bool = False
    insts: list[Inst] = dataclasses.field(default_factory=list)
    final: str | None = None                 # the flow's outcome once it has finished
    facts: frozenset[str] = NO_FACTS
    reason: str = ""                         # why it finished without (or before) its vcjobs
    message: str = ""
    verdict: readiness.Verdict | None = None
    counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # IState -> n
    pending: int = 0                         # simple dependency: targets not met yet
    dead: int = 0                            # simple dependency: targets that can never be met
    until_done: int = -1                     # repeat: the last iteration whose `until` was evaluated


@dataclasses.dataclass
class Actions:
    create: list[Inst] = dataclasses.field(default_factory=list)
    delete: list[tuple[str, str]] = dataclasses.field(default_factory=list)   # (vcjob name, uid)
    wake_at: dt.datetime | None = None
    probing: bool = False                    # an http/tcp probe is still undecided: check again soon


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


class Engine:
    def __init__(self, jobflow: Obj, plan: plan_mod.Plan,
                 reader: Callable[[Inst], str | None] | None = None,
                 prober: Callable[[Obj, plan_mod.ProbeEntry], bool | None] | None = None):
        self.name, self.ns, self.uid = meta.name(jobflow), meta.namespace(jobflow), meta.uid(jobflow)
        self.plan, self.reader, self.prober = plan, reader, prober
        prev = jobflow.get("status") or {}
        self.phase = (prev.get("state") or {}).get("phase") or ""
        self.extra = {k: jsoncopy.deep_copy(v) for k, v in prev.items() if k not in st.KNOWN_FIELDS}
        self.state_extra = {k: jsoncopy.deep_copy(v) for k, v in (prev.get("state") or {}).items() if k != "phase"}
        self.prev_conditions: dict[str, Obj] = prev.get("conditions") or {}
        self.history: dict[str, Obj] = {e.get("name"): jsoncopy.deep_copy(e) for e in prev.get("jobStatusList") or []}
        self.conditions: dict[str, Obj] = {}
        self.listed: dict[str, str] = {}                       # condition key -> its list
        self.buckets: dict[str, dict[str, None]] = {name: {} for name in st.LISTS}
        self.phase_count: collections.Counter = collections.Counter()
        self.deleting = meta.is_deleting(jobflow)
        self.suspended = _suspended(jobflow)
        self.flows: dict[str, FlowRT] = {n: FlowRT(fd) for n, fd in plan.flows.items()}
        self.insts: dict[str, Inst] = {}
        self.orphans: dict[str, Obj] = {}
        self.orphan_failing = 0
        self.unfinished: set[str] = set(self.flows)
        self.unhandled: dict[str, str] = {}
        self.active = 0                                        # instances of non-exit flows with a live vcjob
        self.todo: dict[str, None] = {}
        self.to_create: dict[str, Inst] = {}
        self.retry_wait: dict[str, Inst] = {}
        self.replacing: dict[str, Inst] = {}
        self.output_waits: dict[str, tuple[Inst, tuple[str, ...]]] = {}
        self.probe_waiters: dict[str, None] = {}
        self.carry = self.phase in st.FROZEN                     # rebuilt after it stopped: keep what it said
        self.next: set[str] = set()
        self._init_counters()

    # ---- small helpers --------------------------------------------------------------------------
    def key(self, flow_name: str, index: int = -1) -> str:
        base = flow.job_name(self.name, flow_name)
        return base if index < 0 else f"{base}-{index}"

    @property
    def frozen(self) -> bool:
        return self.phase in st.FROZEN

    @property
    def stopping(self) -> bool:
        return bool(self.unhandled) or self.orphan_failing > 0

    def _touch(self, names: Iterable[str]) -> None:
        for n in names:
            if n in self.flows:
                self.todo[n] = None

    def _facts(self, name: str) -> frozenset[str]:
        fr = self.flows.get(name)
        return fr.facts if fr is not None else NO_FACTS

    # ---- conditions and lists ---------------------------------------------------------------------
    def _set_condition(self, key: str, cond: Obj | None, listed: bool = True) -> None:
        old_list = self.listed.pop(key, None)
        if old_list is not None:
            self.buckets[old_list].pop(key, None)
        old = self.conditions.get(key)
        if old is not None:
            self.phase_count[old.get("phase", "")] -= 1
        if cond is None:
            self.conditions.pop(key, None)
            return
        self.conditions[key] = cond
        self.phase_count[cond.get("phase", "")] += 1
        if listed:
            bucket = st.BUCKETS.get(cond.get("phase", ""), st.UNKNOWN_JOBS)
            self.buckets[bucket][key] = None
            self.listed[key] = bucket

    def _record_history(self, job: Obj, now: dt.datetime) -> None:
        name = meta.name(job)
        self.history[name] = st.job_entry(job, self.history.get(name), now)

    # ---- observing vcjobs ------------------------------------------------------------------------------
    def load(self, jobs: Iterable[Obj], now: dt.datetime) -> None:
        """Initial state: every vcjob of this JobFlow (in any order)."""
        by_flow: dict[str, list[Obj]] = collections.defaultdict(list)
        others: list[Obj] = []
        for job in jobs:
            fname, index = self._flow_of(job)
            (by_flow[fname].append(job) if fname else others.append(job))
        for fname, fr in self.flows.items():
            found = by_flow.get(fname)
            if found:
                self._restart(fr, found, now)
            self._restore_sticky(fr)
            if not fr.started and fr.final is None:
                self._flow_condition(fr)      # a first condition, in spec order; decide() refines it
        for job in sorted(others, key=lambda j: (j.get("metadata", {}).get("creationTimestamp") or "", meta.name(j))):
            self.observe(meta.name(job), job, now)
        self._touch(self.flows)

    def _flow_of(self, job: Obj) -> tuple[str, int]:
        """(flow, index) of one of this JobFlow's vcjobs, by its name: `<jobflow>-<flow>` for a flow
        without a loop, `<jobflow>-<flow>-<n>` for a loop flow (plan forbids names that clash)."""
        name, prefix = meta.name(job), self.name + "-"
        if not name.startswith(prefix):
            return "", -1
        rest = name[len(prefix):]
        fr = self.flows.get(rest)
        if fr is not None and fr.d.loop is plan_mod.Loop.NONE:
            return rest, -1
        stem, dash, tail = rest.rpartition("-")
        fr = self.flows.get(stem)
        if dash and fr is not None and fr.d.loop is not plan_mod.Loop.NONE and tail.isdigit() and \
                str(int(tail)) == tail:
            return stem, int(tail)
        return "", -1

    def _restart(self, fr: FlowRT, jobs: list[Obj], now: dt.datetime) -> None:
        """A flow whose vcjobs exist has started: rebuild its instances, then observe them."""
        d = fr.d
        if d.loop is plan_mod.Loop.REPEAT:
            top = max(self._flow_of(j)[1] for j in jobs)
            self._begin(fr, [Inst(self.key(d.name, i), d.name, i) for i in range(top + 1)])
        elif d.fanout:
            items = self._items(fr)
            if items is None:
                return   # the items cannot be known again: the flow is decided anew (and fails)
            self._begin(fr, [Inst(self.key(d.name, i), d.name, i, item=it) for i, it in enumerate(items)])
        else:
            self._begin(fr, [Inst(self.key(d.name), d.name)])
        for job in jobs:
            if meta.name(job) in self.insts:
                self.observe(meta.name(job), job, now)

    def _restore_sticky(self, fr: FlowRT) -> None:
        """Flow-level failures recorded in the previous status survive a rebuild."""
        for key in ([i.name for i in fr.insts] or [self.key(fr.d.name)]):
            cond = self.prev_conditions.get(key) or {}
            if cond.get("reason") in st.STICKY_FAILURES and cond.get("phase") == JP.FAILED:
                note = st.Note(JP.FAILED, st.Reason(cond["reason"]), cond.get("message", ""))
                inst = self.insts.get(key)
                if inst is not None and inst.job is None:
                    self.create_failed(inst, note)
                elif inst is None and fr.final is None:
                    self._finish(fr, O.FAILED, note.reason, note.message)

    def observe(self, name: str, job: Obj | None, now: dt.datetime) -> None:
        """A vcjob of this JobFlow changed (None: it is gone)."""
        if job is not None:
            self._record_history(job, now)
        inst = self.insts.get(name)
        if inst is None:
            self._observe_orphan(name, job)
            return
        if job is not None and inst.retry_of and meta.uid(job) != inst.retry_of:
            inst.retry_of = ""          # the new attempt exists
        inst.job = job
        if job is not None:
            inst.note = None
        self._update(inst, now)

    def _observe_orphan(self, name: str, job: Obj | None) -> None:
        old = self.orphans.pop(name, None)
        if old is not None and meta.phase(old) in st.FAILING:
            self.orphan_failing -= 1
        if job is None:
            if not self.frozen:
                self._set_condition(name, None)
            return
        self.orphans[name] = job
        if meta.phase(job) in st.FAILING:
            self.orphan_failing += 1
        self._set_condition(name, st.job_condition(job))

    def create_failed(self, inst: Inst, note: st.Note) -> None:
        """The controller could not create `inst`'s vcjob; FailedCreate (phase Failed) is final."""
        inst.note = note
        self._update(inst, None)

    # ---- instance state ---------------------------------------------------------------------------
    def _inst_state(self, inst: Inst, d: plan_mod.FlowDef) -> IState:
        job = inst.job
        if job is None:
            return IState.FAILED if inst.note is not None and inst.note.phase == JP.FAILED else IState.ABSENT
        if inst.retry_of and meta.uid(job) == inst.retry_of:
            return IState.REPLACING
        phase = meta.phase(job)
        if phase == JP.COMPLETED:
            return IState.COMPLETED
        retryable = inst.retries < d.retry_limit
        if phase in (JP.FAILED, JP.TERMINATED):
            if retryable:
                return IState.RETRY_WAIT
            return IState.FAILED if phase == JP.FAILED else IState.TERMINATED
        if phase == JP.TERMINATING and not retryable:
            return IState.TERMINATED
        return IState.ACTIVE

    def _update(self, inst: Inst, now: dt.datetime | None) -> None:
        fr = self.flows[inst.flow]
        old, new = inst.state, self._inst_state(inst, fr.d)
        if old != new:
            fr.counts[old] -= 1
            fr.counts[new] += 1
            inst.state = new
            if not fr.d.exit:
                self.active += (new in RUNNING_I) - (old in RUNNING_I)
        if new is IState.RETRY_WAIT:
            failed_at = clock_mod.parse_time(((inst.job or {}).get("status") or {}).get("state", {})
                                             .get("lastTransitionTime")) or now or _epoch()
            inst.retry_at = failed_at + dt.timedelta(seconds=fr.d.backoff.delay(inst.retries))
            self.retry_wait[inst.name] = inst
        else:
            self.retry_wait.pop(inst.name, None)
        if new is IState.REPLACING:
            self.replacing[inst.name] = inst
        else:
            self.replacing.pop(inst.name, None)
        if new is IState.ABSENT and (inst.note is None or inst.note.reason in RETRIED_NOTES):
            self.to_create[inst.name] = inst
        else:
            self.to_create.pop(inst.name, None)
        if old != new and self.plan.exit and self.stopping and self.active == 0:
            self.todo[self.plan.exit] = None
        if new in FINAL_I and inst.output is None and self.reader is not None and self.plan.extended:
            inst.output = self.reader(inst)
        self._inst_condition(inst)
        self.todo[inst.flow] = None

    def _inst_condition(self, inst: Inst) -> None:
        if inst.job is not None:
            cond = st.job_condition(inst.job)
            ratio = _failure_ratio(inst.job)
            if ratio:
                cond["podFailureRatio"] = ratio
        elif inst.note is not None:
            cond = {"phase": str(inst.note.phase), "reason": str(inst.note.reason), "message": inst.note.message}
        elif self.frozen and inst.name in self.conditions and self.conditions[inst.name].get("reason") not in \
                (R.CREATING, R.SUSPENDED, R.RETRYING):
            return                                      # vanished after the JobFlow stopped: keep what it said
        elif self.frozen and self.carry and inst.name in self.prev_conditions:
            cond = jsoncopy.deep_copy(self.prev_conditions[inst.name])
        elif self.frozen or (self.stopping and not self.flows[inst.flow].d.exit):
            cond = _pending(R.NOT_CREATED, self._not_created())
        elif inst.retry_of or (inst.retries and inst.state is IState.ABSENT):
            cond = _pending(R.RETRYING, f"attempt {inst.retries + 1} is being created")
        elif self.suspended:
            cond = _pending(R.SUSPENDED, "the JobFlow is suspended (vcctl jobflow resume)")
        else:
            cond = _pending(R.CREATING, "dependencies are met; the job is being created")
        if inst.state is IState.RETRY_WAIT and inst.retry_at is not None:
            cond["reason"] = str(R.RETRY_BACKOFF)
            cond["message"] = (f"attempt {inst.retries + 1} failed; retry {inst.retries + 1} of "
                               f"{self.flows[inst.flow].d.retry_limit} at {clock_mod.format_time(inst.retry_at)}")
        elif inst.state is IState.REPLACING:
            cond["reason"], cond["message"] = str(R.RETRYING), f"deleting attempt {inst.retries} to run it again"
        if inst.retries:
            cond["retries"] = inst.retries
        if inst.retry_of:
            cond["retryOf"] = inst.retry_of
        if inst.output:
            cond["output"] = inst.output
        self._set_condition(inst.name, cond)

    # ---- flows ------------------------------------------------------------------------------------------
    def _begin(self, fr: FlowRT, insts: list[Inst]) -> None:
        fr.started = True
        self.probe_waiters.pop(fr.d.name, None)
        self.next.discard(fr.d.name)
        fr.insts = insts
        fr.counts = collections.Counter({IState.ABSENT: len(insts)})
        for inst in insts:
            self._remember(inst)
        if fr.d.loop is not plan_mod.Loop.NONE:
            self._flow_condition(fr)
        for inst in insts:
            self._update(inst, None)
        self._touch(self.plan.dependents.get(fr.d.name, ()))

    def _remember(self, inst: Inst) -> None:
        """A new instance: what the previous status recorded about it (retries, output) still holds."""
        self.insts[inst.name] = inst
        prev = self.prev_conditions.get(inst.name) or {}
        inst.retries = int(prev.get("retries") or 0)
        inst.retry_of = str(prev.get("retryOf") or "")
        if prev.get("output") is not None:
            inst.output = str(prev["output"])

    def _finish(self, fr: FlowRT, outcome: str, reason: str = "", message: str = "") -> None:
        fr.final, fr.reason, fr.message = outcome, reason, message
        self.unfinished.discard(fr.d.name)
        self.probe_waiters.pop(fr.d.name, None)
        self.next.discard(fr.d.name)
        self._set_facts(fr, self._flow_facts(fr))
        if outcome in (O.FAILED, O.TERMINATED) and not self._handled(fr):
            self._unhandled(fr, message)
        elif outcome == O.SKIPPED:
            self._recheck_failures(fr)
        for name, (inst, flows) in list(self.output_waits.items()):
            if all(self.flows[f].final is not None for f in flows if f in self.flows):
                del self.output_waits[name]
                if inst.note is not None and inst.note.reason == R.WAITING_OUTPUT:
                    inst.note = None
                    self._update(inst, None)
        if not fr.insts or fr.d.loop is not plan_mod.Loop.NONE:
            self._flow_condition(fr)
        if self.plan.exit and self.plan.exit in self.flows:
            self.todo[self.plan.exit] = None

    def _flow_facts(self, fr: FlowRT) -> frozenset[str]:
        if fr.d.fanout and fr.started:
            c = fr.counts
            done = c[IState.COMPLETED] + c[IState.FAILED] + c[IState.TERMINATED]
            return fanout_facts(fr.final, len(fr.insts), done, c[IState.COMPLETED], c[IState.FAILED])
        return flowexpr.outcome_facts(fr.final) if fr.final is not None else NO_FACTS

    def _set_facts(self, fr: FlowRT, facts: frozenset[str]) -> None:
        old = fr.facts
        if facts == old:
            return
        fr.facts = facts
        for dep in self.plan.dependents.get(fr.d.name, ()):
            dfr = self.flows[dep]
            if dfr.d.simple:
                self._count(dfr, old, facts)
            self.todo[dep] = None

    def _handled(self, fr: FlowRT) -> bool:
        """A failure is handled while some flow reading it can run — or ran — with the facts as they are
        now (an expression accepting Failed, `strategy: any` with another target still possible). When
        such a reader is Skipped later, the failure is checked again (`_recheck_failures`)."""
        return any(self._accepts(self.flows[dep]) for dep in self.plan.dependents.get(fr.d.name, ()))

    def _accepts(self, reader: FlowRT) -> bool:
        d = reader.d
        if reader.final == O.SKIPPED or d.dependency is None or d.exit:
            return False
        if d.simple:
            return reader.dead < len(d.atoms) if d.strategy is plan_mod.Strategy.ANY else reader.dead == 0
        facts = {a: (self._probe_facts(d, a[len(plan_mod.PROBE_PREFIX):]) if a.startswith(plan_mod.PROBE_PREFIX)
                     else self._facts(a)) for a in d.atoms}
        return flowexpr.evaluate_depends(d.dependency, facts) is not False

    def _recheck_failures(self, skipped: FlowRT) -> None:
        """A flow was Skipped: failures it was handling may be unhandled now."""
        for ref in skipped.d.refs:
            fr = self.flows.get(ref)
            if fr is not None and fr.final in (O.FAILED, O.TERMINATED) and ref not in self.unhandled \
                    and not self._handled(fr):
                self._unhandled(fr, fr.message)

    def _unhandled(self, fr: FlowRT, message: str) -> None:
        was_stopping = self.stopping
        self.unhandled[fr.d.name] = message or f"flow {fr.d.name} {fr.final}"
        if not was_stopping:
            self._stop_everything()

    def _stop_everything(self) -> None:
        """An unhandled failure: nothing new starts (but the exit handler); say so once."""
        self.to_create = {k: i for k, i in self.to_create.items() if self.flows[i.flow].d.exit}
        for fr in self.flows.values():
            if fr.d.exit:
                continue
            if not fr.started and fr.final is None:
                self._flow_condition(fr)
            for inst in fr.insts:
                if inst.state is IState.ABSENT:
                    self._inst_condition(inst)
        if self.plan.exit:
            self.todo[self.plan.exit] = None

    def _flow_condition(self, fr: FlowRT) -> None:
        """The condition under `<jobflow>-<flow>` of a flow without vcjobs yet, or of a loop flow."""
        key, d = self.key(fr.d.name), fr.d
        if fr.final is not None and (not fr.started or not fr.insts):
            phase = {O.COMPLETED: JP.COMPLETED, O.SKIPPED: st.SKIPPED, O.TERMINATED: JP.TERMINATED}.get(
                fr.final, JP.FAILED)
            self._set_condition(key, {"phase": str(phase), "reason": str(fr.reason), "message": fr.message})
            return
        if fr.started:   # a loop flow: the aggregate, not listed (its vcjobs are)
            self._set_condition(key, self._loop_summary(fr), listed=False)
            return
        if self.frozen and self.carry and key in self.prev_conditions:
            cond = jsoncopy.deep_copy(self.prev_conditions[key])
        elif self.frozen or (self.stopping and not d.exit):
            cond = _pending(R.NOT_CREATED, self._not_created())
        else:
            cond = self._waiting_condition(fr)
        self._set_condition(key, cond)

    def _not_created(self) -> str:
        if self.frozen:
            return f"not created: the JobFlow is {self.phase}"
        return f"not created: {', '.join(sorted(self.unhandled)[:3]) or 'a job'} failed"

    def _loop_summary(self, fr: FlowRT) -> Obj:
        c, n, d = fr.counts, len(fr.insts), fr.d
        phase = JP.RUNNING if c[IState.ACTIVE] or c[IState.REPLACING] else JP.PENDING
        if fr.final is not None:
            phase = {O.COMPLETED: JP.COMPLETED, O.TERMINATED: JP.TERMINATED}.get(fr.final, JP.FAILED)
        if d.loop is plan_mod.Loop.REPEAT:
            msg = fr.message or f"iteration {n - 1} (at most {d.limit}): until {d.until}"
            return {"phase": str(phase), "reason": str(fr.reason or R.REPEAT), "message": msg, "iterations": n}
        done = ", ".join(f"{c[s]} {s}" for s in (IState.COMPLETED, IState.FAILED, IState.TERMINATED) if c[s])
        msg = fr.message or f"{n} items: " + (done or "none finished")
        return {"phase": str(phase), "reason": str(fr.reason or R.FAN_OUT), "message": msg, "items": n}

    def _waiting_condition(self, fr: FlowRT) -> Obj:
        v = fr.verdict or readiness.Verdict(fr.d.name, readiness.State.WAITING)
        names = self._names
        if v.state is readiness.State.BLOCKED:
            if v.undefined:
                return _pending(R.UNDEFINED_TARGET, f"dependsOn targets {', '.join(v.undefined)} name no flow "
                                                    "of this JobFlow")
            if v.cycle:
                return _pending(R.CYCLE, f"flows {' -> '.join(v.cycle)} form a dependency cycle")
            return _pending(R.INVALID_SPEC, v.message)
        if v.state is readiness.State.READY:
            if self.suspended:
                return _pending(R.SUSPENDED, "dependencies are met; the JobFlow is suspended (vcctl jobflow resume)")
            return _pending(R.CREATING, "dependencies are met; the job is being created")
        if fr.d.exit:
            return _pending(R.WAITING_EXIT, "the exit handler runs once every other flow has finished")
        d = fr.d
        if fr.d.name in self.probe_waiters:
            return _pending(R.WAITING_PROBE, self._probe_message(fr))
        if d.simple and d.strategy is plan_mod.Strategy.ALL:
            if fr.pending > LIST_LIMIT:
                return _pending(R.WAITING, f"waiting for {fr.pending} of {len(d.atoms)} targets to be Completed")
            return _pending(R.WAITING, f"waiting for {names(t for t in d.atoms if O.COMPLETED not in self._facts(t))}"
                                       " to be Completed")
        if d.simple:
            return _pending(R.WAITING, f"waiting for one of {names(d.atoms, LIST_LIMIT)} to complete")
        what = names(v.waiting_for, LIST_LIMIT)
        if d.dependency is not None and set(v.waiting_for) <= set(d.refs) - set(d.targets) and not d.probe:
            return _pending(R.WAITING_OUTPUT, f"waiting for {what} to finish (its output is read)")
        return _pending(R.WAITING, f"waiting for {what}: {d.dependency}")

    def _names(self, flows: Iterable[str], limit: int | None = None) -> str:
        out, extra = [], 0
        for f in flows:
            if limit is None or len(out) < limit:
                out.append(self.key(f))
            else:
                extra += 1
        return ", ".join(out) + (f" (+{extra} more)" if extra else "")

    # ---- counted (simple) dependencies ---------------------------------------------------------------
    def _init_counters(self) -> None:
        for fr in self.flows.values():
            if fr.d.simple:
                fr.pending, fr.dead = len(fr.d.atoms), 0
                for t in fr.d.atoms:
                    self._count(fr, NO_FACTS, self._facts(t))

    def _count(self, fr: FlowRT, old: frozenset[str], new: frozenset[str]) -> None:
        want = O.ANY_COMPLETED if fr.d.strategy is plan_mod.Strategy.ANY else O.COMPLETED
        met_old, met_new = want in _closure(old), want in _closure(new)
        dead_old = O.FINISHED in _closure(old) and not met_old
        dead_new = O.FINISHED in _closure(new) and not met_new
        fr.pending -= met_new and not met_old
        fr.dead += dead_new and not dead_old

    def _simple_verdict(self, fr: FlowRT) -> readiness.Verdict:
        d = fr.d
        blocked = readiness.blocked_verdict(d, self.plan)
        if blocked is not None:
            return blocked
        n = len(d.atoms)
        if d.strategy is plan_mod.Strategy.ANY:
            met, dead = n - fr.pending > 0, fr.dead == n
        else:
            met, dead = fr.pending == 0, fr.dead > 0
        if dead:
            return readiness.Verdict(d.name, readiness.State.SKIPPED, message=readiness.skip_message(d, self._facts))
        if met:
            return readiness.Verdict(d.name, readiness.State.READY)
        return readiness.Verdict(d.name, readiness.State.WAITING)

    # ---- probes ------------------------------------------------------------------------------------
    def _probe_facts(self, fd: plan_mod.FlowDef, target: str) -> frozenset[str]:
        t = self.flows.get(target)
        if t is None:
            return NO_FACTS
        jobs = [i.job for i in t.insts if i.job is not None]
        if not t.started or not jobs:
            return t.facts
        tasks = [task.get("name", "") for task in (jobs[0].get("spec") or {}).get("tasks") or []]
        entries = fd.probes_for(target, tasks)
        if not entries:
            return t.facts
        if len(jobs) == len(t.insts) and all(self._holds(job, e) is True for job in jobs for e in entries):
            return flowexpr.outcome_facts(O.COMPLETED)
        if t.final is not None or any(meta.phase(j) in batch.TERMINAL_PHASES for j in jobs):
            return flowexpr.outcome_facts(O.FAILED)
        return NO_FACTS

    def _holds(self, job: Obj, entry: plan_mod.ProbeEntry) -> bool | None:
        if entry.kind == "taskStatus":
            return task_in_phase(job, entry.task, entry.phase)
        if meta.phase(job) in batch.TERMINAL_PHASES:
            return False
        return self.prober(job, entry) if self.prober is not None else None

    def _probe_message(self, fr: FlowRT) -> str:
        parts = []
        for target in fr.d.targets:
            t = self.flows.get(target)
            jobs = [i.job for i in (t.insts if t else []) if i.job is not None]
            if not jobs:
                parts.append(f"{self.key(target)} to start")
                continue
            tasks = [task.get("name", "") for task in (jobs[0].get("spec") or {}).get("tasks") or []]
            pending = [e.describe() for e in fr.d.probes_for(target, tasks)
                       if not all(self._holds(j, e) is True for j in jobs)]
            if pending:
                parts.append(f"{meta.name(jobs[0]) if len(jobs) == 1 else self.key(target)}: {'; '.join(pending)}")
        return "waiting for probe: " + (", ".join(parts) or "targets to finish")

    # ---- deciding ------------------------------------------------------------------------------------
    def decide(self, now: dt.datetime) -> Actions:
        """Settle every touched flow; what the controller should do now."""
        for name in list(self.probe_waiters):
            self.todo[name] = None
        if not self.stopping and not self.frozen and not self.suspended:
            for inst in [i for i in self.retry_wait.values() if i.retry_at is not None and i.retry_at <= now]:
                inst.retries += 1                        # recorded in the status before the delete
                inst.retry_of = meta.uid(inst.job) if inst.job else ""
                self._update(inst, now)
        guard = 0
        while self.todo:
            name = next(iter(self.todo))
            del self.todo[name]
            self._step(self.flows[name], now)
            guard += 1
            if guard > 50 * (len(self.flows) + len(self.insts) + 10):
                raise RuntimeError(f"jobflow {self.name}: decisions do not settle")
        return self._actions(now)

    def _step(self, fr: FlowRT, now: dt.datetime) -> None:
        if fr.final is not None:
            if fr.started and fr.d.fanout:
                self._flow_condition(fr)
            return
        if fr.started:
            self._aggregate(fr, now)
            return
        if (self.stopping or self.frozen) and not fr.d.exit:
            self.probe_waiters.pop(fr.d.name, None)
            self.next.discard(fr.d.name)
            self._flow_condition(fr)      # after an unhandled failure nothing new starts: NotCreated
            return
        fr.verdict = self._verdict(fr)
        state = fr.verdict.state
        if state is readiness.State.SKIPPED:
            self._finish(fr, O.SKIPPED, R.NEVER_MET, fr.verdict.message)
            return
        waiting_probe = state is readiness.State.WAITING and bool(fr.d.probe)
        if waiting_probe:
            self.probe_waiters[fr.d.name] = None
        else:
            self.probe_waiters.pop(fr.d.name, None)
        self._update_next(fr)
        if state is readiness.State.READY and not self.frozen and not self.suspended and \
                (fr.d.exit or not self.stopping):
            self._start(fr)
        else:
            self._flow_condition(fr)

    def _verdict(self, fr: FlowRT) -> readiness.Verdict:
        d = fr.d
        if d.exit:
            blocked = readiness.blocked_verdict(d, self.plan)
            if blocked is not None:
                return blocked
            others_done = self.unfinished <= {d.name}
            if others_done or (self.stopping and self.active == 0):
                return readiness.Verdict(d.name, readiness.State.READY)
            return readiness.Verdict(d.name, readiness.State.WAITING)
        if d.simple:
            return self._simple_verdict(fr)

        def facts(name: str) -> frozenset[str]:
            if name.startswith(plan_mod.PROBE_PREFIX):
                return self._probe_facts(d, name[len(plan_mod.PROBE_PREFIX):])
            return self._facts(name)
        return readiness.decide(d, self.plan, facts)

    def _update_next(self, fr: FlowRT) -> None:
        d = fr.d
        waiting = fr.verdict is not None and fr.verdict.state is readiness.State.WAITING
        if waiting and not d.exit and len(d.refs) <= 16 and all(
                self.flows[r].started or self.flows[r].final is not None for r in d.refs if r in self.flows):
            self.next.add(d.name)
        else:
            self.next.discard(d.name)

    def _start(self, fr: FlowRT) -> None:
        d = fr.d
        if d.when is not None:
            try:
                ok = flowexpr.evaluate_when(d.when, self._env(d))
            except flowexpr.ExprError as e:
                self._finish(fr, O.FAILED, R.INVALID_CONDITION, f"flow {d.name}: when: {_one_line(e)}")
                return
            if not ok:
                self._finish(fr, O.SKIPPED, R.WHEN_FALSE, f"when {d.when} is false")
                return
        if d.loop is plan_mod.Loop.REPEAT:
            self._begin(fr, [Inst(self.key(d.name, 0), d.name, 0)])
        elif d.fanout:
            items = self._items(fr)
            if items is None:
                return
            self._begin(fr, [Inst(self.key(d.name, i), d.name, i, item=it) for i, it in enumerate(items)])
            if not items:
                self._finish(fr, O.COMPLETED, R.NO_ITEMS, "no items: nothing to run")
        else:
            self._begin(fr, [Inst(self.key(d.name), d.name)])

    def _items(self, fr: FlowRT) -> list[Any] | None:
        d = fr.d
        if d.loop is plan_mod.Loop.ITEMS:
            return list(d.items)
        try:
            return flowtemplate.parse_items(self.output_of(d.param_from), f"withParam of flow {d.name}")
        except ValueError as e:
            self._finish(fr, O.FAILED, R.INVALID_PARAM, str(e))
            return None

    def _aggregate(self, fr: FlowRT, now: dt.datetime) -> None:
        d, c = fr.d, fr.counts
        if d.loop is plan_mod.Loop.REPEAT:
            self._repeat(fr)
        elif d.fanout:
            n = len(fr.insts)
            done = c[IState.COMPLETED] + c[IState.FAILED] + c[IState.TERMINATED]
            if done == n:
                outcome = O.COMPLETED if c[IState.COMPLETED] == n else (
                    O.FAILED if c[IState.FAILED] else O.TERMINATED)
                self._finish(fr, outcome)
            else:
                self._set_facts(fr, self._flow_facts(fr))
                self._flow_condition(fr)
        else:
            inst = fr.insts[0]
            if inst.state in FINAL_I:
                msg = inst.note.message if inst.note is not None else ""
                self._finish(fr, OUTCOME_OF[inst.state], str(inst.note.reason) if inst.note else "", msg)

    def _repeat(self, fr: FlowRT) -> None:
        d, last = fr.d, fr.insts[-1]
        if last.state in (IState.FAILED, IState.TERMINATED):
            self._finish(fr, OUTCOME_OF[last.state], "", f"iteration {last.index} {last.state}")
            return
        if last.state is not IState.COMPLETED:
            self._flow_condition(fr)
            return
        if fr.until_done >= last.index:
            return
        fr.until_done = last.index
        try:
            done = flowexpr.evaluate_when(d.until, self._env(d, iteration=last.index))
        except flowexpr.ExprError as e:
            self._finish(fr, O.FAILED, R.INVALID_CONDITION, f"flow {d.name}: repeat.until: {_one_line(e)}")
            return
        if done:
            fr.reason = R.REPEAT
            self._finish(fr, O.COMPLETED, R.REPEAT, f"until {d.until} held after iteration {last.index}")
        elif len(fr.insts) >= d.limit:
            self._finish(fr, O.FAILED, R.REPEAT_LIMIT,
                         f"until {d.until} still false after {len(fr.insts)} iterations (limit {d.limit})")
        else:
            inst = Inst(self.key(d.name, last.index + 1), d.name, last.index + 1)
            fr.insts.append(inst)
            fr.counts[IState.ABSENT] += 1
            self._remember(inst)
            self._update(inst, None)
            self._flow_condition(fr)

    # ---- outputs and templates -------------------------------------------------------------------------
    def inst_output(self, inst: Inst) -> str:
        if inst.output is None and self.reader is not None and inst.state in FINAL_I:
            inst.output = self.reader(inst)
            self._inst_condition(inst)
        return inst.output or ""

    def output_of(self, name: str) -> str:
        """A finished flow's output: its vcjob's (the last iteration's), a fan-out's JSON list."""
        fr = self.flows.get(name)
        if fr is None or not fr.insts:
            return ""
        if fr.d.fanout:
            return json.dumps([self.inst_output(i).strip() for i in fr.insts], separators=(",", ":"))
        return self.inst_output(fr.insts[-1])

    def _env(self, d: plan_mod.FlowDef, item: Any = None, iteration: int = 0) -> flowexpr.WhenEnv:
        refs = set()
        for e in (d.when, d.until):
            if e is not None:
                refs |= flowexpr.flow_refs(e)
        outputs = {r: self.output_of(r) for r in refs
                   if r in self.flows and (self.flows[r].final is not None or r == d.name)}
        return flowexpr.WhenEnv(self.plan.params, outputs, item, iteration)

    def values_for(self, inst: Inst, names: Iterable[str]) -> tuple[dict[str, str] | None, list[str]]:
        """Placeholder values for `inst`'s template, or (None, flows whose output is not there yet)."""
        outputs, waiting = {}, []
        for n in names:
            if n.startswith("outputs."):
                f = n.split(".")[1]
                fr = self.flows.get(f)
                if fr is None:
                    continue
                if fr.final is None and f != inst.flow:
                    waiting.append(f)
                else:
                    outputs[f] = self.output_of(f)
        if waiting:
            return None, waiting
        item = inst.item
        return flowtemplate.template_values(self.plan.params, outputs,
                                            *(() if item is MISSING else (item,)),
                                            iteration=inst.index if self.flows[inst.flow].d.loop
                                            is plan_mod.Loop.REPEAT else None), []

    def wait_for_output(self, inst: Inst, flows: list[str]) -> None:
        """`inst`'s template reads outputs of flows that have not finished: create it once they have."""
        self.to_create.pop(inst.name, None)
        inst.note = st.Note(JP.PENDING, R.WAITING_OUTPUT,
                            f"the template reads the output of {self._names(flows)}: waiting for it to finish")
        self._inst_condition(inst)
        self.output_waits[inst.name] = (inst, tuple(flows))

    # ---- actions ------------------------------------------------------------------------------------------
    def _actions(self, now: dt.datetime) -> Actions:
        acts = Actions()
        if not self.frozen and not self.suspended:
            acts.create = [i for i in self.to_create.values() if not self.stopping or self.flows[i.flow].d.exit]
        if not self.stopping and not self.frozen:
            due = [i.retry_at for i in self.retry_wait.values() if i.retry_at is not None]
            acts.wake_at = min(due) if due else None
        for inst in self.replacing.values():
            if inst.job is not None and not meta.is_deleting(inst.job):
                acts.delete.append((inst.name, inst.retry_of))
        acts.probing = any(self.flows[n].d.probe and any(e.kind != "taskStatus" for e in self.flows[n].d.probe)
                           for n in self.probe_waiters)
        return acts

    # ---- the JobFlow ----------------------------------------------------------------------------------------
    def set_meta(self, jobflow: Obj) -> None:
        """The JobFlow's metadata changed (suspend annotation, deletion)."""
        self.deleting = meta.is_deleting(jobflow)
        suspended = _suspended(jobflow)
        if suspended != self.suspended:
            self.suspended = suspended
            for fr in self.flows.values():
                if not fr.started and fr.final is None:
                    self.todo[fr.d.name] = None
            for inst in list(self.to_create.values()):
                self._inst_condition(inst)

    def facts_for_phase(self) -> st.Facts:
        phases = frozenset(p for p, n in self.phase_count.items() if n > 0)
        holding = bool(self.plan.exit) and self.plan.exit in self.unfinished
        failed = self.stopping or bool(self.unhandled)
        return st.Facts(self.phase, self.deleting, phases, not self.unfinished and not failed, failed=failed,
                        holding=holding)

    def status(self, now: dt.datetime) -> Obj:
        phase = st.next_phase(self.facts_for_phase())
        if phase != self.phase:
            was_frozen = self.frozen
            self.phase = str(phase)
            if self.frozen and not was_frozen:
                self._freeze()
        out: Obj = {k: v for k, v in self.extra.items()}
        for name in st.LISTS:
            if self.buckets[name]:
                out[name] = list(self.buckets[name])
        if self.history:
            out["jobStatusList"] = list(self.history.values())
        if self.conditions:
            out["conditions"] = dict(self.conditions)
        if self.next and not self.frozen:
            index = {n: self.flows[n].d.index for n in self.next}
            out[st.NEXT_FLOWS] = sorted(self.next, key=index.__getitem__)[:NEXT_LIMIT]
        out["state"] = {**self.state_extra, "phase": self.phase}
        return out

    def _freeze(self) -> None:
        """The JobFlow just stopped: flows that never started say so (once)."""
        self.to_create.clear()
        for fr in self.flows.values():
            if not fr.started and fr.final is None:
                self._flow_condition(fr)
            for inst in fr.insts:
                if inst.job is None and inst.state is IState.ABSENT and inst.note is None:
                    self._inst_condition(inst)

    def watched_jobs(self) -> set[str]:
        """vcjobs whose every change matters now: targets of flows waiting on a probe."""
        out: set[str] = set()
        for name in self.probe_waiters:
            for t in self.flows[name].d.targets:
                out.update(i.name for i in (self.flows[t].insts if t in self.flows else []))
        return out


# ---- pure helpers ------------------------------------------------------------------------------------------
def _closure(f: frozenset[str]) -> frozenset[str]:
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


def _pending(reason: str, message: str) -> Obj:
    return {"phase": str(JP.PENDING), "reason": str(reason), "message": message}


def _suspended(jobflow: Obj) -> bool:
    return str(meta.annotations(jobflow).get(SUSPEND_ANNOTATION, "")).lower() == "true"


def _one_line(e: Exception) -> str:
    return str(e).split("\n")[0]


def _epoch() -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def task_in_phase(job: Obj, task: str, phase: str) -> bool:
    """Every replica of `task` is in pod phase `phase`, by the vcjob's status.taskStatusCount."""
    spec = next((t for t in (job.get("spec") or {}).get("tasks") or [] if t.get("name") == task), None)
    if spec is None:
        return False
    counts = (((job.get("status") or {}).get("taskStatusCount") or {}).get(task) or {}).get("phase") or {}
    return int(counts.get(phase, 0) or 0) >= max(1, int(spec.get("replicas", 1) or 0))


def _failure_ratio(job: Obj) -> str:
    failed = int((job.get("status") or {}).get("failed", 0) or 0)
    if not failed:
        return ""
    total = sum(int(t.get("replicas", 0) or 0) for t in (job.get("spec") or {}).get("tasks") or [])
    return f"{failed}/{max(total, failed)}"


def build(jobflow: Obj, jobs: Iterable[Obj], now: dt.datetime, plan: plan_mod.Plan | None = None,
          reader: Callable[[Inst], str | None] | None = None,
          prober: Callable[[Obj, plan_mod.ProbeEntry], bool | None] | None = None) -> Engine:
    """An engine for `jobflow` (with its previous status) and its vcjobs, settled."""
    eng = Engine(jobflow, plan or plan_mod.compile_spec(jobflow.get("spec"), meta.name(jobflow)), reader, prober)
    eng.load(jobs, now)
    eng.decide(now)
    return eng
