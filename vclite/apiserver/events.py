"""Recording v1 Events about objects (what `kubectl describe` shows), through any Client."""
from __future__ import annotations

import zlib
from typing import Any

from vclite.api import kinds, meta
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]


def record(client: Any, clock: clock_mod.Clock, obj: Obj, event_type: str, reason: str, message: str,
           component: str = "vclite") -> None:
    """Create (or bump the count of) an Event about `obj`. `event_type` is Normal or Warning.
    Never raises: an event that cannot be written is dropped."""
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
    try:
        client.create(event)   # most events are new: one write, no read first
        return
    except errors.AlreadyExists:
        pass
    except errors.ApiError:
        return
    try:
        existing = client.get(kinds.EVENT, ns, ev_name)
        existing["count"] = int(existing.get("count", 1)) + 1
        existing["lastTimestamp"] = now
        client.update(existing)
    except errors.ApiError:
        pass
