"""The three primitives of the vcjob state machine, executed through the Client (Volcano's
`job_controller_actions.go`): KillJob, KillTarget and SyncJob, plus PodGroup and plugin upkeep.

Each primitive takes the job as last read, the Transition `state.decide` chose, and the job's pods
(task -> name -> pod, from the controller's watch cache); it writes pods, the PodGroup, plugin
objects and finally the job status — only when the status differs from the stored one — and
returns the job as written. The phase decision itself is `state.apply`: nothing here decides a
phase, and nothing here reads a pod's state from anywhere but the pods it is given.

Differences from Volcano, on purpose:
- after a kill the counters describe every pod of the job (killed ones as terminating, retained or
  untargeted ones by phase); Volcano counts only pods whose deletion failed, so a Completed job
  shows succeeded 0 (volcano-sh/volcano#4616, fix proposed in PR #5730). No count rule reads the
  counters this changes (`drained` and rule S look at terminating/pending/running only);
- lastTransitionTime and the conditions list move only when the phase transition fires (Volcano
  also moves them on every counter change during SyncJob);
- SyncJob keeps status.runningDuration and any status field it does not manage (Volcano's SyncJob
  rebuilds the status and drops runningDuration);
- the legacy PodGroup name `<job>` is not looked up;
- a job whose volumeClaimName names no PVC waits Pending until that PVC is created (`Context.claim_waits`: the
  controller watches claims), as Volcano's message promises; Volcano's sync returns an error, retried with
  back-off, and after --max-requeue-num retries the job is terminated.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from vclite.api import batch
from vclite.api import kinds
from vclite.api import meta
from vclite.api import scheduling
from vclite.apiserver import events
from vclite.controllers.job import frameworks
from vclite.controllers.job import jobio
from vclite.controllers.job import podgroup
from vclite.controllers.job import pods as pods_mod
from vclite.controllers.job import ssh
from vclite.controllers.job import state
from vclite.controllers.job import status as status_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.lib import jsoncopy

Obj = dict[str, Any]
PodsByTask = Mapping[str, Mapping[str, Obj]]

COMPONENT = "vc-controller-manager"
FAILED_CREATE, FAILED_DELETE = "FailedCreate", "FailedDelete"
POD_GROUP_ERROR = "PodGroupError"   # (Volcano's batch.PodGroupError: the job's PodGroup not created or updated)
POD_GROUP_PENDING = "PodGroupPending"
# pods one SyncJob creates at most: a job of hundreds of pods is created over several syncs (the controller
# syncs it again at once), so a server answers its requests in between (each create is a durable write)
CREATES_PER_SYNC = 16


@dataclasses.dataclass(frozen=True)
class Target:
    """What KillTarget kills: a task, one pod of it, or one partition of it."""

    task_name: str
    pod_name: str = ""
    partition_id: str = ""
    kind: str = "task"  # task | pod | partition


@dataclasses.dataclass
class Context:
    client: Any
    clock: clock_mod.Clock
    # The controller's watch cache of PodGroups by (namespace, name): read-only store objects.
    # None: read them through the client.
    podgroups: Mapping[tuple[str, str], Obj] | None = None
    # PodGroup specs wanted, by job uid: (job generation, priorities, spec), read only
    wanted: dict[str, tuple[Any, tuple, Obj]] = dataclasses.field(default_factory=dict)
    # (namespace, name) of the pods SyncJob is creating right now (it counts them itself)
    creating: set[tuple[str, str]] = dataclasses.field(default_factory=set)
    # state.summarize of each job's spec, by job uid: (job generation, summary)
    summaries: dict[str, tuple[Any, state.SpecSummary]] = dataclasses.field(default_factory=dict)
    # (namespace, claim name) -> keys of the jobs waiting for that PersistentVolumeClaim to be made (create_job_io)
    claim_waits: dict[tuple[str, str], set[str]] = dataclasses.field(default_factory=dict)
    # how Events are recorded (None: written at once; the runtime gives its background recorder)
    record: events.RecordFn | None = None
    # keys of the jobs a SyncJob left pods to create for (CREATES_PER_SYNC): the controller syncs them again
    more: set[str] = dataclasses.field(default_factory=set)

    def __post_init__(self) -> None:
        if self.record is None:
            self.record = events.direct(self.client, self.clock)

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        self.record(obj, type_, reason, message, component=COMPONENT)

    def summary(self, job: Obj) -> state.SpecSummary:
        """state.summarize of the job's spec, computed once per job generation."""
        uid, generation = meta.uid(job), (job.get("metadata") or {}).get("generation")
        hit = self.summaries.get(uid)
        if hit is not None and generation is not None and hit[0] == generation:
            return hit[1]
        if len(self.summaries) > 10_000:
            self.summaries.clear()
        summary = state.summarize(job.get("spec") or {})
        self.summaries[uid] = (generation, summary)
        return summary

    def wanted_podgroup_spec(self, job: Obj, priorities: Mapping[str, int]) -> Obj:
        """podgroup.build(job, priorities)["spec"], computed once per job generation."""
        uid, generation = meta.uid(job), (job.get("metadata") or {}).get("generation")
        prio = tuple(sorted(priorities.items()))
        hit = self.wanted.get(uid)
        if hit is not None and generation is not None and hit[0] == generation and hit[1] == prio:
            return hit[2]
        if len(self.wanted) > 10_000:
            self.wanted.clear()
        spec = podgroup.build(job, priorities)["spec"]
        self.wanted[uid] = (generation, prio, spec)
        return spec


