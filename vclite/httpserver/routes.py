"""The path routing table: a request path to what it names (pure; no I/O, no aiohttp).

Resource paths, as kube-apiserver lays them out:
  /api/v1/<plural>[/<name>[/<sub>]]                              cluster-scoped kinds; all-namespace lists
  /api/v1/namespaces/<ns>/<plural>[/<name>[/<sub>]]              namespaced kinds
  /apis/<group>/<version>/... the same for every other group
`/api/v1/namespaces/<name>[/status]` is the Namespace object itself. A namespaced kind's item is
only reachable under its namespace, a cluster-scoped kind never is; subresources are `status`
(kinds with a status), `log`, `binding`, `exec`, `attach` and `portforward` (pods), `token`
(ServiceAccounts). The metrics API
(`/apis/metrics.k8s.io/v1beta1/...`, `kubectl top`) is a `Usage` read; the kinds vclite does not run
but kubectl expects (absent.py: Deployments, Endpoints, …) are `Absent` reads. Everything else is a fixed
endpoint (discovery, version, OpenAPI, health, metrics) or unknown (None → 404). Trailing slashes
are ignored, as clients send them (`/version/`, `/api/`). The deprecated watch paths
(`/api/v1/watch/...`, `/apis/<group>/<version>/watch/...`) name the same resources (`unwatched`).
"""
from __future__ import annotations

import dataclasses
import enum

from vclite.api import kinds
from vclite.httpserver import absent


class Endpoint(enum.StrEnum):
    API = "api"                      # /api: APIVersions (legacy) or core APIGroupDiscoveryList
    APIS = "apis"                    # /apis: APIGroupList or APIGroupDiscoveryList
    GROUP = "group"                  # /apis/<g>: APIGroup
    GROUP_VERSION = "group_version"  # /api/v1, /apis/<g>/<v>: APIResourceList
    VERSION = "version"
    OPENAPI_V2 = "openapi_v2"        # an empty Swagger 2.0 document (see openapi.v2_document)
    OPENAPI_V3 = "openapi_v3"
    OPENAPI_V3_GV = "openapi_v3_gv"
    HEALTHZ = "healthz"
    LIVEZ = "livez"
    READYZ = "readyz"
    METRICS = "metrics"
    REVIEW = "review"                # POST /apis/<g>/<v>/<plural>: a self-subject review (reviews.py)


@dataclasses.dataclass(frozen=True)
class Static:
    endpoint: Endpoint
    group: str = ""
    version: str = ""
    plural: str = ""   # (REVIEW only)


@dataclasses.dataclass(frozen=True)
class Resource:
    kind: kinds.Kind
    namespace: str | None      # None: all namespaces (collections) or a cluster-scoped kind
    name: str | None           # None: the collection
    subresource: str | None = None

    @property
    def is_collection(self) -> bool:
        return self.name is None


@dataclasses.dataclass(frozen=True)
class Usage:
    """A read of the metrics API (metrics.k8s.io/v1beta1: `kubectl top`), built from what the executor
    measures, never stored: `pods` (namespaced: PodMetrics) or `nodes` (NodeMetrics)."""
    plural: str
    namespace: str | None      # None: all namespaces (pods), or nodes
    name: str | None           # None: the list


@dataclasses.dataclass(frozen=True)
class Absent:
    """A kind vclite does not run (absent.py): always empty, read only."""
    kind: absent.AbsentKind
    namespace: str | None
    name: str | None           # None: the list


Route = Static | Resource | Usage | Absent
METRICS_GROUP, METRICS_VERSION = "metrics.k8s.io", "v1beta1"

_FIXED = {
    ("api",): Static(Endpoint.API),
    ("apis",): Static(Endpoint.APIS),
    ("version",): Static(Endpoint.VERSION),
    ("openapi", "v2"): Static(Endpoint.OPENAPI_V2),
    ("openapi", "v3"): Static(Endpoint.OPENAPI_V3),
    ("metrics",): Static(Endpoint.METRICS),
}
_HEALTH = {"healthz": Endpoint.HEALTHZ, "livez": Endpoint.LIVEZ, "readyz": Endpoint.READYZ}
NAMESPACE_SUBRESOURCES = ("status", "finalize")
# self-subject reviews, created and answered, never stored: (group, version, plural)
REVIEWS = (("authorization.k8s.io", "v1", "selfsubjectaccessreviews"),
           ("authorization.k8s.io", "v1", "selfsubjectrulesreviews"),
           ("authentication.k8s.io", "v1", "selfsubjectreviews"))


def discovered_group_versions() -> list[tuple[str, str]]:
    """What discovery lists: the stored kinds' group versions, those of kinds vclite does not run
    (after Volcano's: kubectl resolves a plural such as `jobs` to the first group that has it), then
    the metrics API."""
    return [*served_group_versions(), *absent.group_versions(), (METRICS_GROUP, METRICS_VERSION)]


def served_group_versions() -> list[tuple[str, str]]:
    """(group, version) pairs in kinds-table order, core ("", "v1") first."""
    out: list[tuple[str, str]] = [("", "v1")]
    for k in served_kinds():
        if (k.group, k.version) not in out:
            out.append((k.group, k.version))
    return out


def served_kinds() -> tuple[kinds.Kind, ...]:
    """The stored kinds, then the views of them (events.k8s.io/v1 Events: httpserver/views.py)."""
    return (*kinds.ALL, *kinds.VIEWS)


