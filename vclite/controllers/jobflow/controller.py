"""The JobFlow controller: create each flow's vcjob when its dependencies are met, keep the status.

Thin shell around pure parts: `readiness` decides which flows to create, `objects` builds them,
`status` computes the JobFlowStatus. A sync reads the JobFlow, its vcjobs and templates, creates what
is ready, writes the status if it changed, and applies `jobRetainPolicy: delete` after success. It
talks to the cluster only through the Client protocol, so it runs unchanged in-process, against
`vcctl server` or against a real cluster.

Triggers (level-triggered; any duplicate or lost event is harmless):
- JobFlow added/updated/deleted -> that JobFlow (Volcano ignores most updates).
- any vcjob event for a vcjob a JobFlow controls (controller ownerRef, else the createdByJobFlow
  label) -> that JobFlow (Volcano watches updates only).
- JobTemplate added -> a fan-out key `JobTemplate:<ns>/<name>`; its sync enqueues every unfinished
  JobFlow of that namespace naming the template. This is what starts a flow whose template was created
  after the JobFlow (Volcano needs a restart for that).

Decisions beyond Volcano (each fixes a quirk listed in the reference, volcano-jobflow.md §2, §8):
- A missing JobTemplate is not an error loop: the flow shows `JobTemplateNotFound` in its condition,
  one Warning event is recorded, and the template's creation re-triggers the sync.
- A generated vcjob rejected by admission (errors.Invalid) can never run: the flow's condition is
  `{phase: Failed, reason: FailedCreate, message: <admission message>}`, a Warning event is recorded
  and the JobFlow fails. (Volcano retries 15 times without writing status, then drops it.) This also
  covers rejections that depend on other objects (e.g. a queue that does not exist).
- A vcjob with the flow's name that this JobFlow did not create blocks that flow visibly
  (`JobAlreadyExists`) instead of silently.
- Deletion: the finalizer `vclite.volcano.sh/jobflow` (objects.FINALIZER) is added on first sync.
  When the JobFlow is deleted its phase becomes Terminating, its vcjobs are deleted, and once none is
  left the finalizer is removed so the store completes the deletion. On a real cluster this means a
  JobFlow can only be deleted while this controller runs (remove the finalizer by hand otherwise).
- Succeed and Failed are final: no vcjob is created or re-created afterwards (Volcano re-creates a
  deleted vcjob of a succeeded flow), but the status of remaining jobs keeps being refreshed.

Other API errors (conflicts, unavailability) are raised after the status is written, so the runtime
re-queues the key with back-off.
"""
from __future__ import annotations

from typing import Any, Hashable

from vclite.api import batch, flow, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.apiserver import events
from vclite.controllers.jobflow import objects, readiness
from vclite.controllers.jobflow import status as status_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
TEMPLATE_KEY_PREFIX = "JobTemplate:"
NORMAL, WARNING = "Normal", "Warning"
STATUS_REFRESH = 0.25  # seconds: how stale a JobFlow's view of running jobs may be
URGENT_PHASES = batch.FINISHED_PHASES | {batch.JobPhase.TERMINATING}


def _status_only(new: Obj, old: Obj) -> bool:
    """True if nothing but status and resourceVersion differs between two versions of an object."""
    def strip(o: Obj) -> Obj:
        md = {k: v for k, v in o.get("metadata", {}).items() if k != "resourceVersion"}
        return {**{k: v for k, v in o.items() if k != "status"}, "metadata": md}
    return strip(new) == strip(old)


