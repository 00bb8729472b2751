"""What `preempt` and `reclaim` share: who may be evicted, in which order, on which nodes (§3.2, §3.4).

- `preemptable(task)`: the pod's `volcano.sh/preemptable` annotation, else its label (Go's
  ParseBool spellings; any other value means false), else true; `preemptable_object` the same for a
  PodGroup (gangpreempt and gangreclaim: IsJobPreemptableForGangEviction).
- `never_preempts(task, never_classes(ssn))`: the pod's `spec.preemptionPolicy` is `Never`, or it
  sets none and its PriorityClass's is (Kubernetes' admission copies it into the pod).
- `Placed`: the tasks that sit on each node when the action starts (statuses are read when used,
  so evictions made meanwhile are seen), and per-node upper bounds of what evictions could free.
- `candidate_rows`: nodes a task could use once pods are evicted: every predicate failure on
  them is `resolvable` (Volcano's PredicateForPreemptAction); resources are not looked at.
- `could_fit`: vectorised ValidateVictims with an upper bound of the victims, to skip at once the
  nodes where even evicting every candidate would not make room.
- `victims_fit`: ValidateVictims (request ≤ future idle + Σ victims); `holds`: one node's fit.
- `node_order`: the order nodes are tried in — NodeOrder score (preempt only), then fewer pipelined
  reservations (Volcano's ties are random; claimed nodes last keeps mass preemption linear), then
  name.
- `victim_less` / `victim_queue` / `in_victim_order`: BuildVictimsPriorityQueue's order — same job:
  reverse TaskOrder; different queues: VictimQueueOrder for the preemptor's queue, else reverse
  QueueOrder; same queue: reverse plugin JobOrder,
  then reverse TaskOrder. Candidates are handed to the Preemptable / Reclaimable plugins in this
  order too (Volcano hands them in map order), so the plugins that allow "up to k victims" (gang,
  proportion, drf) allow the ones that would be evicted first, and the outcome is deterministic.
- `Hopeless`: remembers, until any node changes, the nodes where the victims the plugins chose
  could not make room, per evictor profile (request, plugin keys, and what fixes the candidate
  list) — so many equal preemptors facing a full cluster cost one pass over the nodes, not one
  each. Exact when every Preemptable / Reclaimable function was registered with a `key`
  (hooks.py); otherwise it remembers nothing.
- `fits_after(ssn, queue, task, row)`: preempt's stop test after each tentative eviction: the
  queue may take the task (Allocatable), its request fits the node's future idle, and every
  predicate passes there.

Must not: change session state (the actions evict and pipeline through statements).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import numpy as np

from vclite.api import batch, meta
from vclite.scheduler.framework import hooks, pqueue
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

TaskInfo = tasks_mod.TaskInfo
TaskStatus = tasks_mod.TaskStatus
PREEMPTABLE_STATUS = frozenset({TaskStatus.BOUND, TaskStatus.RUNNING})  # Volcano's PreemptableStatus
_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
NEVER = "Never"


def _parse_bool(value: object) -> bool:
    return str(value) in _TRUE  # Go strconv.ParseBool; an invalid value counts as false, as Volcano


def preemptable(task: TaskInfo) -> bool:
    return preemptable_object(task.pod)


def preemptable_object(obj: dict) -> bool:
    """`volcano.sh/preemptable` of a pod or a PodGroup: the annotation, else the label, else true."""
    annotations = meta.annotations(obj)
    if batch.PREEMPTABLE in annotations:
        return _parse_bool(annotations[batch.PREEMPTABLE])
    labels = meta.labels(obj)
    if batch.PREEMPTABLE in labels:
        return _parse_bool(labels[batch.PREEMPTABLE])
    return True


def never_preempts(task: TaskInfo, never_classes: frozenset[str] = frozenset()) -> bool:
    """`spec.preemptionPolicy: Never`; if the pod sets none, its PriorityClass's (as Kubernetes'
    Priority admission would have copied it; vclite's own API does not)."""
    spec = task.pod.get("spec") or {}
    policy = spec.get("preemptionPolicy")
    if policy is not None:
        return policy == NEVER
    return spec.get("priorityClassName") in never_classes


def never_classes(ssn: "session_mod.Session") -> frozenset[str]:
    """Names of the PriorityClasses whose preemptionPolicy is Never."""
    return frozenset(meta.name(c) for c in ssn.priority_classes if c.get("preemptionPolicy") == NEVER)


