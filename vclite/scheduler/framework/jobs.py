"""JobInfo (one PodGroup and its tasks) and QueueInfo, with Volcano's gang readiness arithmetic.

Readiness (`api/job_info.go`): ReadyTaskNum = #{Allocated, Binding, Bound, Running, Succeeded};
WaitingTaskNum = #Pipelined; a pending BestEffort task counts as ready. Per-role checks apply only
when minAvailable ≥ Σ minTaskMember. `allocated` is kept in step with task statuses.

Must not: touch nodes, plugins or the API; statuses change only through `update_task_status`.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from collections import Counter
from typing import Any

import numpy as np

from vclite.api import scheduling
from vclite.scheduler.framework import fit
from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]
TaskStatus = tasks_mod.TaskStatus
TaskInfo = tasks_mod.TaskInfo
READY_STATUS = tasks_mod.ALLOCATED_STATUS | {TaskStatus.SUCCEEDED}
PIPELINED_STATUS = READY_STATUS | {TaskStatus.PIPELINED}
VALID_STATUS = PIPELINED_STATUS | {TaskStatus.PENDING}


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


@dataclasses.dataclass(eq=False)
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
    failed_roles: set[str] = dataclasses.field(default_factory=set)
    task_notes: dict[str, str] = dataclasses.field(default_factory=dict)  # why a task was not tried

    # ---- task bookkeeping ------------------------------------------------------------------------
    def add_task(self, task: TaskInfo) -> None:
        self.tasks[task.uid] = task
        self.index.setdefault(task.status, {})[task.uid] = task
        if task.status in tasks_mod.ALLOCATED_STATUS:
            self.allocated += task.req

    def update_task_status(self, task: TaskInfo, status: TaskStatus) -> None:
        old = task.status
        bucket = self.index.get(old)
        if bucket is not None:
            bucket.pop(task.uid, None)
            if not bucket:
                del self.index[old]
        if old in tasks_mod.ALLOCATED_STATUS:
            self.allocated -= task.req
        task.status = status
        self.index.setdefault(status, {})[task.uid] = task
        if status in tasks_mod.ALLOCATED_STATUS:
            self.allocated += task.req

    def tasks_in(self, status: TaskStatus) -> list[TaskInfo]:
        return list(self.index.get(status, {}).values())

    def count(self, statuses) -> int:
        return sum(len(self.index.get(s, ())) for s in statuses)

    # ---- gang arithmetic -------------------------------------------------------------------------
    def ready_task_num(self) -> int:
        return self.count(READY_STATUS)

    def waiting_task_num(self) -> int:
        return len(self.index.get(TaskStatus.PIPELINED, ()))

    def pending_best_effort_num(self) -> int:
        return sum(1 for t in self.index.get(TaskStatus.PENDING, {}).values() if t.best_effort)

    def is_ready(self) -> bool:
        return self.ready_task_num() + self.pending_best_effort_num() >= self.min_available

    def is_pipelined(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_num() >= self.min_available

    def is_starving(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() < self.min_available

    def is_pending(self) -> bool:
        return self.phase == scheduling.PodGroupPhase.PENDING

    def task_min_total(self) -> int:
        return sum(self.min_task_member.values())

    def _roles(self, statuses, best_effort_pending: bool) -> Counter:
        c: Counter = Counter()
        for s in statuses:
            for t in self.index.get(s, {}).values():
                c[t.role] += 1
        if best_effort_pending:
            for t in self.index.get(TaskStatus.PENDING, {}).values():
                if t.best_effort:
                    c[t.role] += 1
        return c

    def _roles_meet(self, counts: Counter, skip_zero: bool = False) -> bool:
        if self.min_available < self.task_min_total():
            return True
        return all(counts[r] >= m for r, m in self.min_task_member.items() if not (skip_zero and m == 0))

    def check_task_ready(self) -> bool:
        return self._roles_meet(self._roles(READY_STATUS, True))

    def check_task_pipelined(self) -> bool:
        return self._roles_meet(self._roles(PIPELINED_STATUS, True))

    def check_task_valid(self) -> bool:
        return self._roles_meet(self._roles(VALID_STATUS, False), skip_zero=True)

    def valid_task_num(self) -> int:
        return self.count(VALID_STATUS)

    def need_continue_allocating(self) -> bool:
        """After a task found no node: is it still worth trying this job's other tasks?"""
        if self.min_available == len(self.tasks):
            return False
        failed = {self.tasks[uid].role for uid in self.nodes_fit_errors if uid in self.tasks}
        if self.min_available < self.task_min_total():
            pending = self._roles([TaskStatus.PENDING], False)
            left = sum(n for r, n in pending.items() if r not in failed)
            return self.ready_task_num() + left >= self.min_available
        allocated = self._roles(tasks_mod.ALLOCATED_STATUS, False)
        return all(allocated[r] >= self.min_task_member.get(r, 0) for r in failed)

    def has_role_fit_errors(self, task: TaskInfo) -> bool:
        """A task of a role that already fit nowhere this session is not tried again."""
        return bool(task.role) and task.role in self.failed_roles

    def record_fit_errors(self, task: TaskInfo, errors: fit.FitErrors) -> None:
        self.nodes_fit_errors[task.uid] = errors
        if task.role:
            self.failed_roles.add(task.role)

    def fit_error(self) -> str:
        """Volcano's JobInfo.FitError, with the per-node reasons of the pending tasks spelled out."""
        hist = {str(s): len(ts) for s, ts in self.index.items() if ts}
        hist["minAvailable"] = self.min_available
        text = "pod group is not ready, " + ", ".join(sorted(f"{v} {k}" for k, v in hist.items()))
        errors: Counter = Counter()
        for uid in self.index.get(TaskStatus.PENDING, {}):
            if uid in self.nodes_fit_errors:
                errors[self.nodes_fit_errors[uid].error()] += 1
            elif uid in self.task_notes:
                errors[self.task_notes[uid]] += 1
        if errors:
            shown = [e for e, _ in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
            text += "; " + "; ".join(shown)
        return text
