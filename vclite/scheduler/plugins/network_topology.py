"""network-topology-aware: score HyperNodes for a job with networkTopology, and nodes for every pod
(plugins/network-topology-aware/network_topology_aware.go: HyperNodeOrderFn, BatchNodeOrderFn).

Reference (Volcano): OnSessionOpen registers HyperNodeOrder (bin-packing of the job's tasks into a
HyperNode), HyperNodeGradientForJob/SubJob (the candidate HyperNodes by tier; vclite keeps that
search in actions/topology.py, where the allocate action needs it) and BatchNodeOrder (node scores).

Arguments (Volcano's names and defaults): `weight` (1), `hypernode.binpack.cpu` (1),
`hypernode.binpack.memory` (1), `hypernode.binpack.resources` ("a, b") with
`hypernode.binpack.resources.<name>` (1) each; a negative weight becomes the default;
`hypernode.binpack.normal-pod.enable` (true) and `hypernode.binpack.normal-pod.fading` (0.8; a
negative one becomes the default). `hypernode.gradient.evict.max-hypernodes` (8; 0 or less: 8) caps
the HyperNodes gangpreempt and gangreclaim search for a job or a partition (actions/gangevict.py
reads it; the eviction gradients themselves are actions/topology.py's, widest tier first).

HyperNodeOrder, per candidate HyperNode h, over the resources the job's tasks request that have a
weight (request = the sum over all the job's tasks, placed or not, as upstream sums subJob.Tasks):
  s_r = (used_r(h) + request_r) / allocatable_r(h),   used/allocatable = sums over h's nodes
  score(h) = Σ w_r s_r / Σ w_r × 100 × weight,   0 if any used_r + request_r > allocatable_r.
`used` is upstream's HyperNode resource cache, as below (this session's pipelined tasks count,
those it evicted do not; with no HyperNode but the virtual top, what the nodes hold now).
Upstream scores each job-level candidate alone, so its task-count tie-break never applies there;
vclite breaks ties by HyperNode name (Volcano's map order is random).

BatchNodeOrder, × 100 × weight:
- a pod of a partition with networkTopology (the default partition: when the job has it), once
  its partition has an allocated HyperNode A (the one kept across sessions, actions/allocated.py,
  joined with the lowest common HyperNode of its placed pods, those placed earlier in this session
  included, as allocate updates the task's JobAllocatedHyperNode after each placement): a node
  whose lowest-tier HyperNode is A scores 1, else
  (maxTier − tier(LCA(its HyperNode, A))) / (maxTier − minTier) over the session's tiers (the
  virtual top included; 1 when there is one tier), 0 for a node in no lowest-tier HyperNode; the
  nodes sharing the best score add the share of the partition's tasks on their HyperNode. Before
  any is placed, 0 for every node;
- any other pod, when normal-pod bin-packing is on: for each tier t from the lowest to the top,
  weight fading^(t−1), the tier's score is the bin-packing score above for this pod's request
  alone of the node's HyperNode of that tier (the first by name), or 1 when the node is in none of
  that tier; the node's score is the weighted mean (with fading 0 and tier-0 HyperNodes, where
  upstream's weights are infinite and its scores NaN, the mean over the infinite ones: tier 0's).
  `used` is upstream's HyperNode resource cache: what the nodes held when the session opened,
  plus the requests of the tasks this session allocated or pipelined and minus those it evicted
  or took back (its Allocate and Deallocate events), so a pod placed earlier in the session makes
  its HyperNodes fuller for the next one.
Without HyperNodes every node is in the virtual top alone and gets the same score from either
function, which orders nothing: BatchNodeOrder is then not registered (a session pays nothing).

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.scheduler.actions import topology
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import fitcache, hooks, plugin

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


@dataclasses.dataclass
class _Layout:
    """Every HyperNode of the tree (TOP included), tier by tier from the lowest, as stacked rows."""
    tiers: list[int]             # the tiers from the lowest to the top, gaps included
    names: list[list[str]]       # per tier, its HyperNodes by name
    index: dict[str, int]        # HyperNode -> its row below
    member: np.ndarray           # HyperNode × node row: the node is in it
    owner: np.ndarray            # tier × node row: the node's HyperNode of the tier (the first by name);
                                 # len(member) (a trailing entry) where it is in none
    allocatable: np.ndarray      # HyperNode × dimension sums
    used: np.ndarray             # likewise: upstream's cache, kept current by the session's events
    fade: np.ndarray             # per tier: fading^(tier − 1), a normal pod's weight of the tier
    fade_total: float


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
        self._layout: _Layout | None = None                     # built when the session opens
        self._version = 0                                       # HyperNode usage changes this session
        self._subjobs: dict[str, dict[str, tuple[str, frozenset]]] = {}   # job uid -> task uid -> (name, tasks)
        self._requests: dict[bytes, tuple] = {}                 # _request's memo
        reg.add(hooks.Point.HYPERNODE_ORDER, self.hypernode_order, weight=self.scale)
        if ssn.hypernode_objects:   # else every node scores alike (module docstring)
            self._tiers()   # upstream's resource cache, as the session opens it
            reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)
            reg.add(hooks.Point.ALLOCATE_EVENT, lambda task: self._account(task, 1.0))
            reg.add(hooks.Point.DEALLOCATE_EVENT, lambda task: self._account(task, -1.0))

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
        layout = self._layout   # upstream's event-fed cache (HyperNodes exist); else the nodes' own books
        for i, name in enumerate(names):
            if layout is not None and name in layout.index:
                alloc = layout.allocatable[layout.index[name], counted]
                used = layout.used[layout.index[name], counted] + request[counted]
            else:
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
    def _subjob(self, task: "tasks_mod.TaskInfo") -> tuple[str, frozenset] | None:
        job = self.ssn.jobs.get(task.job)
        if job is None:
            return None
        groups = self._subjobs.get(job.uid)
        if groups is None:
            groups = self._subjobs[job.uid] = topology.topology_subjobs(job)
        return groups.get(task.uid)

    def key(self, task: "tasks_mod.TaskInfo") -> Any:
        """Row-local only for a pod without network topology, within one state of the HyperNodes'
        usage (the version counts this session's Allocate/Deallocate events: a Volatile key, so the
        session recomputes this function alone when it moves); None otherwise."""
        if self._subjob(task) is not None or not self.arguments.normal_pod_enable:
            return None
        return fitcache.Volatile(("normal", task.req.tobytes()), self._version)

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

    def _tiers(self) -> _Layout:
        if self._layout is None:
            tree, nodes = self.ssn.topology, self.ssn.nodes
            tiers = list(range(tree.tiers[0], tree.tiers[-1] + 1))
            names = [sorted(n for n, tier in tree.tier.items() if tier == t) for t in tiers]
            flat = [n for per_tier in names for n in per_tier]
            member = np.array([tree.leaves[n] for n in flat], dtype=bool).reshape(len(flat), len(nodes))
            owner = np.full((len(tiers), len(nodes)), len(flat), dtype=np.intp)
            start = 0
            for i, per_tier in enumerate(names):
                for j in range(start + len(per_tier) - 1, start - 1, -1):   # the first by name wins
                    owner[i, member[j]] = j
                start += len(per_tier)
            weights = member.astype(np.float64)
            with np.errstate(divide="ignore"):
                fade = np.power(self._fading(), np.array(tiers, dtype=np.float64) - 1)
            if np.isinf(fade).any():   # fading 0 and a tier-0 HyperNode: the limit of the weighted mean
                fade = np.isinf(fade).astype(np.float64)
            self._layout = _Layout(tiers, names, {n: i for i, n in enumerate(flat)}, member, owner,
                                   weights @ nodes.allocatable, weights @ nodes.used, fade, float(fade.sum()))
        return self._layout

    def _account(self, task: "tasks_mod.TaskInfo", sign: float) -> None:
        """An Allocate (+) or Deallocate (−) event: the task's HyperNodes hold more or less."""
        row = self.ssn.nodes.index.get(task.node) if task.node else None
        if row is None:
            return
        self._version += 1
        layout = self._tiers()
        layout.used[layout.member[:, row]] += sign * task.req

    def _request(self, req: np.ndarray) -> tuple:
        """What a request's normal-pod scores read that the session's placements never change: the
        counted columns, the HyperNodes' allocatable there, where it is positive, the normalised
        weights and the request there — computed once per distinct request (the same values)."""
        k = req.tobytes()
        r = self._requests.get(k)
        if r is None:
            counted = (req > 0) & (self.weights > 0)
            if counted.any():
                w = self.weights[counted]
                a = self._tiers().allocatable[:, counted]
                r = (counted, a, a > 0, w / w.sum(), req[counted])
            else:
                r = (None,)
            self._requests[k] = r
        return r

    def _normal_scores(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        layout = self._tiers()
        if layout.fade_total <= 0:
            return np.zeros(len(rows))
        request = self._request(task.req)
        per_hn = np.ones(len(layout.member) + 1)   # the trailing 1: a node in no HyperNode of a tier
        if request[0] is not None:
            counted, a, positive, w, req = request
            u = layout.used[:, counted] + req
            share = np.divide(u, a, out=np.zeros_like(u), where=positive) @ w
            per_hn[:-1] = np.where((u <= a).all(axis=1), share, 0.0)
        else:
            per_hn[:-1] = 0.0
        # every node (a session memo's full recomputation): the owners as they are, without a gather
        n = layout.owner.shape[1]
        full = rows.size == n and n > 0 and rows[0] == 0 and rows[-1] == n - 1 and bool((np.diff(rows) == 1).all())
        owner = layout.owner if full else layout.owner[:, rows]
        return layout.fade @ per_hn[owner] / layout.fade_total

    def _aware_scores(self, task: "tasks_mod.TaskInfo", named: tuple[str, frozenset], rows: np.ndarray) -> np.ndarray:
        ssn = self.ssn
        job = ssn.jobs[task.job]
        name, subjob = named
        allocated = topology.part_allocated(ssn, job, name)   # kept, and this session's placements too
        out = np.zeros(len(rows))
        if not allocated:
            return out
        tree, layout = ssn.topology, self._tiers()
        lowest = layout.names[0]   # FindHyperNodeForNode: the node's HyperNode of the lowest tier
        lo, hi = layout.tiers[0], layout.tiers[-1]
        per_hn = np.zeros(len(layout.member) + 1)   # the node's score by its HyperNode (0: in none)
        for i, hn in enumerate(lowest):
            tier = tree.tier[tree.lca(hn, allocated)]
            per_hn[i] = 1.0 if hn == allocated or lo == hi else (hi - tier) / (hi - lo) if lo <= tier <= hi else 0.0
        owner = layout.owner[0, rows]
        out = per_hn[owner]
        best = np.flatnonzero(out == out.max())
        if best.size > 1:
            placed = np.array([ssn.nodes.index[job.tasks[u].node] for u in subjob
                               if job.tasks[u].node in ssn.nodes.index], dtype=np.intp)
            share = np.append(layout.member[:, placed].sum(axis=1) / len(subjob), 0.0)
            out[best] += share[owner[best]]
        return out

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        pass
