"""`vcctl jobflow get NAME -w`: follow one JobFlow on a server live, until it finishes.

Lists then watches (through the Kubernetes API only) the JobFlow, its vcjobs (label
`volcano.sh/createdByJobFlow=<ns>.<name>`), and the PodGroups and Pods of its namespace into a local
cache, and draws `view.render` of that cache — the same live view as `vcctl run` — on every change
(at most 10 times a second; once a second for the elapsed times). When stdout is not a terminal it
prints a line per phase change instead, and the final view at the end. Returns the exit status:
0 the flow succeeded, 1 it failed or was deleted, 130 interrupted.

Watch handlers run on the watch threads: they only update the cache under its lock and set an
Event; all drawing happens on the calling thread.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from rich.console import Console
from rich.live import Live

from vclite.api import flow, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.cli import view
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]
DONE = frozenset({flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED})
REDRAW_GAP = 0.1       # seconds: at most 10 redraws a second
TICK = 1.0             # seconds: redraw the elapsed times when nothing changes


class Cache:
    """The watched objects by kind, kept current by watch handlers (on watch threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {}
        self.changed = threading.Event()

    def seed(self, kind: kinds.Kind, objects: list[Obj]) -> None:
        with self._lock:
            self._objects[kind.kind] = {(meta.namespace(o), meta.name(o)): o for o in objects}
        self.changed.set()

    def handle(self, ev: client_mod.WatchEvent) -> None:
        key = (meta.namespace(ev.object), meta.name(ev.object))
        with self._lock:
            objects = self._objects.setdefault(ev.kind.kind, {})
            if ev.type == client_mod.EventType.DELETED:
                objects.pop(key, None)
            else:
                objects[key] = ev.object
        self.changed.set()

    def _all(self, kind: kinds.Kind) -> list[Obj]:
        return list(self._objects.get(kind.kind, {}).values())

    def snapshot(self) -> view.Snapshot:
        with self._lock:
            return view.Snapshot(self._all(kinds.JOBFLOW), self._all(kinds.JOB), self._all(kinds.PODGROUP),
                                 self._all(kinds.POD))


def selectors(namespace: str, name: str) -> list[tuple[kinds.Kind, dict[str, Any]]]:
    """What to list and watch for one JobFlow, each with its selectors."""
    return [
        (kinds.JOBFLOW, {"field_selector": f"metadata.name={name}"}),
        (kinds.JOB, {"label_selector": {flow.CREATED_BY_JOB_FLOW: flow.object_string(namespace, name)}}),
        (kinds.PODGROUP, {}),
        (kinds.POD, {}),
    ]


def follow(client: Any, namespace: str, name: str, clock: clock_mod.Clock, console: Console | None = None) -> int:
    """Follow JobFlow `namespace/name` until it is Succeed or Failed; the exit status."""
    console = console or Console(highlight=False)
    cache, subs = Cache(), []
    try:
        for kind, sel in selectors(namespace, name):
            objects, rv = client.list_with_version(kind, namespace, sel.get("label_selector"),
                                                   sel.get("field_selector"))
            cache.seed(kind, objects)
            subs.append(client.watch(kind, cache.handle, rv, namespace=namespace, **sel))
        return _loop(cache, namespace, name, clock, console)
    except KeyboardInterrupt:
        return 130
    finally:
        for sub in subs:
            sub.cancel()


def _loop(cache: Cache, namespace: str, name: str, clock: clock_mod.Clock, console: Console) -> int:
    live = Live(console=console, auto_refresh=False, transient=False) if console.is_terminal else None
    start, last_phases, gap = clock.monotonic(), {}, REDRAW_GAP
    pause = threading.Event()  # never set: an interruptible sleep that coalesces bursts of events
    if live is not None:
        live.start()
    try:
        while True:
            cache.changed.clear()
            snap = cache.snapshot()
            if not snap.jobflows:
                console.print(f"JobFlow {namespace}/{name} was deleted", highlight=False)
                return 1
            phase = meta.phase(snap.jobflows[0])
            if live is not None:
                began = time.perf_counter()
                live.update(view.render(snap, clock.now()), refresh=True)
                gap = max(REDRAW_GAP, view.redraw_gap(time.perf_counter() - began))   # (a big flow: less often)
            else:
                now_phases = view.phases(snap)
                for line in view.transitions(last_phases, now_phases):
                    console.print(f"[{clock.monotonic() - start:7.2f}s] {line}", highlight=False)
                last_phases = now_phases
            if phase in DONE:
                break
            cache.changed.wait(TICK if live is not None else None)
            pause.wait(gap)
    finally:
        if live is not None:
            live.stop()
    if live is None:
        console.print(view.render(snap, clock.now()))
    return 0 if phase == flow.FlowPhase.SUCCEED else 1
