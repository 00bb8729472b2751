"""Kinds every kube-apiserver serves that vclite does not run: discovered, listed empty, never stored.

`kubectl apply --prune` without `--prune-allowlist` looks up every kind of its default list
(Deployments, Services' Endpoints, batch/v1 Jobs, Ingresses, …) and stops with "error retrieving
RESTMappings to prune" if the server does not serve one. vclite serves those it does not run
read only: discovery lists them (verbs get and list, after Volcano's groups, so that `jobs` and
`cronjobs` still name Volcano's kinds as before), a list is empty, an object is not found (to
read, change or delete: `kubectl delete -f --ignore-not-found` goes on; a computed Endpoints or EndpointSlice
that exists is refused with 405 instead, `kubectl edit endpoints` says why), deleting a collection
deletes nothing, and what would create one (POST, server-side apply) or watch them is refused with
405 saying that vclite does not run that kind — but Endpoints and EndpointSlices, computed from the
Services and Pods, are listed and watched (endpoints.py, endpointwatch.py). Pure.
"""
from __future__ import annotations

import dataclasses
from typing import Any

Obj = dict[str, Any]

VERBS = ["get", "list"]


@dataclasses.dataclass(frozen=True)
class AbsentKind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    watchable: bool = False   # computed from stored kinds and watched (Endpoints, EndpointSlices)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


# kubectl 1.32's default prune list (k8s.io/kubectl/pkg/util/prune) less the kinds vclite stores
ALL: tuple[AbsentKind, ...] = (
    AbsentKind("", "v1", "Endpoints", "endpoints", True, ("ep",), watchable=True),
    AbsentKind("", "v1", "ReplicationController", "replicationcontrollers", True, ("rc",)),
    AbsentKind("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",)),
    AbsentKind("apps", "v1", "Deployment", "deployments", True, ("deploy",)),
    AbsentKind("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",)),
    AbsentKind("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",)),
    AbsentKind("batch", "v1", "Job", "jobs", True),
    AbsentKind("batch", "v1", "CronJob", "cronjobs", True, ("cj",)),
    AbsentKind("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("ing",)),
    # (read by kubectl describe service: computed from Services and Pods, see endpoints.py)
    AbsentKind("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True, watchable=True),
)


def group_versions() -> list[tuple[str, str]]:
    """The group versions only absent kinds have, in table order (core v1 is served anyway)."""
    return list(dict.fromkeys((k.group, k.version) for k in ALL if k.group))


def of(group: str, version: str) -> list[AbsentKind]:
    return [k for k in ALL if (k.group, k.version) == (group, version)]


def find(group: str, version: str, plural: str) -> AbsentKind | None:
    return next((k for k in of(group, version) if k.plural == plural), None)


def verbs(k: AbsentKind) -> list[str]:
    return [*VERBS, "watch"] if k.watchable else VERBS


def resource_entry(k: AbsentKind) -> Obj:
    """Its entry in an APIResourceList."""
    entry: Obj = {"name": k.plural, "singularName": k.kind.lower(), "namespaced": k.namespaced, "kind": k.kind,
                  "verbs": verbs(k), "storageVersionHash": ""}
    if k.short_names:
        entry["shortNames"] = list(k.short_names)
    return entry


def discovery_entry(k: AbsentKind) -> Obj:
    """Its entry in an aggregated discovery document (apidiscovery.k8s.io v2)."""
    entry: Obj = {"resource": k.plural, "responseKind": {"group": k.group, "version": k.version, "kind": k.kind},
                  "scope": "Namespaced" if k.namespaced else "Cluster", "singularResource": k.kind.lower(),
                  "verbs": verbs(k)}
    if k.short_names:
        entry["shortNames"] = list(k.short_names)
    return entry


def empty_list(k: AbsentKind, resource_version: str) -> Obj:
    return {"apiVersion": k.api_version, "kind": f"{k.kind}List", "metadata": {"resourceVersion": resource_version},
            "items": []}


def empty_table(table_version: str, resource_version: str) -> Obj:
    """The Table `kubectl get` asks for: Name and Age columns, no rows."""
    columns = [{"name": "Name", "type": "string", "format": "name", "priority": 0,
                "description": "Name must be unique within a namespace."},
               {"name": "Age", "type": "string", "format": "", "priority": 0,
                "description": "CreationTimestamp is a timestamp representing the server time when this object "
                               "was created."}]
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{table_version}",
            "metadata": {"resourceVersion": resource_version}, "columnDefinitions": columns, "rows": []}


def not_found(k: AbsentKind, name: str) -> tuple[str, Obj]:
    """The message and details of a 404 for an object of an absent kind (there are none)."""
    return f'{k.resource} "{name}" not found', {"name": name, "group": k.group, "kind": k.plural}


def computed_refused(k: AbsentKind, method: str) -> str:
    """Why a write of an existing computed object (an Endpoints, an EndpointSlice) is refused."""
    return (f"vclite computes {k.resource} from the Services and Pods at each read and does not store them: "
            f"{method} is not allowed (change the Service, its selector or its pods instead)")


def refused(k: AbsentKind, method: str) -> str:
    """Why a write (or a watch) of an absent kind is refused."""
    return (f"vclite does not run {k.resource}: it serves them empty and read only (get, list), so that "
            f"kubectl finds every kind it knows; {method} is not allowed")
