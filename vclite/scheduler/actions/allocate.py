"""allocate: place the pending tasks of admitted jobs on nodes, a gang at a time (§3.4).

Loop: pop the best queue (QueueOrder; an Overused queue is dropped for the session), pop its best
job (JobOrder), and try that job's pending tasks best first (TaskOrder) in one Statement:
- skip a task its queue cannot take (Allocatable) or whose role already fit nowhere in its partition (recorded as
  its fit error: `Task <name> with role spec <role> has already predicated failed, skip`, as Volcano's
  TaskHasFitErrors(subJob)); a job with `subGroupPolicy` is tried partition by partition (actions/subjobs.py);
- feasible nodes = resources fit `future_idle` and every Predicate passes (vector ops, all nodes), less the nodes
  a task of the same role already failed on in this attempt (Volcano's predicate error cache: roleerrors.py);
  none -> remember why (per-node reasons) and go on only if the gang can still be met
  (NeedContinueAllocating), else stop;
- candidates: nodes whose idle holds the task first, else those that hold it only once releasing
  resources are freed; best by NodeOrder score (BestNode may choose), ties -> first node by name;
- idle fits -> allocate; otherwise pipeline (reserve releasing resources);
- when the job becomes ready with tasks left, stop: the job goes back in line.
Then: ready -> commit (binds); pipelined but not ready -> keep the reservations for this session
(neither committed nor discarded, as Volcano); otherwise discard. The queue goes back in line
after every job, so shares are re-ranked. Pending jobs are skipped when `enqueue` is configured,
else admitted here; invalid jobs (JobValid) are skipped with their reason written — unless only pods
terminating on their nodes make them invalid (JobInfo.covered_by_releasing: Volcano writes no condition then).
BestEffort tasks (no cpu/memory/scalar request) and scheduling-gated pods are left to `backfill`; a pod held
only by Volcano's queue-allocation gate that its queue can take is ungated (SessionResult.ungate).
A job whose PodGroup has `networkTopology` with a tier limit, or a `subGroupPolicy` (partition) with
`networkTopology`, takes actions/topology.py instead of `allocate_for_job` (the gang within one
HyperNode, each partition within one of its tier); every other job takes the path below unchanged.

Hot path: when no predicate plugin rejects any node for the task and every NodeOrder function is
row-local (registered with `key=`), the best idle-fitting node comes from the session's memo over
all nodes (`Session.best_idle_node`, recomputed only on nodes changed since), which picks the
node the general path would; otherwise the candidates are filtered and scored as described.

Must not: write to the API; statements record decisions, the session collects them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses

import numpy as np

from vclite.api import scheduling
from vclite.scheduler.actions import allocated, enqueue, roleerrors, subjobs, topology
from vclite.scheduler.framework import fit, subgroups
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

NAME = "allocate"
Outcome = subjobs.Outcome


@dataclasses.dataclass(frozen=True)
class Arguments:
    # Volcano's predicate error cache within one attempt at a job's tasks (roleerrors.py); false: every task is
    # checked on every node
    predicateErrorCacheEnable: bool = True


class Allocate:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        allocated.prune(ssn)
        by_queue: dict[str, list] = {}
        with_enqueue = ssn.conf.has_action(enqueue.NAME)
        for job in ssn.jobs.values():
            if job.is_pending():
                if with_enqueue:
                    continue
                job.phase = scheduling.PodGroupPhase.INQUEUE
            invalid = ssn.job_valid(job)
            if invalid is not None:
                if job.tasks and not job.covered_by_releasing():   # (terminating pods are not a reason)
                    ssn.explain_unschedulable(job, invalid.reason, invalid.message)
                continue
            jobs = by_queue.get(job.queue)
            if jobs is None:
                jobs = by_queue[job.queue] = []
            jobs.append(job)
        queues = ssn.queue_pq(ssn.queues[name] for name in by_queue)
        self._allocate(ssn, queues, {name: ssn.job_pq(jobs) for name, jobs in by_queue.items()})

    def _allocate(self, ssn: "session_mod.Session", queues: "pqueue.GoHeap",
                  jobs_by_queue: dict[str, "pqueue.PriorityQueue"]) -> None:
        pending: dict[str, "pqueue.PriorityQueue"] = {}
        while queues:
            queue = queues.pop()
            if ssn.overused(queue):
                continue
            jobs = jobs_by_queue.get(queue.name)
            if not jobs:
                continue
            job = jobs.pop()
            if job.uid not in pending:
                _ungate_admitted(ssn, job, queue)
                pending[job.uid] = ssn.task_pq(
                    t for t in job.tasks_in(tasks_mod.TaskStatus.PENDING) if not t.best_effort and not t.scheduling_gated)
            tasks = pending[job.uid]
            if tasks:
                nt = topology.spec_of(job)   # (a job with networkTopology: actions/topology.py)
                limit = topology.highest_tier(ssn, nt) if nt is not None else None
                plain = limit is None and not topology.has_partition_topology(job)
                # a job whose tasks go back when nothing fits (topology, partitions) returns only while it progresses
                returns = plain and not subgroups.policies(job)
                if plain:
                    stmt = allocate_for_job(ssn, job, queue, tasks, self.arguments.predicateErrorCacheEnable)
                else:
                    stmt = topology.allocate_job(ssn, job, queue, tasks, limit, choose_node,
                                                 self.arguments.predicateErrorCacheEnable)
                if ssn.job_ready(job):
                    again = bool(tasks) and (returns or bool(stmt.operations))
                    stmt.commit()
                    if not plain:   # the HyperNodes chosen are kept (recorder.UpdateDecisionToJob)
                        allocated.commit(ssn, job, topology.groups_of(ssn, job))
                    if again:
                        jobs.push(job)
                elif not ssn.job_pipelined(job):
                    stmt.discard()
            queues.push(queue)


def _ungate_admitted(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo") -> None:
    """Pods held by Volcano's queue-allocation gate that their queue can take (Allocatable, which may reserve
    them) lose the gate once it is their only one (the shell removes it; the next session places them)."""
    for t in job.tasks_in(tasks_mod.TaskStatus.PENDING):
        if t.scheduling_gated and t.queue_allocation_opt_in and ssn.allocatable(queue, t) \
                and t.only_queue_allocation_gate:
            ssn.ungate.append(t.key)


def allocate_for_job(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
                     tasks: "pqueue.PriorityQueue", error_cache: bool = False) -> "statement_mod.Statement":
    """Try the job's tasks in order in one statement (see the module docstring); a job with `subGroupPolicy`
    partition by partition (actions/subjobs.py). `error_cache`: Volcano's predicate error cache over this
    attempt (roleerrors.py; on the partition path one per partition's attempt)."""
    if subgroups.policies(job):
        return subjobs.allocate_job(ssn, job, tasks, lambda stmt, task, errors: place_task(ssn, job, queue, stmt, task,
                                                                                          errors), error_cache)
    stmt = ssn.statement()
    errors = roleerrors.RoleErrors(len(ssn.nodes)) if error_cache else None
    while tasks:
        task = tasks.pop()
        outcome = place_task(ssn, job, queue, stmt, task, errors)
        if outcome is Outcome.FAILED:
            if job.need_continue_allocating():
                continue
            break
        if outcome is Outcome.PLACED and tasks and ssn.job_ready(job):
            break
    return stmt


def place_task(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
               stmt: "statement_mod.Statement", task: tasks_mod.TaskInfo,
               role_errors: roleerrors.RoleErrors | None = None) -> Outcome:
    """One task of allocate's loop: skipped, failed (its fit errors recorded) or placed in `stmt`. `role_errors`:
    the nodes its role already failed on in this attempt are refused again for their reasons (roleerrors.py)."""
    if not ssn.allocatable(queue, task):
        _note_not_allocatable(ssn, job, queue, task)
        return Outcome.SKIPPED
    if job.has_role_fit_errors(task):   # (recorded, as Volcano does: its pod and PodGroup say why)
        job.record_fit_errors(task, fit.FitErrors.role_failed(task.name, task.role))
        return Outcome.SKIPPED
    reason = ssn.pre_predicate(task)
    if reason is not None:
        job.record_fit_errors(task, fit.FitErrors.everywhere(len(ssn.nodes), str(reason)))
        return Outcome.FAILED
    cached = role_errors.cached(task) if role_errors is not None else None
    if cached is None:
        failures = ssn.predicate(task, ssn.nodes, lambda: ssn.fit_cache.masks(task.req)[0])   # (resources first)
    else:   # (the nodes cached are not checked again)
        failures = ssn.predicate(task, ssn.nodes, ssn.fit_cache.masks(task.req)[0] & ~cached.mask(len(ssn.nodes)))
    row, idle = None if failures or cached else ssn.best_idle_node(task), True   # the hot path (see above)
    if row is None:
        feasible, errors = ssn.feasible_nodes(task, failures=failures, cached=cached)
        if role_errors is not None:
            role_errors.record(task, [fit.resource_fit(task.req, ssn.nodes, ssn.nodes.future_idle()), *failures])
        if errors is not None:
            job.record_fit_errors(task, errors)
            return Outcome.FAILED
        row, idle = choose_node(ssn, task, feasible)
    refused = stmt.allocate(task, row) if idle else stmt.pipeline(task, row)
    # (a refusal is undone and noted by the statement; upstream logs the error and goes on)
    return Outcome.SKIPPED if refused is not None else Outcome.PLACED


def _note_not_allocatable(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", queue: "jobs_mod.QueueInfo",
                          task: tasks_mod.TaskInfo) -> None:
    note = ssn.task_notes.pop(task.uid, None) or f'queue "{queue.name}" cannot take the task now'
    hint = fit.too_big_hint(task.req, ssn.nodes)
    job.task_notes[task.uid] = f"{hint}; {note}" if hint else note


def best_node(ssn: "session_mod.Session", task: tasks_mod.TaskInfo, feasible: np.ndarray) -> int:
    """The chosen row among feasible nodes: idle-fitting nodes first, then future-idle ones."""
    return choose_node(ssn, task, feasible)[0]


def choose_node(ssn: "session_mod.Session", task: tasks_mod.TaskInfo, feasible: np.ndarray) -> tuple[int, bool]:
    """`best_node`, and whether the node's idle resources hold the task (else: pipeline)."""
    idle_ok = feasible & ssn.idle_fit(task)
    every = ssn.node_scores(task)   # all nodes' scores when they are row-local (the common case)
    for second in (False, True):
        candidates = feasible & ~idle_ok if second else idle_ok
        if every is not None:
            # the first best candidate, as rows[argmax(scores[rows])] finds it, without gathering rows
            row = int(np.where(candidates, every, -np.inf).argmax())
            if candidates[row]:
                return row, not second
        rows = np.flatnonzero(candidates)
        if rows.size == 0:
            continue
        if rows.size == 1:
            return int(rows[0]), not second
        scores = ssn.node_order(task, rows)
        if type(scores) is not np.ndarray or scores.shape != rows.shape or scores.dtype != np.float64:
            scores = np.broadcast_to(np.asarray(scores, dtype=np.float64), rows.shape)
        chosen = ssn.best_node(task, rows, scores)
        if chosen is not None:
            return int(chosen), bool(ssn.idle_fit(task)[int(chosen)])
        return int(rows[int(np.argmax(scores))]), not second
    raise AssertionError("best_node called without a feasible node")
