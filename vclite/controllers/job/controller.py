"""The vcjob controller (Volcano's `pkg/controllers/job`): watch handlers turn API changes into
requests, `sync(key)` resolves each request to an action and executes the lifecycle table.

Watch handlers (`job_controller_handler.go`, §1.3) only record work: they keep a watch cache of
jobs and of the pods each job controls, translate every change into a `policies.Request` appended
to the job's pending list, and enqueue the job key `ns/name`:
- job added -> OutOfSync; job updated -> OutOfSync if spec or phase changed (as the state machine
  reads it: no phase is Pending); a new command annotation, or a new bus.volcano.sh Command whose
  target is the job (commands.py) -> CommandIssued;
- pod added -> PodPending (OutOfSync if marked out-of-sync); pod phase -> Failed: PodFailed with the
  first container's exit code; -> Succeeded and every replica of its task Succeeded: TaskCompleted;
  Running/Pending: TaskFailed when the task's restarts reached its maxRetry, but a transition into
  Running is PodRunning and into Pending is PodPending; otherwise OutOfSync; pod deleted ->
  PodEvicted (OutOfSync if marked out-of-sync or unknown to the cache);
- PodGroup status.phase changed -> a request with event Unknown (phase Unknown) or no event.
Requests that could only make SyncJob repeat itself are not queued (a third of a quick job's syncs):
the PodPending of a pod the sync under way creates and counts (unless a policy acts on PodPending),
an OutOfSync pod change that leaves what SyncJob reads alone (status.sync_view: e.g. a binding),
and a PodGroup moving between two enqueued phases (Inqueue -> Running) with no warning to record.
A finished job's key (Completed/Failed/Terminated: every request ends in KillJob) is queued `later`
(workqueue's second lane), so its clean-up runs as background work, after the jobs it unblocked.

`sync(key)` takes the job's due delayed actions and its pending requests, in order. Each request is
resolved by `policies.apply_policies`; a delayed action becomes a timer (`queue.add_after`) with
Volcano's cancellation rules (a due action is dropped if one that ran before it cancelled it:
of three RestartJobs falling due together one runs); consecutive SyncJob resolutions are executed
once (a SyncJob is a full, idempotent reconcile). `state.decide` picks the table row and `actions` executes it. A sync
whose own write moved the job to another, non-final phase goes on at once with the re-sync that write
requested (`_next_phase_work`), so a quick job's Pending -> Running -> Completed is one sync. A sync
that fails re-queues the unprocessed requests and raises (the runtime retries with back-off); after
MAX_REQUEUE retries the job is terminated, as Volcano's `--max-requeue-num`. A job whose pods a
ResourceQuota refused is also tried again at once when a ResourceQuota of its namespace changes (usage
fell as a pod ended), and its back-off retry is a chore: `vcctl run` with nothing else left that could
give room back stops at once, naming the quota, instead of waiting out the retries. A job whose volumeClaimName
names no PersistentVolumeClaim is not retried: it waits Pending (actions.create_job_io notes it in the context's
`claim_waits`), and is synced again when a claim of that name is made in its namespace (claims are watched for
that only). A finished job's
`ttlSecondsAfterFinished` is the garbage collector's (controllers/garbagecollector.py, Volcano's gc-controller).

Differences from Volcano, on purpose: a command may also arrive as a job annotation (commands.py),
besides Volcano's bus.volcano.sh Command object; a new delayed action for a pod replaces and cancels the previous
one of a different action (Volcano overwrites its record but lets the old timer fire anyway);
requests are processed per job in one sync rather than one queue item each, with consecutive
SyncJobs coalesced.

It must not talk to other components except through the API, and its watch handlers never write.
"""
from __future__ import annotations

from typing import Any

from vclite.api import batch
from vclite.api import bus
from vclite.api import kinds
from vclite.api import meta
from vclite.api import scheduling
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.controllers.job import actions
from vclite.controllers.job import commands
from vclite.controllers.job import policies
from vclite.controllers.job import state
from vclite.controllers.job import status as status_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.lib import workqueue

