"""The `default/kubernetes` Service: the API server's own address inside the cluster, as kube-apiserver's
bootstrap controller keeps it.

`vcctl server` makes it at every start (and again when it is deleted): type ClusterIP, the first
address of the service CIDR (10.96.0.1), port 443 named `https` whose target is the port the server
listens on, labels `component: apiserver` and `provider: kubernetes`, no selector. A start on
another port updates the target port; a write that changes its ports or type is undone (`needs_fix`),
as the bootstrap controller's reconciliation undoes it (within 10 s there). Its Endpoints (and
EndpointSlice `kubernetes`) name the server's address and port (endpoints.py computes them from
`Backend.apiserver`). Writes go through the in-process Client, so the Service is admitted as any other.
"""
from __future__ import annotations

import ipaddress
from typing import Any

from vclite.admission import serviceips
from vclite.api import kinds
from vclite.lib import errors

Obj = dict[str, Any]
NAMESPACE, NAME = "default", "kubernetes"
PORT_NAME, PORT = "https", 443
CLUSTER_IP = str(serviceips.SERVICE_CIDR.network_address + 1)
LABELS = {"component": "apiserver", "provider": "kubernetes"}


def endpoint_ip(address: str) -> str:
    """The address the Endpoints name: the listening address, or loopback for a wildcard one."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "127.0.0.1"
    if ip.is_unspecified:
        return "::1" if ip.version == 6 else "127.0.0.1"
    return str(ip)


def service(target_port: int) -> Obj:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
            "spec": {"type": "ClusterIP", "clusterIP": CLUSTER_IP, "clusterIPs": [CLUSTER_IP],
                     "sessionAffinity": "None",
                     "ports": [{"name": PORT_NAME, "port": PORT, "protocol": "TCP", "targetPort": target_port}]}}


def ensure(client: Any, target_port: int) -> None:
    """Create the Service if it is missing, or point its port at `target_port` if it points elsewhere."""
    try:
        current = client.get(kinds.SERVICE, NAMESPACE, NAME)
    except errors.NotFound:
        try:
            client.create(service(target_port))
        except errors.AlreadyExists:
            pass
        return
    if needs_fix(current, target_port):
        current["spec"] = {**(current.get("spec") or {}), "type": "ClusterIP",
                           "ports": service(target_port)["spec"]["ports"]}
        for field in ("externalTrafficPolicy", "healthCheckNodePort", "loadBalancerClass",
                      "allocateLoadBalancerNodePorts"):
            current["spec"].pop(field, None)   # (a NodePort or LoadBalancer's: a ClusterIP Service has none)
        client.update(current)


def needs_fix(current: Obj, target_port: int) -> bool:
    """Whether the Service's ports or type are not those it must have (kube's getMasterServiceUpdateIfNeeded)."""
    spec = current.get("spec") or {}
    wanted = service(target_port)["spec"]["ports"]
    ports = spec.get("ports") if isinstance(spec.get("ports"), list) else []
    return spec.get("type", "ClusterIP") != "ClusterIP" or \
        [(p.get("name"), p.get("port"), p.get("targetPort"), p.get("nodePort")) for p in ports
         if isinstance(p, dict)] != [(p["name"], p["port"], p["targetPort"], None) for p in wanted]


def is_it(obj: Obj | None) -> bool:
    md = (obj or {}).get("metadata") or {}
    return (md.get("namespace"), md.get("name")) == (NAMESPACE, NAME)
