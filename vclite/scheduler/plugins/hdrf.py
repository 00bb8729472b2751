"""Hierarchical DRF (drf with `enableHierarchy: true`): the queue tree and its shares (plugins/drf/drf.go).

Queues are placed in a tree by their annotations `volcano.sh/hierarchy` (`root/eng/dev`: the first part is
the root, whatever its name) and `volcano.sh/hierarchy-weights` (`1/2/8`, one weight per part); each job is
a leaf under its queue's last part, keyed by its uid. A queue without the annotations puts its jobs at the
root. An inner node's weight is the one given by the first queue that names it (queues in name order; Volcano:
the first job its session's map happens to visit); a weight that is not a number or below 1 counts as 1
(Volcano's ParseFloat with its error dropped; admission refuses such weights anyway).

The tree's state is a pure function of the jobs' allocations and requests, the cluster's total and what is
allocated in all (`refresh`: Volcano recomputes the whole tree on every change; here, while no resource turns
demanding or stops being so, only the changed jobs' paths are, giving the same numbers):
- a resource is *demanding* while what is allocated of it in all is below the cluster's total;
- a job (leaf) is saturated if, among the resources it has ≥ 0.1 of, one is allocated at least as much as
  its tasks request (both non-zero), or one it requests is no longer demanding;
- an inner node: M = the least dominant share (capped at 1) of its non-empty, unsaturated children; its
  allocation = Σ over non-empty children of the saturated ones' allocation and the others' scaled to share M;
  its share is that allocation's dominant share; it is saturated when all its children are (or it has none).
`compare(l, r)` walks both queues' paths from the root: an unsaturated node goes before a saturated one, then
the lower share / weight; equal: the next level down (0 at the end of the shorter path).

Must not: know the session; keep state between sessions.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Mapping

import numpy as np

from vclite.lib import gostrconv
from vclite.scheduler.framework import dims as dims_mod

HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"


def weight_of(text: str) -> float:
    """One level's weight as Volcano's buildHierarchy reads it: not a number -> 1, below 1 -> 1."""
    try:
        value = gostrconv.parse_float(text)
    except gostrconv.NumError:
        value = 0.0
    return 1.0 if value < 1 else value   # (NaN stays NaN: it compares as neither less nor equal)


def paths_of(annotations: Mapping[str, object]) -> tuple[list[str], list[float]]:
    """A queue's path below the root and each part's weight (missing weights count as 1)."""
    hierarchy = annotations.get(HIERARCHY)
    weights = annotations.get(HIERARCHY_WEIGHTS)
    parts = hierarchy.split("/")[1:] if isinstance(hierarchy, str) else []
    texts = weights.split("/")[1:] if isinstance(weights, str) else []
    return parts, [weight_of(texts[i]) if i < len(texts) else 1.0 for i in range(len(parts))]


@dataclasses.dataclass(eq=False)
class Node:
    """A tree node: an inner node (children) or a job's leaf (request)."""
    name: str
    weight: float = 1.0
    children: dict[str, "Node"] | None = None
    request: np.ndarray | None = None
    allocated: np.ndarray | None = None
    share: float = 0.0
    saturated: bool = False
    parent: "Node | None" = None
    depth: int = 0


def dominant_share(allocated: np.ndarray, inv: np.ndarray) -> float:
    """helpers.Share's max over the total's dimensions (inv: 1/total there, 0 elsewhere)."""
    return max(float((allocated * inv).max(initial=0.0)), 0.0)


