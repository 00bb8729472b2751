"""capacity: per-queue quotas by resource, with elastic sharing and reclaim down to `deserved`
(plugins/capacity/capacity.go), flat or, with `enableHierarchy: true`, over the queue tree.

Per queue (capacity_quota.QueueAttr): request/allocated/inqueue/elastic as proportion accounts them;
`deserved` = spec.deserved, `guarantee`, `capability` (unset = unlimited) and `realCapability`:
- flat (queues holding jobs): realCapability = (total − Σ guarantee of all queues)⁺ + guarantee,
  capped by capability; deserved capped by realCapability, then raised to guarantee;
- hierarchical (every queue; `spec.parent`, unset = `root`): the root's capability is unlimited
  unless it sets one, a child inherits what it leaves unset from its parent, realCapability =
  (parent's realCapability − Σ siblings' guarantees)⁺ + guarantee, capped by capability; the root
  deserves and guarantees the sums of its children's. Jobs belong in leaf queues only.
share = max allocated/deserved over deserved's dimensions, 1 for a queue without deserved.
Hooks:
- QueueOrder: higher spec.priority; then (hierarchy: leaves before inner queues, and two leaves
  compare the children of their deepest common ancestor) lower share, ties to queues with deserved.
- VictimQueueOrder (hierarchy): victims in queues closer to the preemptor's queue go first.
- Allocatable: queue Open, a leaf, and allocated + request ≤ realCapability on the requested
  dimensions, in the queue and every ancestor.
- JobEnqueueable: Reject for a non-leaf or non-Open queue; Permit without minResources; else
  minResources + allocated + inqueue − elastic ≤ realCapability, in the queue and every ancestor.
  JobEnqueued: inqueue += minResources (less gated pods), up the ancestors too.
- Preemptive (reclaim): allocated + request within realCapability, and ≤ deserved on some requested
  dimension (else, with `ancestorReclaimLevel` = k, on some ancestor up to k levels, not root).
- Reclaimable: per candidate, in victim order: it shares a dimension with the reclaimer; taking it
  keeps its queue at or above guarantee; its queue is over deserved on one of its dimensions (or
  deserved has none of them); with ancestorReclaimLevel, each ancestor of the victim up to k levels
  that the reclaimer does not share must be over deserved too.
- allocate/deallocate events keep allocated (and ancestors') and the queue's share current.
- Pods that opted in to the queue-allocation gate (SchedulingGatesQueueAdmission's reservation cache): those
  pending without the gate (their queue let them through) count in their queue's allocated for Allocatable,
  and a candidate Allocatable lets through joins them; allocate takes one out, deallocate puts it back.
- UnifiedEvictable (gangpreempt, gangreclaim): gangpreempt, every candidate; gangreclaim, per candidate
  in the order given (bundle order): taking it keeps its queue at or above guarantee, and its queue's
  deserved has none of its dimensions or it is over deserved on one of them (ancestors are not looked
  at, nor whether it shares a dimension with the starving job, as upstream); a broken queue tree: none.
Not ported: DRA quotas (`deviceclass/…` resources; vclite has no resource claims, the two DRA
arguments are accepted and change nothing), and the Simulate* hooks (topology-aware preemption and
hypernode search, which vclite lacks). Differences from Volcano: see docs/differences.md.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from vclite.api import resources, scheduling
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import eviction, hooks, plugin
from vclite.scheduler.framework import status as status_mod
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import capacity_quota as quota
from vclite.scheduler.plugins import proportion

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

QueueAttr = quota.QueueAttr
QUOTA_INSUFFICIENT = "queue resource quota insufficient"


@dataclasses.dataclass(frozen=True)
class Arguments:
    ancestor_reclaim_level: int = plugin.arg("ancestorReclaimLevel", 0)   # negative: 0, as Volcano
    dra: bool = plugin.arg("capacity.DynamicResourceAllocationEnable", False)
    dra_consumable: bool = plugin.arg("capacity.DRAConsumableCapacityEnable", False)


def _listed(q: "jobs_mod.QueueInfo", dims: dims_mod.Dims, *path: str) -> tuple[np.ndarray, np.ndarray]:
    """A resource list of the queue's spec as (values, named mask); absent entries are 0 / False."""
    cur = q.obj
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    try:
        parsed = resources.from_resource_list(cur if isinstance(cur, dict) else None)
    except ValueError:
        parsed = {}
    named = np.zeros(len(dims), dtype=bool)
    for name in parsed:
        if name in dims.index:
            named[dims.index[name]] = True
    return dims.vector(parsed), named


