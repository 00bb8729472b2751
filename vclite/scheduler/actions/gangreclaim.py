"""gangreclaim: a starving gang takes room back from other queues' gangs, a whole bundle at a time,
only where it is then placed (actions/gangreclaim/gangreclaim.go; the loop: gangevict.py).

An Overused queue does not reclaim; a job whose queue may not take its demand (Preemptive, asked with
the sum of its pending requests) does not either. Candidates in a domain: Running, preemptable pods
(`volcano.sh/preemptable`, true when unset) of jobs of other queues whose PodGroup is preemptable
and whose queue is reclaimable (`spec.reclaimable`, true when unset); priority does not matter.
Bundles go safe first, then by VictimQueueOrder for the starving job's queue (else reverse
QueueOrder), then the best return (bundles.sort_for_reclaim). The UnifiedEvictable plugins see
`eviction.Kind.GANG_RECLAIM` (capacity keeps the victim queues at their guarantee and above
deserved).

Must not: write to the API.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from vclite.scheduler.actions import bundles as bundles_mod
from vclite.scheduler.actions import gangevict, reclaim
from vclite.scheduler.framework import eviction, hooks
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

NAME = "gangreclaim"


@dataclasses.dataclass(frozen=True)
class Arguments(gangevict.Arguments):
    ACTION: ClassVar[str] = NAME


class GangReclaim(gangevict.GangEviction):
    name = NAME
    kind = eviction.Kind.GANG_RECLAIM
    Arguments = Arguments

    def skip_queue(self, ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo") -> bool:
        return ssn.overused(queue)

    def may_evict_for(self, ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo",
                      demand: gangevict.Demand) -> bool:
        return ssn.preemptive(queue, demand)

    def victim_job(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", victim: "jobs_mod.JobInfo") -> bool:
        if victim.queue == job.queue or not self.job_preemptable(victim):
            return False
        q = ssn.queues.get(victim.queue)
        return q is not None and reclaim.reclaimable_queue(q)

    def victim_task(self, t: "tasks_mod.TaskInfo") -> bool:
        return t.status == tasks_mod.TaskStatus.RUNNING and self.placed.preemptable(t)

    def order(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", bundles: list[bundles_mod.Bundle],
              need: np.ndarray) -> list[bundles_mod.Bundle]:
        queues = ssn.queues
        mine = queues.get(job.queue)
        victim_order = ssn.hooks.caller(hooks.Point.VICTIM_QUEUE_ORDER) \
            if ssn.hooks.flat(hooks.Point.VICTIM_QUEUE_ORDER) else None

        def first(a: str, b: str) -> bool:
            qa, qb = queues[a], queues[b]
            if mine is None:
                return ssn.queue_less(qa, qb)
            if victim_order is not None:
                v = victim_order(qa, qb, mine)
                if v:
                    return v < 0
            return not ssn.queue_less(qa, qb)
        return bundles_mod.sort_for_reclaim(bundles, need, ssn.dims, first)
