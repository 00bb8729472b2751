"""reclaim: take resources back from queues using more than they deserve, for starving jobs (§3.4).

Queues that hold admitted, valid jobs are visited best first (QueueOrder); an Overused queue is
skipped. Its starving jobs (JobStarving) go best first (JobOrder), each in one statement; the
job's pending tasks (not scheduling-gated) best first (TaskOrder), while the job is starving:
- skip a task with `preemptionPolicy: Never` (the pod's, else its PriorityClass's), one its queue
  may not take (Preemptive), or whose PrePredicate fails;
- over the nodes where only resolvable predicate failures reject it (Volcano: in its node list's
  order; here fewer pipelined reservations first, then by name):
  reclaimees = Running, preemptable tasks of OTHER queues whose `spec.reclaimable` is not false;
  victims = Reclaimable(task, reclaimees); skip the node unless the request fits future idle
  + Σ victims; in a statement of the node's own, evict victims in victim order while the request
  does not fit what the node has free plus what was evicted; if it then fits, pipeline the task
  there and merge into the job's statement (first such node wins), else discard the node's
  evictions;
after the job: commit if JobPipelined allows, else discard (every eviction rolled back).
Unlike preempt, predicates are not re-checked after the evictions (Volcano). Nodes are skipped at
once when even every candidate's eviction could not make room, or when the plugins' victims
already could not for an equal task since the last node change (victims.Hopeless).

Must not: write to the API; statements record decisions, the session collects them.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from vclite.scheduler.actions import victims as victims_mod
from vclite.scheduler.framework import hooks
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod

NAME = "reclaim"
TaskInfo = tasks_mod.TaskInfo
TaskStatus = tasks_mod.TaskStatus
_BOUND_STATUS = frozenset({TaskStatus.RUNNING, TaskStatus.RELEASING})


@dataclasses.dataclass(frozen=True)
class Arguments:
    predicateErrorCacheEnable: bool = True   # accepted; vclite evaluates predicates over all nodes at once


def reclaimable_queue(queue: "jobs_mod.QueueInfo") -> bool:
    """`spec.reclaimable`, unset meaning true (Volcano's QueueInfo.Reclaimable)."""
    return (queue.obj.get("spec") or {}).get("reclaimable") is not False


class Reclaim:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        queues = ssn.queue_pq()
        seen: set[str] = set()
        preemptors: dict[str, "pqueue.PriorityQueue"] = {}
        tasks: dict[str, "pqueue.PriorityQueue"] = {}
        for job in ssn.jobs.values():
            if job.is_pending() or ssn.job_valid(job) is not None or job.queue not in ssn.queues:
                continue
            if job.queue not in seen:
                seen.add(job.queue)
                queues.push(ssn.queues[job.queue])
            if ssn.job_starving(job):
                preemptors.setdefault(job.queue, ssn.job_pq()).push(job)
                tasks[job.uid] = ssn.task_pq(t for t in job.tasks_in(TaskStatus.PENDING) if not t.scheduling_gated)
        if not preemptors:
            return
        self.placed = victims_mod.Placed(ssn)
        self.hopeless = victims_mod.Hopeless(ssn, hooks.Point.RECLAIMABLE)
        never = victims_mod.never_classes(ssn)
        # Volcano pushes the queue back after each job while it has more; the same queue is then
        # popped again at once, so its starving jobs are simply taken in turn here.
        while queues:
            queue = queues.pop()
            if ssn.overused(queue):
                continue
            jobs = preemptors.get(queue.name)
            while jobs:
                job = jobs.pop()
                stmt = ssn.statement()
                pending = tasks[job.uid]
                while ssn.job_starving(job) and pending:
                    task = pending.pop()
                    if victims_mod.never_preempts(task, never) or not ssn.preemptive(queue, task):
                        continue
                    if ssn.pre_predicate(task) is not None:
                        continue
                    self.reclaim_for_task(ssn, stmt, queue, task)
                if ssn.job_pipelined(job):
                    stmt.commit()
                else:
                    stmt.discard()

    def reclaim_for_task(self, ssn: "session_mod.Session", stmt: "statement_mod.Statement",
                         queue: "jobs_mod.QueueInfo", task: TaskInfo) -> bool:
        """Evict on the first node where that makes room for `task`, and pipeline it there."""
        def other_queue(t: TaskInfo) -> bool:
            q = ssn.jobs[t.job].queue
            return q != queue.name and reclaimable_queue(ssn.queues[q]) and self.placed.preemptable(t)

        def reclaimee(t: TaskInfo) -> bool:
            return t.status == TaskStatus.RUNNING and other_queue(t)

        bound = self.placed.bound(("reclaim", queue.name), lambda t: t.status in _BOUND_STATUS and other_queue(t))
        profile = self.hopeless.profile(task, queue.name)   # the candidates: other queues' pods
        rows = victims_mod.could_fit(ssn, task, victims_mod.candidate_rows(ssn, task), bound)
        rows = self.hopeless.drop(profile, rows)
        for row in victims_mod.node_order(ssn, task, rows, scored=False):
            candidates = self.placed.on(row, reclaimee)
            if not candidates:
                self.hopeless.add(profile, row)
                continue
            candidates = victims_mod.in_victim_order(ssn, candidates, task)
            victims = ssn.hooks.call(hooks.Point.RECLAIMABLE, task, candidates) or []
            if not victims_mod.victims_fit(ssn, task, row, victims):
                self.hopeless.add(profile, row)
                continue
            node_stmt = ssn.statement()
            line = victims_mod.victim_queue(ssn, victims, task)
            room = victims_mod.future_idle(ssn, row)
            while line and not victims_mod.holds(task.req, room):
                victim = line.pop()
                node_stmt.evict(victim, "reclaim")
                room += victim.req
            if not victims_mod.holds(task.req, room):
                node_stmt.discard()
                continue
            if node_stmt.pipeline(task, row, evicted_for=node_stmt.has_evictions()) is not None:
                node_stmt.discard()   # (a handler refused the node: its evictions are taken back)
                continue
            stmt.merge(node_stmt)
            return True
        return False
