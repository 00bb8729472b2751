"""What the live view's detail column says about each flow of a JobFlow, as the lines written without a terminal
(`vcctl run | cat`, `vcctl jobflow get NAME -w | tee`): one line when a flow's detail changes, never again while it
is the same. From the JobFlow's status conditions only, so that `run` and `get -w` write the same words:

    JobFlow default/probe: flow client: waiting for probe: probe-serve: server GET :18765/healthz
    JobFlow default/if-else: flow retrain: Skipped: when outputs.evaluate < 0.9 is false
    vcjob default/f-bad: pod f-bad-t-0: container main exited with code 3 (Error)
    vcjob default/exit-handler-notify: exit handler: the JobFlow is Failed once it has run (train failed)
    vcjob default/if-else-evaluate: output: 0.93
    vcjob default/flow-retry-fetch: attempt 1 failed; retry 1 of 3 after a 1s back-off; last attempt: …

A flow without a vcjob is named by its flow (`JobFlow …: flow client:`), one with a vcjob by its vcjob, as its
phase lines name it (a loop's item: `vcjob default/sweep-train-2 (flow train, item 2: 0.013): …`). Left out, as
the phase and count lines say them: a loop flow's own condition (its counts), a loop item's detail unless it
failed, a flow waiting only for its targets to complete (each waiting flow of a wide DAG would have a line,
changed as each target ends), a vcjob being created, a Pending or Running vcjob's wait for resources (each of a wide
fan would have one: the stuck report of a run says it). A retry's line is written once per attempt (the
back-off's message does not change between attempts of the same outcome).

Pure but for what it remembers (the last detail written per flow): its memory follows the number of flows.
"""
from __future__ import annotations

from typing import Any

from vclite.api import batch, flow, meta
from vclite.cli import view
from vclite.controllers.jobflow import status as jobflow_status

Obj = dict[str, Any]
R = jobflow_status.Reason
LOOP_REASONS = frozenset({R.FAN_OUT, R.REPEAT})   # a loop flow's own condition: its count line says it
SILENT_REASONS = frozenset({R.CREATING, R.RETRYING})   # said by the vcjob's own phase line, coming at once
ATTEMPT_REASONS = frozenset({R.RETRY_BACKOFF, R.RETRYING, R.RETRIES_EXHAUSTED, R.NOT_RETRIED})   # (of a vcjob)
OUTPUT_SHOWN = 60   # characters of a flow's output in its line, as the live view shows it
FAILED = frozenset({batch.JobPhase.FAILED, batch.JobPhase.TERMINATED, batch.JobPhase.ABORTED})


class FlowNotes:
    """The detail lines of JobFlows as their versions come (`lines`, for each version seen, in order)."""

    def __init__(self) -> None:
        # per JobFlow `ns/name`: each condition last looked at (a condition a new version did not change is the
        # same object in-process: skipped at once) and the last detail written of each
        self._seen: dict[str, dict[str, Obj]] = {}
        self._said: dict[str, dict[str, str]] = {}
        self._simple: dict[str, tuple[Any, frozenset[str]]] = {}   # per JobFlow: (its spec, its simple flows)

    def lines(self, jf: Obj) -> list[str]:
        """The lines for the details of `jf`'s flows that changed since its last version given."""
        seen, said = self._seen.setdefault(meta.key(jf), {}), self._said.setdefault(meta.key(jf), {})
        out = []
        simple: frozenset[str] | None = None
        for key, cond in ((jf.get("status") or {}).get("conditions") or {}).items():
            if not isinstance(cond, dict) or seen.get(key) is cond:
                continue
            seen[key] = cond
            if simple is None:
                simple = self._simple_flows(jf)
            text = detail(jf, key, cond, simple)
            if not text or said.get(key) == text:
                continue
            said[key] = text
            out.append(text if text.startswith(("JobFlow ", "vcjob ")) else f"vcjob {meta.namespace(jf)}/{key}: {text}")
        return out

    def _simple_flows(self, jf: Obj) -> frozenset[str]:
        """_simple_flows of `jf`, found again only when its spec is another object (the store shares an unchanged
        spec between versions)."""
        spec = jf.get("spec")
        kept = self._simple.get(meta.key(jf))
        if kept is None or kept[0] is not spec:
            kept = self._simple[meta.key(jf)] = (spec, _simple_flows(jf))
        return kept[1]

    def forget(self, jobflow: str) -> None:
        """Drop what was said of JobFlow `ns/name` (it was deleted)."""
        self._seen.pop(jobflow, None)
        self._said.pop(jobflow, None)
        self._simple.pop(jobflow, None)


def detail(jf: Obj, key: str, cond: Obj, simple: frozenset[str] = frozenset()) -> str:
    """The line of condition `key` of `jf` (see the module), or "" for none; `simple`: the flows whose dependency is
    only targets to complete (_simple_flows). A vcjob's detail is given without its `vcjob ns/key: ` (the caller
    adds it); a loop item's and a flow's without a vcjob as the whole line."""
    reason, message = str(cond.get("reason") or ""), str(cond.get("message") or "")
    if reason in LOOP_REASONS or reason in SILENT_REASONS:
        return ""
    base = flow.job_name(meta.name(jf), "")
    flow_name = key[len(base):] if key.startswith(base) else key
    loop, item = view.loop_item(jf, key)
    has_job = "createTime" in cond or "taskStatusCount" in cond or reason in ATTEMPT_REASONS
    if reason == R.RETRY_BACKOFF:   # (once per attempt: the attempt's number is part of what is said)
        return _of_item(jf, key, loop, item, message) if message else ""
    if item:
        if has_job and cond.get("phase") in FAILED and message:
            return _of_item(jf, key, loop, item, message)
        return ""
    if has_job:
        if message and (cond.get("phase") in FAILED or reason in ATTEMPT_REASONS or key == _exit_key(jf)):
            return message   # (not a Pending vcjob's wait for resources: one line per vcjob of a wide fan)
        output = str(cond.get("output") or "").strip()
        if output and cond.get("phase") == batch.JobPhase.COMPLETED:
            return f"output: {output[:OUTPUT_SHOWN]}"
        return ""
    if not message or (reason == R.WAITING and flow_name in simple):
        return ""
    state = view.flow_state(cond, None, False)
    waiting = cond.get("phase") in ("", None, batch.JobPhase.PENDING)
    return f"JobFlow {meta.key(jf)}: flow {flow_name}: " + (message if waiting else f"{state}: {message}")


def _exit_key(jf: Obj) -> str:
    exit_flow = (jf.get("spec") or {}).get("onExit")
    return flow.job_name(meta.name(jf), str(exit_flow)) if exit_flow else ""


def _of_item(jf: Obj, key: str, loop: str, item: str, text: str) -> str:
    which = f" (flow {loop}, {item})" if item else ""
    return f"vcjob {meta.namespace(jf)}/{key}{which}: {text}"


def _simple_flows(jf: Obj) -> frozenset[str]:
    """The flows whose dependency is only targets (all or any of them) to complete: no probe, expression, `when`
    or loop — what they wait for is in the spec, and their vcjob's Pending line says when it is over."""
    out = []
    for f in (jf.get("spec") or {}).get("flows") or []:
        if not isinstance(f, dict):
            continue
        dep = f.get("dependsOn") if isinstance(f.get("dependsOn"), dict) else {}
        if not dep.get("probe") and not dep.get("expression") and not f.get("when") and not view.loop_text(f)[0]:
            out.append(str(f.get("name") or ""))
    return frozenset(out)
