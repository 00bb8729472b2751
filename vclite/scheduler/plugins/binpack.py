"""binpack: prefer the fullest node that still holds the task (plugins/binpack/binpack.go).

Arguments (Volcano's names): `binpack.weight` (1), `binpack.cpu` (1), `binpack.memory` (1),
`binpack.resources: "nvidia.com/gpu, example.com/foo"` and `binpack.resources.<name>` (1) for each
listed resource; a negative resource weight becomes 1; a `binpack.resources.<name>` whose name is
not listed is ignored, as in Volcano. NodeOrder is registered only when `binpack.weight` ≠ 0.

Score of a node, over the resources the task requests (> 0; `pods` never counts) that have a weight:
  s_r = (used_r + request_r) · w_r / allocatable_r   (0 when allocatable_r = 0, w_r still counted)
  score = Σ s_r / Σ w_r × 100 × binpack.weight,  and 0 if any used_r + request_r > allocatable_r,
where used = the node's Used (bound, binding, running, allocated and releasing pods; not pipelined).
The score is row-local, so it is registered with `key=` (the weighted requests): the session
keeps it for all nodes per key and recomputes only changed nodes. `score` computes node vectors
(numpy), `row_score` one node step for step as Volcano does, for the few recomputed rows; both
perform the same float operations in the same order (tests check they agree to the bit).

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

PREFIX = "binpack.resources."
FEW_ROWS = 16   # up to this many rows are scored with Python floats (the session's recomputed rows)
MAX_NODE_SCORE = 100


def _weight(value: Any, where: str) -> int:
    return plugin.convert(value, int, f"plugin 'binpack': argument {where!r}")


@dataclasses.dataclass(frozen=True)
class Arguments:
    weight: int = plugin.arg("binpack.weight", 1)
    cpu: int = plugin.arg("binpack.cpu", 1)
    memory: int = plugin.arg("binpack.memory", 1)
    resources: str = plugin.arg("binpack.resources", "")
    extra: Any = None   # binpack.resources.<name>: weight of one listed resource (checked at load)

    def __post_init__(self) -> None:
        for key, value in (self.extra or {}).items():
            _weight(value, key)

    def resource_weights(self) -> dict[str, int]:
        """Resource name -> weight, as Volcano's calculateWeight builds it."""
        extra = self.extra or {}
        out: dict[str, int] = {}
        for name in (r.strip() for r in self.resources.split(",")):
            if name:
                w = _weight(extra[PREFIX + name], PREFIX + name) if PREFIX + name in extra else 1
                out[name] = 1 if w < 0 else w
        out[dims_mod.CPU] = 1 if self.cpu < 0 else self.cpu
        out[dims_mod.MEMORY] = 1 if self.memory < 0 else self.memory
        return out


class Binpack:
    name = "binpack"
    Arguments = Arguments
    argument_prefixes = (PREFIX,)

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.nodes = ssn.nodes
        self.weights, self.has_weight = weight_vector(ssn.dims, self.arguments.resource_weights())
        self._all_rows = np.arange(len(ssn.nodes))
        self._weighted = np.flatnonzero(self.has_weight)
        self._weighted_list = self._weighted.tolist()
        self._keys: dict[str, tuple[tuple[int, float], ...] | None] = {}   # task uid -> key (requests are fixed)
        if self.arguments.weight != 0:
            reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)

    def key(self, task: "tasks_mod.TaskInfo") -> tuple[tuple[int, float], ...] | None:
        """(column, request) of each requested resource that has a weight; None if there is none."""
        key = self._keys.get(task.uid, False)
        if key is False:
            values = task.req[self._weighted].tolist()
            key = self._keys[task.uid] = tuple((c, v) for c, v in zip(self._weighted_list, values) if v > 0) or None
        return key

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray | float:
        """Row-local: each node's score depends on its own allocatable and used only (the session
        caches it per key and recomputes the nodes that changed)."""
        key = self.key(task)
        if key is None:
            return 0.0
        nodes, w = self.nodes, self.arguments.weight
        if rows.size <= FEW_ROWS:
            return np.array([row_score(key, nodes.allocatable[r], nodes.used[r], self.weights, w)
                             for r in rows.tolist()], dtype=np.float64)
        whole = rows.size == len(nodes) and np.array_equal(rows, self._all_rows)
        return score(key, nodes.allocatable, nodes.used, slice(None) if whole else rows, self.weights, w)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None


def weight_vector(dims: dims_mod.Dims, weights: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per session dimension: its weight, and whether it has one (`pods` never has)."""
    w = np.zeros(len(dims), dtype=np.float64)
    has = np.zeros(len(dims), dtype=bool)
    for name, value in weights.items():
        i = dims.index.get(name)
        if i is not None and i != dims.pods:
            w[i], has[i] = value, True
    return w, has


def row_score(key: tuple[tuple[int, float], ...], allocatable: np.ndarray, used: np.ndarray, weights: np.ndarray,
              binpack_weight: int) -> float:
    """Volcano's BinPackingScore for one node, step for step. `key`: (column, request) of each
    requested resource that has a weight, in column order."""
    total, weight_sum = 0.0, 0.0
    for c, request in key:
        capacity, w = float(allocatable[c]), float(weights[c])
        if capacity != 0 and w != 0:
            final = request + float(used[c])
            if final > capacity:
                return 0.0
            total += final * w / capacity
        weight_sum += w
    if weight_sum > 0:
        total /= weight_sum
    return total * float(MAX_NODE_SCORE * binpack_weight)


def score(key: tuple[tuple[int, float], ...], allocatable: np.ndarray, used: np.ndarray, idx: Any,
          weights: np.ndarray, binpack_weight: int) -> np.ndarray:
    """`row_score` for nodes `idx` at once (a row array or slice(None)), with the same float steps."""
    total: np.ndarray | float = 0.0
    weight_sum = 0.0
    over = None
    for c, request in key:
        capacity, w = allocatable[idx, c], float(weights[c])
        weight_sum += w
        if w == 0:
            continue
        final = used[idx, c] + request
        counted = capacity != 0
        safe = capacity if counted.all() else np.where(counted, capacity, 1.0)
        per = final * w / safe
        if safe is not capacity:
            per = np.where(counted, per, 0.0)
        total = total + per
        short = counted & (final > capacity)
        over = short if over is None else over | short
    n = len(allocatable) if isinstance(idx, slice) else len(idx)
    total = np.broadcast_to(np.asarray(total, dtype=np.float64), (n,)).copy()
    if weight_sum > 0:
        total /= weight_sum
    total *= float(MAX_NODE_SCORE * binpack_weight)
    if over is not None:
        total[over] = 0.0
    return total
