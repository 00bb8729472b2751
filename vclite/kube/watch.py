"""Watches over HTTP: a streaming GET read by a background thread, delivering WatchEvents.

Threading contract (what a handler may rely on):
- Each subscription has ONE daemon thread; it calls the handler for that subscription's events
  one at a time, in the server's order. Handlers of different subscriptions (and the caller's own
  thread) run concurrently: a handler must only hand work over in a thread-safe way (put a key on
  a `queue.Queue`, set a `threading.Event`) — the same "only record work" rule as in-process.
- `cancel()` may be called from any thread, including from inside the handler. When it returns,
  no handler call of this subscription is running (unless cancel was called from the handler
  itself) and none will start.
- Event objects are the subscription's own parsed JSON; `old` is the previous state of the object
  *as this subscription saw it* (None for ADDED, and for the first event about an object the
  subscription had not seen yet when started from a caller's resourceVersion).

Resumption: the thread keeps the last resourceVersion seen (objects and BOOKMARKs) and re-opens
the stream from it when the server ends it (`timeoutSeconds`) or the connection drops (with
back-off up to 5 s). When the server says the version is too old (410 Expired, as an ERROR event
or an HTTP status), it re-lists and delivers the difference — ADDED for objects it had not seen,
MODIFIED for changed ones, DELETED for vanished ones — then watches from the list's version, as a
client-go reflector does. Without a starting resourceVersion, it lists first (seeding `old`) and
delivers only changes made after that list, like the in-process store's watch.
BOOKMARK events are consumed here (they only move the resourceVersion), never delivered.
"""
from __future__ import annotations

import http.client
import json
import logging
import threading
from typing import Any, Callable

from vclite.api import kinds, meta
from vclite.apiserver import client as client_mod
from vclite.kube import paths, status, transport
from vclite.lib import errors

Obj = dict[str, Any]
LOG = logging.getLogger("vclite.kube.watch")
SERVER_TIMEOUT = 290        # seconds the server keeps a watch open before we re-open it
MAX_BACKOFF = 5.0

Lister = Callable[[], tuple[list[Obj], str]]   # (objects, list resourceVersion)


def diff(cache: dict[tuple[str, str], Obj], objects: list[Obj]) -> list[tuple[client_mod.EventType, Obj, Obj | None]]:
    """Events that turn `cache` into `objects` (a re-list): (type, object, old). Pure."""
    out: list[tuple[client_mod.EventType, Obj, Obj | None]] = []
    seen = set()
    for obj in objects:
        key = (meta.namespace(obj), meta.name(obj))
        seen.add(key)
        old = cache.get(key)
        if old is None:
            out.append((client_mod.EventType.ADDED, obj, None))
        elif (old.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get("resourceVersion"):
            out.append((client_mod.EventType.MODIFIED, obj, old))
    for key, old in cache.items():
        if key not in seen:
            out.append((client_mod.EventType.DELETED, old, old))
    return out


class Subscription:
    """One kind's watch on its own thread. Create with `start()`."""

    def __init__(self, tr: transport.Transport, kind: kinds.Kind, handler: client_mod.WatchHandler,
                 lister: Lister, resource_version: str | None, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None):
        self.tr, self.kind, self.handler, self.lister = tr, kind, handler, lister
        self.rv = resource_version or None
        self.query = {"labelSelector": label_selector, "fieldSelector": field_selector}
        self.path = paths.collection(kind, namespace)
        self._cache: dict[tuple[str, str], Obj] = {}
        self._cancelled = threading.Event()
        self._deliver_lock = threading.RLock()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name=f"watch-{kind.plural}", daemon=True)

    def start(self) -> "Subscription":
        if self.rv is None:  # start "now": list (seeds `old`), then watch from the list's version
            objects, self.rv = self.lister()
            self._cache = {(meta.namespace(o), meta.name(o)): o for o in objects}
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancelled.set()
        conn = self._conn
        if conn is not None:
            transport.shutdown(conn)
        with self._deliver_lock:  # wait for a handler call in progress (re-entrant from the handler)
            pass

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # ---- delivery ---------------------------------------------------------------------------------
    def _deliver(self, etype: client_mod.EventType, obj: Obj, old: Obj | None) -> None:
        obj.setdefault("apiVersion", self.kind.api_version)
        obj.setdefault("kind", self.kind.kind)
        key = (meta.namespace(obj), meta.name(obj))
        if etype == client_mod.EventType.DELETED:
            self._cache.pop(key, None)
        else:
            self._cache[key] = obj
        with self._deliver_lock:
            if self._cancelled.is_set():
                return
            try:
                self.handler(client_mod.WatchEvent(etype, self.kind, obj, old))
            except Exception:  # a handler's bug must not end the watch
                LOG.exception("watch handler for %s raised", self.kind.plural)

    def _relist(self) -> None:
        objects, rv = self.lister()
        for etype, obj, old in diff(self._cache, objects):
            self._deliver(etype, obj, old)
        self.rv = rv

    # ---- the thread -------------------------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.0
        while not self._cancelled.is_set():
            if backoff:
                self._cancelled.wait(backoff)
                if self._cancelled.is_set():
                    return
            try:
                clean = self._stream_once()
                backoff = 0.0 if clean else min(MAX_BACKOFF, max(0.1, backoff * 2))
            except errors.Gone:
                backoff = 0.0
                try:
                    self._relist()
                except errors.ApiError as exc:
                    LOG.warning("re-listing %s failed: %s", self.kind.plural, exc)
                    backoff = min(MAX_BACKOFF, max(0.1, backoff * 2))
            except (errors.ApiError, OSError, http.client.HTTPException, ValueError) as exc:
                if self._cancelled.is_set():
                    return
                backoff = min(MAX_BACKOFF, max(0.1, backoff * 2))
                LOG.info("watch of %s interrupted (%s); resuming from %s", self.kind.plural, exc, self.rv)

    def _stream_once(self) -> bool:
        """Read one watch response to its end. True if it ended cleanly (server timeout)."""
        query = {"watch": "true", "resourceVersion": self.rv, "allowWatchBookmarks": "true",
                 "timeoutSeconds": SERVER_TIMEOUT, **self.query}
        conn, resp = self.tr.stream(paths.with_query(self.path, query), timeout=SERVER_TIMEOUT + 30)
        self._conn = conn
        try:
            if self._cancelled.is_set():
                return True
            if resp.status != 200:
                raise status.from_response(resp.status, resp.read())
            while not self._cancelled.is_set():
                line = resp.readline()
                if not line:
                    return True
                if line.strip():
                    self._handle_line(line)
            return True
        finally:
            self._conn = None
            conn.close()

    def _handle_line(self, line: bytes) -> None:
        event = json.loads(line)
        etype, obj = event.get("type"), event.get("object") or {}
        if etype == "ERROR":
            raise status.to_error(int(obj.get("code") or 500), obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if etype == "BOOKMARK":
            self.rv = rv or self.rv
            return
        key = (meta.namespace(obj), meta.name(obj))
        kind = client_mod.EventType(etype)
        self._deliver(kind, obj, None if kind == client_mod.EventType.ADDED else self._cache.get(key))
        self.rv = rv or self.rv


class Group:
    """Several subscriptions cancelled together (a watch of every kind)."""

    def __init__(self, subs: list[Subscription]):
        self.subs = subs

    def cancel(self) -> None:
        for sub in self.subs:
            sub.cancel()
