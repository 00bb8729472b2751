"""What `vcctl run` shows: a live view of each JobFlow's DAG (per-job phase, task progress,
elapsed time, why a job waits), transition lines when stdout is not a terminal, and the final
summary with the reason of every failure.

Pure functions from a Snapshot of API objects to rich renderables or lines of text; no API calls
and no clock reads (the caller passes `now`).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from vclite.api import batch, flow, meta
from vclite.lib import clock as clock_mod
from vclite.lib import dag

Obj = dict[str, Any]

PHASE_STYLE = {
    "Succeed": "bold green", "Completed": "green", "Running": "cyan", "Pending": "yellow",
    "Failed": "bold red", "Terminated": "red", "Aborted": "magenta", "Terminating": "magenta",
    "Restarting": "yellow", "Completing": "green", "Aborting": "magenta", "waiting": "dim",
}


@dataclasses.dataclass
class Snapshot:
    jobflows: list[Obj]
    jobs: list[Obj]
    podgroups: list[Obj]
    pods: list[Obj]

    def job(self, namespace: str, name: str) -> Obj | None:
        return self._jobs.get((namespace, name))

    def __post_init__(self) -> None:
        self._jobs = {(meta.namespace(j), meta.name(j)): j for j in self.jobs}
        self._pgs: dict[tuple[str, str], Obj] = {}
        for pg in self.podgroups:
            ref = meta.controller_ref(pg)
            if ref:
                self._pgs[(meta.namespace(pg), ref.get("name", ""))] = pg

    def podgroup_of(self, job: Obj) -> Obj | None:
        return self._pgs.get((meta.namespace(job), meta.name(job)))

    def pods_of(self, job: Obj) -> list[Obj]:
        return [p for p in self.pods if meta.namespace(p) == meta.namespace(job)
                and meta.labels(p).get(batch.JOB_NAME) == meta.name(job)]


def standalone_jobs(snap: Snapshot) -> list[Obj]:
    """vcjobs not created by a JobFlow."""
    return [j for j in snap.jobs if flow.CREATED_BY_JOB_FLOW not in meta.labels(j)]


def _seconds(a: str | None, b: dt.datetime) -> float:
    start = clock_mod.parse_time(a)
    return max(0.0, (b - start).total_seconds()) if start else 0.0


def elapsed(obj: Obj, now: dt.datetime) -> str:
    md, status = obj.get("metadata", {}), obj.get("status") or {}
    created = md.get("creationTimestamp")
    if status.get("runningDuration") and meta.phase(obj) in batch.FINISHED_PHASES:
        try:
            return _fmt_secs(clock_mod.parse_duration(status["runningDuration"]))
        except ValueError:
            pass
    return _fmt_secs(_seconds(created, now))


def _fmt_secs(s: float) -> str:
    if s < 60:
        return f"{s:.1f}s"
    m, s = divmod(int(s), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


def task_progress(job: Obj) -> str:
    """`ps 1/1 running, worker 3/4 running, 1/4 succeeded` from the job's taskStatusCount."""
    counts = (job.get("status") or {}).get("taskStatusCount") or {}
    parts = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        name, n = task.get("name", "?"), int(task.get("replicas", 0) or 0)
        phases = (counts.get(name) or {}).get("phase") or {}
        bits = []
        for phase, label in (("Running", "running"), ("Succeeded", "succeeded")):
            if phases.get(phase):
                bits.append(f"{phases[phase]}/{n} {label}")
        if phases.get("Failed"):
            bits.append(f"{phases['Failed']} failed")
        if phases.get("Pending"):
            bits.append(f"{phases['Pending']} pending")
        parts.append(f"{name} " + (", ".join(bits) if bits else f"0/{n}"))
    return "; ".join(parts)


