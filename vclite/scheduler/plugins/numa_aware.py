"""numa-aware: place pods with a NUMA topology policy where the kubelet's topology manager will admit
them, and prefer nodes where they span the fewest NUMA nodes (plugins/numaaware/numaaware.go).

A node's NUMA state is its Numatopology (nodeinfo.volcano.sh/v1alpha1, named after the node): the
kubelet's policies, the CPU topology, the free CPU sets (`numares.cpu.allocatable`) and the reservation.
A pod's policy is its annotation `volcano.sh/numa-topology-policy` (the vcjob controller copies a task's
`topologyPolicy` there). Argument (Volcano's name): `weight` (an integer, 1).
- Predicate, for Guaranteed pods only (others pass everywhere): with a policy other than none, a node
  without a Numatopology ("numa info is empty"), whose CPU manager policy is not `static` ("cpu manager
  policy isn't static"), whose topology manager policy is another ("task topology policy[P] is different
  with node[Q]"), or without free CPUs ("cpu allocatable map is empty") is refused; without a policy, only
  nodes with a static CPU manager and a topology manager policy are checked. Then each container in turn
  asks the CPU provider for hints, the node's policy merges them (numa_policy.py) — "container C cannot
  be assigned by numa" when it does not admit — and the container's CPUs are chosen (numa_cpus.py) and
  kept from the next container. The choice for the task on that node is remembered for the session.
- NodeOrder (not row-local: normalised over the candidates), for pods with a policy: the number of NUMA
  nodes the chosen CPUs span, scaled so the widest candidate scores 0 and others 100 − 100·n/max
  (integer arithmetic), × weight; all 100 × weight when no CPU was chosen anywhere.
- Allocate/deallocate events take the chosen CPUs out of (give them back to) the node's free sets, so the
  next pod of the session sees them taken.
Across sessions, as Volcano's scheduler cache: when the session ends, the CPUs chosen for each pod it
binds are kept (Session.memory) and taken out of the node's free sets in later sessions until the
node's Numatopology lists the pod in `spec.podAllocations` (by uid, or namespace and name) — and while
any pod of the node is not listed yet, all of the node's kept choices stay taken; a choice is
forgotten when its pod is gone or finished. `assignments(memory)` reads them (the dry run prints them).
Nothing pins CPUs: upstream the kubelet's CPU manager does, with its own choice (docs/differences.md).

Must not: keep state between sessions other than Session.memory.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.admission import pod as pod_admission
from vclite.api import batch, core, meta, numatopo, quantity
from vclite.lib import jsoncopy
from vclite.scheduler.framework import fit, hooks, plugin
from vclite.scheduler.plugins import numa_cpus, numa_policy

if TYPE_CHECKING:
    from vclite.scheduler.framework import nodes as nodes_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]
NAME = "numa-aware"
MEMORY_KEY = "numa-aware.unassigned"   # Session.memory: node -> pod uid -> (namespace, name, {resource: cpus})
MAX_NODE_SCORE = 100
Sets = dict[str, frozenset[int]]


@dataclasses.dataclass(frozen=True)
class Arguments:
    weight: int = plugin.arg("weight", 1)


@dataclasses.dataclass
class NodeNuma:
    """What the session knows of one node's Numatopology (upstream's NumatopoInfo)."""
    policies: dict[str, str]
    cpus: dict[int, numa_cpus.CPUInfo]
    free: Sets
    reserved_cpu: quantity.Fraction | None
    allocated_pods: list[Obj]

    @functools.cached_property
    def numa_nodes(self) -> list[int]:
        return sorted({d.numa for d in self.cpus.values()})

    @functools.cached_property
    def reserved(self) -> frozenset[int]:
        """The CPUs the kubelet keeps (resReserved.cpu, rounded up, taken by topology): never offered."""
        return numa_cpus.reserved_cpus(self.cpus, self.reserved_cpu)


def _cpuset(text: Any) -> frozenset[int]:
    try:
        return numatopo.parse_cpuset(text) if isinstance(text, str) else frozenset()
    except ValueError:
        return frozenset()   # (upstream logs it and keeps the empty set; admission refuses it here)


def node_numa(obj: Obj) -> NodeNuma:
    """A Numatopology read as Volcano's scheduler cache reads it (getNumaInfo)."""
    spec = numatopo.spec(obj)
    policies = {str(k): v for k, v in (spec.get("policies") or {}).items() if isinstance(v, str)}
    free = {str(name): _cpuset(res.get("allocatable")) for name, res in (spec.get("numares") or {}).items()
            if isinstance(res, dict)}
    cpus = {}
    for key, d in (spec.get("cpuDetail") or {}).items():
        cpu = numatopo.cpu_id(key)
        if isinstance(d, dict) and cpu is not None:
            cpus[cpu] = numa_cpus.CPUInfo(int(d.get("numa") or 0), int(d.get("socket") or 0),
                                               int(d.get("core") or 0))
    reserved = None
    raw = (spec.get("resReserved") or {}).get("cpu")
    if raw is not None:
        try:
            reserved = quantity.parse(raw)
        except ValueError:
            reserved = None
    pods = [p for p in spec.get("podAllocations") or () if isinstance(p, dict)]
    return NodeNuma(policies, cpus, free, reserved, pods)


