"""Volcano's predicate error cache (util.predicateHelper, `predicateErrorCacheEnable`, on by default) for one
attempt at one job's tasks in allocate: the nodes a task of a role (`volcano.sh/task-spec`) failed on, each with
the reason it failed for. A later task of the same role in that attempt is refused on those nodes with the same
reason, without a new check: visible when the check would now pass — a DoNotSchedule topology spread that the
gang's earlier tasks have since balanced (Volcano then leaves the gang unplaced) — and in the fit errors (a
cached node is charged with its cached reason). A task without a role is never cached, as upstream.

Not recorded: the nodes short of resources for a task that found an idle node on the fast path (no predicate
plugin refused any node); a node short for one task of a role stays short for the next, which asks the same.

Must not: outlive the attempt (upstream makes a new helper for each allocateResourcesForTasks).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vclite.scheduler.framework import fit

if TYPE_CHECKING:
    from vclite.scheduler.framework import tasks as tasks_mod


class RoleErrors:
    """The failed nodes of each role in one job's attempt, with their reasons."""

    def __init__(self, n_nodes: int) -> None:
        self.n = n_nodes
        self._by_role: dict[str, list[tuple[str, np.ndarray]]] = {}
        self._masks: dict[str, np.ndarray] = {}

    def cached(self, task: "tasks_mod.TaskInfo") -> fit.Failure | None:
        """The failures recorded for the task's role (None: none, or the task has no role)."""
        reasons = self._by_role.get(task.role) if task.role else None
        return fit.Failure(tuple(reasons)) if reasons else None

    def record(self, task: "tasks_mod.TaskInfo", failures: list[fit.Failure]) -> None:
        """Remember the nodes `failures` refused (each charged with the first failure that names it, as the fit
        errors are) that the role had not failed on yet."""
        if not task.role:
            return
        known = self._masks.get(task.role)
        charged = np.zeros(self.n, dtype=bool) if known is None else known.copy()
        fresh: list[tuple[str, np.ndarray]] = []
        for f in failures:
            for reason, m in f.reasons:
                new = m & ~charged
                if new.any():
                    fresh.append((reason, new))
            charged |= f.mask(self.n)
        if fresh:
            self._by_role.setdefault(task.role, []).extend(fresh)
            self._masks[task.role] = charged
