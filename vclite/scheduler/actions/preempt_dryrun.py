"""preempt with `enableTopologyAwarePreemption: true`: dry-run candidate nodes, reprieve, pick one
(Volcano's preempt.go topologyAwarePreempt, a port of kube-scheduler's default preemption).

"Topology" is the pods' own: a victim is reprieved when the preemptor still fits without it, so the
predicates that look at other pods (inter-pod anti-affinity, topology spread, ports) decide which
victims are really needed. It does not look at HyperNodes: a job with `networkTopology` never
preempts (preempt.py skips it, as upstream).

For one preemptor, over the nodes where only resolvable predicate failures reject it (in node
order; Volcano starts at a random one and checks them in parallel):
- numCandidates = nodes × minCandidateNodesPercentage / 100, at least minCandidateNodesAbsolute,
  at most maxCandidateNodesAbsolute and the number of nodes;
- a node's dry run (SelectVictimsOnNode): victims = Preemptable(preemptor, the node's candidates);
  none of them when request > future idle + Σ victims; else evict them in victim order until the
  preemptor fits (queue Allocatable, request ≤ future idle, every predicate), then put them back
  from the last evicted (the most important) to the first, each kept evicted only if the
  preemptor no longer fits without it. The node is a candidate when the preemptor fits with every
  potential victim gone and at least one victim remains (a node where it fits as things are is
  none: upstream wants "at least one victim");
- the first numCandidates candidates found are compared (pickOneNodeForPreemption): the lowest
  priority of the first (most important) victim, then the lowest sum of priorities (each + 2^31),
  then the fewest victims, then the latest earliest start among the highest-priority victims (a
  pod not started: now), then the first in node order (Volcano: map order);
- the chosen node's victims are evicted and the preemptor pipelined there (evicted_for).
No NodeOrder scores are read on this path, as upstream.

Must not: change the session except through the statement handed in (dry runs are undone).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import TYPE_CHECKING, Callable, Iterable

from vclite.lib import clock
from vclite.scheduler.actions import victims as victims_mod
from vclite.scheduler.framework import hooks
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

TaskInfo = tasks_mod.TaskInfo
_OFFSET = 2 ** 31   # math.MaxInt32 + 1: every priority made non-negative before summing


@dataclasses.dataclass
class Candidate:
    row: int
    victims: list[TaskInfo]   # the most important first (reprieve order)


def num_candidates(nodes: int, percentage: int, minimum: int, maximum: int) -> int:
    """calculateNumCandidates, with Go's integer division (truncated toward zero)."""
    product = nodes * percentage
    n = abs(product) // 100 * (1 if product >= 0 else -1)
    n = max(n, minimum)
    n = min(n, maximum)
    return min(n, nodes)


def pod_priority(task: TaskInfo) -> int:
    """PodPriority: the pod's spec.priority, 0 when unset."""
    value = (task.pod.get("spec") or {}).get("priority")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0


def _start(task: TaskInfo, now: _dt.datetime) -> _dt.datetime:
    started = clock.parse_time((task.pod.get("status") or {}).get("startTime"))
    return started if started is not None else now


def earliest_start(victims: list[TaskInfo], now: _dt.datetime) -> _dt.datetime:
    """GetEarliestPodStartTime: the earliest start among the victims of the highest priority."""
    top = max(pod_priority(v) for v in victims)
    return min(_start(v, now) for v in victims if pod_priority(v) == top)


def pick(candidates: list[Candidate], now: _dt.datetime) -> Candidate:
    """pickOneNodeForPreemption without PDBs (vclite has none): each criterion keeps the best,
    the next one breaks ties, the first left wins."""
    criteria: list[Callable[[Candidate], object]] = [
        lambda c: -pod_priority(c.victims[0]),
        lambda c: -sum(pod_priority(v) + _OFFSET for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: earliest_start(c.victims, now),
    ]
    left = candidates
    for score in criteria:
        if len(left) == 1:
            break
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
    return left[0]


def select_victims(ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", preemptor: TaskInfo, row: int,
                   candidates: list[TaskInfo]) -> list[TaskInfo] | None:
    """SelectVictimsOnNode over the live session, undone before returning; None: not a candidate."""
    victims = ssn.hooks.call(hooks.Point.PREEMPTABLE, preemptor, candidates) or []
    if not victims_mod.victims_fit(ssn, preemptor, row, victims):
        return None
    line = victims_mod.victim_queue(ssn, victims, preemptor)
    evicted: dict[str, "statement_mod.Statement"] = {}   # one statement per victim: undone one by one
    potential: list[TaskInfo] = []
    try:
        while line:
            victim = line.pop()
            potential.append(victim)
            evicted[victim.uid] = _evict(ssn, victim)
            if victims_mod.fits_after(ssn, queue, preemptor, row):
                break
        if not potential or not victims_mod.fits_after(ssn, queue, preemptor, row):
            return None
        chosen = []
        for victim in reversed(potential):   # reprieve the most important first
            evicted.pop(victim.uid).discard()
            if not victims_mod.fits_after(ssn, queue, preemptor, row):
                evicted[victim.uid] = _evict(ssn, victim)
                chosen.append(victim)
        return chosen or None
    finally:
        for stmt in reversed(list(evicted.values())):
            stmt.discard()


def _evict(ssn: "session_mod.Session", task: TaskInfo) -> "statement_mod.Statement":
    stmt = ssn.statement()
    stmt.evict(task, "preempt")
    return stmt


def preempt(ssn: "session_mod.Session", stmt: "statement_mod.Statement", queue: "jobs_mod.QueueInfo",
            preemptor: TaskInfo, tried: Iterable[int], limit: int,
            candidates_on: Callable[[int], list[TaskInfo]]) -> bool:
    """topologyAwarePreempt: a dry run on each node of `tried` (in node order: those of the nodes
    predicates leave where evictions could make room) until `limit` candidates (numCandidates of
    all the nodes predicates leave); True if the preemptor was pipelined."""
    found: list[Candidate] = []
    for row in tried:
        victims = select_victims(ssn, queue, preemptor, row, candidates_on(row))
        if victims:
            found.append(Candidate(row, victims))
            if len(found) >= limit:
                break
    if not found:
        return False
    best = pick(found, ssn.now)
    node_stmt = ssn.statement()
    for victim in best.victims:
        node_stmt.evict(victim, "preempt")
    if node_stmt.pipeline(preemptor, best.row, evicted_for=True) is not None:
        node_stmt.discard()   # (a handler refused the node: its evictions are taken back)
        return False
    stmt.merge(node_stmt)
    return True
