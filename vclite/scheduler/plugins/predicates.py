"""predicates: node filters, each a vector operation over all nodes (plugins/predicates).

Filters in Volcano's order; a node is charged with the reason of the first one it fails (fit.py):
1. NodeUnschedulable: `spec.unschedulable` nodes, unless the pod tolerates the
   `node.kubernetes.io/unschedulable:NoSchedule` taint -> "node(s) were unschedulable";
2. NodeAffinity (`predicate.NodeAffinityEnable`): nodeSelector and required node affinity
   (nodeSelectorTerms ORed; matchExpressions In/NotIn/Exists/DoesNotExist/Gt/Lt and matchFields
   metadata.name ANDed) -> "node(s) didn't match Pod's node affinity/selector";
3. TaintToleration (`predicate.TaintTolerationEnable`): NoSchedule and NoExecute taints the pod
   does not tolerate -> "node(s) had untolerated taint(s)" (kube-scheduler's words since 1.29,
   which Volcano vendors); PreferNoSchedule taints only lower the nodeorder score;
4. NodePorts (`predicate.NodePortsEnable`): a container hostPort already used on the node (by
   any pod there, or one placed earlier in the session) -> "node(s) didn't have free ports for
   the requested pod ports"; evicting pods can cure it (`resolvable`), as it can the pod
   anti-affinity rules and spread skew below.
5. InterPodAffinity (`predicate.PodAffinityEnable`): the pod's required podAffinity and
   podAntiAffinity terms, and the required anti-affinity of the pods already placed (podfilters.py);
6. PodTopologySpread (`predicate.PodTopologySpreadEnable`): the pod's DoNotSchedule topology
   spread constraints (podfilters.py).
Before them, a pod-level check (PrePredicate: allocate records its reason on every node, as Volcano's):
VolumeBinding (`predicate.VolumeBindingEnable`) refuses a pod whose claims are missing, being deleted or not
Bound (volumebinding.py), when the session knows the claims (not in a dry run over manifests).
Resource fit, including the `pods` count (max pods per node -> "Insufficient pods"), is not here: as
in Volcano it is the action's own `request ≤ future idle` check, run before the predicates.
Accepted but not enforced (they change nothing): the other volume filters (a claim's volume is on this machine),
`DynamicResourceAllocationEnable`, `CacheEnable`, `GPUSharingEnable`, `ProportionalEnable`.

Must not: change node state.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from vclite.scheduler.framework import fit, hooks, plugin
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.plugins import nodematch, podfilters, podindex, volumebinding

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

UNSCHEDULABLE = "node(s) were unschedulable"
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
PORTS_IN_USE = "node(s) didn't have free ports for the requested pod ports"
tolerates = nodematch.tolerates


def read_shape(value, where: str) -> tuple[tuple[int, int], ...]:
    """`volumebinding.shape`: a list of {utilization, score} integer points (kube-scheduler's
    UtilizationShapePoint, keys matched without case as Volcano's decoder does), as (utilization, score)."""
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list of {{utilization, score}} points, got {value!r}")
    points = []
    for i, point in enumerate(value):
        fields = {str(k).lower(): v for k, v in point.items()} if isinstance(point, dict) else None
        if fields is None or not all(isinstance(fields.get(k), int) and not isinstance(fields.get(k), bool)
                                     for k in ("utilization", "score")):
            raise ValueError(f"{where}[{i}]: expected {{utilization: <integer>, score: <integer>}}, got {point!r}")
        points.append((fields["utilization"], fields["score"]))
    return tuple(points)


@dataclasses.dataclass(frozen=True)
class Arguments:
    node_affinity: bool = plugin.arg("predicate.NodeAffinityEnable", True)
    node_ports: bool = plugin.arg("predicate.NodePortsEnable", True)
    taint_toleration: bool = plugin.arg("predicate.TaintTolerationEnable", True)
    pod_affinity: bool = plugin.arg("predicate.PodAffinityEnable", True)
    node_volume_limits: bool = plugin.arg("predicate.NodeVolumeLimitsEnable", True)
    volume_zone: bool = plugin.arg("predicate.VolumeZoneEnable", True)
    pod_topology_spread: bool = plugin.arg("predicate.PodTopologySpreadEnable", True)
    volume_binding: bool = plugin.arg("predicate.VolumeBindingEnable", True)
    dra: bool = plugin.arg("predicate.DynamicResourceAllocationEnable", False)
    cache: bool = plugin.arg("predicate.CacheEnable", False)
    gpu_sharing: bool = plugin.arg("predicate.GPUSharingEnable", False)
    proportional: bool = plugin.arg("predicate.ProportionalEnable", False)
    # kube-scheduler's VolumeBinding and DynamicResources arguments, as Volcano passes them on
    # (predicates/helper.go); accepted and checked, not used: vclite binds no volumes and has no DRA.
    volume_binding_weight: int = plugin.arg("volumebinding.weight", 1)
    volume_binding_timeout: int = plugin.arg("volumebinding.bindTimeoutSeconds", 600)
    volume_binding_shape: tuple = plugin.arg("volumebinding.shape", (), read_shape)
    dra_filter_timeout: int = plugin.arg("dynamicresources.filterTimeoutSeconds", 10)



def tolerates_unschedulable(task: "tasks_mod.TaskInfo") -> bool:
    return any(tolerates(t, nodes_mod.UNSCHEDULABLE_TAINT, nodematch.NO_SCHEDULE) for t in task.tolerations)


class Predicates:
    name = "predicates"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments
        self.labels: nodematch.NodeLabels | None = None
        self.taints: nodematch.NodeTaints | None = None
        self.pods: podindex.PodIndex | None = None
        self.filters: podfilters.PodFilters | None = None
        self._source: list = []
        self._anti_placed: bool | None = None   # does a placed pod have required anti-affinity?
        self._unschedulable = False   # any node spec.unschedulable (set with the nodes)
        self._claims: volumebinding.Claims | None = None   # the session's claims (VolumeBinding)

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self._attach(ssn.nodes, ssn.pods, ssn.namespaces)
        args = self.arguments
        if args.volume_binding and ssn.claims is not None:
            self._claims = volumebinding.Claims(ssn.claims)
            reg.add(hooks.Point.PRE_PREDICATE, self.pre_predicate)
        if reg.add(hooks.Point.PREDICATE, self.predicate) and (
                args.node_ports or args.pod_affinity or args.pod_topology_spread):
            reg.add(hooks.Point.ALLOCATE_EVENT, self._on_allocate)
            reg.add(hooks.Point.DEALLOCATE_EVENT, self.pods.on_deallocate)

    def _attach(self, nodes: nodes_mod.NodeState, pods: list, namespaces: list = ()) -> None:
        self._unschedulable = bool(nodes.unschedulable.any())   # (fixed for the session: asked once)
        self.labels = nodematch.NodeLabels(nodes)
        self.taints = nodematch.NodeTaints(nodes)
        self.pods = podindex.PodIndex(nodes, pods, namespaces)
        self.filters = podfilters.PodFilters(self.labels, self.taints, self.pods, nodes)
        self._source, self._anti_placed = pods, None

    def _on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        self.pods.on_allocate(task)
        if self._anti_placed is False and (task.pod.get("spec") or {}).get("affinity") and \
                podfilters.has_required_anti_affinity(task.pod):
            self._anti_placed = True

    def _existing_anti_affinity(self) -> bool:
        """Whether a pod of the session has required anti-affinity (asked once per session: the
        placed pods' terms are only scanned when one could reject somebody)."""
        if self._anti_placed is None:
            self._anti_placed = any(podfilters.has_required_anti_affinity(p) for p in self._source)
        return self._anti_placed

    def pre_predicate(self, task: "tasks_mod.TaskInfo") -> str | None:
        """VolumeBinding's PreFilter (volumebinding.py), worded as Volcano's PrePredicate error."""
        reason = volumebinding.pre_filter(task.pod, self._claims)
        return None if reason is None else volumebinding.failed(reason)

    def predicate(self, task: "tasks_mod.TaskInfo", nodes: nodes_mod.NodeState) -> list[fit.Failure]:
        if self.labels is None or self.labels.nodes is not nodes:   # called outside a session (tests)
            self._attach(nodes, [])
        failures = []
        if self._unschedulable and not tolerates_unschedulable(task):
            failures.append(fit.Failure(((UNSCHEDULABLE, nodes.unschedulable),)))
        args = self.arguments
        spec = task.pod.get("spec") or {}
        # most pods have no node affinity or selector, no affinity terms and no spread constraints: those filters
        # would find nothing then but the placed pods' anti-affinity (still asked for below), so they are skipped
        shaped = bool(spec.get("affinity") or spec.get("nodeSelector") or spec.get("topologySpreadConstraints"))
        if args.node_affinity and shaped:
            match = self.labels.required(task.pod)
            if match is not None:
                failures.append(fit.Failure(((SELECTOR_MISMATCH, ~match),)))
        if args.taint_toleration and self.taints.any_filter:
            reasons = self.taints.untolerated(task.tolerations)
            if reasons:
                failures.append(fit.Failure(reasons))
        if args.node_ports:
            wanted = podindex.host_ports(task.pod)
            if wanted:
                failures.append(fit.Failure(((PORTS_IN_USE, self.pods.port_conflicts(wanted)),), resolvable=True))
        if args.pod_affinity:
            existing = self._existing_anti_affinity()
            if shaped or existing:
                failures += self.filters.inter_pod_affinity(task.pod, existing)
        if args.pod_topology_spread and shaped:
            failures += self.filters.topology_spread(task.pod, task.tolerations)
        return failures

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        self.labels = self.taints = self.pods = self.filters = self._claims = None
        self._source, self._anti_placed = [], None

