"""Recording v1 Events about objects (what `kubectl describe` shows), through any Client.

`record(client, clock, obj, ...)` writes an Event at once. `Recorder` is what the embedded control
plane gives its components instead, as client-go's event broadcaster does: `recorder.record(obj,
...)` only notes the Event (its time is the time of the call) and the recorder, a background
component, writes what it noted once nothing more urgent is ready — an Event never delays the next
job of a flow, and the Events it notes are written in the order noted (each with the time it was
noted; Events written at once by other components may be stored before them), at most WRITES_PER_SYNC a
sync (the rest in the next: a server answers its requests between them). Like client-go's,
events noted but not yet written are lost if the process dies.

An Event is named as client-go names it, `<object>.<UnixNano in hex>` of its first occurrence, so a
list (sorted by name, as kube-apiserver's) shows each object's Events in the order they happened.
The same Event again (same object, type, reason, message and source) bumps the count of the first
one, found through a cache of the last CACHE_SIZE Events written, as client-go's correlator does
(so, as there, a repeat after a restart is a new Event).

A write the server refused (an ApiError: a Status answer) is dropped at once, as client-go's recordEvent
gives a StatusError up. A write that got no answer (errors.Unreachable: `vcctl controller` against a cluster
it cannot reach) is tried again, as client-go's recordToSink does: at most MAX_TRIES times, RETRY_SECONDS
apart (a chore timer of the recorder's own: nothing else waits; client-go sleeps in its own goroutine), the
Events noted after it waiting behind it in order; noted while it waits, MAX_NOTED at most (client-go's
broadcaster queues 1000 and drops the rest).
"""
from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Callable, Hashable

from vclite.api import kinds, meta
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

log = logging.getLogger(__name__)
Obj = dict[str, Any]
# (obj, event_type, reason, message, component, field_path="") -> None
RecordFn = Callable[..., None]
MAX_NOTED = 1000   # noted events written at once when this many wait (bounded memory under load)
CACHE_SIZE = 4096  # Events remembered for counting repeats (client-go's maxLruCacheEntries)
MAX_TRIES = 12   # writes of an Event the server did not answer before it is dropped (client-go's maxTriesPerEvent)
RETRY_SECONDS = 10.0   # between two of them (client-go's sleepDuration; its first, randomised, is not: 10 s here)
WRITES_PER_SYNC = 32   # Events one sync of the recorder writes at most (a burst's hundreds over several syncs)
NAME_ATTEMPTS = 10   # names tried when one is taken (an Event of the object at that instant, before a restart)
_written: collections.OrderedDict[tuple, tuple[str, str]] = collections.OrderedDict()  # key -> (namespace, name)
_last_stamp: collections.OrderedDict[str, int] = collections.OrderedDict()   # object uid -> its last Event's stamp
_written_lock = threading.Lock()


def direct(client: Any, clock: clock_mod.Clock) -> RecordFn:
    """A record function that writes each Event at once (components driven without a Recorder)."""
    def record_now(obj: Obj, event_type: str, reason: str, message: str, component: str = "vclite",
                   field_path: str = "") -> None:
        record(client, clock, obj, event_type, reason, message, component, field_path)
    return record_now


class Recorder:
    """Events noted now, written in the background (see the module docstring)."""

    name = "event-recorder"
    background = True
    KEY = "events"

    def __init__(self, client: Any, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock)
        self._noted: list[Obj] = []
        self._tries = 0   # failed writes of the first noted Event (the server did not answer)
        self._retry_at: float | None = None   # (monotonic) when it is tried again; None: not waiting
        self.dropped = 0   # Events given up: no answer after MAX_TRIES, or noted while MAX_NOTED waited

    def start(self) -> None:
        pass

    def record(self, obj: Obj, event_type: str, reason: str, message: str, component: str = "vclite",
               field_path: str = "") -> None:
        if len(self._noted) >= MAX_NOTED and self._retry_at is not None:
            self.dropped += 1   # (the server does not answer and MAX_NOTED wait: client-go's queue is full)
            log.debug("event dropped: %d noted wait for a server that does not answer", len(self._noted))
            return
        self._noted.append(build(self.clock, obj, event_type, reason, message, component, field_path))
        if len(self._noted) >= MAX_NOTED:
            self._write()
        else:
            self.queue.add(self.KEY)

    def flush(self) -> None:
        """Write what is noted now, a retry's wait cut short (a stop: the last chance to write them)."""
        self._retry_at = None
        self._write()

    def sync(self, key: Hashable) -> None:
        self._write(WRITES_PER_SYNC)

    def _write(self, limit: int | None = None) -> None:
        """Write the Events noted, in order (`limit`: at most that many, the key queued again for the rest)."""
        if self._retry_at is not None:
            if self.clock.monotonic() < self._retry_at - 1e-6:
                return   # (noted while waiting: the timer tries them all, in order)
            self._retry_at = None
        if limit is not None and len(self._noted) > limit:
            noted, self._noted = self._noted[:limit], self._noted[limit:]
        else:
            noted, self._noted = self._noted, []
        for i, event in enumerate(noted):
            try:
                write(self.client, event)
            except errors.Unreachable as exc:
                self._tries += 1
                if self._tries < MAX_TRIES:
                    self._noted[:0] = noted[i:]   # (in order: the ones after it wait too)
                    self._retry_at = self.clock.monotonic() + RETRY_SECONDS
                    self.queue.add_after(self.KEY, RETRY_SECONDS, chore=True)
                    return
                self.dropped += 1
                log.warning("event %s/%s dropped: not written after %d tries (%s)", event["metadata"]["namespace"],
                            event["metadata"]["name"], self._tries, exc)
            except BaseException:
                self._noted[:0] = noted[i:]   # (not lost: written again when the key is retried)
                raise
            self._tries = 0
        if limit is not None and self._noted:
            self.queue.add(self.KEY)   # (the rest: in the next sync)


