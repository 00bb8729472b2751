"""What a session writes back: PodGroup phase, counts and conditions, and Queue `allocated`.

Phase at session close (Volcano session.go jobStatus, §2 "Phase computation"):
- Unknown if the job has Running tasks and an Unschedulable=True condition written this session;
- scheduled = #{Running, Bound, Failed, Succeeded} + #Releasing tasks on a node; scheduled ≥
  minMember -> Completed if every scheduled task finished (Succeeded/Failed), else Running (so a
  PodGroup of minMember 0 with nothing placed is Completed, as Volcano's: 0 >= 0 and 0 == 0);
  with `binding_scheduled` (a shell that applies the session's binds right after it, as the
  embedded one does), tasks bound by this session (Binding) count as scheduled too, so the
  PodGroup is Running after the session that placed its gang rather than after the next one;
- else Pending, unless the phase is Inqueue (only enqueue moves Pending -> Inqueue).
Conditions are upserted by type. A condition whose type, status, reason and message are
unchanged keeps its old lastTransitionTime and transitionID, so a status differs from the stored
one only when something a user can see changed: the shell writes nothing otherwise.

A job left waiting (Unschedulable=True this session) also tells each of its pods still to place why,
as Volcano's cache does (RecordJobStatusEvent, taskUnschedulable): a PodScheduled=False condition
with reason Unschedulable — or Schedulable for a task that fit, its gang short — and the message
of `task_scheduling_reason` (the job's FitError where it has none of its own), written only when it
changed (podConditionHaveUpdate).

Must not: decide scheduling; it only derives and compares statuses.
"""
from __future__ import annotations

import enum
import functools
from typing import Any

import numpy as np

from vclite.api import resources, scheduling
from vclite.lib import jsoncopy
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import jobs as jobs_mod
from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]
TaskStatus = tasks_mod.TaskStatus
Phase = scheduling.PodGroupPhase
CondType = scheduling.PodGroupConditionType


class Reason(enum.StrEnum):
    """Condition reasons vclite adds to Volcano's (scheduling.ConditionReason)."""
    QUEUE_NOT_OPEN = "QueueNotOpen"
    NOT_ENQUEUEABLE = "NotEnqueueable"
    GANG_READY = "tasks in gang are ready to be scheduled"   # Volcano's Scheduled reason, verbatim


_IDENTITY = ("type", "status", "reason", "message")
POD_SCHEDULED = "PodScheduled"
POD_SCHEDULABLE, POD_UNSCHEDULABLE = jobs_mod.POD_SCHEDULABLE, jobs_mod.POD_UNSCHEDULABLE
ALL_NODES_UNAVAILABLE = "all nodes are unavailable"   # Volcano's AllNodeUnavailableMsg
WAITING_TASKS = (TaskStatus.ALLOCATED, TaskStatus.PENDING, TaskStatus.PIPELINED)


def base_error_message(job: jobs_mod.JobInfo) -> str:
    """What a waiting pod without a message of its own is told (cache.RecordJobStatusEvent's baseErrorMessage):
    the job's FitError, else Volcano's default."""
    return job.fit_error() or ALL_NODES_UNAVAILABLE


def unschedulable_event(job: jobs_mod.JobInfo) -> str:
    """The message of the Warning Event `Unschedulable` on a waiting job's PodGroup, in Volcano's words
    (cache.RecordJobStatusEvent): `<pending tasks>/<tasks> tasks in gang unschedulable: <FitError>` —
    the count is the job's Pending tasks, where the gang's condition counts the tasks short of minAvailable.
    A reason an action gave for the whole job (enqueue, topology) is FitError's origin reason (JobFitErrors)."""
    pending = len(job.index.get(TaskStatus.PENDING) or ())
    return f"{pending}/{len(job.tasks)} tasks in gang unschedulable: {job.fit_error()}"


def task_scheduling_reason(job: jobs_mod.JobInfo, task: tasks_mod.TaskInfo, base: str) -> tuple[str, str, str]:
    """(reason, message, nominated node) of a waiting task's PodScheduled=False condition: Volcano's
    TaskSchedulingReason (JobInfo.task_scheduling_reason), `base` (base_error_message) where its message is
    empty, as RecordJobStatusEvent does."""
    reason, message, nominated = job.task_scheduling_reason(task)
    return reason, message or base, nominated


def pod_scheduled_differs(pod: Obj, reason: str, message: str, nominated: str = "") -> bool:
    """Whether the pod's PodScheduled condition is not already False with this reason and message, or
    (a node to nominate) its status.nominatedNodeName is another."""
    status = pod.get("status") or {}
    if nominated and status.get("nominatedNodeName") != nominated:
        return True
    for c in status.get("conditions") or []:
        if c.get("type") == POD_SCHEDULED:
            return not (c.get("status") == "False" and c.get("reason") == reason and c.get("message") == message)
    return True


