"""`vcctl run`: validate every document, start the embedded control plane, apply them, show
progress, and exit 0 if every JobFlow, standalone vcjob and bare pod succeeded, 1 if not, 2 if the
input was invalid (nothing ran), 130 on Ctrl-C (every pod stopped first).

The run ends when every JobFlow, standalone vcjob (not made by a JobFlow) and bare pod (made by no
controller: Volcano's podgroup controller gives it a PodGroup of its own) is finished — or when
nothing can change any more (no process alive, no timer pending) while some are not: then each
unfinished one is reported with the reason it waits (e.g. the scheduler's "1/1 tasks in gang
unschedulable: …"). With `--listen` the run serves its API (runlisten.py) and, when nothing can change
by itself, waits for a client's write instead of stopping; its scheduler then follows Volcano's scheduler
ConfigMap (`volcano-system/volcano-scheduler-configmap`) as a server's does, unless --scheduler-conf is given.

A CronJob never finishes: with one among the documents, the run goes on, making its vcjobs at their
scheduled times, until `--timeout` (or Ctrl-C: 130, or until no CronJob can run again: all
suspended). Ending so is not a failure: the exit status is 0 when nothing failed — every vcjob a
CronJob made that finished Completed (one still running is stopped; one its `Replace` policy
deleted does not count) and every other JobFlow, vcjob and pod finished and succeeded.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import pathlib
import shutil
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO


from vclite.api import batch, flow, kinds, meta, storage, yamlio
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer
from vclite.cli import flowreport, manifests, phasechanges, runclaims, runhints, runlines, schedconfmap, stdinput, view
from vclite.executor import mountview
from vclite.executor import nodes as nodes_mod
from vclite.lib import clock as clock_mod
from vclite.runtime import runtime as runtime_mod
from vclite.scheduler import conf as scheduler_conf

if TYPE_CHECKING:   # (rich loads only to draw a live view: a piped run never needs it)
    from rich.console import Console

FLOW_DONE = {flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED}
JOB_DONE = {batch.JobPhase.COMPLETED, batch.JobPhase.FAILED, batch.JobPhase.TERMINATED, batch.JobPhase.ABORTED}
LIST_KINDS = (kinds.CRONJOB, kinds.JOBFLOW, kinds.JOBTEMPLATE, kinds.JOB, kinds.PODGROUP, kinds.POD,
              kinds.PERSISTENTVOLUMECLAIM, kinds.PERSISTENTVOLUME)
POD_DONE = {"Succeeded", "Failed"}
SUCCESS = {flow.FlowPhase.SUCCEED, batch.JobPhase.COMPLETED, "Succeeded"}
DELETED_UNFINISHED = "deleted before it finished"
FAILED_CREATE = "FailedCreate"   # the vcjob controller's Warning when the API refuses a pod
POD_GROUP_ERROR = "PodGroupError"   # its Warning when the API refuses a vcjob's PodGroup
PVC_ERROR = "PVCError"   # its Warning when a claim it names does not exist (controllers/job/jobio.py)
# how a suspended JobFlow's conditions tell it can run, in a run that serves no API (with --listen: the resume command)
UNRESUMABLE = f"nothing resumes it in this run; remove the annotation {flow.SUSPEND_ANNOTATION} to run it"
Obj = dict[str, Any]


SNAPSHOT_KINDS = (kinds.JOBFLOW, kinds.JOB, kinds.PODGROUP, kinds.POD)
# Kinds whose objects the control plane deletes during a run (a finished job's PodGroup; a job with
# ttlSecondsAfterFinished or a JobFlow's jobRetainPolicy: delete, with its pods): their last versions
# stay in the final report and `-o yaml|json`, so what happened to them is not lost.
KEPT_WHEN_DELETED = frozenset({kinds.JOB.kind, kinds.PODGROUP.kind, kinds.POD.kind})


def snapshot(caches: dict[str, informer.Informer], deleted: dict[str, dict[str, Obj]] | None = None,
             create_failures: dict[tuple[str, str], str] | None = None,
             podgroup_errors: dict[tuple[str, str, str], str] | None = None,
             claim_errors: dict[tuple[str, str], str] | None = None) -> view.Snapshot:
    """The run's objects as its watch caches hold them (read-only, no copy: the live view draws one
    ten times a second, and the end of a long flow's run reads every object once); with `deleted`
    (Progress.deleted), also the last version of each object deleted meanwhile; `create_failures`
    (Progress.create_failures): each vcjob's latest FailedCreate; `podgroup_errors` (Progress.podgroup_errors
    and the PodGroup controller's refusals): why the API refused a vcjob's or a bare pod's PodGroup; `claim_errors`
    (Progress.claim_errors): each vcjob's latest PVCError."""
    return view.Snapshot(*(_with_deleted(caches[kind.kind].list(), (deleted or {}).get(kind.kind))
                           for kind in SNAPSHOT_KINDS), create_failures=dict(create_failures or {}),
                         podgroup_errors=dict(podgroup_errors or {}), claim_errors=dict(claim_errors or {}))


