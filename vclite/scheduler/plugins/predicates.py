"""predicates: node filters, each a vector operation over all nodes (plugins/predicates).

Filters, in Volcano's order (a node is charged with the reasons of the first one it fails):
1. NodeUnschedulable: `spec.unschedulable` nodes, unless the pod tolerates the
   `node.kubernetes.io/unschedulable:NoSchedule` taint -> "node(s) were unschedulable";
2. node selector (`predicate.NodeAffinityEnable`) -> "node(s) didn't match node selector".
Resource fit (including `pods`) is not here: as in Volcano it is the action's own
`request ≤ future idle` check, run before the predicates.
TODO(issue #3 and later): required node affinity, taints/tolerations, node ports, pod
(anti-)affinity, topology spread, volumes. Their `predicate.*Enable` arguments are accepted and
type-checked now so Volcano configurations load; they change nothing yet.

Must not: change node state.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from vclite.scheduler.framework import fit, hooks, plugin
from vclite.scheduler.framework import nodes as nodes_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

UNSCHEDULABLE = "node(s) were unschedulable"
SELECTOR_MISMATCH = "node(s) didn't match node selector"


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


def tolerates(toleration: dict, key: str, effect: str, value: str = "") -> bool:
    """Kubernetes' Toleration.ToleratesTaint for one taint."""
    if toleration.get("effect") not in (None, "", effect):
        return False
    if not toleration.get("key"):
        return toleration.get("operator") == "Exists"
    if toleration["key"] != key:
        return False
    if (toleration.get("operator") or "Equal") == "Exists":
        return True
    return (toleration.get("value") or "") == value


def tolerates_unschedulable(task: "tasks_mod.TaskInfo") -> bool:
    return any(tolerates(t, nodes_mod.UNSCHEDULABLE_TAINT, "NoSchedule") for t in task.tolerations)


def selector_mismatch(task: "tasks_mod.TaskInfo", nodes: nodes_mod.NodeState) -> np.ndarray:
    ok = np.ones(len(nodes), dtype=bool)
    for key, value in task.node_selector.items():
        ok &= nodes.label_mask(str(key), str(value))
    return ~ok


class Predicates:
    name = "predicates"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        reg.add(hooks.Point.PREDICATE, self.predicate)

    def predicate(self, task: "tasks_mod.TaskInfo", nodes: nodes_mod.NodeState) -> list[fit.Failure]:
        failures = []
        if nodes.unschedulable.any() and not tolerates_unschedulable(task):
            failures.append(fit.Failure(((UNSCHEDULABLE, nodes.unschedulable),)))
        if self.arguments.node_affinity and task.node_selector:
            failures.append(fit.Failure(((SELECTOR_MISMATCH, selector_mismatch(task, nodes)),)))
        return failures

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
