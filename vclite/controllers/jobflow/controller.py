"""The JobFlow controller: create each flow's vcjobs when their dependencies allow, keep the status.

Thin shell around pure parts: `plan` compiles a JobFlow's spec once, `engine.Engine` keeps its run
state incrementally (readiness, loops, retries, conditions, status entries), `objects` builds vcjobs,
`prober` runs http/tcp probe checks on worker threads. A sync applies the vcjob changes seen since
the last sync (the watch handler records their names, and for the runningHistories each version
that brought a new phase with when it was seen: a coalesced sync sees only the latest version), lets
the engine decide, creates and deletes what it says, writes the status if it changed, and applies
`jobRetainPolicy: delete` after success.
It talks to the cluster only through the Client protocol, so it runs unchanged in-process, against
`vcctl server` or against a real cluster. The engine is rebuilt from the JobFlow's status and its
vcjobs whenever the controller has none for it (start, restart, a JobFlow re-created under the same
name), so all it remembers is re-derivable: the controller stays level-triggered.

Triggers (level-triggered; any duplicate or lost event is harmless):
- JobFlow added/updated/deleted -> that JobFlow (its own status writes are ignored).
- any vcjob event for a vcjob a JobFlow controls (controller ownerRef, else the createdByJobFlow
  label) -> that JobFlow, at once when it can decide something (created by someone else, deleted,
  just finished, or a probe target), else coalesced over STATUS_REFRESH seconds (e.g. a finished
  vcjob's later status writes). The creations of the sync under way are observed from what
  `create` returned.
- JobTemplate added -> a fan-out key `JobTemplate:<ns>/<name>`; its sync enqueues every unfinished
  JobFlow of that namespace naming the template.
- PodGroup of a vcjob whose scheduler Unschedulable reason changed -> that vcjob's JobFlow, coalesced:
  a Pending vcjob's condition shows the reason (`waiting.py`).
- ResourceQuota event (watched from the first vcjob the API refused) -> the JobFlows of its namespace
  with a refused vcjob (refusals.py).
- timers: a retry's back-off, a refused vcjob's next try (refusals.py; a chore), an http/tcp probe to
  check again (PROBE_BACKOFF growing to PROBE_MAX), a big flow's coalesced status write, a finished vcjob to delete (jobRetainPolicy: delete) that
  has not shown its runningDuration (DELETE_GRACE).

Cost: a vcjob's change costs the engine's work on that vcjob's flow and the flows reading it (see
engine.py). The status (megabytes at 10,000 jobs: each write assembles it, and in server mode stores and
sends all of it; its readers — the run view, `vcctl jobflow get -w` — re-read it) is written at
once only when the phase changes or something must be recorded before acting (a retry, a creation
failure), otherwise at most every STATUS_WRITE_GAP seconds (BIG_WRITE_GAP from BIG_STATUS entries),
so completions cost in proportion to their dependents.

Decisions beyond Volcano (each fixes a quirk listed in the reference, volcano-jobflow.md §2, §8):
- A missing JobTemplate is not an error loop: the flow shows `JobTemplateNotFound` in its condition at
  once, and the template's creation re-triggers the sync. The Warning event waits, as Volcano's: it is
  recorded once the template has been missing for TEMPLATE_WARNING_DELAY seconds (Volcano warns after
  its 15th rate-limited retry, 5 ms doubling: 163.8 s), so a JobFlow applied just before its templates
  (one file, flow first) records none.
- A JobFlow admission would refuse (it reaches the controller only on a cluster, under `vcctl
  controller`: nothing there runs vclite's admission) creates nothing: phase Failed, condition `spec` with reason
  InvalidJobFlow and admission's messages, one Warning event per generation.
- A generated vcjob rejected by admission (errors.Invalid) can never run: the flow's condition is
  `{phase: Failed, reason: FailedCreate, message: <admission message>}`, a Warning event is recorded
  and the flow fails (the JobFlow too, unless the failure is handled). The same goes for a patch or
  a placeholder that cannot be applied (`InvalidTemplate`).
- A vcjob with the flow's name that this JobFlow did not create blocks that flow visibly
  (`JobAlreadyExists`) instead of silently.
- Deletion: the finalizer `vclite.volcano.sh/jobflow` (objects.FINALIZER) is added on first sync.
  When the JobFlow is deleted its phase becomes Terminating, its vcjobs are deleted, and once none is
  left the finalizer is removed so the store completes the deletion. On a real cluster this means a
  JobFlow can only be deleted while this controller runs (remove the finalizer by hand otherwise).
  As Kubernetes' garbage collector, it deletes only the vcjobs whose ownerReferences still name the
  JobFlow: deleted with propagationPolicy Orphan (`kubectl delete --cascade=orphan`), the vcjobs stay,
  without that reference.
- Succeed and Failed are final: no vcjob is created or re-created afterwards (Volcano re-creates a
  deleted vcjob of a succeeded flow), but the status of remaining jobs keeps being refreshed.
- `jobRetainPolicy: delete` deletes a finished vcjob only once its runningDuration is written (at
  most DELETE_GRACE seconds after it finished), so the status keeps its complete entry.
- retry: the failed vcjob is deleted once its back-off has passed (the attempt is first recorded in
  the status) and created again under the same name when it is gone.

- A vcjob the API refuses for now (403: a ResourceQuota) waits visibly (`CreateRefused`, the quota's
  message) and is tried again when a quota of the namespace changes and on a back-off; refused for
  refusals.GIVE_UP seconds (Volcano's 15 requeues), its flow fails (`FailedCreate`), as vclite's vcjob
  controller terminates a job whose pods stay refused. Volcano drops the key and says nothing. The first
  refusal's time is in the condition (`refusedSince`); the window counts only this controller's run time: a
  controller started again starts a new one (refusals.py), so a long stop never fails a flow by itself.

Other API errors (conflicts, unavailability) are raised after the status is written, so the runtime
re-queues the key with back-off.
"""
from __future__ import annotations

