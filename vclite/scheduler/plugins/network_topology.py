"""network-topology-aware: score HyperNodes for a job with networkTopology, and nodes for every pod
(plugins/network-topology-aware/network_topology_aware.go: HyperNodeOrderFn, BatchNodeOrderFn).

Reference (Volcano): OnSessionOpen registers HyperNodeOrder (bin-packing of the job's tasks into a
HyperNode), HyperNodeGradientForJob/SubJob (the candidate HyperNodes by tier; vclite keeps that
search in actions/topology.py, where the allocate action needs it) and BatchNodeOrder (node scores).

Arguments (Volcano's names and defaults): `weight` (1), `hypernode.binpack.cpu` (1),
`hypernode.binpack.memory` (1), `hypernode.binpack.resources` ("a, b") with
`hypernode.binpack.resources.<name>` (1) each; a negative weight becomes the default;
`hypernode.binpack.normal-pod.enable` (true) and `hypernode.binpack.normal-pod.fading` (0.8; a
negative one becomes the default). Accepted and not used: `hypernode.gradient.evict.max-hypernodes`
(8) — vclite does not port topology-aware preemption.

HyperNodeOrder, per candidate HyperNode h, over the resources the job's tasks request that have a
weight (request = the sum over all the job's tasks, placed or not, as upstream sums subJob.Tasks):
  s_r = (used_r(h) + request_r) / allocatable_r(h),   used/allocatable = sums over h's nodes
  score(h) = Σ w_r s_r / Σ w_r × 100 × weight,   0 if any used_r + request_r > allocatable_r.
`used` is what the nodes hold now (placed pods and this session's allocations). Upstream scores
each job-level candidate alone, so its task-count tie-break never applies there; vclite breaks ties
by HyperNode name (Volcano's map order is random).

BatchNodeOrder, × 100 × weight:
- a pod of a partition with networkTopology (the default partition: when the job has it), once
  its partition has placed pods (their lowest common HyperNode A, those placed earlier in this
  session included, as allocate updates the job's allocated HyperNode after each task): a node whose lowest-tier HyperNode is A scores 1, else
  (maxTier − tier(LCA(its HyperNode, A))) / (maxTier − minTier) over the session's tiers (the
  virtual top included; 1 when there is one tier), 0 for a node in no lowest-tier HyperNode; the
  nodes sharing the best score add the share of the partition's tasks on their HyperNode. Before
  any is placed, 0 for every node;
- any other pod, when normal-pod bin-packing is on: for each tier t from the lowest to the top,
  weight fading^(t−1), the tier's score is the bin-packing score above for this pod's request
  alone of the node's HyperNode of that tier (the first by name), with `used` as the session
  opened (upstream's cache), or 1 when the node is in none of that tier; the node's score is the
  weighted mean.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.scheduler.actions import topology
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import tasks as tasks_mod
    from vclite.scheduler.framework import session as session_mod

PREFIX = "hypernode.binpack.resources."
MAX_NODE_SCORE = 100


@dataclasses.dataclass(frozen=True)
class Arguments:
    weight: int = plugin.arg("weight", 1)
    cpu: int = plugin.arg("hypernode.binpack.cpu", 1)
    memory: int = plugin.arg("hypernode.binpack.memory", 1)
    resources: str = plugin.arg("hypernode.binpack.resources", "")
    normal_pod_enable: bool = plugin.arg("hypernode.binpack.normal-pod.enable", True)
    normal_pod_fading: float = plugin.arg("hypernode.binpack.normal-pod.fading", 0.8)
    evict_max_hypernodes: int = plugin.arg("hypernode.gradient.evict.max-hypernodes", 8)
    extra: Any = None   # hypernode.binpack.resources.<name>: weight of one listed resource

    def __post_init__(self) -> None:
        for key, value in (self.extra or {}).items():
            plugin.convert(value, int, f"plugin 'network-topology-aware': argument {key!r}")

    def resource_weights(self) -> dict[str, int]:
        extra = self.extra or {}
        out = {dims_mod.CPU: 1 if self.cpu < 0 else self.cpu, dims_mod.MEMORY: 1 if self.memory < 0 else self.memory}
        for name in (r.strip() for r in self.resources.split(",")):
            if name:
                w = int(extra.get(PREFIX + name, 1))
                out[name] = 1 if w < 0 else w
        return out


class NetworkTopologyAware:
    name = "network-topology-aware"
    Arguments = Arguments
    argument_prefixes = (PREFIX,)

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        dims = ssn.dims
        self.weights = np.zeros(len(dims))
        for name, w in self.arguments.resource_weights().items():
            if name in dims.index:
                self.weights[dims.index[name]] = w
        self.ssn = ssn
        global_weight = self.arguments.weight if self.arguments.weight >= 0 else 1
        self.scale = MAX_NODE_SCORE * global_weight
        self._tier_rows: dict[int, tuple] | None = None        # the session-open cache, built on first use
        self._subjobs: dict[str, dict[str, frozenset]] = {}    # job uid -> task uid -> its partition
        reg.add(hooks.Point.HYPERNODE_ORDER, self.hypernode_order, weight=self.scale)
        reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)

    def hypernode_order(self, job: "jobs_mod.JobInfo", names: list[str]) -> np.ndarray:
        """Bin-packing score in [0, 1] per HyperNode (the hook's weight scales it)."""
        ssn = self.ssn
        request = np.zeros(len(ssn.dims))
        for t in job.tasks.values():
            request = request + t.req
        counted = (request > 0) & (self.weights > 0)
        out = np.zeros(len(names))
        if not counted.any():
            return out
        w = self.weights[counted]
        for i, name in enumerate(names):
            mask = ssn.topology.leaves[name]
            alloc = ssn.nodes.allocatable[mask][:, counted].sum(axis=0)
            used = ssn.nodes.used[mask][:, counted].sum(axis=0) + request[counted]
            if (used > alloc).any():
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.where(alloc > 0, used / np.where(alloc > 0, alloc, 1), 0.0)
            out[i] = float((w * share).sum() / w.sum())
        return out

    # ---- BatchNodeOrder --------------------------------------------------------------------------
    def _subjob(self, task: "tasks_mod.TaskInfo") -> frozenset | None:
        job = self.ssn.jobs.get(task.job)
        if job is None:
            return None
        groups = self._subjobs.get(job.uid)
        if groups is None:
            groups = self._subjobs[job.uid] = topology.topology_subjobs(job)
        return groups.get(task.uid)

    def key(self, task: "tasks_mod.TaskInfo") -> Any:
        """Row-local only for a pod without network topology (its score depends on its request and
        the session-open cache); None otherwise (scored over the candidates)."""
        if self._subjob(task) is not None or not self.arguments.normal_pod_enable:
            return None
        return ("normal", tuple(task.req.tolist()))

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray | float:
        subjob = self._subjob(task)
        if subjob is not None:
            return self.scale * self._aware_scores(task, subjob, rows)
        if not self.arguments.normal_pod_enable:
            return 0.0
        return self.scale * self._normal_scores(task, rows)

    def _fading(self) -> float:
        f = self.arguments.normal_pod_fading
        return 0.8 if f < 0 else f

    def _normal_scores(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        ssn = self.ssn
        tree = ssn.topology
        lo, hi = tree.tiers[0], tree.tiers[-1]
        if self._tier_rows is None:   # per tier: the HyperNode of each node row (-1: none) and its sums
            self._tier_rows = {}
            for t in range(lo, hi + 1):
                owner = np.full(len(ssn.nodes), -1, dtype=np.intp)
                names = sorted((n for n, tier in tree.tier.items() if tier == t), reverse=True)
                for i, name in enumerate(names):   # reversed: the first by name wins
                    owner[tree.leaves[name]] = i
                sums = [(ssn.nodes.allocatable[tree.leaves[n]].sum(axis=0), ssn.nodes.used[tree.leaves[n]].sum(axis=0))
                        for n in names]
                self._tier_rows[t] = (owner, sums)
        req = task.req
        counted = (req > 0) & (self.weights > 0)
        total_weight = sum(self._fading() ** (t - 1) for t in range(lo, hi + 1))
        out = np.zeros(len(rows))
        if total_weight <= 0:
            return out
        for t in range(lo, hi + 1):
            owner, sums = self._tier_rows[t]
            per_hn = np.array([self._pod_binpack(req, counted, alloc, used) for alloc, used in sums] + [1.0])
            out += self._fading() ** (t - 1) * per_hn[owner[rows]]   # -1 picks the trailing 1.0
        return out / total_weight

    def _pod_binpack(self, req: np.ndarray, counted: np.ndarray, alloc: np.ndarray, used: np.ndarray) -> float:
        if not counted.any():
            return 0.0
        a, u = alloc[counted], used[counted] + req[counted]
        if (u > a).any():
            return 0.0
        w = self.weights[counted]
        return float((w * (u / a)).sum() / w.sum())

    def _aware_scores(self, task: "tasks_mod.TaskInfo", subjob: frozenset, rows: np.ndarray) -> np.ndarray:
        ssn = self.ssn
        job = ssn.jobs[task.job]
        allocated = topology.allocated_hypernode(ssn, job, set(subjob))   # this session's placements too
        out = np.zeros(len(rows))
        if not allocated:
            return out
        tree = ssn.topology
        lo, hi = tree.tiers[0], tree.tiers[-1]
        lowest = sorted(n for n, tier in tree.tier.items() if tier == lo)
        node_hn = []
        for i, row in enumerate(rows.tolist()):
            hn = next((n for n in lowest if tree.leaves[n][row]), "")
            node_hn.append(hn)
            if not hn:
                continue
            if hn == allocated:
                out[i] = 1.0
                continue
            tier = tree.tier[tree.lca(hn, allocated)]
            out[i] = 1.0 if lo == hi else (hi - tier) / (hi - lo) if lo <= tier <= hi else 0.0
        best = np.flatnonzero(out == out.max())
        if best.size > 1:
            placed = [ssn.nodes.index.get(job.tasks[u].node) for u in subjob if job.tasks[u].node]
            for i in best.tolist():
                hn = node_hn[i]
                if hn:
                    share = sum(1 for r in placed if r is not None and tree.leaves[hn][r])
                    out[i] += share / len(subjob)
        return out

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        pass
