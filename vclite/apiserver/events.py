"""Recording v1 Events about objects (what `kubectl describe` shows), through any Client.

`record(client, clock, obj, ...)` writes an Event at once. `Recorder` is what the embedded control
plane gives its components instead, as client-go's event broadcaster does: `recorder.record(obj,
...)` only notes the Event (its time is the time of the call) and the recorder, a background
component, writes what it noted once nothing more urgent is ready — an Event never delays the next
job of a flow, and the Events it notes are written in the order noted (each with the time it was
noted; Events written at once by other components may be stored before them). Like client-go's,
events noted but not yet written are lost if the process dies.
"""
from __future__ import annotations

import zlib
from typing import Any, Callable, Hashable

from vclite.api import kinds, meta
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
# (obj, event_type, reason, message, component) -> None
RecordFn = Callable[..., None]
MAX_NOTED = 1000   # noted events written at once when this many wait (bounded memory under load)


def direct(client: Any, clock: clock_mod.Clock) -> RecordFn:
    """A record function that writes each Event at once (components driven without a Recorder)."""
    def record_now(obj: Obj, event_type: str, reason: str, message: str, component: str = "vclite") -> None:
        record(client, clock, obj, event_type, reason, message, component)
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

    def start(self) -> None:
        pass

    def record(self, obj: Obj, event_type: str, reason: str, message: str, component: str = "vclite") -> None:
        self._noted.append(build(self.clock, obj, event_type, reason, message, component))
        if len(self._noted) >= MAX_NOTED:
            self.sync(self.KEY)
        else:
            self.queue.add(self.KEY)

    def sync(self, key: Hashable) -> None:
        noted, self._noted = self._noted, []
        for i, event in enumerate(noted):
            try:
                write(self.client, event)
            except BaseException:
                self._noted[:0] = noted[i:]   # (not lost: written again when the key is retried)
                raise


def build(clock: clock_mod.Clock, obj: Obj, event_type: str, reason: str, message: str,
          component: str = "vclite") -> Obj:
    """The Event about `obj`, as of now. Its name is stable for the same object and message, so
    the same event again bumps the count of the first (`write`)."""
    ns = meta.namespace(obj) or "default"
    digest = zlib.crc32(f"{meta.uid(obj)}\0{message}".encode())  # stable across restarts (unlike hash())
    ev_name = f"{meta.name(obj)}.{reason.lower()}.{digest:010d}"
    now = clock_mod.format_time(clock.now())
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": ev_name, "namespace": ns},
        "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.name(obj),
                           "namespace": meta.namespace(obj), "uid": meta.uid(obj)},
        "type": event_type, "reason": reason, "message": message, "count": 1,
        "firstTimestamp": now, "lastTimestamp": now, "source": {"component": component},
    }
    return event


def write(client: Any, event: Obj) -> None:
    """Create the Event, or bump the count (and lastTimestamp) of the one already there.
    Never raises: an event that cannot be written is dropped."""
    try:
        client.create(event)   # most events are new: one write, no read first
        return
    except errors.AlreadyExists:
        pass
    except errors.ApiError:
        return
    try:
        md = event["metadata"]
        existing = client.get(kinds.EVENT, md["namespace"], md["name"])
        existing["count"] = int(existing.get("count", 1)) + 1
        existing["lastTimestamp"] = event["lastTimestamp"]
        client.update(existing)
    except errors.ApiError:
        pass


def record(client: Any, clock: clock_mod.Clock, obj: Obj, event_type: str, reason: str, message: str,
           component: str = "vclite") -> None:
    """Create (or bump the count of) an Event about `obj` now. `event_type` is Normal or Warning.
    Never raises: an event that cannot be written is dropped."""
    write(client, build(clock, obj, event_type, reason, message, component))