class ActionError(errors.Expected):
    """Some pods could not be created or deleted; the sync is retried (a chore when a ResourceQuota refused every
    one: `waits_on_others`)."""


EXCEEDED_QUOTA = "exceeded quota"   # kube-apiserver's words in a 403 a ResourceQuota gives


# ---- status helpers ----------------------------------------------------------------------------
def _now(ctx: Context) -> str:
    return clock_mod.format_time(ctx.clock.now())


_JOB_PHASES = {str(p): p for p in batch.JobPhase}


def phase_of(job: Obj) -> batch.JobPhase:
    """The job's phase; a job without one (or with one vclite does not know) is Pending, as
    Volcano's NewState defaults it."""
    phase = meta.phase(job)
    return _JOB_PHASES.get(phase, batch.JobPhase.PENDING) if isinstance(phase, str) else batch.JobPhase.PENDING


def _append_condition(status: Obj, phase: str, when: str) -> None:
    conds = [c for c in status.get("conditions") or [] if c.get("status") != phase]
    conds.append({"status": phase, "lastTransitionTime": when})
    status["conditions"] = conds


def _apply_outcome(ctx: Context, job: Obj, status: Obj, t: state.Transition) -> None:
    """Evaluate the transition on `status`'s counters and write its phase/retryCount into `status`."""
    outcome = state.apply(t, phase_of(job), state.counts_of(status), ctx.summary(job))
    if not outcome.changed:
        return
    st = status.setdefault("state", {})
    st["phase"] = str(outcome.phase)
    now = _now(ctx)
    st["lastTransitionTime"] = now
    if outcome.retry_count:
        status["retryCount"] = outcome.retry_count
    _append_condition(status, str(outcome.phase), now)


def write_status(ctx: Context, job: Obj, status: Obj) -> Obj:
    """Store `status` unless it equals the stored one; record an event when the phase changes."""
    if status == (job.get("status") or {}):
        return job
    old_phase = meta.phase(job)
    new = ctx.client.update_status({**job, "status": status})
    new_phase = meta.phase(new)
    if new_phase != old_phase and old_phase:
        kind = "Warning" if new_phase == batch.JobPhase.FAILED else "Normal"
        ctx.event(new, kind, new_phase, f"Job phase changed from {old_phase} to {new_phase}")
    return new


# ---- plugins -----------------------------------------------------------------------------------
def _plugins(job: Obj) -> Mapping[str, list]:
    return (job.get("spec") or {}).get("plugins") or {}


