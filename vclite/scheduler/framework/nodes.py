"""NodeState: the session's nodes as columns, so fit checks are vector operations over all nodes.

Rows are nodes sorted by name (row order is the tie-break: the first of equally good nodes wins);
columns are the session's resource dimensions (see dims.py). Per Volcano's NodeInfo:
`idle` = allocatable − used-by-non-releasing, `used`, `releasing` (tasks being deleted, whose
resources come back soon), `pipelined` (reserved in-session for tasks waiting on releasing
resources), and `future_idle = idle + releasing − pipelined`.

Arrays are (nodes × dimensions) in column-major (Fortran) order, so the per-dimension column
scans and reductions of fit checks and scores are contiguous. Node state changes only through
`add_task` / `remove_task`, which append the row to `changes`: session caches (fitcache.py)
recompute only the rows changed since they last looked. Writing the arrays directly bypasses
that log (tests may, outside a session's caches).

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
                 allocatable: dict[str, dict[str, dims_mod.Fraction]] | None = None,
                 vectors: dict[str, np.ndarray] | None = None):
        """`allocatable`: node name -> parsed allocatable list, if the caller already parsed them;
        `vectors`: node name -> allocatable as a vector over `dims` (takes precedence)."""
        nodes = sorted(nodes, key=meta.name)
        parsed = allocatable or {}
        vecs = vectors or {}
        self.dims = dims
        self.objects = nodes
        self.names: list[str] = [meta.name(n) for n in nodes]
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        n, d = len(nodes), len(dims)
        rows = []
        for name, node in zip(self.names, nodes):
            v = vecs.get(name)
            if v is None:
                alloc = parsed.get(name)
                v = dims.vector(alloc if alloc is not None else allocatable_list(node))
            rows.append(v)
        self.allocatable = np.array(rows, dtype=np.float64, order="F").reshape((n, d), order="F")
        self.idle = self.allocatable.copy(order="F")
        self.used = np.zeros((n, d), dtype=np.float64, order="F")
        self.releasing = np.zeros((n, d), dtype=np.float64, order="F")
        self.pipelined = np.zeros((n, d), dtype=np.float64, order="F")
        self.unschedulable = np.array([bool((node.get("spec") or {}).get("unschedulable")) for node in nodes],
                                      dtype=bool)
        self.labels: list[dict[str, str]] = [meta.labels(node) for node in nodes]
        self._label_masks: dict[tuple[str, str], np.ndarray] = {}
        self.changes: list[int] = []   # rows touched by add_task / remove_task, in order

    def __len__(self) -> int:
        return len(self.names)

    def future_idle(self, rows: np.ndarray | None = None) -> np.ndarray:
        """idle + releasing − pipelined, for all nodes or the given rows."""
        if rows is None:
            return self.idle + self.releasing - self.pipelined
        return self.idle[rows] + self.releasing[rows] - self.pipelined[rows]

    def label_mask(self, key: str, value: str) -> np.ndarray:
        """Nodes whose label `key` equals `value` (cached for the session)."""
        m = self._label_masks.get((key, value))
        if m is None:
            m = np.array([lbl.get(key) == value for lbl in self.labels], dtype=bool)
            self._label_masks[(key, value)] = m
        return m

    # ---- bookkeeping (Volcano NodeInfo.AddTask / RemoveTask) ------------------------------------
    # (Each row is changed in place through its view: `a[i] += req` would also write the view back onto itself,
    # a third numpy call for the same values.)
    def add_task(self, i: int, req: np.ndarray, status: TaskStatus) -> None:
        self.changes.append(i)
        if status == TaskStatus.PIPELINED:
            row = self.pipelined[i]
            row += req
            return
        row = self.idle[i]
        row -= req
        row = self.used[i]
        row += req
        if status == TaskStatus.RELEASING:
            row = self.releasing[i]
            row += req

    def remove_task(self, i: int, req: np.ndarray, status: TaskStatus) -> None:
        self.changes.append(i)
        if status == TaskStatus.PIPELINED:
            row = self.pipelined[i]
            row -= req
            return
        row = self.idle[i]
        row += req
        row = self.used[i]
        row -= req
        if status == TaskStatus.RELEASING:
            row = self.releasing[i]
            row -= req

    def occupy(self, rows: np.ndarray, reqs: np.ndarray, releasing: np.ndarray) -> None:
        """Snapshot building: add_task for many (row, request) pairs at once (statuses that occupy
        the node; `releasing` marks Releasing ones). Not logged in `changes`: no cache exists yet."""
        delta = np.zeros_like(self.used)
        np.add.at(delta, rows, reqs)
        self.used += delta
        self.idle -= delta
        if releasing.any():
            rel = np.zeros_like(self.releasing)
            np.add.at(rel, rows[releasing], reqs[releasing])
            self.releasing += rel

    def copy_arrays(self) -> dict[str, np.ndarray]:
        """Copies of the bookkeeping arrays (for tests and dry runs)."""
        return {name: getattr(self, name).copy() for name in self.ARRAYS}
