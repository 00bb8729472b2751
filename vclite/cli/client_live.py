"""`vcctl jobflow get NAME -w`: follow one JobFlow on a server live, until it finishes.

Lists then watches (through the Kubernetes API only) the JobFlow, its vcjobs (label
`volcano.sh/createdByJobFlow=<ns>.<name>`), the PodGroups and Pods of its namespace and its vcjobs'
FailedCreate Events (why a vcjob lacks pods: the API refused them) into a local cache, and draws
`viewdraw.render` of that cache — the same live view as `vcctl run` — on every change (at most 10 times a
second; once a second for the elapsed times). When stdout is not a terminal it prints a line per phase
change instead, from the JobFlow's and its vcjobs' watch events themselves, with `vcctl run`'s code
(phasechanges.py: every phase passed, a vcjob's Restarting between two reads too; runlines.py: a loop's items
counted in a line per loop flow, written once their counts settle; each flow's detail, flownotes.py, once per
change) and a container's crash loop once; what was listed first, in the order each object reached its phase (a
late start: a finished JobFlow's line after its vcjobs'), then each batch of events in the order the server wrote it
(resourceVersion), and the final view at the end — once the vcjobs the JobFlow's status says ended are ended in the
cache too (their watch may lag: SETTLE_WAIT at most).
Returns the exit status: 0 the flow succeeded, 1 it failed or was deleted, 130 interrupted.

A big flow (10,000 vcjobs, as many pods) takes seconds to list, so each kind is listed and watched on
its own thread, all at once, and the JobFlow that `get` has just read is not read again: the first
frame waits at most FIRST_FRAME_WAIT for the lists, then draws what has come (the JobFlow's status
knows every flow's phase), and each list redraws when it lands. Pods that Succeeded are left out (a
field selector): the view reads pods only to say why a job waits or failed.

Watch handlers (and the list threads) only update the cache under its lock and set an Event; all
drawing happens on the calling thread.
"""
from __future__ import annotations

import io
import threading
import time
from typing import Any

from rich.console import Console
from rich.live import Live

from vclite.api import batch, flow, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.cli import phasechanges, runlines, view, viewdraw
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
DONE = frozenset({flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED})
REDRAW_GAP = 0.1       # seconds: at most 10 redraws a second
TICK = 1.0             # seconds: redraw the elapsed times when nothing changes
FIRST_FRAME_WAIT = 0.15  # seconds the first frame waits for every list before it draws what has come
SETTLE_WAIT = 2.0       # seconds the last frame waits for the vcjobs' watch to catch up with the finished JobFlow
NOT_SUCCEEDED = "status.phase!=Succeeded"   # the pods the view reads
# the Events the view reads: the vcjob controller's FailedCreate, a vcjob's pods the API refused (a missing
# ServiceAccount, a ResourceQuota exceeded), which says why a job waits
FAILED_CREATE = "involvedObject.kind=Job,reason=FailedCreate"
PHASE_KINDS = frozenset({kinds.JOBFLOW.kind, kinds.JOB.kind})   # the kinds whose phases have lines
UNWRAPPED = 1000   # columns a frame written to a file or a pipe is drawn in: no row wrapped (rich's default: 80)


def unwrapped(renderable: Any) -> str:
    """`renderable` as plain text for a file or a pipe: each row on one line, as wide as it needs, without the
    spaces that pad it to the table's width."""
    out = Console(file=io.StringIO(), width=UNWRAPPED, highlight=False, color_system=None)
    out.print(renderable)
    return "".join(line.rstrip() + "\n" for line in out.file.getvalue().splitlines())


class Cache:
    """The watched objects by kind, kept current by watch handlers (on watch threads). With `events` (the lines
    written without a terminal): also every event of a JobFlow or a vcjob — a listed object as added —, for
    `drain`: the lines follow each change, not only the last state read."""

    def __init__(self, events: bool = False) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {}
        self.changed = threading.Event()
        self._events: list[tuple[str, Obj]] | None = [] if events else None
        self._listed: list[Obj] = []   # the JobFlows and vcjobs listed, not yet drained

    def seed(self, kind: kinds.Kind, objects: list[Obj]) -> None:
        with self._lock:
            self._objects[kind.kind] = {(meta.namespace(o), meta.name(o)): o for o in objects}
            if self._events is not None and kind.kind in PHASE_KINDS:
                self._listed += objects
        self.changed.set()

    def handle(self, ev: client_mod.WatchEvent) -> None:
        key = (meta.namespace(ev.object), meta.name(ev.object))
        with self._lock:
            objects = self._objects.setdefault(ev.kind.kind, {})
            if ev.type == client_mod.EventType.DELETED:
                objects.pop(key, None)
            else:
                objects[key] = ev.object
            if self._events is not None and ev.kind.kind in PHASE_KINDS:
                self._events.append((str(ev.type), ev.object))
        self.changed.set()

    def drain(self) -> list[tuple[str, Obj]]:
        """The (event type, object) of each JobFlow and vcjob event since the last call: nothing until both kinds
        are listed, then first the listed objects as ADDED in the order they reached their phase
        (phasechanges.listed_order: a finished JobFlow after its vcjobs), then the watches' events in the order
        the server wrote them (resourceVersion: a vcjob's Failed before its JobFlow's, which it caused, though they
        come on two watches); one object's events keep their order."""
        with self._lock:
            if self._events is None or not all(kind in self._objects for kind in PHASE_KINDS):
                return []
            listed, self._listed = self._listed, []
            taken, self._events = self._events, []
        added = str(client_mod.EventType.ADDED)
        return ([(added, o) for o in phasechanges.listed_order(listed)] +
                sorted(taken, key=lambda ev: _version(ev[1])))

    def seeded(self, kind: kinds.Kind) -> bool:
        with self._lock:
            return kind.kind in self._objects

    def _all(self, kind: kinds.Kind) -> list[Obj]:
        return list(self._objects.get(kind.kind, {}).values())

    def snapshot(self) -> view.Snapshot:
        with self._lock:
            events = self._all(kinds.EVENT)
            return view.Snapshot(self._all(kinds.JOBFLOW), self._all(kinds.JOB), self._all(kinds.PODGROUP),
                                 self._all(kinds.POD), create_failures=create_failures(events),
                                 podgroup_errors={(kinds.JOB.kind, *where): why for where, why in
                                                  create_failures(events, "PodGroupError").items()},
                                 claim_errors=create_failures(events, "PVCError"))


