"""network-topology-aware: score HyperNodes for a job with networkTopology
(plugins/network-topology-aware/network_topology_aware.go, HyperNodeOrderFn).

Reference (Volcano): OnSessionOpen registers HyperNodeOrder (bin-packing of the job's tasks into a
HyperNode), HyperNodeGradientForJob/SubJob (the candidate HyperNodes by tier; vclite keeps that
search in actions/topology.py, where the allocate action needs it) and BatchNodeOrder (node
scores: for pods with network topology, by the tier of the lowest common ancestor with the job's
allocated HyperNode; for other pods, hypernode-level bin-packing faded by tier).

Arguments (Volcano's names and defaults): `weight` (1), `hypernode.binpack.cpu` (1),
`hypernode.binpack.memory` (1), `hypernode.binpack.resources` ("a, b") with
`hypernode.binpack.resources.<name>` (1) each; a negative weight becomes the default. Accepted and
not used by vclite: `hypernode.binpack.normal-pod.enable` (true), `hypernode.binpack.normal-pod.fading`
(0.8) and `hypernode.gradient.evict.max-hypernodes` (8) — vclite ports neither BatchNodeOrder nor
topology-aware preemption.

HyperNodeOrder, per candidate HyperNode h, over the resources the job's tasks request that have a
weight (request = the sum over all the job's tasks, placed or not, as upstream sums subJob.Tasks):
  s_r = (used_r(h) + request_r) / allocatable_r(h),   used/allocatable = sums over h's nodes
  score(h) = Σ w_r s_r / Σ w_r × 100 × weight,   0 if any used_r + request_r > allocatable_r.
`used` is what the nodes hold now (placed pods and this session's allocations). Upstream scores
each job-level candidate alone, so its task-count tie-break never applies there; vclite breaks ties
by HyperNode name (Volcano's map order is random).

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
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
        reg.add(hooks.Point.HYPERNODE_ORDER, self.hypernode_order, weight=MAX_NODE_SCORE * global_weight)

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

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        pass