class JobFlowController:
    name = "jobflow-controller"

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock)
        self._subscriptions: list[client_mod.Subscription] = []
        self.jobs = informer_mod.Informer(client, kinds.JOB, self._on_job)  # read-only cache of vcjobs

    # ---- watches: only enqueue ----------------------------------------------------------------
    def start(self) -> None:
        self._subscriptions = [
            self.client.watch(kinds.JOBFLOW, self._on_jobflow),
            self.client.watch(kinds.JOBTEMPLATE, self._on_template),
        ]
        self.jobs.start()
        for jf in self.client.list(kinds.JOBFLOW):
            self.queue.add(meta.key(jf))

    def stop(self) -> None:
        self.jobs.stop()
        for sub in self._subscriptions:
            sub.cancel()
        self._subscriptions = []

    def _on_jobflow(self, ev: client_mod.WatchEvent) -> None:
        """Status-only changes are this controller's own writes: they need no new sync."""
        if ev.type == client_mod.EventType.MODIFIED and ev.old is not None and _status_only(ev.object, ev.old):
            return
        self.queue.add(meta.key(ev.object))

    def _on_job(self, ev: client_mod.WatchEvent) -> None:
        """A vcjob created, deleted or in a phase that can decide something (Completed starts
        dependents; Failed, Terminated, Terminating fail the flow) syncs its JobFlow at once. Other
        changes (Pending -> Running, task counts) only refresh the JobFlow's status, coalesced
        over STATUS_REFRESH seconds, so a busy flow is not recomputed on every pod transition."""
        urgent = ev.type != client_mod.EventType.MODIFIED or ev.old is None or meta.is_deleting(ev.object) or \
            meta.phase(ev.object) in URGENT_PHASES
        for obj in (ev.object, ev.old):
            key = objects.jobflow_key_of(obj) if obj else None
            if key:
                if urgent:
                    self.queue.add(key)
                else:
                    self.queue.add_after(key, STATUS_REFRESH)

    def _on_template(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.ADDED:
            self.queue.add(TEMPLATE_KEY_PREFIX + meta.key(ev.object))

    # ---- sync -----------------------------------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        key = str(key)
        if key.startswith(TEMPLATE_KEY_PREFIX):
            self._fan_out(key[len(TEMPLATE_KEY_PREFIX):])
            return
        ns, _, name = key.partition("/")
        try:
            jobflow = self.client.get(kinds.JOBFLOW, ns, name)
        except errors.NotFound:
            return
        if meta.is_deleting(jobflow):
            self._terminate(jobflow)
            return
        jobflow = self._ensure_finalizer(jobflow)
        jobs = self._jobs_of(jobflow)
        notes: dict[str, status_mod.Note] = {}
        failure: errors.ApiError | None = None
        if meta.phase(jobflow) not in status_mod.FROZEN:
            created, notes, failure = self._create_ready(jobflow, jobs)
            jobs = jobs + created
        new_status = status_mod.compute(jobflow, jobs, self.clock.now(), notes)
        jobflow = self._write_status(jobflow, new_status)
        if new_status["state"]["phase"] == flow.FlowPhase.SUCCEED and \
                (jobflow.get("spec") or {}).get("jobRetainPolicy") == flow.RetainPolicy.DELETE:
            self._delete_jobs(jobs)
        if failure is not None:
            raise failure

    def _fan_out(self, template_key: str) -> None:
        ns, _, template = template_key.partition("/")
        for jf in self.client.list(kinds.JOBFLOW, ns):
            if meta.phase(jf) in status_mod.FINAL or meta.is_deleting(jf):
                continue
            if any(f.get("name") == template for f in (jf.get("spec") or {}).get("flows") or []):
                self.queue.add(meta.key(jf))

    def _jobs_of(self, jobflow: Obj) -> list[Obj]:
        found = self.jobs.list(meta.namespace(jobflow), labels=objects.flow_selector(jobflow))
        return [j for j in found if objects.belongs_to(j, jobflow)]

    def _ensure_finalizer(self, jobflow: Obj) -> Obj:
        finalizers = jobflow.get("metadata", {}).get("finalizers") or []
        if objects.FINALIZER in finalizers:
            return jobflow
        updated = {**jobflow, "metadata": {**jobflow["metadata"], "finalizers": [*finalizers, objects.FINALIZER]}}
        return self.client.update(updated)

    def _create_ready(self, jobflow: Obj, jobs: list[Obj]
                      ) -> tuple[list[Obj], dict[str, status_mod.Note], errors.ApiError | None]:
        """Create every ready flow's vcjob. Returns (created vcjobs, notes, an error to re-raise)."""
        name, ns = meta.name(jobflow), meta.namespace(jobflow)
        flows = (jobflow.get("spec") or {}).get("flows") or []
        by_name = {meta.name(j): j for j in jobs}
        observed = {f: meta.phase(by_name[flow.job_name(name, f)])
                    for f in readiness.distinct_flows(flows) if flow.job_name(name, f) in by_name}
        created: list[Obj] = []
        notes: dict[str, status_mod.Note] = {}
        failure: errors.ApiError | None = None
        for f in readiness.flows_to_create(flows, observed):
            try:
                template = self.client.get(kinds.JOBTEMPLATE, ns, f)
                job = self.client.create(objects.build_job(jobflow, template, f))
            except errors.NotFound:
                notes[f] = status_mod.Note(batch.JobPhase.PENDING, status_mod.Reason.TEMPLATE_NOT_FOUND,
                                           f'JobTemplate "{f}" not found')
            except errors.AlreadyExists:
                existing = self._existing(ns, flow.job_name(name, f))
                if existing is not None and objects.belongs_to(existing, jobflow):
                    created.append(existing)
                else:
                    notes[f] = status_mod.Note(
                        batch.JobPhase.PENDING, status_mod.Reason.JOB_EXISTS,
                        f'a Job named "{flow.job_name(name, f)}" already exists and was not created by this JobFlow')
            except errors.Invalid as err:
                notes[f] = status_mod.Note(batch.JobPhase.FAILED, status_mod.Reason.FAILED_CREATE, err.message)
                break   # the flow fails: create nothing more
            except errors.ApiError as err:
                failure = err
                break   # retried with back-off by the runtime
            else:
                created.append(job)
                events.record(self.client, self.clock, jobflow, NORMAL, "Created",
                              f"create a job named {meta.name(job)}!", component=self.name)
        self._warn_once(jobflow, notes)
        return created, notes, failure

    def _existing(self, ns: str, name: str) -> Obj | None:
        try:
            return self.client.get(kinds.JOB, ns, name)
        except errors.NotFound:
            return None

    def _warn_once(self, jobflow: Obj, notes: dict[str, status_mod.Note]) -> None:
        """A Warning event per note, unless the previous status already reported the same thing."""
        previous = (jobflow.get("status") or {}).get("conditions") or {}
        for f, note in notes.items():
            before = previous.get(flow.job_name(meta.name(jobflow), f)) or {}
            if (before.get("reason"), before.get("message")) != (note.reason, note.message):
                events.record(self.client, self.clock, jobflow, WARNING, str(note.reason), note.message,
                              component=self.name)

    def _write_status(self, jobflow: Obj, new_status: Obj) -> Obj:
        if new_status == jobflow.get("status"):
            return jobflow
        return self.client.update_status({**jobflow, "status": new_status})

    def _delete_jobs(self, jobs: list[Obj]) -> None:
        for job in jobs:
            if meta.is_deleting(job):
                continue
            try:
                self.client.delete(kinds.JOB, meta.namespace(job), meta.name(job))
            except errors.NotFound:
                pass

    # ---- deletion -------------------------------------------------------------------------------
    def _terminate(self, jobflow: Obj) -> None:
        """Terminating: delete the vcjobs; when none is left, drop our finalizer."""
        finalizers = jobflow.get("metadata", {}).get("finalizers") or []
        if objects.FINALIZER not in finalizers:
            return
        jobs = self._jobs_of(jobflow)
        jobflow = self._write_status(jobflow, status_mod.compute(jobflow, jobs, self.clock.now()))
        self._delete_jobs(jobs)
        if self._jobs_of(jobflow):
            return   # the vcjobs' DELETED events bring us back
        remaining = [f for f in finalizers if f != objects.FINALIZER]
        self.client.update({**jobflow, "metadata": {**jobflow["metadata"], "finalizers": remaining}})
