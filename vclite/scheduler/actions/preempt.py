"""preempt: evict lower-priority pods of the same queue to make room for starving jobs (§3.4).

Preemptors are the pending tasks (not scheduling-gated) of admitted, valid, starving
(JobStarving) jobs, grouped by queue. Queues best first (QueueOrder); in each queue:
1. Between jobs: jobs best first (JobOrder); while a job is starving, its pending tasks best first
   (TaskOrder) each try `preempt` with candidates = Bound/Running, preemptable pods of OTHER jobs
   of the SAME queue (a BestEffort preemptor may only evict BestEffort pods). The job's statement
   is committed if JobPipelined allows, else discarded (every eviction rolled back).
2. Within a job: each starving job's pending tasks try `preempt` on the job's own pods; each
   success is committed at once, the first failure ends the job's turn.

`preempt` for one task: skipped if `preemptionPolicy: Never` (the pod's, else its PriorityClass's)
or PrePredicate fails; nodes = those where only resolvable predicate failures reject the task,
best NodeOrder score first (equal scores: fewer pipelined reservations first, then by name); per
node: victims = Preemptable(preemptor, candidates); skip the node unless the request fits future
idle + Σ victims; then, in a statement of the node's own, evict victims in victim order until the
preemptor fits (Allocatable, request ≤ future idle, every predicate passes); if it does, pipeline
it there (onto the releasing resources) and merge into the job's statement, else discard the
node's evictions and try the next node. A task may be pipelined without any eviction when it
already fits (Volcano does the same). Evictions therefore commit only on the node where the
preemptor then fits. Nodes are skipped at once when even every candidate's eviction could not
make room, or when the plugins' victims already could not for an equal preemptor since the last
node change (victims.Hopeless): many equal preemptors facing a full cluster cost one pass.

With `enableTopologyAwarePreemption: true` a task's nodes are dry-run instead (preempt_dryrun.py:
victims reprieved when not needed, the cheapest candidate node chosen, no NodeOrder). Either way a
job with `networkTopology` (its own or a partition's) never preempts, as upstream (Volcano issue
#4374: its pods would not be kept within a HyperNode). Nominated nodes do not exist in vclite.
Must not: write to the API; statements record decisions, the session collects them.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from vclite.scheduler.actions import preempt_dryrun, topology
from vclite.scheduler.actions import victims as victims_mod
from vclite.scheduler.framework import hooks
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

NAME = "preempt"
TaskInfo = tasks_mod.TaskInfo
TaskStatus = tasks_mod.TaskStatus
_BOUND_STATUS = victims_mod.PREEMPTABLE_STATUS | {TaskStatus.RELEASING}


@dataclasses.dataclass(frozen=True)
class Arguments:
    enableTopologyAwarePreemption: bool = False
    topologyAwarePreemptWorkerNum: int = 16
    minCandidateNodesPercentage: int = 10
    minCandidateNodesAbsolute: int = 1
    maxCandidateNodesAbsolute: int = 100
    predicateErrorCacheEnable: bool = True   # accepted; vclite evaluates predicates over all nodes at once

    def num_candidates(self, nodes: int) -> int:
        """How many candidate nodes a topology-aware dry run collects before choosing."""
        return preempt_dryrun.num_candidates(nodes, self.minCandidateNodesPercentage,
                                             self.minCandidateNodesAbsolute, self.maxCandidateNodesAbsolute)


def _pending(job: "jobs_mod.JobInfo") -> list[TaskInfo]:
    return [t for t in job.tasks_in(TaskStatus.PENDING) if not t.scheduling_gated]


class Preempt:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        preemptors: dict[str, "pqueue.PriorityQueue"] = {}
        tasks: dict[str, "pqueue.PriorityQueue"] = {}
        under_request: dict[str, list["jobs_mod.JobInfo"]] = {}
        for job in ssn.jobs.values():
            if job.is_pending() or ssn.job_valid(job) is not None or job.queue not in ssn.queues:
                continue
            if not ssn.job_starving(job):
                continue
            if topology.spec_of(job) is not None or topology.has_partition_topology(job):
                continue   # ContainsNetworkTopology: not preempted for (module docstring)
            preemptors.setdefault(job.queue, ssn.job_pq()).push(job)
            under_request.setdefault(job.queue, []).append(job)
            tasks[job.uid] = ssn.task_pq(_pending(job))
        if not preemptors:
            return
        self.placed = victims_mod.Placed(ssn)
        self.never = victims_mod.never_classes(ssn)
        self.hopeless = victims_mod.Hopeless(ssn, hooks.Point.PREEMPTABLE)
        queues = ssn.queue_pq(ssn.queues[name] for name in preemptors)
        while queues:
            queue = queues.pop()
            jobs = preemptors[queue.name]
            while jobs:
                self._between_jobs(ssn, queue, jobs.pop(), tasks)
            for job in under_request[queue.name]:
                self._within_job(ssn, queue, job)

    def _between_jobs(self, ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", job: "jobs_mod.JobInfo",
                      tasks: dict[str, "pqueue.PriorityQueue"]) -> None:
        stmt = ssn.statement()
        pending = tasks[job.uid]
        while ssn.job_starving(job) and pending:
            preemptor = pending.pop()

            def other_job(t: TaskInfo, preemptor: TaskInfo = preemptor) -> bool:
                return (t.job != preemptor.job and t.status in victims_mod.PREEMPTABLE_STATUS
                        and ssn.jobs[t.job].queue == queue.name and self._evictable(preemptor, t))

            self.preempt(ssn, stmt, queue, preemptor, other_job, ("queue", queue.name))
        if ssn.job_pipelined(job):
            stmt.commit()
        else:
            stmt.discard()

    def _within_job(self, ssn: "session_mod.Session", queue: "jobs_mod.QueueInfo", job: "jobs_mod.JobInfo") -> None:
        pending = ssn.task_pq(_pending(job))
        while pending:
            preemptor = pending.pop()

            def same_job(t: TaskInfo, preemptor: TaskInfo = preemptor) -> bool:
                return t.job == preemptor.job and self._evictable(preemptor, t)

            stmt = ssn.statement()
            if not self.preempt(ssn, stmt, queue, preemptor, same_job, ("job", job.uid)):
                stmt.discard()
                break
            stmt.commit()

    def preempt(self, ssn: "session_mod.Session", stmt: "statement_mod.Statement", queue: "jobs_mod.QueueInfo",
                preemptor: TaskInfo, accept: Callable[[TaskInfo], bool], bound_key: object) -> bool:
        """Try to place `preemptor` by evicting tasks `accept` takes; True if it was pipelined."""
        if victims_mod.never_preempts(preemptor, self.never) or ssn.pre_predicate(preemptor) is not None:
            return False
        try:
            rows = victims_mod.candidate_rows(ssn, preemptor)
            every = len(rows)
            bound = self.placed.bound(bound_key + (preemptor.best_effort,),
                                      lambda t: self._loose(t, bound_key, preemptor.best_effort, ssn),
                                      ssn.jobs[preemptor.job].tasks.values() if bound_key[0] == "job" else None)
            profile = self.hopeless.profile(preemptor, self._candidates_profile(ssn, preemptor, bound_key))
            rows = self.hopeless.drop(profile, victims_mod.could_fit(ssn, preemptor, rows, bound))
            if self.arguments.enableTopologyAwarePreemption:
                return preempt_dryrun.preempt(
                    ssn, stmt, queue, preemptor, (int(r) for r in rows), self.arguments.num_candidates(every),
                    lambda row: victims_mod.in_victim_order(ssn, self.placed.on(row, accept), preemptor))
            for row in victims_mod.node_order(ssn, preemptor, rows):
                if self._on_node(ssn, stmt, queue, preemptor, row, accept, profile):
                    return True
            return False
        finally:
            ssn.task_notes.pop(preemptor.uid, None)  # Allocatable's note is for allocate's messages

    def _on_node(self, ssn: "session_mod.Session", stmt: "statement_mod.Statement", queue: "jobs_mod.QueueInfo",
                 preemptor: TaskInfo, row: int, accept: Callable[[TaskInfo], bool], profile: tuple | None) -> bool:
        candidates = victims_mod.in_victim_order(ssn, self.placed.on(row, accept), preemptor)
        victims = ssn.hooks.call(hooks.Point.PREEMPTABLE, preemptor, candidates) or []
        if not victims_mod.victims_fit(ssn, preemptor, row, victims):
            self.hopeless.add(profile, row)
            return False
        node_stmt = ssn.statement()
        line = victims_mod.victim_queue(ssn, victims, preemptor)
        fits = victims_mod.fits_after(ssn, queue, preemptor, row)
        while not fits and line:
            node_stmt.evict(line.pop(), "preempt")
            fits = victims_mod.fits_after(ssn, queue, preemptor, row)
        if not fits:
            node_stmt.discard()
            return False
        if node_stmt.pipeline(preemptor, row, evicted_for=node_stmt.has_evictions()) is not None:
            node_stmt.discard()   # (a handler refused the node: its evictions are taken back)
            return False
        stmt.merge(node_stmt)
        return True

    def _candidates_profile(self, ssn: "session_mod.Session", preemptor: TaskInfo, bound_key: tuple) -> tuple:
        """What fixes a node's candidate list for `preemptor` (with the node's state): the pass and
        its queue or job, BestEffort-ness, and the preemptor's job when its own placed tasks are
        left out (between jobs) — Preemptable also looks at the job only through its own tasks."""
        job = bound_key[1] if bound_key[0] == "job" or self.placed.has_tasks(preemptor.job) else None
        return (bound_key, preemptor.best_effort, job)

    def _evictable(self, preemptor: TaskInfo, t: TaskInfo) -> bool:
        """Bound or Running, preemptable, and not a request-bearing pod for a BestEffort preemptor."""
        return (t.status in victims_mod.PREEMPTABLE_STATUS and not (preemptor.best_effort and not t.best_effort)
                and self.placed.preemptable(t))

    def _loose(self, t: TaskInfo, key: tuple, best_effort: bool, ssn: "session_mod.Session") -> bool:
        """A superset of the candidates of any preemptor with this bound key (for the upper bound).
        Releasing tasks count too: a discarded statement may turn them back into candidates."""
        if t.status not in _BOUND_STATUS or (best_effort and not t.best_effort):
            return False
        kind, name = key
        if kind == "queue":
            return ssn.jobs[t.job].queue == name and self.placed.preemptable(t)
        return t.job == name and self.placed.preemptable(t)