def build(clock: clock_mod.Clock, obj: Obj, event_type: str, reason: str, message: str,
          component: str = "vclite", field_path: str = "") -> Obj:
    """The Event about `obj` (a part of it: `field_path`, e.g. a pod's `spec.containers{main}`, as the
    kubelet names a container), as of now, named `<object>.<UnixNano in hex>` as client-go names it."""
    ns = meta.namespace(obj) or "default"
    t = clock.now()
    stamp = int(t.timestamp()) * 10**9 + t.microsecond * 1000
    with _written_lock:   # Events of an object at one instant (a virtual clock): a nanosecond apart, in order
        stamp = max(stamp, _last_stamp.pop(meta.uid(obj), -1) + 1)
        _last_stamp[meta.uid(obj)] = stamp
        if len(_last_stamp) > CACHE_SIZE:
            _last_stamp.popitem(last=False)
    ev_name = f"{meta.name(obj)}.{stamp:x}"
    now = clock_mod.format_time(t)
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": ev_name, "namespace": ns},
        "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.name(obj),
                           "namespace": meta.namespace(obj), "uid": meta.uid(obj),
                           **({"fieldPath": field_path} if field_path else {})},
        "type": event_type, "reason": reason, "message": message, "count": 1,
        "firstTimestamp": now, "lastTimestamp": now, "source": {"component": component},
    }
    return event


def _key(event: Obj) -> tuple:
    inv = event.get("involvedObject") or {}
    return (inv.get("uid"), inv.get("kind"), inv.get("namespace"), inv.get("name"), inv.get("fieldPath"),
            event.get("type"), event.get("reason"), event.get("message"), (event.get("source") or {}).get("component"))


def _remember(key: tuple, namespace: str, name: str) -> None:
    with _written_lock:
        _written[key] = (namespace, name)
        _written.move_to_end(key)
        while len(_written) > CACHE_SIZE:
            _written.popitem(last=False)


def _bump(client: Any, key: tuple, event: Obj) -> bool:
    """Count `event` on the Event written for it before, if that one is still there."""
    with _written_lock:
        where = _written.get(key)
    if where is None:
        return False
    try:
        existing = client.get(kinds.EVENT, *where)
    except errors.Unreachable:
        raise
    except errors.ApiError:
        return False
    if _key(existing) != key:
        return False
    existing["count"] = int(existing.get("count", 1)) + 1
    existing["lastTimestamp"] = event["lastTimestamp"]
    try:
        client.update(existing)
    except errors.Unreachable:
        raise
    except errors.ApiError:
        pass
    _remember(key, *where)
    return True


def write(client: Any, event: Obj) -> None:
    """Create the Event, or bump the count (and lastTimestamp) of the one written for the same
    thing before. An event the server refuses is dropped; errors.Unreachable (no answer) is raised, for the
    Recorder to try again."""
    key = _key(event)
    if _bump(client, key, event):
        return
    md = event["metadata"]
    base, _, stamp = md["name"].rpartition(".")
    for i in range(NAME_ATTEMPTS):
        if i:   # the name is taken: the next nanosecond
            event = {**event, "metadata": {**md, "name": f"{base}.{int(stamp, 16) + i:x}"}}
        try:
            client.create(event)
        except errors.AlreadyExists:
            continue
        except errors.Unreachable:
            raise
        except errors.ApiError:
            return
        _remember(key, md["namespace"], event["metadata"]["name"])
        return


def record(client: Any, clock: clock_mod.Clock, obj: Obj, event_type: str, reason: str, message: str,
           component: str = "vclite", field_path: str = "") -> None:
    """Create (or bump the count of) an Event about `obj` now. `event_type` is Normal or Warning.
    Never raises: an event that cannot be written is dropped (not tried again: a Recorder does that)."""
    try:
        write(client, build(clock, obj, event_type, reason, message, component, field_path))
    except errors.Unreachable as exc:
        log.debug("event about %s dropped: %s", meta.key(obj), exc)