def kind_for(group: str, version: str, plural: str) -> kinds.Kind | None:
    for k in served_kinds():
        if k.group == group and k.version == version and k.plural == plural:
            return k
    return None


def subresources(kind: kinds.Kind) -> tuple[str, ...]:
    subs = ("status",) if kind.has_status else ()
    if kind is kinds.SERVICEACCOUNT:
        return subs + ("token",)
    return subs + (("log", "binding", "eviction", "exec", "attach", "portforward") if kind is kinds.POD else ())


def unwatched(path: str) -> str | None:
    """The path a deprecated watch path names (`/api/v1/watch/namespaces/ns/pods` for
    `/api/v1/namespaces/ns/pods?watch=true`, which kube-apiserver still serves), else None."""
    parts = [p for p in path.split("/") if p]
    at = 2 if parts[:1] == ["api"] else 3 if parts[:1] == ["apis"] else None
    if at is None or len(parts) <= at + 1 or parts[at] != "watch":
        return None
    return "/" + "/".join(parts[:at] + parts[at + 1:])


def match(path: str) -> Route | None:
    parts = tuple(p for p in path.split("/") if p)
    if parts in _FIXED:
        return _FIXED[parts]
    if len(parts) == 4 and parts[0] == "apis" and parts[1:] in REVIEWS:
        return Static(Endpoint.REVIEW, *parts[1:])
    if parts and parts[0] in _HEALTH:
        return Static(_HEALTH[parts[0]])  # /healthz, /healthz/ping, /readyz/log... all answer
    if len(parts) >= 3 and parts[:2] == ("openapi", "v3"):
        return _openapi_gv(parts[2:])
    if not parts:
        return None
    if parts[0] == "api":
        if len(parts) < 2 or parts[1] != "v1":
            return None
        return _group_version("", "v1", parts[2:])
    if parts[0] == "apis" and len(parts) >= 2 and parts[1] == METRICS_GROUP:
        return _metrics(parts[2:])
    if parts[0] == "apis":
        if len(parts) == 2:
            return Static(Endpoint.GROUP, parts[1]) if parts[1] in _groups() else None
        return _group_version(parts[1], parts[2], parts[3:])
    return None


def _metrics(rest: tuple[str, ...]) -> Route | None:
    """/apis/metrics.k8s.io[/v1beta1[/pods|/nodes[/<name>]|/namespaces/<ns>/pods[/<name>]]]"""
    if not rest:
        return Static(Endpoint.GROUP, METRICS_GROUP)
    if rest[0] != METRICS_VERSION:
        return None
    rest = rest[1:]
    if not rest:
        return Static(Endpoint.GROUP_VERSION, METRICS_GROUP, METRICS_VERSION)
    if rest[0] == "namespaces" and len(rest) in (3, 4) and rest[2] == "pods":
        return Usage("pods", rest[1], rest[3] if len(rest) == 4 else None)
    if rest == ("pods",):
        return Usage("pods", None, None)
    if rest[0] == "nodes" and len(rest) <= 2:
        return Usage("nodes", None, rest[1] if len(rest) == 2 else None)
    return None


def _groups() -> set[str]:
    return {g for g, _ in [*served_group_versions(), *absent.group_versions()] if g}


def _openapi_gv(rest: tuple[str, ...]) -> Route | None:
    if rest == ("api", "v1"):
        return Static(Endpoint.OPENAPI_V3_GV, "", "v1")
    if len(rest) == 3 and rest[0] == "apis" and (rest[1], rest[2]) in served_group_versions():
        return Static(Endpoint.OPENAPI_V3_GV, rest[1], rest[2])
    return None


def _group_version(group: str, version: str, rest: tuple[str, ...]) -> Route | None:
    if (group, version) not in served_group_versions() and (group, version) not in absent.group_versions():
        return None
    if not rest:
        return Static(Endpoint.GROUP_VERSION, group, version)
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in NAMESPACE_SUBRESOURCES:
        if (gone := absent.find(group, version, rest[2])) is not None:
            return _absent(gone, rest[1], rest[3:])
        kind = kind_for(group, version, rest[2])
        if kind is None or not kind.namespaced:
            return None
        return _resource(kind, rest[1], rest[3:])
    if (gone := absent.find(group, version, rest[0])) is not None:
        return _absent(gone, None, rest[1:])
    kind = kind_for(group, version, rest[0])
    if kind is None:
        return None
    if kind.namespaced and len(rest) > 1:
        return None  # a namespaced object is only reachable under its namespace
    return _resource(kind, None, rest[1:])


def _resource(kind: kinds.Kind, namespace: str | None, rest: tuple[str, ...]) -> Route | None:
    if not rest:
        return Resource(kind, namespace, None)
    if len(rest) == 1:
        return Resource(kind, namespace, rest[0])
    if len(rest) == 2 and rest[1] in subresources(kind):
        return Resource(kind, namespace, rest[0], rest[1])
    return None


def _absent(kind: absent.AbsentKind, namespace: str | None, rest: tuple[str, ...]) -> Route | None:
    if not rest:
        return Absent(kind, namespace, None)
    if len(rest) == 1 and (namespace is not None or not kind.namespaced):
        return Absent(kind, namespace, rest[0])
    return None
