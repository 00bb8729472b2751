"""The capacity plugin's per-queue numbers and comparisons, as pure functions over session vectors.

Volcano's capacity plugin (plugins/capacity/capacity.go) compares `api.Resource` values whose scalar
dimensions may be absent; here every queue vector covers the session's dimensions, and where absence
matters a boolean mask says which dimensions a resource list names:
- `share(allocated, deserved)`: 1 for a queue without deserved (best effort), else the largest
  allocated / deserved over the dimensions deserved names with a value (`pods` included, as
  Volcano's ResourceNames).
- `insufficient(used, limit, req)`: LessEqualWithDimensionAndResourcesName: the dimensions the
  request asks for (`pods` aside) where `used` exceeds `limit` (strictly; no tolerance).
- `below_deserved_somewhere(future, deserved, req)`: LessEqualPartlyWithDimensionZeroFiltered: on
  some requested dimension that is not zero on both sides, `future` ≤ deserved.
- `over_deserved(allocated, deserved, listed, req)`: GreaterPartlyWithRelevantDimensions: on some
  requested dimension that deserved has (cpu/memory: ≥ the tolerance; a scalar: named by it),
  allocated exceeds deserved.
- `shares_dimension(a, b, with_pods)`: Intersection (with or without `pods`): some dimension
  non-negligible in both.
- `hierarchy(...)`: the queue tree of the hierarchical mode — ancestors, children, inherited
  capabilities and real capabilities (checkHierarchicalQueue).

Must not: know the session, the plugin's hooks or the API.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from vclite.scheduler.framework import dims as dims_mod

TOL = dims_mod.TOLERANCE   # Volcano's minResource
ROOT = "root"


@dataclasses.dataclass(eq=False)
class QueueAttr:
    """One queue's numbers for a session (Volcano's queueAttr)."""
    name: str
    deserved: np.ndarray
    listed: np.ndarray          # bool: the dimensions deserved (or guarantee) names
    guarantee: np.ndarray
    capability: np.ndarray      # +inf where unlimited
    real_capability: np.ndarray
    allocated: np.ndarray
    request: np.ndarray
    inqueue: np.ndarray
    elastic: np.ndarray
    share: float = 0.0
    ancestors: list[str] = dataclasses.field(default_factory=list)   # root first
    children: list[str] = dataclasses.field(default_factory=list)


def share(allocated: np.ndarray, deserved: np.ndarray, dims: dims_mod.Dims) -> float:
    if dims_mod.is_empty(deserved, dims):
        return 1.0
    cols = deserved >= TOL
    return float((allocated[cols] / deserved[cols]).max())


def compare_share(l: QueueAttr, r: QueueAttr, dims: dims_mod.Dims) -> int:
    """compareShareWithDeserved: lower share first; on a tie a queue with deserved first."""
    if l.share == r.share:
        lhas, rhas = not dims_mod.is_empty(l.deserved, dims), not dims_mod.is_empty(r.deserved, dims)
        return 0 if lhas == rhas else (-1 if lhas else 1)
    return -1 if l.share < r.share else 1


def insufficient(used: np.ndarray, limit: np.ndarray, req: np.ndarray, dims: dims_mod.Dims) -> list[int]:
    return [int(i) for i in np.flatnonzero((req > 0) & dims.not_pods & (used > limit))]


def below_deserved_somewhere(future: np.ndarray, deserved: np.ndarray, req: np.ndarray, dims: dims_mod.Dims) -> bool:
    cols = (req > 0) & dims.not_pods & ~((future < TOL) & (deserved < TOL))
    return bool(((future < deserved) | (np.abs(future - deserved) < TOL))[cols].any())


def over_deserved(allocated: np.ndarray, deserved: np.ndarray, listed: np.ndarray, req: np.ndarray,
                  dims: dims_mod.Dims) -> bool:
    return bool((allocated > deserved)[deserved_columns(deserved, listed, req, dims)].any())


def deserved_columns(deserved: np.ndarray, listed: np.ndarray, req: np.ndarray, dims: dims_mod.Dims) -> np.ndarray:
    """The dimensions over_deserved compares: those the request asks (pods aside) that the queue lists
    in deserved (cpu and memory: when deserved has some)."""
    relevant = listed.copy()
    for base in (dims.index[dims_mod.CPU], dims.index[dims_mod.MEMORY]):
        relevant[base] = deserved[base] >= TOL
    return (req > 0) & dims.not_pods & relevant


def shares_dimension(a: np.ndarray, b: np.ndarray, dims: dims_mod.Dims, with_pods: bool) -> bool:
    both = (a >= TOL) & (b >= TOL)
    if not with_pods:
        both &= dims.not_pods
    return bool(both.any())


def queue_level(l: QueueAttr, r: QueueAttr) -> int:
    """getQueueLevel: the index of the deepest common ancestor (0 when only root is shared)."""
    level = 0
    for i in range(min(len(l.ancestors), len(r.ancestors))):
        if l.ancestors[i] != r.ancestors[i]:
            return level
        level = i
    return level


def ancestor_at_depth(attr: QueueAttr, depth: int) -> str | None:
    """The ancestor `depth` levels up (1: the parent), if there is one."""
    if depth <= 0 or len(attr.ancestors) < depth:
        return None
    return attr.ancestors[len(attr.ancestors) - depth]


class HierarchyError(ValueError):
    """The queue tree cannot be built (Volcano then schedules nothing with capacity)."""


def link(attrs: dict[str, QueueAttr], parents: dict[str, str]) -> None:
    """Fill ancestors (root first) and children from each queue's parent (updateAncestors)."""
    for name in attrs:
        chain: list[str] = []
        seen = {name}
        cur = name
        while cur != ROOT:
            parent = parents.get(cur) or ROOT
            if parent not in attrs:
                raise HierarchyError(f"the queue {cur} has invalid parent queue {parent}")
            if parent in seen:
                raise HierarchyError(f"cycle detected in queue hierarchy for queue {cur}")
            seen.add(parent)
            chain.append(parent)
            cur = parent
        attrs[name].ancestors = chain[::-1]
        if chain:
            attrs[chain[0]].children.append(name)


def settle(attrs: dict[str, QueueAttr], root: QueueAttr) -> None:
    """checkHierarchicalQueue from `root` down: a child's deserved is raised to its guarantee, a
    capability it leaves unset (inf) is its parent's, and its real capability is what the parent's
    real capability leaves over the siblings' guarantees, plus its own guarantee, capped by its
    capability. The root deserves and guarantees the sums of its children's."""
    stack = [root]
    while stack:
        attr = stack.pop()
        children = [attrs[c] for c in attr.children]
        total_guarantee = np.zeros_like(attr.guarantee)
        total_deserved = np.zeros_like(attr.deserved)
        listed = np.zeros_like(attr.listed)
        for child in children:
            child.deserved = np.maximum(child.deserved, child.guarantee)
            total_deserved += child.deserved
            total_guarantee += child.guarantee
            listed |= child.listed
            child.capability = np.where(np.isinf(child.capability), attr.capability, child.capability)
        if attr is root:
            attr.guarantee, attr.deserved, attr.listed = total_guarantee, total_deserved, listed
        left = np.maximum(attr.real_capability - total_guarantee, 0)
        for child in children:
            child.real_capability = np.minimum(left + child.guarantee, child.capability)
        stack.extend(children)
