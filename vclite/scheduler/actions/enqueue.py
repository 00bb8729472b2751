"""enqueue: admit Pending PodGroups (phase -> Inqueue) that the plugins find room for (§3.4).

Queues are taken best first (QueueOrder) and, per queue, its Pending jobs best first (JobOrder);
a queue goes back after each job until its jobs are exhausted. A job is admitted when the
JobEnqueueable vote passes; then JobEnqueued lets plugins count its minResources as inqueue.
The vcjob controller creates no pods before this happens.

Differences from Volcano, on purpose: JobEnqueueable is asked even when the PodGroup has no
minResources (plugins permit such jobs, but a Closed queue still rejects them); and a rejected job
gets an Unschedulable condition saying why (`queue "q1" is Closed`, `queue resource quota
insufficient: ...`), cleared again when the job is admitted.

Must not: place tasks on nodes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vclite.api import scheduling
from vclite.scheduler.framework import plugin
from vclite.scheduler.framework import status as status_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

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
        if len(pending) == 1:   # one queue: taking it again after each job changes nothing
            (jobs,) = pending.values()
            while jobs:
                self._try(ssn, jobs.pop())
            return
        queues = ssn.queue_pq(ssn.queues[name] for name in pending)
        while queues:
            queue = queues.pop()
            jobs = pending[queue.name]
            self._try(ssn, jobs.pop())
            if jobs:
                queues.push(queue)

    @staticmethod
    def _try(ssn: "session_mod.Session", job) -> None:
        if ssn.job_enqueueable(job):
            ssn.job_enqueued(job)
            job.phase = scheduling.PodGroupPhase.INQUEUE
            ssn.clear_condition(job, scheduling.PodGroupConditionType.UNSCHEDULABLE)
        else:
            reason, message = ssn.enqueue_notes.get(job.uid, (
                status_mod.Reason.NOT_ENQUEUEABLE, "the scheduler's enqueue checks did not admit the job"))
            ssn.explain_unschedulable(job, reason, message)