def _reclaimer_queue(ssn: "session_mod.Session"):
    jobs = ssn.jobs

    def key(reclaimer: "tasks_mod.TaskInfo") -> str | None:
        job = jobs.get(reclaimer.job)
        return job.queue if job is not None else None
    return key


class Capacity:
    name = "capacity"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments
        self.level = max(arguments.ancestor_reclaim_level, 0)
        self.attrs: dict[str, QueueAttr] = {}
        self.broken = ""   # why the queue tree could not be built (then nothing is allowed)
        self.reserved: dict[str, dict[str, "tasks_mod.TaskInfo"]] = {}   # queue -> pods its gate let through

    # ---- session open ----------------------------------------------------------------------------
    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.hierarchy = any(o.name == self.name and o.enabled("enableHierarchy") for t in ssn.conf.tiers for o in t)
        if self.hierarchy:
            self._build_tree(ssn)
        else:
            self._build_flat(ssn)
        self.reserved = _gate_reserved(ssn)
        reg.add(hooks.Point.QUEUE_ORDER, self.queue_order_tree if self.hierarchy else self.queue_order)
        if self.hierarchy and not self.broken:
            reg.add(hooks.Point.VICTIM_QUEUE_ORDER, self.victim_queue_order)
        reg.add(hooks.Point.RECLAIMABLE, self.reclaimable, key=_reclaimer_queue(ssn))
        reg.add(hooks.Point.UNIFIED_EVICTABLE, self.unified_evictable)
        reg.add(hooks.Point.PREEMPTIVE, self.preemptive)
        reg.add(hooks.Point.ALLOCATABLE, self.allocatable)
        reg.add(hooks.Point.JOB_ENQUEUEABLE, self.job_enqueueable)
        reg.add(hooks.Point.JOB_ENQUEUED, self.job_enqueued)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)

    def _new_attr(self, q: "jobs_mod.QueueInfo") -> QueueAttr:
        dims = self.ssn.dims
        deserved, listed = _listed(q, dims, "spec", "deserved")
        listed |= q.guarantee > 0
        z = dims.zeros
        return QueueAttr(q.name, deserved, listed, q.guarantee.copy(), q.capability.copy(), z(), z(), z(), z(), z())

    def _build_flat(self, ssn: "session_mod.Session") -> None:
        total_guarantee = ssn.dims.zeros()
        for q in ssn.queues.values():
            total_guarantee += q.guarantee
        names = [job.queue for job in ssn.jobs.values() if job.queue in ssn.queues] + \
            [n for n in ssn.waiting if n in ssn.queues]
        for name in names:
            if name not in self.attrs:
                attr = self.attrs[name] = self._new_attr(ssn.queues[name])
                attr.real_capability = proportion.real_capability(ssn.total, total_guarantee, attr.guarantee,
                                                                  attr.capability)
        for job in ssn.jobs.values():
            attr = self.attrs.get(job.queue)
            if attr is not None:
                proportion.account(job, attr)
        for attr in self.attrs.values():
            attr.deserved = np.maximum(np.minimum(attr.deserved, attr.real_capability), attr.guarantee)
            attr.share = quota.share(attr.allocated, attr.deserved, ssn.dims)

    def _build_tree(self, ssn: "session_mod.Session") -> None:
        dims = ssn.dims
        for q in ssn.queues.values():
            self.attrs[q.name] = self._new_attr(q)
        root = self.attrs.get(quota.ROOT)
        if root is None:
            self.broken = f'the root queue "{quota.ROOT}" does not exist'
            return
        try:
            quota.link(self.attrs, {q.name: q.parent for q in ssn.queues.values()})
        except quota.HierarchyError as e:
            self.broken = str(e)
            return
        for job in ssn.jobs.values():
            attr = self.attrs.get(job.queue)
            if attr is None or attr.children:
                continue   # (Volcano stops scheduling everything here: see docs/differences.md)
            before = (attr.allocated.copy(), attr.request.copy(), attr.inqueue.copy(), attr.elastic.copy())
            proportion.account(job, attr)
            deltas = [new - old for new, old in zip((attr.allocated, attr.request, attr.inqueue, attr.elastic), before)]
            for name in attr.ancestors:
                up = self.attrs[name]
                for field, delta in zip((up.allocated, up.request, up.inqueue, up.elastic), deltas):
                    field += delta
        spec_cap, named = _listed(ssn.queues[quota.ROOT], dims, "spec", "capability")
        if dims_mod.is_empty(spec_cap, dims):
            root.capability = np.full(len(dims), np.inf)
            unlimited = (ssn.total > 0) | ~dims.not_pods
            unlimited[dims.index[dims_mod.CPU]] = unlimited[dims.index[dims_mod.MEMORY]] = True
            root.real_capability = np.where(unlimited, np.inf, 0.0)
        else:
            root.capability = np.where(named | ~self._scalar_mask(), spec_cap, np.inf)
            root.real_capability = np.where(np.isinf(root.capability), 0.0, root.capability)
        quota.settle(self.attrs, root)
        for attr in self.attrs.values():
            attr.share = quota.share(attr.allocated, attr.deserved, dims)

    def _scalar_mask(self) -> np.ndarray:
        dims = self.ssn.dims
        mask = np.ones(len(dims), dtype=bool)
        mask[dims.index[dims_mod.CPU]] = mask[dims.index[dims_mod.MEMORY]] = False
        return mask

    # ---- ordering --------------------------------------------------------------------------------
    def _compare(self, l: str, r: str) -> int:
        la, ra = self.attrs.get(l), self.attrs.get(r)
        if la is None or ra is None:
            return 0
        return quota.compare_share(la, ra, self.ssn.dims)

    def queue_order(self, l: "jobs_mod.QueueInfo", r: "jobs_mod.QueueInfo") -> int:
        if l.priority != r.priority:
            return -1 if l.priority > r.priority else 1
        return self._compare(l.name, r.name)

    def queue_order_tree(self, l: "jobs_mod.QueueInfo", r: "jobs_mod.QueueInfo") -> int:
        if l.priority != r.priority:
            return -1 if l.priority > r.priority else 1
        la, ra = self.attrs.get(l.name), self.attrs.get(r.name)
        if la is None or ra is None or self.broken:
            return 0
        lleaf, rleaf = not la.children, not ra.children
        if lleaf != rleaf:
            return -1 if lleaf else 1
        if not lleaf:
            return self._compare(l.name, r.name)
        level = quota.queue_level(la, ra)
        lp = la.ancestors[level + 1] if level + 1 < len(la.ancestors) else la.name
        rp = ra.ancestors[level + 1] if level + 1 < len(ra.ancestors) else ra.name
        return self._compare(lp, rp)

    def victim_queue_order(self, l: "jobs_mod.QueueInfo", r: "jobs_mod.QueueInfo",
                           preemptor: "jobs_mod.QueueInfo") -> int:
        la, ra, pa = self.attrs.get(l.name), self.attrs.get(r.name), self.attrs.get(preemptor.name)
        if la is None or ra is None or pa is None:
            return 0
        ll, rl = quota.queue_level(la, pa), quota.queue_level(ra, pa)
        return 0 if ll == rl else (-1 if ll > rl else 1)

    # ---- admission -------------------------------------------------------------------------------
    def _chain(self, attr: QueueAttr) -> list[QueueAttr]:
        """The queue, then its ancestors up to the root (only the queue when flat)."""
        return [attr] + [self.attrs[a] for a in reversed(attr.ancestors)] if self.hierarchy else [attr]

    def allocatable(self, queue: "jobs_mod.QueueInfo", task: "tasks_mod.TaskInfo") -> bool:
        ssn = self.ssn
        if not queue.is_open:
            ssn.note_task_rejection(task, f'queue "{queue.name}" is {queue.state}')
            return False
        if self.broken:
            ssn.note_task_rejection(task, f"capacity cannot use the queue tree: {self.broken}")
            return False
        attr = self.attrs.get(queue.name)
        if attr is None:
            return False
        if self.hierarchy and attr.children:
            ssn.note_task_rejection(task, f'queue "{queue.name}" is not a leaf queue')
            return False
        held = self._reserved_besides(queue.name, task)
        for a in self._chain(attr):
            used = a.allocated + held if a is attr and held is not None else a.allocated
            short = quota.insufficient(used + task.req, a.real_capability, task.req, ssn.dims)
            if short:
                dims = ssn.dims
                whose = f'queue "{a.name}"' if a is attr else f'ancestor queue "{a.name}" of queue "{queue.name}"'
                ssn.note_task_rejection(task, f"task needs {dims.describe(task.req, short)} but {whose} can use "
                                              f"{dims.describe(a.real_capability, short)} and has "
                                              f"{dims.describe(a.allocated, short)} allocated"
                                              + (" and pods its queue-allocation gate let through"
                                                 if used is not a.allocated else ""))
                return False
        if task.queue_allocation_opt_in:
            self.reserved.setdefault(queue.name, {})[task.uid] = task
        return True

    def _reserved_besides(self, queue: str, task: "tasks_mod.TaskInfo") -> "np.ndarray | None":
        """What the queue's reserved pods (not `task`) ask, or None when it has none."""
        held = None
        for uid, t in (self.reserved.get(queue) or {}).items():
            if uid != task.uid:
                held = t.req.copy() if held is None else held + t.req
        return held

    def job_enqueueable(self, job: "jobs_mod.JobInfo") -> hooks.Vote:
        ssn = self.ssn
        queue = ssn.queues[job.queue]
        if self.broken:
            ssn.note_enqueue_rejection(job, status_mod.Reason.NOT_ENQUEUEABLE,
                                       f"capacity cannot use the queue tree: {self.broken}")
            return hooks.Vote.REJECT
        attr = self.attrs.get(job.queue)
        if self.hierarchy and attr is not None and attr.children:
            ssn.note_enqueue_rejection(job, status_mod.Reason.NOT_ENQUEUEABLE,
                                       f'queue "{queue.name}" is not a leaf queue: jobs go to leaf queues')
            return hooks.Vote.REJECT
        if not queue.is_open:
            ssn.note_enqueue_rejection(job, status_mod.Reason.QUEUE_NOT_OPEN, f'queue "{queue.name}" is {queue.state}')
            return hooks.Vote.REJECT
        min_req = job.min_resources
        if min_req is None or attr is None:
            return hooks.Vote.PERMIT
        for a in self._chain(attr):
            short = quota.insufficient(min_req + a.allocated + a.inqueue - a.elastic, a.real_capability, min_req,
                                       ssn.dims)
            if short:
                where = "" if a is attr else f' (ancestor queue "{a.name}")'
                why = status_mod.resource_names(QUOTA_INSUFFICIENT, "insufficient", [ssn.dims.names[i] for i in short])
                ssn.note_enqueue_rejection(job, scheduling.ConditionReason.NOT_ENOUGH_RESOURCES, why + where)
                return hooks.Vote.REJECT
        return hooks.Vote.PERMIT

    def job_enqueued(self, job: "jobs_mod.JobInfo") -> None:
        attr = self.attrs.get(job.queue)
        if attr is None or job.min_resources is None:
            return
        add = job.deduct_gated(job.min_resources)
        for a in self._chain(attr):
            a.inqueue = a.inqueue + add

    # ---- eviction --------------------------------------------------------------------------------
    def preemptive(self, queue: "jobs_mod.QueueInfo", task: "tasks_mod.TaskInfo") -> bool:
        if self.broken or not queue.is_open:
            return False
        attr = self.attrs.get(queue.name)
        if attr is None:
            return False
        dims = self.ssn.dims
        future = attr.allocated + task.req
        if quota.insufficient(future, attr.real_capability, task.req, dims):
            return False
        if quota.below_deserved_somewhere(future, attr.deserved, task.req, dims):
            return True
        if self.hierarchy:
            for depth in range(1, self.level + 1):
                name = quota.ancestor_at_depth(attr, depth)
                if name is None or name == quota.ROOT:
                    continue
                up = self.attrs[name]
                if quota.below_deserved_somewhere(up.allocated + task.req, up.deserved, task.req, dims):
                    return True
        return False

    def reclaimable(self, reclaimer: "tasks_mod.TaskInfo",
                    reclaimees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        ssn, dims = self.ssn, self.ssn.dims
        job = ssn.jobs.get(reclaimer.job)
        mine = self.attrs.get(job.queue) if job is not None else None
        if self.broken or mine is None:
            return []
        ancestors_checked = self.hierarchy and self.level > 0
        victims = []
        allocations: dict[str, np.ndarray] = {}
        for t in reclaimees:   # (already in victim order: BuildVictimsPriorityQueue)
            victim_job = ssn.jobs.get(t.job)
            attr = self.attrs.get(victim_job.queue) if victim_job is not None else None
            if attr is None or not quota.shares_dimension(t.req, reclaimer.req, dims, with_pods=False):
                continue
            allocated = allocations.setdefault(attr.name, attr.allocated.copy())
            if not dims_mod.less_equal(attr.guarantee, allocated - t.req):
                continue
            if not quota.shares_dimension(t.req, attr.deserved, dims, with_pods=True):
                if ancestors_checked and self._share_close_ancestor(mine, attr) and \
                        not quota.shares_dimension(reclaimer.req, mine.deserved, dims, with_pods=True):
                    continue
            elif not quota.over_deserved(allocated, attr.deserved, attr.listed, t.req, dims):
                continue
            taken = []
            if ancestors_checked:
                ok = True
                for depth in range(1, self.level + 1):
                    name = self._ancestor_to_check(mine, attr, depth)
                    if name is None:
                        continue
                    up = self.attrs[name]
                    up_allocated = allocations.setdefault(name, up.allocated.copy())
                    taken.append(up_allocated)
                    if not quota.shares_dimension(t.req, up.deserved, dims, with_pods=True):
                        continue
                    if not quota.over_deserved(up_allocated, up.deserved, up.listed, t.req, dims):
                        ok = False
                        break
                if not ok:
                    continue
            allocated -= t.req
            for up_allocated in {id(a): a for a in taken}.values():
                up_allocated -= t.req
            victims.append(t)
        return victims

    def unified_evictable(self, ctx: "eviction.Context",
                          candidates: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        if ctx.kind == eviction.Kind.GANG_PREEMPT:
            return list(candidates)   # (no quota question within one queue)
        if self.broken:
            return []
        ssn, dims = self.ssn, self.ssn.dims
        victims = []
        allocations: dict[str, np.ndarray] = {}
        # (queue, request) -> whether the request shares a dimension with the queue's deserved, and the
        # columns over_deserved compares: both depend on neither `allocated` nor the candidate's order,
        # and a gang's candidates are hundreds of pods of a few shapes
        asked: dict[tuple[str, bytes], tuple[bool, np.ndarray]] = {}
        for t in candidates:
            job = ssn.jobs.get(t.job)
            attr = self.attrs.get(job.queue) if job is not None else None
            if attr is None:
                continue
            allocated = allocations.setdefault(attr.name, attr.allocated.copy())
            if not dims_mod.less_equal(attr.guarantee, allocated - t.req):
                continue
            key = (attr.name, t.req.tobytes())
            known = asked.get(key)
            if known is None:
                known = asked[key] = (quota.shares_dimension(t.req, attr.deserved, dims, with_pods=True),
                                      quota.deserved_columns(attr.deserved, attr.listed, t.req, dims))
            if known[0] and not bool((allocated > attr.deserved)[known[1]].any()):   # (not over_deserved)
                continue
            allocated -= t.req
            victims.append(t)
        return victims

    def _share_close_ancestor(self, a: QueueAttr, b: QueueAttr) -> bool:
        """sharesAnyNonRootAncestorWithinLevel."""
        mine = {quota.ancestor_at_depth(a, d) for d in range(1, self.level + 1)} - {None, quota.ROOT}
        theirs = {quota.ancestor_at_depth(b, d) for d in range(1, self.level + 1)}
        return bool(mine & theirs)

    def _ancestor_to_check(self, reclaimer: QueueAttr, reclaimee: QueueAttr, depth: int) -> str | None:
        """getReclaimeeAncestorToCheck: the victim's ancestor `depth` levels up, unless it is the root
        or the reclaimer's ancestor at that depth too."""
        theirs = quota.ancestor_at_depth(reclaimee, depth)
        if theirs is None or theirs == quota.ROOT or theirs == quota.ancestor_at_depth(reclaimer, depth):
            return None
        return theirs

    # ---- events ----------------------------------------------------------------------------------
    def _update(self, task: "tasks_mod.TaskInfo", sign: int) -> None:
        job = self.ssn.jobs.get(task.job)
        attr = self.attrs.get(job.queue) if job is not None else None
        if attr is None:
            return
        attr.allocated = attr.allocated + sign * task.req
        attr.share = quota.share(attr.allocated, attr.deserved, self.ssn.dims)
        if self.hierarchy:   # (Volcano leaves the ancestors' shares as the session opened with)
            for name in attr.ancestors:
                up = self.attrs[name]
                up.allocated = up.allocated + sign * task.req

    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, 1)
        for held in self.reserved.values():
            held.pop(task.uid, None)

    def on_deallocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, -1)
        job = self.ssn.jobs.get(task.job)
        if task.queue_allocation_opt_in and job is not None:   # (back in the reservation on rollback)
            self.reserved.setdefault(job.queue, {})[task.uid] = task

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None


def _gate_reserved(ssn: "session_mod.Session") -> dict[str, dict[str, "tasks_mod.TaskInfo"]]:
    """buildQueueReservedTasksCache: per queue, the pending pods that opted in and no longer carry a gate."""
    out: dict[str, dict[str, "tasks_mod.TaskInfo"]] = {}
    for job in ssn.jobs.values():
        for t in (job.index.get(tasks_mod.TaskStatus.PENDING) or {}).values():
            if not t.scheduling_gated and t.queue_allocation_opt_in:
                out.setdefault(job.queue, {})[t.uid] = t
    return out
