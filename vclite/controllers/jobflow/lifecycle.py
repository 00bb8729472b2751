"""How one flow goes through its life: a mixin of engine.Engine.

A flow that has not started is decided (`_step` -> `_verdict`): its dependency through
readiness.decide, or counted (`_count`, `_simple_verdict`) when it is only targets, so a fan-in over
10,000 targets costs nothing per target change; the exit handler waits for the others. A ready flow
is admitted (`_admit`: `when`, its items) and started once the settle has nothing left to decide
(`_start`: its instances). A started flow is aggregated from its instances (`_aggregate`, `_repeat`):
a fan-out's counts, a repeat's `until`. Probes (`_probe_facts`) turn the target's vcjobs into the
facts of its pseudo-flow `probe:<target>`.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from vclite.api import batch, flowexpr, flowsyntax, flowtemplate, meta
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import readiness
from vclite.controllers.jobflow import runstate as rs
from vclite.controllers.jobflow import status as st

Obj = dict[str, Any]
JP, O, R = batch.JobPhase, flowexpr.Outcome, st.Reason


class Lifecycle:
    """Mixin of engine.Engine (its state: flows, plan, todo, ready, probe_waiters, next, …)."""

    def _step(self, fr: rs.FlowRT, now: dt.datetime) -> None:
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
            verdict = self._verdict(fr)   # a dependency that can never hold says so: Skipped, not NotCreated,
            if verdict.state is readiness.State.SKIPPED:   # even when it is found after the JobFlow is Failed
                fr.verdict = verdict
                self._finish(fr, O.SKIPPED, R.NEVER_MET, verdict.message)
                return
            self._flow_condition(fr)      # after an unhandled failure nothing new starts: NotCreated
            return
        fr.verdict = self._verdict(fr)
        state = fr.verdict.state
        if state is readiness.State.SKIPPED:
            self._finish(fr, O.SKIPPED, R.NEVER_MET, fr.verdict.message)
            return
        # a probe is asked again while it does not hold, and while it holds for a flow that cannot start yet
        # (suspended): it may stop holding before the flow starts
        waiting_probe = bool(fr.d.probe) and (state is readiness.State.WAITING or
                                              state is readiness.State.READY and not self._can_start(fr))
        if waiting_probe:
            self.probe_waiters[fr.d.name] = None
        else:
            self.probe_waiters.pop(fr.d.name, None)
        self._update_next(fr)
        if state is readiness.State.READY and self._can_start(fr):
            self.admitting[fr.d.name] = None
        self._flow_condition(fr)

    def _can_start(self, fr: rs.FlowRT) -> bool:
        return not self.frozen and not self.suspended and (fr.d.exit or not self.stopping)

    def _verdict(self, fr: rs.FlowRT) -> readiness.Verdict:
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

        return readiness.decide(d, self.plan, lambda name: self._atom_facts(d, name))

    def _simple_verdict(self, fr: rs.FlowRT) -> readiness.Verdict:
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

    def _init_counters(self) -> None:
        for fr in self.flows.values():
            if fr.d.simple:
                fr.pending, fr.dead = len(fr.d.atoms), 0
                for t in fr.d.atoms:
                    self._count(fr, rs.NO_FACTS, self._facts(t))

    def _count(self, fr: rs.FlowRT, old: frozenset[str], new: frozenset[str]) -> None:
        want = {O.ANY_COMPLETED, O.COMPLETED} if fr.d.strategy is plan_mod.Strategy.ANY else {O.COMPLETED}
        met_old, met_new = bool(want & readiness.closure(old)), bool(want & readiness.closure(new))
        dead_old = O.FINISHED in readiness.closure(old) and not met_old
        dead_new = O.FINISHED in readiness.closure(new) and not met_new
        fr.pending -= int(met_new) - int(met_old)     # symmetric: a plain flow's outcome may be reopened
        fr.dead += int(dead_new) - int(dead_old)

    def _update_next(self, fr: rs.FlowRT) -> None:
        """`nextFlows`: a flow waiting only on flows that run, and — while the JobFlow is suspended — one whose
        dependency holds: what the resume starts (`vcctl jobflow get` says so before the resume)."""
        d = fr.d
        state = fr.verdict.state if fr.verdict is not None else None
        if state is readiness.State.READY and self.suspended and not self.frozen and not self.stopping:
            self.next.add(d.name)
        elif state is readiness.State.WAITING and not d.exit and len(d.refs) <= 16 and all(
                (self.flows[r].started and not self.held(r)) or self.flows[r].final is not None
                for r in d.refs if r in self.flows):
            self.next.add(d.name)
        else:
            self.next.discard(d.name)

    def _admit(self, fr: rs.FlowRT) -> bool:
        """A ready flow's own decisions, before anything starts: `when` (false: Skipped; an error:
        Failed), its items (not a JSON list: Failed). True: it is to start (with no items: Completed)."""
        d = fr.d
        if d.when is not None:
            try:
                ok = flowexpr.evaluate_when(d.when, self._env(d))
            except flowexpr.ExprError as e:
                self._finish(fr, O.FAILED, R.INVALID_CONDITION, f"flow {d.name}: when: {flowsyntax.one_line(e)}")
                return False
            if not ok:
                self._finish(fr, O.SKIPPED, R.WHEN_FALSE, f"when {d.when} is false")
                return False
        if d.fanout:
            fr.items = self._items(fr)
            if fr.items is None:
                return False
        return True

    def _start(self, fr: rs.FlowRT) -> None:
        d = fr.d
        if d.fanout and not fr.items:   # (here, not in _admit: a failure found in the same settle wins)
            self._begin(fr, [])
            self._finish(fr, O.COMPLETED, R.NO_ITEMS, "no failures: nothing to run" if d.over_failures
                         else "no items: nothing to run")
        elif d.loop is plan_mod.Loop.REPEAT:
            self._begin(fr, [rs.Inst(self.key(d.name, 0), d.name, 0)])
        elif d.fanout:
            self._begin(fr, [rs.Inst(self.key(d.name, i), d.name, i, item=it) for i, it in enumerate(fr.items or [])])
        else:
            self._begin(fr, [rs.Inst(self.key(d.name), d.name)])

    def _items(self, fr: rs.FlowRT) -> list[Any] | None:
        d = fr.d
        if d.loop is plan_mod.Loop.ITEMS:
            return list(d.items)
        if d.over_failures:   # (the exit handler: every other flow has finished, the list is final)
            return list(self.workflow()["failures"])
        try:
            return flowtemplate.parse_items(self.output_of(d.param_from),
                                            f"withParam of flow {d.name} (the output of flow {d.param_from})",
                                            d.param_path, f"outputs.{d.param_from}")
        except ValueError as e:
            self._finish(fr, O.FAILED, R.INVALID_PARAM, str(e))
            return None

    def _aggregate(self, fr: rs.FlowRT, now: dt.datetime) -> None:
        d, c = fr.d, fr.counts
        if d.loop is plan_mod.Loop.REPEAT:
            self._repeat(fr)
        elif d.fanout:
            n = len(fr.insts)
            done = c[rs.IState.COMPLETED] + c[rs.IState.FAILED] + c[rs.IState.TERMINATED]
            if done == n:
                outcome = O.COMPLETED if c[rs.IState.COMPLETED] == n else (
                    O.FAILED if c[rs.IState.FAILED] else O.TERMINATED)
                self._finish(fr, outcome)
            else:
                self._set_facts(fr, self._flow_facts(fr))
                self._flow_condition(fr)
        else:
            inst = fr.insts[0]
            if inst.state in rs.FINAL_I:
                msg = inst.note.message if inst.note is not None else ""
                self._finish(fr, rs.OUTCOME_OF[inst.state], str(inst.note.reason) if inst.note else "", msg)

    def _repeat(self, fr: rs.FlowRT) -> None:
        d, last = fr.d, fr.insts[-1]
        if last.state in (rs.IState.FAILED, rs.IState.TERMINATED):
            self._finish(fr, rs.OUTCOME_OF[last.state], "", f"iteration {last.index} {last.state}")
            return
        if last.state is not rs.IState.COMPLETED:
            self._flow_condition(fr)
            return
        if fr.until_done >= last.index:
            return
        fr.until_done = last.index
        try:
            done = flowexpr.evaluate_when(d.until, self._env(d, iteration=last.index))
        except flowexpr.ExprError as e:
            self._finish(fr, O.FAILED, R.INVALID_CONDITION, f"flow {d.name}: repeat.until: {flowsyntax.one_line(e)}")
            return
        if done:
            fr.reason = R.REPEAT
            self._finish(fr, O.COMPLETED, R.REPEAT, f"until {d.until} held after iteration {last.index}")
        elif len(fr.insts) >= d.limit:
            self._finish(fr, O.FAILED, R.REPEAT_LIMIT,
                         f"until {d.until} still false after {len(fr.insts)} iteration"
                         f"{'' if len(fr.insts) == 1 else 's'} (limit {d.limit})")
        else:
            inst = rs.Inst(self.key(d.name, last.index + 1), d.name, last.index + 1)
            fr.insts.append(inst)
            fr.counts[rs.IState.ABSENT] += 1
            self._remember(inst)
            self._update(inst, None)
            self._flow_condition(fr)

    def _atom_facts(self, d: plan_mod.FlowDef, atom: str) -> frozenset[str]:
        if atom.startswith(plan_mod.PROBE_PREFIX):
            return self._probe_facts(d, atom[len(plan_mod.PROBE_PREFIX):])
        return self._facts(atom)

    def _probe_facts(self, fd: plan_mod.FlowDef, target: str) -> frozenset[str]:
        """Facts of `target` as `fd`'s probe sees it: Completed once every entry covering it holds on the
        target's current vcjobs (all items; a repeat's last iteration), Failed once the target finished
        without that; the target's own facts when no entry covers it. Monotone: once `fd` has started,
        its probes held, and stay held."""
        t = self.flows.get(target)
        if t is None:
            return rs.NO_FACTS
        reader = self.flows.get(fd.name)
        if reader is not None and reader.started:
            return flowexpr.outcome_facts(O.COMPLETED)
        insts = t.insts[-1:] if t.d.loop is plan_mod.Loop.REPEAT else t.insts
        jobs = [i.job for i in insts if i.job is not None]
        if not t.started or not jobs:
            return t.facts
        entries = fd.probes_for(target, task_names(jobs))
        if not entries:
            return t.facts
        if len(jobs) == len(insts) and all(self._holds(job, e) is True for job in jobs for e in entries):
            return flowexpr.outcome_facts(O.COMPLETED)
        if t.final is not None:
            return flowexpr.outcome_facts(O.FAILED)
        return rs.NO_FACTS

    def _holds(self, job: Obj, entry: plan_mod.ProbeEntry) -> bool | None:
        if entry.kind == "taskStatus":
            return readiness.task_in_phase(job, entry.task, entry.phase)
        if meta.phase(job) in batch.TERMINAL_PHASES:
            return False
        answer = self.prober(job, entry) if self.prober is not None else False
        if answer is None:
            self.polling = True
        return answer

    def watched_jobs(self) -> set[str]:
        """vcjobs whose every change matters now: targets of flows waiting on a probe."""
        out: set[str] = set()
        for name in self.probe_waiters:
            for t in self.flows[name].d.targets:
                out.update(i.name for i in (self.flows[t].insts if t in self.flows else []))
        return out


def task_names(jobs: list[Obj]) -> list[str]:
    """The target's task names, which say which probe entries cover it: from a vcjob's spec — not from a stand-in
    for one deleted after it finished (engine.load), which keeps no spec: its tasks are its taskStatusCount's.
    (The first item's used to be read: a stand-in there, after a restart, left the probe covering nothing, so
    the target was waited for as Completed — a fan-out's probe held once its items had all finished.)"""
    for job in jobs:
        names = [t.get("name", "") for t in (job.get("spec") or {}).get("tasks") or [] if isinstance(t, dict)]
        if names and names != ["-"]:
            return names
    counted: list[str] = []
    for job in jobs:
        counted += [n for n in ((job.get("status") or {}).get("taskStatusCount") or {}) if n not in counted]
    return counted
