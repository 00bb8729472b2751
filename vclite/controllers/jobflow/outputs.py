"""Outputs and template values: a mixin of engine.Engine.

A vcjob's output is its designated pod's termination message, read once through the injected
`reader` (objects.output_pod, objects.termination_message) and kept in the status. A flow's output:
its vcjob's, a repeat's last iteration's, a fan-out's JSON list of its items' outputs. `values_for`
gives the placeholder values of an instance's template (parameters, outputs, item, iteration), or the
flows whose output it must wait for; a template reading the output of a flow that did not complete
skips its flow, as a `when` or a patch reading it does (unless its `dependsOn.expression` names that
flow, or it is the exit handler); in a repeat, `{{outputs.<itself>}}` is the previous iteration's (outside a
repeat a flow has no output of its own to read before it finishes: `output_deadlock` refuses the template).
"""
from __future__ import annotations

import collections
import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from vclite.api import batch, flowexpr, flowtemplate
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import runstate as rs
from vclite.controllers.jobflow import status as st
from vclite.lib import dag

NOT_CREATED = "NotCreated"   # the outcome the exit handler reads of a flow a stop left without one

Obj = dict[str, Any]
JP, R = batch.JobPhase, st.Reason


def _list_element(output: str) -> Any:
    """An item's output in its fan-out's list: a JSON object as the object, anything else as the string,
    as Argo aggregates a loop's results (processAggregateNodeOutputs)."""
    text = output.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict):
            return value
    return text


