"""nodeorder: kube-scheduler's scores, weighted as Volcano's nodeorder plugin (plugins/nodeorder).

Arguments (Volcano's names and default weights, integers): `leastrequested.weight` 1,
`mostrequested.weight` 0, `balancedresource.weight` 1, `nodeaffinity.weight` 2,
`podaffinity.weight` 2, `tainttoleration.weight` 3, `imagelocality.weight` 1,
`podtopologyspread.weight` 2. A node's score is Σ weight × score, each score 0..100 as the
upstream plugin computes it (integer arithmetic where upstream's is), a weight of 0 skipping it:
- leastrequested (NodeResourcesFit LeastAllocated, cpu/memory weights 50/50): per resource
  ⌊(alloc − req)·100/alloc⌋ (0 if req > alloc), weighted mean rounded down;
- mostrequested (MostAllocated, cpu/memory 1/1): ⌊min(req, alloc)·100/alloc⌋, weighted mean;
  for both, req = node requests + the pod's, the pod's cpu/memory counted as 100m/200Mi when
  it requests none (upstream's non-zero defaults);
- balancedresource (BalancedAllocation over cpu, memory, nvidia.com/gpu when the pod asks for
  it): ⌊(1 − std(min(req/alloc, 1)))·100⌋ with the pod's actual requests;
  resources with alloc 0 are left out of all three;
- nodeaffinity: Σ weights of the pod's preferred node-affinity terms the node matches — not
  normalized, as Volcano calls it;
- tainttoleration: count of untolerated PreferNoSchedule taints, normalized over the candidate
  nodes and reversed (100 for the fewest);
- imagelocality: the pod's images present on the node (node.status.images), size × share of
  nodes holding the image, clamped to 23MB..1000MB × containers, scaled to 0..100;
- podaffinity and podtopologyspread: see interpod.py (preferred terms and ScheduleAnyway
  constraints, normalized over the candidate nodes).
"Node requests" = the node's Used plus its pipelined reservations (Volcano's node map gets every
allocate/pipeline event). Every score is a numpy vector over the candidate rows. The three
resource scores are row-local and registered with `key=` (the task's cpu, memory, gpu): the
session keeps them for all nodes per key and recomputes only changed nodes, a few of them through
the same formula on Python floats (`resource_formula`, bit-identical). When nothing in the
session can make another score differ between nodes, that constant (tainttoleration's 100 ×
weight) is folded into the cached scores and no per-task function is registered.
Not modelled: upstream counts request-less containers of pods already on a node at 100m/200Mi
(here they count at their actual requests); the pod's defaults apply per pod, not per container;
the SystemDefaulting spread constraints that upstream adds for pods selected by Services are not
added.

Must not: change node state or keep state between sessions.
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin
from vclite.scheduler.plugins import interpod, nodematch, podindex

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

MAX_NODE_SCORE = 100
DEFAULT_MILLI_CPU = 100                  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY = 200 * 1024 * 1024       # schedutil.DefaultMemoryRequest
GPU = "nvidia.com/gpu"
MB = 1024 * 1024
IMAGE_MIN, IMAGE_MAX_PER_CONTAINER = 23 * MB, 1000 * MB
FEW_ROWS = 16   # up to this many rows are scored with Python floats (the session's recomputed rows)


@dataclasses.dataclass(frozen=True)
class Arguments:
    leastrequested: int = plugin.arg("leastrequested.weight", 1)
    mostrequested: int = plugin.arg("mostrequested.weight", 0)
    balancedresource: int = plugin.arg("balancedresource.weight", 1)
    nodeaffinity: int = plugin.arg("nodeaffinity.weight", 2)
    podaffinity: int = plugin.arg("podaffinity.weight", 2)
    tainttoleration: int = plugin.arg("tainttoleration.weight", 3)
    imagelocality: int = plugin.arg("imagelocality.weight", 1)
    podtopologyspread: int = plugin.arg("podtopologyspread.weight", 2)


# ---- resource scores (pure; arrays over nodes) --------------------------------------------------
def least_requested(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """Per resource: ⌊(alloc − req)·100/alloc⌋, 0 when req > alloc (alloc > 0). Exact: values are
    integers below 2**53 and a quotient ≤ 100 is never within an ulp of the next integer."""
    out = alloc - req
    out *= MAX_NODE_SCORE
    out /= alloc
    np.floor(out, out=out)
    return np.maximum(out, 0.0, out=out)


def most_requested(req: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    out = np.minimum(req, alloc)
    out *= MAX_NODE_SCORE
    out /= alloc
    return np.floor(out, out=out)


def weighted_mean(scores: list[np.ndarray], weights: list[int], present: list[np.ndarray | None]) -> np.ndarray:
    """⌊Σ w·s / Σ w⌋ over the resources present on each node (0 where none is)."""
    if all(p is None for p in present):
        return np.floor(sum(w * s for w, s in zip(weights, scores)) / sum(weights))
    num = sum(w * (s if p is None else s * p) for w, s, p in zip(weights, scores, present))
    den = sum(w * (1.0 if p is None else p) for w, p in zip(weights, present))
    return np.where(den > 0, np.floor(num / np.where(den > 0, den, 1.0)), 0.0)


def balanced(fractions: list[np.ndarray], present: list[np.ndarray | None]) -> np.ndarray:
    """⌊(1 − std)·100⌋ of the fractions present on each node (|f1 − f2|/2 for two, as upstream)."""
    if len(fractions) == 2 and all(p is None for p in present):
        out = fractions[0] - fractions[1]      # upstream's float steps, in its order: int64((1 − |Δ|/2)·100)
        np.abs(out, out=out)
        out /= 2
        np.subtract(1.0, out, out=out)
        out *= MAX_NODE_SCORE
        return np.floor(out, out=out)
    f = np.stack(fractions, axis=1)
    p = np.stack([np.ones(len(fractions[0]), dtype=bool) if m is None else m for m in present], axis=1)
    count = p.sum(axis=1)
    safe = np.maximum(count, 1)
    mean = (f * p).sum(axis=1) / safe
    std = np.sqrt((((f - mean[:, None]) ** 2) * p).sum(axis=1) / safe)
    two = count == 2
    if two.any():
        first = np.argmax(p, axis=1)
        last = p.shape[1] - 1 - np.argmax(p[:, ::-1], axis=1)
        idx = np.arange(len(f))
        std = np.where(two, np.abs(f[idx, first] - f[idx, last]) / 2, std)
    std = np.where(count < 2, 0.0, std)
    return np.floor((1.0 - std) * MAX_NODE_SCORE)


def resource_formula(uc: Any, um: Any, ac: Any, am: Any, cpu: float, mem: float, w: "Arguments",
                     floor: Any, minimum: Any, maximum: Any) -> Any:
    """Weighted least + most requested + balanced for cpu and memory, every allocatable > 0, no gpu.
    Written with operators and the given floor/minimum/maximum only, so the same float steps run
    on node vectors (numpy) and on one node's floats (math): the two must agree to the bit."""
    total = 0.0
    if w.leastrequested or w.mostrequested:
        rc, rm = uc + (cpu or DEFAULT_MILLI_CPU), um + (mem or DEFAULT_MEMORY)
        if w.leastrequested:   # upstream (50·lc + 50·lm) / 100 in integers = ⌊(lc + lm) / 2⌋
            lc = maximum(floor((ac - rc) * MAX_NODE_SCORE / ac), 0.0)
            lm = maximum(floor((am - rm) * MAX_NODE_SCORE / am), 0.0)
            total = total + w.leastrequested * floor((lc + lm) / 2)
        if w.mostrequested:
            mc = floor(minimum(rc, ac) * MAX_NODE_SCORE / ac)
            mm = floor(minimum(rm, am) * MAX_NODE_SCORE / am)
            total = total + w.mostrequested * floor((mc + mm) / 2)
    if w.balancedresource:
        fc, fm = minimum((uc + cpu) / ac, 1.0), minimum((um + mem) / am, 1.0)
        total = total + w.balancedresource * floor((1.0 - abs(fc - fm) / 2) * MAX_NODE_SCORE)
    return total


