"""drf: dominant resource fairness between jobs, and with `enableHierarchy` between queues (plugins/drf/drf.go).

A job's `allocated` = Σ requests of its Allocated/Binding/Bound/Running tasks at session open,
then kept current by the allocate/deallocate events (so pipelined tasks count, evicted ones stop
counting, and a discarded statement restores it). share(job) = max over the cluster total's
resource names (dimensions with total ≥ 0.1, `pods` included) of allocated / total.
- JobOrder: lower share first (equal shares: undecided).
- Preemptable: ls = share(preemptor job allocated + preemptor request); for each candidate,
  cumulatively per candidate job, rs = share(job allocated − candidate request so far); the
  candidate is a victim iff ls < rs or |ls − rs| ≤ 1e-6.
- No UnifiedEvictable (gangpreempt, gangreclaim), as upstream: drf shares do not limit their victims.
With `enableHierarchy: true` (hdrf.py: the queue tree and its shares, refreshed after every allocate and
deallocate event, with what is allocated in all):
- QueueOrder: hdrf.Tree.compare along the queues' `volcano.sh/hierarchy` paths.
- Reclaimable: with the reclaimer's request added to its job (and to the total), each candidate apart is
  taken off its job (and the total); it is a victim iff the reclaimer's queue then goes first. Candidates are
  judged one by one against the same state (not cumulatively), as upstream.

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin
from vclite.scheduler.plugins import hdrf

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


def _reclaimer_job(reclaimer: "tasks_mod.TaskInfo") -> str:
    """Reclaimable's verdict depends on the reclaimer's job (its allocation, its queue) and request only."""
    return reclaimer.job


def _share(allocated: np.ndarray, inv: np.ndarray) -> float:
    """max(allocated · inv, 0). With Python floats (asked after every placement): the same products as on arrays,
    and a NaN wins as in numpy's max."""
    out = 0.0
    for a, i in zip(allocated.tolist(), inv.tolist()):
        p = a * i
        if p > out or p != p:
            out = p
            if p != p:
                break
    return out


class Drf:
    name = "drf"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments
        self.allocated: dict[str, np.ndarray] = {}
        self.shares: dict[str, float] = {}
        self.tree: hdrf.Tree | None = None
        self.paths: dict[str, list[str]] = {}
        self.total_allocated: np.ndarray | None = None

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.inv = inverse(ssn.total)
        for uid, job in ssn.jobs.items():
            if not job.tasks:
                continue   # nothing allocated, nothing to allocate or evict: share 0 (job_order's default)
            self.allocated[uid] = job.allocated.copy()
            self.shares[uid] = _share(job.allocated, self.inv)
        reg.add(hooks.Point.PREEMPTABLE, self.preemptable, key=self.preemptor_share)
        hierarchy = next((o.enabled("enableHierarchy") for t in ssn.conf.tiers for o in t if o.name == self.name),
                         False)
        if hierarchy:
            self._build_tree(ssn)
            reg.add(hooks.Point.QUEUE_ORDER, self.queue_order)
            reg.add(hooks.Point.RECLAIMABLE, self.reclaimable, key=_reclaimer_job)
        reg.add(hooks.Point.JOB_ORDER, self.job_order)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)

    def _build_tree(self, ssn: "session_mod.Session") -> None:
        """Every job of a known queue is a leaf (in queue name order: the first queue naming a node gives its
        weight); the tree refreshed once with what all of them have allocated."""
        tree = self.tree = hdrf.Tree(ssn.total)
        self.total_allocated = np.zeros(ssn.total.shape, dtype=np.float64)
        for job in sorted(ssn.jobs.values(), key=lambda j: (j.queue, j.uid)):
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            parts, weights = hdrf.paths_of(queue.obj.get("metadata", {}).get("annotations") or {})
            self.paths[queue.name] = parts
            request = np.zeros(ssn.total.shape, dtype=np.float64)
            for t in job.tasks.values():
                request += t.req
            allocated = self.allocated.get(job.uid)
            if allocated is None:
                allocated = job.allocated.copy()
            self.total_allocated += allocated
            tree.add_job(job.uid, parts, weights, allocated, request)
        tree.refresh(self.total_allocated)

    def queue_order(self, l: "jobs_mod.QueueInfo", r: "jobs_mod.QueueInfo") -> int:
        assert self.tree is not None
        v = self.tree.compare(self.paths.get(l.name, []), self.paths.get(r.name, []))
        return -1 if v < 0 else (1 if v > 0 else 0)

    def reclaimable(self, reclaimer: "tasks_mod.TaskInfo",
                    reclaimees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        tree, jobs = self.tree, self.ssn.jobs
        assert tree is not None and self.total_allocated is not None
        ljob = jobs.get(reclaimer.job)
        mine = self.allocated.get(reclaimer.job)
        if ljob is None or ljob.queue not in self.paths or mine is None:
            return []
        lparts = self.paths[ljob.queue]
        total = self.total_allocated + reclaimer.req
        victims = []
        tree.set_allocated(ljob.uid, mine + reclaimer.req)
        try:
            for t in reclaimees:
                rjob = jobs.get(t.job)
                theirs = self.allocated.get(t.job)
                if rjob is None or rjob.queue not in self.paths or theirs is None:
                    continue
                tree.set_allocated(rjob.uid, theirs - t.req)
                tree.refresh(total - t.req)
                if tree.compare(lparts, self.paths[rjob.queue]) < 0:
                    victims.append(t)
                tree.set_allocated(rjob.uid, theirs)   # (the reclaimer's own job: back to what it had, as upstream)
        finally:
            tree.set_allocated(ljob.uid, mine)
            tree.refresh(self.total_allocated)
        return victims

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
            if sign > 0:   # (a − r is a + (−1·r) to the bit, one numpy call fewer)
                alloc += task.req
            else:
                alloc -= task.req
            self.shares[task.job] = _share(alloc, self.inv)
            if self.tree is not None and self.total_allocated is not None and task.job in self.tree.leaves:
                self.total_allocated += sign * task.req
                self.tree.set_allocated(task.job, alloc)
                self.tree.refresh(self.total_allocated)

    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, 1)

    def on_deallocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, -1)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
