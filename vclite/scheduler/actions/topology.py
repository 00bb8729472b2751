"""allocate for jobs with `networkTopology`: the gang stays within one HyperNode (Volcano's
allocate.go allocateForJob with network-topology-aware's HyperNodeGradientForJobFn).

Kept apart from allocate's loop so that jobs without networkTopology never come here. For a job:
- its limit: `highestTierAllowed`, or the tier whose HyperNodes carry `highestTierName` (Volcano's
  session translates it; a name no HyperNode carries leaves the job without a hard limit: it is
  placed as any job, as upstream). `mode: soft` is Volcano's soft-to-hard conversion: the limit is
  the virtual top HyperNode's tier, so the lowest tier that fits is preferred and, failing all, the
  whole cluster. A hard job with neither field has no limit upstream either (plain placement);
- the HyperNode already holding it: recomputed every session from the nodes of its placed pods (the
  lowest-tier HyperNode holding them all), as Volcano's session recovers a job's allocated HyperNode
  after a restart (recoverAllocatedHyperNode); a job with placed pods searches only below its
  highest ancestor within the limit;
- gradients: HyperNodes breadth-first from the search root, tier ≤ limit, grouped by tier ascending;
  without placed pods, a HyperNode whose idle (or future idle) sum cannot hold the job's
  minResources is skipped (isEligibleHyperNode);
- per gradient, each HyperNode (by name) is a dry run of the job's tasks over its nodes only; those
  where the job becomes ready (or pipelined) are scored by the HyperNodeOrder functions (the
  network-topology-aware plugin), the best kept (ties: the first by name — Volcano's map order is
  random), and the first gradient with any solution decides;
- nothing fits: the job waits with Unschedulable saying which tiers were tried.
The dry run is repeated for the chosen HyperNode rather than replaying saved operations: the
placement is deterministic, so it is the same.

Must not: write to the API.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from vclite.scheduler.framework import hypernodes as hypernodes_mod
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

Obj = dict[str, Any]
Choose = Callable[["session_mod.Session", tasks_mod.TaskInfo, np.ndarray], tuple[int, bool]]
REASON = "NotEnoughResources"


def spec_of(job: "jobs_mod.JobInfo") -> Obj | None:
    """The PodGroup's networkTopology (None: the job takes allocate's ordinary path)."""
    nt = (job.podgroup.get("spec") or {}).get("networkTopology") if isinstance(job.podgroup, dict) else None
    return nt if isinstance(nt, dict) else None


def highest_tier(ssn: "session_mod.Session", nt: Obj) -> int | None:
    """The tier limit, Volcano's way (see the module docstring); None: no hard limit."""
    tree = ssn.topology
    if nt.get("mode") == "soft":
        return tree.top_tier
    allowed = nt.get("highestTierAllowed")
    if isinstance(allowed, int) and not isinstance(allowed, bool):
        return allowed
    name = nt.get("highestTierName")
    if name:
        return tree.tier_names.get(str(name))
    return None