def _version(obj: Obj) -> int:
    rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(rv) if rv.isdigit() else 0


def create_failures(events: list[Obj], reason: str = "FailedCreate") -> dict[tuple[str, str], str]:
    """Each vcjob's latest FailedCreate message (or `reason`'s: PodGroupError), by (namespace, name), from its
    Events (as `vcctl run` keeps it)."""
    out: dict[tuple[str, str], str] = {}
    latest = sorted(events, key=lambda e: (str(e.get("lastTimestamp") or e.get("eventTime") or ""), _version(e)))
    for ev in latest:
        inv = ev.get("involvedObject") or {}
        if ev.get("reason") == reason and inv.get("kind") == kinds.JOB.kind:
            out[(inv.get("namespace") or meta.namespace(ev), str(inv.get("name") or ""))] = str(ev.get("message") or "")
    return out


def selectors(namespace: str, name: str) -> list[tuple[kinds.Kind, dict[str, Any]]]:
    """What to list and watch for one JobFlow, each with its selectors."""
    return [
        (kinds.JOBFLOW, {"field_selector": f"metadata.name={name}"}),
        (kinds.JOB, {"label_selector": {flow.CREATED_BY_JOB_FLOW: flow.object_string(namespace, name)}}),
        (kinds.PODGROUP, {}),
        (kinds.POD, {"field_selector": NOT_SUCCEEDED}),
        (kinds.EVENT, {"field_selector": FAILED_CREATE}),
    ]


class Loader:
    """Lists then watches each kind into the cache, every kind on its own thread at once (a list of
    10,000 objects takes seconds). `error` keeps the first failure, for the caller's thread to raise."""

    def __init__(self, client: Any, cache: Cache, namespace: str, name: str, jobflow: Obj | None = None):
        self.client, self.cache, self.namespace, self.jobflow = client, cache, namespace, jobflow
        self.kinds = selectors(namespace, name)
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._subs: list[Any] = []
        self._cancelled = False
        self._threads = [threading.Thread(target=self._open, args=(kind, sel), name=f"list-{kind.plural}",
                                          daemon=True) for kind, sel in self.kinds]

    def start(self) -> "Loader":
        for t in self._threads:
            t.start()
        return self

    def done(self) -> bool:
        return all(self.cache.seeded(kind) for kind, _ in self.kinds)

    def _open(self, kind: kinds.Kind, sel: dict[str, Any]) -> None:
        try:
            if kind is kinds.JOBFLOW and self.jobflow is not None:   # (just read by `get`)
                objects, rv = [self.jobflow], str((self.jobflow.get("metadata") or {}).get("resourceVersion") or "")
            else:
                objects, rv = self.client.list_with_version(kind, self.namespace, sel.get("label_selector"),
                                                            sel.get("field_selector"))
            self.cache.seed(kind, objects)
            sub = self.client.watch(kind, self._typed_handler(kind), rv or None, namespace=self.namespace, **sel)
        except BaseException as exc:   # raised on the caller's thread (an unreachable server, a refusal)
            if kind is kinds.EVENT and isinstance(exc, errors.Forbidden):
                self.cache.seed(kind, [])   # (a user who may not read Events: the view goes without their reasons)
                return
            with self._lock:
                self.error = self.error or exc
            self.cache.changed.set()
            return
        with self._lock:
            if not self._cancelled:
                self._subs.append(sub)
                return
        sub.cancel()

    def _typed_handler(self, kind: kinds.Kind) -> Any:
        """The cache's handler behind a decode of each added or modified object into its Go type (TypedClient.typed:
        a client that has it). One that does not decode ends the view in the decoder's words, as the typed list
        does: client-go's reflector would log it, end the watch and list again, and that list fail for as long as
        the object stays so — the view would wait for ever. A deleted object goes, as the list after it would show."""
        typed = getattr(self.client, "typed", None)
        if typed is None:
            return self.cache.handle

        def handle(ev: client_mod.WatchEvent) -> None:
            if ev.type != client_mod.EventType.DELETED:
                try:
                    typed(kind, ev.object)
                except Exception as exc:   # noqa: BLE001 - raised on the caller's thread (CommandError)
                    with self._lock:
                        self.error = self.error or exc
                    self.cache.changed.set()
                    return
            self.cache.handle(ev)
        return handle

    def check(self) -> None:
        with self._lock:
            if self.error is not None:
                raise self.error

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            subs, self._subs = self._subs, []
        for sub in subs:
            sub.cancel()


