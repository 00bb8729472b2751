"""`HttpClient`: the Client protocol (`vclite.apiserver.client`) over the Kubernetes REST API.

It only speaks the Kubernetes API, so the same client drives `vcctl server` and a real cluster.
Kinds map to paths through `vclite.api.kinds` (`kube.paths`); `Status` errors come back as
`vclite.lib.errors` values (`kube.status`). Writes: `create` POSTs to the collection, `update`
PUTs the object, `update_status` PUTs `/status`, `patch` sends a JSON merge patch
(`application/merge-patch+json`, to `/status` when asked), `delete` sends `DeleteOptions` with the
propagation policy. Lists follow `continue` tokens and fill in each item's apiVersion/kind (a
Kubernetes list leaves them out). `watch` runs a background thread per kind: see `kube.watch`
for the threading contract. Every returned object is the caller's own (freshly parsed JSON).

Beyond the protocol: `version()`, `serves(group_version, plural)` (discovery), `request()` for
kinds vclite does not model (a bus.volcano.sh Command on a Volcano cluster), and `watch()`
accepts `namespace=`, `label_selector=`, `field_selector=` to narrow a stream.
"""
from __future__ import annotations

import json
from typing import Any

from vclite.api import kinds, meta
from vclite.apiserver import client as client_mod
from vclite.kube import kubeconfig, paths, status, transport, watch
from vclite.lib import errors

Obj = dict[str, Any]
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
LIST_PAGE = 500


def kind_of(obj: Obj) -> kinds.Kind:
    """The served Kind of an object (JobFlow/JobTemplate also under batch.volcano.sh/v1alpha1)."""
    if not isinstance(obj, dict):
        raise errors.BadRequest("object must be a mapping")
    kind = kinds.lookup(str(obj.get("apiVersion")), str(obj.get("kind")))
    if kind is None:
        raise errors.BadRequest(f'no kind "{obj.get("kind")}" is registered for version "{obj.get("apiVersion")}"')
    return kind


def _namespace_of(kind: kinds.Kind, obj: Obj) -> str | None:
    return (meta.namespace(obj) or "default") if kind.namespaced else None


