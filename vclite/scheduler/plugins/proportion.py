"""proportion: share the cluster between queues by weight (plugins/proportion/proportion.go).

Per queue with at least one job in the session (vectors over the session's dimensions):
- request = Σ req of placed (Allocated/Binding/Bound/Running) and Pending tasks; allocated =
  Σ placed; inqueue = Σ over Inqueue jobs with minResources of max(0, minResources − job
  allocated) (also Running jobs whose placed tasks reach minMember: a job whose tasks finished
  reserves nothing, as Volcano's CalculateAllocatedTaskNum); elastic =
  Σ max(0, job allocated − minResources);
- capability (cpu/memory ≤ 0 or absent -> unlimited), guarantee, realCapability =
  (total − Σ guarantee of all queues)⁺ + guarantee, capped by capability;
- deserved: water-filling (`water_fill`), share = max over deserved's dimensions of
  allocated / deserved.
Hooks: QueueOrder (higher spec.priority, then lower share), Overused (deserved ≤ allocated),
Allocatable (queue Open and allocated + req ≤ deserved on the task's requested dimensions),
JobEnqueueable (Reject if the queue is not Open; Permit without minResources; else Permit iff
minResources + allocated + inqueue − elastic ≤ realCapability on minResources' dimensions, with a
plain message otherwise), JobEnqueued (inqueue += minResources less gated pods), and allocate/deallocate events
keeping `allocated` and the share current within the session.
Reclaimable: per victim queue, from its current `allocated`, a candidate is a victim while that
queue's allocated ≰ deserved (then allocated −= its request). Preemptive(queue, task): the
Allocatable test without a note (queue Open, allocated + req ≤ deserved on the task's dimensions;
gangreclaim asks it with the sum of a gang's pending requests). No UnifiedEvictable, as upstream: with
gangreclaim, proportion does not keep victim queues at their deserved (capacity does).
What a job adds to `inqueue` (at session open and on JobEnqueued) leaves out the requests of its
scheduling-gated pods (JobInfo.deduct_gated), as Volcano's DeductSchGatedResources: pods waiting for their
gates hold no room that other jobs could be admitted to.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from vclite.api import scheduling
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin
from vclite.scheduler.framework import status as status_mod
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

MAX_ROUNDS = 10_000  # water-filling always ends far sooner; this only guards against float noise
QUOTA_INSUFFICIENT = "queue resource quota insufficient"


@dataclasses.dataclass(eq=False)
class QueueAttr:
    name: str
    weight: int
    request: np.ndarray
    allocated: np.ndarray
    inqueue: np.ndarray
    elastic: np.ndarray
    guarantee: np.ndarray
    real_capability: np.ndarray
    deserved: np.ndarray
    share: float = 0.0


def real_capability(total: np.ndarray, total_guarantee: np.ndarray, guarantee: np.ndarray,
                    capability: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(total - total_guarantee, 0) + guarantee, capability)


_FILLED: dict[tuple, list[np.ndarray]] = {}   # water_fill's results by input (a pure function's memo)
FILLED_LIMIT = 256


def water_fill(total: np.ndarray, attrs: list[QueueAttr], dims: dims_mod.Dims) -> None:
    """Set each queue's `deserved`: repeatedly split what remains by weight among unmet queues,
    capped by realCapability and by request and raised to guarantee; a queue is met once its
    request fits or its deserved stops changing; stop when nothing remains or nothing changed.
    Sessions that see the same queues asking for the same resources (a chain of equal jobs) reuse
    the result worked out for the first of them."""
    key = (dims.names, total.tobytes(), *((a.weight, a.request.tobytes(), a.real_capability.tobytes(),
                                         a.guarantee.tobytes(), a.deserved.tobytes()) for a in attrs))
    hit = _FILLED.get(key)
    if hit is None:
        _water_fill(total, attrs, dims)
        if len(_FILLED) >= FILLED_LIMIT:
            _FILLED.clear()
        hit = _FILLED[key] = [a.deserved.copy() for a in attrs]
    for a, deserved in zip(attrs, hit):
        a.deserved = deserved.copy()


def _water_fill(total: np.ndarray, attrs: list[QueueAttr], dims: dims_mod.Dims) -> None:
    remaining = total.astype(np.float64).copy()
    met: set[int] = set()
    for _ in range(MAX_ROUNDS):
        unmet = [a for a in attrs if id(a) not in met]
        weights = sum(a.weight for a in unmet)
        if weights == 0:
            break
        before = remaining.copy()
        increased, decreased = dims.zeros(), dims.zeros()
        for a in unmet:
            old = a.deserved
            new = old + remaining * (a.weight / weights)
            new = np.maximum(np.minimum(np.minimum(new, a.real_capability), a.request), a.guarantee)
            a.deserved = new
            if dims_mod.less_equal(a.request, new) or np.array_equal(new, old):
                met.add(id(a))
            diff = new - old
            increased += np.maximum(diff, 0)
            decreased += np.maximum(-diff, 0)
        remaining = np.maximum(remaining - increased + decreased, 0)
        if dims_mod.is_empty(remaining, dims) or np.array_equal(remaining, before):
            break


def share(allocated: np.ndarray, deserved: np.ndarray) -> float:
    """max over dimensions with deserved > 0 of allocated / deserved (0 if there are none). With Python floats
    (asked after every placement): the same divisions as on arrays, and a NaN wins as in numpy's max."""
    out = None
    for a, d in zip(allocated.tolist(), deserved.tolist()):
        if d >= dims_mod.TOLERANCE:
            q = a / d
            if out is None or q > out or q != q:
                out = q
                if q != q:
                    break
    return 0.0 if out is None else out


