"""The run state of one JobFlow, kept incrementally: what each flow is waiting on, which vcjobs to
create or replace, and the JobFlowStatus — recomputed only where something changed.

The controller builds an Engine once per JobFlow (from its spec, its previous status and its
vcjobs), then feeds it changes: `record(job, at)` for each phase change the watch delivered (the
runningHistories), `observe(name, job)` for a vcjob that changed, `set_meta` for the JobFlow's own
metadata. `decide(now)` settles every flow touched since the last call and returns
the runstate.Actions (vcjobs to create, failed vcjobs to delete for a retry, when to wake up); the controller
builds every vcjob to create, calls `built(now)` (what building decided is settled), creates those
`still_to_create`, and decides again — the retries due start only once nothing is left to build. A vcjob's
change costs its own instance, its flow, and the flows that read that flow (plan.dependents) — never
a pass over the whole JobFlow — and fan-in dependencies on targets are counted, not re-evaluated.
`status(now)` assembles the JobFlowStatus from per-entry dictionaries kept up to date as they change.

Vocabulary: a *flow* is an entry of spec.flows; an *instance* is one vcjob name of a flow
(`<jobflow>-<flow>`; `<jobflow>-<flow>-<n>` for item n of withItems/withParam and iteration n of a
repeat). The rules each step applies are pure: readiness.decide (dependencies), flowexpr (when,
until), flowtemplate (items), status (entries and phase rules). I/O is injected: `reader` returns an
instance's output (its designated pod's termination message), `prober` whether an http/tcp probe
entry holds (None: not known yet), `why` why an instance's vcjob failed for good (its pods read:
api/podfailure; kept in its condition's message, None: not known yet, read again when asked). Without
them (status.compute, tests) outputs are empty and such probes are undecided.

The engine is split by concern into mixins: lifecycle.py (a flow's life: decide, admit, start,
aggregate; probes), conditions.py (what the status shows), outputs.py (outputs, template values);
the data it keeps is in runstate.py. This module holds the bookkeeping (loading, observing vcjobs,
instance states, history), the JobFlow-level rules (handled failures, stopping, the exit handler),
the settle loop and the status assembly.
"""
from __future__ import annotations

import collections
import datetime as dt
import heapq
from collections.abc import Callable, Iterable
from typing import Any

from vclite.api import batch, flow, flowexpr, meta
from vclite.controllers.jobflow import conditions, lifecycle, outputs, readiness
from vclite.controllers.jobflow import runstate as rs
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import status as st
from vclite.lib import clock as clock_mod
from vclite.lib import dag
from vclite.lib import jsoncopy

MAX_POD_DEADLINE = 2**31 - 1   # the largest activeDeadlineSeconds Kubernetes admits

Obj = dict[str, Any]
JP, FP, O, R = batch.JobPhase, flow.FlowPhase, flowexpr.Outcome, st.Reason
rs.NO_FACTS: frozenset[str] = frozenset()


def _failure_time(failed_at: dt.datetime | None, now: dt.datetime | None) -> dt.datetime:
    """When a vcjob failed: its lastTransitionTime, which Kubernetes keeps to the second — or `now`
    when the failure is seen within that second, so a 1s back-off is not cut short by the rounding."""
    if failed_at is None:
        return now or rs.epoch()
    if now is not None and failed_at <= now < failed_at + dt.timedelta(seconds=1):
        return now
    return failed_at


def _time(text: Any) -> dt.datetime | None:
    """A status timestamp, or None when absent or unreadable (never fails a sync)."""
    try:
        return clock_mod.parse_time(text) if isinstance(text, str) else None
    except ValueError:
        return None


