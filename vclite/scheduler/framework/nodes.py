"""NodeState: the session's nodes as columns, so fit checks are vector operations over all nodes.

Rows are nodes sorted by name (row order is the tie-break: the first of equally good nodes wins);
columns are the session's resource dimensions (see dims.py). Per Volcano's NodeInfo:
`idle` = allocatable − used-by-non-releasing, `used`, `releasing` (tasks being deleted, whose
resources come back soon), `pipelined` (reserved in-session for tasks waiting on releasing
resources), and `future_idle = idle + releasing − pipelined`.

Must not: decide anything (no predicates, no scoring): it only keeps the books.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vclite.api import meta, resources
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]
TaskStatus = tasks_mod.TaskStatus
DEFAULT_PODS = 110  # kubelet's default; a node that does not advertise `pods` gets this many
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def is_ready(node: Obj) -> bool:
    """Ready unless a `Ready` condition says otherwise (a node without conditions counts as Ready)."""
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return True


def allocatable_list(node: Obj) -> dict[str, dims_mod.Fraction]:
    status = node.get("status") or {}
    raw = status.get("allocatable") or status.get("capacity") or {}
    alloc = resources.from_resource_list(raw)
    alloc.setdefault(dims_mod.PODS, dims_mod.Fraction(DEFAULT_PODS))
    return alloc


class NodeState:
    ARRAYS = ("allocatable", "idle", "used", "releasing", "pipelined")

    def __init__(self, dims: dims_mod.Dims, nodes: list[Obj],
                 allocatable: dict[str, dict[str, dims_mod.Fraction]] | None = None):
        """`allocatable`: node name -> parsed allocatable list, if the caller already parsed them."""
        nodes = sorted(nodes, key=meta.name)
        parsed = allocatable or {}
        self.dims = dims
        self.objects = nodes
        self.names: list[str] = [meta.name(n) for n in nodes]
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        n, d = len(nodes), len(dims)
        self.allocatable = np.zeros((n, d), dtype=np.float64)
        for i, node in enumerate(nodes):
            alloc = parsed.get(meta.name(node))
            self.allocatable[i] = dims.vector(alloc if alloc is not None else allocatable_list(node))
        self.idle = self.allocatable.copy()
        self.used = np.zeros((n, d), dtype=np.float64)
        self.releasing = np.zeros((n, d), dtype=np.float64)
        self.pipelined = np.zeros((n, d), dtype=np.float64)
        self.unschedulable = np.array([bool((node.get("spec") or {}).get("unschedulable")) for node in nodes],
                                      dtype=bool)
        self.labels: list[dict[str, str]] = [meta.labels(node) for node in nodes]
        self._label_masks: dict[tuple[str, str], np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.names)

    def future_idle(self) -> np.ndarray:
        return self.idle + self.releasing - self.pipelined

    def label_mask(self, key: str, value: str) -> np.ndarray:
        """Nodes whose label `key` equals `value` (cached for the session)."""
        m = self._label_masks.get((key, value))
        if m is None:
            m = np.array([lbl.get(key) == value for lbl in self.labels], dtype=bool)
            self._label_masks[(key, value)] = m
        return m

    # ---- bookkeeping (Volcano NodeInfo.AddTask / RemoveTask) ------------------------------------
    def add_task(self, i: int, req: np.ndarray, status: TaskStatus) -> None:
        if status == TaskStatus.PIPELINED:
            self.pipelined[i] += req
            return
        self.idle[i] -= req
        self.used[i] += req
        if status == TaskStatus.RELEASING:
            self.releasing[i] += req

    def remove_task(self, i: int, req: np.ndarray, status: TaskStatus) -> None:
        if status == TaskStatus.PIPELINED:
            self.pipelined[i] -= req
            return
        self.idle[i] += req
        self.used[i] -= req
        if status == TaskStatus.RELEASING:
            self.releasing[i] -= req

    def copy_arrays(self) -> dict[str, np.ndarray]:
        """Copies of the bookkeeping arrays (for tests and dry runs)."""
        return {name: getattr(self, name).copy() for name in self.ARRAYS}