def why_waiting(snap: Snapshot, job: Obj) -> str:
    """The scheduler's reason a job's pods are not placed (PodGroup Unschedulable condition)."""
    pg = snap.podgroup_of(job)
    for cond in ((pg or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Unschedulable" and cond.get("status") == "True":
            return cond.get("message") or cond.get("reason") or "unschedulable"
    return ""


def flow_rows(jf: Obj, snap: Snapshot) -> list[tuple[str, str, Obj | None, list[str]]]:
    """(flow name, vcjob name, vcjob or None, targets) in dependency order."""
    flows = (jf.get("spec") or {}).get("flows") or []
    graph = {f.get("name", ""): list(((f.get("dependsOn") or {}).get("targets")) or []) for f in flows}
    try:
        order = dag.topological_order(graph)
    except ValueError:
        order = list(graph)
    ns = meta.namespace(jf)
    return [(name, flow.job_name(meta.name(jf), name), snap.job(ns, flow.job_name(meta.name(jf), name)),
             graph.get(name, [])) for name in order if name in graph]


def job_cells(snap: Snapshot, job: Obj | None, targets: list[str], now: dt.datetime) -> tuple[Text, str, str, str]:
    if job is None:
        detail = f"waiting on {', '.join(targets)}" if targets else "waiting"
        return Text("waiting", style=PHASE_STYLE["waiting"]), "", "", detail
    phase = meta.phase(job) or "Pending"
    detail = why_waiting(snap, job) if phase in ("Pending", "") else ""
    if phase == "Failed":
        detail = failure_reason(snap, job)
    return Text(phase, style=PHASE_STYLE.get(phase, "")), task_progress(job), elapsed(job, now), detail


def render(snap: Snapshot, now: dt.datetime) -> Group:
    """The live view: one table per JobFlow (its DAG in dependency order), one for standalone jobs."""
    parts: list[Any] = []
    for jf in snap.jobflows:
        phase = meta.phase(jf) or "Pending"
        rows = flow_rows(jf, snap)
        done = sum(1 for _, _, j, _ in rows if j is not None and meta.phase(j) == batch.JobPhase.COMPLETED)
        title = Text.assemble(("JobFlow ", "bold"), (meta.key(jf), "bold"), "  ",
                              (phase, PHASE_STYLE.get(phase, "")), f"  {done}/{len(rows)} jobs completed  ",
                              (elapsed(jf, now) if phase not in ("Succeed", "Failed") else "", "dim"))
        table = Table(title=title, title_justify="left", box=box.SIMPLE, show_edge=False, pad_edge=False)
        for col in ("flow", "depends on", "phase", "tasks", "elapsed", "detail"):
            table.add_column(col, overflow="fold")
        for name, _, job, targets in rows:
            ph, tasks, el, detail = job_cells(snap, job, targets, now)
            table.add_row(name, ", ".join(targets), ph, tasks, el, Text(detail, style="dim"))
        parts.append(table)
    jobs = standalone_jobs(snap)
    if jobs:
        table = Table(title=Text("vcjobs", style="bold"), title_justify="left", box=box.SIMPLE, show_edge=False)
        for col in ("job", "phase", "tasks", "elapsed", "detail"):
            table.add_column(col, overflow="fold")
        for job in jobs:
            ph, tasks, el, detail = job_cells(snap, job, [], now)
            table.add_row(meta.key(job), ph, tasks, el, Text(detail, style="dim"))
        parts.append(table)
    return Group(*parts)


def phases(snap: Snapshot) -> dict[str, str]:
    """Current phase of every JobFlow and vcjob, keyed for transition detection."""
    out = {f"JobFlow {meta.key(jf)}": meta.phase(jf) for jf in snap.jobflows}
    out.update({f"vcjob {meta.key(j)}": meta.phase(j) for j in snap.jobs})
    return out


def transitions(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Lines for every phase that appeared or changed (the non-terminal progress output)."""
    return [f"{what}: {phase}" for what, phase in after.items() if phase and before.get(what) != phase]


def failure_reason(snap: Snapshot, job: Obj) -> str:
    """Why a vcjob failed, from its failed pods: `pod a-t-0: container main exited 3 (Error)`."""
    reasons = []
    for pod in snap.pods_of(job):
        status = pod.get("status") or {}
        if status.get("phase") != "Failed":
            continue
        for cs in status.get("containerStatuses") or []:
            term = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated")
            if term and term.get("exitCode", 0) != 0:
                msg = f"pod {meta.name(pod)}: container {cs.get('name')} exited {term.get('exitCode')}"
                msg += f" ({term.get('reason', 'Error')})"
                if term.get("message"):
                    msg += f": {term['message'].strip()[:200]}"
                reasons.append(msg)
        if not status.get("containerStatuses") and (status.get("reason") or status.get("message")):
            reasons.append(f"pod {meta.name(pod)}: {status.get('reason', '')} {status.get('message', '')}".strip())
    state = (job.get("status") or {}).get("state") or {}
    if not reasons and (state.get("reason") or state.get("message")):
        reasons.append(f"{state.get('reason', '')}: {state.get('message', '')}".strip(": "))
    return "; ".join(reasons[:3]) + (f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else "")