def _cr(status: Obj) -> dict[str, str]:
    return status.setdefault("controlledResources", {})


def _create_or_update(ctx: Context, kind: kinds.Kind, want: Obj) -> None:
    """Volcano's CreateOrUpdateConfigMap / CreateOrUpdateSecret: create, or replace a different `data`."""
    try:
        have = ctx.client.get(kind, meta.namespace(want), want["metadata"]["name"])
    except errors.NotFound:
        try:
            ctx.client.create(want)
        except errors.AlreadyExists:
            pass
        return
    if have.get("data") != want["data"]:
        ctx.client.update({**have, "data": want["data"]})


def _create_or_update_configmap(ctx: Context, job: Obj) -> None:
    _create_or_update(ctx, kinds.CONFIGMAP, pods_mod.svc_configmap(job))


def plugins_on_add(ctx: Context, job: Obj, status: Obj) -> None:
    for name, args in _plugins(job).items():
        key = f"plugin-{name}"
        if name == pods_mod.ENV_PLUGIN:
            _cr(status)[key] = name
        elif name == pods_mod.SVC_PLUGIN and _cr(status).get(key) != name:
            _create_or_update_configmap(ctx, job)
            try:
                ctx.client.create(pods_mod.svc_service(job, args or []))
            except errors.AlreadyExists:
                pass
            _cr(status)[key] = name
        elif name == ssh.NAME and _cr(status).get(key) != name:
            _create_or_update(ctx, kinds.SECRET, ssh.secret(job, args or []))
            _cr(status)[key] = name
        elif name in frameworks.MARKS_CONTROLLED and _cr(status).get(key) != name:
            if name == frameworks.RAY:
                try:
                    ctx.client.create(frameworks.ray_service(job, args or []))
                except errors.AlreadyExists:
                    pass
            _cr(status)[key] = name


def plugins_on_update(ctx: Context, job: Obj) -> None:
    if pods_mod.SVC_PLUGIN in _plugins(job):
        _create_or_update_configmap(ctx, job)


def _delete(ctx: Context, kind: kinds.Kind, namespace: str, name: str) -> None:
    try:
        ctx.client.delete(kind, namespace, name)
    except errors.NotFound:
        pass


def plugins_on_delete(ctx: Context, job: Obj, status: Obj) -> None:
    cr = status.get("controlledResources") or {}
    for name in _plugins(job):
        key = f"plugin-{name}"
        if cr.get(key) != name:
            continue
        if name == pods_mod.SVC_PLUGIN:
            _delete(ctx, kinds.CONFIGMAP, meta.namespace(job), pods_mod.svc_configmap_name(job))
            _delete(ctx, kinds.SERVICE, meta.namespace(job), meta.name(job))
        if name == frameworks.RAY:
            _delete(ctx, kinds.SERVICE, meta.namespace(job), frameworks.ray_service_name(job))
        if name == ssh.NAME:
            _delete(ctx, kinds.SECRET, meta.namespace(job), ssh.secret_name(job))
        if name in pods_mod.IMPLEMENTED_PLUGINS:
            del cr[key]
    if "controlledResources" in status and not cr:
        del status["controlledResources"]


# ---- PodGroup ----------------------------------------------------------------------------------
def _priorities(ctx: Context, job: Obj) -> dict[str, int]:
    wanted = {((t.get("template") or {}).get("spec") or {}).get("priorityClassName")
              for t in (job.get("spec") or {}).get("tasks") or []} - {None, ""}
    if not wanted:
        return {}
    return {meta.name(pc): int(pc.get("value", 0) or 0) for pc in ctx.client.list(kinds.PRIORITYCLASS)
            if meta.name(pc) in wanted}


def get_podgroup(ctx: Context, job: Obj) -> Obj | None:
    """The job's PodGroup (read only), from the watch cache when the context has one."""
    if ctx.podgroups is not None:
        return ctx.podgroups.get((meta.namespace(job), podgroup.name(job)))
    try:
        return ctx.client.get(kinds.PODGROUP, meta.namespace(job), podgroup.name(job))
    except errors.NotFound:
        return None


