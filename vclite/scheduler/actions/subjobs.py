"""allocate for a job with `subGroupPolicy` and no networkTopology: partition by partition (Volcano's allocate.go
allocateForJob and allocateForSubJob, the virtual top HyperNode being the only candidate).

Each time the job is taken its failed roles are forgotten (ResetFitErr); the partitions with tasks left are tried
in worksheet order (actions/gangplan.py's: those `minSubGroups` still needs first, then SubJobOrder), each one's
failed roles forgotten first (ResetSubJobFitErr). A partition's tasks are tried best first (allocate's `place_task`:
a role that fit nowhere in this partition is skipped, TaskHasFitErrors(subJob)) until the partition is ready; a
task that fits nowhere stops the partition when it needs every one of its tasks (NeedContinueAllocating(subJob)),
not the job. A partition that ends neither ready nor pipelined, or with nothing placed, is undone and keeps its
tasks; one placed goes back in line while it has tasks left. The job stops once it is ready. It is a solution
when it is then ready or pipelined; else everything is undone and every task is kept.

Must not: write to the API.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Callable

from vclite.scheduler.actions import gangplan, roleerrors
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import pqueue
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import statement as statement_mod


class Outcome(enum.Enum):
    """What became of a task allocate tried."""
    SKIPPED = "skipped"   # its queue cannot take it, its role failed already, or a handler refused the node
    FAILED = "failed"     # it fits nowhere (its fit errors are recorded)
    PLACED = "placed"     # allocated or pipelined


# (statement, task, the attempt's predicate error cache or None) -> what became of the task
Place = Callable[["statement_mod.Statement", tasks_mod.TaskInfo, "roleerrors.RoleErrors | None"], Outcome]


def allocate_job(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", tasks: "pqueue.PriorityQueue",
                 place: Place, cache: bool = False) -> "statement_mod.Statement":
    """The job's statement (see the module docstring); the tasks not placed are put back in `tasks`. `cache`:
    Volcano's predicate error cache, one per partition's attempt, as allocateResourcesForTasks makes one."""
    job.reset_failed_roles()
    left = []
    while tasks:
        left.append(tasks.pop())
    wanted = {t.uid for t in left}
    line = []
    for part in gangplan.worksheet(ssn, job):
        part.pending = [t for t in part.pending if t.uid in wanted]
        if part.pending:
            line.append(part)
    stmt = ssn.statement()
    kept: list[tasks_mod.TaskInfo] = []
    while line:
        part = line.pop(0)
        job.reset_failed_roles(part.name)
        sub = ssn.statement()
        rest = _try(ssn, job, part, sub, place, roleerrors.RoleErrors(len(ssn.nodes)) if cache else None)
        if not sub.operations or not (gangplan.part_ready(ssn, job, part)
                                      or gangplan.part_pipelined(ssn, job, part)):
            sub.discard()
            kept.extend(part.pending)
            continue
        stmt.merge(sub)
        if rest:
            part.pending = rest
            line.append(part)
        if ssn.job_ready(job):
            break
    if not (ssn.job_ready(job) or ssn.job_pipelined(job)):
        stmt.discard()
        for t in left:
            tasks.push(t)
        return stmt
    for t in kept + [t for part in line for t in part.pending]:
        tasks.push(t)
    return stmt


def _try(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", part: gangplan.Part,
         stmt: "statement_mod.Statement", place: Place,
         role_errors: "roleerrors.RoleErrors | None") -> list[tasks_mod.TaskInfo]:
    """allocateResourcesForTasks: the partition's tasks in order until it is ready; the tasks not tried."""
    pending = part.pending
    for i, task in enumerate(pending):
        outcome = place(stmt, task, role_errors)
        if outcome is Outcome.FAILED and not job.need_continue_allocating(part.name):
            return pending[i + 1:]
        if outcome is Outcome.PLACED and gangplan.part_ready(ssn, job, part):
            return pending[i + 1:]
    return []
