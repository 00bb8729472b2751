"""What gangpreempt and gangreclaim share: evict whole bundles of victims, domain by domain, for a
starving gang, only where its placement then succeeds (actions/gangpreempt, gangreclaim; design
docs/design/gang-aware-eviction-design.md).

Jobs: admitted (not Pending), valid, in a known queue; queues best first (QueueOrder), the starving
jobs (JobStarving) of each best first (JobOrder), each in one statement, committed if the job is then
pipelined (JobPipelined), else discarded. For a job (`_for_job`):
1. its demand: gangplan.pending (every pending task of a starting job; a ready job's first partition);
2. its domains (`domains`): a job with a hard `networkTopology` tier limit searches the HyperNodes of
   that limit whose nodes' allocatable could hold its minResources, widest tier first, at most
   network-topology-aware's `hypernode.gradient.evict.max-hypernodes` (8) of them, then at most
   `maxDomains` of those; any other job the whole cluster;
3. per domain: the candidates on its nodes (the action's `candidate` test) grouped by job into
   bundles (actions/bundles.py), sorted (the action's order), handed in that order to the
   UnifiedEvictable plugins at once (eviction.Context: the action's kind, the job, the domain);
   the bundles they allow, sorted again, whole ones dropped unless `allowWholeBundle`;
4. bundles are added one by one; once the domain's idle + releasing plus what the chosen victims free
   covers the demand (cpu, memory, scalars), gangplan.place tries it: the chosen victims are evicted
   and the job placed; the first success ends the job's turn, else the next bundle, then domain.

What step 3 reads is cached for the action's run (`VictimCache`): the domain's tasks grouped by job once,
and each victim job's bundles while its task statuses are unchanged — the decisions are the same as
rebuilding them for every gang (tests/properties/test_gangevict_cache.py).

Arguments (Volcano's names): `maxDomains` (8) and `allowWholeBundle` (true). A `maxDomains` of 0 or
less is refused at load (Volcano logs it and uses 8).

Must not: write to the API; statements record decisions, the session collects them.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from vclite.scheduler.actions import bundles as bundles_mod
from vclite.scheduler.actions import gangplan, topology
from vclite.scheduler.actions import victims as victims_mod
from vclite.scheduler.framework import eviction, hooks, hypernodes
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

TaskInfo = tasks_mod.TaskInfo
DEFAULT_MAX_DOMAINS = 8
DEFAULT_EVICT_MAX_HYPERNODES = 8   # network-topology-aware's hypernode.gradient.evict.max-hypernodes
NETWORK_TOPOLOGY_AWARE = "network-topology-aware"


@dataclasses.dataclass(frozen=True)
class Arguments:
    ACTION: ClassVar[str] = ""
    maxDomains: int = DEFAULT_MAX_DOMAINS
    allowWholeBundle: bool = True

    def __post_init__(self) -> None:
        if self.maxDomains <= 0:
            raise ValueError(f"action \"{self.ACTION}\": argument 'maxDomains': must be a positive number of "
                             f"HyperNodes to search, got {self.maxDomains} (Volcano logs it and searches "
                             f"{DEFAULT_MAX_DOMAINS})")


@dataclasses.dataclass(frozen=True)
class Demand:
    """A gang's pending tasks as one request: Volcano hands Preemptive the task list, vclite's plugins
    read only its summed request."""
    req: np.ndarray


class VictimCache:
    """What `select` would otherwise rebuild for every starving gang: per domain, the placed tasks grouped
    by job in scan order (once), and per (domain, victim job) its candidates' bundles, kept while the
    victim job's task statuses are those they were built from (JobInfo.changes says when to compare them;
    a trial's evictions that were discarded change them back) — the bundles are a function of those
    statuses, and the candidates of a job depend on the starving gang only through `victim_job`, which
    is all or none. Gangs of a session mostly evict a few jobs each, so most bundles are reused."""

    def __init__(self, placed: victims_mod.Placed):
        self.placed = placed
        self._scan: dict[str, dict[str, list[tuple[int, TaskInfo]]]] = {}
        # (domain, victim uid) -> (victim.changes, its task statuses, first candidate's scan index, bundles)
        self._bundles: dict[tuple[str, str], tuple[int, tuple, int, list[bundles_mod.Bundle]]] = {}

    def _scan_of(self, domain: str, mask: np.ndarray) -> dict[str, list[tuple[int, TaskInfo]]]:
        scan = self._scan.get(domain)
        if scan is None:
            scan = self._scan[domain] = {}
            i = 0
            for row in np.flatnonzero(mask):
                for t in self.placed.by_row.get(int(row), ()):
                    scan.setdefault(t.job, []).append((i, t))
                    i += 1
        return scan

    def bundles(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", domain: str, mask: np.ndarray,
                action: "GangEviction") -> list[bundles_mod.Bundle]:
        found: list[tuple[int, list[bundles_mod.Bundle]]] = []
        for uid, tasks in self._scan_of(domain, mask).items():
            victim = ssn.jobs.get(uid)
            if victim is None or not action.victim_job(ssn, job, victim):
                continue
            kept = self._bundles.get((domain, uid))
            if kept is None or kept[0] != victim.changes:
                statuses = tuple(t.status for t in victim.tasks.values())
                if kept is not None and kept[1] == statuses:   # (changed and changed back: a discarded trial)
                    kept = self._bundles[(domain, uid)] = (victim.changes, *kept[1:])
                else:
                    local = [(i, t) for i, t in tasks if action.victim_task(t)]
                    first = local[0][0] if local else -1
                    kept = self._bundles[(domain, uid)] = (victim.changes, statuses, first, bundles_mod.job_bundles(
                        victim, [t for _, t in local]))
            if kept[3]:
                found.append((kept[2], kept[3]))
        found.sort(key=lambda f: f[0])
        return [b for _, bs in found for b in bs]


class GangEviction:
    """The shared action; subclasses give `name`, `kind`, `reason` and the hooks below."""
    name: ClassVar[str]
    kind: ClassVar[eviction.Kind]
    Arguments: ClassVar[type] = Arguments
    cache_victims: ClassVar[bool] = True   # (off: the bundles rebuilt for every gang; tests compare the two)

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    # ---- what the two actions do differently --------------------------------------------------------
    def skip_queue(self, ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo") -> bool:
        return False

    def may_evict_for(self, ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", demand: Demand) -> bool:
        return True

    def victim_job(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", victim: "jobs_mod.JobInfo") -> bool:
        """Whether `victim`'s tasks may be evicted for `job` (what does not depend on the task)."""
        raise NotImplementedError

    def victim_task(self, t: TaskInfo) -> bool:
        """Whether the task itself may be evicted (its status, its pod's `volcano.sh/preemptable`)."""
        raise NotImplementedError

    def candidate(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", t: TaskInfo) -> bool:
        victim = ssn.jobs.get(t.job)
        return victim is not None and self.victim_task(t) and self.victim_job(ssn, job, victim)

    def order(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", bundles: list[bundles_mod.Bundle],
              need: np.ndarray) -> list[bundles_mod.Bundle]:
        raise NotImplementedError

    # ---- the shared loop -----------------------------------------------------------------------------
    def execute(self, ssn: "session_mod.Session") -> None:
        queues = ssn.queue_pq()
        seen: set[str] = set()
        starving: dict[str, "pqueue.PriorityQueue"] = {}
        for job in ssn.jobs.values():
            if job.is_pending() or ssn.job_valid(job) is not None or job.queue not in ssn.queues:
                continue
            if job.queue not in seen:
                seen.add(job.queue)
                queues.push(ssn.queues[job.queue])
            if ssn.job_starving(job):
                starving.setdefault(job.queue, ssn.job_pq()).push(job)
        if not starving:
            return
        self.prepare(ssn)
        while queues:
            queue = queues.pop()
            if self.skip_queue(ssn, queue):
                continue
            jobs = starving.get(queue.name)
            while jobs:
                job = jobs.pop()
                stmt = ssn.statement()
                self._for_job(ssn, stmt, queue, job)
                if ssn.job_pipelined(job):
                    stmt.commit()
                else:
                    stmt.discard()

    def prepare(self, ssn: "session_mod.Session") -> None:
        """What the action reads once per session: the tasks on each node; the victim cache."""
        self.placed = victims_mod.Placed(ssn)
        self._job_preemptable: dict[str, bool] = {}
        self.victims = VictimCache(self.placed) if self.cache_victims else None

    def job_preemptable(self, job: "jobs_mod.JobInfo") -> bool:
        """IsJobPreemptableForGangEviction: the PodGroup's `volcano.sh/preemptable`, true when unset."""
        v = self._job_preemptable.get(job.uid)
        if v is None:
            pg = job.podgroup if isinstance(job.podgroup, dict) else {}
            v = self._job_preemptable[job.uid] = victims_mod.preemptable_object(pg)
        return v

    def _for_job(self, ssn: "session_mod.Session", stmt: "statement_mod.Statement", queue: "jobs_mod.QueueInfo",
                 job: "jobs_mod.JobInfo") -> None:
        pending = gangplan.pending(ssn, job)
        if not pending:
            return
        need = np.sum([t.req for t in pending], axis=0)
        if not self.may_evict_for(ssn, queue, Demand(need)):
            return
        cap = evict_cap(ssn)
        cols = ssn.dims.not_pods
        for domain in domains(ssn, job, self.arguments.maxDomains, cap):
            mask = ssn.topology.leaves[domain]
            if not mask.any():
                continue
            chosen_bundles = self.select(ssn, job, need, domain, mask)
            if not chosen_bundles:
                continue
            nodes = ssn.nodes
            room = (nodes.idle[mask] + nodes.releasing[mask]).sum(axis=0)
            chosen: list[TaskInfo] = []
            for b in chosen_bundles:
                chosen.extend(b.tasks)
                for t in b.tasks:
                    room = room + t.req
                if bool((need[cols] > room[cols] + 1e-9).any()):
                    continue
                chain = gangplan.place(ssn, queue, job, domain, list(chosen), self.name, cap)
                if chain is not None:
                    for s in chain:
                        stmt.merge(s)
                    return

    def found(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", domain: str,
              mask: np.ndarray) -> list[bundles_mod.Bundle]:
        """The domain's candidates as bundles, victim jobs in the order their first candidate is met
        (rows in order, each row's tasks in order); through the victim cache unless it is off."""
        if self.victims is not None:
            return self.victims.bundles(ssn, job, domain, mask, self)
        by_job: dict[str, list[TaskInfo]] = {}
        for row in np.flatnonzero(mask):
            for t in self.placed.by_row.get(int(row), ()):
                if self.candidate(ssn, job, t):
                    by_job.setdefault(t.job, []).append(t)
        return [b for uid, tasks in by_job.items() for b in bundles_mod.job_bundles(ssn.jobs[uid], tasks)]

    def select(self, ssn: "session_mod.Session", job: "jobs_mod.JobInfo", need: np.ndarray, domain: str,
               mask: np.ndarray) -> list[bundles_mod.Bundle]:
        """The domain's victim bundles the plugins allow, in the order they are to be taken."""
        found = self.found(ssn, job, domain, mask)
        if not found:
            return []
        found = self.order(ssn, job, found, need)
        ctx = eviction.Context(self.kind, job, domain)
        allowed = ssn.hooks.call(hooks.Point.UNIFIED_EVICTABLE, ctx, bundles_mod.flatten(found)) or []
        if not allowed:
            return []
        valid = self.order(ssn, job, bundles_mod.apply_allowed(found, {t.uid for t in allowed}), need)
        return [b for b in valid if not b.whole or self.arguments.allowWholeBundle]


def evict_cap(ssn: "session_mod.Session") -> int:
    """network-topology-aware's `hypernode.gradient.evict.max-hypernodes` (8 when it is not configured or
    not positive, as upstream)."""
    for plugin in ssn.plugins:
        if getattr(plugin, "name", "") == NETWORK_TOPOLOGY_AWARE:
            cap = plugin.arguments.evict_max_hypernodes
            return cap if cap > 0 else DEFAULT_EVICT_MAX_HYPERNODES
    return DEFAULT_EVICT_MAX_HYPERNODES


def hard_limit(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> int | None:
    """The job's hard networkTopology tier limit (None: none, or `soft`)."""
    nt = topology.spec_of(job)
    if nt is None or nt.get("mode") == "soft":
        return None
    return topology.highest_tier(ssn, nt)


def domains(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", max_domains: int, cap: int) -> list[str]:
    """GetCandidateDomains (see the module docstring)."""
    limit = hard_limit(ssn, job)
    if limit is None:   # (no gradient for a job without a hard limit: the search root alone)
        return pick([[hypernodes.TOP]], max_domains, hypernodes.TOP)
    grads = topology.gradients(ssn, job, limit, topology.job_allocated(ssn, job), evict=True)
    return pick(gangplan.widest_first(grads, cap), max_domains)


def pick(grads: list[list[str]], max_domains: int, fallback: str = "") -> list[str]:
    """PickDomainsFromGradients: the HyperNodes in gradient order, each once, at most `max_domains`;
    `fallback` alone when there are none."""
    out: list[str] = []
    for g in grads:
        for hn in g:
            if hn and hn not in out:
                out.append(hn)
                if 0 < max_domains <= len(out):
                    return out
    if not out and fallback:
        out.append(fallback)
    return out
