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

Only when every configured plugin is known to vote and order as above (CLASS_SAFE_PLUGINS) and
enqueue is an action (without it, allocate takes Pending jobs itself). A waiting PodGroup's
condition message is refreshed when it is next evaluated (the head of its class), not every session.

Must not: decide admission (the enqueue action and its plugins do).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Protocol

if TYPE_CHECKING:
    from vclite.scheduler import conf as conf_mod
    from vclite.scheduler.framework import jobs as jobs_mod

ENQUEUE = "enqueue"
# Plugins whose JobEnqueueable votes depend only on (queue, minResources) and the session's state,
# and whose JobOrder ties for equal jobs without pods.
CLASS_SAFE_PLUGINS = frozenset({
    "priority", "gang", "conformance", "drf", "proportion", "predicates", "nodeorder", "binpack", "overcommit"})


def enabled(conf: "conf_mod.SchedulerConf") -> bool:
    """Whether waiting PodGroups may be read lazily under this configuration."""
    return conf.has_action(ENQUEUE) and all(
        option.name in CLASS_SAFE_PLUGINS for tier in conf.tiers for option in tier)


@dataclasses.dataclass
class WaitingClass:
    """Equal waiting PodGroups of one queue, in job order; `take` makes the next one's JobInfo."""
    queue: str
    members: list[Any]                          # snapshot entries, best first
    make: Callable[[Any], "jobs_mod.JobInfo"]
    taken: int = 0

    def take(self) -> "jobs_mod.JobInfo | None":
        if self.taken >= len(self.members):
            return None
        entry = self.members[self.taken]
        self.taken += 1
        return self.make(entry)

    def __len__(self) -> int:
        return len(self.members)


class Waiting(Protocol):
    """What the snapshot knows of a waiting PodGroup."""
    queue: str
    class_key: Hashable   # equal for the jobs enqueue and JobOrder cannot tell apart (queue included)
    order: tuple          # (creation time, uid): job order within a class


def group(entries: Iterable[Waiting], make: Callable[[Any], "jobs_mod.JobInfo"]) -> dict[str, list[WaitingClass]]:
    """Waiting entries by queue, in classes each in job order; a queue's classes in the order of
    their best members."""
    classes: dict[Hashable, list[Waiting]] = {}
    for entry in entries:
        members = classes.get(entry.class_key)
        if members is None:
            classes[entry.class_key] = [entry]
        else:
            members.append(entry)
    by_queue: dict[str, list[WaitingClass]] = {}
    order = operator.attrgetter("order")
    for members in classes.values():
        members.sort(key=order)
        queue = members[0].queue
        by_queue.setdefault(queue, []).append(WaitingClass(queue, members, make))
    for found in by_queue.values():
        found.sort(key=lambda c: c.members[0].order)
    return by_queue
