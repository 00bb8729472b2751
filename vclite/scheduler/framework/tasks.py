"""TaskInfo: one pod as the scheduler sees it, and the pod -> task status mapping (Volcano §3.1).

A task carries the pod's effective request as a vector, its role (`volcano.sh/task-spec`), its
priority and the ordering keys. Status sets are Volcano's: AllocatedStatus = {Allocated, Binding,
Bound, Running}; ScheduledStatus = {Running, Bound, Failed, Succeeded}.

Must not: touch nodes or jobs (JobInfo and NodeState keep their own books).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import re
from typing import Any

import numpy as np

from vclite.api import batch, core, meta, scheduling
from vclite.lib import clock

Obj = dict[str, Any]
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=clock.UTC)
DEFAULT_TASK_PRIORITY = 1


class TaskStatus(enum.StrEnum):
    PENDING = "Pending"
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"
    BINDING = "Binding"
    BOUND = "Bound"
    RUNNING = "Running"
    RELEASING = "Releasing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


ALLOCATED_STATUS = frozenset({TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING})
SCHEDULED_STATUS = frozenset({TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.FAILED, TaskStatus.SUCCEEDED})
# Statuses whose pod occupies its node's resources (Succeeded/Failed pods free them).
OCCUPYING_STATUS = frozenset(set(TaskStatus) - {TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.PENDING})


def pod_status(pod: Obj) -> TaskStatus:
    """Volcano's getTaskStatus: the task status a pod's phase, node and deletion imply."""
    phase = (pod.get("status") or {}).get("phase") or core.PodPhase.PENDING
    deleting = meta.is_deleting(pod)
    if phase == core.PodPhase.RUNNING:
        return TaskStatus.RELEASING if deleting else TaskStatus.RUNNING
    if phase == core.PodPhase.PENDING:
        if deleting:
            return TaskStatus.RELEASING
        return TaskStatus.BOUND if node_name(pod) else TaskStatus.PENDING
    if phase == core.PodPhase.SUCCEEDED:
        return TaskStatus.SUCCEEDED
    if phase == core.PodPhase.FAILED:
        return TaskStatus.FAILED
    return TaskStatus.UNKNOWN


def node_name(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def role(pod: Obj) -> str:
    """The task role (vcjob task name): annotation, else label `volcano.sh/task-spec`."""
    return meta.annotations(pod).get(batch.TASK_SPEC) or meta.labels(pod).get(batch.TASK_SPEC) or ""


def created(obj: Obj) -> _dt.datetime:
    return clock.parse_time(obj.get("metadata", {}).get("creationTimestamp")) or EPOCH


_INDEX = re.compile(r"-(\d+)$")
_UNSET: Any = object()


def name_index(name: str) -> int | None:
    """The number after the last `-` of a pod name (`job-worker-3` -> 3), if it is one and the name has at
    least three `-`-separated parts, as Volcano's GetPodIndexUnderTask (`web-3` has no index)."""
    m = _INDEX.search(name) if name.count("-") >= 2 else None
    return int(m.group(1)) if m else None


@dataclasses.dataclass(eq=False, slots=True)
class TaskInfo:
    uid: str
    key: str                 # ns/name, as binds and evictions are reported
    name: str
    namespace: str
    job: str                 # the owning JobInfo's uid (its PodGroup key); "" for pods outside any job
    role: str
    status: TaskStatus
    req: np.ndarray
    best_effort: bool
    priority: int
    created: _dt.datetime
    pod: Obj
    node: str = ""
    # A pipelined task: something was evicted for it (Volcano's EvictionOccurred: its pod is then
    # nominated to the node), and whether the node's idle resources could not hold it (it waits for
    # resources being released, not only for the rest of its gang).
    evicted_for: bool = False
    waits_release: bool = False
    # (status, node, evicted_for) of the last tentative placement undone by a discarded statement: the
    # gang message counts such tasks as schedulable, as Volcano's LastTransaction does.
    last_transaction: tuple[TaskStatus, str, bool] | None = None
    # annotations a plugin wants on the pod's binding (deviceshare: the devices chosen), or None
    bind_annotations: dict[str, str] | None = None
    name_idx: Any = _UNSET   # name_index(name), computed on first comparison

    def index_in_name(self) -> int | None:
        i = self.name_idx
        if i is _UNSET:
            i = self.name_idx = name_index(self.name)
        return i

    @property
    def node_selector(self) -> dict[str, str]:
        return (self.pod.get("spec") or {}).get("nodeSelector") or {}

    @property
    def tolerations(self) -> list[Obj]:
        return (self.pod.get("spec") or {}).get("tolerations") or []

    @property
    def scheduling_gated(self) -> bool:
        return bool((self.pod.get("spec") or {}).get("schedulingGates"))

    @property
    def queue_allocation_opt_in(self) -> bool:
        """The pod asks for Volcano's queue-allocation gate (annotation `scheduling.volcano.sh/queue-allocation-gate:
        "true"`, HasQueueAllocationGateAnnotation): gated until its queue has room, then counted as reserved."""
        return (meta.annotations(self.pod) or {}).get(scheduling.QUEUE_ALLOCATION_GATE) == "true"

    @property
    def only_queue_allocation_gate(self) -> bool:
        """The pod's one scheduling gate is Volcano's `scheduling.volcano.sh/queue-allocation-gate`."""
        gates = (self.pod.get("spec") or {}).get("schedulingGates") or []
        return len(gates) == 1 and gates[0].get("name") == scheduling.QUEUE_ALLOCATION_GATE


def compare_tasks(l: TaskInfo, r: TaskInfo) -> int:
    """Volcano's helpers.CompareTask as a comparison: name index, then creation time, then uid."""
    li, ri = l.index_in_name(), r.index_in_name()
    if li is not None and ri is not None and li != ri:
        return -1 if li < ri else 1
    if l.created != r.created:
        return -1 if l.created < r.created else 1
    return (l.uid > r.uid) - (l.uid < r.uid)