def ensure_podgroup(ctx: Context, job: Obj) -> None:
    """Volcano's createOrUpdatePodGroup; a write the API refuses is a Warning Event on the job (PodGroupError:
    `Failed to create PodGroup, err: ...`, as initiateJob and syncJob record it) and fails the sync — a retry that
    waits on others when a ResourceQuota refused the create (room only another PodGroup's end gives)."""
    prio = _priorities(ctx, job)
    pg = get_podgroup(ctx, job)
    wanted = ctx.wanted_podgroup_spec(job, prio)
    try:
        if pg is None:
            try:
                ctx.client.create(podgroup.build(job, prio, wanted))
            except errors.AlreadyExists:
                pass
            return
        updated = podgroup.reconcile(pg, job, prio, wanted)
        if updated is not None:
            ctx.client.update(updated)
    except errors.ApiError as exc:
        message = f"Failed to create PodGroup, err: {exc}"
        ctx.event(job, "Warning", POD_GROUP_ERROR, message)
        if isinstance(exc, errors.Forbidden) and EXCEEDED_QUOTA in str(exc):
            raise ActionError(message, waits_on_others=True) from None
        raise


def pending_condition(pg: Obj) -> Obj | None:
    """The PodGroup's latest True condition when it is not Scheduled (SyncJob then records a
    PodGroupPending warning on the job), else None."""
    latest = None
    for cond in (pg.get("status") or {}).get("conditions") or []:
        if cond.get("status") == "True" and (latest is None or (cond.get("lastTransitionTime") or "") >
                                            (latest.get("lastTransitionTime") or "")):
            latest = cond
    if latest is not None and latest.get("type") != scheduling.PodGroupConditionType.SCHEDULED:
        return latest
    return None


def enqueued(pg: Obj | None) -> bool:
    """Whether the scheduler has let the PodGroup in (Inqueue, Running, …: SyncJob creates its pods);
    Unknown is not (its change is a JobUnknown request)."""
    return pg is not None and meta.phase(pg) not in ("", scheduling.PodGroupPhase.PENDING,
                                                     scheduling.PodGroupPhase.UNKNOWN)


def _record_podgroup_event(ctx: Context, job: Obj, pg: Obj) -> None:
    latest = pending_condition(pg)
    if latest is not None:
        ctx.event(job, "Warning", POD_GROUP_PENDING,
                  f"PodGroup {meta.namespace(job)}:{meta.name(job)} {str(latest.get('type', '')).lower()}, "
                  f"reason: {latest.get('message', '')}")


# ---- KillJob / KillTarget ----------------------------------------------------------------------
def _out_of_sync_then_delete(ctx: Context, pod: Obj) -> Exception | None:
    ns, name = meta.namespace(pod), meta.name(pod)
    try:
        ctx.client.patch(kinds.POD, ns, name, {"metadata": {"annotations": {batch.OUT_OF_SYNC_ANNOTATION: "true"}}})
    except errors.NotFound:
        return None
    except errors.ApiError as exc:
        return exc
    try:
        ctx.client.delete(kinds.POD, ns, name)
    except errors.NotFound:
        pass
    except errors.ApiError as exc:
        return exc
    return None


def _partitioned(job: Obj, task_name: str) -> bool:
    """Whether the job's task has a partitionPolicy (Volcano's JobInfo keeps partitions only for such tasks)."""
    return any(t.get("name") == task_name and t.get("partitionPolicy") is not None
               for t in (job.get("spec") or {}).get("tasks") or [])


def _select_targets(job: Obj, pods: PodsByTask, target: Target) -> dict[str, Obj] | None:
    task_pods = dict(pods.get(target.task_name) or {})
    if target.kind == "pod":
        return {target.pod_name: task_pods[target.pod_name]} if target.pod_name in task_pods else {}
    if target.kind == "partition":
        if not _partitioned(job, target.task_name):
            return None   # a task without partitionPolicy has no partitions, whatever its pods' labels say
        chosen = {n: p for n, p in task_pods.items()
                  if meta.labels(p).get(batch.PARTITION_ID) == target.partition_id}
        return chosen or None  # no such partition: Volcano skips the whole action
    return task_pods