def _listed(pods: list[Obj], uid: str, namespace: str, name: str) -> bool:
    """CheckNumaPodAssigned: the kubelet has pinned the pod (uid, or namespace and name)."""
    return any(p.get("uid") == uid or (p.get("name") == name and p.get("namespace") == namespace) for p in pods)


def assignments(memory: dict) -> dict[str, tuple[str, Sets]]:
    """The CPUs kept for pods the scheduler placed: pod key -> (node, {resource: cpus})."""
    out = {}
    for node, pods in (memory.get(MEMORY_KEY) or {}).items():
        for ns, name, sets in pods.values():
            out[f"{ns}/{name}"] = (node, sets)
    return dict(sorted(out.items()))


def pod_policy(pod: Obj) -> str:
    return meta.annotations(pod).get(batch.NUMA_POLICY, "")


def guaranteed(pod: Obj) -> bool:
    """v1qos.GetPodQOS: the pod's status.qosClass, else computed from its containers (requests defaulted
    from limits first, as the apiserver does; a dry run's pods are used as written)."""
    qos = (pod.get("status") or {}).get("qosClass")
    if not qos:
        spec = jsoncopy.deep_copy(pod.get("spec") or {})
        try:
            pod_admission.default_requests(spec)
            qos = pod_admission.qos_class(spec)
        except (ValueError, TypeError, AttributeError):
            return False
    return qos == core.QOSClass.GUARANTEED