class HttpClient:
    def __init__(self, cfg: kubeconfig.Config, timeout: float = 30.0):
        self.config = cfg
        self.transport = transport.Transport(cfg, timeout=timeout)

    @classmethod
    def from_kubeconfig(cls, kubeconfig_path: str | None = None, master: str | None = None,
                        context: str | None = None) -> "HttpClient":
        return cls(kubeconfig.load(kubeconfig_path, master, context))

    # ---- raw ----------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, content_type: str = JSON) -> Any:
        """Send one request; the parsed JSON answer, or the ApiError of a non-2xx answer."""
        data = None if body is None else json.dumps(body).encode()
        resp = self.transport.request(method, path, data, content_type if data is not None else None)
        if not 200 <= resp.status < 300:
            raise status.from_response(resp.status, resp.body)
        if not resp.body:
            return None
        try:
            return json.loads(resp.body)
        except ValueError as exc:
            raise errors.ApiError(f"the server answered {method} {path} with invalid JSON: {exc}") from exc

    def _typed(self, kind: kinds.Kind, obj: Any) -> Obj:
        if not isinstance(obj, dict):
            raise errors.ApiError(f"the server answered with a {type(obj).__name__}, not a {kind.kind}")
        obj.setdefault("apiVersion", kind.api_version)
        obj.setdefault("kind", kind.kind)
        return obj

    def version(self) -> Obj:
        """`GET /version` (gitVersion, platform ...)."""
        return self.request("GET", "/version") or {}

    def serves(self, group_version: str, plural: str) -> bool:
        """Whether discovery lists resource `plural` under `group_version` (`bus.volcano.sh/v1alpha1`)."""
        path = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        try:
            found = self.request("GET", path) or {}
        except (errors.NotFound, errors.Forbidden):
            return False
        return any(r.get("name") == plural for r in found.get("resources") or [])

    # ---- reads --------------------------------------------------------------------------------------
    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj:
        return self._typed(kind, self.request("GET", paths.item(kind, namespace, name)))

    def list_with_version(self, kind: kinds.Kind, namespace: str | None = None,
                          label_selector: str | dict | None = None,
                          field_selector: str | None = None) -> tuple[list[Obj], str]:
        """Every matching object (following `continue`) and the list's resourceVersion — the first
        page's: a watch from it may repeat a change a later page already shows, but never misses one
        (a server that does not serve every page from one snapshot may answer later pages newer)."""
        items: list[Obj] = []
        cont: str | None = None
        version: str | None = None
        while True:
            query = {"labelSelector": paths.label_selector(label_selector), "fieldSelector": field_selector,
                     "limit": LIST_PAGE, "continue": cont}
            answer = self.request("GET", paths.with_query(paths.collection(kind, namespace), query)) or {}
            items.extend(self._typed(kind, o) for o in answer.get("items") or [])
            md = answer.get("metadata") or {}
            version = str(md.get("resourceVersion") or "") if version is None else version
            cont = md.get("continue")
            if not cont:
                return items, version

    def list(self, kind: kinds.Kind, namespace: str | None = None, label_selector: str | dict | None = None,
             field_selector: str | None = None) -> list[Obj]:
        return self.list_with_version(kind, namespace, label_selector, field_selector)[0]

    # ---- writes -------------------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        kind = kind_of(obj)
        body = dict(obj, apiVersion=kind.api_version)
        ns = _namespace_of(kind, obj)
        if ns is not None:
            body["metadata"] = dict(body.get("metadata") or {}, namespace=ns)
        return self._typed(kind, self.request("POST", paths.collection(kind, ns), body))

    def _put(self, obj: Obj, subresource: str | None) -> Obj:
        kind = kind_of(obj)
        body = dict(obj, apiVersion=kind.api_version)
        path = paths.item(kind, _namespace_of(kind, obj), meta.name(obj), subresource)
        return self._typed(kind, self.request("PUT", path, body))

    def update(self, obj: Obj) -> Obj:
        return self._put(obj, None)

    def update_status(self, obj: Obj) -> Obj:
        return self._put(obj, "status")

    def patch(self, kind: kinds.Kind, namespace: str, name: str, patch: Obj, status: bool = False) -> Obj:
        path = paths.item(kind, namespace, name, "status" if status else None)
        return self._typed(kind, self.request("PATCH", path, patch, MERGE_PATCH))

    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> None:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        if annotations:
            body["metadata"]["annotations"] = dict(annotations)
        self.request("POST", paths.item(kinds.POD, namespace, name, "binding"), body)

    def delete(self, kind: kinds.Kind, namespace: str, name: str, propagation: str = "Background",
               grace_period: int | None = None, preconditions: Obj | None = None) -> Obj | None:
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if grace_period is not None:
            options["gracePeriodSeconds"] = grace_period
        if preconditions:
            options["preconditions"] = dict(preconditions)
        answer = self.request("DELETE", paths.item(kind, namespace, name), options)
        if isinstance(answer, dict) and answer.get("kind") not in (None, "Status"):
            return self._typed(kind, answer)
        return None

    # ---- watch --------------------------------------------------------------------------------------
    def watch(self, kind: kinds.Kind | None, handler: client_mod.WatchHandler, resource_version: str | None = None,
              *, namespace: str | None = None, label_selector: str | dict | None = None,
              field_selector: str | None = None) -> client_mod.Subscription:
        """Follow changes of `kind` (every kind if None) on background threads; see `kube.watch`."""
        selector = paths.label_selector(label_selector)

        def subscribe(k: kinds.Kind, rv: str | None) -> watch.Subscription:
            ns = namespace if k.namespaced else None
            return watch.Subscription(
                self.transport, k, handler, lambda: self.list_with_version(k, ns, selector, field_selector), rv,
                namespace=ns, label_selector=selector, field_selector=field_selector).start()

        if kind is not None:
            return subscribe(kind, resource_version)
        return watch.Group([subscribe(k, resource_version) for k in kinds.ALL])

    def close(self) -> None:
        self.transport.close()