import collections
import datetime as dt
import functools
import logging
from typing import Any, Hashable

from vclite.admission import jobflow as jobflow_admission
from vclite.api import batch, flow, kinds, meta, podfailure
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.apiserver import events
from vclite.controllers.jobflow import engine as engine_mod
from vclite.controllers.jobflow import objects
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import prober as prober_mod
from vclite.controllers.jobflow import refusals as refusals_mod
from vclite.controllers.jobflow import runstate as rs
from vclite.controllers.jobflow import status as status_mod
from vclite.controllers.jobflow import waiting as waiting_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
log = logging.getLogger("vclite.jobflow")
EVENT_SOURCE = "vc-controller-manager"   # the source component of its Events, as Volcano's controllers
TEMPLATE_KEY_PREFIX = "JobTemplate:"
NORMAL, WARNING = "Normal", "Warning"
INVALID = "InvalidJobFlow"   # the reason of a JobFlow admission would have refused (on a cluster)
STATUS_REFRESH = 0.25  # seconds: how stale a JobFlow's view of running jobs may be
# A status is rewritten for a non-decisive change at most every STATUS_WRITE_GAP seconds, or
# BIG_WRITE_GAP once it has BIG_STATUS entries (unless decisive: see _write_now).
STATUS_WRITE_GAP, BIG_STATUS, BIG_WRITE_GAP = 0.05, 2000, 0.5
# vcjobs one sync creates at most (a fan-out in many syncs, not one: each create is a durable write, and a server
# answers its requests between syncs — 200 a sync kept it deaf for 150 ms); only creations count, so
# flows that cannot be created (a JobTemplate missing) never make a sync requeue itself without progress
CREATES_PER_SYNC = 32
PROBE_BACKOFF, PROBE_FACTOR, PROBE_MAX = 0.05, 1.5, 0.5
DELETE_GRACE = 5.0     # seconds a finished vcjob may take to show its runningDuration (jobRetainPolicy: delete)
URGENT_PHASES = batch.FINISHED_PHASES | {batch.JobPhase.TERMINATING}
WARNINGS_PER_REASON = 10   # Warning events a sync records per reason; one more counts the rest
# seconds a JobTemplate is missing before its Warning: Volcano's back-off (5 ms, doubling) over its 15 requeues
TEMPLATE_WARNING_DELAY = 0.005 * (2 ** 15 - 1)


def template_warnings_due(missing: dict[str, dt.datetime], warned: set[str], now: dt.datetime,
                          delay: float = TEMPLATE_WARNING_DELAY) -> tuple[list[str], float | None]:
    """Of the vcjobs whose JobTemplate this sync found missing ({vcjob name: since when it has been
    missing}): those whose Warning is due (missing for `delay` seconds, not `warned` yet), in `missing`
    order, and the seconds until the next one is due (None: no other is waiting)."""
    due, waits = [], []
    for name, since in missing.items():
        if name in warned:
            continue
        left = delay - (now - since).total_seconds()
        if left <= 1e-6:   # (a timer set for exactly then may fire a rounding error early)
            due.append(name)
        else:
            waits.append(left)
    return due, min(waits) if waits else None


def job_event_changes_phase(ev: client_mod.WatchEvent) -> bool:
    """Whether a vcjob's event brings a phase its JobFlow's runningHistories must record (a new vcjob
    counts): the sync that follows may see only a later version."""
    if ev.type == client_mod.EventType.DELETED:
        return False
    return ev.old is None or meta.phase(ev.old) != meta.phase(ev.object) or meta.uid(ev.old) != meta.uid(ev.object)


def job_event_is_urgent(ev: client_mod.WatchEvent, flow_phase: str) -> bool:
    """Whether a vcjob's event must sync its JobFlow at once (else: within STATUS_REFRESH). At once:
    created, deleted or being deleted, just finished (or Terminating), and any change of a finished
    vcjob once its flow has finished (its last status, e.g. the end time, then shows at once)."""
    if ev.type != client_mod.EventType.MODIFIED or ev.old is None or meta.is_deleting(ev.object):
        return True
    phase = meta.phase(ev.object)
    if phase not in URGENT_PHASES:
        return False
    return phase != meta.phase(ev.old) or flow_phase in status_mod.FINAL


def delete_wait(job: Obj, now: dt.datetime) -> float:
    """Seconds `jobRetainPolicy: delete` waits before deleting a vcjob of a succeeded JobFlow (0: now).
    A finished vcjob is kept until its runningDuration is written (by the vcjob controller, just after
    its phase): deleted earlier, the status would never show it nor its endTimestamp. One that is
    still without it DELETE_GRACE seconds after it finished is deleted anyway."""
    status = job.get("status") or {}
    if meta.phase(job) not in batch.FINISHED_PHASES or status.get("runningDuration"):
        return 0.0
    finished = clock_mod.parse_time((status.get("state") or {}).get("lastTransitionTime"))
    if finished is None:
        return 0.0
    return min(DELETE_GRACE, max(0.0, DELETE_GRACE - (now - finished).total_seconds()))


