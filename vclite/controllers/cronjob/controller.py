"""The CronJob controller (`cronjob-controller`): Volcano's pkg/controllers/cronjob/cronjob_controller.go
and its handlers, over the Client protocol, with the decisions in `schedule.py`.

A sync of `ns/name`: finished vcjobs leave `status.active` (SawCompletedJob) and set
`lastSuccessfulTime`; the oldest finished ones beyond `successfulJobsHistoryLimit` /
`failedJobsHistoryLimit` are deleted (SuccessfulDelete); vcjobs it owns but does not list are
reported (OrphanedJob) and listed ones that are gone dropped (StaleReference). Unless suspended, the
most recent due scheduled time (never one older than `startingDeadlineSeconds`; many missed:
TooManyMissedTimes) gets a vcjob `<name>-<Unix minutes>` — after `concurrencyPolicy` (Forbid:
skipped while one is active, ForbidConcurrent; Replace: the active ones deleted first,
ReplaceConcurrent) — with SuccessfulCreate, and the key is queued again for the next scheduled
time (a timer of the work queue: nothing polls). Deleting a CronJob deletes its vcjobs through
their ownerReferences (the store's garbage collector), as on Kubernetes.

Differences, on purpose: a schedule or time zone the controller cannot use (InvalidTimeZone,
InvalidSchedule) and a vcjob the API refuses (FailedCreate with the refusal) are not retried with
back-off (Volcano retries forever): the CronJob waits for its next scheduled time or its next
change. Watch handlers only enqueue keys; reads go through informers.
"""
from __future__ import annotations

import datetime as _dt
import logging
from typing import Any, Hashable

from vclite.api import batch, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.controllers.cronjob import schedule as sched
from vclite.lib import clock as clock_mod
from vclite.lib import cron, errors, jsoncopy, workqueue

Obj = dict[str, Any]
COMPONENT = "vc-controller-manager"
log = logging.getLogger(__name__)


def _owner_key(job: Obj) -> str | None:
    """`ns/name` of the CronJob controlling a vcjob (its controller ownerReference), else None."""
    ref = meta.controller_ref(job)
    if ref is None or ref.get("kind") != kinds.CRONJOB.kind or ref.get("apiVersion") != kinds.CRONJOB.api_version:
        return None
    return f"{meta.namespace(job)}/{ref.get('name')}"