def kill(ctx: Context, job: Obj, t: state.Transition, pods: PodsByTask, target: Target | None = None) -> Obj:
    """KillJob (target None: version++, retain phases, PodGroup deleted) or KillTarget."""
    if meta.is_deleting(job):
        return job
    status = jsoncopy.deep_copy(job.get("status") or {})
    everyone = {name: pod for task_pods in pods.values() for name, pod in task_pods.items()}
    if target is None:
        status["version"] = int(status.get("version", 0) or 0) + 1
        retained = state.RETAINED_POD_PHASES[t.retain or state.Retain.NONE]
        victims = {n: p for n, p in everyone.items()
                   if not meta.is_deleting(p) and status_mod.pod_phase(p) not in retained}
    else:
        chosen = _select_targets(job, pods, target)
        if chosen is None:
            return job
        victims = {n: p for n, p in chosen.items() if not meta.is_deleting(p)}
    tally = status_mod.Tally()
    for name, pod in everyone.items():
        if meta.is_deleting(pod):
            tally.add_terminating()
        elif name not in victims:
            tally.add(pod)  # retained or not targeted: counted (Volcano issue #4616 leaves them out)
    failures = []
    for name, pod in sorted(victims.items()):
        err = _out_of_sync_then_delete(ctx, pod)
        if err is None:
            tally.add_terminating()
        else:
            failures.append(f"{name}: {err}")
            tally.add(pod)
    if failures:
        ctx.event(job, "Warning", FAILED_DELETE, f"Error deleting pods: {_go_list(failures)}")
        raise ActionError(f"failed to kill {len(failures)} pods of {len(victims)}")
    status_mod.write_counts(status, tally)
    _apply_outcome(ctx, job, status, t)
    ltt = clock_mod.parse_time((status.get("state") or {}).get("lastTransitionTime"))
    created = clock_mod.parse_time((job.get("metadata") or {}).get("creationTimestamp"))
    if ltt is not None and created is not None:
        status["runningDuration"] = clock_mod.format_duration((ltt - created).total_seconds())
    plugins_on_delete(ctx, job, status)
    try:
        new = write_status(ctx, job, status)
    except errors.NotFound:
        return job
    if target is None:
        _delete(ctx, kinds.PODGROUP, meta.namespace(job), podgroup.name(job))
    return new


# ---- SyncJob -----------------------------------------------------------------------------------
def forwarding(ctx: Context, job: Obj) -> bool:
    """Whether the job's queue dispatches to other clusters (spec.extendClusters; Volcano's syncJob looks it up)."""
    try:
        queue = ctx.client.get(kinds.QUEUE, "", (job.get("spec") or {}).get("queue") or batch.DEFAULT_QUEUE)
    except errors.NotFound:
        return False
    return bool((queue.get("spec") or {}).get("extendClusters"))


def _mark_forwarding(ctx: Context, job: Obj) -> Obj:
    """The job annotated `volcano.sh/job-forwarding: "true"` (before its PodGroup is made, which copies it)."""
    return ctx.client.patch(kinds.JOB, meta.namespace(job), meta.name(job),
                            {"metadata": {"annotations": {batch.JOB_FORWARDING: "true"}}})


def _claim_exists(ctx: Context, namespace: str, name: str) -> bool:
    try:
        ctx.client.get(kinds.PERSISTENTVOLUMECLAIM, namespace, name)
    except errors.NotFound:
        return False
    return True


