"""Victim bundles of gangpreempt and gangreclaim: who may be evicted together (actions/utils/bundle.go).

A candidate job's tasks in a domain are split in two bundles (`job_bundles`):
- *safe*: tasks whose eviction leaves the gang ready — taken one by one (lowest priority first, then
  uid) while the job keeps more than minMember ready tasks (ReadyTaskNum − minAvailable > 0), each
  role with a minTaskMember more than its minimum (only when minMember ≥ Σ minTaskMember, as
  CheckTaskReady), and each subGroupPolicy with `minSubGroups` a ready partition to spare (a partition
  already short of a pod costs nothing more; the first eviction from a ready one costs its policy one).
  A job that is not ready any more has all its candidates safe.
- *whole*: the rest — taking them breaks the gang; they are taken all or none.
`apply_allowed` keeps, after the UnifiedEvictable plugins answered, a whole bundle only if every task
was allowed and shrinks a safe one to its allowed tasks. `sort_for_preempt` / `sort_for_reclaim`:
safe bundles first; then the victim job's reverse JobOrder (preempt) or the victim queue's
VictimQueueOrder for the starving queue, else reverse QueueOrder (reclaim); then the highest return
(`roi`: what the bundle frees here, capped per dimension at the need, over what it costs the cluster
— a safe bundle costs nothing, so it comes first; a whole one costs every request of its job); then
job uid, first task uid, fewer tasks.

Must not: change session state.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Callable

import numpy as np

from vclite.scheduler.framework import subgroups
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import dims as dims_mod
    from vclite.scheduler.framework import jobs as jobs_mod

TaskInfo = tasks_mod.TaskInfo
TaskStatus = tasks_mod.TaskStatus
_READY = tasks_mod.ALLOCATED_STATUS | {TaskStatus.SUCCEEDED}


@dataclasses.dataclass(eq=False)
class Bundle:
    whole: bool
    job: "jobs_mod.JobInfo"
    tasks: list[TaskInfo]
    local: np.ndarray    # what its tasks free in the domain
    cost: np.ndarray     # what taking it costs the cluster: 0 for a safe bundle, the job's requests for a whole one
    # roi by need (need.tobytes()): `local` and `cost` never change, and gangevict reuses a bundle for the
    # gangs after the one it was made for (a session's gangs often ask the same need)
    rois: dict[bytes, float] = dataclasses.field(default_factory=dict, init=False, repr=False)


def _sum(tasks, like: np.ndarray) -> np.ndarray:
    out = np.zeros_like(like)
    for t in tasks:
        out += t.req
    return out


def _role_surplus(job: "jobs_mod.JobInfo") -> dict[str, int] | None:
    """Per role with a minTaskMember, the ready tasks it can lose (None: roles are not enforced)."""
    if job.min_available < job.task_min_total():
        return None
    ready: dict[str, int] = {}
    for t in job.tasks.values():
        if t.status in _READY or (t.status == TaskStatus.PENDING and t.best_effort):
            ready[t.role] = ready.get(t.role, 0) + 1
    return {role: ready.get(role, 0) - m for role, m in job.min_task_member.items()}


def _partitions(job: "jobs_mod.JobInfo") -> tuple[dict[str, tuple[int, int]], dict[tuple[int, int], bool],
                                                  dict[int, int]]:
    """For the policies with `minSubGroups`: each task's (policy, partition), which partitions are
    already short of a pod (broken), and each policy's ready partitions beyond its minimum."""
    where: dict[str, tuple[int, int]] = {}
    broken: dict[tuple[int, int], bool] = {}
    spare: dict[int, int] = {}
    for gi, g in enumerate(subgroups.groups(job)):
        spare[gi] = -g.minimum
        for pi, uids in enumerate(g.parts):
            n = sum(1 for uid in uids if job.tasks[uid].status in _READY
                    or (job.tasks[uid].status == TaskStatus.PENDING and job.tasks[uid].best_effort))
            broken[(gi, pi)] = n < g.size
            if not broken[(gi, pi)]:
                spare[gi] += 1
            for uid in uids:
                where[uid] = (gi, pi)
    return where, broken, spare


