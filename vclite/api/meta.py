"""Helpers over object metadata (plain dicts): names, keys, labels, owner references.

Pure functions; nothing here mutates its argument unless the name says so (`set_…`).
"""
from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def name(obj: Obj) -> str:
    return obj.get("metadata", {}).get("name", "")


def namespace(obj: Obj) -> str:
    return obj.get("metadata", {}).get("namespace", "") or ""


def uid(obj: Obj) -> str:
    return obj.get("metadata", {}).get("uid", "")


def key(obj: Obj) -> str:
    """`ns/name` for namespaced objects, `name` for cluster-scoped ones."""
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


def labels(obj: Obj) -> dict[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def annotations(obj: Obj) -> dict[str, str]:
    return obj.get("metadata", {}).get("annotations") or {}


OMITTED_WHEN_EMPTY = ("labels", "annotations")


def without_empty_maps(obj: Any) -> Any:
    """`obj` without a `metadata.labels` or `metadata.annotations` that is an empty map, as Kubernetes
    stores and serves them (`omitempty`: `kubectl annotate x a-` of the last annotation leaves no
    `annotations:` key). For a patch's result: a removal leaves `{}` behind. A new object (sharing
    the rest) when something is dropped, else `obj` itself; anything not an object is returned as it is."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(md, dict) or not any(md.get(k) == {} for k in OMITTED_WHEN_EMPTY):
        return obj
    return {**obj, "metadata": {k: v for k, v in md.items() if not (k in OMITTED_WHEN_EMPTY and v == {})}}


def name_problem(obj: Any, url_name: str) -> str | None:
    """Why a written object cannot be the object `url_name` (kube-apiserver's checkName: an update or
    a patch's result must carry the name of the URL), or None."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    name = md.get("name") if isinstance(md, dict) else None
    if name in (None, ""):
        return f"the name of the object ({url_name} based on URL) was undeterminable: name must be provided"
    if name != url_name:
        return f"the name of the object ({name}) does not match the name on the URL ({url_name})"
    return None


def owner_references(obj: Obj) -> list[Obj]:
    return obj.get("metadata", {}).get("ownerReferences") or []


def controller_ref(obj: Obj) -> Obj | None:
    """The ownerReference with `controller: true`, if any."""
    for ref in owner_references(obj):
        if ref.get("controller"):
            return ref
    return None


def owner_ref(owner: Obj, controller: bool = True) -> Obj:
    """An ownerReference pointing at `owner` (controller + blockOwnerDeletion, as controllers write them)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": name(owner),
        "uid": uid(owner),
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def is_deleting(obj: Obj) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def phase(obj: Obj) -> str:
    """status.phase for pods/podgroups, status.state.phase for vcjobs/jobflows, status.state for queues."""
    status = obj.get("status") or {}
    state = status.get("state")
    if isinstance(state, dict):
        return state.get("phase", "") or ""
    if isinstance(state, str):
        return state
    return status.get("phase", "") or ""


def status_only_change(new: Obj, old: Obj) -> bool:
    """True if nothing but status and resourceVersion differs between two versions of an object
    (a controller's own status write, as its watch sees it). The first status write adds the key."""
    if new.keys() - {"status"} != old.keys() - {"status"} or \
            any(new[k] != old[k] for k in new if k not in ("status", "metadata")):
        return False
    md_new, md_old = new.get("metadata") or {}, old.get("metadata") or {}
    return md_new.keys() == md_old.keys() and all(md_new[k] == md_old[k] for k in md_new if k != "resourceVersion")
