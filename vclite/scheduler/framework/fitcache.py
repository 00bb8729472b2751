"""Session memos of per-node vectors, recomputed only on the nodes that changed since.

A session places one task after another and each placement changes one node, so a vector over
all nodes computed for one task is still right for the next similar task on every node but a
few. `NodeState.changes` logs the row of every add_task / remove_task; a memo entry remembers how
much of the log it has seen and, when asked again, recomputes only the rows logged since (or
everything, when more than a quarter of the nodes changed). The values are the ones a full recomputation gives,
bit for bit: each row is computed by the same operations either way.

- `FitCache`: per distinct request vector, the masks "fits future idle" (the action's resource
  predicate, `fit.fits(req, future_idle)`) and "fits idle" (`fit.fits(req, idle)`).
- `RowCache`: per key, the values of a row-local function `fn(task, rows)` over all nodes (the
  NodeOrder functions registered with `key=`, or any plugin's own row-local vector). A `Volatile`
  key is row-local only within one version of something beyond the node's row (network-topology-
  aware's HyperNode usage): one entry per stable part, recomputed in full when the version moved.
- `BestCache`: per (request, key), the row-local score of every node whose idle resources hold
  the request, -inf elsewhere: its argmax is allocate's pick among idle-fitting nodes. Given `row_of`
  (key -> the score of one row as a Python float, bit for bit the vector's, or None), a few changed
  rows are checked and scored without building arrays.
Arrays handed out are the memo's own: read them, never modify them.

Must not: change node state; decide anything (callers combine the vectors).
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, NamedTuple

import numpy as np

from vclite.scheduler.framework import nodes as nodes_mod

ENTRY_LIMIT = 256   # memo entries kept per cache (the oldest is dropped first)
FULL_SHARE = 4      # recompute everything when more than 1/FULL_SHARE of the nodes changed
FEW = 16            # up to this many changed rows are recomputed with Python floats (same IEEE steps)


def _dirty_rows(nodes: nodes_mod.NodeState, seen: int) -> np.ndarray | None:
    """Rows changed since log position `seen` (possibly repeated), or None if recomputing
    everything is cheaper."""
    log = nodes.changes
    count = len(log) - seen
    if count * FULL_SHARE > len(nodes):
        return None
    return np.array(log[seen:], dtype=np.intp)   # repeats are harmless: the same value is written twice


class FitCache:
    def __init__(self, nodes: nodes_mod.NodeState):
        self.nodes = nodes
        self._entries: dict[bytes, list[Any]] = {}   # req bytes -> [seen, future_ok, idle_ok, cols, needs]

    def masks(self, req: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(nodes whose future idle holds `req`, nodes whose idle holds it) on every requested dimension."""
        nodes = self.nodes
        key = req.tobytes()
        e = self._entries.get(key)
        if e is None:
            if len(self._entries) >= ENTRY_LIMIT:
                del self._entries[next(iter(self._entries))]
            cols = np.flatnonzero(req > 0)
            future_ok, idle_ok = self._full(req, cols)
            needs = [(int(j), float(req[j])) for j in cols]
            self._entries[key] = [len(nodes.changes), future_ok, idle_ok, cols, needs]
            return future_ok, idle_ok
        seen, future_ok, idle_ok, cols, needs = e
        end = len(nodes.changes)
        if seen != end:
            if end - seen <= FEW:
                self._few(set(nodes.changes[seen:end]), needs, future_ok, idle_ok)
            else:
                rows = _dirty_rows(nodes, seen)
                if rows is None:
                    future_ok, idle_ok = e[1], e[2] = self._full(req, cols)
                else:
                    need = req[cols]
                    future_ok[rows] = (nodes.future_idle(rows)[:, cols] >= need).all(axis=1)
                    idle_ok[rows] = (nodes.idle[rows][:, cols] >= need).all(axis=1)
            e[0] = end
        return future_ok, idle_ok

    def _few(self, rows: set[int], needs: list[tuple[int, float]], future_ok: np.ndarray,
             idle_ok: np.ndarray) -> None:
        """The masks on a few rows with Python floats: (idle + releasing) − pipelined ≥ need, as numpy does it."""
        nodes = self.nodes
        idle, releasing, pipelined = nodes.idle, nodes.releasing, nodes.pipelined
        for r in rows:
            f = i = True
            il, rl, pl = idle[r].tolist(), releasing[r].tolist(), pipelined[r].tolist()
            for j, need in needs:
                v = il[j]
                if not v >= need:
                    i = False
                if not v + rl[j] - pl[j] >= need:
                    f = False
            future_ok[r] = f
            idle_ok[r] = i

    def _full(self, req: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nodes = self.nodes
        n = len(nodes)
        future_ok, idle_ok = np.ones(n, dtype=bool), np.ones(n, dtype=bool)
        if n == 0 or cols.size == 0:
            return future_ok, idle_ok
        future, idle = nodes.future_idle(), nodes.idle
        for j in cols:
            r = req[j]
            future_ok &= future[:, j] >= r
            idle_ok &= idle[:, j] >= r
        return future_ok, idle_ok


class Volatile(NamedTuple):
    """A NodeOrder key whose function is row-local only while `version` stays: a memo of the weighted
    sum keyed by it would miss at every version, so the session sums the functions' own memos."""
    stable: Hashable
    version: int


class RowCache:
    """The values of a row-local `fn(task, rows)` over all nodes, per key of the task."""

    def __init__(self, nodes: nodes_mod.NodeState, fn: Callable[[Any, np.ndarray], Any]):
        self.nodes = nodes
        self.fn = fn
        self._entries: dict[Hashable, list[Any]] = {}   # key -> [seen, values, version]

    def get(self, key: Hashable, task: Any) -> np.ndarray:
        nodes = self.nodes
        version = None
        if type(key) is Volatile:
            key, version = key
        e = self._entries.get(key)
        if e is not None and version is not None and e[2] != version:
            e[0], e[1], e[2] = len(nodes.changes), self._full(task), version
            return e[1]
        if e is None:
            if len(self._entries) >= ENTRY_LIMIT:
                del self._entries[next(iter(self._entries))]
            values = self._full(task)
            self._entries[key] = [len(nodes.changes), values, version]
            return values
        seen, values, _ = e
        if seen != len(nodes.changes):
            rows = _dirty_rows(nodes, seen)
            if rows is None:
                values = e[1] = self._full(task)
            else:
                values[rows] = self.fn(task, rows)
            e[0] = len(nodes.changes)
        return values

    def _full(self, task: Any) -> np.ndarray:
        n = len(self.nodes)
        values = np.empty(n, dtype=np.float64)
        if n:
            values[:] = self.fn(task, np.arange(n, dtype=np.intp))
        return values


class BestCache:
    """Per (request vector, score key): `fn` scores where idle and future idle hold the request, else -inf."""

    def __init__(self, nodes: nodes_mod.NodeState, fn: Callable[[Any, np.ndarray], Any],
                 row_of: Callable[[Hashable], Callable[[int], float] | None] | None = None):
        self.nodes = nodes
        self.fn = fn
        self.row_of = row_of
        self._entries: dict[tuple[bytes, Hashable], list[Any]] = {}   # -> [seen, scores, needs, cols, row]

    def best(self, req: np.ndarray, key: Hashable, task: Any) -> int | None:
        """The first row of highest score among nodes that hold `req` on idle (and future idle),
        or None if there is no such node with a score above -inf."""
        nodes = self.nodes
        k = (req.tobytes(), key)
        e = self._entries.get(k)
        end = len(nodes.changes)
        if e is None:
            if len(self._entries) >= ENTRY_LIMIT:
                del self._entries[next(iter(self._entries))]
            cols = np.flatnonzero(req > 0)
            e = self._entries[k] = [end, self._full(req, cols, task), [(int(j), float(req[j])) for j in cols], cols,
                                    self.row_of(key) if self.row_of is not None else None]
        elif e[0] != end:
            if end - e[0] <= FEW:
                if e[4] is not None:
                    self._few_rows(set(nodes.changes[e[0]:end]), e[2], e[1], e[4])
                else:
                    self._few(sorted(set(nodes.changes[e[0]:end])), e[2], e[1], task)
            else:
                e[1] = self._full(req, e[3], task)
            e[0] = end
        scores = e[1]
        if not scores.size:   # (no node at all: none Ready)
            return None
        row = int(scores.argmax())
        v = scores.item(row)
        return row if v > -np.inf or v != v else None   # v != v: NaN, which argmax picks first too

    def _full(self, req: np.ndarray, cols: np.ndarray, task: Any) -> np.ndarray:
        nodes = self.nodes
        n = len(nodes)
        ok = np.ones(n, dtype=bool)
        if n and cols.size:
            future, idle = nodes.future_idle(), nodes.idle
            for j in cols:
                r = req[j]
                ok &= future[:, j] >= r
                ok &= idle[:, j] >= r
        scores = np.empty(n, dtype=np.float64)
        if n:
            scores[:] = self.fn(task, np.arange(n, dtype=np.intp))
        scores[~ok] = -np.inf
        return scores

    def _few_rows(self, rows: set[int], needs: list[tuple[int, float]], scores: np.ndarray,
                  row: Callable[[int], float]) -> None:
        """`_few` with the function's scalar form: the fit with Python floats (as `_few`), a row that holds the
        request scored alone (the others are -inf whatever their score)."""
        nodes = self.nodes
        idle, releasing, pipelined = nodes.idle, nodes.releasing, nodes.pipelined
        for r in rows:
            v = None
            for j, need in needs:
                i = idle.item(r, j)
                if not (i >= need and i + releasing.item(r, j) - pipelined.item(r, j) >= need):
                    v = -np.inf
                    break
            scores[r] = row(r) if v is None else v

    def _few(self, rows: list[int], needs: list[tuple[int, float]], scores: np.ndarray, task: Any) -> None:
        nodes = self.nodes
        idle, releasing, pipelined = nodes.idle, nodes.releasing, nodes.pipelined
        values = np.empty(len(rows), dtype=np.float64)
        values[:] = self.fn(task, np.array(rows, dtype=np.intp))
        for r, v in zip(rows, values.tolist()):
            il, rl, pl = idle[r].tolist(), releasing[r].tolist(), pipelined[r].tolist()
            for j, need in needs:
                i = il[j]
                if not (i >= need and i + rl[j] - pl[j] >= need):
                    v = -np.inf
                    break
            scores[r] = v