def job_bundles(job: "jobs_mod.JobInfo", local: list[TaskInfo]) -> list[Bundle]:
    """The safe and whole bundles of `local` (the job's candidates in one domain); empty ones left out."""
    if not local:
        return []
    local = sorted(local, key=lambda t: (t.priority, t.uid))
    like = local[0].req
    surplus = job.ready_task_num() - job.min_available
    if surplus < 0:
        return [Bundle(False, job, local, _sum(local, like), np.zeros_like(like))]
    roles = _role_surplus(job)
    where, broken, spare = _partitions(job)
    safe, whole = [], []
    for t in local:
        role_ok = roles is None or t.role not in roles or roles[t.role] > 0
        part = where.get(t.uid)
        group_ok = part is None or broken[part] or spare[part[0]] > 0
        if surplus > 0 and role_ok and group_ok:
            safe.append(t)
            surplus -= 1
            if roles is not None and t.role in roles:
                roles[t.role] -= 1
            if part is not None and not broken[part]:
                broken[part] = True
                spare[part[0]] -= 1
        else:
            whole.append(t)
    out = []
    if safe:
        out.append(Bundle(False, job, safe, _sum(safe, like), np.zeros_like(like)))
    if whole:
        out.append(Bundle(True, job, whole, _sum(whole, like), _sum(job.tasks.values(), like)))
    return out


def flatten(bundles: list[Bundle]) -> list[TaskInfo]:
    return [t for b in bundles for t in b.tasks]


def apply_allowed(bundles: list[Bundle], allowed: set[str]) -> list[Bundle]:
    """The bundles the plugins' answer leaves (task uids in `allowed`)."""
    out = []
    for b in bundles:
        kept = [t for t in b.tasks if t.uid in allowed]
        if b.whole:
            if kept and len(kept) == len(b.tasks):
                out.append(b)
        elif kept:
            out.append(dataclasses.replace(b, tasks=kept, local=_sum(kept, b.local)))
    return out


def _score(res: np.ndarray, need: np.ndarray, cols: np.ndarray, cap: bool) -> float:
    """Σ over `cols` of res/need (each res capped at the need when `cap`); `cols` where need > 0."""
    v = res[cols]
    if cap:
        v = np.minimum(v, need[cols])
    return float((v / need[cols]).sum())


def roi(b: Bundle, need: np.ndarray, dims: "dims_mod.Dims") -> float:
    """Local gain per unit of global cost over the dimensions `need` asks for (pods aside); +inf for
    a bundle that costs nothing."""
    cols = dims.not_pods & (need > 0)
    cost = _score(b.cost, need, cols, cap=False)
    if cost == 0:
        return math.inf
    return _score(b.local, need, cols, cap=True) / cost


def _tie(l: Bundle, r: Bundle) -> int:
    lk = (l.job.uid, l.tasks[0].uid if l.tasks else "", len(l.tasks))
    rk = (r.job.uid, r.tasks[0].uid if r.tasks else "", len(r.tasks))
    return -1 if lk < rk else (1 if lk > rk else 0)


def _sorted(bundles: list[Bundle], need: np.ndarray, dims: "dims_mod.Dims",
            policy: Callable[[Bundle, Bundle], int]) -> list[Bundle]:
    key = need.tobytes()
    scores = {}
    for b in bundles:
        v = b.rois.get(key)
        if v is None:
            v = b.rois[key] = roi(b, need, dims)
        scores[id(b)] = v

    def cmp(l: Bundle, r: Bundle) -> int:
        if l.whole != r.whole:
            return 1 if l.whole else -1
        v = policy(l, r)
        if v:
            return v
        if scores[id(l)] != scores[id(r)]:
            return -1 if scores[id(l)] > scores[id(r)] else 1
        return _tie(l, r)
    return sorted(bundles, key=functools.cmp_to_key(cmp))


def sort_for_preempt(bundles: list[Bundle], need: np.ndarray, dims: "dims_mod.Dims",
                     job_less: Callable) -> list[Bundle]:
    """`job_less(l, r)`: JobOrder; the job that would be scheduled last gives first."""
    def policy(l: Bundle, r: Bundle) -> int:
        if l.job is r.job:
            return 0
        return 1 if job_less(l.job, r.job) else -1
    return _sorted(bundles, need, dims, policy)


def sort_for_reclaim(bundles: list[Bundle], need: np.ndarray, dims: "dims_mod.Dims",
                     queue_first: Callable[[str, str], bool]) -> list[Bundle]:
    """`queue_first(a, b)`: queue a gives back before queue b."""
    def policy(l: Bundle, r: Bundle) -> int:
        lq, rq = l.job.queue, r.job.queue
        if lq == rq:
            return 0
        ij, ji = queue_first(lq, rq), queue_first(rq, lq)
        if ij == ji:
            return 0
        return -1 if ij else 1
    return _sorted(bundles, need, dims, policy)