class Tree:
    """The hierarchy of one session: built once from the jobs, refreshed after each change of allocation."""

    def __init__(self, total: np.ndarray):
        self.total = total
        cols = total >= dims_mod.TOLERANCE
        self.inv = np.zeros(total.shape, dtype=np.float64)
        self.inv[cols] = 1.0 / total[cols]
        self.counted = cols
        self.root = Node("root", children={})
        self.leaves: dict[str, Node] = {}
        self.demanding: np.ndarray | None = None   # as of the last refresh (None: none yet)
        self.changed: set[str] = set()             # leaves set since then

    def add_job(self, uid: str, parts: list[str], weights: list[float], allocated: np.ndarray,
                request: np.ndarray) -> None:
        node = self.root
        for part, weight in zip(parts, weights):
            child = node.children.get(part)
            if child is None or child.children is None:
                child = node.children[part] = Node(part, weight, children={}, parent=node, depth=node.depth + 1)
            node = child
        leaf = Node(uid, request=request, allocated=allocated, share=dominant_share(allocated, self.inv),
                    parent=node, depth=node.depth + 1)
        node.children[uid] = leaf
        self.leaves[uid] = leaf
        self.demanding = None   # (a new node: the next refresh goes over the whole tree)

    def set_allocated(self, uid: str, allocated: np.ndarray) -> None:
        leaf = self.leaves.get(uid)
        if leaf is not None:
            leaf.allocated = allocated
            leaf.share = dominant_share(allocated, self.inv)
            self.changed.add(uid)

    def refresh(self, total_allocated: np.ndarray) -> None:
        """Every node's allocation, share and saturation for this much allocated in all. A node's state
        follows from its children's (a leaf's from its job and the demanding resources), so while the
        demanding resources stay the same only the changed leaves and their ancestors are computed again:
        the same numbers as going over the whole tree, as Volcano does."""
        demanding = self.counted & (total_allocated < self.total)
        if self.demanding is None or not np.array_equal(demanding, self.demanding):
            self.demanding = demanding
            self.changed.clear()
            self._update(self.root, demanding)
            return
        inner: dict[int, Node] = {}
        for uid in self.changed:
            leaf = self.leaves[uid]
            self._leaf(leaf, demanding)
            node = leaf.parent
            while node is not None and id(node) not in inner:
                inner[id(node)] = node
                node = node.parent
        self.changed.clear()
        for node in sorted(inner.values(), key=lambda n: -n.depth):
            self._inner(node)

    def _update(self, node: Node, demanding: np.ndarray) -> None:
        if node.children is None:
            self._leaf(node, demanding)
            return
        for child in node.children.values():
            self._update(child, demanding)
        self._inner(node)

    @staticmethod
    def _leaf(node: Node, demanding: np.ndarray) -> None:
        alloc, req = node.allocated, node.request
        named = alloc >= dims_mod.TOLERANCE
        full = (alloc != 0) & (req != 0) & (alloc >= req)
        node.saturated = bool((named & (full | (~demanding & (req != 0)))).any())

    def _inner(self, node: Node) -> None:
        assert node.children is not None
        least = 1.0
        for child in node.children.values():
            if child.share != 0 and not child.saturated:
                least = min(least, dominant_share(child.allocated, self.inv))
        total = np.zeros(self.total.shape, dtype=np.float64)
        for child in node.children.values():
            if child.share != 0:
                total += child.allocated if child.saturated else child.allocated * (least / child.share)
        node.allocated = total
        node.share = dominant_share(total, self.inv)
        node.saturated = all(c.saturated for c in node.children.values())

    def compare(self, lparts: list[str], rparts: list[str]) -> float:
        """< 0: the left queue goes first; > 0: the right one; 0: undecided (drf.go compareQueues)."""
        lnode = rnode = self.root
        depth = min(len(lparts), len(rparts)) + 1
        for i in range(depth):
            if lnode is None or rnode is None:
                return 0.0   # a path no job of this session built (Volcano: nil dereference)
            if not lnode.saturated and rnode.saturated:
                return -1.0
            if lnode.saturated and not rnode.saturated:
                return 1.0
            lv, rv = lnode.share / lnode.weight, rnode.share / rnode.weight
            if lv != rv:
                diff = lv - rv
                return 0.0 if math.isnan(diff) else diff
            if i < depth - 1:
                lnode = (lnode.children or {}).get(lparts[i])
                rnode = (rnode.children or {}).get(rparts[i])
        return 0.0
