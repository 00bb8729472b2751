"""priority: order by PriorityClass (plugins/priority/priority.go).

TaskOrder: higher task priority first. JobOrder: higher job priority (the PodGroup's
priorityClassName value) first. JobStarving: ready + waiting < #tasks.
Preemptable: a pod of another job is a victim iff its job's priority is lower than the
preemptor's job's; a pod of the preemptor's own job iff its task priority is lower than the
preemptor's. Like Volcano, priority registers no Reclaimable (reclaim is about queue shares).
UnifiedEvictable (gangpreempt, gangreclaim): for gangpreempt a candidate is a victim iff its job's
priority is lower than the starving job's; for gangreclaim every candidate is.

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vclite.scheduler.framework import eviction, hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod


def _higher_first(l: int, r: int) -> int:
    return 0 if l == r else (-1 if l > r else 1)


class Priority:
    name = "priority"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        reg.add(hooks.Point.TASK_ORDER, self.task_order)
        reg.add(hooks.Point.JOB_ORDER, self.job_order)
        reg.add(hooks.Point.JOB_STARVING, self.job_starving)
        self.ssn = ssn
        reg.add(hooks.Point.PREEMPTABLE, self.preemptable, key=self.preemptor_key)
        reg.add(hooks.Point.UNIFIED_EVICTABLE, self.unified_evictable)

    @staticmethod
    def task_order(l: "tasks_mod.TaskInfo", r: "tasks_mod.TaskInfo") -> int:
        return _higher_first(l.priority, r.priority)

    @staticmethod
    def job_order(l: "jobs_mod.JobInfo", r: "jobs_mod.JobInfo") -> int:
        return _higher_first(l.priority, r.priority)

    @staticmethod
    def job_starving(job: "jobs_mod.JobInfo") -> bool:
        return job.ready_task_num() + job.waiting_task_num() < len(job.tasks)

    def preemptor_key(self, preemptor: "tasks_mod.TaskInfo") -> tuple | None:
        job = self.ssn.jobs.get(preemptor.job)
        return None if job is None else (job.priority, preemptor.priority)

    def preemptable(self, preemptor: "tasks_mod.TaskInfo",
                    preemptees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        jobs = self.ssn.jobs
        mine = jobs.get(preemptor.job)
        if mine is None:
            return []
        victims = []
        for t in preemptees:
            job = jobs.get(t.job)
            if job is None:
                continue
            if (job.priority < mine.priority) if job is not mine else (t.priority < preemptor.priority):
                victims.append(t)
        return victims

    def unified_evictable(self, ctx: "eviction.Context",
                          candidates: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        """gangpreempt: the candidates of jobs of lower priority than the starving job; gangreclaim: all
        (reclaim is about queues' fair shares, priority does not gate it)."""
        if ctx.kind == eviction.Kind.GANG_RECLAIM:
            return list(candidates)
        jobs = self.ssn.jobs
        return [t for t in candidates if t.job in jobs and jobs[t.job].priority < ctx.job.priority]

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
