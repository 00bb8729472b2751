"""enqueue: admit Pending PodGroups (phase -> Inqueue) that the plugins find room for (§3.4).

Queues are taken best first (QueueOrder) and, per queue, its Pending jobs best first (JobOrder);
a queue goes back after each job until its jobs are exhausted. A job is admitted when the
JobEnqueueable vote passes; then JobEnqueued lets plugins count its minResources as inqueue.
The vcjob controller creates no pods before this happens.

Differences from Volcano, on purpose: JobEnqueueable is asked even when the PodGroup has no
minResources (plugins permit such jobs, but a Closed queue still rejects them); and a rejected job
gets an Unschedulable condition saying why (`queue "q1" is Closed`, `queue resource quota
insufficient: ...`), cleared again when the job is admitted; a job no node could ever run (a pod of it, or
its minResources over minMember, above the largest node) is told so first (`pod needs cpu 6, but the
largest node has 4; ...`).

Jobs rejected before wait in classes of equal jobs (framework/waiting.py): a class's members are
taken in order, each once the one before it is admitted, so a class costs one try when there is
no room for it, however many jobs it holds.

Must not: place tasks on nodes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vclite.api import scheduling
from vclite.scheduler.framework import fit, plugin
from vclite.scheduler.framework import status as status_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import waiting as waiting_mod

NAME = "enqueue"


class Enqueue:
    name = NAME
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        by_queue: dict[str, list] = {}
        for job in ssn.jobs.values():
            jobs = by_queue.get(job.queue)
            if jobs is None:
                jobs = by_queue[job.queue] = []
            if job.is_pending():
                jobs.append(job)
        pending = {name: ssn.job_pq(jobs) for name, jobs in by_queue.items() if jobs}
        taken: dict[str, "waiting_mod.WaitingClass"] = {}   # job uid -> the waiting class it came from
        for name, classes in ssn.waiting.items():
            jobs = pending.get(name)
            if jobs is None:
                jobs = pending[name] = ssn.job_pq()
            for waiting in classes:
                self._take(ssn, waiting, jobs, taken)
        if len(pending) == 1:   # one queue: taking it again after each job changes nothing
            (jobs,) = pending.values()
            while jobs:
                self._next(ssn, jobs, taken)
            return
        queues = ssn.queue_pq(ssn.queues[name] for name in pending)
        while queues:
            queue = queues.pop()
            jobs = pending[queue.name]
            self._next(ssn, jobs, taken)
            if jobs:
                queues.push(queue)

    def _next(self, ssn: "session_mod.Session", jobs, taken: dict) -> None:
        """Try the queue's best pending job; one admitted from a waiting class brings the next
        member of its class in (one rejected ends the class: the rest would be rejected too)."""
        job = jobs.pop()
        if self._try(ssn, job):
            waiting = taken.pop(job.uid, None)
            if waiting is not None:
                self._take(ssn, waiting, jobs, taken)

    @staticmethod
    def _take(ssn: "session_mod.Session", waiting: "waiting_mod.WaitingClass", jobs, taken: dict) -> None:
        job = ssn.take_waiting(waiting)
        if job is not None:
            taken[job.uid] = waiting
            jobs.push(job)

    @staticmethod
    def _try(ssn: "session_mod.Session", job) -> bool:
        if ssn.job_enqueueable(job):
            ssn.job_enqueued(job)
            job.phase = scheduling.PodGroupPhase.INQUEUE
            ssn.clear_condition(job, scheduling.PodGroupConditionType.UNSCHEDULABLE)
            return True
        reason, message = ssn.enqueue_notes.get(job.uid, (
            status_mod.Reason.NOT_ENQUEUEABLE, "the scheduler's enqueue checks did not admit the job"))
        hint = fit.job_too_big_hint(job.tasks.values(), job.min_resources, job.min_available, ssn.nodes)
        ssn.explain_unschedulable(job, reason, f"{hint}; {message}" if hint else message)
        return False