def allocated_hypernode(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> str:
    """The lowest HyperNode holding the nodes of the job's placed pods ("" when none is placed)."""
    rows = [ssn.nodes.index[t.node] for s in tasks_mod.ALLOCATED_STATUS for t in (job.index.get(s) or {}).values()
            if t.node in ssn.nodes.index]
    if not rows:
        return ""
    return ssn.topology.lowest_holding(np.array(rows, dtype=np.intp))


def gradients(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", limit: int, allocated: str) -> list[list[str]]:
    tree = ssn.topology
    root = hypernodes_mod.TOP
    if allocated:
        allowed = [a for a in tree.ancestors(allocated) if tree.tier[a] <= limit]
        if not allowed:
            return []
        root = allowed[-1]
    need = job.min_resources
    idle, future = ssn.nodes.idle, ssn.nodes.future_idle()
    by_tier: dict[int, list[str]] = {}
    queue, seen = [root], {root}
    while queue:
        hn = queue.pop(0)
        if tree.tier[hn] <= limit and (allocated or need is None or _holds(idle, tree.leaves[hn], need)
                                       or _holds(future, tree.leaves[hn], need)):
            by_tier.setdefault(tree.tier[hn], []).append(hn)
        for child in tree.children.get(hn, ()):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return [sorted(by_tier[t]) for t in sorted(by_tier)]


def _holds(avail: np.ndarray, mask: np.ndarray, need: np.ndarray) -> bool:
    return bool((need <= avail[mask].sum(axis=0) + 1e-9).all())


def allocate_job(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
                 tasks: "pqueue.PriorityQueue", limit: int, choose: Choose) -> "statement_mod.Statement":
    """The job's statement within its best HyperNode (empty when none holds the gang). `choose`:
    allocate's choice of node among feasible rows (row, whether idle holds the task)."""
    allocated = allocated_hypernode(ssn, job)
    pending = _drain(tasks)
    tried = gradients(ssn, job, limit, allocated)
    for gradient in tried:
        fits = []
        for hn in gradient:
            stmt, _ = _try(ssn, job, queue, pending, ssn.topology.leaves[hn], choose)
            if ssn.job_ready(job) or ssn.job_pipelined(job):
                fits.append(hn)
            stmt.discard()
        if not fits:
            continue
        scores = np.asarray(ssn.hypernode_order(job, fits), dtype=np.float64)
        scores = np.broadcast_to(scores, (len(fits),))
        best = fits[int(np.argmax(scores))]
        stmt, left = _try(ssn, job, queue, pending, ssn.topology.leaves[best], choose)
        for t in left:
            tasks.push(t)
        return stmt
    for t in pending:
        tasks.push(t)
    _explain(ssn, job, limit, allocated, tried)
    return ssn.statement()


def _drain(tasks: "pqueue.PriorityQueue") -> list[tasks_mod.TaskInfo]:
    out = []
    while tasks:
        out.append(tasks.pop())
    return out


def _try(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
         pending: list[tasks_mod.TaskInfo], mask: np.ndarray, choose: Choose) -> tuple["statement_mod.Statement", list]:
    """allocate_for_job's loop over the HyperNode's nodes only; the tasks not tried are returned."""
    stmt = ssn.statement()
    for i, task in enumerate(pending):
        if not ssn.allocatable(queue, task):
            continue
        if ssn.pre_predicate(task) is not None:
            continue
        feasible, _ = ssn.feasible_nodes(task, copy=True)
        feasible &= mask
        if not feasible.any():
            continue
        row, idle = choose(ssn, task, feasible)
        (stmt.allocate if idle else stmt.pipeline)(task, row)
        if i + 1 < len(pending) and ssn.job_ready(job):
            return stmt, pending[i + 1:]
    return stmt, []


def _explain(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", limit: int, allocated: str,
             tried: list[list[str]]) -> None:
    names = [hn for g in tried for hn in g if hn != hypernodes_mod.TOP]
    where = f"within HyperNode {allocated!r}'s tier-{limit} ancestor, " if allocated else ""
    if not tried:
        tree = ssn.topology
        sizes = [f"{hn} ({int(tree.leaves[hn].sum())} nodes)" for hn in sorted(tree.tier)
                 if hn != hypernodes_mod.TOP and tree.tier[hn] <= limit]
        msg = (f"network topology: no HyperNode of tier <= {limit} {where}can hold the gang's minResources "
               f"(HyperNodes of those tiers: {', '.join(sizes) or 'none'})")
    else:
        msg = (f"network topology: the gang fits in no single HyperNode of tier <= {limit} {where}"
               f"(tried: {', '.join(names) or 'the whole cluster'})")
    ssn.explain_unschedulable(job, REASON, msg)
    for t in (job.index.get(tasks_mod.TaskStatus.PENDING) or {}).values():
        job.task_notes.setdefault(t.uid, msg)
