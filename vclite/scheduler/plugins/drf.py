"""drf: dominant resource fairness between jobs (plugins/drf/drf.go, without hierarchy).

A job's `allocated` = Σ requests of its Allocated/Binding/Bound/Running tasks at session open,
then kept current by the allocate/deallocate events (so pipelined tasks count, evicted ones stop
counting, and a discarded statement restores it). share(job) = max over the cluster total's
resource names (dimensions with total ≥ 0.1, `pods` included) of allocated / total.
- JobOrder: lower share first (equal shares: undecided).
- Preemptable: ls = share(preemptor job allocated + preemptor request); for each candidate,
  cumulatively per candidate job, rs = share(job allocated − candidate request so far); the
  candidate is a victim iff ls < rs or |ls − rs| ≤ 1e-6.
- No UnifiedEvictable (gangpreempt, gangreclaim), as upstream: drf shares do not limit their victims.
`enableHierarchy` (hierarchical DRF across queues) is not implemented: the flag is rejected
when the configuration loads (`unsupported_flags`).

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Mapping

import numpy as np

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

SHARE_DELTA = 1e-6


def share(allocated: np.ndarray, total: np.ndarray) -> float:
    """max over dimensions with total ≥ 0.1 of allocated / total; 0 if there are none."""
    return _share(allocated, inverse(total))


def inverse(total: np.ndarray) -> np.ndarray:
    """1 / total where total ≥ 0.1, else 0 (those dimensions do not count)."""
    cols = total >= dims_mod.TOLERANCE
    inv = np.zeros(total.shape, dtype=np.float64)
    inv[cols] = 1.0 / total[cols]
    return inv


def _share(allocated: np.ndarray, inv: np.ndarray) -> float:
    return max(float((allocated * inv).max(initial=0.0)), 0.0)


class Drf:
    name = "drf"
    Arguments = plugin.NoArguments
    unsupported_flags: ClassVar[Mapping[str, str]] = {
        "enableHierarchy": "hierarchical DRF is not implemented by vclite; share queues with proportion weights"}

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments
        self.allocated: dict[str, np.ndarray] = {}
        self.shares: dict[str, float] = {}

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.inv = inverse(ssn.total)
        for uid, job in ssn.jobs.items():
            if not job.tasks:
                continue   # nothing allocated, nothing to allocate or evict: share 0 (job_order's default)
            self.allocated[uid] = job.allocated.copy()
            self.shares[uid] = _share(job.allocated, self.inv)
        reg.add(hooks.Point.PREEMPTABLE, self.preemptable, key=self.preemptor_share)
        reg.add(hooks.Point.JOB_ORDER, self.job_order)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)

    def job_order(self, l: "jobs_mod.JobInfo", r: "jobs_mod.JobInfo") -> int:
        ls, rs = self.shares.get(l.uid, 0.0), self.shares.get(r.uid, 0.0)
        return 0 if ls == rs else (-1 if ls < rs else 1)

    def preemptor_share(self, preemptor: "tasks_mod.TaskInfo") -> float | None:
        """ls: all Preemptable looks at about the preemptor (the key for preempt's memo)."""
        mine = self.allocated.get(preemptor.job)
        return None if mine is None else _share(mine + preemptor.req, self.inv)

    def preemptable(self, preemptor: "tasks_mod.TaskInfo",
                    preemptees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        ls = self.preemptor_share(preemptor)
        if ls is None:
            return []
        remaining: dict[str, np.ndarray] = {}
        victims = []
        for t in preemptees:
            if t.job not in remaining:
                if t.job not in self.allocated:
                    continue
                remaining[t.job] = self.allocated[t.job].copy()
            remaining[t.job] -= t.req
            rs = _share(remaining[t.job], self.inv)
            if ls < rs or abs(ls - rs) <= SHARE_DELTA:
                victims.append(t)
        return victims

    def _update(self, task: "tasks_mod.TaskInfo", sign: int) -> None:
        alloc = self.allocated.get(task.job)
        if alloc is not None:
            alloc += sign * task.req
            self.shares[task.job] = _share(alloc, self.inv)

    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, 1)

    def on_deallocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, -1)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