class CronJobController:
    name = "cronjob-controller"
    retries_forever = True   # (Volcano's cronjob controller: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, recorder: events.RecordFn | None = None,
                 local_zone: _dt.tzinfo | None = None):
        """`local_zone`: where a schedule without timeZone is read (Volcano: the controller's
        time.Local); None: the process's local zone."""
        self.client, self.clock = client, clock
        self.record = recorder or events.direct(client, clock)
        self.local_zone = local_zone if local_zone is not None else cron.local_zone()
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.cronjobs = informer_mod.Informer(client, kinds.CRONJOB, self._on_cronjob)
        self.jobs = informer_mod.Informer(client, kinds.JOB, self._on_job, indexers={"cronjob": _owner_key})

    def start(self) -> None:
        """Follow CronJobs; vcjobs only once a CronJob exists (`_follow_jobs`)."""
        self.cronjobs.start()
        for cj in self.cronjobs.items():
            self._follow_jobs()
            self.queue.add(meta.key(cj))

    def _follow_jobs(self) -> None:
        """Start following vcjobs (a list, then the watch; once). Until a CronJob exists, no vcjob can be
        one of its: a flow's vcjobs then cost this controller nothing (no cache, no event handled)."""
        self.jobs.start()

    def stop(self) -> None:
        self.cronjobs.stop()
        self.jobs.stop()

    # ---- handlers (cronjob_controller_handler.go) ---------------------------------------------
    def _on_cronjob(self, ev: client_mod.WatchEvent) -> None:
        self._follow_jobs()
        if ev.type == client_mod.EventType.MODIFIED and ev.old is not None:
            if meta.status_only_change(ev.object, ev.old):
                return   # our own status write (its sync already queued what follows)
            old_spec, new_spec = sched.spec(ev.old), sched.spec(ev.object)
            if (old_spec.get("schedule"), old_spec.get("timeZone")) != \
                    (new_spec.get("schedule"), new_spec.get("timeZone")):
                self._schedule_changed(ev.object)
                return
        self.queue.add(meta.key(ev.object))

    def _schedule_changed(self, cj: Obj) -> None:
        """updateCronJob: a new schedule is synced at its next time (UnParseableCronJobSchedule if bad)."""
        try:
            schedule = cron.parse(sched.format_schedule(cj), self.local_zone)
        except cron.CronError:
            self._event(cj, "Warning", "UnParseableCronJobSchedule",
                        f"unparseable schedule for cronjob: {sched.spec(cj).get('schedule')}")
            return
        self.queue.add_after(meta.key(cj), sched.next_schedule_delay(cj, self.clock.now(), schedule))

    def _on_job(self, ev: client_mod.WatchEvent) -> None:
        for obj in (ev.object, ev.old):
            key = _owner_key(obj) if obj is not None else None
            if key:
                self.queue.add(key)

    # ---- sync (cronjob_controller.go) ---------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        ns, _, name = str(key).partition("/")
        stored = self.cronjobs.get(ns, name)
        if stored is None or meta.is_deleting(stored):
            return
        cj = jsoncopy.deep_copy(stored)
        jobs = [j for j in self.jobs.by_index("cronjob", key) if sched.controlled_by(j, cj)]
        requeue, update = self._sync_cronjob(cj, jobs)
        if update:
            try:
                self.client.update_status(cj)
            except errors.NotFound:
                return
        if requeue is not None:
            self.queue.add_after(key, requeue)

    def _sync_cronjob(self, cj: Obj, jobs: list[Obj]) -> tuple[float | None, bool]:
        now = self.clock.now()
        update = self._process_finished_jobs(cj, jobs)
        update = self._process_owned_and_active(cj, jobs) or update
        if sched.spec(cj).get("suspend") is True:
            return None, update
        schedule = self._schedule(cj)
        if schedule is None:
            return None, update
        scheduled, err = sched.next_schedule_time(cj, now, schedule, lambda *a: self._event(cj, *a))
        if err is not None:
            self._event(cj, "Warning", "InvalidSchedule", f"Error getting schedule time: {err}")
            return None, update
        if scheduled is None:
            return sched.next_schedule_delay(cj, now, schedule), update
        name = sched.job_name(cj, scheduled)
        if sched.in_active_list_by_name(cj, meta.namespace(cj), name) or \
                clock_mod.parse_time(sched.status(cj).get("lastScheduleTime")) == scheduled:
            return sched.next_schedule_delay(cj, now, schedule), update
        skip, replaced = self._concurrency_policy(cj)
        update = update or replaced
        if skip:
            return sched.next_schedule_delay(cj, now, schedule), update
        job = self._create_job(cj, scheduled)
        if job is None or sched.in_active_list(cj, meta.uid(job)):
            return sched.next_schedule_delay(cj, now, schedule), update
        status = cj.setdefault("status", {})
        status["active"] = [*sched.active(cj), sched.object_reference(job)]
        status["lastScheduleTime"] = clock_mod.format_time(scheduled)
        return sched.next_schedule_delay(cj, now, schedule), True

    def _schedule(self, cj: Obj) -> cron.Schedule | None:
        """validateTZandSchedule: the parsed schedule, or None (InvalidTimeZone recorded)."""
        tz = sched.spec(cj).get("timeZone")
        if tz is not None and cron.load_location(str(tz)) is None:
            self._event(cj, "Warning", "InvalidTimeZone", f'Invalid time zone "{tz}": unknown time zone {tz}')
            return None
        try:
            return cron.parse(sched.format_schedule(cj, lambda *a: self._event(cj, *a)), self.local_zone)
        except cron.CronError as exc:
            log.info("CronJob %s: unparseable schedule: %s", meta.key(cj), exc)
            return None

    def _process_finished_jobs(self, cj: Obj, jobs: list[Obj]) -> bool:
        update = False
        succeeded, failed = [], []
        for job in jobs:
            finished, phase = sched.is_finished(job)
            if not finished:
                continue
            if sched.in_active_list(cj, meta.uid(job)):
                sched.delete_from_active_list(cj, meta.uid(job))
                self._event(cj, "Normal", "SawCompletedJob", f"Saw completed job: {meta.name(job)} in active, remove")
                update = True
            if phase == batch.JobPhase.COMPLETED:
                finish = ((job.get("status") or {}).get("state") or {}).get("lastTransitionTime")
                last = sched.status(cj).get("lastSuccessfulTime")
                if finish and (last is None or clock_mod.parse_time(finish) > clock_mod.parse_time(last)):
                    cj.setdefault("status", {})["lastSuccessfulTime"] = finish
                    update = True
                succeeded.append(job)
            elif phase == batch.JobPhase.FAILED:
                failed.append(job)
        spec = sched.spec(cj)
        for done, limit in ((succeeded, spec.get("successfulJobsHistoryLimit")),
                            (failed, spec.get("failedJobsHistoryLimit"))):
            if limit is not None and self._remove_oldest(cj, done, int(limit)):
                update = True
        return update

    def _remove_oldest(self, cj: Obj, jobs: list[Obj], keep: int) -> bool:
        update = False
        extra = len(jobs) - keep
        for job in sched.by_creation(jobs)[:max(0, extra)]:
            update = self._delete_job(cj, job) or update
        return update

    def _delete_job(self, cj: Obj, job: Obj) -> bool:
        """deleteJobByClient: delete the vcjob (its pods and PodGroup go with it), drop it from active."""
        try:
            self.client.delete(kinds.JOB, meta.namespace(job), meta.name(job))
        except errors.NotFound:
            pass   # (gone already: as good as deleted)
        except errors.ApiError as exc:
            self._event(cj, "Warning", "FailedDelete", f'Error deleting job "{meta.name(job)}": {exc.message}')
            return False
        sched.delete_from_active_list(cj, meta.uid(job))
        self._event(cj, "Normal", "SuccessfulDelete", f'Deleted job "{meta.name(job)}"')
        return True

    def _process_owned_and_active(self, cj: Obj, jobs: list[Obj]) -> bool:
        """processCtlJobAndActiveJob: owned vcjobs the CronJob does not list (OrphanedJob), listed
        vcjobs that are gone or were replaced by another of the same name (StaleReference)."""
        update = False
        owned = {meta.uid(j) for j in jobs}
        for job in jobs:
            if not sched.in_active_list(cj, meta.uid(job)) and not sched.is_finished(job)[0]:
                try:
                    fresh = self.client.get(kinds.CRONJOB, meta.namespace(cj), meta.name(cj))
                except errors.NotFound:
                    return update
                if sched.in_active_list(fresh, meta.uid(job)):
                    continue
                self._event(cj, "Warning", "OrphanedJob", "Detected orphaned job forgotten or not managed by "
                            f"controller: {meta.name(job)} (UID: {meta.uid(job)})")
        for ref in list(sched.active(cj)):
            if ref.get("uid") in owned:
                continue
            job = self.jobs.get(str(ref.get("namespace") or ""), str(ref.get("name") or ""))
            if job is None:
                self._event(cj, "Warning", "StaleReference",
                            f'Active job "{ref.get("name")}" no longer exists (UID: {ref.get("uid")})')
            elif meta.uid(job) != ref.get("uid"):
                self._event(cj, "Warning", "StaleReference",
                            f'Active job reference "{ref.get("name")}" points to a different UID (expected: '
                            f'{ref.get("uid")}, actual: {meta.uid(job)})')
            else:
                continue
            sched.delete_from_active_list(cj, str(ref.get("uid") or ""))
            update = True
        return update

    def _concurrency_policy(self, cj: Obj) -> tuple[bool, bool]:
        """processConcurrencyPolicy: (skip this run, status changed)."""
        policy, active = sched.spec(cj).get("concurrencyPolicy"), sched.active(cj)
        if policy == batch.ConcurrencyPolicy.FORBID and active:
            self._event(cj, "Warning", "ForbidConcurrent", "Skipping job creation because another job is already "
                        "running")
            return True, False
        if policy != batch.ConcurrencyPolicy.REPLACE or not active:
            return False, False
        self._event(cj, "Warning", "ReplaceConcurrent", "Replacing active job for CronJob")
        update = False
        for ref in active:
            job = self.jobs.get(str(ref.get("namespace") or ""), str(ref.get("name") or ""))
            if job is None:
                self._event(cj, "Warning", "FailedGet", f'Get job: jobs.batch.volcano.sh "{ref.get("name")}" not found')
                raise errors.NotFound(f'jobs.batch.volcano.sh "{ref.get("name")}" not found')
            if not self._delete_job(cj, job):
                raise errors.ApiError(f"could not replace job {meta.namespace(job)}/{meta.name(job)}")
            update = True
        return False, update

    def _create_job(self, cj: Obj, scheduled: _dt.datetime) -> Obj | None:
        try:
            template = sched.job_from_template(cj, scheduled)
        except ValueError as exc:
            self._event(cj, "Warning", "FailedCreate", f"Failed to create job from template: {exc}")
            return None
        try:
            job = self.client.create(template)
        except errors.AlreadyExists:
            return self._existing_job(cj, template)
        except errors.Forbidden as exc:
            if self._namespace_terminating(meta.namespace(cj)):
                self._event(cj, "Warning", "NamespaceTerminating",
                            f"Namespace {meta.namespace(cj)} is terminating, skipping job creation")
                return None
            self._event(cj, "Warning", "FailedCreate", f"Failed to create job: {exc.message}")
            return None
        except errors.Invalid as exc:
            self._event(cj, "Warning", "FailedCreate", f"Failed to create job: {exc.message}")
            return None
        except errors.ApiError as exc:
            self._event(cj, "Warning", "FailedCreate", f"Failed to create job: {exc.message}")
            raise
        self._event(cj, "Normal", "SuccessfulCreate", f"Created job {meta.name(job)} for CronJob {meta.key(cj)}")
        return job

    def _existing_job(self, cj: Obj, template: Obj) -> Obj | None:
        """A vcjob of that name exists: it is this run's if this CronJob controls it and it runs."""
        existing = self.client.get(kinds.JOB, meta.namespace(template), meta.name(template))   # NotFound: retried
        if not sched.controlled_by(existing, cj):
            owner = (meta.controller_ref(existing) or {}).get("name") or "none"
            self._event(cj, "Warning", "ForeignJob",
                        f"Job {meta.name(existing)} exists but is not owned by this CronJob (current owner: {owner})")
            return None
        if sched.is_finished(existing)[0]:
            return None
        return existing

    def _namespace_terminating(self, namespace: str) -> bool:
        try:
            return meta.is_deleting(self.client.get(kinds.NAMESPACE, "", namespace))
        except errors.NotFound:
            return False

    def _event(self, cj: Obj, event_type: str, reason: str, message: str) -> None:
        self.record(cj, event_type, reason, message, COMPONENT)
