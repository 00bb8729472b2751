"""Kubernetes REST paths for the kinds of `vclite.api.kinds`, and query strings.

`/api/v1/...` for the core group, `/apis/<group>/<version>/...` otherwise; namespaced kinds under
`namespaces/<ns>/` (a list or watch across all namespaces omits that segment); cluster-scoped kinds
never carry a namespace. Pure functions; no I/O.
"""
from __future__ import annotations

import urllib.parse
from typing import Any, Mapping

from vclite.api import kinds


def group_version_path(kind: kinds.Kind) -> str:
    return f"/api/{kind.version}" if not kind.group else f"/apis/{kind.group}/{kind.version}"


def _q(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def collection(kind: kinds.Kind, namespace: str | None) -> str:
    """The collection path: where to POST, LIST and WATCH. `namespace` None or "" = all namespaces
    (for lists and watches; a create always names its namespace)."""
    base = group_version_path(kind)
    if kind.namespaced and namespace:
        return f"{base}/namespaces/{_q(namespace)}/{kind.plural}"
    return f"{base}/{kind.plural}"


def item(kind: kinds.Kind, namespace: str | None, name: str, subresource: str | None = None) -> str:
    """The path of one object (optionally one of its subresources: `status`, `log`...)."""
    if not name:
        raise ValueError(f"a {kind.kind} name is required")
    path = f"{collection(kind, namespace if kind.namespaced else None)}/{_q(name)}"
    return f"{path}/{subresource}" if subresource else path


def label_selector(selector: str | Mapping[str, str] | None) -> str | None:
    """A label selector string; a mapping means equality on every pair (`a=1,b=2`)."""
    if selector is None or isinstance(selector, str):
        return selector or None
    return ",".join(f"{k}={v}" for k, v in selector.items()) or None


def with_query(path: str, query: Mapping[str, Any] | None) -> str:
    """`path?k=v&...` with None values left out; booleans as `true`/`false`."""
    pairs = []
    for key, value in (query or {}).items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        pairs.append((key, str(value)))
    return f"{path}?{urllib.parse.urlencode(pairs)}" if pairs else path
