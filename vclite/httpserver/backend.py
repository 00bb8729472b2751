"""What the HTTP server serves: the in-process Client plus the few read-only views it needs.

`Backend.of_client` adapts an `apiserver.inprocess.InProcessClient` (whose store exposes the
current resourceVersion and read-only iteration); tests build one from `inprocess.new_client()`.
The kinds served as views of a stored kind (events.k8s.io/v1 Events) are converted on the way
(views.py).
The server never writes anywhere but through `client`. `select` returns the stored objects
themselves (no copies): callers serialise them at once and never modify them — a list of 1,000
JobFlows costs no deep copy.
"""
from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Callable, Iterable, Protocol

from vclite.api import kinds
from vclite.lib import clock as clock_mod
from vclite.httpserver import views
from vclite.lib import errors
from vclite.store import selectors

Obj = dict[str, Any]
LogPath = Callable[[str, str, str, bool], pathlib.Path]   # (namespace, pod, container, previous)


class PodExec(Protocol):
    """What `pods/exec`, `pods/attach`, `pods/portforward` and the metrics API (`kubectl top`) need of the
    local executor (executor.LocalExecutor)."""

    def container_usage(self) -> dict[str, dict[str, Any]]: ...

    def runs(self, namespace: str, pod: str) -> bool: ...

    def exec_problem(self, namespace: str, pod: str, container: str) -> str | None: ...

    async def exec(self, namespace: str, pod: str, container: str, argv: list[str], *, stdin: bool, stdout: bool,
                   stderr: bool, tty: bool) -> Any: ...

    def attach_problem(self, namespace: str, pod: str, container: str) -> str | None: ...

    async def attach(self, namespace: str, pod: str, container: str, *, stdin: bool, output: int | None) -> Any: ...


@dataclasses.dataclass
class Backend:
    client: Any                                        # the Client protocol (in-process)
    clock: clock_mod.Clock
    resource_version: Callable[[], str]                # the newest resourceVersion of the whole store
    objects: Callable[[kinds.Kind], Iterable[Obj]]     # stored objects, read-only
    log_path: LogPath | None = None                    # where a pod container's log is (local executor)
    pod_exec: PodExec | None = None                    # commands run in a pod's container (local executor)
    # the objects of a kind as they were at a resourceVersion (read-only; errors.Gone when too old)
    snapshot: Callable[[kinds.Kind, int], Iterable[Obj]] | None = None
    # where the API is served, (ip, port): the Endpoints of `default/kubernetes` (apiservice.py); None in tests
    apiserver: tuple[str, int] | None = None

    def select(self, kind: kinds.Kind, namespace: str | None, label_selector: str | None = None,
               field_selector: str | None = None, at: int | None = None) -> list[Obj]:
        """Stored objects (read-only, not copies) of `kind` in `namespace` (None: all) matching both
        selectors, as they are or (`at`) as they were at that resourceVersion; a malformed selector
        raises BadRequest, a version older than the watch history Gone."""
        lp = selectors.label_predicate(label_selector)
        fp = selectors.field_predicate(field_selector, kind.selector_kind)
        if at is not None and self.snapshot is None:
            raise errors.BadRequest("this server cannot list the state at a resourceVersion")
        found = self.objects(kind) if at is None or self.snapshot is None else self.snapshot(kind, at)
        objs = found if namespace is None or not kind.namespaced else (
            o for o in found if (o.get("metadata") or {}).get("namespace") == namespace)
        return [o for o in objs if lp(o) and fp(o)]

    @classmethod
    def of_client(cls, client: Any, log_path: LogPath | None = None, pod_exec: PodExec | None = None) -> "Backend":
        store = client.store
        return cls(client=views.ViewClient(client), clock=client.clock,
                   resource_version=lambda: store.resource_version,
                   objects=lambda kind: views.shown(kind, store.iter(kinds.VIEWS.get(kind, kind))),
                   log_path=log_path, pod_exec=pod_exec,
                   snapshot=lambda kind, at: views.shown(kind, store.snapshot(kinds.VIEWS.get(kind, kind), at)))
