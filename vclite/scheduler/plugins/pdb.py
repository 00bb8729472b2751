"""pdb: preempt, reclaim and shuffle leave alone the pods their PodDisruptionBudgets protect
(plugins/pdb/pdb.go).

Given candidate victims, the plugin walks them in order and, for each budget of the pod's namespace
whose selector selects the pod (an absent or empty selector selects nothing here, as upstream; a
pod without labels is never protected), spends one of the budget's `status.disruptionsAllowed`
— unless the pod is already in the budget's `status.disruptedPods` (its eviction was counted by the
API server). A pod that would take any of its budgets below zero is dropped; the others are the
victims. The pods this session has evicted so far (kept from its allocate and deallocate events,
so a discarded statement gives its evictions back) have spent their budgets already: upstream
starts every call from the status, so the preemptors of one session can together evict more pods
than a budget allows (docs/differences.md).
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

from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

Obj = dict[str, Any]


def _spends(budget: Obj, pod: Obj) -> bool:
    """Evicting `pod` spends one of `budget`'s disruptions."""
    labels = meta.labels(pod)
    return bool(labels) and meta.namespace(budget) == meta.namespace(pod) and \
        disruption.selects_strict(budget, labels) and \
        meta.name(pod) not in ((budget.get("status") or {}).get("disruptedPods") or {})


def allowed(pods: "list[Obj]", budgets: list[Obj], evicted: "list[Obj]" = ()) -> list[bool]:
    """For each pod in order, whether evicting it (and the allowed ones before it, after `evicted`)
    keeps every budget that selects it at zero or more disruptions."""
    left = [int((b.get("status") or {}).get("disruptionsAllowed") or 0) - sum(_spends(b, p) for p in evicted)
            for b in budgets]
    out: list[bool] = []
    for pod in pods:
        violated = False
        for i, budget in enumerate(budgets):
            if _spends(budget, pod):
                left[i] -= 1
                violated = violated or left[i] < 0
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
        self.evicted: dict[str, Obj] = {}   # pods evicted this session, by task key
        reg.add(hooks.Point.PREEMPTABLE, self.evictable, key=_any_evictor)
        reg.add(hooks.Point.RECLAIMABLE, self.evictable, key=_any_evictor)
        reg.add(hooks.Point.VICTIM_FILTER, self.victims)
        if self.budgets:
            reg.add(hooks.Point.DEALLOCATE_EVENT, self._deallocated)
            reg.add(hooks.Point.ALLOCATE_EVENT, self._allocated)

    def _deallocated(self, task: "tasks_mod.TaskInfo") -> None:
        if task.status == tasks_mod.TaskStatus.RELEASING:   # (an eviction; else a placement undone)
            self.evicted[task.key] = task.pod

    def _allocated(self, task: "tasks_mod.TaskInfo") -> None:
        self.evicted.pop(task.key, None)   # (an eviction undone, when its statement is discarded)

    def victims(self, tasks: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        if not self.budgets:
            return list(tasks)
        verdicts = allowed([t.pod for t in tasks], self.budgets, list(self.evicted.values()))
        return [t for t, ok in zip(tasks, verdicts) if ok]

    def evictable(self, evictor: "tasks_mod.TaskInfo",
                  candidates: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        return self.victims(candidates)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
