"""Informer: a local, read-only cache of one kind, kept current by a watch (as client-go's).

Components read from an informer instead of listing through the API on every sync: no copy per
object per read, no work proportional to the whole store. Objects in the cache are the watch's
shared objects: callers must not modify them (copy first, e.g. to build an update).
An optional `on_event` handler is chained after the cache is updated, so a component's handler
always sees a cache that already holds the event. Optional `indexers` (name -> function of an
object giving an index value, or None for none) keep objects findable by that value
(`by_index`) in time proportional to what is found, as client-go's Indexers: e.g. the vcjobs made
from one JobTemplate, or the pods still running, without scanning every object ever kept.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from vclite.api import kinds, meta
from vclite.apiserver import client as client_mod
from vclite.lib import jsoncopy

Obj = dict[str, Any]


Key = tuple[str, str]   # (namespace, name)
IndexFn = Callable[[Obj], Any]


class Informer:
    def __init__(self, client: client_mod.Client, kind: kinds.Kind,
                 on_event: Callable[[client_mod.WatchEvent], None] | None = None,
                 indexers: dict[str, IndexFn] | None = None):
        self.client, self.kind, self.on_event = client, kind, on_event
        self._objects: dict[Key, Obj] = {}
        self._subscription: client_mod.Subscription | None = None
        self._indexers = dict(indexers or {})
        self._indices: dict[str, dict[Any, dict[Key, Obj]]] = {name: {} for name in self._indexers}
        self._indexed: dict[Key, tuple] = {}   # each object's index values, in indexer order

    def start(self) -> None:
        """Fill the cache from a list, then follow the watch."""
        if self._subscription is not None:
            return
        self._subscription = self.client.watch(self.kind, self._handle)
        for obj in self.client.list(self.kind):
            key = (meta.namespace(obj), meta.name(obj))
            if key not in self._objects:
                self._store(key, obj)

    def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.cancel()
            self._subscription = None

    def _store(self, key: Key, obj: Obj | None) -> None:
        """Put `obj` under `key` (None: remove it), keeping every index current."""
        if obj is None:
            self._objects.pop(key, None)
        else:
            self._objects[key] = obj
        if not self._indexers:
            return
        befores = self._indexed.pop(key, None) if obj is None else self._indexed.get(key)
        afters = tuple(fn(obj) for fn in self._indexers.values()) if obj is not None else None
        if afters is not None:
            self._indexed[key] = afters
        for i, name in enumerate(self._indexers):
            before = befores[i] if befores is not None else None
            after = afters[i] if afters is not None else None
            index = self._indices[name]
            if before is not None and before != after:
                bucket = index.get(before)
                if bucket is not None:
                    bucket.pop(key, None)
                    if not bucket:
                        del index[before]
            if after is not None:
                index.setdefault(after, {})[key] = obj

    def _handle(self, ev: client_mod.WatchEvent) -> None:
        md = ev.object.get("metadata", {})   # (meta.namespace and meta.name, read once)
        key = (md.get("namespace", "") or "", md.get("name", ""))
        if ev.type == client_mod.EventType.DELETED:
            self._store(key, None)
        elif ev.type != client_mod.EventType.BOOKMARK:
            self._store(key, ev.object)
        if self.on_event is not None:
            self.on_event(ev)

    # ---- reads (read-only objects) ----------------------------------------------------------------
    def get(self, namespace: str, name: str) -> Obj | None:
        return self._objects.get((namespace if self.kind.namespaced else "", name))

    def items(self, namespace: str | None = None) -> Iterator[Obj]:
        for (ns, _), obj in self._objects.items():
            if namespace is None or ns == namespace:
                yield obj

    def list(self, namespace: str | None = None, labels: dict[str, str] | None = None) -> list[Obj]:
        """Objects in `namespace` (all if None) whose labels include every pair of `labels`."""
        if namespace is None and not labels:
            return list(self._objects.values())
        out = []
        for obj in self.items(namespace):
            if labels:
                have = meta.labels(obj)
                if any(have.get(k) != v for k, v in labels.items()):
                    continue
            out.append(obj)
        return out

    def by_index(self, name: str, value: Any) -> list[Obj]:
        """Objects whose indexer `name` gives `value` (read-only), in no particular order."""
        return list((self._indices[name].get(value) or {}).values())

    def index_values(self, name: str) -> list[Any]:
        """Every value indexer `name` gives some object (each once), in no particular order."""
        return list(self._indices[name])

    def copy_of(self, namespace: str, name: str) -> Obj | None:
        """A private copy (to modify and write back), or None."""
        obj = self.get(namespace, name)
        return jsoncopy.deep_copy(obj) if obj is not None else None

    def __len__(self) -> int:
        return len(self._objects)
