"""backfill: place BestEffort tasks (no cpu, memory or scalar request) of admitted jobs (§3.4).

`allocate` skips BestEffort tasks; this action places them on any node that passes the
predicates and whose idle room holds them now (including the `pods` count: a slot held by a
terminating pod is not free yet), best by NodeOrder score, ties to the first node by name.
Queues, jobs and tasks are visited in QueueOrder / JobOrder / TaskOrder. Like Volcano's
`ssn.Allocate`, a job's placements are committed as soon as the job is ready; placements of a job
that never becomes ready in this session are discarded.

Must not: write to the API; statements record decisions, the session collects them.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from vclite.scheduler.actions import allocate
from vclite.scheduler.framework import fit
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

NAME = "backfill"


@dataclasses.dataclass(frozen=True)
class Arguments:
    predicateErrorCacheEnable: bool = True   # accepted; vclite evaluates predicates over all nodes at once


class Backfill:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        jobs_by_queue: dict[str, list] = {}
        for job in ssn.jobs.values():
            if not job.n_pending_best_effort or job.is_pending():   # counters first: most jobs have none
                continue
            if not any(t.best_effort and not t.scheduling_gated for t in job.tasks_in(tasks_mod.TaskStatus.PENDING)):
                continue
            if ssn.job_valid(job) is not None:
                continue
            jobs_by_queue.setdefault(job.queue, []).append(job)
        queues = ssn.queue_pq(ssn.queues[name] for name in jobs_by_queue)
        while queues:
            queue = queues.pop()
            jobs = ssn.job_pq(jobs_by_queue.pop(queue.name, []))
            while jobs:
                self._backfill_job(ssn, jobs.pop())

    @staticmethod
    def _backfill_job(ssn: "session_mod.Session", job) -> None:
        tasks = ssn.task_pq(t for t in job.tasks_in(tasks_mod.TaskStatus.PENDING)
                            if t.best_effort and not t.scheduling_gated)
        stmt = ssn.statement()
        while tasks:
            task = tasks.pop()
            reason = ssn.pre_predicate(task)
            if reason is not None:   # (recorded on every node, as Volcano's backfill does: the pod says why)
                job.record_fit_errors(task, fit.FitErrors.everywhere(len(ssn.nodes), str(reason)))
                continue
            feasible, errors = ssn.predicate_nodes(task)
            if errors is None:
                # A bind takes idle room now: a pod slot held by a terminating pod is not free yet.
                now = fit.resource_fit(task.req, ssn.nodes, ssn.nodes.idle)
                if not (feasible & ~now.mask(len(ssn.nodes))).any():
                    errors = fit.fit_errors([now], len(ssn.nodes))
                feasible = feasible & ~now.mask(len(ssn.nodes))
            if errors is not None:
                job.record_fit_errors(task, errors)
                continue
            if stmt.allocate(task, allocate.best_node(ssn, task, feasible)) is not None:
                continue   # (undone and noted by the statement)
            if ssn.job_ready(job):
                stmt.commit()
                stmt = ssn.statement()
        stmt.discard()