def account(job: "jobs_mod.JobInfo", attr: QueueAttr) -> None:
    """Add the job to its queue's request, allocated, inqueue and elastic (also capacity's)."""
    if not job.tasks and job.phase == scheduling.PodGroupPhase.PENDING:
        return   # a waiting PodGroup without pods adds nothing (every term below is zero)
    for t in job.tasks.values():
        if t.status in tasks_mod.ALLOCATED_STATUS:
            attr.allocated += t.req
            attr.request += t.req
        elif t.status == tasks_mod.TaskStatus.PENDING:
            attr.request += t.req
    min_res = job.min_resources
    phase = job.phase
    if min_res is not None and (phase == scheduling.PodGroupPhase.INQUEUE or (
            phase == scheduling.PodGroupPhase.RUNNING and job.allocated_task_num() >= job.min_available)):
        attr.inqueue += job.deduct_gated(np.maximum(min_res - job.allocated, 0))
    attr.elastic += np.maximum(job.allocated - (min_res if min_res is not None else 0), 0)


def _any_reclaimer(reclaimer: "tasks_mod.TaskInfo") -> tuple:
    return ()   # Reclaimable looks at the victims' queues only


class Proportion:
    name = "proportion"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments
        self.attrs: dict[str, QueueAttr] = {}

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        dims = ssn.dims
        total_guarantee = dims.zeros()
        for q in ssn.queues.values():
            total_guarantee += q.guarantee
        def attr_of(name: str) -> QueueAttr:
            attr = self.attrs.get(name)
            if attr is None:
                q = ssn.queues[name]
                attr = self.attrs[name] = QueueAttr(
                    q.name, q.weight, dims.zeros(), dims.zeros(), dims.zeros(), dims.zeros(), q.guarantee.copy(),
                    real_capability(ssn.total, total_guarantee, q.guarantee, q.capability), dims.zeros())
            return attr

        for job in ssn.jobs.values():
            account(job, attr_of(job.queue))
        for name in ssn.waiting:   # queues whose jobs all wait (they add nothing but take part)
            attr_of(name)
        water_fill(ssn.total, list(self.attrs.values()), dims)
        for attr in self.attrs.values():
            attr.share = share(attr.allocated, attr.deserved)
        reg.add(hooks.Point.QUEUE_ORDER, self.queue_order)
        reg.add(hooks.Point.OVERUSED, self.overused)
        reg.add(hooks.Point.ALLOCATABLE, self.allocatable)
        reg.add(hooks.Point.JOB_ENQUEUEABLE, self.job_enqueueable)
        reg.add(hooks.Point.JOB_ENQUEUED, self.job_enqueued)
        reg.add(hooks.Point.RECLAIMABLE, self.reclaimable, key=_any_reclaimer)
        reg.add(hooks.Point.PREEMPTIVE, self.preemptive)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)

    # ---- hooks -----------------------------------------------------------------------------------
    def _share(self, name: str) -> float:
        attr = self.attrs.get(name)
        return attr.share if attr is not None else 0.0

    def queue_order(self, l: "jobs_mod.QueueInfo", r: "jobs_mod.QueueInfo") -> int:
        if l.priority != r.priority:
            return -1 if l.priority > r.priority else 1
        ls, rs = self._share(l.name), self._share(r.name)
        return 0 if ls == rs else (-1 if ls < rs else 1)

    def overused(self, queue: "jobs_mod.QueueInfo") -> bool:
        attr = self.attrs.get(queue.name)
        return attr is not None and dims_mod.less_equal(attr.deserved, attr.allocated)

    def allocatable(self, queue: "jobs_mod.QueueInfo", task: "tasks_mod.TaskInfo") -> bool:
        attr = self.attrs.get(queue.name)
        if attr is None:
            return False
        if not queue.is_open:
            self.ssn.note_task_rejection(task, f'queue "{queue.name}" is {queue.state}')
            return False
        dims = self.ssn.dims
        if dims_mod.within(attr.allocated.tolist(), task.req.tolist(), attr.deserved.tolist(), dims.pods):
            return True
        cols = (task.req > 0) & dims.not_pods
        short = list(np.flatnonzero(cols & (attr.allocated + task.req > attr.deserved + dims_mod.TOLERANCE)))
        self.ssn.note_task_rejection(task, f'task needs {dims.describe(task.req, short)} but queue "{queue.name}" '
                                           f"deserves {dims.describe(attr.deserved, short)} and has "
                                           f"{dims.describe(attr.allocated, short)} allocated")
        return False

    def preemptive(self, queue: "jobs_mod.QueueInfo", task: "tasks_mod.TaskInfo") -> bool:
        attr = self.attrs.get(queue.name)
        if attr is None or not queue.is_open:
            return False
        cols = (task.req > 0) & self.ssn.dims.not_pods
        return dims_mod.less_equal(attr.allocated + task.req, attr.deserved, cols)

    def reclaimable(self, reclaimer: "tasks_mod.TaskInfo",
                    reclaimees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        victims = []
        allocations: dict[str, np.ndarray] = {}
        for t in reclaimees:
            job = self.ssn.jobs.get(t.job)
            attr = self.attrs.get(job.queue) if job is not None else None
            if attr is None:
                continue
            allocated = allocations.setdefault(attr.name, attr.allocated.copy())
            if not dims_mod.less_equal(allocated, attr.deserved):
                allocated -= t.req
                victims.append(t)
        return victims

    def job_enqueueable(self, job: "jobs_mod.JobInfo") -> hooks.Vote:
        queue = self.ssn.queues[job.queue]
        if not queue.is_open:
            self.ssn.note_enqueue_rejection(job, status_mod.Reason.QUEUE_NOT_OPEN,
                                            f'queue "{queue.name}" is {queue.state}')
            return hooks.Vote.REJECT
        min_req = job.min_resources
        if min_req is None:
            return hooks.Vote.PERMIT
        attr = self.attrs[job.queue]
        used = [a + q - e for a, q, e in zip(attr.allocated.tolist(), attr.inqueue.tolist(), attr.elastic.tolist())]
        if not dims_mod.exceeds(used, min_req.tolist(), attr.real_capability.tolist(), self.ssn.dims.pods):
            return hooks.Vote.PERMIT   # (the check below, with Python floats: it finds no short dimension)
        used = attr.allocated + attr.inqueue - attr.elastic
        cols = (min_req > 0) & self.ssn.dims.not_pods
        short = cols & (min_req + used > attr.real_capability + dims_mod.TOLERANCE)
        if not short.any():
            return hooks.Vote.PERMIT
        self.ssn.note_enqueue_rejection(job, scheduling.ConditionReason.NOT_ENOUGH_RESOURCES,
                                        self._quota_message(queue.name, min_req, attr.real_capability - used, short))
        return hooks.Vote.REJECT

    def _quota_message(self, queue: str, need: np.ndarray, room: np.ndarray, short: np.ndarray) -> str:
        dims = self.ssn.dims
        cols = list(np.flatnonzero(short))
        room = np.maximum(room, 0)
        if len(cols) == 1:
            i = cols[0]
            most = dims.format(dims.names[i], float(room[i]))
        else:
            most = dims.describe(room, cols)
        return (f'{status_mod.resource_names(QUOTA_INSUFFICIENT, "insufficient", [dims.names[i] for i in cols])}; '
                f'job needs {dims.describe(need, cols)} but queue "{queue}" can get at most {most}')

    def job_enqueued(self, job: "jobs_mod.JobInfo") -> None:
        if job.min_resources is not None:
            self.attrs[job.queue].inqueue += job.deduct_gated(job.min_resources)

    def _update(self, task: "tasks_mod.TaskInfo", sign: int) -> None:
        attr = self.attrs.get(self.ssn.jobs[task.job].queue)
        if attr is not None:
            if sign > 0:   # (a − r is a + (−1·r) to the bit, one numpy call fewer)
                attr.allocated += task.req
            else:
                attr.allocated -= task.req
            attr.share = share(attr.allocated, attr.deserved)

    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, 1)

    def on_deallocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._update(task, -1)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None

