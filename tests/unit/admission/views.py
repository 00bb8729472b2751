"""A tiny View over a list of objects (a real, simple implementation of admission's View protocol),
and builders for the stored objects admission looks at."""
from __future__ import annotations

from typing import Any

from vclite.api import kinds, meta

Obj = dict[str, Any]


class DictView:
    """Objects keyed by (kind, namespace, name); `kind` read from each object's `kind` field."""

    def __init__(self, *objs: Obj):
        self._objs = {(o["kind"], meta.namespace(o), meta.name(o)): o for o in objs}

    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj | None:
        return self._objs.get((kind.kind, namespace, name))

    def list(self, kind: kinds.Kind, namespace: str | None = None) -> list[Obj]:
        return [o for (k, ns, _), o in self._objs.items() if k == kind.kind and namespace in (None, ns)]


def queue(name: str, state: str | None = None, parent: str | None = None, **spec: Any) -> Obj:
    q: Obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
              "spec": {"weight": 1, **spec}}
    if parent is not None:
        q["spec"]["parent"] = parent
    if state is not None:
        q["status"] = {"state": state}
    return q


def podgroup(name: str, queue_name: str, namespace: str = "default") -> Obj:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"queue": queue_name, "minMember": 1}}


def default_view(*extra: Obj) -> DictView:
    """The queues every vclite store starts with: `root` and an Open `default`."""
    return DictView(queue("root", "Open"), queue("default", "Open"), *extra)
