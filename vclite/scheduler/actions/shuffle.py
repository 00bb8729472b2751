"""shuffle: evict what the VictimTasks plugins choose among the running pods (actions/shuffle/shuffle.go).

Every running task of every job is offered to the VictimTasks functions (tdm: preemptable pods left
on revocable nodes whose zone has closed; the union over the first tier that names any), the
VictimFilter functions (pdb: what the PodDisruptionBudgets allow) keep what may go, and each
victim is evicted at once, with reason "shuffle".

Must not: write to the API; statements record decisions, the session collects them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vclite.scheduler.framework import plugin
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

NAME = "shuffle"


class Shuffle:
    name = NAME
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def execute(self, ssn: "session_mod.Session") -> None:
        running = [t for job in ssn.jobs.values() for t in job.tasks.values()
                   if t.status == tasks_mod.TaskStatus.RUNNING]
        if not running:
            return
        victims = ssn.victim_tasks(running) or []
        if victims:
            victims = ssn.victim_filter(victims)
        if not victims:
            return
        stmt = ssn.statement()
        for task in sorted(victims, key=lambda t: t.key):
            if task.status == tasks_mod.TaskStatus.RUNNING:
                stmt.evict(task, NAME)
        stmt.commit()
