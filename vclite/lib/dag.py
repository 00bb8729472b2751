"""Dependency graphs as plain dicts: `{vertex: [vertices it depends on]}`.

Used for JobFlow flows (`dependsOn.targets`) and vcjob task `dependsOn`. Every function is pure and
deterministic (vertices are visited in the dict's insertion order, then list order) and iterative,
so a graph of tens of thousands of vertices never meets Python's recursion limit.
A target that is not a key is "undefined": `undefined_vertices` reports it; the other functions
treat it as a vertex with no dependencies. Nothing here knows about JobFlows or imports vclite.
"""
from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

Graph = Mapping[str, Sequence[str]]
_END = object()


def undefined_vertices(graph: Graph) -> list[str]:
    """Targets that are not keys of the graph, in first-seen order, without duplicates."""
    seen: dict[str, None] = {}
    for deps in graph.values():
        for d in deps:
            if d not in graph:
                seen.setdefault(d)
    return list(seen)


def _vertices(graph: Graph) -> list[str]:
    """Keys in insertion order, then undefined targets in first-seen order."""
    return list(graph) + undefined_vertices(graph)


def find_cycle(graph: Graph) -> list[str] | None:
    """A cycle as a path that returns to its start (`["a", "b", "a"]`; a self-loop is `["a", "a"]`),
    or None when the graph is acyclic. The first cycle met by a depth-first search that starts from
    each vertex in insertion order and follows edges in list order."""
    done: set[str] = set()
    for root in graph:
        if root in done:
            continue
        path: list[str] = [root]
        on_path: dict[str, int] = {root: 0}
        iters = [iter(graph.get(root, ()))]
        while iters:
            nxt = next(iters[-1], _END)
            if nxt is _END:
                v = path.pop()
                del on_path[v]
                done.add(v)
                iters.pop()
            elif nxt in on_path:
                return path[on_path[nxt]:] + [nxt]
            elif nxt not in done:
                on_path[nxt] = len(path)
                path.append(nxt)
                iters.append(iter(graph.get(nxt, ())))
    return None


def find_path(graph: Graph, start: str, goal: str) -> list[str] | None:
    """The vertices from `start` to `goal` following edges (`[start, …, goal]`; `[start]` when they
    are the same), or None when `goal` cannot be reached. Breadth-first: a shortest path."""
    came_from: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for v in frontier:
            if v == goal:
                path: list[str] = []
                at: str | None = v
                while at is not None:
                    path.append(at)
                    at = came_from[at]
                return path[::-1]
            for nxt in graph.get(v, ()):
                if nxt not in came_from:
                    came_from[nxt] = v
                    following.append(nxt)
        frontier = following
    return None


def is_dag(graph: Graph) -> bool:
    """No cycle (undefined targets are not checked here: see `undefined_vertices`)."""
    return find_cycle(graph) is None


def topological_order(graph: Graph) -> list[str]:
    """Every vertex after all of its dependencies; among vertices that are ready at the same time,
    the earlier in insertion order comes first (undefined targets rank after every key).
    Raises ValueError naming a cycle when there is one."""
    order = _vertices(graph)
    rank = {v: i for i, v in enumerate(order)}
    waiting = {v: len(set(graph.get(v, ()))) for v in order}
    users = dependents(graph)
    ready = [rank[v] for v in order if waiting[v] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        v = order[heapq.heappop(ready)]
        out.append(v)
        for u in users[v]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, rank[u])
    if len(out) < len(order):
        cycle = find_cycle(graph) or []
        raise ValueError(f"graph has a cycle: {' -> '.join(cycle)}")
    return out


def dependents(graph: Graph) -> dict[str, list[str]]:
    """Reverse edges: for every vertex (keys, then undefined targets), the vertices that depend on
    it, in insertion order, without duplicates."""
    out: dict[str, list[str]] = {v: [] for v in _vertices(graph)}
    for v, deps in graph.items():
        for d in dict.fromkeys(deps):
            out[d].append(v)
    return out
