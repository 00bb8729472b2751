"""The Client protocol every controller, the scheduler and the executor use to reach the API.

The same protocol is implemented in-process (admission ∘ store, `apiserver.inprocess`), over HTTP
against `vcctl server`, and against a real Kubernetes cluster, which is what lets one controller
code base run in all three modes.

Contract:
- Objects are JSON-shaped dicts. Objects returned by `get` and `list` are the caller's own copies;
  objects returned by writes (`create`, `update`, `update_status`, `patch`) are read-only (the
  in-process client shares them with its store): copy one to change it. The status given to
  `update_status` is handed over: the caller must not change it (or anything in it) afterwards —
  the in-process client stores it as it is, without a copy.
- `create` runs mutating then validating admission; `update` writes spec and metadata (status in
  the argument is ignored); `update_status` writes only status. A non-empty
  `metadata.resourceVersion` in the argument must match the stored one, else `Conflict`.
- Errors are `vclite.lib.errors.ApiError` subclasses (NotFound, AlreadyExists, Conflict, Invalid…).
- `watch` handlers are called synchronously after each committed write; a handler must only
  record work (enqueue a key), never write through the client. The objects in a WatchEvent are
  shared and read-only: a handler that needs to keep or change one copies it.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Protocol

from vclite.api import kinds

Obj = dict[str, Any]


class EventType(enum.StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"


@dataclasses.dataclass(frozen=True)
class WatchEvent:
    type: EventType
    kind: kinds.Kind
    object: Obj          # the object after the change (for DELETED: the last state)
    old: Obj | None      # the object before the change (None for ADDED)


WatchHandler = Callable[[WatchEvent], None]


class Subscription(Protocol):
    def cancel(self) -> None: ...


class Client(Protocol):
    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj: ...

    def list(self, kind: kinds.Kind, namespace: str | None = None, label_selector: str | dict | None = None,
             field_selector: str | None = None) -> list[Obj]: ...

    def create(self, obj: Obj) -> Obj: ...

    def update(self, obj: Obj) -> Obj: ...

    def update_status(self, obj: Obj) -> Obj: ...

    def patch(self, kind: kinds.Kind, namespace: str, name: str, patch: Obj, status: bool = False) -> Obj: ...

    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> None:
        """Assign a pod to a node through pods/binding (Conflict if it is assigned already)."""

    def delete(self, kind: kinds.Kind, namespace: str, name: str, propagation: str = "Background",
               grace_period: int | None = None, preconditions: Obj | None = None) -> Obj | None:
        """Delete (a running pod gracefully: see store/memory.py); `grace_period`: DeleteOptions'
        gracePeriodSeconds (0: at once); `preconditions`: DeleteOptions' (`uid`, `resourceVersion`), Conflict
        when the object does not meet them."""

    def watch(self, kind: kinds.Kind | None, handler: WatchHandler,
              resource_version: str | None = None) -> Subscription: ...