Obj = dict[str, Any]
Event, Act, PodPhase = batch.Event, batch.Action, status_mod.PodPhase
MAX_REQUEUE = 15
PHASE_STEPS = 4   # phases one sync may move a job through (see _next_phase_work)
_RESYNC = policies.Request(event=Event.OUT_OF_SYNC)
EXECUTE_ACTION, COMMAND_ISSUED = "ExecuteAction", "CommandIssued"


def _rv(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion", "")


def _controlling_job(pod: Obj) -> Obj | None:
    ref = meta.controller_ref(pod)
    if ref and ref.get("kind") == kinds.JOB.kind and ref.get("apiVersion") == kinds.JOB.api_version:
        return ref
    return None


def _exit_code(pod: Obj) -> int | None:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if statuses:
        terminated = (statuses[0].get("state") or {}).get("terminated")
        if terminated is not None:
            return int(terminated.get("exitCode", 0) or 0)
    return None


def _target(action: Act, task: str, pod: str, partition: str) -> actions.Target | None:
    kind = {Act.RESTART_TASK: "task", Act.RESTART_POD: "pod", Act.RESTART_PARTITION: "partition"}.get(action)
    return actions.Target(task, pod, partition, kind) if kind else None


class JobController:
    name = "job-controller"

    def __init__(self, client: Any, clock: clock_mod.Clock, recorder: events.RecordFn | None = None):
        """`recorder`: how Events are recorded (default: written at once; see apiserver/events.py)."""
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock)
        self._podgroups: dict[tuple[str, str], Obj] = {}    # watch cache: (ns, name) -> PodGroup
        self._ctx = actions.Context(client, clock, self._podgroups, record=recorder)
        self._jobs: dict[str, Obj] = {}                     # watch cache: job key -> job
        self._pods: dict[str, dict[str, dict[str, Obj]]] = {}  # watch cache: job key -> task -> pod name -> pod
        self._requests: dict[str, list[policies.Request]] = {}
        self._delayed: dict[str, dict[str, policies.Delayed]] = {}  # job key -> pod name -> delayed action
        self._acting: dict[str, Act] = {}   # job key -> the action a failing sync was executing (_give_up)
        # namespace -> keys of jobs whose pods a ResourceQuota refused: tried again at once when a quota there
        # changes (room given back); their back-off retry is a chore (errors.Expected.waits_on_others)
        self._over_quota: dict[str, set[str]] = {}
        self._subscriptions: list[Any] = []

    # ---- watch handlers (record work only) -------------------------------------------------------
    def start(self) -> None:
        if self._subscriptions:
            return
        self._subscriptions = [self.client.watch(kinds.JOB, self._on_job),
                               self.client.watch(kinds.POD, self._on_pod),
                               self.client.watch(kinds.PODGROUP, self._on_podgroup),
                               self.client.watch(kinds.COMMAND, self._on_command),
                               self.client.watch(kinds.RESOURCEQUOTA, self._on_quota),
                               self.client.watch(kinds.PERSISTENTVOLUMECLAIM, self._on_claim)]
        for pg in self.client.list(kinds.PODGROUP):
            self._podgroups[(meta.namespace(pg), meta.name(pg))] = pg
        for pod in self.client.list(kinds.POD):
            info = self._pod_info(pod)
            if info is not None:
                self._pods.setdefault(info[0], {}).setdefault(info[2], {})[meta.name(pod)] = pod
        for job in self.client.list(kinds.JOB):
            self._on_job(client_mod.WatchEvent(client_mod.EventType.ADDED, kinds.JOB, job, None))
        for cmd in self.client.list(kinds.COMMAND):   # issued while no controller ran: still to be done
            self._on_command(client_mod.WatchEvent(client_mod.EventType.ADDED, kinds.COMMAND, cmd, None))

    def _request(self, key: str, req: policies.Request) -> None:
        self._requests.setdefault(key, []).append(req)
        # A finished job's sync only cleans up, whatever the request (its table rows are all KillJob,
        # keeping finished pods): nothing waits for it, so it runs after the work that moves jobs on.
        job = self._jobs.get(key)
        self.queue.add(key, later=job is not None and actions.phase_of(job) in batch.TERMINAL_PHASES)

    def _on_job(self, ev: client_mod.WatchEvent) -> None:
        job, key = ev.object, meta.key(ev.object)
        if ev.type == client_mod.EventType.DELETED:
            for table in (self._jobs, self._delayed):
                table.pop(key, None)
            issued = [r for r in self._requests.pop(key, []) if r.command is not None]
            if issued:   # still consumed (deleted) although the job is gone, as Volcano's command worker
                self._requests[key] = issued
            return
        old = ev.old
        if old is not None and _rv(old) == _rv(job):
            return
        self._jobs[key] = job
        if old is None or old.get("spec") != job.get("spec") or actions.phase_of(old) != actions.phase_of(job):
            self._request(key, policies.Request(event=Event.OUT_OF_SYNC))
        cmd = commands.requested(job)
        if cmd is not None and (old is None or commands.requested(old) != cmd):
            self._request(key, policies.Request(event=Event.COMMAND_ISSUED))

    def _on_quota(self, ev: client_mod.WatchEvent) -> None:
        """A ResourceQuota changed (its usage fell as a pod ended, its limit rose, it went): the jobs of its
        namespace whose pods a quota refused try again now."""
        for key in sorted(self._over_quota.pop(meta.namespace(ev.object), ())):
            self.queue.add(key)

    def _on_claim(self, ev: client_mod.WatchEvent) -> None:
        """A PersistentVolumeClaim was made (or changed): the jobs waiting for one of that name go on."""
        waits = self._ctx.claim_waits
        if ev.type == client_mod.EventType.DELETED or not waits:
            return
        for key in sorted(waits.pop((meta.namespace(ev.object), meta.name(ev.object)), ())):
            self._request(key, _RESYNC)

    def _on_command(self, ev: client_mod.WatchEvent) -> None:
        cmd = ev.object
        target = bus.target_name(cmd, kinds.JOB)
        if ev.type != client_mod.EventType.ADDED or target is None:
            return
        self._request(f"{meta.namespace(cmd)}/{target}", policies.Request(
            event=Event.COMMAND_ISSUED, command=(meta.name(cmd), bus.action(cmd))))

    def _pod_info(self, pod: Obj) -> tuple[str, str, str, int, str] | None:
        """(job key, job name, task, job version, job uid) of a pod a vcjob controls, else None."""
        ref = _controlling_job(pod)
        ann = meta.annotations(pod)
        if ref is None or batch.JOB_NAME not in ann or batch.TASK_SPEC not in ann:
            return None
        try:
            version = int(ann.get(batch.JOB_VERSION, ""))
        except ValueError:
            return None
        job_name = ann[batch.JOB_NAME]
        return f"{meta.namespace(pod)}/{job_name}", job_name, ann[batch.TASK_SPEC], version, ref.get("uid", "")

    def _task_pods(self, key: str, task: str) -> list[Obj]:
        return list(((self._pods.get(key) or {}).get(task) or {}).values())

    def _pod_event(self, key: str, task: str, pod: Obj, old: Obj) -> tuple[Event, int | None]:
        new_phase, old_phase = status_mod.pod_phase(pod), status_mod.pod_phase(old)
        event, code = Event.OUT_OF_SYNC, None
        job = self._jobs.get(key) or {}
        if new_phase == PodPhase.FAILED and old_phase != PodPhase.FAILED:
            event, code = Event.POD_FAILED, _exit_code(pod)
        elif new_phase == PodPhase.SUCCEEDED:
            if old_phase != PodPhase.SUCCEEDED and status_mod.task_completed(job, task, self._task_pods(key, task)):
                event = Event.TASK_COMPLETED
        elif new_phase in (PodPhase.RUNNING, PodPhase.PENDING):
            if status_mod.task_failed(job, task, self._task_pods(key, task)):
                event = Event.TASK_FAILED
            if old_phase != new_phase:
                event = Event.POD_RUNNING if new_phase == PodPhase.RUNNING else Event.POD_PENDING
        return event, code

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        pod = ev.object
        info = self._pod_info(pod)
        if info is None:
            return
        key, _, task, version, uid = info
        name = meta.name(pod)
        cache = self._pods.setdefault(key, {}).setdefault(task, {})
        out_of_sync = batch.OUT_OF_SYNC_ANNOTATION in meta.annotations(pod)
        code = None
        if ev.type == client_mod.EventType.ADDED:
            cache[name] = pod
            event = Event.OUT_OF_SYNC if out_of_sync else Event.POD_PENDING
            if (meta.namespace(pod), name) in self._ctx.creating and self._counted_by_creator(key, task, name, uid):
                return
        elif ev.type == client_mod.EventType.DELETED:
            known = cache.pop(name, None) is not None
            if not cache:
                self._pods[key].pop(task, None)
                if not self._pods[key]:
                    del self._pods[key]
            event = Event.OUT_OF_SYNC if out_of_sync or not known else Event.POD_EVICTED
        else:
            old = ev.old or {}
            if _rv(old) == _rv(pod):
                return
            cache[name] = pod
            event, code = self._pod_event(key, task, pod, old)
            if out_of_sync:
                event, code = Event.OUT_OF_SYNC, None
            if event == Event.OUT_OF_SYNC and status_mod.sync_view(pod) == status_mod.sync_view(old):
                return   # nothing SyncJob reads changed (e.g. the pod was bound to a node)
        self._request(key, policies.Request(
            event=event, exit_code=code, task_name=task, pod_name=name, job_uid=uid, job_version=version,
            pod_uid=meta.uid(pod), partition_id=meta.labels(pod).get(batch.PARTITION_ID, "")))

    def _on_podgroup(self, ev: client_mod.WatchEvent) -> None:
        pg = ev.object
        pg_key = (meta.namespace(pg), meta.name(pg))
        if ev.type == client_mod.EventType.DELETED:
            self._podgroups.pop(pg_key, None)
        else:
            self._podgroups[pg_key] = pg
        if ev.type != client_mod.EventType.MODIFIED or ev.old is None:
            return
        if meta.phase(pg) == meta.phase(ev.old):
            return
        if actions.enqueued(ev.old) and actions.enqueued(pg) and actions.pending_condition(pg) is None:
            return   # e.g. Inqueue -> Running: SyncJob would do the same as before, and has no warning to record
        job_name = meta.name(pg)
        for ref in meta.owner_references(pg):
            if ref.get("kind") == kinds.JOB.kind:
                job_name = ref.get("name", job_name)
        unknown = meta.phase(pg) == scheduling.PodGroupPhase.UNKNOWN
        self._request(f"{meta.namespace(pg)}/{job_name}",
                      policies.Request(event=Event.JOB_UNKNOWN if unknown else None))

    def _counted_by_creator(self, key: str, task: str, name: str, uid: str) -> bool:
        """A pod SyncJob is creating is counted by that SyncJob: its PodPending request would only
        repeat it, unless a lifecycle policy acts on PodPending (with a timeout)."""
        job = self._jobs.get(key)
        req = policies.Request(event=Event.POD_PENDING, task_name=task, pod_name=name, job_uid=uid)
        return job is not None and policies.apply_policies(job, req) == (Act.SYNC_JOB, None)

    # ---- sync ------------------------------------------------------------------------------------
    def _get(self, key: str) -> Obj | None:
        """The job as the watch cache has it (read only: actions copy what they change)."""
        return self._jobs.get(key)

    def _pods_of(self, job: Obj) -> dict[str, dict[str, Obj]]:
        """The job's pods by task, from the watch cache (only pods controlled by this job's UID)."""
        uid = meta.uid(job)
        out: dict[str, dict[str, Obj]] = {}
        for task, task_pods in (self._pods.get(meta.key(job)) or {}).items():
            mine = {n: p for n, p in task_pods.items() if (_controlling_job(p) or {}).get("uid") == uid}
            if mine:
                out[task] = mine
        return out

    def sync(self, key: Any) -> None:
        key = str(key)
        self._ctx.more.discard(key)
        reqs = self._requests.pop(key, [])
        due = self._due(key)
        work: list[policies.Request | policies.Delayed] = [*due, *reqs]
        for _ in range(PHASE_STEPS):
            before = self._phase(key)
            try:
                self._process(key, work)
            except Exception as exc:
                if getattr(exc, "waits_on_others", False):
                    self._over_quota.setdefault(key.partition("/")[0], set()).add(key)
                if self.queue.num_requeues(key) >= MAX_REQUEUE:
                    self._give_up(key)
                    return
                left = [w for w in work if isinstance(w, policies.Request)] or [_RESYNC]
                self._requests[key] = left + self._requests.get(key, [])
                for d in (w for w in work if isinstance(w, policies.Delayed)):
                    self._delayed.setdefault(key, {}).setdefault(d.pod_name, d)
                raise
            work = self._next_phase_work(key, before)
            if not work:
                break
        self._acting.pop(key, None)
        if key in self._ctx.more:   # (pods left to create: CREATES_PER_SYNC)
            self._ctx.more.discard(key)
            self._request(key, _RESYNC)

    def _phase(self, key: str) -> str | None:
        job = self._jobs.get(key)
        return None if job is None else actions.phase_of(job)

    def _next_phase_work(self, key: str, before: str | None) -> list[policies.Request | policies.Delayed]:
        """The re-sync a job's own phase change requested, taken now (and out of the queue) when that is
        all that is pending and the new phase is not final; else nothing. Volcano's controller re-queues
        the job on its own status update and syncs it in its new phase: this does the same, one sync
        sooner (a quick job goes Pending -> Running -> Completed in one sync, writing both phases)."""
        reqs = self._requests.get(key)
        phase = self._phase(key)
        if not reqs or phase == before or phase is None or phase in batch.TERMINAL_PHASES \
                or any(r != _RESYNC for r in reqs) or self._delayed.get(key):
            return []
        del self._requests[key]
        self.queue.discard(key)
        return list(reqs)

    def _process(self, key: str, work: list[policies.Request | policies.Delayed]) -> None:
        """Execute `work` in order; `work` is consumed from the front as items complete."""
        job = self._get(key)
        if job is None:
            for item in work:   # a Command for a job that is gone is consumed all the same (as Volcano)
                if isinstance(item, policies.Request) and item.command is not None:
                    self._consume_command(key.partition("/")[0], item.command[0])
            work.clear()
            self._delayed.pop(key, None)
            return
        pending_sync = False
        while work and job is not None:
            item = work[0]
            if isinstance(item, policies.Delayed):
                if not self._take_delayed(key, item):
                    work.pop(0)   # cancelled by an action that ran before it (e.g. another fired RestartJob)
                    continue
                job = self._flush(job, pending_sync)
                pending_sync = False
                if job is not None:
                    job = self._run(job, item.action, item.task_name, item.pod_name, item.partition_id)
                work.pop(0)
                continue
            if item.event == Event.COMMAND_ISSUED and item.action is None:
                job = self._flush(job, pending_sync)
                pending_sync = False
                if job is not None:
                    job = self._command(job, item.command)
                work.pop(0)
                continue
            self._cancel_by_request(key, item)
            action, delay = policies.apply_policies(job, item)
            if action == Act.SYNC_JOB and not delay:
                pending_sync = True
                work.pop(0)
                continue
            if pending_sync:
                job, pending_sync = self._flush(job, True), False
                continue  # resolve the same request again against the synced job
            if delay and delay > 0:
                self._delay(key, job, item, action, delay)
            else:
                job = self._run(job, action, item.task_name, item.pod_name, item.partition_id)
            work.pop(0)
        self._flush(job, pending_sync)

    def _flush(self, job: Obj | None, pending_sync: bool) -> Obj | None:
        return self._run(job, Act.SYNC_JOB, "", "", "") if pending_sync and job is not None else job

    def _run(self, job: Obj, action: Act, task: str, pod: str, partition: str) -> Obj | None:
        """Execute `action` on the job as it is now; return the job as written (None: gone)."""
        phase = actions.phase_of(job)
        st = job.get("status") or {}
        self._acting[meta.key(job)] = action
        t = state.decide_for(phase, action, st, lambda: self._ctx.summary(job))
        if action != Act.SYNC_JOB:
            self._ctx.event(job, "Normal", EXECUTE_ACTION, f"Start to execute action {action} ")
        try:
            if t.primitive is state.Primitive.SYNC_JOB:
                new = actions.sync(self._ctx, job, t, self._pods_of)
            elif t.primitive is state.Primitive.KILL_JOB:
                new = actions.kill(self._ctx, job, t, self._pods_of(job))
            else:
                target = _target(action, task, pod, partition) or actions.Target(task)
                new = actions.kill(self._ctx, job, t, self._pods_of(job), target)
        except errors.NotFound:
            return self._get(meta.key(job))
        if action not in policies.INTERNAL_ACTIONS:
            self._cancel_by_action(meta.key(job), action, task, pod, partition)
        return new

    def _command(self, job: Obj, command: tuple[str, str] | None) -> Obj | None:
        """Consume a command (the Command object, else the job's annotation), then run its action."""
        if command is not None:
            name, raw = command
            if not self._consume_command(meta.namespace(job), name):
                return job  # already consumed
        else:
            annotated = commands.requested(job)
            if annotated is None:
                return job  # already consumed
            raw = annotated
            job = self.client.patch(kinds.JOB, meta.namespace(job), meta.name(job), commands.removal_patch())
        action = commands.parse(raw)
        if action is None:
            self._ctx.event(job, "Warning", COMMAND_ISSUED, f"Ignored unknown command {raw!r}")
            return job
        self._ctx.event(job, "Normal", COMMAND_ISSUED, f"Start to execute command {action}, and clean it up "
                        "to make sure executed not more than once.")
        req = policies.Request(event=Event.COMMAND_ISSUED, action=action)
        resolved, _ = policies.apply_policies(job, req)
        return self._run(job, resolved, "", "", "")

    def _consume_command(self, namespace: str, name: str) -> bool:
        """Delete a Command before acting on it, so it runs at most once; False: it was already gone."""
        try:
            self.client.delete(kinds.COMMAND, namespace, name)
        except errors.NotFound:
            return False
        return True

    def _give_up(self, key: str) -> None:
        """Volcano's handleJobError after --max-requeue-num: terminate the job and drop the work."""
        self._requests.pop(key, None)
        action = self._acting.pop(key, Act.SYNC_JOB)
        job = self._get(key)
        if job is None:
            return
        self._ctx.event(job, "Normal", EXECUTE_ACTION, f"Job failed on action {action} for retry limit reached")
        try:
            self._run(job, Act.TERMINATE_JOB, "", "", "")
        except Exception:  # noqa: BLE001 - best effort, as Volcano
            pass

    # ---- delayed actions -------------------------------------------------------------------------
    def _delay(self, key: str, job: Obj, req: policies.Request, action: Act, delay: float) -> None:
        table = self._delayed.setdefault(key, {})
        current = table.get(req.pod_name)
        if current is not None and current.action == action:
            return
        table[req.pod_name] = policies.Delayed(action, req.event, req.task_name, req.pod_name, req.pod_uid,
                                               req.partition_id, self.clock.monotonic() + delay)
        self._ctx.event(job, "Normal", EXECUTE_ACTION,
                        f"Execute action {action} after {clock_mod.format_duration(delay)}")
        self.queue.add_after(key, delay)

    def _due(self, key: str) -> list[policies.Delayed]:
        """The job's delayed actions whose timer has fired, earliest first. They stay in the table until
        each runs (`_take_delayed`), so one that fires first can still cancel the others by its action, as
        Volcano's cleanupDelayActions: of three due RestartJobs only one runs."""
        table = self._delayed.get(key) or {}
        now = self.clock.monotonic() + 1e-9
        return sorted((d for d in table.values() if d.due <= now), key=lambda d: d.due)

    def _take_delayed(self, key: str, d: policies.Delayed) -> bool:
        """Remove fired action `d` from the table to run it; False: it was cancelled or replaced meanwhile."""
        table = self._delayed.get(key) or {}
        if table.get(d.pod_name) is not d:
            return False
        del table[d.pod_name]
        return True

    def _cancel_by_request(self, key: str, req: policies.Request) -> None:
        table = self._delayed.get(key) or {}
        d = table.get(req.pod_name)
        if d is not None and policies.cancelled_by_request(d, req):
            del table[req.pod_name]

    def _cancel_by_action(self, key: str, action: Act, task: str, pod: str, partition: str) -> None:
        table = self._delayed.get(key) or {}
        for name, d in list(table.items()):
            if policies.cancelled_by_action(d, action, task, pod, partition):
                del table[name]

    def delayed_actions(self, key: str) -> list[policies.Delayed]:
        """The delayed actions waiting for a job (for `describe` and tests)."""
        return list((self._delayed.get(key) or {}).values())