class Placed:
    """The session's tasks on each node (rows), taken when an action starts."""

    def __init__(self, ssn: "session_mod.Session"):
        self.ssn = ssn
        self.by_row: dict[int, list[TaskInfo]] = {}
        index = ssn.nodes.index
        for job in ssn.jobs.values():
            for task in job.tasks.values():
                row = index.get(task.node) if task.node else None
                if row is not None:
                    self.by_row.setdefault(row, []).append(task)
        self._bounds: dict[object, np.ndarray] = {}
        self._preemptable: dict[str, bool] = {}
        self._jobs_on_nodes: set[str] | None = None

    def on(self, row: int, accept: Callable[[TaskInfo], bool]) -> list[TaskInfo]:
        return [t for t in self.by_row.get(row, ()) if accept(t)]

    def has_tasks(self, job: str) -> bool:
        """Whether the job had tasks on nodes when the action started."""
        if self._jobs_on_nodes is None:
            self._jobs_on_nodes = {t.job for tasks in self.by_row.values() for t in tasks}
        return job in self._jobs_on_nodes

    def preemptable(self, task: TaskInfo) -> bool:
        """`preemptable(task)`, parsed once per action."""
        v = self._preemptable.get(task.uid)
        if v is None:
            v = self._preemptable[task.uid] = preemptable(task)
        return v

    def bound(self, key: object, accept: Callable[[TaskInfo], bool],
              among: Iterable[TaskInfo] | None = None) -> np.ndarray:
        """Per node, Σ requests of the placed tasks (`among` them, if given) `accept` takes now,
        cached by `key`. Evictions only move requests from used to releasing, so a cached bound
        stays an upper bound."""
        b = self._bounds.get(key)
        if b is None:
            nodes = self.ssn.nodes
            b = np.zeros_like(nodes.idle)
            index = nodes.index
            tasks = among if among is not None else (t for ts in self.by_row.values() for t in ts)
            for t in tasks:
                row = index.get(t.node) if t.node else None
                if row is not None and accept(t):
                    b[row] += t.req
            self._bounds[key] = b
        return b


def candidate_rows(ssn: "session_mod.Session", task: TaskInfo, among: np.ndarray | None = None) -> np.ndarray:
    """Rows (ascending) where no unresolvable predicate failure rejects `task`; `among`: of these rows only
    (an among-predicate, the extender's, is asked about them only)."""
    n = len(ssn.nodes)
    ok = np.ones(n, dtype=bool) if among is None else np.array(among, dtype=bool)
    for failure in ssn.predicate(task, ssn.nodes, among):
        if not failure.resolvable:
            ok &= ~failure.mask(n)
    return np.flatnonzero(ok)


def future_idle(ssn: "session_mod.Session", row: int) -> np.ndarray:
    """A new array: the node's idle + releasing − pipelined."""
    nodes = ssn.nodes
    return nodes.idle[row] + nodes.releasing[row] - nodes.pipelined[row]


class Hopeless:
    """Nodes where a Preemptable / Reclaimable answer left no room, per evictor profile, as a mask
    over the nodes; forgotten as soon as any node changes."""

    def __init__(self, ssn: "session_mod.Session", point: hooks.Point):
        self.keys = [key for _, _, key in ssn.hooks.flat(point)]
        self.enabled = all(k is not None for k in self.keys)
        self.changes = ssn.nodes.changes
        self.n = len(ssn.nodes)
        self.seen = -1
        self.masks: dict[tuple, np.ndarray] = {}

    def profile(self, evictor: TaskInfo, candidates: object) -> tuple | None:
        """What the answers on a node depend on about `evictor`, given `candidates` (whatever
        fixes the node's candidate list); None: do not remember for it."""
        if not self.enabled:
            return None
        keys = tuple(k(evictor) for k in self.keys)
        if any(k is None for k in keys):
            return None
        return (evictor.req.tobytes(), candidates, keys)

    def mask(self, profile: tuple | None) -> np.ndarray | None:
        """The nodes known to be hopeless for `profile` (None: none known)."""
        if profile is None:
            return None
        if len(self.changes) != self.seen:
            self.masks.clear()
            self.seen = len(self.changes)
        return self.masks.get(profile)

    def add(self, profile: tuple | None, row: int) -> None:
        if profile is None:
            return
        m = self.mask(profile)
        if m is None:
            m = self.masks[profile] = np.zeros(self.n, dtype=bool)
        m[row] = True

    def drop(self, profile: tuple | None, rows: np.ndarray) -> np.ndarray:
        m = self.mask(profile)
        return rows if m is None or rows.size == 0 else rows[~m[rows]]


