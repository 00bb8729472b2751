"""PodGroups that wait for room, read lazily: one JobInfo per class of equal jobs, not per job.

A PodGroup that the enqueue action rejected before (phase Pending, an Unschedulable=True
condition) and that has no pods is *waiting*: the snapshot makes no JobInfo for it. Waiting
PodGroups are grouped into classes the scheduler cannot tell apart at enqueue (same namespace,
queue, priority, minMember, minTaskMember and minResources), each class in job order (creation
time, then uid: the plugins' job orders tie for equal jobs without pods). The enqueue action
takes a class's members one at a time, interleaved with the other pending jobs by JobOrder, and
stops taking from a class at its first rejected member: enqueue's votes depend on a job's queue
and minResources and on what the session has admitted so far, which only grows, so every later
member would be rejected too. The jobs admitted are exactly those Volcano's enqueue admits.

Why: a flow that fans out to thousands of jobs on a few nodes keeps thousands of PodGroups
waiting, and a session runs for every pod that finishes; making each of them a JobInfo every
session made a wide fan quadratic. Now a session pays for the k classes, not the n jobs.

`Pool` keeps the waiting PodGroups by class in job order; the scheduler shell updates it on each
PodGroup event, so a session pays neither for listing nor for sorting them (the snapshot makes one
from the PodGroups it is given when the caller keeps none). Only when every configured plugin is
known to vote and order as above (CLASS_SAFE_PLUGINS) and enqueue is an action (without it,
allocate takes Pending jobs itself). A waiting PodGroup's condition message is refreshed when it
is next evaluated (the head of its class), not every session.

Must not: decide admission (the enqueue action and its plugins do).
"""
from __future__ import annotations

import bisect
import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from vclite.api import meta, scheduling
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler import conf as conf_mod
    from vclite.scheduler.framework import jobs as jobs_mod

Obj = dict[str, Any]
ENQUEUE = "enqueue"
# Plugins whose JobEnqueueable votes depend only on (queue, namespace, minResources) and the session's state,
# and whose JobOrder ties for equal jobs without pods (nodeorder, binpack, network-topology-aware, nodegroup, cdp
# and pdb have neither: they place pods and choose victims). Not sla: it orders and admits by each job's own deadline.
CLASS_SAFE_PLUGINS = frozenset({
    "priority", "gang", "conformance", "drf", "proportion", "capacity", "predicates", "nodeorder", "binpack",
    "overcommit", "network-topology-aware", "nodegroup", "cdp", "pdb", "resourcequota"})
_UNSCHEDULABLE = str(scheduling.PodGroupConditionType.UNSCHEDULABLE)
_PENDING = str(scheduling.PodGroupPhase.PENDING)
_EMPTY: dict = {}


def enabled(conf: "conf_mod.SchedulerConf") -> bool:
    """Whether waiting PodGroups may be read lazily under this configuration."""
    return conf.has_action(ENQUEUE) and conf.plugin_names <= CLASS_SAFE_PLUGINS


def class_of(pg: Obj) -> tuple | None:
    """The class of a PodGroup enqueue rejected before (Pending, Unschedulable=True), else None:
    (queue, namespace, priorityClassName, minMember, minTaskMember, minResources) as written
    (equal text, equal job; equal jobs written differently are merely separate classes)."""
    status = pg.get("status") or _EMPTY
    if (status.get("phase") or _PENDING) != _PENDING:
        return None
    if not any(isinstance(c, dict) and c.get("type") == _UNSCHEDULABLE and c.get("status") == "True"
               for c in status.get("conditions") or ()):
        return None
    spec = pg.get("spec") or _EMPTY
    return (spec.get("queue") or scheduling.DEFAULT_QUEUE, meta.namespace(pg), repr(spec.get("priorityClassName")),
            repr(spec.get("minMember")), repr(spec.get("minTaskMember")), repr(spec.get("minResources")))


def job_order(pg: Obj) -> tuple:
    """(creation time, uid): the session's job order among equal jobs without pods."""
    return (tasks_mod.created(pg), meta.key(pg))


class Pool:
    """Waiting PodGroups by class, each class sorted in job order, kept current one PodGroup at a
    time (`update`). Members are (order, key, PodGroup) tuples; callers only read them."""

    def __init__(self) -> None:
        self._classes: dict[tuple, list[tuple]] = {}
        self._where: dict[str, tuple[tuple, tuple]] = {}   # PodGroup key -> (class, member)

    def update(self, key: str, pg: Obj | None) -> bool:
        """Take `key`'s new version (None: deleted); whether it waits now."""
        old = self._where.pop(key, None)
        if old is not None:
            members = self._classes[old[0]]
            del members[bisect.bisect_left(members, old[1][:2])]
            if not members:
                del self._classes[old[0]]
        cls = class_of(pg) if pg is not None else None
        if cls is None:
            return False
        member = (job_order(pg), key, pg)
        members = self._classes.setdefault(cls, [])
        if not members or members[-1][:2] < member[:2]:
            members.append(member)   # the usual case: newer than every other member
        else:
            members.insert(bisect.bisect_left(members, member[:2]), member)
        self._where[key] = (cls, member)
        return True

    def classes(self) -> Iterator[tuple[tuple, list[tuple]]]:
        return iter(self._classes.items())

    def get(self, key: str) -> tuple[tuple, Obj] | None:
        """(class, PodGroup) of a waiting PodGroup, else None."""
        where = self._where.get(key)
        return None if where is None else (where[0], where[1][2])

    def __contains__(self, key: str) -> bool:
        return key in self._where

    def __len__(self) -> int:
        return len(self._where)

    @classmethod
    def of(cls, podgroups: Iterable[Obj]) -> "tuple[Pool, list[Obj]]":
        """A pool of the waiting ones among `podgroups`, and the others."""
        pool, others = cls(), []
        for pg in podgroups:
            if not pool.update(meta.key(pg), pg):
                others.append(pg)
        return pool, others


@dataclasses.dataclass
class WaitingClass:
    """One session's view of a class: `take` makes the next member's JobInfo (None: no more)."""
    queue: str
    members: list[tuple]                        # the pool's (order, key, PodGroup), read-only
    make: Callable[[Obj], "jobs_mod.JobInfo"]
    skip: frozenset[str] = frozenset()          # keys the session made jobs of anyway (they have pods)
    taken: int = 0

    def take(self) -> "jobs_mod.JobInfo | None":
        while self.taken < len(self.members):
            _, key, pg = self.members[self.taken]
            self.taken += 1
            if key not in self.skip:
                return self.make(pg)
        return None

    def __len__(self) -> int:
        return len(self.members) - len(self.skip)


def session_classes(pool: Pool, queues: Iterable[str], make: Callable[[Obj], "jobs_mod.JobInfo"],
                    skip: Iterable[str] = ()) -> dict[str, list[WaitingClass]]:
    """The pool's classes in existing queues, by queue, each queue's in the order of their best
    members; the waiting PodGroups in `skip` are left out (the session made jobs of them)."""
    skipped: dict[tuple, set[str]] = {}
    for key in skip:
        found = pool.get(key)
        if found is not None:
            skipped.setdefault(found[0], set()).add(key)
    known = set(queues)
    by_queue: dict[str, list[WaitingClass]] = {}
    for cls, members in pool.classes():
        queue = cls[0]
        if queue not in known:
            continue
        view = WaitingClass(queue, members, make, frozenset(skipped.get(cls, ())))
        if len(view):
            by_queue.setdefault(queue, []).append(view)
    for found in by_queue.values():
        found.sort(key=lambda c: next(m[:2] for m in c.members if m[1] not in c.skip))
    return by_queue
