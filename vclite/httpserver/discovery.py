"""Discovery documents, built from the kinds table: legacy (APIVersions, APIGroupList, APIGroup,
APIResourceList) and aggregated (apidiscovery.k8s.io v2 / v2beta1 APIGroupDiscoveryList), plus
`/version`. Pure functions of the kinds table; the handler chooses by the request's Accept.

Short names come from the kinds table (jf, jt, vcjob/vj, q, pg, …); `categories` are Kubernetes'
(`all` for pods and services; Volcano's CRDs declare none).
"""
from __future__ import annotations

from typing import Any

from vclite import __version__
from vclite.api import kinds
from vclite.httpserver import absent, routes

Obj = dict[str, Any]

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUB_VERBS = {"status": ["get", "patch", "update"], "log": ["get"], "binding": ["create"], "eviction": ["create"],
             "exec": ["create", "get"], "attach": ["create", "get"], "portforward": ["create", "get"],
             "token": ["create"]}
# subresources whose objects are not the parent's kind
SUB_KINDS = {"binding": "Binding", "eviction": "Eviction", "exec": "PodExecOptions", "attach": "PodAttachOptions",
             "portforward": "PodPortForwardOptions", "token": "TokenRequest"}
# a subresource kind of another group (kubectl drain reads eviction's)
SUB_GROUPS = {"eviction": ("policy", "v1"), "token": ("authentication.k8s.io", "v1")}
CATEGORIES = {kinds.POD.kind: ["all"], kinds.SERVICE.kind: ["all"]}
KUBE_VERSION = (1, 32, 0)
AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"


# the metrics API (`kubectl top`): read only, never stored — (plural, singular, kind, namespaced)
METRICS_RESOURCES = (("nodes", "", "NodeMetrics", False), ("pods", "", "PodMetrics", True))
METRICS_VERBS = ["get", "list"]


def kinds_of(group: str, version: str) -> list[kinds.Kind]:
    return [k for k in routes.served_kinds() if k.group == group and k.version == version]


def version_info() -> Obj:
    major, minor, patch = KUBE_VERSION
    return {"major": str(major), "minor": str(minor), "gitVersion": f"v{major}.{minor}.{patch}-vclite.{__version__}",
            "gitCommit": "vclite", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "go1.23.0", "compiler": "gc", "platform": "linux/amd64"}


def api_versions() -> Obj:
    return {"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"], "serverAddressByClientCIDRs": []}


def api_group(group: str) -> Obj:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for g, v in routes.discovered_group_versions()
                if g == group]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions,
            "preferredVersion": versions[0] if versions else None}


def api_group_list() -> Obj:
    groups = [g for g, _ in routes.discovered_group_versions() if g]
    unique = list(dict.fromkeys(groups))
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [{k: v for k, v in api_group(g).items() if k not in ("kind", "apiVersion")} for g in unique]}


def _resource_entry(k: kinds.Kind) -> Obj:
    entry = {"name": k.plural, "singularName": k.singular, "namespaced": k.namespaced, "kind": k.kind,
             "verbs": VERBS, "storageVersionHash": ""}
    if k.short_names:
        entry["shortNames"] = list(k.short_names)
    if k.kind in CATEGORIES:
        entry["categories"] = CATEGORIES[k.kind]
    return entry


def api_resource_list(group: str, version: str) -> Obj:
    if (group, version) == (routes.METRICS_GROUP, routes.METRICS_VERSION):
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}",
                "resources": [{"name": plural, "singularName": singular, "namespaced": namespaced, "kind": kind,
                               "verbs": METRICS_VERBS} for plural, singular, kind, namespaced in METRICS_RESOURCES]}
    resources = []
    for k in kinds_of(group, version):
        resources.append(_resource_entry(k))
        for sub in routes.subresources(k):
            entry = {"name": f"{k.plural}/{sub}", "singularName": "", "namespaced": k.namespaced,
                     "kind": SUB_KINDS.get(sub, k.kind), "verbs": SUB_VERBS[sub]}
            if sub in SUB_GROUPS:
                entry["group"], entry["version"] = SUB_GROUPS[sub]
            resources.append(entry)
    resources += [absent.resource_entry(k) for k in absent.of(group, version)]
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def _response_kind(k: kinds.Kind) -> Obj:
    return {"group": k.group, "version": k.version, "kind": k.kind}


def _discovery_resource(k: kinds.Kind) -> Obj:
    entry: Obj = {"resource": k.plural, "responseKind": _response_kind(k),
                  "scope": "Namespaced" if k.namespaced else "Cluster", "singularResource": k.singular,
                  "verbs": VERBS}
    if k.short_names:
        entry["shortNames"] = list(k.short_names)
    if k.kind in CATEGORIES:
        entry["categories"] = CATEGORIES[k.kind]
    subs = [{"subresource": s, "verbs": SUB_VERBS[s], "responseKind": (
                {"group": SUB_GROUPS.get(s, ("", "v1"))[0], "version": SUB_GROUPS.get(s, ("", "v1"))[1],
                 "kind": SUB_KINDS[s]} if s in SUB_KINDS else _response_kind(k))}
            for s in routes.subresources(k)]
    if subs:
        entry["subresources"] = subs
    return entry


def _discovery_resources(group: str, version: str) -> list[Obj]:
    if (group, version) == (routes.METRICS_GROUP, routes.METRICS_VERSION):
        return [{"resource": plural, "responseKind": {"group": group, "version": version, "kind": kind},
                 "scope": "Namespaced" if namespaced else "Cluster", "singularResource": plural[:-1],
                 "verbs": METRICS_VERBS} for plural, _, kind, namespaced in METRICS_RESOURCES]
    return [*(_discovery_resource(k) for k in kinds_of(group, version)),
            *(absent.discovery_entry(k) for k in absent.of(group, version))]


def aggregated(core: bool, version: str = "v2") -> Obj:
    """The APIGroupDiscoveryList of `/api` (core=True) or `/apis`; `version` v2 or v2beta1."""
    items = []
    pairs = [gv for gv in routes.discovered_group_versions() if (gv[0] == "") == core]
    for group in dict.fromkeys(g for g, _ in pairs):
        versions = [{"version": v, "freshness": "Current", "resources": _discovery_resources(g, v)}
                    for g, v in pairs if g == group]
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": versions})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": items}
