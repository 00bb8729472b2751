"""The vocabulary every admission module shares: the operation being admitted, the read-only View of
stored objects the apiserver lends, and the switches the apiserver may set.

Kept apart from admit.py so the per-kind modules can use it without importing the dispatcher.
No logic here.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Protocol

from vclite.api import kinds


class Operation(enum.StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    UPDATE_STATUS = "UPDATE_STATUS"
    DELETE = "DELETE"


class View(Protocol):
    """Read-only look at stored objects, given by the apiserver. `get` returns None when absent.
    A view may also carry a `require_command: bool` attribute (see Options); admit reads it when the
    caller does not pass `require_command` itself; and a `webhook: WebhookConfig` (the default without)."""

    def get(self, kind: kinds.Kind, namespace: str, name: str) -> dict[str, Any] | None: ...

    def list(self, kind: kinds.Kind, namespace: str | None = None) -> list[dict[str, Any]]: ...


@dataclasses.dataclass(frozen=True)
class Options:
    """require_command: every container of a vcjob/JobTemplate task must name a command or args, because
    the embedded executor runs pods as local processes (on by default; server mode in front of a real
    runtime may turn it off)."""

    require_command: bool = True


MAX_QUEUE_DEPTH = 5   # vc-webhook-manager's --max-queue-depth default


@dataclasses.dataclass(frozen=True)
class WebhookConfig:
    """Volcano's admission webhook flags (vc-webhook-manager) that change what its queue webhook refuses:
    `max_queue_depth` (`--max-queue-depth`): how many levels below `root` a queue may be; `queue_allocated_pods_
    check` (`--enable-queue-allocated-pods-check`): a queue whose `status.allocated` counts pods may not be
    deleted."""

    max_queue_depth: int = MAX_QUEUE_DEPTH
    queue_allocated_pods_check: bool = False


def webhook_of(view: Any) -> WebhookConfig:
    return getattr(view, "webhook", None) or WebhookConfig()
