"""Watch feeds: one per HTTP watch, fed synchronously by the Client's watch, drained by the stream.

- Without a resourceVersion (or "0"), the feed starts with a synthetic ADDED per current object;
  with one, it replays the retained events after it (Client raises Gone when that version is
  older than the history: the stream then sends one ERROR event with a 410 Expired Status and ends,
  and clients re-list).
- Namespace, label and field selectors filter events; an object that starts or stops matching
  arrives as ADDED or DELETED, as from kube-apiserver.
- Event objects are the store's shared read-only objects: queued by reference, serialised by the
  stream. A consumer that falls MAX_BUFFER events behind is cut off (the stream ends; the client
  re-watches from the last version it saw).
- `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan`) starts with the current
  objects whatever the resourceVersion, ended — when the request allows bookmarks — by a BOOKMARK
  annotated `k8s.io/initial-events-end`; `sendInitialEvents=false` sends no initial objects (from
  now on without a resourceVersion), as kube-apiserver's watch cache does.
No HTTP here; `frame()` builds each line's JSON object, Table rows included.
"""
from __future__ import annotations

import asyncio
import collections
import datetime
from typing import Any

from vclite.api import kinds, meta
from vclite.httpserver import tables
from vclite.store import selectors

Obj = dict[str, Any]
MAX_BUFFER = 50_000
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Buffered:
    """What a watch request's handler reads from: the events a feed pushed and not yet sent (at most
    `max_buffer`: a client that falls that far behind is closed, `overflowed`), the event that wakes the
    handler, and the subscription to cancel. `kind` has `kind` and `api_version` (for bookmarks)."""

    def __init__(self, kind: Any, max_buffer: int):
        self.kind = kind
        self.buffer: collections.deque[tuple[str, Obj]] = collections.deque()
        self.max_buffer = max_buffer
        self.overflowed = False
        self.wakeup = asyncio.Event()
        self._sub: Any = None

    def _push(self, etype: str, obj: Obj) -> None:
        if len(self.buffer) >= self.max_buffer:
            self.overflowed = True
            self.close()
        else:
            self.buffer.append((etype, obj))
        self.wakeup.set()

    def drain(self) -> list[tuple[str, Obj]]:
        out = list(self.buffer)
        self.buffer.clear()
        self.wakeup.clear()
        return out

    def close(self) -> None:
        if self._sub is not None:
            self._sub.cancel()
            self._sub = None
        self.wakeup.set()

    def bookmark(self, resource_version: str, initial_end: bool = False) -> Obj:
        md: Obj = {"resourceVersion": resource_version}
        if initial_end:
            md["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"kind": self.kind.kind, "apiVersion": self.kind.api_version, "metadata": md}


class Feed(Buffered):
    def __init__(self, client: Any, kind: kinds.Kind, namespace: str | None, label_selector: str | None,
                 field_selector: str | None, max_buffer: int = MAX_BUFFER):
        super().__init__(kind, max_buffer)
        self.client, self.namespace = client, namespace
        self._labels = selectors.label_predicate(label_selector)
        self._fields = selectors.field_predicate(field_selector, kind.selector_kind)

    def matches(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and self.kind.namespaced and meta.namespace(obj) != self.namespace:
            return False
        return self._labels(obj) and self._fields(obj)

    def open(self, resource_version: str | None, send_initial_events: bool | None = None,
             initial_bookmark: bool = False, current_rv: str = "") -> None:
        """Start following; may raise errors.Gone (too old resourceVersion). `send_initial_events`
        as the request's sendInitialEvents: None (not given) sends the current objects first only
        without a resourceVersion (or "0"), otherwise replays from it; True sends them whatever the
        version (the state now is at least as new), False never. `initial_bookmark`: end the
        initial objects with the `k8s.io/initial-events-end` BOOKMARK (`current_rv`)."""
        legacy_state = resource_version in (None, "", "0")
        if send_initial_events or (send_initial_events is None and legacy_state):
            for obj in sorted(self.client.list(self.kind, self.namespace), key=lambda o: (meta.namespace(o),
                                                                                          meta.name(o))):
                if self.matches(obj):
                    self.buffer.append(("ADDED", obj))
            if send_initial_events and initial_bookmark:
                self.buffer.append(("BOOKMARK", self.bookmark(current_rv, initial_end=True)))
            self._sub = self.client.watch(self.kind, self._on_event)
        elif legacy_state:
            self._sub = self.client.watch(self.kind, self._on_event)   # (from now on)
        else:
            self._sub = self.client.watch(self.kind, self._on_event, resource_version)
        if self.buffer:
            self.wakeup.set()

    def _on_event(self, ev: Any) -> None:
        if self.overflowed:
            return
        etype = str(ev.type)
        if etype == "MODIFIED":
            now, before = self.matches(ev.object), self.matches(ev.old)
            if not now and not before:
                return
            etype = "MODIFIED" if now and before else ("ADDED" if now else "DELETED")
        elif etype in ("ADDED", "DELETED"):
            if not self.matches(ev.object):
                return
        else:
            return
        self._push(etype, ev.object)

    def frame(self, etype: str, obj: Obj, as_table: bool, now: datetime.datetime, include_object: str) -> Obj:
        return frame(self.kind, etype, obj, as_table, now, include_object)


def frame(kind: kinds.Kind, etype: str, obj: Obj, as_table: bool, now: datetime.datetime,
          include_object: str = "Metadata") -> Obj:
    """The JSON object of one watch line; with Table output each object is a one-row Table."""
    if as_table and etype in ("ADDED", "MODIFIED", "DELETED"):
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        obj = tables.table(kind, [obj], now, rv, include_object)
    return {"type": etype, "object": obj}