def pod_unscheduled_conditions(pod: Obj, reason: str, message: str, now: str) -> list[Obj]:
    """The pod's conditions with PodScheduled=False (reason, message) upserted in place; its
    lastTransitionTime kept while it stays False."""
    out, found = [], False
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == POD_SCHEDULED:
            found = True
            c = {"type": POD_SCHEDULED, "status": "False", "lastProbeTime": None,
                 "lastTransitionTime": c.get("lastTransitionTime") if c.get("status") == "False" else now,
                 "reason": reason, "message": message}
        out.append(c)
    if not found:
        out.append({"type": POD_SCHEDULED, "status": "False", "lastProbeTime": None, "lastTransitionTime": now,
                    "reason": reason, "message": message})
    return out


def same_condition(a: Obj, b: Obj) -> bool:
    return all((a.get(k) or "") == (b.get(k) or "") for k in _IDENTITY)


def upsert(conditions: list[Obj], new: Obj) -> None:
    """Replace the condition of the same type (keeping its times if nothing else changed) or append."""
    for i, c in enumerate(conditions):
        if c.get("type") == new["type"]:
            if not same_condition(c, new):
                conditions[i] = new
            return
    conditions.append(new)


_SCHEDULED_OR_BINDING = tasks_mod.SCHEDULED_STATUS | {TaskStatus.BINDING}


def phase(job: jobs_mod.JobInfo, unschedulable_now: bool, binding_scheduled: bool = False) -> Phase:
    if not job.tasks:   # (the common case of a waiting PodGroup: nothing is scheduled)
        if job.min_available > 0:
            return Phase.INQUEUE if job.phase == Phase.INQUEUE else Phase.PENDING
        return Phase.COMPLETED   # 0 scheduled >= minMember 0, and all 0 of them finished
    if unschedulable_now and job.index.get(TaskStatus.RUNNING):
        return Phase.UNKNOWN
    scheduled = job.count(_SCHEDULED_OR_BINDING if binding_scheduled else tasks_mod.SCHEDULED_STATUS)
    scheduled += job.releasing_scheduled_num()
    if scheduled >= job.min_available:
        done = job.count((TaskStatus.SUCCEEDED, TaskStatus.FAILED))
        return Phase.COMPLETED if scheduled == done else Phase.RUNNING
    return Phase.INQUEUE if job.phase == Phase.INQUEUE else Phase.PENDING


_OURS = frozenset({"phase", "conditions", "running", "succeeded", "failed"})


def podgroup_status(job: jobs_mod.JobInfo, unschedulable_now: bool, binding_scheduled: bool = False) -> Obj:
    """The PodGroup's status after the session (unknown fields of the stored status kept, copied;
    the conditions list is the job's own; a count of 0 left out, as Go's omitempty marshals it)."""
    status = {k: v if k in _OURS or not isinstance(v, (dict, list)) else jsoncopy.deep_copy(v)
              for k, v in (job.podgroup.get("status") or {}).items()}
    status["phase"] = str(phase(job, unschedulable_now, binding_scheduled))
    status["conditions"] = job.conditions
    for key, task_status in (("running", TaskStatus.RUNNING), ("succeeded", TaskStatus.SUCCEEDED),
                             ("failed", TaskStatus.FAILED)):
        count = len(job.index.get(task_status, ()))
        if count:
            status[key] = count
        else:   # Volcano's PodGroupStatus counts are `omitempty`: a zero is not written (RUNNINGS blank)
            status.pop(key, None)
    if not status["conditions"]:
        del status["conditions"]
    return status


_COUNTS = ("running", "succeeded", "failed")


def podgroup_status_update(job: jobs_mod.JobInfo, unschedulable_now: bool,
                           binding_scheduled: bool = False) -> Obj | None:
    """`podgroup_status(...)` when it differs from the stored status (status_changed), else None;
    the common case, nothing changed, builds nothing."""
    old = job.podgroup.get("status") or {}
    index = job.index
    if (old.get("phase") == phase(job, unschedulable_now, binding_scheduled)
            and (old.get("running") or 0) == len(index.get(TaskStatus.RUNNING, ()))
            and (old.get("succeeded") or 0) == len(index.get(TaskStatus.SUCCEEDED, ()))
            and (old.get("failed") or 0) == len(index.get(TaskStatus.FAILED, ()))
            and not _conditions_differ(old.get("conditions"), job.conditions)):
        return None
    new = podgroup_status(job, unschedulable_now, binding_scheduled)
    return new if status_changed(old, new) else None