class Outputs:
    """Mixin of engine.Engine (its state: flows, plan, reader, to_create, output_waits)."""

    def inst_output(self, inst: rs.Inst) -> str:
        if inst.output is None and self.reader is not None and inst.state in rs.FINAL_I:
            inst.output = self.reader(inst)
            self._inst_condition(inst)
        return inst.output or ""

    def output_of(self, name: str) -> str:
        """A finished flow's output: its vcjob's (the last iteration's made), a fan-out's JSON list (`[]` with no
        items); "" if it made no vcjob."""
        fr = self.flows.get(name)
        if fr is not None and fr.d.fanout and fr.final is flowexpr.Outcome.COMPLETED and not fr.insts:
            return "[]"                         # NoItems: its items' outputs are an empty list
        if fr is None or not fr.insts:
            return ""
        if fr.d.fanout and all(i.state is rs.IState.ABSENT and not i.retries for i in fr.insts):
            return ""                           # its items were never made (a stop came in the moment it started)
        if fr.d.fanout:
            return json.dumps([_list_element(self.inst_output(i)) for i in fr.insts], separators=(",", ":"))
        # its last vcjob: a repeat's next iteration that a stop left uncreated is none
        last = next((i for i in reversed(fr.insts) if i.state is not rs.IState.ABSENT), fr.insts[-1])
        return self.inst_output(last)

    def _env(self, d: plan_mod.FlowDef, item: Any = None, iteration: int = 0) -> flowexpr.WhenEnv:
        refs = set()
        for e in (d.when, d.until):
            if e is not None:
                refs |= flowexpr.flow_refs(e)
        # (the exit handler runs once nothing else will: what it reads is final, "" for a flow that never ran)
        outputs = {r: self.output_of(r) for r in refs
                   if r in self.flows and (self.flows[r].final is not None or r == d.name or d.exit)}
        return flowexpr.WhenEnv(self.plan.params, outputs, item, iteration, self.outcomes() if d.exit else None,
                                self.workflow() if d.exit else None)

    def outcomes(self) -> dict[str, str]:
        """What the exit handler reads as `outcomes.<flow>`: every other flow's outcome (`Completed`, `Failed`,
        `Terminated`, `Skipped`), `NotCreated` for one a stop left without any."""
        return {name: str(fr.final) if fr.final is not None else NOT_CREATED
                for name, fr in self.flows.items() if not fr.d.exit}

    def _failure_message(self, fr: rs.FlowRT) -> str:
        """Why a flow failed, for `workflow.failures`: what its condition says, else its last failed vcjob, why
        (its first failed pod's container: exit code, reason, termination message — as Argo's failure message is
        the failed pod's `Error (exit code 3)`), the message of that vcjob's state and its output (the designated
        pod's termination message), each once."""
        if fr.message:
            return fr.message
        for inst in reversed(fr.insts):
            if inst.job is not None and inst.state in rs.FAILED_I:
                state = (inst.job.get("status") or {}).get("state") or {}
                why: list[str] = []
                if inst.why is None and self.why is not None:   # (the API did not answer when it failed)
                    inst.why = self.why(inst)
                    if inst.why:
                        self._inst_condition(inst)
                for w in (inst.why or "", state.get("message") or state.get("reason") or "",
                          " ".join(self.inst_output(inst).split())):
                    if w and not any(w in seen for seen in why):
                        why.append(w)
                return f"vcjob {inst.name} {inst.state.value}" + (f": {'; '.join(why)}" if why else "")
            if inst.note is not None and inst.note.phase == JP.FAILED:
                return inst.note.message
        return f"flow {fr.d.name} {fr.final}"

    def workflow(self) -> dict[str, Any]:
        """What the exit handler reads as `workflow.status` and `workflow.failures`, as Argo's exit handler reads
        {{workflow.status}} and {{workflow.failures}}: `Failed` once a failure is unhandled (the JobFlow fails,
        whatever the handler does), else `Succeeded` (it succeeds if the handler completes); every other flow
        that Failed or was Terminated, in spec order, with its outcome, why, and whether a flow handled it.
        Kept once every other flow has finished and its failures are decided (until something changes it): the
        exit handler over `{{workflow.failures}}` reads it for each of its items (a 10,000-failure list each)."""
        key = (self.outcome_changes, self.stopping)
        if self.workflow_kept is not None and self.workflow_kept[0] == key:
            return self.workflow_kept[1]
        failures = [{"name": name, "outcome": str(fr.final), "message": self._failure_message(fr),
                     "handled": name not in self.unhandled}
                    for name, fr in self.flows.items()
                    if not fr.d.exit and fr.final in (flowexpr.Outcome.FAILED, flowexpr.Outcome.TERMINATED)]
        found = {"status": "Failed" if self.stopping else "Succeeded", "failures": failures}
        if not self.failures and all(self.flows[n].d.exit for n in self.unfinished):
            self.workflow_kept = (key, found)
        return found

    def values_for(self, inst: rs.Inst, names: Iterable[str]) -> tuple[Mapping[str, str] | None, list[str]]:
        """Placeholder values for `inst`'s template, or (None, flows whose output is not there yet) — or
        (None, []) when a flow it reads did not complete: its flow is then Skipped (`skip_unread`)."""
        d = self.flows[inst.flow].d
        outputs, waiting, unread = {}, [], []
        # an expression naming the flow says which outcomes it accepts: it may read any; a target must have
        # Completed (as for a `when` or a patch: strategy any and probes start the flow before it has)
        declared = flowexpr.flow_refs(d.expression) if d.expression is not None else frozenset()
        for n in names:
            if n.startswith("outputs."):
                f = n.split(".")[1]
                fr = self.flows.get(f)
                if fr is None:
                    continue
                if f == inst.flow and d.loop is plan_mod.Loop.REPEAT:
                    outputs[f] = self._previous_output(inst)
                elif f == inst.flow:
                    waiting.append(f)       # (its own output, outside a repeat: a wait that never ends, refused)
                elif fr.final is None and not d.exit:   # (the exit handler's reads are final: never wait)
                    waiting.append(f)
                elif fr.final != flowexpr.Outcome.COMPLETED and not d.exit and f not in declared:
                    unread.append(f"{f} {fr.final}")
                else:
                    outputs[f] = self.output_of(f)
        if waiting:
            return None, waiting
        if unread:
            self.skip_unread(inst, f"its JobTemplate reads the output of {', '.join(unread)}: an output is read "
                                   "only from a Completed flow")
            return None, []
        item = self.item_of(inst)
        own = flowtemplate.template_values(self.plan.params, outputs, *(() if item is rs.MISSING else (item,)),
                                           iteration=inst.index if d.loop is plan_mod.Loop.REPEAT else None)
        return (collections.ChainMap(own, self._exit_values()) if d.exit else own), []

    def _exit_values(self) -> dict[str, str]:
        """The exit handler's own placeholder values, `outcomes.<flow>` and `workflow.…` (rendered), kept with
        `workflow()`: an exit handler looping over 10,000 failures renders them once, not for each item."""
        workflow = self.workflow()
        kept = self.exit_values_kept
        if kept is not None and kept[0] is workflow:
            return kept[1]
        values = flowtemplate.template_values(outcomes=self.outcomes(), workflow=workflow)
        if self.workflow_kept is not None and self.workflow_kept[1] is workflow:
            self.exit_values_kept = (workflow, values)
        return values

    def item_of(self, inst: rs.Inst) -> Any:
        """`inst`'s loop item (rs.MISSING: it is none); the exit handler's over `{{workflow.failures}}`: its failure,
        read when it is built (after a rebuild, once the other flows' outcomes are settled)."""
        if self.flows[inst.flow].d.over_failures:
            failures = self.workflow()["failures"]
            return failures[inst.index] if inst.index < len(failures) else {}
        return inst.item

    def placeholder_context(self, flow: str) -> Callable[[str], bool]:
        """Which `{{…}}` of flow `flow`'s JobTemplate are its placeholders (flowtemplate.in_context)."""
        d = self.plan.flows[flow]
        return functools.partial(flowtemplate.in_context, flows=self.plan.flows, params=bool(self.plan.params),
                                 loop=d.fanout, repeat=d.loop is plan_mod.Loop.REPEAT, exit=d.exit)

    def _previous_output(self, inst: rs.Inst) -> str:
        """What `{{outputs.<own flow>}}` reads in a repeat: the previous iteration's output ("" at the first)."""
        insts = self.flows[inst.flow].insts
        at = next((k for k, other in enumerate(insts) if other is inst), len(insts))
        return self.inst_output(insts[at - 1]) if at > 0 else ""

    def skip_unread(self, inst: rs.Inst, message: str) -> None:
        """`inst`'s flow is Skipped (DependencyNeverMet) before any of its vcjobs exists: its JobTemplate
        reads the output of a flow that did not complete, as a `when` or a patch reading it would be
        (admission cannot see a template's reads: they are found when its first vcjob is made). The skip is
        applied once every vcjob of the moment is built (Engine.built), so that none of them sees it before."""
        fr = self.flows[inst.flow]
        if fr.final is not None or inst.flow in self.unread_skips:
            return   # (another item of the same fan-out found it first)
        if any(i.job is not None or i.retries or i.state is not rs.IState.ABSENT for i in fr.insts):
            self.create_failed(inst, st.Note(JP.FAILED, R.INVALID_TEMPLATE, f"flow {inst.flow}: {message}"))
            return
        for i in fr.insts:
            self.to_create.pop(i.name, None)
        self.unread_skips[inst.flow] = message

    def apply_unread_skip(self, flow: str, message: str) -> None:
        """The skip `skip_unread` found, applied: the flow's instances are forgotten, never made."""
        fr = self.flows[flow]
        if fr.final is not None:
            return
        for i in fr.insts:
            self.to_create.pop(i.name, None)
            self.output_waits.pop(i.name, None)
            self.insts.pop(i.name, None)
            self._set_condition(i.name, None)
        fr.insts, fr.started = [], False
        fr.counts.clear()
        self._finish(fr, flowexpr.Outcome.SKIPPED, R.NEVER_MET, message)

    def output_deadlock(self, inst: rs.Inst, flows: list[str]) -> str | None:
        """Why waiting for the output of `flows` would never end, if it would not: one of them is the
        exit handler (it runs after every other flow), or waits — through dependencies and outputs
        other templates wait for — for `inst`'s own flow (a cycle only the templates make, so
        admission, which does not read them, cannot see it)."""
        own = inst.flow
        for f in flows:
            if f == own:
                return (f'the template reads the output of its own flow "{f}", which it has only once it has '
                        f"finished (only a repeat reads its previous iteration's)")
            if f == self.plan.exit and own != f:
                return (f'the template reads the output of the exit handler "{f}", which runs only after '
                        f"every other flow has finished")
            path = self._waits_path(f, own)
            if path is not None:
                return (f'the template reads the output of "{f}", which waits for "{own}": cycle: '
                        + " -> ".join((own, *path)))
        return None

    def _waits_path(self, start: str, goal: str) -> list[str] | None:
        """The flows from `start` to `goal` following what each flow waits for (its dependencies, and
        the outputs its waiting instances' templates read), or None if `start` does not wait on `goal`."""
        waits: dict[str, list[str]] = {name: list(d.refs) for name, d in self.plan.flows.items()}
        for waiting_inst, read in self.output_waits.values():
            waits[waiting_inst.flow] = [*waits.get(waiting_inst.flow, ()), *read]
        return dag.find_path(waits, start, goal)

    def wait_for_output(self, inst: rs.Inst, flows: list[str]) -> None:
        """`inst`'s template reads outputs of flows that have not finished: create it once they have (its note names
        those not finished yet, in spec order)."""
        self.to_create.pop(inst.name, None)
        flows = sorted(flows, key=lambda f: self.flows[f].d.index)
        inst.note = st.Note(JP.PENDING, R.WAITING_OUTPUT,
                            f"the template reads the output of {self._names(flows)}: waiting for it to finish")
        self._inst_condition(inst)
        self.output_waits[inst.name] = (inst, tuple(flows))
