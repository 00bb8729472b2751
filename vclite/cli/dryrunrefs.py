"""What a dry run's state names that the state does not hold (dryrun.py asks): a cluster's objects refer to
PriorityClasses and Nodes that exist there, a state written by hand may not.

- Kubernetes' system PriorityClasses (`system-cluster-critical`, `system-node-critical`) exist in every cluster:
  the state has them unless it declares its own (`system_classes`), so a PodGroup naming one has its value, as
  Volcano reads it from the cluster.
- A Pod naming a PriorityClass the state does not define and setting no `spec.priority` could not exist: a
  cluster refuses it (`no PriorityClass with name X was found`), and the session would take a guessed priority.
  It is a problem of its file and line (`priority_class_problems`); a pod with `spec.priority` (as `kubectl get
  -o yaml` shows one) is read as written.
- A PodGroup naming a PriorityClass the state does not define, and a Pod bound to a Node it does not declare,
  can exist: they are read as Volcano reads them (the job gets the default priority; the pod counts for its
  job and occupies no node of the session), and a note says so (`notes`), as a typo would change the answer.
  So does a Running Pod without `spec.nodeName`: it cannot exist on a cluster, but Volcano's own scheduler
  tests write such pods (a running task of a job, on no node), and their ports here keep them. A Node that
  advertises no `pods` gets a kubelet's 110 (docs/differences.md), where Volcano would fit nothing: noted too.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import podpriority
from vclite.api import core, kinds, meta, yamlio
from vclite.apiserver import inprocess
from vclite.cli import manifests
from vclite.lib import jsoncopy
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.framework import snapshot

Obj = dict[str, Any]
RUNNING = str(core.PodPhase.RUNNING)


def system_classes(declared: list[Obj]) -> list[Obj]:
    """Copies of the system PriorityClasses a cluster has that `declared` does not name."""
    names = {meta.name(pc) for pc in declared}
    return [jsoncopy.deep_copy(o) for o in inprocess.DEFAULT_OBJECTS
            if o["kind"] == kinds.PRIORITYCLASS.kind and meta.name(o) not in names]


def priority_class_problems(docs: list[yamlio.Document]) -> list[manifests.Problem]:
    """A problem for each Pod that names a PriorityClass no document defines (nor the system) and sets no
    `spec.priority`."""
    defined = {meta.name(d.obj) for d in docs if d.kind == kinds.PRIORITYCLASS.kind and isinstance(d.obj, dict)}
    problems = []
    for d in docs:
        spec = d.obj.get("spec") if d.kind == kinds.POD.kind and isinstance(d.obj, dict) else None
        name = spec.get("priorityClassName") if isinstance(spec, dict) else None
        if isinstance(name, str) and name and spec.get("priority") is None and not podpriority.known(name, defined):
            problems.append(manifests.Problem(
                d.file, d.line_of("spec.priorityClassName"), manifests.describe(d), "spec.priorityClassName",
                f"no PriorityClass with name {name} was found: no document defines it and the pod sets no "
                "spec.priority, so a cluster would refuse the pod (declare the PriorityClass, or the pod's "
                "spec.priority)"))
    return problems


def notes(cluster: snapshot.ClusterState) -> list[str]:
    """Notes for a state without Nodes, the PodGroups naming a PriorityClass the state lacks and the Pods bound
    to a Node it lacks (or Running on none)."""
    classes = {meta.name(pc) for pc in cluster.priority_classes}
    nodes = {meta.name(n) for n in cluster.nodes}
    out = []
    if not nodes and cluster.pods:
        out.append("The state declares no Node: nothing can be placed, and Volcano's message then names no node "
                   "(give the cluster's Nodes, with their status.allocatable).")
    for node in sorted(cluster.nodes, key=meta.name):
        status = node.get("status") if isinstance(node.get("status"), dict) else {}
        raw = status.get("allocatable") or status.get("capacity") or {}
        if isinstance(raw, dict) and "pods" not in raw:
            out.append(f"Node {meta.name(node)}: its status.allocatable has no pods: taken as "
                       f"{nodes_mod.DEFAULT_PODS}, a kubelet's default (Volcano's scheduler fits no pod on a node "
                       "that advertises none; give pods as the cluster's node does).")
    for pg in sorted(cluster.podgroups, key=meta.key):
        name = (pg.get("spec") or {}).get("priorityClassName")
        if isinstance(name, str) and name and name not in classes:
            out.append(f'PodGroup {meta.key(pg)}: PriorityClass "{name}" is not in the state: the job has the '
                       "global default class's priority (0 without one), as Volcano gives it when the class "
                       "does not exist.")
    for pod in sorted(cluster.pods, key=meta.key):
        node = (pod.get("spec") or {}).get("nodeName")
        if isinstance(node, str) and node and node not in nodes:
            out.append(f'Pod {meta.key(pod)}: bound to node "{node}", which is not in the state: it counts for '
                       "its job but occupies no node of the session.")
        elif not node and (pod.get("status") or {}).get("phase") == RUNNING:
            out.append(f"Pod {meta.key(pod)}: Running without a spec.nodeName: it counts for its job (as a task "
                       "of Volcano's own tests does) but occupies no node of the session.")
    return out
