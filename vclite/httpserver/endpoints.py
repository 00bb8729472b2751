"""v1 Endpoints and discovery.k8s.io/v1 EndpointSlices computed from Services and Pods, as
Kubernetes' endpoints and endpointslice controllers write them.

vclite runs neither controller and stores neither kind: a read (`kubectl get endpoints`, `kubectl
describe service`, which lists the slices labelled with the Service's name) computes them at once
from what is stored. A Service with
a selector (not ExternalName) has Endpoints of its name: for each pod of its namespace the
selector matches that has an IP, is not being deleted and has not finished, each service port's
target port (a number, or a container port's name looked up in that pod: a pod without it is
left out of that port) — the pod's address among `addresses` when it is Ready (or the Service
`publishNotReadyAddresses`), else among `notReadyAddresses`; one subset per set of ports. Watches of
them: endpointwatch.py. Pure.
"""
from __future__ import annotations

import datetime
import uuid
from typing import Any, Callable, Iterable

from vclite.httpserver import apiservice
from vclite.store import selectors

Obj = dict[str, Any]
Address = tuple[str, int]   # the API server's (ip, port), for `default/kubernetes`
Matcher = Callable[[Obj], bool]   # whether a pod's labels match a Service's selector (selector_matcher)
FINISHED = ("Succeeded", "Failed")
SHOWN = 3   # addresses the Table's Endpoints column shows before `+ N more...` (kubectl's printer)


def _target(pod: Obj, port: Obj) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    for container in (pod.get("spec") or {}).get("containers") or []:
        for cp in container.get("ports") or []:
            if cp.get("name") == target and (cp.get("protocol") or "TCP") == (port.get("protocol") or "TCP"):
                return cp.get("containerPort")
    return None


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def selector_matcher(svc: Obj) -> Matcher | None:
    """The Service's selector parsed (None when it has none): a caller that computes a Service's endpoints
    again and again (endpointwatch.py) parses it once per Service version and hands it to of_service or
    slices_of, which otherwise parse it at each call."""
    selector = (svc.get("spec") or {}).get("selector")
    if not selector:
        return None
    return selectors.label_predicate(",".join(f"{k}={v}" for k, v in sorted(selector.items())))


def _groups(svc: Obj, pods: Iterable[Obj], apiserver: Address | None = None, matches: Matcher | None = None
            ) -> list[tuple[list[Obj], list[tuple[Obj, bool]]]] | None:
    """(ports, [(address, ready)]) per set of target ports, or None when the Service has no
    endpoints (no selector, or ExternalName); `default/kubernetes` without a selector has the API
    server's `apiserver` (ip, port), as kube-apiserver's endpoint reconciler writes it. `matches`: the
    Service's selector_matcher, if the caller keeps it (else parsed here)."""
    spec = svc.get("spec") or {}
    md = svc.get("metadata") or {}
    selector = spec.get("selector")
    if apiserver is not None and not selector and apiservice.is_it(svc):
        return [([{"name": apiservice.PORT_NAME, "port": apiserver[1], "protocol": "TCP"}],
                 [({"ip": apiserver[0]}, True)])]
    if not selector or spec.get("type") == "ExternalName":
        return None
    if matches is None:
        matches = selector_matcher(svc) or (lambda pod: True)
    groups: dict[tuple, tuple[list[Obj], list[tuple[Obj, bool]]]] = {}
    for pod in sorted(pods, key=lambda p: (p.get("metadata") or {}).get("name", "")):
        pmd = pod.get("metadata") or {}
        status = pod.get("status") or {}
        if pmd.get("namespace") != md.get("namespace") or not matches(pod) or not status.get("podIP") \
                or pmd.get("deletionTimestamp") or status.get("phase") in FINISHED:
            continue
        ports = []
        for port in spec.get("ports") or []:
            number = _target(pod, port)
            if number is not None:
                ports.append({**({"name": port["name"]} if port.get("name") else {}), "port": number,
                              "protocol": port.get("protocol") or "TCP"})
        if not ports and spec.get("ports"):
            continue
        key = tuple((p.get("name", ""), p["port"], p["protocol"]) for p in ports)
        address = {"ip": status["podIP"], **({"nodeName": pod["spec"]["nodeName"]}
                                             if (pod.get("spec") or {}).get("nodeName") else {}),
                   "targetRef": {"kind": "Pod", "namespace": pmd.get("namespace"), "name": pmd.get("name"),
                                 "uid": pmd.get("uid")}}
        groups.setdefault(key, (ports, []))[1].append((address, bool(_ready(pod)
                                                                      or spec.get("publishNotReadyAddresses"))))
    return [groups[k] for k in sorted(groups)]


def _meta(svc: Obj, what: str) -> Obj:
    """The computed object's metadata: the Service's name, time and version, and a uid of its own
    derived from the Service's (the same at every read)."""
    md = svc.get("metadata") or {}
    return {"name": md.get("name"), "namespace": md.get("namespace"), "creationTimestamp": md.get("creationTimestamp"),
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{md.get('uid')}/{what}")),
            "resourceVersion": md.get("resourceVersion")}


