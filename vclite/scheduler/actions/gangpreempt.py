"""gangpreempt: a starving gang takes room from lower-priority gangs of its own queue, a whole bundle
at a time, only where it is then placed (actions/gangpreempt/gangpreempt.go; the loop: gangevict.py).

Candidates in a domain: Bound or Running, preemptable pods (`volcano.sh/preemptable`, true when
unset) of other jobs of the same queue whose PodGroup is preemptable and whose priority is lower than
the starving job's. A BestEffort starving job is not kept from evicting pods with requests (legacy
preempt's filter is gone upstream: the plugins decide). Bundles go safe first, then the job that
JobOrder would schedule last, then the best return (bundles.sort_for_preempt). Every queue takes part,
overused or not; the UnifiedEvictable plugins see `eviction.Kind.GANG_PREEMPT`.

Must not: write to the API.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from vclite.scheduler.actions import bundles as bundles_mod
from vclite.scheduler.actions import gangevict
from vclite.scheduler.actions import victims as victims_mod
from vclite.scheduler.framework import eviction

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

NAME = "gangpreempt"


@dataclasses.dataclass(frozen=True)
class Arguments(gangevict.Arguments):
    ACTION: ClassVar[str] = NAME


class GangPreempt(gangevict.GangEviction):
    name = NAME
    kind = eviction.Kind.GANG_PREEMPT
    Arguments = Arguments

    def victim_job(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", victim: "jobs_mod.JobInfo") -> bool:
        return (victim.uid != job.uid and victim.queue == job.queue and victim.priority < job.priority
                and self.job_preemptable(victim))

    def victim_task(self, t: "tasks_mod.TaskInfo") -> bool:
        return t.status in victims_mod.PREEMPTABLE_STATUS and self.placed.preemptable(t)

    def order(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", bundles: list[bundles_mod.Bundle],
              need: np.ndarray) -> list[bundles_mod.Bundle]:
        return bundles_mod.sort_for_preempt(bundles, need, ssn.dims, ssn.job_less)