def podgroup_errors(progress: "Progress", rt: runtime_mod.Runtime) -> dict[tuple[str, str, str], str]:
    """Why the API refused a PodGroup: each vcjob's latest PodGroupError Event, each bare pod's last try."""
    out = dict(progress.podgroup_errors)
    for key, why in rt.podgroup_controller.refusals.items():
        ns, _, name = key.partition("/")
        out[(kinds.POD.kind, ns, name)] = why
    return out


def _with_deleted(live: list[Obj], deleted: dict[str, Obj] | None) -> list[Obj]:
    if not deleted:
        return live
    names = {meta.key(o) for o in live}
    return sorted([*live, *(o for k, o in deleted.items() if k not in names)], key=meta.key)


class Progress:
    """What `vcctl run` follows, kept from watch events so that a check costs nothing per object:
    the JobFlows and standalone vcjobs (not created by a JobFlow) not finished yet (`done`: the
    run ends when none is left), how each one finished (`outcomes`, kept when the object is deleted
    afterwards, e.g. by ttlSecondsAfterFinished), the phase changes not yet printed (`changes`, in
    the order they happened), and the last version of every vcjob, PodGroup and pod deleted
    meanwhile (`deleted`, by kind then key: the vcjob controller deletes a finished job's PodGroup,
    as Volcano does, and a job's ttlSecondsAfterFinished the job and its pods)."""

    def __init__(self, resumable: bool = False) -> None:
        # `resumable` (a run that serves its API, --listen): an Aborted standalone vcjob is not finished, as a
        # client may resume it (`vcctl job resume`); else Aborted is one of the ends
        self.resumable = resumable
        self._job_done = JOB_DONE - {batch.JobPhase.ABORTED} if resumable else JOB_DONE
        self.unfinished: set[str] = set()
        self.outcomes: dict[str, str] = {}    # followed object -> its phase when it finished
        self.deleted: dict[str, dict[str, Obj]] = {kind: {} for kind in KEPT_WHEN_DELETED}
        self._lines = phasechanges.PhaseChanges()   # the phase changes and flow details not yet written
        self.scheduled: set[str] = set()   # the vcjobs a CronJob made (a run with a CronJob ends unfinished)
        # the last Failed version of each pod, kept when a pod of the same name replaces it (a vcjob's
        # RestartJob deletes its pods and makes new ones): why a job that then used up maxRetry failed
        self.failed_pods: dict[str, Obj] = {}
        self.ended = False   # set when the run's outcome is read: stopping the pods left changes nothing of it
        self.interrupted = False   # the run was stopped by Ctrl-C (SIGINT) or SIGTERM
        self._notes: list[str] = []   # lines about crash loops not yet printed
        self._crash_loops: set[tuple[str, str]] = set()   # (pod, container) whose restarts were announced
        # each vcjob's latest FailedCreate Warning (pods the API refused, e.g. over a ResourceQuota), by
        # (namespace, name): why it waits, where its PodGroup would only say that the gang lacks pods
        self.create_failures: dict[tuple[str, str], str] = {}
        # each vcjob's latest PodGroupError Warning (its PodGroup the API refused), by ("Job", namespace, name)
        self.podgroup_errors: dict[tuple[str, str, str], str] = {}
        # each vcjob's latest PVCError Warning (a claim it names does not exist), by (namespace, name)
        self.claim_errors: dict[tuple[str, str], str] = {}

    def observe_event(self, ev: Any) -> None:
        obj = ev.object
        inv = obj.get("involvedObject") or {}
        if ev.type == "DELETED" or inv.get("kind") != kinds.JOB.kind:
            return
        where = (inv.get("namespace") or meta.namespace(obj), inv.get("name", ""))
        if obj.get("reason") == FAILED_CREATE:
            self.create_failures[where] = obj.get("message") or ""
        elif obj.get("reason") == POD_GROUP_ERROR:
            self.podgroup_errors[(kinds.JOB.kind, *where)] = obj.get("message") or ""
        elif obj.get("reason") == PVC_ERROR:
            self.claim_errors[where] = obj.get("message") or ""

    def observe(self, ev: Any) -> None:
        obj = ev.object
        kind = obj.get("kind")
        kept = self.deleted.get(kind)
        if kept is not None:
            if ev.type == "DELETED":
                kept[meta.key(obj)] = obj
            else:
                kept.pop(meta.key(obj), None)
        if kind == kinds.POD.kind and _pod_phase(obj) == "Failed" and not self.ended:
            self.failed_pods[meta.key(obj)] = obj
        if kind == kinds.POD.kind and ev.type != "DELETED" and not self.ended:
            self._notes += runlines.crash_loop_notes(obj, self._crash_loops)
        if kind == kinds.PODGROUP.kind or (kind == kinds.POD.kind and not view.is_bare_pod(obj)):
            return
        is_flow, is_pod = kind == kinds.JOBFLOW.kind, kind == kinds.POD.kind
        what, phase = self._lines.observe(str(ev.type), obj)
        follows = is_flow or is_pod or flow.CREATED_BY_JOB_FLOW not in meta.labels(obj)
        done = FLOW_DONE if is_flow else POD_DONE if is_pod else self._job_done
        if kind == kinds.JOB.kind and _made_by_cronjob(obj):
            self.scheduled.add(what)
        if ev.type != "DELETED" and follows and phase not in done:
            self.unfinished.add(what)
            self.outcomes.pop(what, None)
        elif ev.type == "DELETED" and what in self.scheduled and what in self.unfinished:
            self.unfinished.discard(what)   # replaced by its CronJob (concurrencyPolicy: Replace): no outcome
        else:
            self.unfinished.discard(what)
            if follows and what not in self.outcomes:
                self.outcomes[what] = phase or DELETED_UNFINISHED

    def done(self) -> bool:
        return not self.unfinished

    def succeeded(self) -> bool:
        """Every followed JobFlow Succeed, every standalone vcjob Completed, every bare pod Succeeded."""
        return all(phase in SUCCESS for phase in self.outcomes.values()) and not self.unfinished

    def nothing_failed(self) -> bool:
        """A run with a CronJob, stopped: no outcome is a failure and only CronJobs' vcjobs are unfinished."""
        return all(phase in SUCCESS for phase in self.outcomes.values()) and self.unfinished <= self.scheduled

    def summary(self) -> tuple[list[str], list[str]]:
        """(`vcctl run` lines of what failed, of what succeeded), e.g. `vcjob default/a Failed`."""
        bad = [f"{what} {phase}" for what, phase in self.outcomes.items() if phase not in SUCCESS]
        good = [f"{what} {phase}" for what, phase in self.outcomes.items() if phase in SUCCESS]
        return bad, good

    def changes(self, now: float | None = None, final: bool = False) -> list[str]:
        """Lines for the phases that appeared or changed since the last call, each phase passed in the order it
        happened, with each JobFlow's flows' new details (phasechanges.PhaseChanges.lines: `now`, `final`), then the
        crash loops."""
        lines = self._lines.lines(now, final) + self._notes
        self._notes = []
        return lines


