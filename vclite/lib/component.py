"""The shape of an L5 component (controller, scheduler, executor) as the runtime drives it.

A component registers watches in `start()`; its watch handlers only add keys to `queue`.
The runtime pops ready keys and calls `sync(key)`; if `sync` raises, the runtime re-adds the key
with rate-limited back-off (and, after `max_requeues`, gives up and records a Warning event) — unless the
component has `retries_forever = True` (Volcano's controllers that never drop a key: its queue's back-off
is then capped at workqueue.CONTROLLER_MAX_DELAY, as client-go's).
`sync` must be idempotent and level-triggered: it reads the current state and converges it.
"""
from __future__ import annotations

from typing import Hashable, Protocol

from vclite.lib import workqueue


class Component(Protocol):
    name: str
    queue: workqueue.WorkQueue

    def start(self) -> None: ...

    def sync(self, key: Hashable) -> None: ...