def weighted_sum(parts: list[tuple[int, Any]]) -> np.ndarray | float:
    """Σ weight × score, constant scores added once; None parts (nothing to score) skipped."""
    total: np.ndarray | None = None
    const = 0.0
    for weight, score in parts:
        if score is None:
            continue
        if isinstance(score, np.ndarray):
            if total is None:
                total = score * weight if weight != 1 else score   # parts are fresh arrays: reuse the first
            else:
                total += weight * score
        else:
            const += weight * score
    if total is None:
        return const
    if const:
        total += const
    return total


def normalize_reverse(counts: np.ndarray) -> np.ndarray:
    """kube-scheduler's DefaultNormalizeScore(100, reverse=true) over integer counts."""
    top = int(counts.max()) if counts.size else 0
    if top == 0:
        return np.full(counts.shape, float(MAX_NODE_SCORE))
    return MAX_NODE_SCORE - (MAX_NODE_SCORE * counts) // top


def image_priority(total: np.ndarray, n_containers: int) -> np.ndarray:
    hi = IMAGE_MAX_PER_CONTAINER * n_containers
    clamped = np.clip(total, IMAGE_MIN, hi)
    return (MAX_NODE_SCORE * (clamped - IMAGE_MIN)) // (hi - IMAGE_MIN)