def _made_by_cronjob(job: Obj) -> bool:
    ref = meta.controller_ref(job)
    return ref is not None and ref.get("kind") == kinds.CRONJOB.kind


_pod_phase = phasechanges.pod_phase


def as_list(client: Any, deleted: dict[str, dict[str, Obj]] | None = None) -> dict:
    """A v1 List of every CronJob, JobFlow, JobTemplate, vcjob, PodGroup, Pod, PersistentVolumeClaim and
    PersistentVolume (where the run's data is); `deleted` (Progress.deleted):
    the last versions of objects deleted during the run, listed with the live ones."""
    items = []
    for kind in LIST_KINDS:
        items.extend(_with_deleted(client.list(kind), (deleted or {}).get(kind.kind)))
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def load_scheduler_conf(conf_path: str | None) -> tuple[scheduler_conf.SchedulerConf | None, list[Any]]:
    """The --scheduler-conf configuration (None: Volcano's default) and its problems (file:line)."""
    if not conf_path:
        return None, []
    try:
        if conf_path == stdinput.STDIN:
            return scheduler_conf.load_bytes(stdinput.read(), stdinput.STDIN_NAME), []
        return scheduler_conf.load_file(conf_path), []
    except OSError as exc:
        return None, [scheduler_conf.Problem("", f"cannot read: {exc}", stdinput.STDIN_NAME)]
    except scheduler_conf.ConfError as exc:
        return None, exc.problems


