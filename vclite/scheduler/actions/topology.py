"""allocate for jobs with `networkTopology`: the gang stays within one HyperNode (Volcano's
allocate.go allocateForJob with network-topology-aware's HyperNodeGradientForJobFn).

Kept apart from allocate's loop so that jobs without networkTopology never come here. For a job:
- its limit: `highestTierAllowed`, or the tier whose HyperNodes carry `highestTierName` (Volcano's
  session translates it; a name no HyperNode carries leaves the job without a hard limit: it is
  placed as any job, as upstream). `mode: soft` is Volcano's soft-to-hard conversion: the limit is
  the virtual top HyperNode's tier, so the lowest tier that fits is preferred and, failing all, the
  whole cluster. A hard job with neither field has no limit upstream either (plain placement);
- the HyperNode already holding it: the one kept since allocate chose it (actions/allocated.py, the
  scheduler's memory as Volcano's cache), else recovered from the nodes of its placed pods (the
  lowest-tier HyperNode holding them all: recoverAllocatedHyperNode); a job with placed pods
  searches only below its highest ancestor within the limit;
- gradients: HyperNodes breadth-first from the search root, tier ≤ limit, grouped by tier ascending;
  without placed pods, a HyperNode whose idle (or future idle) sum cannot hold the job's
  minResources is skipped (isEligibleHyperNode);
- per gradient, each HyperNode (by name) is a dry run of the job's tasks over its nodes only; those
  where a task is placed and the job is then ready (or pipelined) are scored by the HyperNodeOrder
  functions (the network-topology-aware plugin), the best kept (ties: the first by name — Volcano's
  map order is random), and the first gradient with any solution decides (a HyperNode where no task
  fits is no solution, even for a job its running pods already make ready);
- nothing fits: the job waits with Unschedulable saying which tiers were tried.
The dry run is repeated for the chosen HyperNode rather than replaying saved operations: the
placement is deterministic, so it is the same.

Partitions (the PodGroup's `subGroupPolicy`, a vcjob task's `partitionPolicy`; Volcano's SubJobs,
allocate.go allocateForSubJob): a pod belongs to the first policy whose `labelSelector` (if any)
selects it and whose `matchLabelKeys` it all carries (non-empty), one partition per value tuple;
other pods form the default partition. A partition's `networkTopology` limit is its
`highestTierAllowed` (or `highestTierName`'s tier); `soft` is bounded by the job's limit (else the
top tier), as Volcano's convertSoftToHardTopology. A job with such a partition takes this path even
without a job-level limit (its HyperNode is then the whole cluster). Within each job HyperNode, the
partitions are tried in the order of their best pending task, those a policy's `minSubGroups` still needs
first (as many not yet ready ones as it lacks, as organizeJobWorksheet): the default partition over the job
HyperNode's nodes; a limited one over the HyperNodes of its own gradients inside the job HyperNode
(below its placed pods' HyperNode's highest allowed ancestor), each a dry run that must make the
partition ready (`subGroupSize` of its tasks placed, else 1) or pipelined, the best by HyperNodeOrder
over the partition's tasks (ties by name); the job stops when it is ready. A job HyperNode is a
solution when the job becomes ready (or pipelined); the best is the one whose partitions' scores sum
highest (ties by name), as selectBestHyperNodeForJob.

Must not: write to the API.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from vclite.scheduler.actions import allocated as allocated_mod
from vclite.scheduler.actions import roleerrors
from vclite.scheduler.framework import fit
from vclite.scheduler.framework import hypernodes as hypernodes_mod
from vclite.scheduler.framework import subgroups
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

Obj = dict[str, Any]
Choose = Callable[["session_mod.Session", tasks_mod.TaskInfo, np.ndarray], tuple[int, bool]]
REASON = "NotEnoughResources"


@dataclasses.dataclass
class Part:
    """A partition with a tier limit (Volcano's SubJob with networkTopology)."""
    name: str          # <policy>/<values joined by "-">
    limit: int         # its highest allowed tier
    size: int          # subGroupSize (1 when unset): the tasks that make it ready
    uids: set          # its tasks
    policy: str = ""   # its subGroupPolicy's name

    def placed(self, job: "jobs_mod.JobInfo", pipelined: bool = False) -> int:
        ok = tasks_mod.ALLOCATED_STATUS | {tasks_mod.TaskStatus.SUCCEEDED}
        if pipelined:
            ok = ok | {tasks_mod.TaskStatus.PIPELINED}
        return sum(1 for uid in self.uids if job.tasks[uid].status in ok)


@dataclasses.dataclass
class _Tasks:
    """What HyperNodeOrder reads of a partition: its tasks (Volcano scores a SubJob)."""
    tasks: dict


_policies = subgroups.policies
membership = subgroups.membership   # each task's partition (framework/subgroups.py)


def has_partition_topology(job: "jobs_mod.JobInfo") -> bool:
    """A subGroupPolicy with networkTopology (the job takes this module's path)."""
    return any(isinstance(p.get("networkTopology"), dict) for p in _policies(job))


def partitions(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", job_limit: int | None) -> list[Part]:
    """The job's partitions that have a tier limit (see the module docstring)."""
    out: dict[str, Part] = {}
    for uid, member in membership(job).items():
        if member is None:
            continue
        pol, values = member
        nt = pol.get("networkTopology")
        limit = _part_limit(ssn, nt, job_limit) if isinstance(nt, dict) else None
        if limit is not None:
            name = part_name(pol, values)
            part = out.setdefault(name, Part(name, limit, int(pol.get("subGroupSize") or 1), set(),
                                                 str(pol.get("name"))))
            part.uids.add(uid)
    return list(out.values())


part_name = subgroups.sub_job_name   # a partition's name (framework/subgroups.py)


def topology_groups(job: "jobs_mod.JobInfo") -> dict[str, frozenset]:
    """The job's partitions with `networkTopology` by name, with their tasks (Volcano's SubJobs
    WithNetworkTopology): the default partition "" when the job has its own, and each partition
    whose policy has one. Other tasks are in none."""
    job_has = spec_of(job) is not None
    if not job_has and not has_partition_topology(job):
        return {}   # (what the loop below finds for such a job, without reading every task's labels)
    groups: dict[str, set] = {}
    for uid, member in membership(job).items():
        if member is None:
            if job_has:
                groups.setdefault("", set()).add(uid)
        elif isinstance(member[0].get("networkTopology"), dict):
            groups.setdefault(part_name(*member), set()).add(uid)
    return {name: frozenset(uids) for name, uids in groups.items()}


def topology_subjobs(job: "jobs_mod.JobInfo") -> dict[str, tuple[str, frozenset]]:
    """For each task of a partition with `networkTopology`, its partition's name and tasks."""
    return {uid: (name, uids) for name, uids in topology_groups(job).items() for uid in uids}


def _part_limit(ssn: "session_mod.Session", nt: Obj, job_limit: int | None) -> int | None:
    if nt.get("mode") == "soft":
        return job_limit if job_limit is not None else ssn.topology.top_tier
    return highest_tier(ssn, nt)


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


def groups_of(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> dict[str, frozenset]:
    """topology_groups, once per session."""
    return allocated_mod.groups(ssn, job, topology_groups)


def job_allocated(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> str:
    """The job's allocated HyperNode now (actions/allocated.py: kept across sessions)."""
    return allocated_mod.job_hypernode(ssn, job, groups_of(ssn, job))


def part_allocated(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", name: str) -> str:
    """A partition's allocated HyperNode now: the one kept (actions/allocated.py) and the nodes its
    pods were placed on since, this session's included (upstream's running JobAllocatedHyperNode)."""
    groups = groups_of(ssn, job)
    kept = allocated_mod.part_hypernode(ssn, job, groups, name)
    return ssn.topology.lca(kept, allocated_mod.lowest_holding(ssn, job, groups.get(name, frozenset())))


def gradients(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", limit: int, allocated: str,
              within: str = hypernodes_mod.TOP, need: np.ndarray | None = None,
              evict: bool = False) -> list[list[str]]:
    """HyperNodes by tier below `within` (Volcano's getSearchRoot: intersected with the highest
    ancestor of `allocated` within the limit); `need`: minResources (the job's when not given).
    `evict` (PurposeEvict, gangpreempt and gangreclaim): a HyperNode is eligible when its nodes'
    allocatable could hold `need` (what is free does not matter: pods are to be evicted)."""
    tree = ssn.topology
    root = within
    if allocated:
        allowed = [a for a in tree.ancestors(allocated) if tree.tier[a] <= limit]
        if not allowed:
            return []
        highest = allowed[-1]
        lca = tree.lca(within, highest)
        if lca == within:
            root = highest
        elif lca != highest:
            return []
    if need is None:
        need = job.min_resources
    if evict:
        idle = future = ssn.nodes.allocatable
    else:
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
                 tasks: "pqueue.PriorityQueue", limit: int | None, choose: Choose,
                 cache: bool = False) -> "statement_mod.Statement":
    """The job's statement within its best HyperNode (empty when none holds the gang). `choose`:
    allocate's choice of node among feasible rows (row, whether idle holds the task). `limit`
    None: no job-level limit (a job with partitions only). `cache`: Volcano's predicate error cache, one per dry
    run of a HyperNode (or of a partition in one), as allocateResourcesForTasks makes one (roleerrors.py)."""
    parts = partitions(ssn, job, limit)
    if parts:
        return _allocate_parts(ssn, job, queue, tasks, limit, parts, choose, cache)
    if limit is None:   # partitions with networkTopology whose tier names resolve to nothing
        limit = ssn.topology.top_tier
    allocated = job_allocated(ssn, job)
    pending = _drain(tasks)
    tried = gradients(ssn, job, limit, allocated)
    for gradient in tried:
        fits = []
        for hn in gradient:
            stmt, _ = _try(ssn, job, queue, pending, ssn.topology.leaves[hn], choose, cache=cache)
            # a HyperNode where none of the tasks fits is no solution, even for a job its running
            # pods already make ready (allocateForJob skips an empty statement)
            if stmt.operations and (ssn.job_ready(job) or ssn.job_pipelined(job)):
                fits.append(hn)
            stmt.discard()
        if not fits:
            continue
        scores = np.asarray(ssn.hypernode_order(job, fits), dtype=np.float64)
        scores = np.broadcast_to(scores, (len(fits),))
        best = fits[int(np.argmax(scores))]
        stmt, left = _try(ssn, job, queue, pending, ssn.topology.leaves[best], choose, cache=cache)
        for t in left:
            tasks.push(t)
        allocated_mod.propose(ssn, job, best, {"": best} if spec_of(job) is not None else {})
        return stmt
    for t in pending:
        tasks.push(t)
    allocated_mod.forget_proposal(ssn, job)
    _explain(ssn, job, limit, allocated, tried)
    return ssn.statement()


def _drain(tasks: "pqueue.PriorityQueue") -> list[tasks_mod.TaskInfo]:
    out = []
    while tasks:
        out.append(tasks.pop())
    return out


def _try(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
         pending: list[tasks_mod.TaskInfo], mask: np.ndarray, choose: Choose,
         done: Callable[[], bool] | None = None, cache: bool = False) -> tuple["statement_mod.Statement", list]:
    """allocate_for_job's loop over the HyperNode's nodes only; the tasks not tried are returned.
    `done`: when to stop with tasks left (the job is ready, by default); `cache`: a predicate error cache of
    this attempt's own (roleerrors.py)."""
    done = done or (lambda: ssn.job_ready(job))
    stmt = ssn.statement()
    role_errors = roleerrors.RoleErrors(len(ssn.nodes)) if cache else None
    for i, task in enumerate(pending):
        if not ssn.allocatable(queue, task):
            continue
        if ssn.pre_predicate(task) is not None:
            continue
        cached = role_errors.cached(task) if role_errors is not None else None
        among = mask if cached is None else mask & ~cached.mask(len(ssn.nodes))   # (cached nodes: not checked)
        # (an among-predicate — the extender — is asked about the HyperNode's nodes the resources fit, only)
        failures = ssn.predicate(task, ssn.nodes, lambda: ssn.fit_cache.masks(task.req)[0] & among)
        feasible, _ = ssn.feasible_nodes(task, copy=True, failures=failures, cached=cached)
        if role_errors is not None:
            role_errors.record(task, [fit.resource_fit(task.req, ssn.nodes, ssn.nodes.future_idle()), *failures])
        feasible &= mask
        if not feasible.any():
            continue
        row, idle = choose(ssn, task, feasible)
        if (stmt.allocate if idle else stmt.pipeline)(task, row) is not None:
            continue   # (undone and noted by the statement)
        if i + 1 < len(pending) and done():
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


def _allocate_parts(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
                    tasks: "pqueue.PriorityQueue", limit: int | None, parts: list[Part],
                    choose: Choose, cache: bool = False) -> "statement_mod.Statement":
    """allocate_job for a job with limited partitions (Volcano's allocateForJob over SubJobs)."""
    allocated = job_allocated(ssn, job) if limit is not None else ""
    pending = _drain(tasks)
    tried = gradients(ssn, job, limit, allocated) if limit is not None else [[hypernodes_mod.TOP]]
    for gradient in tried:
        scores = {}
        for hn in gradient:
            stmt, _, score, _ = _try_parts(ssn, job, queue, pending, hn, parts, choose, cache)
            if stmt.operations and (ssn.job_ready(job) or ssn.job_pipelined(job)):
                scores[hn] = score
            stmt.discard()
        if not scores:
            continue
        best = max(sorted(scores), key=lambda hn: scores[hn])
        stmt, left, _, chosen = _try_parts(ssn, job, queue, pending, best, parts, choose, cache)
        for t in left:
            tasks.push(t)
        if spec_of(job) is not None:
            chosen[""] = best   # the default partition carries the job's topology
        allocated_mod.propose(ssn, job, best, chosen)
        return stmt
    for t in pending:
        tasks.push(t)
    allocated_mod.forget_proposal(ssn, job)
    if limit is None or not tried:
        _explain_parts(ssn, job, parts)
    else:
        _explain(ssn, job, limit, allocated, tried)
    return ssn.statement()


def _try_parts(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
               pending: list[tasks_mod.TaskInfo], hn: str, parts: list[Part],
               choose: Choose, cache: bool = False) -> tuple["statement_mod.Statement", list, float, dict[str, str]]:
    """The job within HyperNode `hn`, a partition at a time (the default one: the other tasks),
    best pending task first, each until it is ready and back in line while it has tasks left; stops
    when the job is ready. Returns the statement, the tasks left, the partitions' scores' sum and
    the HyperNode chosen for each limited partition placed."""
    owner = {uid: p for p in parts for uid in p.uids}
    groups: dict[str, list] = {}
    for t in pending:
        groups.setdefault(owner[t.uid].name if t.uid in owner else "", []).append(t)
    by_name = {p.name: p for p in parts}
    line = list(groups)   # by each partition's best pending task (Volcano: SubJobOrderFn)
    required = _required(job, line, by_name)
    order = lambda n: (n not in required, pending.index(groups[n][0]))   # noqa: E731
    line.sort(key=order)
    stmt, total, failed, chosen = ssn.statement(), 0.0, [], {}
    while line:
        name = line.pop(0)
        members = groups.pop(name)
        part = by_name.get(name)
        if part is None:
            sub, rest = _try(ssn, job, queue, members, ssn.topology.leaves[hn], choose,
                             done=lambda: True, cache=cache)
            score = _score(ssn, members, [hn])[0] if sub.operations else 0.0
        else:
            sub, rest, score, where = _try_part(ssn, job, queue, members, hn, part, choose, cache)
        if sub is None or not sub.operations:
            failed.extend(members)
            continue
        stmt.merge(sub)
        total += score
        if part is not None:
            chosen[name] = ssn.topology.lca(chosen.get(name, ""), where)
        if rest:
            groups[name] = rest
            line.append(name)
            line.sort(key=order)
        if ssn.job_ready(job):
            break
    left = failed + [t for members in groups.values() for t in members]
    return stmt, sorted(left, key=pending.index), total, chosen


def _required(job: "jobs_mod.JobInfo", line: list[str], by_name: dict[str, Part]) -> set[str]:
    """The partitions that go first (allocate.go organizeJobWorksheet's requireSubJobs): in line order, the
    not yet ready ones of each policy with `minSubGroups`, as many as it still lacks ready partitions."""
    short = subgroups.short_of(job)
    out = set()
    for name in line:
        part = by_name.get(name)
        if part is not None and short.get(part.policy, 0) > 0 and part.placed(job) < part.size:
            out.add(name)
            short[part.policy] -= 1
    return out


def _try_part(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
              members: list, hn: str, part: Part, choose: Choose, cache: bool = False
              ) -> tuple[Any, list, float, str]:
    """Volcano's allocateForSubJob: the partition within the best HyperNode of its first gradient
    (below `hn`) where it becomes ready or pipelined, and that HyperNode; (None, members, 0, "") when
    there is none."""
    tree = ssn.topology
    need = np.sum([t.req for t in members], axis=0) if members else None
    done = lambda: part.placed(job) >= part.size   # noqa: E731
    for gradient in gradients(ssn, job, part.limit, part_allocated(ssn, job, part.name), within=hn, need=need):
        fits = []
        for c in gradient:
            sub, _ = _try(ssn, job, queue, members, tree.leaves[c], choose, done=done, cache=cache)
            if sub.operations and part.placed(job, pipelined=True) >= part.size:
                fits.append(c)
            sub.discard()
        if not fits:
            continue
        scores = _score(ssn, members, fits, part)
        i = int(np.argmax(scores))
        sub, rest = _try(ssn, job, queue, members, tree.leaves[fits[i]], choose, done=done, cache=cache)
        return sub, rest, float(scores[i]), fits[i]
    return None, members, 0.0, ""


def _score(ssn: "session_mod.Session", members: list, names: list[str], part: Part | None = None) -> np.ndarray:
    """HyperNodeOrder over a partition's tasks (all of them: placed or not, as Volcano's subJob.Tasks)."""
    job = ssn.jobs.get(members[0].job) if members else None
    if part is not None and job is not None:
        view = _Tasks({uid: job.tasks[uid] for uid in part.uids})
    else:
        view = _Tasks({t.uid: t for t in members})
    return np.broadcast_to(np.asarray(ssn.hypernode_order(view, names), dtype=np.float64), (len(names),))


def _explain_parts(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", parts: list[Part]) -> None:
    limits = ", ".join(f"{p.name} (tier <= {p.limit})" for p in parts)
    msg = f"network topology: no placement keeps each partition within one HyperNode of its tier: {limits}"
    ssn.explain_unschedulable(job, REASON, msg)
    for t in (job.index.get(tasks_mod.TaskStatus.PENDING) or {}).values():
        job.task_notes.setdefault(t.uid, msg)
