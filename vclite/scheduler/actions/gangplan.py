"""The placement gangpreempt and gangreclaim try before they evict (actions/utils/simulate.go).

`pending(ssn, job)`: the tasks a starving job asks room for (CollectPendingTasksForGangEviction) —
its pending tasks that are neither scheduling-gated nor BestEffort, partition by partition in
worksheet order (below); a job that is already ready asks only for its first partition's.

`place(ssn, queue, job, domain, victims, reason)`: in statements of its own, evict `victims`, then
place the job partition by partition in worksheet order, each within its HyperNode: every pending
task of the partition, best first (TaskOrder), is pipelined (never bound: the victims must go first)
on a node of the HyperNode where its queue may take it (Allocatable), PrePredicate passes, no
unresolvable predicate failure rejects it and its request fits future idle — among those, nodes
whose idle holds it first, then by allocate's choice (NodeOrder, BestNode). A task that fits nowhere
fails the partition; a partition placed must then be ready or pipelined. It stops once the job is
pipelined (or after the first partition of a job that was ready). On success the statements are
returned, still applied, for the caller to merge; on failure everything is undone.

Partitions (Volcano's SubJobs; framework/subgroups.py's membership): one per subGroupPolicy value
tuple, the other tasks in the default one. Worksheet order: partitions not ready and needed to reach
their policy's `minSubGroups` first; then higher priority (a partition's: its highest task priority),
not ready before ready (priority's then gang's SubJobOrder), then the first match value as a number,
then name. A partition with a hard `networkTopology` of its own is tried in the HyperNodes of its
tier limit within the domain, widest first (PurposeEvict), capped as the job's domains are; the
default partition (the job's own networkTopology) in the domain itself.

Must not: leave anything applied on failure.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from vclite.scheduler.actions import allocate, topology, victims as victims_mod
from vclite.scheduler.framework import subgroups
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

TaskInfo = tasks_mod.TaskInfo
TaskStatus = tasks_mod.TaskStatus
_READY = tasks_mod.ALLOCATED_STATUS | {TaskStatus.SUCCEEDED}
_PIPELINED = _READY | {TaskStatus.PIPELINED}


@dataclasses.dataclass(eq=False)
class Part:
    """A partition: its tasks, the policy it belongs to ("" for the default one) and its size."""
    name: str
    policy: str
    minimum: int            # the policy's minSubGroups (0: none)
    size: int               # subGroupSize: the tasks that make it ready
    uids: list[str]
    topology: dict | None   # its own networkTopology (a policy's)
    match: int              # the first match value as a number (0 when it is not one)
    pending: list[TaskInfo] = dataclasses.field(default_factory=list)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def partitions(job: "jobs_mod.JobInfo") -> list[Part]:
    has_policies = bool(subgroups.policies(job))
    parts: dict[str, Part] = {}
    for uid, member in subgroups.membership(job).items():
        if member is None:
            size = 1 if has_policies else job.min_available
            part = parts.setdefault("", Part("", "", 0, size, [], None, 0))
        else:
            pol, values = member
            name = f"{pol.get('name')}/{'-'.join(values)}"
            nt = pol.get("networkTopology")
            match = int(values[0]) if values and values[0].isdigit() else 0
            part = parts.setdefault(name, Part(name, str(pol.get("name")), _int(pol.get("minSubGroups"), 0),
                                               max(_int(pol.get("subGroupSize"), 1), 1), [],
                                               nt if isinstance(nt, dict) else None, match))
        part.uids.append(uid)
    return list(parts.values())


def _count(job: "jobs_mod.JobInfo", part: Part, statuses: frozenset) -> int:
    n = 0
    for uid in part.uids:
        t = job.tasks[uid]
        if t.status in statuses or (t.status == TaskStatus.PENDING and t.best_effort):
            n += 1
    return n


def part_ready(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", part: Part) -> bool:
    """SubJobReady: the job's readiness for a job without subGroupPolicy, else the partition's size."""
    if not subgroups.policies(job):
        return ssn.job_ready(job)
    return _count(job, part, _READY) >= part.size


def part_pipelined(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", part: Part) -> bool:
    if not subgroups.policies(job):
        return ssn.job_pipelined(job)
    return _count(job, part, _PIPELINED) >= part.size


def worksheet(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> list[Part]:
    """The partitions with tasks to place, in worksheet order (see the module docstring)."""
    parts = partitions(job)
    ready = {id(p): part_ready(ssn, job, p) for p in parts}

    def priority(p: Part) -> int:
        return max((job.tasks[uid].priority for uid in p.uids), default=0)

    def order(p: Part) -> tuple:
        return (-priority(p), ready[id(p)], p.match, p.name)
    counted: dict[str, int] = {}
    for p in parts:
        if ready[id(p)]:
            counted[p.policy] = counted.get(p.policy, 0) + 1
    required: set[int] = set()
    for p in sorted((p for p in parts if not ready[id(p)]), key=order):
        if counted.get(p.policy, 0) < p.minimum:
            required.add(id(p))
            counted[p.policy] = counted.get(p.policy, 0) + 1
    out = []
    for p in sorted(parts, key=lambda p: (id(p) not in required, *order(p))):
        p.pending = _best_first(ssn, [job.tasks[uid] for uid in p.uids])
        if p.pending:
            out.append(p)
    return out


def _best_first(ssn: "session_mod.Session", tasks: list[TaskInfo]) -> list[TaskInfo]:
    """The pending tasks to place (not gated, not BestEffort), in TaskOrder."""
    pq = ssn.task_pq(t for t in tasks if t.status == TaskStatus.PENDING and not t.scheduling_gated
                     and not t.best_effort)
    out = []
    while pq:
        out.append(pq.pop())
    return out


def pending(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> list[TaskInfo]:
    sheet = worksheet(ssn, job)
    if not sheet:
        return []
    if ssn.job_ready(job):
        return list(sheet[0].pending)
    return [t for p in sheet for t in p.pending]


def _within(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", part: Part, domain: str, cap: int) -> list[str]:
    """The HyperNodes to try a partition in (see the module docstring)."""
    nt = part.topology
    if nt is None or nt.get("mode") == "soft":
        return [domain]
    limit = topology.highest_tier(ssn, nt)
    if limit is None:
        return [domain]
    need = np.sum([t.req for t in part.pending], axis=0)
    grads = topology.gradients(ssn, job, limit, topology.part_allocated(ssn, job, part.name),
                               within=domain, need=need, evict=True)
    return [hn for g in widest_first(grads, cap) for hn in g]


def widest_first(grads: list[list[str]], cap: int) -> list[list[str]]:
    """network-topology-aware's eviction gradients: tiers from the highest, at most `cap` HyperNodes
    (the last ones of a tier cut short), as reverseAndCapEvictionGradients."""
    if cap <= 0:
        return grads
    out, left = [], cap
    for g in reversed(grads):
        if left == 0:
            break
        out.append(g if len(g) <= left else g[len(g) - left:])
        left -= len(out[-1])
    return out


def _trial(ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", job: "jobs_mod.JobInfo", part: Part,
           mask: np.ndarray, evicted: bool) -> "statement_mod.Statement | None":
    """The partition's tasks pipelined within `mask`, or None (nothing left applied)."""
    trial = ssn.statement()
    n = len(ssn.nodes)
    for task in part.pending:
        ok = ssn.allocatable(queue, task)
        if ok:
            # the request fits future idle, within `mask` (only these nodes are asked an among-predicate about)
            rows = victims_mod.candidate_rows(ssn, task, mask & ssn.fit_cache.masks(task.req)[0])
            feasible = np.zeros(n, dtype=bool)
            feasible[rows] = True
            ok = bool(feasible.any()) and ssn.pre_predicate(task) is None
        if not ok:
            trial.discard()
            return None
        row, _ = allocate.choose_node(ssn, task, feasible)
        if trial.pipeline(task, row, evicted_for=evicted) is not None:
            trial.discard()   # (a handler refused the node)
            return None
    if not trial.operations or not (part_ready(ssn, job, part) or part_pipelined(ssn, job, part)):
        trial.discard()
        return None
    return trial


def place(ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", job: "jobs_mod.JobInfo", domain: str,
          victims: list[TaskInfo], reason: str, cap: int) -> "list[statement_mod.Statement] | None":
    """Evict `victims` and place the job within `domain`; the statements (applied) or None."""
    sheet = worksheet(ssn, job)
    if not sheet:
        return None
    was_ready = ssn.job_ready(job)
    chain = []
    done = False
    try:
        evictions = ssn.statement()
        chain.append(evictions)
        for v in victims:
            evictions.evict(v, reason)
        pipelined = False
        for part in sheet:
            win = None
            for hn in _within(ssn, job, part, domain, cap):
                win = _trial(ssn, queue, job, part, ssn.topology.leaves[hn], bool(victims))
                if win is not None:
                    break
            if win is None:
                return None
            chain.append(win)
            pipelined = ssn.job_pipelined(job)
            if was_ready or pipelined:
                break
        if not pipelined:
            return None
        done = True
        return chain
    finally:
        if not done:
            for stmt in reversed(chain):
                stmt.discard()
