"""conformance: never evict critical pods (plugins/conformance/conformance.go).

Preemptable and Reclaimable drop every candidate whose priorityClassName is
`system-cluster-critical` or `system-node-critical`, or that runs in namespace `kube-system`;
the rest are victims as far as this plugin is concerned. UnifiedEvictable (gangpreempt,
gangreclaim) drops the same candidates.

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
SYSTEM_NAMESPACE = "kube-system"


def critical(task: "tasks_mod.TaskInfo") -> bool:
    cls = (task.pod.get("spec") or {}).get("priorityClassName")
    return cls in CRITICAL_CLASSES or task.namespace == SYSTEM_NAMESPACE


def any_evictor(evictor: "tasks_mod.TaskInfo") -> tuple:
    """The verdict does not depend on the evictor (the key for preempt's and reclaim's memo)."""
    return ()


def evictable(evictor: "tasks_mod.TaskInfo", evictees: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
    return [t for t in evictees if not critical(t)]


class Conformance:
    name = "conformance"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        reg.add(hooks.Point.PREEMPTABLE, evictable, key=any_evictor)
        reg.add(hooks.Point.RECLAIMABLE, evictable, key=any_evictor)
        reg.add(hooks.Point.UNIFIED_EVICTABLE, evictable)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
