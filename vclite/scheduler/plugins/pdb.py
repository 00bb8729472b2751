"""pdb: preempt, reclaim and shuffle leave alone the pods their PodDisruptionBudgets protect
(plugins/pdb/pdb.go).

Given candidate victims, the plugin walks them in order and, for each budget of the pod's namespace
whose selector selects the pod (an absent or empty selector selects nothing here, as upstream; a
pod without labels is never protected), spends one of the budget's `status.disruptionsAllowed`
— unless the pod is already in the budget's `status.disruptedPods` (its eviction was counted by the
API server). A pod that would take any of its budgets below zero is dropped; the others are the
victims. Every call starts again from the budgets' status (evictions earlier in the session are
not counted, as upstream).
- Preemptable and Reclaimable: the victims (an empty list leaves the tier undecided, as any
  plugin's).
- VictimFilter (shuffle): the victims other plugins chose that the budgets allow. Upstream
  registers the same function as a VictimTasks function, whose union over the tier then evicts
  every running pod no budget protects; vclite filters instead (docs/differences.md).

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vclite.api import disruption, meta
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]


def allowed(pods: "list[Obj]", budgets: list[Obj]) -> list[bool]:
    """For each pod in order, whether evicting it (and the allowed ones before it) keeps every budget
    that selects it at zero or more disruptions."""
    left = [int((b.get("status") or {}).get("disruptionsAllowed") or 0) for b in budgets]
    out: list[bool] = []
    for pod in pods:
        labels = meta.labels(pod)
        violated = False
        if labels:
            for i, budget in enumerate(budgets):
                if meta.namespace(budget) != meta.namespace(pod) or not disruption.selects_strict(budget, labels):
                    continue
                if meta.name(pod) in ((budget.get("status") or {}).get("disruptedPods") or {}):
                    continue
                left[i] -= 1
                if left[i] < 0:
                    violated = True
        out.append(not violated)
    return out


def _any_evictor(evictor: "tasks_mod.TaskInfo") -> tuple:
    return ()   # (the verdict depends on the candidates and the budgets only)


class Pdb:
    name = "pdb"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.budgets = ssn.pdbs
        reg.add(hooks.Point.PREEMPTABLE, self.evictable, key=_any_evictor)
        reg.add(hooks.Point.RECLAIMABLE, self.evictable, key=_any_evictor)
        reg.add(hooks.Point.VICTIM_FILTER, self.victims)

    def victims(self, tasks: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        if not self.budgets:
            return list(tasks)
        return [t for t, ok in zip(tasks, allowed([t.pod for t in tasks], self.budgets)) if ok]

    def evictable(self, evictor: "tasks_mod.TaskInfo",
                  candidates: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        return self.victims(candidates)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
