"""The conditions a JobFlow's status shows, and their words: a mixin of engine.Engine.

`Conditions` keeps `conditions[<key>]` and the status lists in step (`_set_condition`), and builds
the condition of an instance (its vcjob's, or why it has none yet), of a flow without vcjobs
(waiting on what, blocked, skipped, not created) and of a loop flow (its summary). Messages name
vcjobs, at most runstate.LIST_LIMIT of them. What is shown never decides anything: the rules are in
engine.py.
"""
from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Iterable
from typing import Any

from vclite.api import batch, flowexpr, meta
from vclite.controllers.jobflow import lifecycle
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import readiness, refusals, waiting
from vclite.controllers.jobflow import runstate as rs
from vclite.controllers.jobflow import status as st
from vclite.lib import clock as clock_mod
from vclite.lib import jsoncopy

Obj = dict[str, Any]
JP, O, R = batch.JobPhase, flowexpr.Outcome, st.Reason


def _whole_second_after(t: dt.datetime) -> dt.datetime:
    """`t` rounded up to the second: written so (as Kubernetes writes times), it is never before `t`."""
    whole = t.replace(microsecond=0)
    return whole if whole == t else whole + dt.timedelta(seconds=1)


def _item_counts(c: Any) -> str:
    """A loop's items by state: the finished ones by outcome, then those still to finish (`2 Completed, 1 Failed,
    1 retrying, 16 in progress, 4 not created yet`; in progress: a vcjob that has not finished, Pending included)."""
    parts = [f"{c[s]} {s}" for s in (rs.IState.COMPLETED, rs.IState.FAILED, rs.IState.TERMINATED) if c[s]]
    parts += [f"{k} {word}" for k, word in ((c[rs.IState.RETRY_WAIT], "retrying"),
                                            (c[rs.IState.ACTIVE] + c[rs.IState.REPLACING], "in progress"),
                                            (c[rs.IState.ABSENT], "not created yet")) if k]
    return ", ".join(parts) or "none finished"


_FAN_OUT = (plan_mod.Loop.ITEMS, plan_mod.Loop.PARAM)   # (strategy any on one of them: its first item is enough)