class Engine(lifecycle.Lifecycle, conditions.Conditions, outputs.Outputs):
    def __init__(self, jobflow: Obj, plan: plan_mod.Plan,
                 reader: Callable[[rs.Inst], str | None] | None = None,
                 prober: Callable[[Obj, plan_mod.ProbeEntry], bool | None] | None = None,
                 why: Callable[[rs.Inst], str | None] | None = None,
                 waiting: Callable[[str, str], tuple[str, str] | None] | None = None,
                 resume_advice: str | None = None, resume_flags: str = ""):
        """`resume_advice`: how a suspended JobFlow's messages say it can be resumed, where a client cannot resume
        it (a run that serves no API); None: the command that resumes it, with `resume_flags` (`-k KUBECONFIG`)."""
        self.name, self.ns, self.uid = meta.name(jobflow), meta.namespace(jobflow), meta.uid(jobflow)
        self.generation = jobflow.get("metadata", {}).get("generation")   # a spec change: rebuilt
        self.plan, self.reader, self.prober, self.why = plan, reader, prober, why
        self.waiting = waiting      # (vcjob name, uid) -> why its PodGroup waits (waiting.Index.reason)
        self.resume_advice, self.resume_flags = resume_advice, resume_flags
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
        self.suspended = rs.suspended(jobflow)
        self.flows: dict[str, rs.FlowRT] = {n: rs.FlowRT(fd) for n, fd in plan.flows.items()}
        self.insts: dict[str, rs.Inst] = {}
        self._compact = sum(len(fd.items) or 1 for fd in plan.flows.values()) >= rs.COMPACT_AT
        self._detailed: set[str] = set()   # a big flow's Running vcjobs whose entries keep their detail
        self.orphans: dict[str, Obj] = {}
        self.orphan_failing = 0
        self.unfinished: set[str] = set(self.flows)
        self.unhandled: dict[str, str] = {}
        self.active = 0                                        # instances of non-exit flows with a live vcjob
        self.todo: dict[str, None] = {}                        # flows not started, to decide
        self.todo_heap: list[tuple[int, str]] = []             # … by their rank: a flow after those it reads
        self.rank = _ranks(plan)
        self.todo_started: dict[str, None] = {}                # started flows, to re-aggregate first
        self.admitting: dict[str, None] = {}                   # decided READY: admitted together once all is settled
        self.ready: dict[str, None] = {}                       # admitted: started once all is settled again
        self.failures: dict[str, None] = {}                    # flows that failed: is it handled?
        self.to_create: dict[str, rs.Inst] = {}
        self.retry_wait: dict[str, rs.Inst] = {}
        self.replacing: dict[str, rs.Inst] = {}
        self.output_waits: dict[str, tuple[rs.Inst, tuple[str, ...]]] = {}
        self.unread_skips: dict[str, str] = {}                 # flows Skipped by a read found while building
        self.probe_waiters: dict[str, None] = {}
        self.polling = False
        self.carry = self.phase in st.FROZEN                     # rebuilt after it stopped: keep what it said
        self.next: set[str] = set()
        self._standins: set[str] = set()                          # names of stand-in vcjobs being loaded
        # bumped by what may change `workflow()` (an outcome, a failure's vcjob, a failure left unhandled)
        self.outcome_changes = 0
        self.workflow_kept: tuple[tuple[int, bool], dict[str, Any]] | None = None   # (outputs.workflow)
        self.exit_values_kept: tuple[dict[str, Any], dict[str, str]] | None = None   # (outputs._exit_values)
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
                self._mark(n)

    def _mark(self, name: str) -> None:
        """`name` must be looked at again. Started flows go first in a settle: their failures decide
        whether the JobFlow stops before any waiting flow is decided, whatever the order of events. A started
        flow marked again goes to the end of its queue; flows not started are decided in dependency order (each
        after the flows it reads that are to be decided too), so that a dependency found dead says every target
        found dead in that moment (`… : a Skipped, b Skipped`), whatever the order they were marked in."""
        if self.flows[name].started:
            self.todo_started.pop(name, None)
            self.todo_started[name] = None
        elif name not in self.todo:
            self.todo[name] = None
            heapq.heappush(self.todo_heap, (self.rank[name], name))

    def _next_todo(self) -> str:
        """The flow to decide next: a started one first, else the first by rank not started."""
        if self.todo_started:
            name = next(iter(self.todo_started))
            del self.todo_started[name]
            return name
        while True:
            _, name = heapq.heappop(self.todo_heap)
            if self.todo.pop(name, 0) is None:
                return name

    def _facts(self, name: str) -> frozenset[str]:
        fr = self.flows.get(name)
        return fr.facts if fr is not None else rs.NO_FACTS

    # ---- conditions and lists ---------------------------------------------------------------------
    def record(self, job: Obj, at: dt.datetime) -> None:
        """A version of one of its vcjobs, delivered by the watch at `at` before the sync that observes
        the vcjob: its phase goes into that vcjob's runningHistories, in order. A sync sees only the
        latest version, so a phase shorter than the time between syncs would be lost."""
        self._record_history(job, at)

    def _record_history(self, job: Obj, now: dt.datetime) -> None:
        name = meta.name(job)
        prev = self.history.get(name)
        inst = self.insts.get(name)
        if prev is not None and inst is not None and inst.seen_uid and inst.seen_uid != meta.uid(job):
            # a new attempt under the same name: it starts Pending, even if first seen in its last phase
            created = job.get("metadata", {}).get("creationTimestamp") or clock_mod.format_time(now)
            prev = {**prev, "runningHistories": st.histories(prev.get("runningHistories") or [],
                                                             str(JP.PENDING), created)}
        entry = st.job_entry(job, prev, now)
        if self._kept_compact(name, meta.phase(job)):
            entry = st.compact_entry(entry)
        self.history[name] = entry
        if inst is not None:
            inst.seen_uid = meta.uid(job)

    @property
    def compact(self) -> bool:
        """A big flow's status stays small (a whole JobFlow object under etcd's 1.5 MiB at 10,000 jobs):
        a Completed or Pending vcjob (most of a big flow's, at any moment) keeps {phase} in its condition
        (plus retries and output) and {name, state} in jobStatusList, and so does a Running one beyond the first
        rs.DETAILED_RUNNING (`_kept_compact`); a flow waiting to be created keeps
        {phase, reason}, without the message (st.compact_condition). Big: COMPACT_AT jobs or more,
        planned (flows and withItems items) or made (withParam, repeats)."""
        return self._compact

    def _kept_compact(self, name: str, phase: str) -> bool:
        """Whether vcjob `name`'s entries (condition, jobStatusList) are compact in its `phase`: in a big flow, a
        Completed or Pending one, and a Running one once rs.DETAILED_RUNNING others keep their detail (the first to
        run keep it until they leave Running: 10,000 running at once keep the status as small as 10,000 pending)."""
        if not self._compact:
            return False
        if phase == JP.RUNNING:
            if name not in self._detailed and len(self._detailed) < rs.DETAILED_RUNNING:
                self._detailed.add(name)
            return name not in self._detailed
        self._detailed.discard(name)
        return phase in st.COMPACTED

    def _grown(self) -> None:
        """One more vcjob: a flow that becomes big compacts the entries it wrote while it was not."""
        if self._compact or len(self.insts) < rs.COMPACT_AT:
            return
        self._compact = True
        for name, entry in list(self.history.items()):
            if self._kept_compact(name, entry.get("state", "")):
                self.history[name] = st.compact_entry(entry)
        for key, cond in list(self.conditions.items()):
            if key in self.listed and st.compact_condition(cond) is not cond:
                self._set_condition(key, st.compact_condition(cond))
        for inst in self.insts.values():
            if inst.job is not None and (meta.phase(inst.job) in st.COMPACTED or meta.phase(inst.job) == JP.RUNNING):
                self._inst_condition(inst)

    # ---- observing vcjobs ------------------------------------------------------------------------------
    def load(self, jobs: Iterable[Obj], now: dt.datetime) -> None:
        """Initial state: every vcjob of this JobFlow (in any order), and a stand-in (st.standin_job) for each
        vcjob that is gone but whose outcome stood (`_keeps_outcome`: the previous status says it finished
        and — for a plain JobFlow — was deleted afterwards): it stands after a restart as it did before."""
        by_flow: dict[str, list[Obj]] = collections.defaultdict(list)
        others: list[Obj] = []
        jobs = list(jobs)
        present = {meta.name(j) for j in jobs}
        for key, cond in self.prev_conditions.items():
            if key not in present and st.ended_vcjob(cond) and (self.plan.extended or cond.get(st.DELETED)) and \
                    self._flow_of({"metadata": {"name": key}})[0]:
                entry = self.history.get(key) or {}
                jobs.append(st.standin_job(self.ns, key, cond, entry))
                self._standins.add(key)
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
        self._standins.clear()       # (those of instances that cannot be rebuilt: decided anew)
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

    def _restart(self, fr: rs.FlowRT, jobs: list[Obj], now: dt.datetime) -> None:
        """A flow whose vcjobs exist has started: rebuild its instances, then observe them."""
        d = fr.d
        if d.loop is plan_mod.Loop.REPEAT:
            top = max(self._flow_of(j)[1] for j in jobs)
            self._begin(fr, [rs.Inst(self.key(d.name, i), d.name, i) for i in range(top + 1)])
        elif d.fanout:
            items = self._items(fr) if not d.over_failures else [None] * self._failure_items(fr, jobs)
            if items is None:
                return   # the items cannot be known again: the flow is decided anew (and fails)
            self._begin(fr, [rs.Inst(self.key(d.name, i), d.name, i, item=it) for i, it in enumerate(items)])
        else:
            self._begin(fr, [rs.Inst(self.key(d.name), d.name)])
        for job in jobs:
            if meta.name(job) in self.insts:
                self.observe(meta.name(job), job, now)

    def _failure_items(self, fr: rs.FlowRT, jobs: list[Obj]) -> int:
        """How many items the exit handler looping over `{{workflow.failures}}` had, when it is rebuilt: the
        other flows' outcomes are settled only after the load, so the failures are read again when an item's
        vcjob is built (`values_for`); their count is the one the status recorded — the controller stores it before
        the handler's first vcjob is made (controller `_store_failure_items`) — else its vcjobs' (a status written
        before that rule)."""
        n = (self.prev_conditions.get(self.key(fr.d.name)) or {}).get("items")
        return n if isinstance(n, int) and n >= 0 else max(self._flow_of(j)[1] for j in jobs) + 1

    def _restore_sticky(self, fr: rs.FlowRT) -> None:
        """Flow-level failures and skips recorded in the previous status survive a rebuild."""
        prev = self.prev_conditions.get(self.key(fr.d.name)) or {}
        if not fr.started and prev.get("phase") == st.SKIPPED:
            self._finish(fr, O.SKIPPED, prev.get("reason", ""), prev.get("message", ""))
            return
        if not fr.started and fr.d.fanout and prev.get("reason") == R.NO_ITEMS:
            self._begin(fr, [])
            self._finish(fr, O.COMPLETED, R.NO_ITEMS, prev.get("message", ""))
            return
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
        standin = name in self._standins
        if job is not None and not standin:
            self._record_history(job, now)
        inst = self.insts.get(name)
        if inst is None:
            self._observe_orphan(name, job)
            return
        if job is None and self._keeps_outcome(inst):
            inst.gone = True            # not created again: the flow keeps the outcome its vcjob had
            self._update(inst, now)
            return
        if job is not None and inst.retry_of and meta.uid(job) != inst.retry_of:
            inst.retry_of = ""          # the new attempt exists
        held = self._held(inst)
        inst.job, inst.gone = job, standin
        self._standins.discard(name)
        if job is not None:
            inst.note = None
        self._update(inst, now)
        if held and not self._held(inst):
            self._touch(self.plan.dependents.get(inst.flow, ()))   # (it runs now: its dependents may be next)
        if job is None and not self.plan.extended:
            self._reopen(self.flows[inst.flow])

    def _keeps_outcome(self, inst: rs.Inst) -> bool:
        """Whether `inst`'s vcjob, just deleted, finished first and was deleted by something else than a
        retry (its ttlSecondsAfterFinished, a user): then its outcome stands and it is not created again
        (a retry still re-runs a failed one). Volcano re-creates it — over and over with a TTL; a plain
        JobFlow still re-creates a Completed vcjob a user deleted (without a TTL), as Volcano does."""
        last = inst.job
        if last is None or meta.phase(last) not in st.ENDED or (inst.retry_of and meta.uid(last) == inst.retry_of):
            return False
        return self.plan.extended or (last.get("spec") or {}).get("ttlSecondsAfterFinished") is not None

    def _reopen(self, fr: rs.FlowRT) -> None:
        """Volcano's rule for a plain JobFlow: a Completed flow whose vcjob is deleted while the JobFlow
        runs is created again (its outcome is forgotten until it completes again). Flows using vclite's
        fields keep outcomes once known (expressions rely on facts that only grow)."""
        if fr.final != O.COMPLETED or self.frozen or self.stopping or fr.d.loop is not plan_mod.Loop.NONE:
            return
        fr.final = None
        self.outcome_changes += 1
        self.unfinished.add(fr.d.name)
        self._set_facts(fr, rs.NO_FACTS)

    def _observe_orphan(self, name: str, job: Obj | None) -> None:
        was_stopping = self.stopping
        self._note_orphan(name, job)
        if self.stopping != was_stopping:
            self._say_exit_running()

    def _note_orphan(self, name: str, job: Obj | None) -> None:
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

    def create_failed(self, inst: rs.Inst, note: st.Note) -> None:
        """The controller could not create `inst`'s vcjob; FailedCreate (phase Failed) is final."""
        held = self._held(inst)
        inst.note = note
        self._update(inst, None)
        if self._held(inst) != held:
            self._touch(self.plan.dependents.get(inst.flow, ()))   # (not running after all: not next)

    def _held(self, inst: rs.Inst) -> bool:
        """Whether `inst` is its flow's first vcjob and could not be made yet (its JobTemplate is missing,
        a vcjob of its name is not the JobFlow's): the flow started but does not run, so the flows waiting
        on it are not next. (The first only: a missing template holds every vcjob of a flow alike.)"""
        fr = self.flows.get(inst.flow)
        return fr is not None and bool(fr.insts) and fr.insts[0] is inst and inst.job is None and \
            inst.note is not None and inst.note.reason in rs.RETRIED_NOTES

    def held(self, name: str) -> bool:
        """Whether flow `name` started but its (first) vcjob could not be made yet (`_held`)."""
        fr = self.flows[name]
        return fr.started and bool(fr.insts) and self._held(fr.insts[0])

    # ---- instance state ---------------------------------------------------------------------------
    def _inst_state(self, inst: rs.Inst, d: plan_mod.FlowDef) -> rs.IState:
        job = inst.job
        if job is None:
            return rs.IState.FAILED if inst.note is not None and inst.note.phase == JP.FAILED else rs.IState.ABSENT
        if inst.retry_of and meta.uid(job) == inst.retry_of:
            return rs.IState.REPLACING
        phase = meta.phase(job)
        if phase == JP.COMPLETED:
            return rs.IState.COMPLETED
        if phase in (JP.FAILED, JP.TERMINATED):
            if not inst.refused and not self._retry_refusal(inst, d) and not self._not_retried(d):
                return rs.IState.RETRY_WAIT
            return rs.IState.FAILED if phase == JP.FAILED else rs.IState.TERMINATED
        if phase == JP.TERMINATING and self._retry_refusal(inst, d):
            return rs.IState.TERMINATED
        return rs.IState.ACTIVE

    def _retry(self, inst: rs.Inst, now: dt.datetime) -> None:
        """The back-off of a failed instance has passed: replace its vcjob (or create the next attempt at
        once when it is gone) — unless, as Argo checks when it would create the retry, maxDuration has
        passed since the first attempt (the JobFlow was suspended, or the controller down, meanwhile)."""
        d = self.flows[inst.flow].d
        first = _time(self._first_created(inst))
        if d.backoff.max_duration is not None and first is not None and \
                now > first + dt.timedelta(seconds=d.backoff.max_duration):
            inst.refused = (f"attempt {inst.retries + 1} failed; not retried: maxDuration "
                            f"{clock_mod.format_duration(d.backoff.max_duration)} from the first attempt "
                            f"({clock_mod.format_time(first)}) passed while the retry waited")
            self._update(inst, now)
            return
        inst.retries += 1                            # recorded in the status before the delete
        inst.first_created = self._first_created(inst)
        if inst.gone:                                # nothing to delete: the next attempt is made at once
            inst.job, inst.gone, inst.retry_of = None, False, ""
        else:
            inst.retry_of = meta.uid(inst.job) if inst.job else ""
        self._update(inst, now)

    def built(self, now: dt.datetime) -> None:
        """Every vcjob of this moment is built (before any is created): what building decided — a flow Skipped for
        what its JobTemplate reads, a vcjob refused (`InvalidTemplate`), and what follows from them (a handler
        Skipped in turn, a failure left unhandled) — is settled now, so that `still_to_create` knows whether the
        JobFlow stopped, whatever the order the vcjobs were built in: the skips building found are applied only now,
        so every vcjob of the moment read the flows as they were at its start (one reading the output of a flow
        Skipped in this moment waits for it, then reads it Skipped — unless the failure that skip left unhandled
        stopped the JobFlow: then it is NotCreated, as a vcjob waiting for an output at a stop is)."""
        for flow, message in list(self.unread_skips.items()):
            self.apply_unread_skip(flow, message)
        self.unread_skips.clear()
        self._settle(now)

    def still_to_create(self, inst: rs.Inst) -> bool:
        """Whether `inst`'s vcjob is still to be made once the moment's vcjobs are `built`: building them may have
        stopped the JobFlow (a template reading an output that cannot be read skips its flow, and the failure it
        handled is unhandled then; a patch that cannot be applied fails its flow), which keeps the others of that
        moment from being created — but the exit handler's."""
        return self.to_create.get(inst.name) is inst and (not self.stopping or self.flows[inst.flow].d.exit)

    def attempt_deadline(self, inst: rs.Inst, now: dt.datetime) -> int | None:
        """Seconds a retry attempt's pods may run (their activeDeadlineSeconds): what is left of
        `backoff.maxDuration` from the first attempt, as Argo sets a retried pod's deadline; None for a
        first attempt or without a maxDuration. At least 1 (a retry starts only before the end)."""
        d = self.flows[inst.flow].d
        first = _time(self._first_created(inst))
        if inst.retries == 0 or d.backoff.max_duration is None or first is None:
            return None
        left = (first + dt.timedelta(seconds=d.backoff.max_duration) - now).total_seconds()
        return max(1, int(left)) if left <= MAX_POD_DEADLINE else None   # (Argo truncates to seconds too)

    def _not_retried(self, d: plan_mod.FlowDef) -> bool:
        """No retry of `d` starts any more: the JobFlow stopped (but the exit handler's). A failure left
        without its retry is the flow's outcome (NotRetried), so what depends on it is decided."""
        return self.frozen or (self.stopping and not d.exit)

    def _left_unretried(self, inst: rs.Inst) -> bool:
        """`inst` failed with a retry left that will not start (its condition says NotRetried)."""
        d = self.flows[inst.flow].d
        return inst.state in (rs.IState.FAILED, rs.IState.TERMINATED) and inst.job is not None and d.retried \
            and not inst.refused and self._not_retried(d) and not self._retry_refusal(inst, d)

    def _retry_refusal(self, inst: rs.Inst, d: plan_mod.FlowDef) -> str:
        """Why `inst`'s failed (or failing) vcjob is not retried; "" when it is."""
        if inst.retries >= d.retry_limit or d.backoff.max_duration is None:
            return plan_mod.retry_refusal(d.retry_limit, d.backoff, inst.retries, None, None)
        job = inst.job or {}
        failed_at = ((job.get("status") or {}).get("state") or {}).get("lastTransitionTime")
        return plan_mod.retry_refusal(d.retry_limit, d.backoff, inst.retries, _time(self._first_created(inst)),
                                      _time(failed_at))

    def _failure_origin(self, inst: rs.Inst, now: dt.datetime | None) -> dt.datetime:
        """When `inst`'s vcjob failed, as the back-off counts it (_failure_time)."""
        failed_at = _time(((inst.job or {}).get("status") or {}).get("state", {}).get("lastTransitionTime"))
        return _failure_time(failed_at, now)

    def _seen_failure(self, inst: rs.Inst, d: plan_mod.FlowDef, old: rs.IState,
                      now: dt.datetime | None) -> dt.datetime | None:
        """A failed attempt seen for the first time: whether it is retried is decided now, for good, from the
        time its back-off runs from — so a failure seen at 25.5s (its transition time kept as 25s) with a 5s
        back-off and maxDuration 30s is refused at once, not shown waiting then refused as the back-off ends.
        Returns that time (None when nothing was decided)."""
        job = inst.job
        if job is None or inst.refused or not d.retried or meta.phase(job) not in (JP.FAILED, JP.TERMINATED) or \
                old in (rs.IState.RETRY_WAIT, rs.IState.FAILED, rs.IState.TERMINATED) or \
                (inst.retry_of and meta.uid(job) == inst.retry_of):
            return None
        origin = self._failure_origin(inst, now)
        inst.refused = plan_mod.retry_refusal(d.retry_limit, d.backoff, inst.retries,
                                              _time(self._first_created(inst)), origin)
        return origin

    @staticmethod
    def _first_created(inst: rs.Inst) -> str:
        return inst.first_created or ((inst.job or {}).get("metadata") or {}).get("creationTimestamp") or ""

    def _update(self, inst: rs.Inst, now: dt.datetime | None) -> None:
        fr = self.flows[inst.flow]
        if not fr.d.exit:
            self.outcome_changes += 1
        old = inst.state
        failed_at = self._seen_failure(inst, fr.d, old, now)
        new = self._inst_state(inst, fr.d)
        if new in rs.FINAL_I and inst.output is None and self.reader is not None and self.plan.extended:
            inst.output = self.reader(inst)   # (first: an API error raised here leaves the instance as it was)
        if old != new:
            fr.counts[old] -= 1
            fr.counts[new] += 1
            inst.state = new
            if not fr.d.exit:
                self.active += (new in rs.RUNNING_I) - (old in rs.RUNNING_I)
        if new is rs.IState.RETRY_WAIT:
            if old is not rs.IState.RETRY_WAIT or inst.retry_at is None:
                # the back-off runs from the failure (as Argo's), so a restarted controller waits the same
                failed_at = failed_at or self._failure_origin(inst, now)
                inst.retry_at = failed_at + dt.timedelta(seconds=fr.d.backoff.delay(inst.retries))
            self.retry_wait[inst.name] = inst
        else:
            self.retry_wait.pop(inst.name, None)
        if new is rs.IState.REPLACING:
            self.replacing[inst.name] = inst
        else:
            self.replacing.pop(inst.name, None)
        if new is rs.IState.ABSENT and (inst.note is None or inst.note.reason in rs.RETRIED_NOTES):
            self.to_create[inst.name] = inst
        else:
            self.to_create.pop(inst.name, None)
        if old != new and self.plan.exit and self.stopping:    # its condition counts the running jobs
            self._mark(self.plan.exit)
        if new not in rs.TOLD_I and inst.job is not None:
            inst.why = None                        # (retried: the next attempt's failure is read when it fails)
        elif inst.why is None and inst.job is not None and self.why is not None:
            inst.why = self.why(inst)
        self._inst_condition(inst)
        self._mark(inst.flow)

    # ---- flows ------------------------------------------------------------------------------------------
    def _begin(self, fr: rs.FlowRT, insts: list[rs.Inst]) -> None:
        fr.started = True
        self.probe_waiters.pop(fr.d.name, None)
        self.next.discard(fr.d.name)
        fr.insts = insts
        fr.counts = collections.Counter({rs.IState.ABSENT: len(insts)})
        for inst in insts:
            self._remember(inst)
        if fr.d.loop is not plan_mod.Loop.NONE:
            self._flow_condition(fr)
        for inst in insts:
            self._update(inst, None)
        self._touch(self.plan.dependents.get(fr.d.name, ()))

    def _remember(self, inst: rs.Inst) -> None:
        """A new instance: what the previous status recorded about it (retries, output) still holds."""
        self.insts[inst.name] = inst
        self._grown()
        prev = self.prev_conditions.get(inst.name) or {}
        inst.retries = int(prev.get("retries") or 0)
        inst.first_created = str(prev.get("firstCreateTime") or "")
        if prev.get("reason") == R.RETRIES_EXHAUSTED:
            inst.refused = str(prev.get("message") or "not retried").partition(st.LAST_ATTEMPT)[0]
        inst.retry_of = str(prev.get("retryOf") or "")
        if prev.get("output") is not None:
            inst.output = str(prev["output"])
        inst.why = st.recorded_failure(prev)

    def _finish(self, fr: rs.FlowRT, outcome: str, reason: str = "", message: str = "") -> None:
        fr.final, fr.reason, fr.message = outcome, reason, message
        self.outcome_changes += 1
        self.unfinished.discard(fr.d.name)
        self.probe_waiters.pop(fr.d.name, None)
        self.next.discard(fr.d.name)
        self._set_facts(fr, self._flow_facts(fr))
        if outcome in (O.FAILED, O.TERMINATED):
            self.failures[fr.d.name] = None     # checked once every started flow is up to date
        elif outcome == O.SKIPPED:
            self._recheck_failures(fr)
        for name, (inst, flows) in list(self.output_waits.items()):
            left = [f for f in flows if f in self.flows and self.flows[f].final is None]
            if not left:
                del self.output_waits[name]
                if inst.note is not None and inst.note.reason == R.WAITING_OUTPUT:
                    inst.note = None
                    self._update(inst, None)
            elif fr.d.name in flows:                # (it says what it still waits for)
                self.wait_for_output(inst, left)
        if not fr.insts or fr.d.loop is not plan_mod.Loop.NONE:
            self._flow_condition(fr)
        if self.plan.exit and self.plan.exit in self.flows:
            self._mark(self.plan.exit)

    def _flow_facts(self, fr: rs.FlowRT) -> frozenset[str]:
        if fr.d.fanout and fr.started:
            c = fr.counts
            done = c[rs.IState.COMPLETED] + c[rs.IState.FAILED] + c[rs.IState.TERMINATED]
            return readiness.fanout_facts(fr.final, len(fr.insts), done, c[rs.IState.COMPLETED], c[rs.IState.FAILED])
        return flowexpr.outcome_facts(fr.final) if fr.final is not None else rs.NO_FACTS

    def _set_facts(self, fr: rs.FlowRT, facts: frozenset[str]) -> None:
        old = fr.facts
        if facts == old:
            return
        fr.facts = facts
        for dep in self.plan.dependents.get(fr.d.name, ()):
            dfr = self.flows[dep]
            if dfr.d.simple:
                self._count(dfr, old, facts)
            self._mark(dep)

    def _handled(self, fr: rs.FlowRT) -> bool:
        """A failure is handled while some flow reading it can run — or ran — with the facts as they are
        now (an expression accepting Failed, `strategy: any` with another target still possible). When
        such a reader is Skipped later, the failure is checked again (`_recheck_failures`)."""
        return any(self._accepts(self.flows[dep], fr.d.name) for dep in self.plan.dependents.get(fr.d.name, ()))

    def _accepts(self, reader: rs.FlowRT, failed: str) -> bool:
        """Whether `reader`'s dependency can hold (or held) with flow `failed` failed. A probe on a target
        says the target is up, never that it may fail: its atom counts as false for the failed flow."""
        d = reader.d
        if reader.final == O.SKIPPED or d.dependency is None or d.exit:
            return False
        if d.simple:
            return reader.dead < len(d.atoms) if d.strategy is plan_mod.Strategy.ANY else reader.dead == 0
        facts = {a: self._atom_facts(d, a) for a in d.atoms}
        if plan_mod.probe_flow(failed) in facts:
            facts[plan_mod.probe_flow(failed)] = flowexpr.outcome_facts(O.FAILED)
        return flowexpr.evaluate_depends(d.dependency, facts) is not False

    def _recheck_failures(self, skipped: rs.FlowRT) -> None:
        """A flow was Skipped: failures it was handling may be unhandled now."""
        for ref in skipped.d.refs:
            fr = self.flows.get(ref)
            if fr is not None and fr.final in (O.FAILED, O.TERMINATED) and ref not in self.unhandled \
                    and not self._handled(fr):
                self._unhandled(fr, fr.message)

    def _unhandled(self, fr: rs.FlowRT, message: str) -> None:
        was_stopping, said = self.stopping, self._not_created()
        self.unhandled[fr.d.name] = message or f"flow {fr.d.name} {fr.final}"
        self.outcome_changes += 1
        if not was_stopping:
            self._stop_everything()
        elif self._not_created() != said and not self.compact:   # (a big flow's NotCreated entries have no message)
            self._say_not_created()
        self._say_exit_running()

    def _stop_everything(self) -> None:
        """An unhandled failure: nothing new starts (but the exit handler); say so once."""
        self.to_create = {k: i for k, i in self.to_create.items() if self.flows[i.flow].d.exit}
        for fr in self.flows.values():
            if fr.d.exit:
                continue
            if not fr.started and fr.final is None:
                self._flow_condition(fr)
            for inst in fr.insts:
                if inst.state is rs.IState.RETRY_WAIT:
                    self._update(inst, None)        # not retried now: its failure is the flow's outcome
                elif inst.state is rs.IState.ABSENT:
                    self._inst_condition(inst)
        if self.plan.exit:
            self._mark(self.plan.exit)

    # ---- deciding ------------------------------------------------------------------------------------
    def decide(self, now: dt.datetime) -> rs.Actions:
        """Settle every touched flow; what the controller should do now."""
        self.polling = False                         # set when an http/tcp check must be asked again
        for name in list(self.probe_waiters):
            self._mark(name)
        self._settle(now)
        # The retries due start once this moment is settled and its vcjobs are built: a failure found in it (at a
        # resume, say, a template's read skipping its flow) wins, and the retries waiting are then not made
        # (NotRetried: their failure is their flow's outcome) — decided before anything is counted or deleted.
        due = self._retries_due(now)
        for inst in due:
            self._retry(inst, now)
        if due:
            self._settle(now)
        return self._actions(now)

    def _retries_due(self, now: dt.datetime) -> list[rs.Inst]:
        """The failed instances whose retry starts now: their back-off has passed, the JobFlow is neither
        suspended nor stopped (after an unhandled failure only the exit handler's retries), and every vcjob
        this moment asked for has been built (none is left without a note): building them reads the
        JobTemplates, which may skip a flow and so stop the JobFlow — the controller decides again after it
        built them, and only then are the retries counted and their failed vcjobs deleted."""
        if self.frozen or self.suspended:
            return []
        due = [i for i in self.retry_wait.values() if i.retry_at is not None and i.retry_at <= now
               and (not self.stopping or self.flows[i.flow].d.exit)]
        if due and any(i.note is None for i in self.to_build()):
            return []
        return due

    def to_build(self) -> list[rs.Inst]:
        """The instances whose vcjobs the controller is asked to make now (those of the exit handler only, after
        an unhandled failure). After `built`, those not built yet are of the same moment: the flows what building
        decided started (a flow handling the failure of a vcjob refused as built, say) — built before any is
        created, as their build may stop the JobFlow."""
        return [i for i in self.to_create.values() if not self.stopping or self.flows[i.flow].d.exit]

    def _settle(self, now: dt.datetime) -> None:
        """Decide until nothing is left to decide: skips, failures, admissions, starts."""
        guard = 0
        while self.todo or self.todo_started or self.admitting or self.ready or self.failures:
            if not self.todo_started and self.failures:
                fr = self.flows[next(iter(self.failures))]
                del self.failures[fr.d.name]
                if not self._handled(fr):
                    self._unhandled(fr, fr.message)
                continue
            if self.todo or self.todo_started:
                self._step(self.flows[self._next_todo()], now)
                continue
            if self.admitting:
                # Every decision is settled: what is ready is admitted together (`when`, items), so a skip or
                # failure found there, which may stop the JobFlow, wins over every start whatever the spec order.
                batch = [(self.flows[n], self._can_start(self.flows[n])) for n in self.admitting]
                self.admitting.clear()
                for fr, can in batch:
                    if not fr.started and fr.final is None and (not can or self._admit(fr)):
                        self.ready[fr.d.name] = None     # (started below, or NotCreated when it cannot start)
                continue
            # Settled again: start what is ready, all of it, then settle what the starts decided (a fan-out
            # with no items is Completed at once): a failure found then stops the vcjobs still to be created
            # (a failure found in the same settle wins), never another of these starts, whatever the spec order.
            batch = [self.flows[n] for n in self.ready]
            self.ready.clear()
            for fr in batch:
                if not fr.started and fr.final is None and self._can_start(fr):
                    self._start(fr)
                elif not fr.started and fr.final is None:
                    self._flow_condition(fr)
            guard += 1
            if guard > 50 * (len(self.flows) + len(self.insts) + 10):
                raise RuntimeError(f"jobflow {self.name}: decisions do not settle")

    # ---- outputs and templates -------------------------------------------------------------------------
    # ---- actions ------------------------------------------------------------------------------------------
    def _actions(self, now: dt.datetime) -> rs.Actions:
        acts = rs.Actions()
        if not self.frozen and not self.suspended:
            acts.create = self.to_build()
        if not self.frozen:   # (after an unhandled failure, only the exit handler's retries still wait)
            due = [i.retry_at for i in self.retry_wait.values()
                   if i.retry_at is not None and (not self.stopping or self.flows[i.flow].d.exit)]
            acts.wake_at = min(due) if due else None
        for inst in self.replacing.values():
            if inst.job is not None and not meta.is_deleting(inst.job):
                acts.delete.append((inst.name, inst.retry_of))
        acts.probing = self.polling and bool(self.probe_waiters)
        return acts

    # ---- the JobFlow ----------------------------------------------------------------------------------------
    def set_meta(self, jobflow: Obj) -> None:
        """The JobFlow's metadata changed (suspend annotation, deletion)."""
        self.deleting = meta.is_deleting(jobflow)
        suspended = rs.suspended(jobflow)
        if suspended != self.suspended:
            self.suspended = suspended
            for fr in self.flows.values():
                if not fr.started and fr.final is None:
                    self._mark(fr.d.name)
            for inst in [*self.to_create.values(), *self.retry_wait.values()]:
                self._inst_condition(inst)

    def facts_for_phase(self) -> st.Facts:
        phases = frozenset(p for p, n in self.phase_count.items() if n > 0)
        holding = bool(self.plan.exit) and self.plan.exit in self.unfinished
        failed = self.stopping or bool(self.unhandled)
        return st.Facts(self.phase, self.deleting, phases, not self.unfinished and not failed, failed=failed,
                        holding=holding)

    def next_phase(self) -> str:
        """The JobFlow's phase by the rules, now (status() applies it)."""
        return str(st.next_phase(self.facts_for_phase()))

    def size(self) -> int:
        """How many entries the status holds (conditions)."""
        return len(self.conditions)

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
        if self.next and not self.frozen and not self.stopping:
            index = {n: self.flows[n].d.index for n in self.next}
            out[st.NEXT_FLOWS] = sorted(self.next, key=index.__getitem__)[:rs.NEXT_LIMIT]
        out["state"] = {**self.state_extra, "phase": self.phase}
        return out

    def _freeze(self) -> None:
        """The JobFlow just stopped: flows that never started say so (once)."""
        self.to_create.clear()
        for fr in self.flows.values():
            if not fr.started and fr.final is None:
                self._flow_condition(fr)
            for inst in fr.insts:
                if (inst.job is None and inst.state is rs.IState.ABSENT) or \
                        inst.state is rs.IState.RETRY_WAIT or self._left_unretried(inst):
                    self._inst_condition(inst)


def _ranks(plan: plan_mod.Plan) -> dict[str, int]:
    """Each flow's place in a topological order of what the flows read (spec order among equals; spec order only,
    for a plan with a cycle: its flows are blocked)."""
    graph = {n: [r for r in fd.refs if r in plan.flows] for n, fd in plan.flows.items()}
    try:
        order = dag.topological_order(graph)
    except ValueError:
        order = list(plan.flows)
    return {n: i for i, n in enumerate(order)}


def build(jobflow: Obj, jobs: Iterable[Obj], now: dt.datetime, plan: plan_mod.Plan | None = None,
          reader: Callable[[rs.Inst], str | None] | None = None,
          prober: Callable[[Obj, plan_mod.ProbeEntry], bool | None] | None = None) -> Engine:
    """An engine for `jobflow` (with its previous status) and its vcjobs, settled."""
    eng = Engine(jobflow, plan or plan_mod.compile_spec(jobflow.get("spec"), meta.name(jobflow)), reader, prober)
    eng.load(jobs, now)
    eng.decide(now)
    return eng