def could_fit(ssn: "session_mod.Session", task: TaskInfo, rows: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """The subset of `rows` where the request fits future idle plus the most evictions could free."""
    if rows.size == 0:
        return rows
    nodes = ssn.nodes
    ok = np.ones(len(nodes), dtype=bool)
    for c in np.flatnonzero(task.req > 0):   # whole columns: contiguous, no gather of rows
        ok &= nodes.idle[:, c] + nodes.releasing[:, c] - nodes.pipelined[:, c] + bound[:, c] >= task.req[c]
    return rows[ok[rows]]


def holds(req: np.ndarray, room: np.ndarray) -> bool:
    """`req` fits `room` on every dimension it requests (one node)."""
    return not bool(((req > room) & (req > 0)).any())


def victims_fit(ssn: "session_mod.Session", task: TaskInfo, row: int, victims: Iterable[TaskInfo]) -> bool:
    room = future_idle(ssn, row)
    for v in victims:
        room += v.req
    return holds(task.req, room)


def fits_after(ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", task: TaskInfo, row: int) -> bool:
    if not ssn.allocatable(queue, task):
        return False
    if not holds(task.req, future_idle(ssn, row)):
        return False
    n = len(ssn.nodes)
    only = np.zeros(n, dtype=bool)
    only[row] = True   # (a Predicate function registered with among=True is asked about this node only)
    return not any(f.mask(n)[row] for f in ssn.predicate(task, ssn.nodes, only))


def victim_less(ssn: "session_mod.Session", preemptor: TaskInfo | None = None) -> Callable[[TaskInfo, TaskInfo], bool]:
    """`less(l, r)`: l is evicted before r (BuildVictimsPriorityQueue). Victims of different queues
    go by VictimQueueOrder for the `preemptor`'s queue, then by reverse QueueOrder."""
    jobs, queues = ssn.jobs, ssn.queues
    victim_queue_order = None
    if preemptor is not None and ssn.hooks.flat(hooks.Point.VICTIM_QUEUE_ORDER) and preemptor.job in jobs:
        victim_queue_order = ssn.hooks.caller(hooks.Point.VICTIM_QUEUE_ORDER)
        preemptor_queue = queues.get(jobs[preemptor.job].queue)

    def less(l: TaskInfo, r: TaskInfo) -> bool:
        if l.job == r.job:
            return ssn.task_less(r, l)
        lj, rj = jobs[l.job], jobs[r.job]
        if lj.queue != rj.queue:
            if victim_queue_order is not None:
                v = victim_queue_order(queues[lj.queue], queues[rj.queue], preemptor_queue)
                if v:
                    return v < 0
            return ssn.queue_less(queues[rj.queue], queues[lj.queue])
        v = ssn.hooks.call(hooks.Point.JOB_ORDER, lj, rj)
        if v:
            return v > 0
        return ssn.task_less(r, l)

    return less


def victim_queue(ssn: "session_mod.Session", victims: Iterable[TaskInfo],
                 preemptor: TaskInfo | None = None) -> pqueue.PriorityQueue:
    return pqueue.PriorityQueue(victim_less(ssn, preemptor), victims)


def in_victim_order(ssn: "session_mod.Session", tasks: list[TaskInfo],
                    preemptor: TaskInfo | None = None) -> list[TaskInfo]:
    if len(tasks) < 2:
        return tasks
    less = victim_less(ssn, preemptor)
    return sorted(tasks, key=functools.cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0)))


def node_order(ssn: "session_mod.Session", task: TaskInfo, rows: np.ndarray, scored: bool = True) -> Iterator[int]:
    """The order in which to try `rows`: best NodeOrder score first (if `scored`); then fewer
    pods already pipelined onto the node (reservations of earlier preemptors: Volcano breaks such
    ties at random, and trying the claimed nodes last keeps many preemptions linear); then name."""
    if rows.size > 1:
        nodes = ssn.nodes
        keys = [rows, nodes.pipelined[rows, nodes.dims.pods]]
        if scored:
            keys.append(-np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=np.float64), rows.shape))
        rows = rows[np.lexsort(keys)]
    return (int(r) for r in rows)   # lazily: most tasks stop at one of the first nodes