def of_service(svc: Obj, pods: Iterable[Obj], apiserver: Address | None = None,
               matches: Matcher | None = None) -> Obj | None:
    """The Endpoints of `svc` among `pods` (any namespace: those of another are skipped), or None when
    the Service has none (no selector, or ExternalName). `matches`: its selector_matcher, if kept."""
    groups = _groups(svc, pods, apiserver, matches)
    if groups is None:
        return None
    md = svc.get("metadata") or {}
    out: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {**_meta(svc, "endpoints"), **({"labels": md["labels"]} if md.get("labels") else {})}}
    subsets = []
    for ports, addresses in groups:
        subset: Obj = {"addresses": [a for a, ready in addresses if ready],
                       "notReadyAddresses": [a for a, ready in addresses if not ready], "ports": ports}
        subsets.append({k: v for k, v in subset.items() if v})
    if subsets:
        out["subsets"] = subsets
    return out


SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL, MANAGED_BY = "endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"


def slices_of(svc: Obj, pods: Iterable[Obj], apiserver: Address | None = None,
              matches: Matcher | None = None) -> list[Obj]:
    """The discovery.k8s.io/v1 EndpointSlices of `svc` (IPv4, one per set of ports, named
    `<service>-<n>` here where the controller adds a random suffix; `kubernetes` for the API
    server's), labelled with the Service's name as kubectl describe service finds them; none for a
    Service without endpoints. `matches`: its selector_matcher, if kept."""
    groups = _groups(svc, pods, apiserver, matches)
    if groups is None:
        return []
    md = svc.get("metadata") or {}
    owner = {"apiVersion": "v1", "kind": "Service", "name": md.get("name"), "uid": md.get("uid"),
             "controller": True, "blockOwnerDeletion": True}
    own = apiserver is not None and apiservice.is_it(svc) and not (svc.get("spec") or {}).get("selector")
    out = []
    for i, (ports, addresses) in enumerate(groups or [([], [])]):
        out.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
                    "metadata": {**_meta(svc, f"endpointslice/{i}"),
                                 "name": apiservice.NAME if own else f"{md.get('name')}-{i}",
                                 "labels": {**(md.get("labels") or {}), SERVICE_NAME_LABEL: md.get("name"),
                                            MANAGED_BY_LABEL: MANAGED_BY},
                                 "ownerReferences": [owner]},
                    "endpoints": [{"addresses": [a["ip"]], "conditions": {"ready": ready, "serving": ready,
                                                                          "terminating": False},
                                   **({"nodeName": a["nodeName"]} if a.get("nodeName") else {}),
                                   **({"targetRef": a["targetRef"]} if a.get("targetRef") else {})}
                                  for a, ready in addresses],
                    # (every field of a slice's port is written, its name "" when unnamed: kubectl reads them all)
                    "ports": [{"name": p.get("name", ""), "port": p["port"], "protocol": p["protocol"]}
                              for p in ports]})
    return out


def all_of(services: Iterable[Obj], pods: list[Obj], apiserver: Address | None = None) -> list[Obj]:
    """The Endpoints of every Service that has some, in the services' order."""
    return [e for e in (of_service(s, pods, apiserver) for s in services) if e is not None]


def all_slices(services: Iterable[Obj], pods: list[Obj], apiserver: Address | None = None) -> list[Obj]:
    return [s for svc in services for s in slices_of(svc, pods, apiserver)]


def shown(endpoints: Obj) -> str:
    """The Table's Endpoints column: `ip:port` of the ready addresses, `+ N more...` past SHOWN, `<none>`."""
    pairs = [f"{a['ip']}:{p['port']}" for s in endpoints.get("subsets") or [] for a in s.get("addresses") or []
             for p in s.get("ports") or [{"port": ""}]]
    if not pairs:
        return "<none>"
    return ",".join(pairs[:SHOWN]) + (f" + {len(pairs) - SHOWN} more..." if len(pairs) > SHOWN else "")


def _joined(values: list[str]) -> str:
    if not values:
        return "<unset>"
    return ",".join(values[:SHOWN]) + (f" + {len(values) - SHOWN} more..." if len(values) > SHOWN else "")


def _column(name: str, description: str, fmt: str = "") -> Obj:
    return {"name": name, "type": "string", "format": fmt, "priority": 0, "description": description}


def _endpoints_cells(e: Obj) -> list[Any]:
    return [e["metadata"]["name"], shown(e)]


def _slice_cells(e: Obj) -> list[Any]:
    return [e["metadata"]["name"], e.get("addressType"), _joined([str(p.get("port")) for p in e.get("ports") or []]),
            _joined([a for ep in e.get("endpoints") or [] for a in ep.get("addresses") or []])]


# kubectl's columns (before Age) and the cells of a row, by kind
COLUMNS = {"Endpoints": ([_column("Name", "Name", "name"),
                          _column("Endpoints", "The ready addresses and ports of the Service's pods.")],
                         _endpoints_cells),
           "EndpointSlice": ([_column("Name", "Name", "name"), _column("AddressType", "The type of address carried."),
                              _column("Ports", "The ports of the slice."),
                              _column("Endpoints", "The addresses of the slice.")], _slice_cells)}


def table(kind: str, items: list[Obj], now: datetime.datetime, resource_version: str, age: Any,
          table_version: str) -> Obj:
    """The Table `kubectl get endpoints` (Name, Endpoints, Age) or `kubectl get endpointslices` (Name,
    AddressType, Ports, Endpoints, Age) shows."""
    columns, cells = COLUMNS[kind]
    rows = [{"cells": [*cells(e), age(e, now)],
             "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": e["metadata"]}}
            for e in items]
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{table_version}",
            "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": [*columns, _column("Age", "Age")], "rows": rows}