class Conditions:
    """Mixin of engine.Engine (its state: conditions, listed, buckets, phase_count, flows, …)."""

    def _set_condition(self, key: str, cond: Obj | None, listed: bool = True) -> None:
        """Set (None: drop) the condition under `key`; listed ones are in a status list and count for
        the JobFlow's phase rules (a loop flow's summary is neither: its vcjobs are)."""
        old_list = self.listed.pop(key, None)
        if old_list is not None:
            self.buckets[old_list].pop(key, None)
            self.phase_count[self.conditions[key].get("phase", "")] -= 1
        if cond is None:
            self.conditions.pop(key, None)
            return
        if self.compact and listed:
            cond = st.compact_condition(cond)
        self.conditions[key] = cond
        if listed:
            bucket = st.BUCKETS.get(cond.get("phase", ""), st.UNKNOWN_JOBS)
            self.buckets[bucket][key] = None
            self.listed[key] = bucket
            self.phase_count[cond.get("phase", "")] += 1

    def _no_more_creates(self, inst: rs.Inst) -> bool:
        """The JobFlow stopped (an unhandled failure, or it finished): `inst`'s vcjob will not be made (but the
        exit handler's). One waiting for an output says `NotCreated` then, as any vcjob the stop left unmade."""
        return self.frozen or (self.stopping and not self.flows[inst.flow].d.exit)

    def _note_stands(self, inst: rs.Inst) -> bool:
        """Whether `inst`'s note still says why its vcjob is not made: a wait for an output, a template not found, a
        name taken or a create refused is over once the JobFlow stopped (no more creates): it is NotCreated."""
        note = inst.note
        if note is None:
            return False
        over = note.reason == R.WAITING_OUTPUT or note.reason in rs.RETRIED_NOTES
        return not (over and self._no_more_creates(inst))

    def _inst_condition(self, inst: rs.Inst) -> None:
        if inst.job is not None:
            cond = st.job_condition(inst.job)
            if self._kept_compact(inst.name, cond.get("phase", "")):
                cond = {"phase": cond["phase"]}
            ratio = st.failure_ratio(inst.job)
            if ratio:
                cond["podFailureRatio"] = ratio
            if inst.state is rs.IState.ACTIVE and self.flows[inst.flow].d.exit and "message" not in cond:
                cond["message"] = self._exit_running()
        elif self._note_stands(inst):
            cond = {"phase": str(inst.note.phase), "reason": str(inst.note.reason), "message": inst.note.message}
            if inst.note.since:
                cond[refusals.SINCE] = inst.note.since
        elif self.frozen and inst.name in self.conditions and self.conditions[inst.name].get("reason") not in \
                (R.CREATING, R.SUSPENDED, R.RETRYING, R.NOT_CREATED):
            return                                      # vanished after the JobFlow stopped: keep what it said
        elif self.frozen and self.carry and inst.name in self.prev_conditions:
            cond = jsoncopy.deep_copy(self.prev_conditions[inst.name])
        elif self.frozen or (self.stopping and not self.flows[inst.flow].d.exit):
            cond = self._not_created_condition(inst.name)
        elif (inst.retry_of or (inst.retries and inst.state is rs.IState.ABSENT)) and self.suspended:
            cond = rs.pending(R.SUSPENDED, f"attempt {inst.retries + 1} is created once the JobFlow is resumed "
                                           f"(it is suspended: {self._resume})")
        elif inst.retry_of or (inst.retries and inst.state is rs.IState.ABSENT):
            cond = rs.pending(R.RETRYING, f"attempt {inst.retries + 1} is being created")
        elif self.suspended:
            cond = rs.pending(R.SUSPENDED, f"the JobFlow is suspended ({self._resume})")
        else:
            cond = rs.pending(R.CREATING, "dependencies are met; the job is being created")
        d = self.flows[inst.flow].d
        if inst.state is rs.IState.RETRY_WAIT and self._not_retried(d) or self._left_unretried(inst):
            cond["reason"] = str(R.NOT_RETRIED)
            cond["message"] = f"attempt {inst.retries + 1} failed; not retried: " + (
                f"the JobFlow is {self.phase}" if self.frozen else "a failure stops the JobFlow")
        elif inst.state is rs.IState.RETRY_WAIT and inst.retry_at is not None:
            cond["reason"] = str(R.RETRY_BACKOFF)
            cond["message"] = (f"attempt {inst.retries + 1} failed; retry {inst.retries + 1} of {d.retry_limit} "
                               f"after a {clock_mod.format_duration(d.backoff.delay(inst.retries))} back-off"
                               + (f", once the JobFlow is resumed (it is suspended: {self._resume})"
                                  if self.suspended else ""))
            cond[st.RETRY_AT] = clock_mod.format_time(_whole_second_after(inst.retry_at))
        elif inst.state is rs.IState.REPLACING:
            cond["reason"], cond["message"] = str(R.RETRYING), f"deleting attempt {inst.retries} to run it again"
        elif inst.state in (rs.IState.FAILED, rs.IState.TERMINATED) and inst.job is not None and d.retried:
            cond["reason"] = str(R.RETRIES_EXHAUSTED)
            cond["message"] = inst.refused or self._retry_refusal(inst, d)
        if inst.why and inst.state in rs.TOLD_I and inst.job is not None:
            cond["message"] = st.with_failure(cond.get("message", ""), inst.why)
        if inst.gone:
            cond[st.DELETED] = True
        if inst.retries:
            cond["retries"] = inst.retries
            if inst.first_created:
                cond["firstCreateTime"] = inst.first_created
        if inst.retry_of:
            cond["retryOf"] = inst.retry_of
        if inst.output:
            cond["output"] = inst.output
        if inst.job is not None and self.waiting is not None and cond.get("phase", "") in waiting.WAITING_PHASES \
                and not cond.get("reason") and not cond.get("message"):
            why = self.waiting(inst.name, meta.uid(inst.job))
            if why is not None:
                cond["reason"], cond["message"] = why
        self._set_condition(inst.name, cond)

    def waiting_changed(self, name: str) -> None:
        """Why the vcjob `name` waits changed (its PodGroup's Unschedulable condition): its condition again."""
        inst = self.insts.get(name)
        if inst is not None and inst.job is not None:
            self._inst_condition(inst)

    @property
    def _resume(self) -> str:
        """How this JobFlow can be resumed, for the messages of a suspended one: the command that resumes it, unless
        the engine was given other words (resume_advice: nothing can resume it where it runs)."""
        if self.resume_advice is not None:
            return self.resume_advice
        return f"vcctl jobflow resume {shlex.quote(self.name)}" + (
            "" if self.ns in ("", "default") else f" -n {shlex.quote(self.ns)}") + (
            f" {self.resume_flags}" if self.resume_flags else "")

    def _flow_condition(self, fr: rs.FlowRT) -> None:
        """The condition under `<jobflow>-<flow>` of a flow without vcjobs yet, or of a loop flow."""
        key, d = self.key(fr.d.name), fr.d
        if fr.final is not None and (not fr.started or (not fr.insts and d.loop is plan_mod.Loop.NONE)):
            phase = {O.COMPLETED: JP.COMPLETED, O.SKIPPED: st.SKIPPED, O.TERMINATED: JP.TERMINATED}.get(
                fr.final, JP.FAILED)
            prev = self.prev_conditions.get(key) or {}
            if prev.get("phase") == phase and prev.get("reason") == fr.reason:
                fr.message = prev.get("message", fr.message)     # decided earlier: keep what it said then
            self._set_condition(key, {"phase": str(phase), "reason": str(fr.reason), "message": fr.message})
            return
        if fr.started:   # a loop flow: the aggregate, not listed (its vcjobs are)
            self._set_condition(key, self._loop_summary(fr), listed=False)
            return
        if self.frozen and self.carry and key in self.prev_conditions:
            cond = jsoncopy.deep_copy(self.prev_conditions[key])
        elif self.frozen or (self.stopping and not d.exit):
            cond = self._not_created_condition(key)
        else:
            cond = self._waiting_condition(fr)
        self._set_condition(key, cond)

    def _not_created_condition(self, key: str) -> Obj:
        """`NotCreated`, saying what is so now — every such entry says the same (`_say_not_created` rewrites them
        when it changes), and a rebuilt controller says it too: the unhandled failures while the exit handler is to
        run, then the JobFlow's phase."""
        message = self._not_created()
        cond = self.conditions.get(key)
        if cond and cond.get("reason") == R.NOT_CREATED and cond.get("message") == message:
            return cond
        return rs.pending(R.NOT_CREATED, message)

    def _exit_running(self) -> str:
        """The message of the exit handler's running vcjobs: the JobFlow is Running either way, but its outcome
        may be decided already (a failure left unhandled)."""
        if not self.stopping:
            return "exit handler: the JobFlow succeeds (Succeed) if it completes"
        failed = sorted(self.unhandled, key=lambda n: self.flows[n].d.index if n in self.flows else len(self.flows))
        return f"exit handler: the JobFlow is Failed once it has run ({', '.join(failed[:3]) or 'a job'} failed)"

    def _say_exit_running(self) -> None:
        """The exit handler's running vcjobs say again what the JobFlow becomes (`_exit_running`): whether it stops
        changed (a failure left unhandled, also one a rebuilt controller settles after loading the handler's)."""
        if self.plan.exit:
            for inst in self.flows[self.plan.exit].insts:
                if inst.state is rs.IState.ACTIVE and inst.job is not None:
                    self._inst_condition(inst)

    def _not_created(self) -> str:
        """`not created: a, b failed` (the unhandled failures, in spec order, the first three), or once the JobFlow
        has stopped for good, `not created: the JobFlow is Failed`."""
        if self.frozen:
            return f"not created: the JobFlow is {self.phase}"
        failed = sorted(self.unhandled, key=lambda n: self.flows[n].d.index if n in self.flows else len(self.flows))
        return f"not created: {', '.join(failed[:3]) or 'a job'} failed"

    def _say_not_created(self) -> None:
        """The entries of the flows and vcjobs a stop left uncreated (but the exit handler's), said again."""
        for fr in self.flows.values():
            if fr.d.exit:
                continue
            if not fr.started and fr.final is None:
                self._flow_condition(fr)
            for inst in fr.insts:
                if inst.state is rs.IState.ABSENT and inst.job is None:
                    self._inst_condition(inst)

    def _loop_summary(self, fr: rs.FlowRT) -> Obj:
        c, n, d = fr.counts, len(fr.insts), fr.d
        phase = JP.RUNNING if c[rs.IState.ACTIVE] or c[rs.IState.REPLACING] else JP.PENDING
        if fr.final is not None:
            phase = {O.COMPLETED: JP.COMPLETED, O.TERMINATED: JP.TERMINATED}.get(fr.final, JP.FAILED)
        if d.loop is plan_mod.Loop.REPEAT:
            msg = fr.message or f"iteration {n - 1} (at most {d.limit}): until {d.until}"
            return {"phase": str(phase), "reason": str(fr.reason or R.REPEAT), "message": msg, "iterations": n}
        msg = fr.message or f"{n} item{'' if n == 1 else 's'}: " + _item_counts(c)
        return {"phase": str(phase), "reason": str(fr.reason or R.FAN_OUT), "message": msg, "items": n}

    def _waiting_condition(self, fr: rs.FlowRT) -> Obj:
        v = fr.verdict or readiness.Verdict(fr.d.name, readiness.State.WAITING)
        names = self._names
        if v.state is readiness.State.BLOCKED:
            if v.undefined:
                return rs.pending(R.UNDEFINED_TARGET, f"dependsOn targets {', '.join(v.undefined)} name no flow "
                                                    "of this JobFlow")
            if v.cycle:
                return rs.pending(R.CYCLE, f"flows {' -> '.join(v.cycle)} form a dependency cycle")
            return rs.pending(R.INVALID_SPEC, v.message)
        if v.state is readiness.State.READY:
            if self.suspended:
                return rs.pending(R.SUSPENDED, f"dependencies are met; the JobFlow is suspended ({self._resume})")
            return rs.pending(R.CREATING, "dependencies are met; the job is being created")
        if fr.d.exit:
            return rs.pending(R.WAITING_EXIT, self._exit_waits_for(fr))
        d = fr.d
        probes = self._probe_waits(fr) if fr.d.name in self.probe_waiters else []
        if probes:
            return rs.pending(R.WAITING_PROBE, "waiting for probe: " + ", ".join(probes))
        if d.simple and d.strategy is plan_mod.Strategy.ALL:
            if fr.pending > rs.LIST_LIMIT:
                return rs.pending(R.WAITING, f"waiting for {fr.pending} of {len(d.atoms)} targets to be Completed")
            return rs.pending(R.WAITING, f"waiting for {names(t for t in d.atoms if O.COMPLETED not in self._facts(t))}"
                                       " to be Completed")
        if d.simple:   # (strategy any: the targets that can still complete, not those that finished without)
            alive = [t for t in d.atoms if O.FINISHED not in readiness.closure(self._facts(t))]
            if len(alive) == 1 and len(d.atoms) > 1:   # (the others finished without completing)
                return rs.pending(R.WAITING, f"waiting for {names(alive)} to complete (the only target that still can)")
            if len(d.atoms) == 1 and alive and self.flows[alive[0]].d.loop in _FAN_OUT:
                return rs.pending(R.WAITING, f"waiting for one item of {names(alive)} to complete")
            return rs.pending(R.WAITING, f"waiting for one of {names(alive, rs.LIST_LIMIT)} to complete")
        # (a target whose probe held is waited for no more, unless its output is read)
        waiting = [r for r in v.waiting_for if not (d.probe and r in d.targets and r not in d.readers_of and
                                                    O.COMPLETED in self._probe_facts(d, r))]
        what = names(waiting, rs.LIST_LIMIT)
        if waiting and set(waiting) <= set(d.readers_of):
            return rs.pending(R.WAITING_OUTPUT, f"waiting for {what} to finish (its output is read)")
        return rs.pending(R.WAITING, f"waiting for {what}: {d.written}")

    def _exit_waits_for(self, fr: rs.FlowRT) -> str:
        """What the exit handler waits for: the other flows (named when few), or, once a failure stopped
        the JobFlow, its running vcjobs."""
        if self.stopping:
            return f"the exit handler runs once the running jobs have finished ({self.active} still running)"
        others = [n for n in self.unfinished if n != fr.d.name] if len(self.unfinished) <= rs.LIST_LIMIT + 1 else []
        text = "the exit handler runs once every other flow has finished: "
        if not others:
            return text + f"{len(self.unfinished) - (fr.d.name in self.unfinished)} still to finish"
        return text + "waiting for " + self._names(sorted(others, key=lambda n: self.flows[n].d.index))

    def _names(self, flows: Iterable[str], limit: int | None = None) -> str:
        out, extra = [], 0
        for f in flows:
            if limit is None or len(out) < limit:
                out.append(self.key(f))
            else:
                extra += 1
        return ", ".join(out) + (f" (+{extra} more)" if extra else "")

    def _probe_waits(self, fr: rs.FlowRT) -> list[str]:
        """What each target whose probe does not hold yet lacks, in the order of the targets: `<vcjob> to start`
        (none of its vcjobs exists yet), `<vcjob>: <the entries not holding>` on its current vcjob (a repeat's last
        iteration; the flow's name for several), or `<vcjob> to be Completed` when no entry covers it (waited for as
        usual). Empty when every probe holds (the flow may still wait for an output it reads)."""
        parts = []
        for target in fr.d.targets:
            t = self.flows.get(target)
            if t is None or O.COMPLETED in self._probe_facts(fr.d, target):
                continue
            insts = t.insts[-1:] if t.d.loop is plan_mod.Loop.REPEAT else t.insts
            jobs = [i.job for i in insts if i.job is not None]
            if not jobs:
                parts.append(f"{self.key(target)} to start")
                continue
            entries = fr.d.probes_for(target, lifecycle.task_names(jobs))
            if not entries:
                parts.append(f"{self.key(target)} to be Completed")
                continue
            pending = [e.describe() for e in entries if not all(self._holds(j, e) is True for j in jobs)]
            if pending:
                parts.append(f"{meta.name(jobs[0]) if len(jobs) == 1 else self.key(target)}: {'; '.join(pending)}")
        return parts