def _conditions_differ(old: list | None, new: list | None) -> bool:
    old, new = old or [], new or []
    if len(old) != len(new):
        return True
    return any(a is not b and not same_condition(a, b) for a, b in zip(old, new))


def status_changed(old: Obj | None, new: Obj) -> bool:
    """Whether `new` differs from `old` in anything but condition times and transition IDs
    (missing counts are 0, missing conditions are none)."""
    old = old or {}
    for k in new:
        if k == "conditions" or k in _COUNTS:
            continue
        if k not in old or old[k] != new[k]:
            return True
    for k in old:
        if k not in new and k != "conditions" and k not in _COUNTS:
            return True
    for k in _COUNTS:
        if (old.get(k) or 0) != (new.get(k) or 0):
            return True
    return _conditions_differ(old.get("conditions"), new.get("conditions"))


def queue_allocated(jobs: dict[str, jobs_mod.JobInfo], queues: dict[str, jobs_mod.QueueInfo],
                    dims: dims_mod.Dims) -> dict[str, np.ndarray]:
    """Σ requests of each queue's placed tasks (Binding, Bound, Running), rolled up to ancestors.

    Tasks only tentatively Allocated in an uncommitted statement are not counted (Volcano counts
    them, though nothing was bound)."""
    per_queue: dict[str, list[np.ndarray]] = {}
    for job in jobs.values():
        # job.allocated counts Allocated, Binding, Bound and Running tasks; take the Allocated out
        # (integer-valued sums: exact in any order)
        tentative = job.index.get(TaskStatus.ALLOCATED)
        if tentative:
            total = job.allocated.copy()
            for t in tentative.values():
                total -= t.req
        else:
            total = job.allocated
        per_queue.setdefault(job.queue, []).append(total)
    out = {name: dims.zeros() for name in queues}
    for queue, totals in per_queue.items():
        total = np.sum(totals, axis=0) if len(totals) > 1 else totals[0]
        seen: set[str] = set()
        name = queue
        while name in queues and name not in seen:
            seen.add(name)
            out[name] += total
            name = queues[name].parent
    return out


def allocated_list(v: np.ndarray, dims: dims_mod.Dims) -> dict[str, str]:
    return resources.format_list(dims.resource_list(v))


def queue_allocated_unchanged(queue: jobs_mod.QueueInfo, v: np.ndarray, dims: dims_mod.Dims) -> bool:
    """`queue_status_update(queue, allocated_list(v, dims)) is None`, without formatting quantities
    (the common case: nothing changed): the stored list, parsed once per distinct content, is
    compared in stored units with the vector's rounded values."""
    old_raw = (queue.obj.get("status") or {}).get("allocated") or {}
    try:
        stored = _in_stored_units(tuple(old_raw.items()))
    except TypeError:   # unhashable values: invalid anyway
        return False
    if stored is None:
        return False
    for name, x in zip(dims.names, v.tolist()):
        if x != 0 or name in _KEEP_ZERO:    # in allocated_list(v): stored under this very name
            if name not in old_raw or stored.get(name, 0) != round(x):
                return False
        elif stored.get(name, 0) != 0:
            return False
    return all(value == 0 for name, value in stored.items() if name not in dims.index)


_KEEP_ZERO = frozenset((dims_mod.CPU, dims_mod.MEMORY))   # dims.resource_list's default keep_zero


@functools.lru_cache(maxsize=256)
def _in_stored_units(items: tuple) -> dict[str, Any] | None:
    """A ResourceList's values in stored units (millicores, bytes...), exact; None if invalid."""
    try:
        parsed = resources.from_resource_list(dict(items))
    except ValueError:
        return None
    return {name: value * dims_mod.unit(name) for name, value in parsed.items()}


def queue_status_update(queue: jobs_mod.QueueInfo, allocated: dict[str, str]) -> Obj | None:
    """A status patch setting `allocated`, or None if the stored value already says the same."""
    old_raw = (queue.obj.get("status") or {}).get("allocated") or {}
    try:
        old = resources.from_resource_list(old_raw)
    except ValueError:
        old = {}
    new = resources.from_resource_list(allocated)
    zero = dims_mod.Fraction(0)
    if all(old.get(k, zero) == new.get(k, zero) for k in set(old) | set(new)) and set(old_raw) >= set(allocated):
        return None
    patch: dict[str, Any] = dict(allocated)
    for k in old_raw:
        patch.setdefault(k, None)   # merge patch: drop resources no longer allocated
    return {"allocated": patch}


def resource_names(prefix: str, verb: str, names: list[str]) -> str:
    """Volcano's util.FormatResourceNames: `queue resource quota insufficient: insufficient cpu, insufficient memory`
    (the words its Event gives; vclite's message goes on with the figures)."""
    return f"{prefix}: {', '.join(f'{verb} {name}' for name in names)}" if names else prefix
