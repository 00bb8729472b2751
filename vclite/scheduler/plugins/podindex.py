"""The pods on each node during a session, for filters and scores that look at other pods
(host ports, inter-pod affinity, topology spread), and Kubernetes label selectors over pods.

`PodIndex` is built lazily, on the first question, from the session's listed pods (a pod occupies
its node when it is bound to a session node and not finished, whoever scheduled it), then kept
current by the allocate / deallocate events: a task allocated or pipelined in the session is on
its node, an evicted or discarded one is not — as Volcano's predicates plugin keeps its node map.
Events before the first question are logged and replayed. Sessions whose tasks never ask pay
only the log.

Host ports follow kube-scheduler's HostPortInfo: protocol defaults to TCP, host IP to 0.0.0.0;
a wanted 0.0.0.0 port conflicts with the same protocol/port on any IP, a specific IP with that IP
or 0.0.0.0.

It also answers what the Namespaces' labels are, for pod affinity terms' namespaceSelector.

Must not: change node state or decide placements.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from vclite.api import core, meta
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import nodes as nodes_mod

Obj = dict[str, Any]
ALL_IPS = "0.0.0.0"
Port = tuple[str, int, str]   # (protocol, port, host IP)


def host_ports(pod: Obj) -> list[Port]:
    """The pod's containers' host ports (hostPort > 0), defaults applied."""
    out = []
    for c in (pod.get("spec") or {}).get("containers") or ():
        for p in c.get("ports") or ():
            try:
                port = int(p.get("hostPort") or 0)
            except (TypeError, ValueError):
                continue
            if port > 0:
                out.append((str(p.get("protocol") or "TCP"), port, str(p.get("hostIP") or ALL_IPS)))
    return out


def pod_uid(pod: Obj) -> str:
    return meta.uid(pod) or meta.key(pod)


class PodIndex:
    def __init__(self, nodes: "nodes_mod.NodeState", pods: Iterable[Obj], namespaces: Iterable[Obj] = ()):
        self.nodes = nodes
        self._source = pods
        self._namespaces = namespaces
        self._namespace_labels: dict[str, dict[str, str]] | None = None
        self._log: list[tuple[bool, str, int, Obj]] | None = []
        self.placed: dict[str, tuple[int, Obj]] = {}
        # (protocol, port) -> host IP -> pods using it per node
        self._ports: dict[tuple[str, int], dict[str, np.ndarray]] = {}

    @property
    def namespace_labels(self) -> dict[str, dict[str, str]]:
        """Each Namespace's labels (with `kubernetes.io/metadata.name`, as the API server sets it),
        by name: what a pod affinity term's namespaceSelector looks at. Made at the first question."""
        if self._namespace_labels is None:
            self._namespace_labels = {meta.name(ns): {**meta.labels(ns), core.NAMESPACE_NAME_LABEL: meta.name(ns)}
                                      for ns in self._namespaces}
        return self._namespace_labels

    # ---- upkeep ----------------------------------------------------------------------------------
    def on_allocate(self, task: "tasks_mod.TaskInfo") -> None:
        row = self.nodes.index.get(task.node)
        if row is not None:
            self._event(True, task.uid, row, task.pod)

    def on_deallocate(self, task: "tasks_mod.TaskInfo") -> None:
        self._event(False, task.uid, -1, task.pod)

    def _event(self, add: bool, uid: str, row: int, pod: Obj) -> None:
        if self._log is not None:
            self._log.append((add, uid, row, pod))
        elif add:
            self._add(uid, row, pod)
        else:
            self._remove(uid)

    def _build(self) -> None:
        if self._log is None:
            return
        log, self._log = self._log, None
        index = self.nodes.index
        for pod in self._source:
            node = tasks_mod.node_name(pod)
            if node and node in index and tasks_mod.pod_status(pod) in tasks_mod.OCCUPYING_STATUS:
                self._add(pod_uid(pod), index[node], pod)
        for add, uid, row, pod in log:
            if add:
                self._add(uid, row, pod)
            else:
                self._remove(uid)

    def _add(self, uid: str, row: int, pod: Obj) -> None:
        if uid in self.placed:
            self._remove(uid)
        self.placed[uid] = (row, pod)
        self._count_ports(row, pod, 1)

    def _remove(self, uid: str) -> None:
        entry = self.placed.pop(uid, None)
        if entry is not None:
            self._count_ports(entry[0], entry[1], -1)

    def _count_ports(self, row: int, pod: Obj, delta: int) -> None:
        for proto, port, ip in host_ports(pod):
            per_ip = self._ports.setdefault((proto, port), {})
            if ip not in per_ip:
                per_ip[ip] = np.zeros(len(self.nodes), dtype=np.int32)
            per_ip[ip][row] += delta

    # ---- questions -------------------------------------------------------------------------------
    def pods(self) -> Iterable[tuple[int, Obj]]:
        """(row, pod) of every pod on a session node now."""
        self._build()
        return self.placed.values()

    def port_conflicts(self, wanted: list[Port]) -> np.ndarray:
        """Nodes where one of the wanted host ports is already taken."""
        self._build()
        out = np.zeros(len(self.nodes), dtype=bool)
        for proto, port, ip in wanted:
            per_ip = self._ports.get((proto, port))
            if not per_ip:
                continue
            ips = per_ip.keys() if ip == ALL_IPS else (ALL_IPS, ip)
            for i in ips:
                if i in per_ip:
                    out |= per_ip[i] > 0
        return out


# ---- label selectors over pods ---------------------------------------------------------------------
def selector_matches(selector: Obj | None, labels: Obj) -> bool:
    """metav1.LabelSelector: None selects nothing, {} everything; matchLabels and matchExpressions ANDed."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or ():
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or ()
        if op == "In":
            ok = key in labels and labels[key] in values
        elif op == "NotIn":
            ok = key not in labels or labels[key] not in values
        elif op == "Exists":
            ok = key in labels
        elif op == "DoesNotExist":
            ok = key not in labels
        else:
            ok = False
        if not ok:
            return False
    return True