def _make_workdir(path: pathlib.Path) -> None:
    """--workdir, made now (with its parents) and checked writable: a directory no pod can use is a usage
    error before anything runs, not a failure of every pod's start."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".vclite-write-check-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise OSError(f"--workdir {path}: cannot use it as the pods' directory: {exc.strerror or exc}") from None


def nodes_of(nodes_opt: str | None) -> list[Obj] | None:
    """The Node objects of `--nodes` (None: the default, one node the size of this host); `-` reads
    a YAML file of Nodes from standard input. ValueError (or OSError) saying what is wrong."""
    if nodes_opt == stdinput.STDIN:
        return nodes_mod.nodes_from_bytes(stdinput.read(), stdinput.STDIN_NAME)
    return nodes_mod.parse_nodes_option(nodes_opt) if nodes_opt else None


def build_runtime(nodes_opt: str | None, conf: scheduler_conf.SchedulerConf | None,
                  workdir: str | None, serves: bool = False, conf_path: str | None = None,
                  nodes: list[Obj] | None = None) -> runtime_mod.Runtime:
    """`serves` (`--listen`): the scheduler follows Volcano's scheduler ConfigMap as `vcctl server`'s does (a
    client may apply it during the run), unless `conf_path` (`--scheduler-conf`) configures it: then a change
    of the ConfigMap is a Warning Event saying it is not read. `nodes`: the FILES' Nodes (manifests.nodes_among), when
    there is no `--nodes`."""
    nodes = nodes_of(nodes_opt) if nodes_opt else nodes
    if workdir is not None:
        _make_workdir(pathlib.Path(workdir))
    source = f"--scheduler-conf {stdinput.name(conf_path)}" if serves and conf_path else None
    return runtime_mod.Runtime(clock_mod.RealClock(), nodes=nodes, workdir=workdir, scheduler_config=conf,
                               accounts_on_demand=True, scheduler_conf_map=serves, scheduler_conf_source=source,
                               restarted="the run", resume_advice=None if serves else UNRESUMABLE)


def stuck_report(snap: view.Snapshot, now: dt.datetime | None = None, served: bool = False) -> list[str]:
    """Why each unfinished JobFlow / vcjob can make no more progress; under a flow, each of its vcjobs whose
    failed attempt waits for its retry (flowreport.retry_waits: when it is due, from `now`), and under a loop
    flow its unfinished items, named as the live view names them (`item 1: resnet50 (vcjob x-train-1)`).
    `served` (--listen): a client could have resumed a suspended JobFlow during the run."""
    now = now or clock_mod.RealClock().now()
    lines = []
    for jf in snap.jobflows:
        if meta.phase(jf) in FLOW_DONE:
            continue
        if str(meta.annotations(jf).get(flow.SUSPEND_ANNOTATION, "")).lower() == "true":
            lines.append(f"JobFlow {meta.key(jf)} is suspended (annotation {flow.SUSPEND_ANNOTATION}: \"true\"): "
                         + ("no client resumed it while the run served its API" if served
                            else "vcctl run starts none of its vcjobs") + "; remove the annotation to run it")
        for name, job_name, job, targets in view.flow_rows(jf, snap):
            if job is None:
                cond = ((jf.get("status") or {}).get("conditions") or {}).get(job_name) or {}
                reason = cond.get("message") or (   # (a big flow's waiting notes have no message)
                    f"{cond.get('reason') or 'waiting'}: waiting on {', '.join(targets)}" if targets
                    else cond.get("reason") or "not created")
                lines.append(f"JobFlow {meta.key(jf)}: flow {name}: {reason}")
                lines.extend(f"  {which}: {what}" for which, what in flowreport.retry_waits(jf, name, now, snap))
                lines.extend(_unfinished_items(snap, jf, job_name))
            elif meta.phase(job) not in JOB_DONE:
                lines.append(f"JobFlow {meta.key(jf)}: flow {name} (vcjob {job_name}): {_why_waiting(snap, job)}")
            else:   # (a failed vcjob to be retried: its back-off, or the suspension, is what the run waited on)
                lines.extend(f"JobFlow {meta.key(jf)}: flow {name} ({which}): {what}"
                             for which, what in flowreport.retry_waits(jf, name, now, snap))
    for job in view.standalone_jobs(snap):
        if meta.phase(job) not in JOB_DONE:
            lines.append(f"vcjob {meta.key(job)}: {_why_waiting(snap, job)}")
    for pod in view.bare_pods(snap):
        if _pod_phase(pod) not in POD_DONE:
            reason = view.why_pod_waits(snap, pod) or "pod is " + _pod_phase(pod)
            lines.append(f"pod {meta.key(pod)}: {runclaims.plain_reason(reason) or reason}")
    return lines


def _why_waiting(snap: view.Snapshot, job: Obj) -> str:
    """Why an unfinished vcjob waits (view.why_waiting), a claim it waits for in plain words (runclaims)."""
    reason = view.why_waiting(snap, job) or f"vcjob is {meta.phase(job) or 'Pending'}"
    return runclaims.plain_reason(reason) or reason


ITEMS_LISTED = 8   # unfinished items (or iterations) of one loop flow a stopped run names


def _unfinished_items(snap: view.Snapshot, jf: Obj, base: str) -> list[str]:
    """`  item 3: 0.004 (vcjob x-train-3): vcjob is Running` for each vcjob of loop flow `base` (its vcjob name
    without an index) not finished, named as the live view names its row, in item order: the first
    ITEMS_LISTED, then a count."""
    ns = meta.namespace(jf)
    cond = ((jf.get("status") or {}).get("conditions") or {}).get(base) or {}
    count = int(cond.get("items") or cond.get("iterations") or 0)
    unfinished = [job for job in (snap.job(ns, f"{base}-{i}") for i in range(count))
                  if job is not None and meta.phase(job) not in JOB_DONE]
    lines = []
    for job in unfinished[:ITEMS_LISTED]:
        _, item = view.loop_item(jf, meta.name(job), snap)
        lines.append(f"  {item} (vcjob {meta.name(job)}): {_why_waiting(snap, job)}")
    if len(unfinished) > ITEMS_LISTED:
        lines.append(f"  … and {len(unfinished) - ITEMS_LISTED} more unfinished")
    return lines


def failure_report(snap: view.Snapshot, rt: runtime_mod.Runtime, failed_pods: dict[str, Obj] | None = None
                   ) -> list[str]:
    """Why each vcjob, bare pod and JobFlow failed; `failed_pods` (Progress.failed_pods): failed pods
    since replaced, read for a vcjob whose pods now say nothing (restarted, then out of retries). A vcjob stopped
    before any of its pods ended (a PodPending policy's timeout) says what they waited for (view.why_waiting)."""
    lines = []
    for job in snap.jobs:
        if meta.phase(job) in (batch.JobPhase.FAILED, batch.JobPhase.TERMINATED, batch.JobPhase.ABORTED):
            reason = view.failure_reason(snap, job)
            if not reason and failed_pods:
                earlier = view.Snapshot([], [job], [], [
                    p for p in failed_pods.values()
                    if snap.job(meta.namespace(p), meta.labels(p).get(batch.JOB_NAME, "")) is job])
                reason = view.failure_reason(earlier, job)
            waited = "" if reason else view.why_waiting(snap, job)   # (e.g. a PodPending policy's timeout)
            reason = reason or (f"{meta.phase(job)} while its pods waited: {waited}" if waited else meta.phase(job))
            item = view.job_item(snap, job)
            lines.append(f"vcjob {meta.key(job)}{f' ({item})' if item else ''} {meta.phase(job)}: {reason}")
            for pod in snap.pods_of(job):
                if (pod.get("status") or {}).get("phase") == "Failed":
                    lines.extend(_log_tails(rt, pod))
    for pod in view.bare_pods(snap):
        if _pod_phase(pod) == "Failed":
            lines.append(f"pod {meta.key(pod)} Failed: {'; '.join(view.pod_failure_reasons(pod)) or 'Failed'}")
            lines.extend(_log_tails(rt, pod))
    for jf in snap.jobflows:
        if meta.phase(jf) != flow.FlowPhase.FAILED:
            continue
        for name, cond in ((jf.get("status") or {}).get("conditions") or {}).items():
            # a vcjob's own condition has no reason; a flow's failure without a failed pod has one
            if isinstance(cond, dict) and cond.get("phase") in (batch.JobPhase.FAILED, batch.JobPhase.TERMINATED) \
                    and cond.get("reason"):
                lines.append(f"JobFlow {meta.key(jf)}: {flowreport.failed_condition(jf, name, cond, snap)}")
        handler = (jf.get("spec") or {}).get("onExit")
        cond = ((jf.get("status") or {}).get("conditions") or {}).get(flow.job_name(meta.name(jf), str(handler)))
        if handler and isinstance(cond, dict) and cond.get("phase") in (batch.JobPhase.FAILED,
                                                                         batch.JobPhase.TERMINATED):
            lines.append(f"JobFlow {meta.key(jf)}: the exit handler (spec.onExit: {handler}) was "
                         f"{cond['phase']}, which fails the JobFlow")
    for f in rt.failures:
        lines.append(f"internal: {f.component} gave up on {f.key} after {f.attempts} attempts: {f.error}")
    return lines


CRASH_TAILS = 5   # crash-looping pods whose last log lines a stopped run shows


def crash_tails(snap: view.Snapshot, rt: runtime_mod.Runtime) -> list[str]:
    """The last log lines of the crash-looping containers of each unfinished vcjob's pod that the stuck
    report names (and of unfinished bare pods): why a container keeps failing (`mpiexec: not found`)."""
    pods = [view.blocked_pod(snap, job) for job in snap.jobs if meta.phase(job) not in JOB_DONE]
    pods += [p for p in view.bare_pods(snap) if _pod_phase(p) not in POD_DONE]
    lines: list[str] = []
    for pod in [p for p in pods if p is not None and view.crash_looping(p)][:CRASH_TAILS]:
        lines.extend(_log_tails(rt, pod, view.crash_looping(pod)))
    return lines


def _log_tails(rt: runtime_mod.Runtime, pod: Obj, names: list[str] | None = None) -> list[str]:
    """The last lines of a failed pod's logs: of `names`, else of the init container that failed, else of
    every container."""
    if rt.executor is None:
        return []
    names = names or view.failed_init_containers(pod) or [
        c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    lines = []
    for name in names:
        path = rt.executor.log_path(meta.namespace(pod), meta.name(pod), name)
        tail = _tail(path)
        if tail:
            lines.append(f"  last lines of {path}:")
            lines.extend(f"    {ln}" for ln in tail)
            if mountview.available() is not None:   # (else the container saw its mounts at their paths)
                lines.extend(f"  {note}" for note in runhints.mount_notes(pod, name, tail))
    return lines


class _Stderr:
    """Plain, unwrapped lines on stderr (messages must stay greppable whole)."""

    def print(self, text: str, markup: bool = False) -> None:
        print(text, file=sys.stderr, flush=True)


def _tail(path: pathlib.Path, n: int = 5) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return []


class ListenError(Exception):
    """`--listen`: the API cannot be served as asked (the address is in use…); nothing has run."""


STUCK_LINES = 40   # what still waits, listed after a timeout: at most this many lines (a big flow has thousands)


async def _run(rt: runtime_mod.Runtime, docs: list[yamlio.Document], lines_to: TextIO, console: Console | None,
               quiet: bool, timeout: float | None, endless: bool = False,
               listen: tuple[str, int] | None = None) -> tuple[bool, view.Snapshot, Progress]:
    """`endless`: a CronJob is among the documents (the run ends only on timeout, Ctrl-C or when
    nothing can run again). `listen`: (host, port) to serve the API on during the run (runlisten.py;
    ListenError if it cannot: nothing has run then). `console`: draw the live view there; else
    write a line per phase change to `lines_to`."""
    served = None
    if listen is not None:
        from vclite.cli import runlisten   # (the HTTP server's modules load only for a run that serves)
        from vclite.httpserver import server as server_mod
        try:
            served = await runlisten.serve(rt, *listen)
        except server_mod.ServeError as exc:
            raise ListenError(str(exc)) from None
        for line in served.lines():
            print(line, file=sys.stderr, flush=True)
        rt.jobflow_controller.resume_flags = served.resume_flags   # (a suspended JobFlow's resume command)
    rt.start()   # (the documents were applied when they were validated)
    start = rt.clock.monotonic()
    last_draw = -1.0
    live = None
    if console is not None:
        from rich.live import Live

        from vclite.cli import viewdraw
        live = Live(console=console, auto_refresh=False, transient=False)
    progress = Progress(resumable=listen is not None)
    caches = {kind.kind: informer.Informer(rt.client, kind, progress.observe) for kind in SNAPSHOT_KINDS}
    for inf in caches.values():
        inf.start()
        if inf.on_event is not None:
            for obj in inf.list():   # (applied before the informers started: no event of their own)
                progress.observe(client_mod.WatchEvent(client_mod.EventType.ADDED, inf.kind, obj, None))

    events = rt.client.watch(kinds.EVENT, progress.observe_event)
    draw_gap = view.MIN_REDRAW_GAP

    def tick(final: bool = False) -> None:
        """Live view: redraw at most 10 times a second, and less often when a redraw is costly (a
        big flow), so drawing never takes more than about a tenth of the time. Otherwise: a line per
        phase change, as the watch reported them (cheap enough to run after every burst of work), a loop's
        count line once its counts settle (runlines.LoopLines); `final`: every line held is written."""
        nonlocal last_draw, draw_gap
        if quiet:
            return
        if live is not None:
            now = rt.clock.monotonic()
            if final or now - last_draw >= draw_gap:
                began = time.perf_counter()
                live.update(viewdraw.render(snapshot(caches, None, progress.create_failures,
                                                     podgroup_errors(progress, rt), progress.claim_errors),
                                            rt.clock.now()), refresh=True)
                draw_gap = view.redraw_gap(time.perf_counter() - began)
                last_draw = rt.clock.monotonic()
            return
        lines = progress.changes(rt.clock.monotonic(), final)
        if lines:   # plain lines (no live view here): written directly, rich's rendering is per line
            elapsed = f"[{rt.clock.monotonic() - start:7.2f}s]"
            lines_to.write("".join(f"{elapsed} {line}\n" for line in lines))
            lines_to.flush()

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def stop() -> None:
        stopping.set()
        rt.request_stop()

    loop.add_signal_handler(signal.SIGINT, stop)
    loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        if live is not None:
            live.start()
        try:
            until = (lambda: False) if endless else progress.done
            if served is None:
                done = await rt.run_until(until, timeout=timeout, on_tick=None if quiet else tick)
            else:
                from vclite.cli import runlisten
                done = await runlisten.drive(rt, until, timeout, None if quiet else tick, stopping,
                                             lambda text: None if quiet else print(text, file=sys.stderr, flush=True),
                                             idle=lambda: tick(final=True))
        except runtime_mod.Interrupted:   # (Ctrl-C: what was left is reported as after a timeout)
            done, progress.interrupted = False, True
        tick(final=True)
        progress.ended = True
        return done, snapshot(caches, progress.deleted, progress.create_failures, podgroup_errors(progress, rt),
                              progress.claim_errors), progress
    finally:
        events.cancel()
        if live is not None:
            live.stop()
        try:   # (the pods first: a client watching them, `kubectl get pods -w`, sees them end)
            await _stop_pods(rt, loop, quiet)
        finally:
            if served is not None:
                await served.close()


async def _stop_pods(rt: runtime_mod.Runtime, loop: asyncio.AbstractEventLoop, quiet: bool) -> None:
    """Stop the pods still running (a timeout, Ctrl-C): SIGTERM, SIGKILL after their grace period
    (terminationGracePeriodSeconds, 30 s by default), as the kubelet does — or at once on a second
    Ctrl-C, which the user is told about when there is something to wait for."""
    running = rt.executor.running_count() if rt.executor is not None else 0
    if running:
        loop.add_signal_handler(signal.SIGINT, rt.executor.kill_all)
        loop.add_signal_handler(signal.SIGTERM, rt.executor.kill_all)
        if not quiet:
            print(f"stopping {running} pod(s): SIGTERM, then SIGKILL after their grace period "
                  "(Ctrl-C to kill them now)", file=sys.stderr, flush=True)
    try:
        await rt.shutdown()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)


def run(files: list[str], quiet: bool, output: str | None, nodes_opt: str | None, conf_path: str | None,
        workdir: str | None, timeout: float | None, params: dict[str, str] | None = None,
        listen: tuple[str, int] | None = None) -> int:
    """`listen`: (host, port) to serve the API on during the run (`--listen`, runlisten.py). A Ctrl-C before the run
    handles signals itself (while the files load and are validated) is an interrupted run too: exit 130, nothing
    run — not click's `Aborted!`."""
    err = _Stderr()
    try:
        return _load_and_run(files, quiet, output, nodes_opt, conf_path, workdir, timeout, params, listen, err)
    except KeyboardInterrupt:   # (_run_and_report answers one of its own: the pods were stopped then)
        err.print("interrupted: nothing was run.", markup=False)
        return 130


def _load_and_run(files: list[str], quiet: bool, output: str | None, nodes_opt: str | None, conf_path: str | None,
                  workdir: str | None, timeout: float | None, params: dict[str, str] | None,
                  listen: tuple[str, int] | None, err: "_Stderr") -> int:
    twice = stdinput.conflict({"FILES": files, "--nodes": nodes_opt, "--scheduler-conf": conf_path})
    if twice:
        err.print(f"error: {twice}; nothing was run.", markup=False)
        return 2
    read, file_nodes, node_problems = manifests.nodes_among(manifests.read_all(files), nodes_opt)
    conf, conf_problems = load_scheduler_conf(conf_path)
    configmap = schedconfmap.find(read[0])
    if configmap is not None and not conf_path:
        conf = schedconfmap.parse(configmap)[0]   # (None when it has problems: load_and_validate reports them)
    rt, runtime_error = None, None
    if not conf_problems:
        try:
            rt = build_runtime(nodes_opt, conf, workdir, serves=listen is not None, conf_path=conf_path,
                               nodes=file_nodes)
        except (ValueError, OSError) as exc:
            runtime_error = exc
    try:
        # Admitted once: on the runtime's own API, before anything runs (a problem leaves a runtime
        # that never started, and is dropped); on a scratch API when there is no runtime to run.
        docs, problems = manifests.load_and_validate(files, client=rt.client if rt is not None else None,
                                                     params=params, read=read)
        problems = [*conf_problems, *manifests.in_file_order([*node_problems, *problems], files)]
        if problems:   # (the warnings too, as vcctl validate prints them: a typo's `did you mean` explains an error)
            for w in manifests.warnings(docs):
                err.print(f"warning: {w}", markup=False)
            for p in problems:
                err.print(str(p), markup=False)
            err.print(f"{len(problems)} problem(s) found{manifests.with_params(params)}; nothing was run.",
                      markup=False)
            return 2
        if rt is None:
            err.print(f"error: {runtime_error}", markup=False)
            return 2
        if not quiet:
            for w in manifests.warnings(docs):
                err.print(f"warning: {w}", markup=False)
            if configmap is not None:
                err.print(_configmap_note(configmap, conf_path), markup=False)
        return _run_and_report(rt, docs, quiet, output, timeout, err,
                               default_node=nodes_opt is None and file_nodes is None,
                               listen=listen)
    finally:
        if rt is not None and workdir is None and not _has_pods(rt.workdir):
            shutil.rmtree(rt.workdir, ignore_errors=True)   # a temporary directory no pod ran in: nothing to see


def _configmap_note(doc: yamlio.Document, conf_path: str | None) -> str:
    """What a run says of Volcano's scheduler ConfigMap among its FILES: used, or set aside by --scheduler-conf."""
    where = schedconfmap.describe(doc)
    if conf_path:
        return (f"warning: {where}: its {schedconfmap.KEY} is not used: --scheduler-conf "
                f"{stdinput.name(conf_path)} configures the scheduler")
    return f"note: {where}: the scheduler runs with its {schedconfmap.KEY}, as Volcano's scheduler reads it"


def live_console() -> Console | None:
    """rich's Console on stdout when it draws a live view there (a terminal, as rich decides, its
    TTY_COMPATIBLE and FORCE_COLOR included); None without loading rich when stdout is piped."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty and "TTY_COMPATIBLE" not in os.environ and "FORCE_COLOR" not in os.environ:
        return None
    from rich.console import Console

    console = Console(highlight=False)
    return console if console.is_terminal else None


def _run_and_report(rt: runtime_mod.Runtime, docs: list, quiet: bool, output: str | None, timeout: float | None,
                    err: "_Stderr", default_node: bool = False, listen: tuple[str, int] | None = None) -> int:
    console = live_console() if not quiet and output is None else None
    endless = any(d.obj.get("kind") == kinds.CRONJOB.kind for d in docs)
    try:
        started = rt.clock.monotonic()
        done, snap, progress = asyncio.run(_run(rt, docs, sys.stdout if output is None else sys.stderr, console, quiet, timeout, endless,
                                                listen))
    except ListenError as exc:
        err.print(f"error: {exc}; nothing was run.", markup=False)
        return 1
    except (runtime_mod.Interrupted, asyncio.CancelledError, KeyboardInterrupt):
        err.print("interrupted: every pod was stopped.", markup=False)
        return 130
    try:
        return _report(rt, docs, quiet, output, timeout, err, default_node, done, snap, progress, started, endless)
    except KeyboardInterrupt:   # (a Ctrl-C once the run's signal handlers are gone: the report is cut short)
        err.print("interrupted: every pod was stopped.", markup=False)
        return 130


def _report(rt: runtime_mod.Runtime, docs: list, quiet: bool, output: str | None, timeout: float | None,
            err: "_Stderr", default_node: bool, done: bool, snap: view.Snapshot, progress: Progress, started: float,
            endless: bool) -> int:
    """What a run that ended (or stopped) says, and its exit status."""
    if not quiet:   # (the accounts a JobFlow named only when it made a vcjob: made for the run, as those of the files)
        for made in rt.made_accounts:
            err.print(f"warning: {manifests.made_account_warning(docs, made)}", markup=False)
    if output:   # (Ctrl-C included: the objects as the stop left them, as after a timeout)
        data = as_list(rt.client, progress.deleted)
        sys.stdout.write(yamlio.dump_yaml(data) if output == "yaml" else json.dumps(data, indent=2) + "\n")
    if progress.interrupted:
        err.print("interrupted: every pod was stopped.", markup=False)
        _stopped_report(snap, rt, progress, err, default_node)
        return 130
    if not done and endless and progress.nothing_failed():
        return _cron_run_report(rt, progress, timeout, started, quiet, err)
    if not done:
        timed_out = timeout is not None and rt.clock.monotonic() - started >= timeout
        err.print(f"stopped: timed out after {timeout:g}s" if timed_out else "stopped: no further progress is possible",
                  markup=False)
        _stopped_report(snap, rt, progress, err, default_node)
        return 1
    ok = progress.succeeded()
    if ok and quiet:
        return 0
    for line in failure_report(snap, rt, progress.failed_pods):   # a failure says why, even under --quiet
        err.print(line, markup=False)
    bad, good = progress.summary()
    where = _where(rt.workdir)
    if ok:
        err.print("succeeded: " + (", ".join(good) or f"{len(docs)} object(s) applied, no JobFlow or vcjob to run")
                  + where, markup=False)
    else:
        err.print("failed: " + ", ".join(bad) + (f"; succeeded: {', '.join(good)}" if good else "") + where,
                  markup=False)
    return 0 if ok else 1


def _stopped_report(snap: view.Snapshot, rt: runtime_mod.Runtime, progress: Progress, err: "_Stderr",
                    default_node: bool) -> None:
    """What was left when the run stopped (a timeout, no progress possible, Ctrl-C), and what failed;
    `default_node`: the run has only the node for this machine (a job short of resources gets the hint)."""
    stuck = stuck_report(snap, rt.clock.now(), served=progress.resumable)
    for line in stuck[:STUCK_LINES]:
        err.print(f"  {line}", markup=False)
    if len(stuck) > STUCK_LINES:
        err.print(f"  … and {len(stuck) - STUCK_LINES} more (vcctl run -o yaml shows every object)", markup=False)
    if any(runclaims.UNBOUND_PLAIN in line for line in stuck):   # (which claims, and why: the scheduler cannot say)
        unfinished = [p for p in snap.pods if _pod_phase(p) not in POD_DONE]
        for line in runclaims.unbound_notes(unfinished, rt.client.list(kinds.PERSISTENTVOLUMECLAIM),
                                            rt.client.list(kinds.EVENT))[:STUCK_LINES]:
            err.print(f"  {line}", markup=False)
    for line in crash_tails(snap, rt):
        err.print(f"  {line}", markup=False)
    if default_node and any(runhints.short_of_resources(line) for line in stuck):
        waiting = [j for j in snap.jobs
                   if ((j.get("status") or {}).get("state") or {}).get("phase") in (None, "Pending")]
        err.print(f"  {runhints.host_node_hint(waiting)}", markup=False)
    for line in failure_report(snap, rt, progress.failed_pods):
        err.print(f"  {line}", markup=False)


def _cron_run_report(rt: runtime_mod.Runtime, progress: Progress, timeout: float | None, started: float,
                     quiet: bool, err: "_Stderr") -> int:
    """A run with a CronJob that ended with nothing failed (exit 0): why it ended, what ran."""
    if quiet:
        return 0
    timed_out = timeout is not None and rt.clock.monotonic() - started >= timeout
    why = f"timed out after {timeout:g}s" if timed_out else "no CronJob will run again (suspended?)"
    _, good = progress.summary()
    running = sorted(progress.unfinished)
    where = _where(rt.workdir)
    err.print(f"stopped: {why}, as a run with a CronJob ends; nothing failed", markup=False)
    err.print("succeeded: " + (", ".join(good) or "no vcjob finished") + where, markup=False)
    if running:
        err.print("stopped while running: " + ", ".join(running), markup=False)
    return 0


CLAIMS_SHOWN = 3


def _where(workdir: pathlib.Path) -> str:
    """Where a finished run left what users look for next: ` (pod logs under <workdir>; claims' data in <dir>, …)`
    — the pods' logs if any pod ran, and the directories the default class provisioned for claims (the data a
    flow wrote to its claims outlives the run); "" when there is neither."""
    parts = [f"pod logs under {workdir}"] if _has_pods(workdir) else []
    try:
        claims = sorted(str(p) for p in workdir.glob(f"*/{storage.PROVISIONED_DIR}/*") if p.is_dir())
    except OSError:
        claims = []
    if claims:
        more = f" and {len(claims) - CLAIMS_SHOWN} more" if len(claims) > CLAIMS_SHOWN else ""
        parts.append("claims' data in " + ", ".join(claims[:CLAIMS_SHOWN]) + more)
    return f" ({'; '.join(parts)})" if parts else ""


def _has_pods(workdir: pathlib.Path) -> bool:
    """Whether any pod ran in `workdir`: a pod that ran has a log (`<namespace>/<pod>/logs/<container>.log`);
    a pod that never started may have only its empty directories, made ahead by the executor."""
    try:
        return any(workdir.glob("*/*/logs/*.log"))
    except OSError:
        return True   # cannot tell: keep it