def behind(snap: view.Snapshot) -> list[str]:
    """The vcjobs that the JobFlow's status says ended but the cache still shows unfinished: their events
    have not arrived yet (the JobFlow and its vcjobs come on separate watches)."""
    out = []
    for jf in snap.jobflows:
        ns = meta.namespace(jf)
        for key, cond in ((jf.get("status") or {}).get("conditions") or {}).items():
            job = snap.job(ns, key) if isinstance(cond, dict) and cond.get("phase") in batch.TERMINAL_PHASES else None
            if job is not None and meta.phase(job) not in batch.TERMINAL_PHASES:
                out.append(key)
    return out


def follow(client: Any, namespace: str, name: str, clock: clock_mod.Clock, console: Console | None = None,
           jobflow: Obj | None = None) -> int:
    """Follow JobFlow `namespace/name` (`jobflow`: as just read, if it was) until it is Succeed or Failed;
    the exit status."""
    console = console or Console(highlight=False)
    cache = Cache(events=not console.is_terminal)
    loader = Loader(client, cache, namespace, name, jobflow)
    try:
        loader.start()
        _first_frame_wait(cache, loader)
        return _loop(cache, loader, namespace, name, clock, console)
    except KeyboardInterrupt:
        return 130
    finally:
        loader.cancel()


def _first_frame_wait(cache: Cache, loader: Loader) -> None:
    """Until every kind is listed, or FIRST_FRAME_WAIT has passed and the JobFlow is there."""
    deadline = time.monotonic() + FIRST_FRAME_WAIT
    while not loader.done() and (time.monotonic() < deadline or not cache.seeded(kinds.JOBFLOW)):
        loader.check()
        cache.changed.wait(max(0.01, deadline - time.monotonic()))
        cache.changed.clear()
    loader.check()


def _loop(cache: Cache, loader: Loader, namespace: str, name: str, clock: clock_mod.Clock, console: Console) -> int:
    live = Live(console=console, auto_refresh=False, transient=False) if console.is_terminal else None
    start, gap, settle_by = clock.monotonic(), REDRAW_GAP, 0.0
    changes = phasechanges.PhaseChanges()   # (the lines: every phase passed, each flow's detail once per change)
    crash_loops: set[tuple[str, str]] = set()   # (pod, container) whose restarts a line announced
    pause = threading.Event()  # never set: an interruptible sleep that coalesces bursts of events
    if live is not None:
        live.start()
    try:
        while True:
            loader.check()
            cache.changed.clear()
            snap = cache.snapshot()
            if not snap.jobflows:
                console.print(f"JobFlow {namespace}/{name} was deleted", highlight=False)
                return 1
            phase = meta.phase(snap.jobflows[0])
            if live is not None:
                began = time.perf_counter()
                live.update(viewdraw.render(snap, clock.now()), refresh=True)
                gap = max(REDRAW_GAP, view.redraw_gap(time.perf_counter() - began))   # (a big flow: less often)
            else:
                for ev_type, obj in cache.drain():
                    changes.observe(ev_type, obj)
                final = phase in DONE and loader.done()   # (its last lines: nothing held back)
                lines = changes.lines(clock.monotonic(), final)
                lines += [n for job in snap.jobs for pod in snap.pods_of(job)
                          for n in runlines.crash_loop_notes(pod, crash_loops)]
                for line in lines:
                    console.print(f"[{clock.monotonic() - start:7.2f}s] {line}", highlight=False, markup=False,
                                  soft_wrap=True)   # (a line of a log: never wrapped at 80 columns)
            if phase in DONE and loader.done():
                settle_by = settle_by or time.monotonic() + SETTLE_WAIT
                if not behind(snap) or time.monotonic() >= settle_by:
                    break
            if live is not None:
                cache.changed.wait(TICK)
            else:   # (lines only on changes, or when a held line is due; while settling, until settle_by at most)
                waits = [w for w in (max(0.0, settle_by - time.monotonic()) if settle_by else None,
                                     changes.due_in(clock.monotonic())) if w is not None]
                cache.changed.wait(min(waits) if waits else None)
            pause.wait(gap)
    finally:
        if live is not None:
            live.stop()
    if live is None:
        console.file.write(unwrapped(viewdraw.render(snap, clock.now())))
        console.file.flush()
    return 0 if phase == flow.FlowPhase.SUCCEED else 1