def normalized_image(name: str) -> str:
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


_COLUMNS: dict[tuple, tuple[list, list]] = {}   # (allocatable bytes, shape, cols) -> _resource_columns


def _resource_columns(alloc: np.ndarray, cols: tuple[int, ...]) -> tuple[list, list]:
    """Per column of `cols`: which nodes have any of it (None: all do), and the allocatable with 0
    as 1 (a divisor). Read-only arrays, shared by the sessions that see the same nodes (a small memo)."""
    key = (alloc.tobytes(), alloc.shape, cols)
    hit = _COLUMNS.get(key)
    if hit is None:
        present = [None if (alloc[:, c] > 0).all() else alloc[:, c] > 0 for c in cols]
        divisors = [np.where(alloc[:, c] > 0, alloc[:, c], 1.0) for c in cols]
        for a in [*divisors, *(p for p in present if p is not None)]:
            a.setflags(write=False)
        if len(_COLUMNS) >= 64:
            _COLUMNS.clear()
        hit = _COLUMNS[key] = (present, divisors)
    return hit


class NodeOrder:
    name = "nodeorder"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        nodes = ssn.nodes
        self.nodes, self.dims = nodes, ssn.dims
        self.labels = nodematch.NodeLabels(nodes)
        self.taints = nodematch.NodeTaints(nodes)
        self.pods = podindex.PodIndex(nodes, ssn.pods, ssn.namespaces)
        self.interpod = interpod.InterPod(self.labels, self.pods, nodes)
        cols = [self.dims.index[dims_mod.CPU], self.dims.index[dims_mod.MEMORY]]
        self._cols = cols
        self._gpu = self.dims.index.get(GPU)
        self._present, self._alloc = _resource_columns(nodes.allocatable, tuple(cols))
        self._images: dict[str, np.ndarray] | None = None
        self._affinity_pods = False
        self._simple = all(p is None for p in self._present)
        self._all_rows = np.arange(len(nodes))
        self._offset = 0.0
        a = self.arguments
        resources = bool(a.leastrequested or a.mostrequested or a.balancedresource)
        varying = self._scores_may_vary(ssn)
        if not varying and resources:
            # Every other score is the same on every node for every task of this session (no
            # preferred affinity, spread constraint, PreferNoSchedule taint or node image anywhere):
            # fold that constant into the cached resource scores instead of a call per task.
            self._offset = float(a.tainttoleration * MAX_NODE_SCORE)
            reg.add(hooks.Point.NODE_ORDER, self.resource_order, key=self.resource_key, row=self.resource_row)
            return
        if not reg.add(hooks.Point.NODE_ORDER, self.node_order):
            return
        if resources:
            reg.add(hooks.Point.NODE_ORDER, self.resource_order, key=self.resource_key, row=self.resource_row)
        if a.podaffinity or a.podtopologyspread:
            reg.add(hooks.Point.ALLOCATE_EVENT, self.pods.on_allocate)
            reg.add(hooks.Point.DEALLOCATE_EVENT, self.pods.on_deallocate)
        self._affinity_pods = bool(a.podaffinity) and any(interpod.has_pod_affinity(p) for p in ssn.pods)

    def _scores_may_vary(self, ssn: "session_mod.Session") -> bool:
        """Can a score other than the resource ones differ between nodes for some task?"""
        a = self.arguments
        if (a.tainttoleration and self.taints.any_prefer) or (
                a.imagelocality and any((n.get("status") or {}).get("images") for n in self.nodes.objects)):
            return True
        if not (a.nodeaffinity or a.podaffinity or a.podtopologyspread):
            return False
        for p in ssn.pods:
            spec = p.get("spec") or {}
            if spec.get("affinity") or spec.get("topologySpreadConstraints"):
                return True
        return False

    # ---- the hooks -------------------------------------------------------------------------------
    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray | float:
        """Every score but the resource ones (those are `resource_order`, cached by the session)."""
        a = self.arguments
        parts: list[tuple[int, Any]] = []     # (weight, scores over rows, or one score for all)
        if a.nodeaffinity:
            pref = self.labels.preferred_score(task.pod)
            if pref is not None:
                parts.append((a.nodeaffinity, pref[rows]))
        if a.tainttoleration:
            parts.append((a.tainttoleration, self.taint_scores(task, rows)))
        if a.imagelocality:
            parts.append((a.imagelocality, self.image_scores(task, rows)))
        if a.podaffinity and (self._affinity_pods or interpod.has_pod_affinity(task.pod)):
            parts.append((a.podaffinity, self.interpod.affinity_scores(task.pod, rows)))
        if a.podtopologyspread:
            parts.append((a.podtopologyspread, self.interpod.spread_scores(task.pod, rows)))
        return weighted_sum(parts)

    def resource_key(self, task: "tasks_mod.TaskInfo") -> tuple[float, float, float]:
        """All the resource scores depend on: the task's cpu, memory and gpu requests."""
        req = task.req.tolist()   # (Python floats, as float(req[i]) gives them, without numpy scalars)
        gpu = req[self._gpu] if self._gpu is not None else 0.0
        return req[self._cols[0]], req[self._cols[1]], gpu

    def resource_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        """Weighted least/most requested and balanced allocation: row-local (each node's own books)."""
        key = self.resource_key(task)
        if rows.size <= FEW_ROWS and self._simple and not key[2]:
            out = np.array([self._resource_row(key, r) for r in rows.tolist()], dtype=np.float64)
        else:
            whole = rows.size == len(self.nodes) and np.array_equal(rows, self._all_rows)
            out = self._resource_scores(key, slice(None) if whole else rows)
        if self._offset:
            out += self._offset
        return out

    def resource_row(self, key: tuple[float, float, float]) -> Any:
        """`resource_order`'s scalar form for the session's memo (hooks: `row=`): one node's score for a task of
        `key` as a Python float, by the same float steps as its few-row path; None where that path is not taken."""
        if not self._simple or key[2]:
            return None
        offset = self._offset

        def row(r: int) -> float:
            v = self._resource_row(key, r)
            return v + offset if offset else v   # (as `out += self._offset`)
        return row

    def _resource_scores(self, key: tuple[float, float, float], idx: Any) -> np.ndarray:
        """`resource_order` on nodes `idx` (a row array, or slice(None) for all), as vectors."""
        nodes = self.nodes
        n = len(nodes) if isinstance(idx, slice) else len(idx)
        if self._simple and not key[2]:
            c, m = self._cols
            uc = nodes.used[idx, c] + nodes.pipelined[idx, c]
            um = nodes.used[idx, m] + nodes.pipelined[idx, m]
            total = resource_formula(uc, um, self._alloc[0][idx], self._alloc[1][idx], key[0], key[1],
                                     self.arguments, np.floor, np.minimum, np.maximum)
        else:
            total = self._general_scores(key, idx)
        return np.broadcast_to(np.asarray(total, dtype=np.float64), (n,)).copy()

    def _resource_row(self, key: tuple[float, float, float], row: int) -> float:
        """`_resource_scores` of one node with Python floats: the same float steps, without numpy's
        per-call cost, for the few nodes the session recomputes after each placement."""
        (c, m), used, pipelined = self._cols, self.nodes.used, self.nodes.pipelined
        return float(resource_formula(
            used.item(row, c) + pipelined.item(row, c), used.item(row, m) + pipelined.item(row, m),
            self._alloc[0].item(row), self._alloc[1].item(row), key[0], key[1], self.arguments,
            math.floor, min, max))

    def _general_scores(self, key: tuple[float, float, float], idx: Any) -> Any:
        """The same scores where some node lacks cpu or memory, or the pod asks for a gpu."""
        a, nodes = self.arguments, self.nodes
        used = [nodes.used[idx, c] + nodes.pipelined[idx, c] for c in self._cols]
        alloc = [x[idx] for x in self._alloc]
        present = [None if p is None else p[idx] for p in self._present]
        total: Any = 0.0
        if a.leastrequested or a.mostrequested:
            pod = (key[0] or DEFAULT_MILLI_CPU, key[1] or DEFAULT_MEMORY)
            req = [u + r for u, r in zip(used, pod)]
            if a.leastrequested:
                s = weighted_mean([least_requested(r, al) for r, al in zip(req, alloc)], [50, 50], present)
                total = total + a.leastrequested * s
            if a.mostrequested:
                s = weighted_mean([most_requested(r, al) for r, al in zip(req, alloc)], [1, 1], present)
                total = total + a.mostrequested * s
        if a.balancedresource:
            fractions = [np.minimum((u + r) / al, 1.0) for u, r, al in zip(used, key, alloc)]
            if key[2] > 0:
                g = nodes.allocatable[idx, self._gpu]
                gu = nodes.used[idx, self._gpu] + nodes.pipelined[idx, self._gpu] + key[2]
                fractions.append(np.minimum(gu / np.where(g > 0, g, 1.0), 1.0))
                present = present + [g > 0]
            total = total + a.balancedresource * balanced(fractions, present)
        return total

    def taint_scores(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray | float:
        if not self.taints.any_prefer:
            return float(MAX_NODE_SCORE)
        return normalize_reverse(self.taints.prefer_counts(task.tolerations)[rows])

    def image_scores(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray | None:
        if self._images is None:
            self._images = self._image_table()
        if not self._images:
            return None
        spec = task.pod.get("spec") or {}
        containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        total = np.zeros(len(rows))
        for c in containers:
            scaled = self._images.get(normalized_image(str(c.get("image") or "")))
            if scaled is not None:
                total += scaled[rows]
        return image_priority(total, len(containers))

    def _image_table(self) -> dict[str, np.ndarray]:
        """Image name -> per node ⌊size × (nodes with the image / all nodes)⌋ (0 where absent)."""
        n = len(self.nodes)
        sizes: dict[str, np.ndarray] = {}
        for i, node in enumerate(self.nodes.objects):
            for image in (node.get("status") or {}).get("images") or ():
                for name in image.get("names") or ():
                    sizes.setdefault(name, np.full(n, -1.0))[i] = float(image.get("sizeBytes") or 0)
        out = {}
        for name, s in sizes.items():
            present = s >= 0
            out[name] = np.where(present, np.trunc(np.maximum(s, 0) * (present.sum() / n)), 0.0)
        return out

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
