"""gang: all-or-nothing by minMember / minTaskMember (plugins/gang/gang.go).

JobValid: NotEnoughPodsOfTask if a role cannot reach its minTaskMember or a subGroupPolicy its
minSubGroups partitions, NotEnoughTasks if fewer valid tasks (pending, pipelined, placed, succeeded)
than minMember. JobOrder: jobs not yet ready first. JobReady: per-role, per-subGroupPolicy
(minSubGroups ready partitions: framework/subgroups.py) and total counts met. JobPipelined: Permit
iff the same counting pipelined tasks holds, else Reject. JobStarving: ready + waiting < minMember.
At session close, every job with tasks gets a condition: not ready -> Unschedulable /
NotEnoughResources `"<min − schedulable>/<#tasks> tasks in gang unschedulable: <FitError>"`, in
Volcano's words (JobInfo.fit_error); ready -> Scheduled ("tasks in gang are ready to be scheduled")
— a pending BestEffort task that fit no node this session does not count as ready here, though JobReady counts it —
and an earlier Unschedulable condition turns False. Jobs whose reason was already written this
session (enqueue rejection, invalid) keep it.
Preemptable / Reclaimable: a victim job keeps at least minMember ready tasks — counting from its
ReadyTaskNum, a candidate is a victim while the count is above minMember (the count then drops).
UnifiedEvictable (gangpreempt, gangreclaim): every candidate — those actions keep gangs whole
themselves (actions/bundles.py: a gang is broken only by taking it whole), as upstream.

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vclite.api import scheduling
from vclite.scheduler.framework import hooks, plugin
from vclite.scheduler.framework import status as status_mod
from vclite.scheduler.framework import subgroups
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

TaskStatus = tasks_mod.TaskStatus
CondType = scheduling.PodGroupConditionType
Reason = scheduling.ConditionReason


def _every_candidate(ctx: object, candidates: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
    return list(candidates)


class Gang:
    name = "gang"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        reg.add(hooks.Point.JOB_VALID, self.job_valid)
        reg.add(hooks.Point.JOB_ORDER, self.job_order)
        reg.add(hooks.Point.JOB_READY, self.job_ready)
        reg.add(hooks.Point.JOB_PIPELINED, self.job_pipelined)
        reg.add(hooks.Point.JOB_STARVING, self.job_starving)
        self.ssn = ssn
        reg.add(hooks.Point.PREEMPTABLE, self.evictable, key=_any_evictor)
        reg.add(hooks.Point.RECLAIMABLE, self.evictable, key=_any_evictor)
        reg.add(hooks.Point.UNIFIED_EVICTABLE, _every_candidate)

    @staticmethod
    def job_valid(job: "jobs_mod.JobInfo") -> plugin.ValidateResult | None:
        if not job.check_task_valid():
            return plugin.ValidateResult(Reason.NOT_ENOUGH_PODS_OF_TASK,
                                         "Not enough valid pods of each task for gang-scheduling")
        if not subgroups.valid(job):
            return plugin.ValidateResult(Reason.NOT_ENOUGH_PODS_OF_TASK,
                                         "Not enough valid subGroups of each task for gang-scheduling")
        valid = job.valid_task_num()
        if valid < job.min_available:
            return plugin.ValidateResult(
                Reason.NOT_ENOUGH_TASKS,
                f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_available}")
        return None

    @staticmethod
    def job_order(l: "jobs_mod.JobInfo", r: "jobs_mod.JobInfo") -> int:
        lr, rr = l.is_ready(), r.is_ready()
        if lr == rr:
            return 0
        return 1 if lr else -1

    @staticmethod
    def job_ready(job: "jobs_mod.JobInfo") -> bool:
        return job.check_task_ready() and subgroups.ready(job) and job.is_ready()

    @staticmethod
    def job_pipelined(job: "jobs_mod.JobInfo") -> hooks.Vote:
        ok = job.check_task_pipelined() and subgroups.pipelined(job) and job.is_pipelined()
        return hooks.Vote.PERMIT if ok else hooks.Vote.REJECT

    @staticmethod
    def job_starving(job: "jobs_mod.JobInfo") -> bool:
        return job.is_starving()

    def evictable(self, evictor: "tasks_mod.TaskInfo",
                  evictees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        victims = []
        occupied: dict[str, int] = {}
        for t in evictees:
            job = self.ssn.jobs.get(t.job)
            if job is None:
                continue
            n = occupied.setdefault(job.uid, job.ready_task_num())
            if n > job.min_available:
                occupied[job.uid] = n - 1
                victims.append(t)
        return victims

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        for job in ssn.jobs.values():
            if not job.tasks or job.uid in ssn.explained:
                continue
            if job.is_ready() and not _best_effort_short(job):
                ssn.set_condition(job, CondType.SCHEDULED, True, status_mod.Reason.GANG_READY, "")
                ssn.clear_condition(job, CondType.UNSCHEDULABLE)
            elif not job.covered_by_releasing():
                unready = job.min_available - _schedulable(job)
                message = f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {job.fit_error()}"
                ssn.set_condition(job, CondType.UNSCHEDULABLE, True, Reason.NOT_ENOUGH_RESOURCES, message)


def _best_effort_short(job: "jobs_mod.JobInfo") -> bool:
    """IsReady counts pending BestEffort tasks (no requests) as ready, for backfill places them later in
    the session; at its close, one that fit no node this session (a node full by pod count) is not: the
    gang is short of it and says why, as for a task with requests (vclite; Volcano calls it Scheduled)."""
    if not job.n_pending_best_effort or not job.nodes_fit_errors:
        return False
    pending = job.index.get(TaskStatus.PENDING, {})
    unfit = sum(1 for uid in job.nodes_fit_errors if uid in pending and pending[uid].best_effort)
    return job.n_ready + job.n_pending_best_effort - unfit < job.min_available


def _any_evictor(evictor: "tasks_mod.TaskInfo") -> tuple:
    return ()   # the verdict depends on the candidates' jobs only


def _schedulable(job: "jobs_mod.JobInfo") -> int:
    """Ready tasks plus pending ones a discarded statement had placed (Volcano's LastTransaction)."""
    n = job.ready_task_num()
    for t in job.index.get(TaskStatus.PENDING, {}).values():
        if t.last_transaction is not None and t.last_transaction[0] in tasks_mod.ALLOCATED_STATUS:
            n += 1
    return n
