"""When may a watch event give the scheduler new work? A pure function over one event.

The scheduler runs a session only when something schedulable may have changed, never on a timer:
- Pod: created pending for us; bound, finished, deleted or being deleted; phase changes (the
  PodGroup's counts and phase follow them). Our own condition patches change none of these.
- PodGroup: created, deleted, spec changed, or phase changed.
- Queue: created, deleted, spec changed, or state changed (not our `allocated` writes).
- Node: created, deleted, allocatable/capacity, labels, unschedulable or Ready changed.
- PriorityClass: any change.

Must not: enqueue or read anything; the shell does.
"""
from __future__ import annotations

from typing import Any

from vclite.api import batch, kinds, meta
from vclite.apiserver import client as client_mod

Obj = dict[str, Any]


def _get(obj: Obj | None, *path: str) -> Any:
    cur: Any = obj or {}
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return cur


def _ready(node: Obj | None) -> str:
    for c in _get(node, "status", "conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") or ""
    return ""


def _pod_fields(pod: Obj | None) -> tuple:
    return (_get(pod, "status", "phase"), _get(pod, "spec", "nodeName"), _get(pod, "metadata", "deletionTimestamp"),
            bool(_get(pod, "spec", "schedulingGates")), meta.annotations(pod or {}).get(batch.GROUP_NAME),
            _get(pod, "spec", "schedulerName"))


def _pod_changed(ev: client_mod.WatchEvent, scheduler_name: str) -> bool:
    pod = ev.object
    ours = (_get(pod, "spec", "schedulerName") or "") == scheduler_name
    if ev.type == client_mod.EventType.ADDED:
        return bool(_get(pod, "spec", "nodeName")) or ours
    if ev.type == client_mod.EventType.DELETED:
        return bool(_get(pod, "spec", "nodeName")) or ours
    return _pod_fields(ev.old) != _pod_fields(pod)


_FIELDS = {
    kinds.PODGROUP.kind: lambda o: (_get(o, "spec"), _get(o, "status", "phase")),
    kinds.QUEUE.kind: lambda o: (_get(o, "spec"), _get(o, "status", "state")),
    kinds.NODE.kind: lambda o: (_get(o, "spec"), _get(o, "status", "allocatable"), _get(o, "status", "capacity"),
                                meta.labels(o or {}), _ready(o)),
}


def wakes_scheduler(ev: client_mod.WatchEvent, scheduler_name: str = batch.DEFAULT_SCHEDULER) -> bool:
    if ev.type == client_mod.EventType.BOOKMARK:
        return False
    if ev.kind.kind == kinds.POD.kind:
        return _pod_changed(ev, scheduler_name)
    if ev.kind.kind == kinds.PRIORITYCLASS.kind:
        return True
    fields = _FIELDS.get(ev.kind.kind)
    if fields is None:
        return False
    if ev.type != client_mod.EventType.MODIFIED:
        return True
    return fields(ev.old) != fields(ev.object)
