"""The metrics API that `kubectl top` reads (metrics.k8s.io/v1beta1, as metrics-server serves it), from
what the local executor measures of its pods' processes (executor/usage.py).

A PodMetrics per pod with a running container: each running container's CPU (nanocores, averaged over
`window`) and resident memory (`Ki`). A NodeMetrics per node: the sum over the pods running on it — the
nodes are the executor's, so a node's usage is its pods' (the host's other processes are not counted).
Selection follows metrics-server: a label selector on the pod's (node's) labels, a field selector on
`metadata.name` / `metadata.namespace`. Pure functions; the handler (app.py) gathers the inputs.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Protocol

from vclite.httpserver import routes

Obj = dict[str, Any]
API_VERSION = f"{routes.METRICS_GROUP}/{routes.METRICS_VERSION}"


class Measured(Protocol):
    cores: float
    resident: int
    window: float


def cpu_quantity(cores: float) -> str:
    return f"{max(0, round(cores * 1e9))}n"


def memory_quantity(resident: int) -> str:
    return f"{max(0, resident) // 1024}Ki"


def duration(seconds: float) -> str:
    """A Go duration string (`metav1.Duration`), as `window` is written: `12.5s`, `0s`."""
    text = f"{max(0.0, seconds):.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


def _meta(obj: Obj, now: str) -> Obj:
    m = obj.get("metadata") or {}
    out: Obj = {"name": m.get("name", ""), "creationTimestamp": now}
    if m.get("namespace"):
        out["namespace"] = m["namespace"]
    if m.get("labels"):
        out["labels"] = dict(m["labels"])
    return out


def pod_metrics(pod: Obj, containers: Mapping[str, Measured], now: str) -> Obj:
    """The PodMetrics of `pod`, its containers in the pod's order."""
    order = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    names = [n for n in order if n in containers] + sorted(n for n in containers if n not in order)
    window = max((containers[n].window for n in names), default=0.0)
    return {"kind": "PodMetrics", "apiVersion": API_VERSION, "metadata": _meta(pod, now), "timestamp": now,
            "window": duration(window),
            "containers": [{"name": n, "usage": {"cpu": cpu_quantity(containers[n].cores),
                                                 "memory": memory_quantity(containers[n].resident)}}
                           for n in names]}


def node_metrics(node: Obj, pods: Iterable[Mapping[str, Measured]], now: str) -> Obj:
    """The NodeMetrics of `node`: the sum over the containers of the pods running on it."""
    used = [u for containers in pods for u in containers.values()]
    return {"kind": "NodeMetrics", "apiVersion": API_VERSION, "metadata": _meta(node, now), "timestamp": now,
            "window": duration(max((u.window for u in used), default=0.0)),
            "usage": {"cpu": cpu_quantity(sum(u.cores for u in used)),
                      "memory": memory_quantity(sum(u.resident for u in used))}}


def metrics_list(kind: str, items: list[Obj]) -> Obj:
    return {"kind": f"{kind}List", "apiVersion": API_VERSION, "metadata": {}, "items": items}


def select(route: routes.Usage, pods: Iterable[Obj], nodes: Iterable[Obj],
           usage: Mapping[str, Mapping[str, Measured]], now: str,
           keep: Callable[[Obj], bool] = lambda _: True) -> list[Obj]:
    """The metrics objects `route` names, of the objects `keep` lets by: PodMetrics of the pods with a
    running container here (in `route.namespace`, if one), or NodeMetrics of every node."""
    def named(obj: Obj) -> bool:
        return route.name is None or (obj.get("metadata") or {}).get("name") == route.name
    if route.plural == "nodes":
        by_node: dict[str, list[Mapping[str, Measured]]] = {}
        for pod in pods:
            containers = usage.get(_key(pod))
            if containers:
                by_node.setdefault((pod.get("spec") or {}).get("nodeName") or "", []).append(containers)
        return [node_metrics(n, by_node.get(n["metadata"]["name"], []), now) for n in nodes if named(n) and keep(n)]
    out = []
    for pod in pods:
        containers = usage.get(_key(pod))
        if containers and named(pod) and keep(pod) and (
                route.namespace is None or (pod.get("metadata") or {}).get("namespace") == route.namespace):
            out.append(pod_metrics(pod, containers, now))
    return out


def _key(pod: Obj) -> str:
    m = pod.get("metadata") or {}
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def not_found(route: routes.Usage) -> tuple[str, str]:
    """(kind, name) in metrics-server's NotFound: `podmetrics.metrics.k8s.io "ns/name" not found`."""
    if route.plural == "nodes":
        return "nodemetrics", route.name or ""
    return "podmetrics", f"{route.namespace}/{route.name}"