def create_job_io(ctx: Context, job: Obj, draft: Obj) -> Obj | None:
    """Volcano's createJobIOIfNotExist (jobio.py): each job volume's claim made if it has a volumeClaim and is
    missing, or checked to exist; generated claim names written into the job's spec (one patch, before any pod is
    made, so every pod mounts them); each claim recorded in the draft's controlledResources. Returns the stored
    job; None when a claim it names does not exist: the PVCError Event is recorded and the job noted in
    `ctx.claim_waits`, to be synced again when that claim is made."""
    wanted = jobio.wanted(job)
    if not wanted:
        return job
    namespace = meta.namespace(job)
    for w in wanted:
        if w.spec is not None:
            if not _claim_exists(ctx, namespace, w.name):
                try:
                    ctx.client.create(jobio.claim(job, w.name, w.spec))
                except errors.AlreadyExists:
                    pass
                except errors.ApiError as exc:
                    ctx.event(job, "Warning", jobio.PVC_ERROR, jobio.event_message(str(exc)))
                    # (refused as invalid or over a quota: only a change of the job or the quota lets it in, so
                    # the retry is a chore and a run with nothing else left stops as stuck at once)
                    raise ActionError(f"claim {w.name} not created: {exc}",
                                      waits_on_others=isinstance(exc, (errors.Invalid, errors.Forbidden))) from None
        elif not _claim_exists(ctx, namespace, w.name):
            ctx.event(job, "Warning", jobio.PVC_ERROR, jobio.event_message(jobio.missing_message(w.name)))
            ctx.claim_waits.setdefault((namespace, w.name), set()).add(meta.key(job))
            return None
        _cr(draft)[f"volume-pvc-{w.name}"] = w.name
    named = jobio.named_volumes(job, wanted)
    if named is None:
        return job
    return ctx.client.patch(kinds.JOB, namespace, meta.name(job), {"spec": {"volumes": named}})


def _initiate(ctx: Context, job: Obj) -> tuple[Obj, Obj | None]:
    """First syncs of a job (phase ""/Pending): forwarding mark, init status, plugins' OnJobAdd, its volumes'
    claims (create_job_io), PodGroup. Returns the stored job and a draft of its status (with the plugins'
    controlledResources); no draft when a claim it names is missing (Volcano's initiateJob returns its error
    there: nothing more is done, nothing more written)."""
    if meta.annotations(job).get(batch.JOB_FORWARDING) != "true" and forwarding(ctx, job):
        job = _mark_forwarding(ctx, job)
    if not meta.phase(job):
        status = jsoncopy.deep_copy(job.get("status") or {})
        now = _now(ctx)
        status["state"] = {**(status.get("state") or {}), "phase": str(batch.JobPhase.PENDING),
                           "lastTransitionTime": now}
        min_available = int((job.get("spec") or {}).get("minAvailable", 0) or 0)
        if min_available:
            status["minAvailable"] = min_available
        _append_condition(status, str(batch.JobPhase.PENDING), now)
        job = ctx.client.update_status({**job, "status": status})
    draft = jsoncopy.deep_copy(job.get("status") or {})
    plugins_on_add(ctx, job, draft)
    with_claims = create_job_io(ctx, job, draft)
    if with_claims is None:
        return job, None
    job = with_claims
    ensure_podgroup(ctx, job)
    return job, draft


def _create_pods(ctx: Context, job: Obj, pods: PodsByTask, missing: list[tuple[Obj, int]],
                 tally: status_mod.Tally) -> None:
    if not missing:
        return
    forward = forwarding(ctx, job)
    all_pods = {n: p for task_pods in pods.values() for n, p in task_pods.items()}
    ready: dict[str, bool] = {}
    failures = []
    over_quota: list[bool] = []   # per failure: a ResourceQuota refused it (room only another pod's end gives)
    wanted = []
    for task, index in missing:
        name = task.get("name", "")
        if name not in ready:
            ready[name] = status_mod.dependencies_met(job, task, all_pods)
        if ready[name]:
            if len(wanted) >= CREATES_PER_SYNC:
                ctx.more.add(meta.key(job))   # (the rest in the next sync)
                break
            try:
                wanted.append(pods_mod.build_pod(job, task, index, forward))
            except frameworks.PluginError as exc:   # Volcano: the sync stops before creating any pod
                ctx.event(job, "Warning", FAILED_CREATE, f"Error creating pods: {exc}")
                raise ActionError(str(exc)) from None
    for pod in wanted:
        pod_key = (meta.namespace(job), meta.name(pod))
        ctx.creating.add(pod_key)
        try:
            created = ctx.client.create(pod)
        except errors.AlreadyExists:
            continue  # counted when its watch event arrives
        except errors.ApiError as exc:
            failures.append(f"{pod_key[1]}: {exc}")
            over_quota.append(isinstance(exc, errors.Forbidden) and EXCEEDED_QUOTA in str(exc))
            continue
        finally:
            ctx.creating.discard(pod_key)
        tally.add(created)
    if failures:
        ctx.event(job, "Warning", FAILED_CREATE, f"Error creating pods: {_go_list(failures)}")
        raise ActionError(f"failed to create {len(failures)} pods of {len(wanted)} (first: {failures[0]})",
                          waits_on_others=all(over_quota))


