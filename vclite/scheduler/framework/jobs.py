"""JobInfo (one PodGroup and its tasks) and QueueInfo, with Volcano's gang readiness arithmetic.

Readiness (`api/job_info.go`): ReadyTaskNum = #{Allocated, Binding, Bound, Running, Succeeded};
WaitingTaskNum = #Pipelined; a pending BestEffort task counts as ready. Per-role checks apply only
when minAvailable ≥ Σ minTaskMember. `allocated` is kept in step with task statuses, and so are
counters (ready tasks, pending BestEffort tasks, tasks per role and status) that make every gang
check O(roles) instead of O(tasks): jobs are compared many times per session. `changes` counts the
task changes, so a cache of something derived from a job's tasks (gangevict's victim bundles) knows
when it is stale.

Why a job or a task waits is told in Volcano's words (FitError, TaskSchedulingReason, JobFitErrors), vclite's own
notes on tasks (`task_notes`) folded into JobFitErrors, the one place Volcano gives such a reason.

Must not: touch nodes, plugins or the API; statuses change only through `update_task_status`.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from collections import Counter
from typing import Any

import numpy as np

from vclite.api import scheduling
from vclite.scheduler.framework import fit, subgroups
from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]
TaskStatus = tasks_mod.TaskStatus
TaskInfo = tasks_mod.TaskInfo
READY_STATUS = tasks_mod.ALLOCATED_STATUS | {TaskStatus.SUCCEEDED}
PIPELINED_STATUS = READY_STATUS | {TaskStatus.PIPELINED}
VALID_STATUS = PIPELINED_STATUS | {TaskStatus.PENDING}
POD_GROUP_READY, POD_GROUP_NOT_READY = "pod group is ready", "pod group is not ready"   # Volcano's PodGroup(Not)Ready
POD_SCHEDULABLE, POD_UNSCHEDULABLE = "Schedulable", "Unschedulable"   # Volcano's PodReason* values


@dataclasses.dataclass(eq=False)
class QueueInfo:
    name: str
    weight: int
    priority: int
    state: str
    created: _dt.datetime
    capability: np.ndarray    # +inf where unlimited
    guarantee: np.ndarray
    parent: str
    obj: Obj

    @property
    def uid(self) -> str:
        return self.name  # Volcano: a queue's UID is its name

    @property
    def is_open(self) -> bool:
        # A queue whose controller has not written a state yet is treated as Open (Volcano: only "Open").
        return self.state in ("", scheduling.QueueState.OPEN)


@dataclasses.dataclass(eq=False, slots=True)
class JobInfo:
    uid: str                  # the PodGroup key, ns/name
    name: str
    namespace: str
    queue: str
    podgroup: Obj
    min_available: int
    min_task_member: dict[str, int]
    priority: int
    created: _dt.datetime
    phase: scheduling.PodGroupPhase
    min_resources: np.ndarray | None
    allocated: np.ndarray
    conditions: list[Obj] = dataclasses.field(default_factory=list)
    tasks: dict[str, TaskInfo] = dataclasses.field(default_factory=dict)
    index: dict[TaskStatus, dict[str, TaskInfo]] = dataclasses.field(default_factory=dict)
    nodes_fit_errors: dict[str, fit.FitErrors] = dataclasses.field(default_factory=dict)
    # roles that fit nowhere, per partition (Volcano's FitFailedRoles(subJob)); "" is the default partition
    failed_roles: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    # vclite's notes on tasks Volcano keeps no reason for (a refused allocation, a queue that cannot take the task),
    # by uid: told as the job's JobFitErrors (job_fit_errors)
    task_notes: dict[str, str] = dataclasses.field(default_factory=dict)
    origin_reason: str = ""   # what an action said of the whole job (Volcano's JobFitErrors as set by one)
    # counters kept by add_task / update_task_status
    n_ready: int = dataclasses.field(default=0, init=False)              # tasks in READY_STATUS
    n_pending_best_effort: int = dataclasses.field(default=0, init=False)
    role_counts: dict[str, dict[TaskStatus, int]] = dataclasses.field(default_factory=dict, init=False)
    role_pending_best_effort: dict[str, int] = dataclasses.field(default_factory=dict, init=False)
    sub_groups: tuple | None = dataclasses.field(default=None, init=False)   # subgroups.groups' cache
    sub_jobs: dict | None = dataclasses.field(default=None, init=False)      # subgroups.sub_job_ids' cache
    changes: int = dataclasses.field(default=0, init=False)   # add_task/update_task_status calls: a cache's stamp

    # ---- task bookkeeping ------------------------------------------------------------------------
    def _count(self, task: TaskInfo, status: TaskStatus, delta: int) -> None:
        if status in READY_STATUS:
            self.n_ready += delta
        elif status == TaskStatus.PENDING and task.best_effort:
            self.n_pending_best_effort += delta
            self.role_pending_best_effort[task.role] = self.role_pending_best_effort.get(task.role, 0) + delta
        per_role = self.role_counts.get(task.role)
        if per_role is None:
            per_role = self.role_counts[task.role] = {}
        per_role[status] = per_role.get(status, 0) + delta

    def add_task(self, task: TaskInfo) -> None:
        self.changes += 1
        self.tasks[task.uid] = task
        self.sub_groups = self.sub_jobs = None
        self.index.setdefault(task.status, {})[task.uid] = task
        self._count(task, task.status, 1)
        if task.status in tasks_mod.ALLOCATED_STATUS:
            self.allocated += task.req

    def update_task_status(self, task: TaskInfo, status: TaskStatus) -> None:
        self.changes += 1
        old = task.status
        bucket = self.index.get(old)
        if bucket is not None:
            bucket.pop(task.uid, None)
            if not bucket:
                del self.index[old]
        self._count(task, old, -1)
        was, now = old in tasks_mod.ALLOCATED_STATUS, status in tasks_mod.ALLOCATED_STATUS
        if was and not now:   # (both: `allocated` stays; its integer-valued sums are exact either way)
            self.allocated -= task.req
        task.status = status
        self.index.setdefault(status, {})[task.uid] = task
        self._count(task, status, 1)
        if now and not was:
            self.allocated += task.req

    def tasks_in(self, status: TaskStatus) -> list[TaskInfo]:
        return list(self.index.get(status, {}).values())

    def count(self, statuses) -> int:
        """Tasks in any of `statuses` (a collection of distinct statuses)."""
        index = self.index
        n = 0
        if len(index) < len(statuses):   # (a job's tasks are in one or two statuses: walk the fewer)
            for s, bucket in index.items():
                if s in statuses:
                    n += len(bucket)
            return n
        for s in statuses:
            bucket = index.get(s)
            if bucket:
                n += len(bucket)
        return n

    def deduct_gated(self, res: np.ndarray) -> np.ndarray:
        """`res` less the requests of the job's scheduling-gated tasks, floored at 0 (Volcano's
        DeductSchGatedResources): what an admitted job holds in `inqueue` while some of its pods wait for
        their gates to be removed. A task whose only gate is Volcano's own queue-allocation gate still counts.
        `res` itself when nothing is gated."""
        gated = None
        for t in self.tasks.values():
            if t.scheduling_gated and not t.only_queue_allocation_gate:
                gated = t.req.copy() if gated is None else gated + t.req
        return res if gated is None else np.maximum(res - gated, 0)

    # ---- gang arithmetic -------------------------------------------------------------------------
    def ready_task_num(self) -> int:
        return self.n_ready

    def allocated_task_num(self) -> int:
        """Tasks holding node resources (Allocated, Binding, Bound, Running): Volcano's
        CalculateAllocatedTaskNum. Unlike ready_task_num, finished tasks do not count."""
        return self.count(tasks_mod.ALLOCATED_STATUS)

    def waiting_task_num(self) -> int:
        return len(self.index.get(TaskStatus.PIPELINED, ()))

    def pending_best_effort_num(self) -> int:
        return self.n_pending_best_effort

    def is_ready(self) -> bool:
        return self.n_ready + self.n_pending_best_effort >= self.min_available

    def is_pipelined(self) -> bool:
        return self.waiting_task_num() + self.n_ready + self.n_pending_best_effort >= self.min_available

    def is_starving(self) -> bool:
        return self.waiting_task_num() + self.n_ready < self.min_available

    def is_pending(self) -> bool:
        return self.phase == scheduling.PodGroupPhase.PENDING

    def task_min_total(self) -> int:
        return sum(self.min_task_member.values())

    def _roles(self, statuses, best_effort_pending: bool) -> Counter:
        """Tasks per role in `statuses` (plus pending BestEffort ones), from the counters."""
        c: Counter = Counter()
        for role, per_status in self.role_counts.items():
            n = sum(per_status.get(s, 0) for s in statuses)
            if best_effort_pending:
                n += self.role_pending_best_effort.get(role, 0)
            if n:
                c[role] = n
        return c

    def _roles_meet(self, statuses, best_effort_pending: bool, skip_zero: bool = False) -> bool:
        if not self.min_task_member or self.min_available < self.task_min_total():
            return True
        counts = self._roles(statuses, best_effort_pending)
        return all(counts[r] >= m for r, m in self.min_task_member.items() if not (skip_zero and m == 0))

    def check_task_ready(self) -> bool:
        return self._roles_meet(READY_STATUS, True)

    def check_task_pipelined(self) -> bool:
        return self._roles_meet(PIPELINED_STATUS, True)

    def check_task_valid(self) -> bool:
        return self._roles_meet(VALID_STATUS, False, skip_zero=True)

    def valid_task_num(self) -> int:
        return self.count(VALID_STATUS)

    def releasing_scheduled_num(self) -> int:
        """Releasing tasks still on a node (pods terminating there, holding their slots): Volcano's
        ReleasingScheduledTaskNum. A task deleted before it was placed does not count."""
        releasing = self.index.get(TaskStatus.RELEASING)
        return sum(1 for t in releasing.values() if t.node) if releasing else 0

    def covered_by_releasing(self) -> bool:
        """Its scheduled tasks, the terminating ones on a node included, still cover minMember and no task
        waits for a node (Volcano's shouldSkipUnschedulableForReleasing): such a job is not unschedulable —
        its pods are terminating, not waiting."""
        if self.index.get(TaskStatus.PENDING) or self.index.get(TaskStatus.PIPELINED):
            return False
        releasing = self.releasing_scheduled_num()
        return releasing > 0 and self.count(tasks_mod.SCHEDULED_STATUS) + releasing >= self.min_available

    def sub_job(self, task: TaskInfo) -> str:
        """The partition the task belongs to (Volcano's TaskToSubJob): `<policy>/<values>`, "" for the default."""
        if self.sub_jobs is None:
            self.sub_jobs = subgroups.sub_job_ids(self)
        return self.sub_jobs.get(task.uid, "")

    def need_continue_allocating(self, sub_job: str = "") -> bool:
        """After a task of partition `sub_job` found no node: is it still worth trying this job's other tasks?
        (Volcano's NeedContinueAllocating(subJob).) A job with `subGroupPolicy` goes on unless the partition needs
        every one of its tasks (its `subGroupSize`, 1 for the default partition); the role checks below are for
        jobs without one, where the default partition is the whole job."""
        if self.min_available == len(self.tasks):
            return False
        if subgroups.policies(self):
            members = [uid for uid in self.tasks if self.sub_job(self.tasks[uid]) == sub_job]
            return subgroups.sub_job_size(self, sub_job) < len(members)
        failed = {self.tasks[uid].role for uid in self.nodes_fit_errors if uid in self.tasks}
        if self.min_available < self.task_min_total():
            pending = self._roles([TaskStatus.PENDING], False)
            left = sum(n for r, n in pending.items() if r not in failed)
            return self.ready_task_num() + left >= self.min_available
        allocated = self._roles(tasks_mod.ALLOCATED_STATUS, False)
        return all(allocated[r] >= self.min_task_member.get(r, 0) for r in failed)

    def has_role_fit_errors(self, task: TaskInfo) -> bool:
        """A task of a role that already fit nowhere in its partition is not tried again (TaskHasFitErrors)."""
        if not task.role:
            return False
        roles = self.failed_roles.get(self.sub_job(task)) if self.failed_roles else None
        return roles is not None and task.role in roles

    def record_fit_errors(self, task: TaskInfo, errors: fit.FitErrors) -> None:
        self.nodes_fit_errors[task.uid] = errors
        if task.role:
            self.failed_roles.setdefault(self.sub_job(task), set()).add(task.role)

    def reset_failed_roles(self, sub_job: str | None = None) -> None:
        """Forget which roles fit nowhere: the whole job's (Volcano's ResetFitErr) or one partition's
        (ResetSubJobFitErr), so that their tasks are tried again. The errors already recorded stay: they are
        what the pods and the PodGroup are told (Volcano drops them, see docs/differences.md)."""
        if sub_job is None:
            self.failed_roles.clear()
        else:
            self.failed_roles.pop(sub_job, None)

    def job_fit_errors(self) -> str:
        """Volcano's JobFitErrors, the reason a whole job is not placed: what an action said of the job
        (`origin_reason`: enqueue's queue resource quota, a network topology's...), else vclite's note on the first
        noted task still Pending without fit errors of its own (a refused allocation, a queue that cannot take the
        task: Volcano has no field of its own for them, this is the nearest), in the order they were noted."""
        if self.origin_reason:
            return self.origin_reason
        if self.task_notes:
            pending = self.index.get(TaskStatus.PENDING) or {}
            for uid, note in self.task_notes.items():
                if uid in pending and uid not in self.nodes_fit_errors:
                    return note
        return ""

    def scheduling_reason(self, task: TaskInfo) -> str:
        """The reason of `task_scheduling_reason`, alone (what FitError's Pending histogram counts)."""
        status = task.last_transaction[0] if task.last_transaction is not None else task.status
        if status == TaskStatus.ALLOCATED:
            return POD_SCHEDULABLE
        if status in (TaskStatus.PIPELINED, TaskStatus.PENDING):
            return POD_UNSCHEDULABLE
        return str(status)

    def task_scheduling_reason(self, task: TaskInfo) -> tuple[str, str, str]:
        """Volcano's TaskSchedulingReason: (reason, message, nominated node) of a task, from its last placement in
        the session (LastTransaction, undone since), else its current status. The message is "" where Volcano's is
        an empty JobFitErrors: the caller then tells the job's FitError (cache.RecordJobStatusEvent). A pipelined
        task that pods were evicted for is nominated to their node (status.nominatedNodeName)."""
        status, node, evicted_for = task.last_transaction or (task.status, task.node, task.evicted_for)
        where = f"Pod {task.namespace}/{task.name} can possibly be assigned to {node}"
        if status == TaskStatus.ALLOCATED:
            return POD_SCHEDULABLE, f"{where}, once minAvailable is satisfied", ""
        if status == TaskStatus.PIPELINED:
            return (POD_UNSCHEDULABLE, f"{where}, once resource is released and minAvailable is satisfied",
                    node if evicted_for else "")
        if status == TaskStatus.PENDING:
            errors = self.nodes_fit_errors.get(task.uid)
            if errors is not None:
                return POD_UNSCHEDULABLE, errors.error(), ""
            return POD_UNSCHEDULABLE, self.job_fit_errors(), ""
        return str(status), self.job_fit_errors(), ""

    def fit_error(self) -> str:
        """Volcano's JobInfo.FitError, word for word: `pod group is [not ]ready, <tasks per status, minAvailable>;
        Pending: <the Pending tasks by TaskSchedulingReason's reason>`, then the origin reason: `. Origin reason
        is: <JobFitErrors>` when set, else `. Origin reason is <task>: <its fit errors>` of the first task with fit
        errors — in the job's task order (its pods' order in the snapshot), where Go takes a map's random order.
        Each histogram is sorted as Go's sort.Strings sorts its `<count> <reason>` strings."""
        hist = {str(s): len(ts) for s, ts in self.index.items() if ts}
        hist["minAvailable"] = self.min_available
        text = (POD_GROUP_READY if self.is_ready() else POD_GROUP_NOT_READY) + ", " + \
            ", ".join(sorted(f"{v} {k}" for k, v in hist.items()))
        pending = self.index.get(TaskStatus.PENDING)
        if pending:
            reasons = Counter(self.scheduling_reason(t) for t in pending.values())
            text += f"; {TaskStatus.PENDING}: " + ", ".join(sorted(f"{v} {k}" for k, v in reasons.items()))
        origin = self.job_fit_errors()
        if origin:
            return f"{text}. Origin reason is: {origin}"
        if self.nodes_fit_errors:
            for uid, task in self.tasks.items():
                errors = self.nodes_fit_errors.get(uid)
                if errors is not None:
                    return f"{text}. Origin reason is {task.name}: {errors.error()}"
        return text