class NumaAware:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.weight = arguments.weight

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.info: dict[str, NodeNuma] = {}
        for obj in ssn.numatopologies:
            if meta.name(obj) in ssn.nodes.index:
                self.info[meta.name(obj)] = node_numa(obj)
        self._refresh(ssn)
        self.rows = sorted(ssn.nodes.index[n] for n in self.info)
        self.assign: dict[str, dict[str, Sets]] = {}   # task uid -> node -> chosen sets
        self.placed: dict[str, str] = {}                # task uid -> node (allocated, not deallocated)
        self.tasks: dict[str, "tasks_mod.TaskInfo"] = {}
        self._guaranteed: dict[str, bool] = {}
        reg.add(hooks.Point.PREDICATE, self.predicate)
        reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)

    def _refresh(self, ssn: "session_mod.Session") -> None:
        """RefreshNumaSchedulerInfoByCrd: the kept choices of pods the kubelet has not pinned yet stay taken."""
        kept: dict[str, dict] = ssn.memory.setdefault(MEMORY_KEY, {})
        live = {meta.uid(p): (p.get("spec") or {}).get("nodeName") or "" for p in ssn.pods
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")}
        for node in list(kept):   # (a pod bound elsewhere since — its bind failed, it was placed again — is not here)
            pods = kept[node] = {uid: e for uid, e in kept[node].items() if live.get(uid) in ("", node)}
            info = self.info.get(node)
            if not pods:
                del kept[node]
            elif info is not None:
                if all(_listed(info.allocated_pods, uid, ns, name) for uid, (ns, name, _) in pods.items()):
                    del kept[node]
                    continue
                for _, _, sets in pods.values():
                    for res, cpus in sets.items():
                        if res in info.free:
                            info.free[res] = info.free[res] - cpus

    # ---- predicate -------------------------------------------------------------------------------
    def _filter(self, policy: str, info: NodeNuma | None) -> tuple[bool, str | None]:
        """filterNodeByPolicy: (check the containers, why not)."""
        if policy not in ("", numa_policy.NONE):
            if info is None:
                return False, "numa info is empty"
            if info.policies.get(numatopo.CPU_MANAGER_POLICY) != "static":
                return False, "cpu manager policy isn't static"
            node_policy = info.policies.get(numatopo.TOPOLOGY_MANAGER_POLICY, "")
            if policy != node_policy:
                return False, f"task topology policy[{policy}] is different with node[{node_policy}]"
            if not info.free.get(numa_cpus.CPU):
                return False, "cpu allocatable map is empty"
            return True, None
        if info is None or info.policies.get(numatopo.CPU_MANAGER_POLICY) != "static":
            return False, None
        return info.policies.get(numatopo.TOPOLOGY_MANAGER_POLICY, "") not in ("", numa_policy.NONE), None

    def check_node(self, task: "tasks_mod.TaskInfo", info: NodeNuma | None) -> tuple[str | None, Sets | None]:
        """(why the node is refused, the CPUs chosen for the task there): one node of the predicate."""
        ok, why = self._filter(pod_policy(task.pod), info)
        if not ok or info is None:
            return why, None
        free = dict(info.free)
        reserved = info.reserved
        policy = info.policies.get(numatopo.TOPOLOGY_MANAGER_POLICY, "")
        chosen: Sets = {}
        for c in (task.pod.get("spec") or {}).get("containers") or ():
            providers = [numa_cpus.hints(c, info.cpus, reserved, free)]
            best, admit = numa_policy.predicate(policy, info.numa_nodes, providers)
            if not admit:
                return f"container {c.get('name', '')} cannot be assigned by numa", None
            for res, cpus in numa_cpus.allocate(c, best, info.cpus, reserved, free).items():
                chosen[res] = chosen.get(res, frozenset()) | cpus
                free[res] = free.get(res, frozenset()) - cpus
        return None, chosen

    def predicate(self, task: "tasks_mod.TaskInfo", nodes: "nodes_mod.NodeState") -> list[fit.Failure]:
        ok = self._guaranteed.get(task.uid)
        if ok is None:
            ok = self._guaranteed[task.uid] = guaranteed(task.pod)
        if not ok:
            return []
        choices: dict[str, Sets] = {}
        reasons: dict[str, list[int]] = {}
        if pod_policy(task.pod) not in ("", numa_policy.NONE) and len(self.rows) < len(nodes):
            rows = np.ones(len(nodes), dtype=bool)
            rows[self.rows] = False
            reasons["numa info is empty"] = np.flatnonzero(rows).tolist()
        for row in self.rows:
            name = nodes.names[row]
            why, chosen = self.check_node(task, self.info[name])
            if why is not None:
                reasons.setdefault(why, []).append(row)
            elif chosen is not None:
                choices[name] = chosen
        if choices:   # (upstream keeps a node's choice until the next check of that node)
            self.assign.setdefault(task.uid, {}).update(choices)
            self.tasks[task.uid] = task
        out = []
        for why, rows_of in reasons.items():
            m = np.zeros(len(nodes), dtype=bool)
            m[rows_of] = True
            out.append((why, m))
        return [fit.Failure(tuple(out))] if out else []

    # ---- node order --------------------------------------------------------------------------------
    @staticmethod
    def key(task: "tasks_mod.TaskInfo") -> Any:
        """Pods without a policy score 0 everywhere (row-local); others are normalised over candidates."""
        return (NAME,) if pod_policy(task.pod) in ("", numa_policy.NONE) else None

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        choices = self.assign.get(task.uid)
        if choices is None or pod_policy(task.pod) in ("", numa_policy.NONE):
            return np.zeros(len(rows))
        names = self.ssn.nodes.names
        counts = []
        for row in rows.tolist():
            info = self.info.get(names[row])
            cpus = (choices.get(names[row]) or {}).get(numa_cpus.CPU, frozenset())
            numa = {(info.cpus.get(c) if info else None) or numa_cpus.CPUInfo(0, 0, 0) for c in cpus}
            counts.append(len({d.numa for d in numa}))
        return np.array(normalize_reversed(counts), dtype=np.float64) * self.weight

    # ---- events ------------------------------------------------------------------------------------
    def _chosen(self, task: "tasks_mod.TaskInfo") -> tuple[NodeNuma | None, Sets | None]:
        sets = (self.assign.get(task.uid) or {}).get(task.node)
        return self.info.get(task.node), sets

    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        info, sets = self._chosen(task)
        if sets is None:
            return
        if info is not None:
            for res, cpus in sets.items():
                if res in info.free:
                    info.free[res] = info.free[res] - cpus
        self.placed[task.uid] = task.node

    def on_deallocate(self, task: "tasks_mod.TaskInfo") -> None:
        info, sets = self._chosen(task)
        if sets is None:
            return
        if info is not None:
            for res, cpus in sets.items():
                if res in info.free:
                    info.free[res] = info.free[res] | cpus
        self.placed.pop(task.uid, None)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        """AddUnassignedNumaPods: the CPUs chosen for the pods bound now are kept until the kubelet reports them."""
        kept: dict[str, dict] = ssn.memory.setdefault(MEMORY_KEY, {})
        for uid, node in self.placed.items():
            task = self.tasks.get(uid)
            sets = (self.assign.get(uid) or {}).get(node)
            if task is None or sets is None or ssn.binds.get(task.key) != node:
                continue
            kept.setdefault(node, {})[uid] = (task.namespace, task.name, sets)
        if not kept:
            ssn.memory.pop(MEMORY_KEY, None)


def normalize_reversed(counts: list[int]) -> list[int]:
    """util.NormalizeScore(100, reverse=true): 100 − 100·n/max (integer division); all 100 when max is 0."""
    top = max(counts, default=0)
    if top == 0:
        return [MAX_NODE_SCORE] * len(counts)
    return [MAX_NODE_SCORE - MAX_NODE_SCORE * n // top for n in counts]