def sync(ctx: Context, job: Obj, t: state.Transition, pods_of: Callable[[Obj], PodsByTask]) -> Obj:
    """SyncJob: PodGroup upkeep; pods only once the PodGroup left Pending; recount; apply `t`."""
    if meta.is_deleting(job):
        return job
    if phase_of(job) == batch.JobPhase.PENDING:
        job, draft = _initiate(ctx, job)
        if draft is None:
            return job   # (it waits for a claim: create_job_io)
        status = draft
    else:
        if meta.annotations(job).get(batch.JOB_FORWARDING) != "true" and forwarding(ctx, job):
            job = _mark_forwarding(ctx, job)   # (its queue named extendClusters since: Volcano's syncJob marks it)
        plugins_on_update(ctx, job)
        ensure_podgroup(ctx, job)
        status = jsoncopy.deep_copy(job.get("status") or {})
    pg = get_podgroup(ctx, job)
    if pg is not None:
        _record_podgroup_event(ctx, job, pg)
    if pg is None or meta.phase(pg) in ("", scheduling.PodGroupPhase.PENDING):
        _apply_outcome(ctx, job, status, t)  # delay pod creation until the scheduler enqueues the group
        return write_status(ctx, job, status)

    pods = pods_of(job)
    tally = status_mod.Tally()
    missing: list[tuple[Obj, int]] = []
    doomed: list[Obj] = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        existing = dict(pods.get(task.get("name", "")) or {})
        for i in range(int(task.get("replicas", 0) or 0)):
            pod = existing.pop(pods_mod.pod_name(meta.name(job), task.get("name", ""), i), None)
            if pod is None:
                missing.append((task, i))
            elif meta.is_deleting(pod):
                tally.add_terminating()
            else:
                if batch.OUT_OF_SYNC_ANNOTATION in meta.annotations(pod):
                    doomed.append(pod)
                tally.add(pod)
        doomed.extend(existing.values())  # beyond replicas
    _create_pods(ctx, job, pods, missing, tally)
    failures = []
    for pod in doomed:
        try:
            ctx.client.delete(kinds.POD, meta.namespace(pod), meta.name(pod))
        except errors.NotFound:
            pass
        except errors.ApiError as exc:
            failures.append(f"{meta.name(pod)}: {exc}")
            continue
        tally.add_terminating()
    if failures:
        ctx.event(job, "Warning", FAILED_DELETE, f"Error deleting pods: {_go_list(failures)}")
        raise ActionError(f"failed to delete {len(failures)} pods")
    status_mod.write_counts(status, tally)
    min_available = int((job.get("spec") or {}).get("minAvailable", 0) or 0)
    if min_available:
        status["minAvailable"] = min_available
    else:
        status.pop("minAvailable", None)
    _apply_outcome(ctx, job, status, t)
    return write_status(ctx, job, status)


def _go_list(items: list[str]) -> str:
    """A list of errors as Volcano's events print one (Go's %+v of a []error: `[a b]`, no quotes)."""
    return "[" + " ".join(items) + "]"
