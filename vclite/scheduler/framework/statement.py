"""Statement: a gang's tentative operations, committed or discarded as one transaction (§3.3).

Each operation takes effect in the session at once (task status, node columns, plugin accounting
through the allocate/deallocate event hooks) so later decisions in the same session see it, and
is recorded. `commit()` turns the log into decisions (allocate -> bind, with the annotations plugins
put on the task for its binding; evict -> delete; a pipeline is an in-session reservation only) and
returns them; `discard()` undoes the log in
reverse order, restoring node arrays exactly and notifying plugins.

An allocate handler may refuse an allocation or a pipeline (it returns a `Refused`, saying why: a device
plugin finding no card for the pod on the node; any other return value is ignored): as Volcano's
Statement.Allocate/Pipeline, every handler is still called, then the operation is undone at once (the task
back to its status, the node's columns, every deallocate handler) and not logged; `allocate`/`pipeline` return
the reason (None: done), and the task's job notes it for the pod's and the PodGroup's Unschedulable message (a
placement a discard remembered before, `last_transaction`, is forgotten: the refusal is the latest news).

Must not: write to the API (the session collects committed decisions; the shell writes them).
"""
from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, NamedTuple

from vclite.scheduler.framework import hooks
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

TaskStatus = tasks_mod.TaskStatus
TaskInfo = tasks_mod.TaskInfo


class Op(enum.StrEnum):
    ALLOCATE = "allocate"
    PIPELINE = "pipeline"
    EVICT = "evict"


class Refused(str):
    """What an allocate handler returns to refuse the allocation: why (a plain str is not a refusal)."""


class Decision(NamedTuple):   # immutable, and cheap to make by the ten thousand
    op: Op
    task: str      # pod key, ns/name
    node: str


@dataclasses.dataclass(slots=True)
class _Record:
    op: Op
    task: TaskInfo
    row: int
    before: TaskStatus   # the task's status before the operation (restored by discard)
    reason: str = ""


class Statement:
    def __init__(self, ssn: "session_mod.Session"):
        self.ssn = ssn
        self.operations: list[_Record] = []

    def _set(self, task: TaskInfo, status: TaskStatus) -> None:
        self.ssn.jobs[task.job].update_task_status(task, status)

    def allocate(self, task: TaskInfo, row: int) -> str | None:
        """Place a Pending task on node `row` with its idle resources; None, or why a handler refused it
        (then nothing of it is left: see the module docstring)."""
        nodes = self.ssn.nodes
        before = task.status
        self._set(task, TaskStatus.ALLOCATED)
        task.node = nodes.names[row]
        nodes.add_task(row, task.req, TaskStatus.ALLOCATED)
        refused = self._allocated(task)
        if refused is not None:
            return self._refuse(task, row, TaskStatus.ALLOCATED, before, refused)
        self.operations.append(_Record(Op.ALLOCATE, task, row, before))
        return None

    def pipeline(self, task: TaskInfo, row: int, evicted_for: bool = False) -> str | None:
        """Reserve resources on node `row` for a Pending task (no bind): resources being released, or idle
        ones while its gang is short. `evicted_for`: this statement evicted pods for it. None, or why a
        handler refused it (then nothing of it is left)."""
        nodes = self.ssn.nodes
        before = task.status
        task.evicted_for = evicted_for
        task.waits_release = bool(((task.req > nodes.idle[row]) & (task.req > 0)).any())
        self._set(task, TaskStatus.PIPELINED)
        task.node = nodes.names[row]
        nodes.add_task(row, task.req, TaskStatus.PIPELINED)
        refused = self._allocated(task)
        if refused is not None:
            return self._refuse(task, row, TaskStatus.PIPELINED, before, refused)
        self.operations.append(_Record(Op.PIPELINE, task, row, before))
        return None

    def _allocated(self, task: TaskInfo) -> str | None:
        """Every allocate handler is told (as upstream, even after one refused); why they refused, if any."""
        reasons = []
        for fn, _, _ in self.ssn.hooks.flat(hooks.Point.ALLOCATE_EVENT):
            why = fn(task)
            if isinstance(why, Refused):
                reasons.append(str(why))
        return "; ".join(reasons) if reasons else None

    def _refuse(self, task: TaskInfo, row: int, status: TaskStatus, before: TaskStatus, reason: str) -> str:
        """Undo a refused allocation at once (upstream's unallocate / unpipeline) and note why on its job."""
        node = task.node
        self._undo(task, row, status, before)
        task.last_transaction = None   # (the refusal is what the pod is told, not a placement discarded before)
        verb = "allocation to" if status == TaskStatus.ALLOCATED else "reservation on"
        self.ssn.jobs[task.job].task_notes[task.uid] = f'{verb} node "{node}" undone: {reason}'
        # (its pod is told why, even when its gang is satisfied: close_session looks at these jobs only)
        self.ssn.refused.setdefault(task.job, set()).add(task.uid)
        return reason

    def _undo(self, task: TaskInfo, row: int, status: TaskStatus, before: TaskStatus) -> None:
        """An allocation or pipeline taken back: node columns, status, deallocate handlers, node name."""
        self.ssn.nodes.remove_task(row, task.req, status)
        task.evicted_for = task.waits_release = False
        self._set(task, before)
        # the handlers see the node it leaves (upstream clears NodeName after DeallocateFunc)
        self.ssn.hooks.call(hooks.Point.DEALLOCATE_EVENT, task)
        task.node = ""

    def evict(self, task: TaskInfo, reason: str = "") -> None:
        """Mark a running task for deletion: its resources become `releasing` on its node."""
        nodes = self.ssn.nodes
        row = nodes.index[task.node]
        before = task.status
        nodes.remove_task(row, task.req, before)
        self._set(task, TaskStatus.RELEASING)
        nodes.add_task(row, task.req, TaskStatus.RELEASING)
        self.ssn.hooks.call(hooks.Point.DEALLOCATE_EVENT, task)
        self.operations.append(_Record(Op.EVICT, task, row, before, reason))

    def merge(self, other: "Statement") -> None:
        """Take over `other`'s operations (already applied), as if they had been made here; `other`
        is left empty. Used to try a node in a statement of its own and keep it only on success."""
        self.operations.extend(other.operations)
        other.operations = []

    def has_evictions(self) -> bool:
        return any(rec.op == Op.EVICT for rec in self.operations)

    def commit(self) -> list[Decision]:
        decisions = []
        names = self.ssn.nodes.names
        for rec in self.operations:
            if rec.op == Op.ALLOCATE:
                self._set(rec.task, TaskStatus.BINDING)
                if rec.task.bind_annotations:
                    self.ssn.bind_annotations[rec.task.key] = dict(rec.task.bind_annotations)
            decisions.append(Decision(rec.op, rec.task.key, names[rec.row]))
        self.operations = []
        self.ssn.record(decisions)
        return decisions

    def discard(self) -> None:
        nodes = self.ssn.nodes
        for rec in reversed(self.operations):
            task = rec.task
            if rec.op == Op.EVICT:
                nodes.remove_task(rec.row, task.req, TaskStatus.RELEASING)
                self._set(task, rec.before)
                nodes.add_task(rec.row, task.req, rec.before)
                self.ssn.hooks.call(hooks.Point.ALLOCATE_EVENT, task)
                continue
            status = TaskStatus.ALLOCATED if rec.op == Op.ALLOCATE else TaskStatus.PIPELINED
            task.last_transaction = (status, task.node, task.evicted_for)
            self._undo(task, rec.row, status, rec.before)
        self.operations = []