class JobFlowController:
    name = "jobflow-controller"

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock,
                 prober: prober_mod.Prober | None = None, recorder: events.RecordFn | None = None,
                 resume_advice: str | None = None):
        """`recorder`: how Events are recorded (default: written at once; see apiserver/events.py).
        `resume_advice`: what a suspended JobFlow's conditions tell to do where no client can resume it (a run that
        serves no API); None: the command that resumes it, with `resume_flags` (set before the controller starts:
        `-k KUBECONFIG`, the API `vcctl run --listen` serves, whose kubeconfig no client finds by itself)."""
        self.client, self.clock = client, clock
        self.resume_advice, self.resume_flags = resume_advice, ""
        self._record = recorder or events.direct(client, clock)
        self.queue = workqueue.WorkQueue(clock)
        self.templates = informer_mod.Informer(client, kinds.JOBTEMPLATE, self._on_template)   # read-only
        self.jobs = informer_mod.Informer(client, kinds.JOB, self._on_job)  # read-only cache of vcjobs
        self.jobflows = informer_mod.Informer(client, kinds.JOBFLOW, self._on_jobflow)
        # the scheduler's Unschedulable reason of each vcjob's PodGroup, for the per-job conditions
        self.podgroups = informer_mod.Informer(client, kinds.PODGROUP, self._on_podgroup)
        self._waiting = waiting_mod.Index()
        self.prober = prober or prober_mod.Prober(clock)
        self._engines: dict[str, engine_mod.Engine] = {}
        self._dirty: dict[str, set[str]] = collections.defaultdict(set)
        self._waits_changed: dict[str, set[str]] = collections.defaultdict(set)   # JobFlow -> vcjobs: why they wait
        # JobFlow -> the vcjob versions with a new phase since its last sync, with when they were seen
        self._phases: dict[str, list[tuple[Obj, dt.datetime]]] = collections.defaultdict(list)
        # JobFlow -> {vcjob name: its last version} for vcjobs deleted since its last sync: one deleted as
        # soon as it finished (ttlSecondsAfterFinished: 0) is observed finished, then gone
        self._deleted: dict[str, dict[str, Obj]] = collections.defaultdict(dict)
        self._probe_delay: dict[str, float] = {}
        self._template_names: dict[str, tuple[Obj, frozenset[str]]] = {}   # JobFlow key -> (version, names)
        self._template_placeholders: dict[str, tuple[Obj, list[str]]] = {}   # JobTemplate key -> (version, names)
        self._written: dict[str, float] = {}      # JobFlow -> when its status was last written (monotonic)
        self._problems: dict[str, tuple[tuple[str, Any], str]] = {}   # JobFlow -> ((uid, generation), problems)
        # JobFlow -> {vcjob name: (its flow, since when its JobTemplate is missing)}, and those warned about
        self._missing: dict[str, dict[str, tuple[str, dt.datetime]]] = {}
        self._warned: dict[str, set[str]] = {}
        self._creating: set[str] = set()          # names of the vcjobs the sync under way creates
        self._refusals = refusals_mod.Refusals()  # vcjobs the API refused for now (a ResourceQuota)
        self._quota_watch: client_mod.Subscription | None = None   # started at the first refusal
        self._quota_watch_refused = False   # (on a cluster, credentials without list/watch on resourcequotas)
        self._made = 0                            # vcjobs the sync under way created
        self._written_now: Obj | None = None      # the JobFlow as the sync under way wrote it before creating

    # ---- watches: only enqueue ----------------------------------------------------------------
    def start(self) -> None:
        self.templates.start()
        self.jobs.start()
        self.podgroups.start()
        self._waiting.fill(self.podgroups.list())
        self.jobflows.start()
        for jf in self.jobflows.list():
            self.queue.add(meta.key(jf))

    def stop(self) -> None:
        self.jobs.stop()
        self.podgroups.stop()
        self.jobflows.stop()
        self.templates.stop()
        if self._quota_watch is not None:
            self._quota_watch.cancel()
            self._quota_watch = None
        self.prober.close()

    def _on_jobflow(self, ev: client_mod.WatchEvent) -> None:
        """Status-only changes are this controller's own writes: they need no new sync."""
        if ev.type == client_mod.EventType.MODIFIED and ev.old is not None and \
                meta.status_only_change(ev.object, ev.old):
            return
        self.queue.add(meta.key(ev.object))

    def _on_job(self, ev: client_mod.WatchEvent) -> None:
        """A vcjob event that can decide something (job_event_is_urgent), or of a probe's target, syncs
        its JobFlow at once. Other changes (Pending -> Running, task counts) only refresh the status,
        coalesced over STATUS_REFRESH seconds, so a busy flow is not recomputed on every pod change."""
        if ev.type == client_mod.EventType.ADDED and self._creating and meta.name(ev.object) in self._creating:
            return   # a vcjob this sync is creating: the engine observes what create returns
        key_now = objects.jobflow_key_of(ev.object)
        if key_now and job_event_changes_phase(ev):
            self._phases[key_now].append((ev.object, self.clock.now()))
        if key_now and ev.type == client_mod.EventType.DELETED:
            self._deleted[key_now][meta.name(ev.object)] = ev.object
        seen = None
        for obj in (ev.object, ev.old):
            key = key_now if obj is ev.object else objects.jobflow_key_of(obj) if obj else None
            if not key or key == seen:
                continue   # (a vcjob's flow hardly ever changes: its old version names the same one)
            seen = key
            ns, _, name = key.partition("/")
            urgent = job_event_is_urgent(ev, meta.phase(self.jobflows.get(ns, name) or {}))
            self._dirty[key].add(meta.name(obj))
            eng = self._engines.get(key)
            if urgent or (eng is not None and eng.probe_waiters and meta.name(obj) in eng.watched_jobs()):
                self.queue.add(key)
            else:
                self.queue.add_after(key, STATUS_REFRESH)

    def _on_podgroup(self, ev: client_mod.WatchEvent) -> None:
        """A vcjob's PodGroup whose Unschedulable reason changed refreshes its JobFlow's status."""
        changed = self._waiting.update(ev.object, deleted=ev.type == client_mod.EventType.DELETED)
        job = self.jobs.get(*changed) if changed else None
        key = objects.jobflow_key_of(job) if job is not None else None
        if key:
            self._waits_changed[key].add(meta.name(job))
            self.queue.add_after(key, STATUS_REFRESH)

    def _on_quota(self, ev: client_mod.WatchEvent) -> None:
        """A ResourceQuota changed (room given back, a limit raised, deleted): the JobFlows of its namespace
        with a refused vcjob try again at once."""
        for key in self._refusals.in_namespace(meta.namespace(ev.object)):
            self.queue.add(key)

    def _watch_quotas(self) -> None:
        """Follow ResourceQuotas from the first refusal on (a run without one never pays for the watch). On a
        cluster whose credentials may not list them, refused vcjobs are tried on their back-off only."""
        if self._quota_watch is not None or self._quota_watch_refused:
            return
        try:
            self._quota_watch = self.client.watch(kinds.RESOURCEQUOTA, self._on_quota)
        except errors.ApiError as err:
            self._quota_watch_refused = True
            log.warning("cannot watch ResourceQuotas (%s): a vcjob a quota refused is tried again on its back-off "
                        "only, not at once when a quota changes", err)

    def _on_template(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.ADDED:
            self.queue.add(TEMPLATE_KEY_PREFIX + meta.key(ev.object))
        elif ev.type == client_mod.EventType.DELETED:
            self._template_placeholders.pop(meta.key(ev.object), None)

    # ---- sync -----------------------------------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        try:
            self._sync(str(key))
        finally:
            self._creating.clear()

    def _sync(self, key: str) -> None:
        if key.startswith(TEMPLATE_KEY_PREFIX):
            self._fan_out(key[len(TEMPLATE_KEY_PREFIX):])
            return
        ns, _, name = key.partition("/")
        jobflow = self.jobflows.get(ns, name)
        if jobflow is None:
            self._forget(key)
            return
        if meta.is_deleting(jobflow):
            self._forget(key)
            self._terminate(jobflow)
            return
        jobflow = self._ensure_finalizer(jobflow)
        problems = self._spec_problems(key, jobflow)
        if problems:
            self._fail_invalid(jobflow, problems)
            return
        now = self.clock.now()
        eng = self._engine(key, jobflow, now)
        notes: dict[str, status_mod.Note] = {}
        failure: errors.ApiError | None = None
        acts = eng.decide(now)
        tried: dict[str, str] = {}   # vcjob -> its flow: each is tried once a sync (a missing template stays missing)
        self._made, self._written_now = 0, None
        for _ in range(100):   # creating can decide more (an empty fan-out completes, …)
            if self._made >= CREATES_PER_SYNC:
                if acts.create:
                    self.queue.add(key)   # the rest in the next sync: other work (a server's requests) goes between
                break
            # (one tried that waited for an output which came in this very sync — the flow it read was Skipped by
            # what its own template reads — has no note any more: tried again, or nothing would sync it again)
            todo = [i for i in acts.create if i.name not in tried or i.note is None]
            if not todo or failure is not None:
                break
            tried.update((i.name, i.flow) for i in todo)
            failure = self._create(jobflow, eng, todo, notes, now)
            acts = eng.decide(now)
        self._warn_once(jobflow, {n: note for n, note in notes.items()
                                  if note.reason is not status_mod.Reason.TEMPLATE_NOT_FOUND})
        self._warn_missing_templates(key, jobflow, notes, tried, now)
        phase = eng.next_phase()
        if self._write_now(key, eng, jobflow, phase, bool(notes or acts.delete)):
            jobflow = self._write_status(self._written_now or jobflow, eng.status(now))
            self._written[key] = self.clock.monotonic()
        if phase == flow.FlowPhase.SUCCEED and \
                (jobflow.get("spec") or {}).get("jobRetainPolicy") == flow.RetainPolicy.DELETE:
            self._delete_retained(key, jobflow, now)
        for job_name, uid in acts.delete:
            self._delete_attempt(ns, job_name, uid)
        self._schedule(key, eng, acts, now)
        self._schedule_refused(key, phase, now)
        if failure is not None and not isinstance(failure, errors.Forbidden):
            raise failure   # (a refusal is tried again on its own schedule: _schedule_refused)

    def _schedule_refused(self, key: str, phase: str, now: dt.datetime) -> None:
        """The next try of the vcjobs the API refused for now (refusals.py); a chore: alone it moves nothing
        on, so `vcctl run` stops as stuck, naming the quota, when nothing else can give room back."""
        if phase in status_mod.FROZEN:
            self._refusals.forget(key)
            return
        wait = self._refusals.next_try(key, now)
        if wait is not None:
            self.queue.add_after(key, max(0.001, wait), chore=True)

    def _write_now(self, key: str, eng: engine_mod.Engine, jobflow: Obj, phase: str, decisive: bool) -> bool:
        """Write the status in this sync? Always for a decisive change (phase, a retry to record before
        its delete, a creation failure) and once the flow is finished; other changes at most once per
        STATUS_WRITE_GAP (BIG_WRITE_GAP for a big flow): a write assembles the whole status (and in
        server mode stores and sends all of it), and a flow of quick jobs would otherwise rewrite it
        for every job started and finished."""
        if decisive or phase != meta.phase(jobflow) or phase in status_mod.FINAL:
            return True   # (a finished flow's last few changes, e.g. its jobs' end times, at once)
        gap = BIG_WRITE_GAP if eng.size() >= BIG_STATUS else STATUS_WRITE_GAP
        wait = self._written.get(key, float("-inf")) + gap - self.clock.monotonic()
        if wait <= 1e-6:   # (a timer set for exactly then may fire a rounding error early)
            return True
        self.queue.add_after(key, wait)
        return False

    def _engine(self, key: str, jobflow: Obj, now: dt.datetime) -> engine_mod.Engine:
        """The JobFlow's engine, brought up to date with the vcjobs changed since the last sync."""
        eng = self._engines.get(key)
        generation = jobflow.get("metadata", {}).get("generation")
        phases = [(job, at) for job, at in self._phases.pop(key, ()) if objects.belongs_to(job, jobflow)]
        deleted = self._deleted.pop(key, {})
        if eng is None or eng.uid != meta.uid(jobflow) or eng.generation != generation:
            self._dirty.pop(key, None)
            self._waits_changed.pop(key, None)
            plan = plan_mod.compile_spec(jobflow.get("spec"), meta.name(jobflow))
            eng = engine_mod.Engine(jobflow, plan, self._read_output, self._probe, self._read_failure,
                                    functools.partial(self._waiting.reason, meta.namespace(jobflow)),
                                    resume_advice=self.resume_advice, resume_flags=self.resume_flags)
            for job, at in phases:
                eng.record(job, at)
            eng.load(self._jobs_of(jobflow), now)
            self._engines[key] = eng
            return eng
        eng.set_meta(jobflow)
        for job, at in phases:
            eng.record(job, at)
        names = sorted(self._dirty.pop(key, ()))
        for i, name in enumerate(names):
            job = self.jobs.get(eng.ns, name)
            last = deleted.get(name)
            try:
                if job is None and last is not None and objects.belongs_to(last, jobflow):
                    eng.observe(name, last, now)     # the version it was deleted in (maybe finished), then gone
                eng.observe(name, job if job is not None and objects.belongs_to(job, jobflow) else None, now)
            except errors.ApiError:   # (reading an output: the sync is tried again, these vcjobs observed then)
                self._dirty[key].update(names[i:])
                self._deleted[key].update({n: deleted[n] for n in names[i:] if n in deleted})
                raise
        for name in self._waits_changed.pop(key, ()):
            eng.waiting_changed(name)
        return eng

    def _spec_problems(self, key: str, jobflow: Obj) -> str:
        """Admission's verdict on the spec ("" if valid), once per generation. Where vclite admits
        JobFlows (embedded, server) an invalid one never gets here; on a cluster without vclite's
        admission it does, and must fail visibly rather than be retried forever."""
        version = (meta.uid(jobflow), (jobflow.get("metadata") or {}).get("generation"))
        cached = self._problems.get(key)
        if cached is None or cached[0] != version:
            errs = jobflow_admission.validate_spec(jobflow.get("spec"), meta.name(jobflow),
                                                   meta.namespace(jobflow) or "default")
            cached = self._problems[key] = (version, "; ".join(str(e) for e in errs))
        return cached[1]

    def _fail_invalid(self, jobflow: Obj, problems: str) -> None:
        """Phase Failed with an InvalidJobFlow condition (key "spec") and one Warning event."""
        condition = {"phase": str(flow.FlowPhase.FAILED), "reason": INVALID, "message": problems}
        status = jobflow.get("status") or {}
        if meta.phase(jobflow) == flow.FlowPhase.FAILED and (status.get("conditions") or {}).get("spec") == condition:
            return
        self.client.update_status({**jobflow, "status": {   # (first: a Conflict records nothing)
            **status, "state": {"phase": str(flow.FlowPhase.FAILED)},
            "conditions": {**(status.get("conditions") or {}), "spec": condition}}})
        self._record(jobflow, WARNING, INVALID, problems, component=EVENT_SOURCE)

    def _forget(self, key: str) -> None:
        self._problems.pop(key, None)
        self._engines.pop(key, None)
        self._written.pop(key, None)
        self._dirty.pop(key, None)
        self._waits_changed.pop(key, None)
        self._phases.pop(key, None)
        self._deleted.pop(key, None)
        self._probe_delay.pop(key, None)
        self._template_names.pop(key, None)
        self._missing.pop(key, None)
        self._warned.pop(key, None)
        self._refusals.forget(key)

    def _fan_out(self, template_key: str) -> None:
        ns, _, template = template_key.partition("/")
        for jf in self.jobflows.list(ns):
            if meta.phase(jf) in status_mod.FINAL or meta.is_deleting(jf):
                continue
            if template in self._templates_of(jf):
                self.queue.add(meta.key(jf))

    def _templates_of(self, jobflow: Obj) -> frozenset[str]:
        """The template names a JobFlow uses (flows and onExit), read once per stored version: a
        flow of n templates being applied would otherwise cost n² here."""
        key = meta.key(jobflow)
        seen = self._template_names.get(key)
        if seen is None or seen[0] is not jobflow:
            spec = jobflow.get("spec") or {}
            names = {f.get("name") for f in spec.get("flows") or [] if isinstance(f, dict)}
            names.add(spec.get("onExit"))
            seen = self._template_names[key] = (jobflow, frozenset(n for n in names if isinstance(n, str)))
        return seen[1]

    def _jobs_of(self, jobflow: Obj) -> list[Obj]:
        found = self.jobs.list(meta.namespace(jobflow), labels=objects.flow_selector(jobflow))
        return [j for j in found if objects.belongs_to(j, jobflow)]

    def _ensure_finalizer(self, jobflow: Obj) -> Obj:
        finalizers = jobflow.get("metadata", {}).get("finalizers") or []
        if objects.FINALIZER in finalizers:
            return jobflow
        updated = {**jobflow, "metadata": {**jobflow["metadata"], "finalizers": [*finalizers, objects.FINALIZER]}}
        return self.client.update(updated)

    # ---- creating ---------------------------------------------------------------------------------
    def _create(self, jobflow: Obj, eng: engine_mod.Engine, todo: list[engine_mod.Inst],
                notes: dict[str, status_mod.Note], now: dt.datetime) -> errors.ApiError | None:
        """Create the vcjobs of `todo`; notes record what stopped one. Returns an error to re-raise."""
        ns = meta.namespace(jobflow)
        templates: dict[str, Obj | None] = {}
        built: list[tuple[engine_mod.Inst, Obj]] = []
        moment, tried = list(todo), set()
        while moment:
            tried.update(i.name for i in moment)   # (each built at most once a sync: the loop always ends)
            for inst in moment:
                if self._made + len(built) >= CREATES_PER_SYNC:
                    break         # (the sync requeues itself: the others are tried in the next one)
                if inst.flow not in templates:
                    templates[inst.flow] = self._template(ns, inst.flow)
                template = templates[inst.flow]
                if template is None:
                    missing = f'JobTemplate "{inst.flow}" not found'
                    self._note(eng, inst, notes, status_mod.Note(batch.JobPhase.PENDING,
                                                                 status_mod.Reason.TEMPLATE_NOT_FOUND, missing))
                    continue
                job = self._build(jobflow, eng, template, inst, notes)
                if job is not None:
                    built.append((inst, job))
            # Every vcjob of this moment is built before any is created: a flow Skipped by what its template reads
            # may leave a failure unhandled (a vcjob refused as built fails its flow), and that failure wins over
            # the starts of the same moment (the docs) — also what building decided (a flow handling the refused
            # vcjob's failure starts, a vcjob whose output came is made, each maybe Skipped by what its template
            # reads): those are built too, before any is created.
            eng.built(now)
            moment = [i for i in eng.to_build() if i.name not in tried and i.note is None] \
                if self._made + len(built) < CREATES_PER_SYNC else []
        self._store_failure_items(jobflow, eng, [inst for inst, _ in built], now)
        for inst, job in built:
            if not eng.still_to_create(inst):
                continue
            deadline = eng.attempt_deadline(inst, now)
            if deadline is not None:
                job = objects.with_active_deadline(job, deadline)
            self._creating.add(inst.name)
            try:
                created = self.client.create(job)
            except errors.AlreadyExists:
                existing = self.jobs.get(ns, inst.name) or self._existing(ns, inst.name)
                if existing is not None and objects.belongs_to(existing, jobflow):
                    self._refusals.created(meta.key(jobflow), inst.name)
                    eng.observe(inst.name, existing, now)
                else:
                    self._note(eng, inst, notes, status_mod.Note(
                        batch.JobPhase.PENDING, status_mod.Reason.JOB_EXISTS,
                        f'a Job named "{inst.name}" already exists and was not created by this JobFlow'))
            except errors.Invalid as err:
                self._note(eng, inst, notes, status_mod.Note(batch.JobPhase.FAILED, status_mod.Reason.FAILED_CREATE,
                                                             err.message))
                return None   # the flow fails: create nothing more in this sync
            except errors.Forbidden as err:   # (over a ResourceQuota of the namespace: it may have room later)
                first = refusals_mod.stored_since(
                    ((jobflow.get("status") or {}).get("conditions") or {}).get(inst.name), now)
                refusal = self._refusals.refused(meta.key(jobflow), inst.name, now, first)
                if refusals_mod.verdict(refusal, now)[0]:   # refused for too long: the flow fails
                    self._refusals.created(meta.key(jobflow), inst.name)   # (nothing more to try)
                    self._note(eng, inst, notes, status_mod.Note(
                        batch.JobPhase.FAILED, status_mod.Reason.FAILED_CREATE,
                        refusals_mod.give_up_message(err.message, refusal)))
                    return None
                self._note(eng, inst, notes, status_mod.Note(
                    batch.JobPhase.PENDING, status_mod.Reason.CREATE_REFUSED, err.message,
                    clock_mod.format_micro_time(refusal.first_refused)))
                self._watch_quotas()
                return err    # nothing more this sync; the status and a Warning say why meanwhile
            except errors.ApiError as err:
                return err    # retried with back-off by the runtime
            else:
                self._made += 1
                self._refusals.created(meta.key(jobflow), inst.name)
                eng.observe(inst.name, created, now)
                self._record(jobflow, NORMAL, "Created", f"create a job named {inst.name}!", component=EVENT_SOURCE)
        return None

    def _store_failure_items(self, jobflow: Obj, eng: engine_mod.Engine, insts: list[engine_mod.Inst],
                             now: dt.datetime) -> None:
        """The exit handler looping over `{{workflow.failures}}`: how many items it has is in the stored status
        before a vcjob of it is made. A controller started again takes the count from there (engine
        `_failure_items`): the failures are settled only after its load, and the handler's vcjobs a crash left
        (one sync makes at most CREATES_PER_SYNC, a crash may come after any) may be fewer than its items."""
        base = self._written_now or jobflow
        conditions = (base.get("status") or {}).get("conditions") or {}
        for f in {i.flow for i in insts if eng.plan.flows[i.flow].over_failures}:
            if (conditions.get(eng.key(f)) or {}).get("items") != len(eng.flows[f].insts):
                self._written_now = self._write_status(base, eng.status(now))
                self._written[meta.key(jobflow)] = self.clock.monotonic()
                return

    def _build(self, jobflow: Obj, eng: engine_mod.Engine, template: Obj, inst: engine_mod.Inst,
               notes: dict[str, status_mod.Note]) -> Obj | None:
        d = eng.plan.flows[inst.flow]
        values = None
        defined = eng.placeholder_context(inst.flow)
        names = [n for n in self._placeholders_of(template) if defined(n)]   # (other text is left as written)
        if d.patch:
            names = sorted({*names, *objects.placeholders(d.patch)})
        if names:
            values, waiting = eng.values_for(inst, names)
            if values is None and not waiting:
                return None    # it reads the output of a flow that did not complete: Skipped
            if values is None:
                deadlock = eng.output_deadlock(inst, waiting)
                if deadlock is not None:
                    self._note(eng, inst, notes, status_mod.Note(
                        batch.JobPhase.FAILED, status_mod.Reason.INVALID_TEMPLATE, f"flow {inst.flow}: {deadlock}"))
                else:
                    eng.wait_for_output(inst, waiting)
                return None
        item = eng.item_of(inst) if d.fanout else rs.MISSING
        try:
            return objects.build_instance(jobflow, template, inst.flow, inst.name, d.patch, values, defined,
                                          objects.NO_ITEM if item is rs.MISSING else item)
        except ValueError as err:
            self._note(eng, inst, notes, status_mod.Note(batch.JobPhase.FAILED, status_mod.Reason.INVALID_TEMPLATE,
                                                         f"flow {inst.flow}: {err}"))
            return None

    def _placeholders_of(self, template: Obj) -> list[str]:
        """objects.placeholders of a JobTemplate's spec, read once per stored version (a walk of the
        whole spec for each vcjob created from it, otherwise)."""
        key = meta.key(template)
        seen = self._template_placeholders.get(key)
        if seen is None or seen[0] is not template:
            seen = self._template_placeholders[key] = (template, objects.placeholders(template.get("spec") or {}))
        return seen[1]

    def _note(self, eng: engine_mod.Engine, inst: engine_mod.Inst, notes: dict[str, status_mod.Note],
              note: status_mod.Note) -> None:
        notes[inst.name] = note
        eng.create_failed(inst, note)

    def _template(self, ns: str, name: str) -> Obj | None:
        """The JobTemplate as the watch cache has it (read only: build_job copies its spec)."""
        return self.templates.get(ns, name)

    def _existing(self, ns: str, name: str) -> Obj | None:
        try:
            return self.client.get(kinds.JOB, ns, name)
        except errors.NotFound:
            return None

    def _warn_once(self, jobflow: Obj, notes: dict[str, status_mod.Note]) -> None:
        """A Warning event per note, unless the previous status already reported the same thing."""
        previous = (jobflow.get("status") or {}).get("conditions") or {}
        by_reason: dict[str, list[str]] = {}
        for job_name, note in notes.items():
            before = previous.get(job_name) or {}
            if (before.get("reason"), before.get("message")) != (note.reason, note.message):
                by_reason.setdefault(str(note.reason), []).append(note.message)
        for reason, messages in by_reason.items():
            self._warn(jobflow, reason, messages)

    def _warn(self, jobflow: Obj, reason: str, messages: list[str]) -> None:
        """Warning events: at most WARNINGS_PER_REASON, then one that counts the others (10,000 flows
        whose templates are not there make one screenful, not 10,000 events)."""
        for message in messages[:WARNINGS_PER_REASON]:
            self._record(jobflow, WARNING, reason, message, component=EVENT_SOURCE)
        if len(messages) > WARNINGS_PER_REASON:
            self._record(jobflow, WARNING, reason, f"and {len(messages) - WARNINGS_PER_REASON} more vcjobs: "
                         f"{reason} (each flow's status.conditions says why)", component=EVENT_SOURCE)

    def _warn_missing_templates(self, key: str, jobflow: Obj, notes: dict[str, status_mod.Note],
                                flows: dict[str, str], now: dt.datetime) -> None:
        """The JobTemplateNotFound Warning of a vcjob once its template has been missing for
        TEMPLATE_WARNING_DELAY seconds (template_warnings_due), once; a timer (a chore: it moves nothing
        on) brings the sync back then. A template that is there again starts over. `flows`: the flow of
        each vcjob tried in this sync."""
        absent = [n for n, note in notes.items() if note.reason is status_mod.Reason.TEMPLATE_NOT_FOUND]
        if not absent and key not in self._missing:
            return
        known = self._missing.setdefault(key, {})
        warned = self._warned.setdefault(key, set())
        ns = meta.namespace(jobflow)
        for name, (flow_name, _) in list(known.items()):
            if name not in notes and self._template(ns, flow_name) is not None:
                del known[name]
                warned.discard(name)
        if not known and not absent:
            self._missing.pop(key, None)
            self._warned.pop(key, None)
            return
        missing = {name: known.setdefault(name, (flows.get(name, ""), now))[1] for name in absent}
        due, wait = template_warnings_due(missing, warned, now)
        if due:
            warned.update(due)
            self._warn(jobflow, str(status_mod.Reason.TEMPLATE_NOT_FOUND), [notes[n].message for n in due])
        if wait is not None:
            self.queue.add_after(key, wait, chore=True)

    # ---- outputs and probes (called by the engine) --------------------------------------------------
    def _read_output(self, inst: engine_mod.Inst) -> str | None:
        """The termination message of the instance's designated pod ("" if none, or gone)."""
        if inst.job is None:
            return ""
        try:
            pod = self.client.get(kinds.POD, meta.namespace(inst.job), objects.output_pod(inst.job))
        except errors.NotFound:
            return ""
        return objects.termination_message(pod)

    def _read_failure(self, inst: engine_mod.Inst) -> str | None:
        """Why the instance's failed vcjob failed, from its pods (podfailure.job_failure: the first to fail, its
        container's exit code, reason and termination message), read by name as Volcano names them
        (objects.pod_names: at most objects.PODS_READ); "" when nothing says why (its pods are gone); None when
        the API did not answer (asked again when the failure is next read: the engine's decisions never wait)."""
        job = inst.job
        if job is None:
            return ""
        pods = []
        for name in objects.pod_names(job):
            try:
                pod = self.client.get(kinds.POD, meta.namespace(job), name)
            except errors.NotFound:
                continue
            except errors.ApiError as err:
                log.warning("cannot read pod %s/%s to tell why vcjob %s failed: %s", meta.namespace(job), name,
                            meta.name(job), err)
                return None
            if objects.pod_of(pod, job):
                pods.append(pod)
        return podfailure.job_failure(job, pods)

    def _probe(self, job: Obj, entry: plan_mod.ProbeEntry) -> bool | None:
        """Whether every pod of the entry's task answers. False: a pod is not running yet (its change
        will wake us); None: a check is under way or failed (ask again after a back-off)."""
        task = next((t for t in (job.get("spec") or {}).get("tasks") or [] if t.get("name") == entry.task), None)
        if task is None:
            return False
        results = []
        for i in range(int(task.get("replicas", 1) or 0)):
            try:
                pod = self.client.get(kinds.POD, meta.namespace(job), f"{meta.name(job)}-{entry.task}-{i}")
            except errors.NotFound:
                return False
            status = pod.get("status") or {}
            if status.get("phase") != "Running" or not status.get("podIP"):
                return False
            results.append(self.prober.check(prober_mod.Target(entry.kind, status["podIP"], entry.port,
                                                               entry.path, entry.header)))
        return True if results and all(r is True for r in results) else None

    def _schedule(self, key: str, eng: engine_mod.Engine, acts: engine_mod.Actions, now: dt.datetime) -> None:
        if acts.wake_at is not None:
            self.queue.add_after(key, max(0.001, (acts.wake_at - now).total_seconds()))
        if acts.probing and not eng.frozen:
            delay = self._probe_delay.get(key, PROBE_BACKOFF)
            self._probe_delay[key] = min(delay * PROBE_FACTOR, PROBE_MAX)
            self.queue.add_after(key, delay)
        else:
            self._probe_delay.pop(key, None)

    # ---- writing --------------------------------------------------------------------------------------
    def _write_status(self, jobflow: Obj, new_status: Obj) -> Obj:
        if new_status == jobflow.get("status"):
            return jobflow
        return self.client.update_status({**jobflow, "status": new_status})

    def _with_waiting_reasons(self, jobflow: Obj, new_status: Obj) -> Obj:
        """Pending vcjobs' conditions with their PodGroup's Unschedulable reason (waiting.py), for a status
        computed without the engine (whose conditions carry them: Engine.waiting)."""
        ns, conditions = meta.namespace(jobflow), new_status.get("conditions") or {}
        jobs = [self.jobs.get(ns, name) for name in self._waiting.waiting_jobs(ns) if name in conditions]
        mine = [j for j in jobs if j is not None and objects.belongs_to(j, jobflow)]
        return waiting_mod.annotate(new_status, self._waiting.reasons(mine))

    def _delete_attempt(self, ns: str, name: str, uid: str) -> None:
        """Delete the failed attempt `uid` of a vcjob being retried (not a newer one of the same name)."""
        job = self.jobs.get(ns, name)
        if job is None or meta.uid(job) != uid or meta.is_deleting(job):
            return
        try:
            self.client.delete(kinds.JOB, ns, name)
        except errors.NotFound:
            pass

    def _delete_retained(self, key: str, jobflow: Obj, now: dt.datetime) -> None:
        """`jobRetainPolicy: delete` after success: each vcjob once its last status is recorded (see
        delete_wait); the vcjob's next change, or a timer, brings the others back."""
        ready, waits = [], []
        for job in self._jobs_of(jobflow):
            wait = delete_wait(job, now)
            if wait > 0:
                waits.append(wait)
            else:
                ready.append(job)
        self._delete_jobs(ready)
        if waits:
            self.queue.add_after(key, min(waits))

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
        """Terminating: delete the vcjobs the deletion takes (objects.collected_with: none when the
        JobFlow is deleted with propagationPolicy Orphan); when none is left, drop our finalizer."""
        finalizers = jobflow.get("metadata", {}).get("finalizers") or []
        if objects.FINALIZER not in finalizers:
            return
        jobs = self._jobs_of(jobflow)
        status = status_mod.compute(jobflow, jobs, self.clock.now())
        jobflow = self._write_status(jobflow, self._with_waiting_reasons(jobflow, status))
        self._delete_jobs(objects.collected_with(jobflow, jobs))
        if objects.collected_with(jobflow, self._jobs_of(jobflow)):
            return   # the vcjobs' DELETED events bring us back
        remaining = [f for f in finalizers if f != objects.FINALIZER]
        self.client.update({**jobflow, "metadata": {**jobflow["metadata"], "finalizers": remaining}})
