"""The loop every control plane shares: ready keys to syncs, retries with back-off, waiting.

Components (controllers, the scheduler, the local executor) register watches on a Client and keep
work queues; a `Loop` pops ready keys and calls `sync`, re-queues failures with back-off, and
decides how long to wait:
- `step()` processes every ready key, deterministically (components in a fixed order, keys FIFO),
  without moving the clock or waiting — the unit tests' handle;
- `settle()` (virtual clock) repeats step() and jumps the clock to the next timer until nothing is
  left (but the retries of a key a component that never gives up keeps failing): a day of cluster time in
  milliseconds;
- `run_until(done)` (asyncio, real clock) wakes on new work, on the next timer, or when a pod's
  process changes state — never on a fixed period. It runs syncs for STEP_BUDGET at most, then gives the
  event loop YIELD_TURNS turns (a server's requests that came in meanwhile are answered before the next
  burst), and lets the pods just bound start their processes (a few a turn: `starting()`) before going on.
A failed sync is re-queued with back-off; after `max_requeues` retries the key is dropped (recorded in
`failures`), as Volcano's job, queue, JobFlow and JobTemplate controllers drop a request after
`--max-requeue-num` (15), unless the component says `retries_forever` (Volcano's PodGroup, CronJob, garbage
collector and HyperNode controllers and kube-controller-manager's retry for ever, client-go's back-off capped
at 1000 s; the executor as a kubelet, the scheduler as Volcano's periodic sessions, with shorter caps): its
retries then go on, as chores.
A failed sync is logged with its traceback the first time a component fails with that error; its
repeats (each retry of a sync that keeps failing) are one line each, with how often it was seen — at
INFO for an Expected error (pods the API refused: the first warning and the objects' Events say it), so
`vcctl run`, which shows warnings only, is not filled with a refused create's retries; a server logs them.

`runtime.Runtime` (the embedded control plane) and `remote.ControllerRuntime` (the JobFlow
controllers against a Kubernetes cluster) are Loops over different components and clients.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import time
from typing import Callable, Hashable

from vclite.lib import clock as clock_mod
from vclite.lib import component as component_mod
from vclite.lib import errors
from vclite.runtime import idlegc

log = logging.getLogger("vclite.runtime")
FOREGROUND_STREAK = 64   # foreground syncs in a row before a waiting background key gets its turn
IDLE_GC_MIN_WAIT = 0.002   # seconds: a timer due sooner is not kept waiting by an idle-time collection
# seconds of syncs run_until runs in a row before the event loop gets its turns: a server's requests, pod
# exits and timers wait about this long behind a big flow's burst of work (a single sync is not cut short:
# the components bound their own, e.g. the pods a vcjob sync creates)
STEP_BUDGET = 0.01
# event-loop iterations given after a burst that spent its budget with work left: a request that came in
# during the burst is read (its handler's task woken), handled and answered before the next burst — one
# turn (a bare sleep(0)) put the next burst before the handler, so a request waited two or three bursts
YIELD_TURNS = 3
FAILURES_REMEMBERED = 1024   # distinct (component, error) pairs whose traceback was logged, the latest kept


class Interrupted(Exception):
    """run_until stopped because request_stop() was called (e.g. on Ctrl-C)."""


@dataclasses.dataclass
class SyncFailure:
    component: str
    key: Hashable
    error: str
    attempts: int


def _wake_up(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def _give_turns(turns: int) -> None:
    """Let the event loop run `turns` iterations (its I/O callbacks, and the tasks they wake) before going on."""
    for _ in range(turns):
        await asyncio.sleep(0)


def _first_ready(components: list[component_mod.Component],
                 later: bool = True) -> tuple[component_mod.Component, Hashable] | None:
    for c in components:
        key = c.queue.get(later)
        if key is not None:
            return c, key
    return None


def _first_background(background: list[component_mod.Component], others: list[component_mod.Component]
                      ) -> tuple[component_mod.Component, Hashable] | None:
    """A background component's key, else a key another component queued for later."""
    picked = _first_ready(background)
    if picked is not None:
        return picked
    for c in others:
        key = c.queue.get_later()
        if key is not None:
            return c, key
    return None


class Loop:
    """Drives `components` (in priority order) on `clock`; see the module docstring."""

    def __init__(self, clock: clock_mod.Clock, components: list[component_mod.Component], max_requeues: int = 15):
        self.clock = clock
        self.components = components
        self.max_requeues = max_requeues
        self.failures: list[SyncFailure] = []
        self._failures_seen: dict[tuple[str, str], int] = {}   # (component, error) -> times logged
        self._wake: asyncio.Future[None] | None = None   # run_until's: done when work is added
        for c in self.components:
            c.queue.on_add = self._on_add
        self._started = False
        self._stop_requested = False
        self._failed_again: set[tuple[str, Hashable]] | None = None   # settle()'s: keys failed past max_requeues
        self.on_sync: Callable[[str, float], None] | None = None  # (component, seconds) after each sync: metrics
        self.timer: Callable[[], float] = time.perf_counter   # what a step's budget is counted on
        self.budget_spent = False   # did the last step return for its budget, with work left?

    # ---- driving -----------------------------------------------------------------------------
    def start(self) -> None:
        if not self._started:
            self._started = True
            for c in self.components:
                c.start()
            # What exists now (modules, libraries, the initial objects) lives as long as the process:
            # out of the collector's sight, every collection from here on is cheaper (a tenth of a
            # quick job's CPU time went to collections re-scanning it). Reference counting still
            # frees these objects; only a reference cycle among them would stay.
            gc.freeze()

    def _on_add(self) -> None:
        if self._wake is not None:
            _wake_up(self._wake)

    def request_stop(self) -> None:
        """Make run_until raise Interrupted at its next wake-up (safe to call from a signal handler
        registered with loop.add_signal_handler). A flag, not task cancellation, so the request
        cannot be lost in a race with a wake-up."""
        self._stop_requested = True
        self._on_add()

    def _sync_one(self, c: component_mod.Component, key: Hashable) -> None:
        started = time.perf_counter()
        try:
            c.sync(key)
            c.queue.forget(key)
            if self._failed_again:
                self._failed_again.discard((c.name, key))
        except errors.Conflict:
            c.queue.add_rate_limited(key)  # somebody wrote first: re-read and retry
        except Exception as exc:  # noqa: BLE001 - a failing sync must not stop the control plane
            attempts = c.queue.num_requeues(key) + 1
            self._log_failure(c.name, key, attempts, exc)
            spent = self.max_requeues >= 0 and attempts > self.max_requeues
            if spent and not getattr(c, "retries_forever", False):
                c.queue.forget(key)
                self.failures.append(SyncFailure(c.name, key, f"{type(exc).__name__}: {exc}", attempts))
            else:   # (a retry only something else can let succeed is a chore: errors.Expected; so is a retry
                # past max_requeues of a component that never gives up: `vcctl run` may then stop as stuck)
                c.queue.add_rate_limited(key, chore=spent or getattr(exc, "waits_on_others", False))
                if spent and self._failed_again is not None:
                    self._failed_again.add((c.name, key))
        finally:
            if self.on_sync is not None:
                self.on_sync(c.name, time.perf_counter() - started)

    def _log_failure(self, component: str, key: Hashable, attempts: int, exc: Exception) -> None:
        """A failed sync, with its traceback the first time this component fails with this error; a
        repeat (every retry of a sync that keeps failing) is one line with how often it was seen."""
        seen = (component, f"{type(exc).__name__}: {exc}")
        times = self._failures_seen.pop(seen, 0) + 1
        self._failures_seen[seen] = times   # (last: the error seen longest ago is forgotten first)
        if len(self._failures_seen) > FAILURES_REMEMBERED:
            del self._failures_seen[next(iter(self._failures_seen))]
        expected = isinstance(exc, errors.Expected)
        if times == 1:   # (an Expected error's message says it all: no traceback)
            log.warning("%s: sync %s failed (attempt %d): %s", component, key, attempts, exc,
                        exc_info=None if expected else exc)
        else:   # (an Expected one's repeats, a refused create retried, are INFO: `vcctl run` shows the first only)
            log.log(logging.INFO if expected else logging.WARNING, "%s: sync %s failed (attempt %d): %s (the same "
                    "error %d times; its traceback was logged the first time)", component, key, attempts, exc, times)

    def step(self, background: bool = True, budget: float | None = None) -> int:
        """Process every ready key of every component; return how many syncs ran. Without
        `background`, return once only background work is left (run_until lets the pods just
        bound start first) — a background key whose turn has come (the streak below) still runs.

        Components are in priority order: a key is always taken from the first component with ready
        work, so the scheduler (after the controllers and the executor) runs one session over a
        settled burst of changes instead of one per intermediate state. Background work (bookkeeping
        nothing waits for: the background components, such as Events and JobTemplate status, and the
        keys a component queued `later`, such as a finished vcjob's clean-up) comes after all the
        rest, so in a flow of quick jobs it runs while the next job's pods run; one background key
        is still taken after every FOREGROUND_STREAK foreground ones, so it cannot starve. `budget`:
        return once that many seconds have passed, even with work left (run_until then lets the event
        loop serve what else waits before it goes on)."""
        self.start()
        self.budget_spent = False
        until = None if budget is None else self.timer() + budget
        bg = [c for c in self.components if getattr(c, "background", False)]
        fg = [c for c in self.components if c not in bg]
        done = streak = 0
        while True:
            picked, in_background = None, True
            if streak >= FOREGROUND_STREAK:
                picked = _first_background(bg, fg)
            if picked is None:
                picked, in_background = _first_ready(fg, later=False), False
            if picked is None and background:
                picked, in_background = _first_background(bg, fg), True
            if picked is None:
                return done
            streak = 0 if in_background else streak + 1
            self._sync_one(*picked)
            done += 1
            if until is not None and self.timer() >= until:
                self.budget_spent = self.has_ready_work()
                return done

    def next_timer(self) -> float | None:
        times = [t for c in self.components if (t := c.queue.next_ready_at()) is not None]
        return min(times) if times else None

    def awaits_progress(self) -> bool:
        """Could anything still move forward by itself: a pod running, work ready, or a timer that is
        not a chore (a TTL clean-up, a bookkeeping write: they fire, but cannot unblock anything)?"""
        return self.busy_pods() > 0 or self.has_ready_work() or \
            any(c.queue.next_progress_at() is not None for c in self.components)

    def has_ready_work(self) -> bool:
        return any(c.queue.has_ready() for c in self.components)

    def busy_pods(self) -> int:
        """Pods whose processes are still alive (none here: the embedded runtime runs pods)."""
        return 0

    def starting(self) -> bool:
        """Are pods' processes waiting for their turn to start (none here: the embedded runtime starts them)?"""
        return False

    def _only_spent_retries(self, failed_again: set[tuple[str, Hashable]]) -> bool:
        """Is every timer left the retry of a key in `failed_again` (and no work ready)?"""
        return not self.has_ready_work() and all(
            (c.name, key) in failed_again for c in self.components for key in c.queue.timer_keys())

    def settle(self, max_iterations: int = 1_000_000) -> int:
        """Virtual clock only: step and jump to the next timer until nothing is left to do but the retries
        of keys a component that never gives up failed past max_requeues during this call (each jump would be
        one more failure, for ever; real runs retry them on, and so does the next settle(), once)."""
        if not getattr(self.clock, "virtual", False):
            raise RuntimeError("settle() needs a VirtualClock; use run_until() with a real clock")
        total = 0
        self._failed_again = failed_again = set()
        try:
            for _ in range(max_iterations):
                total += self.step()
                t = self.next_timer()
                if t is None or failed_again and self._only_spent_retries(failed_again):
                    break
                self.clock.jump_to(t)
        finally:
            self._failed_again = None
        return total

    async def run_until(self, done: Callable[[], bool], timeout: float | None = None,
                        on_tick: Callable[[], None] | None = None, tick: float = 0.1,
                        chores: bool = False) -> bool:
        """Run until `done()` holds (True), the timeout passes, or nothing can move forward any more
        (False): no pod running, no work ready, no timer but chores (`WorkQueue.add_after`). With
        `chores`, pending chores keep it running too (a server, whose clean-ups must still happen).

        `on_tick` (e.g. a live view refresh) is called after each burst of work and at least every
        `tick` seconds while something runs."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else self.clock.monotonic() + timeout
        while True:
            if self._stop_requested:
                raise Interrupted()
            self._wake = loop.create_future()   # (a bare future: one loop turn from the add to waking up)
            if self.step(background=False, budget=STEP_BUDGET) and self.has_ready_work():
                # the pods just started by the executor spawn their processes first; after a spent budget,
                # what came in meanwhile (a server's requests) is answered first
                await _give_turns(YIELD_TURNS if self.budget_spent else 1)
            while self.starting():   # all of them before more work: a few a turn, the loop's other callbacks between
                await asyncio.sleep(0)
            self.step(budget=STEP_BUDGET)
            if on_tick:
                on_tick()
            if done():
                return True
            now = self.clock.monotonic()
            if deadline is not None and now >= deadline:
                return False
            if not (self.awaits_progress() or chores and self.next_timer() is not None):
                return False  # quiescent: nothing running, nothing (but chores) scheduled to happen
            if self.has_ready_work():
                # the budget ran out: what came in meanwhile first (not a wait on self._wake: the work added during
                # the burst has already woken it, and awaiting a done future gives the event loop no turn at all)
                await _give_turns(YIELD_TURNS)
                continue
            nxt = self.next_timer()
            waits = [w for w in (None if nxt is None else nxt - now,
                                 None if deadline is None else deadline - now,
                                 tick if on_tick else None) if w is not None]
            wait = max(0.0, min(waits)) if waits else None
            if self._stop_requested:
                continue
            if not self._wake.done() and (wait is None or wait > IDLE_GC_MIN_WAIT):
                idlegc.collect_when_idle()   # (collections at moments nothing waits for)
            timer = None if wait is None else loop.call_later(wait, _wake_up, self._wake)
            try:
                await self._wake
            finally:
                if timer is not None:
                    timer.cancel()

    async def serve(self) -> None:
        """Run until request_stop(): work as it comes, timers as they fall due, asleep in between
        (a control plane fed by watches: quiescence is not the end)."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                await self.run_until(lambda: False, chores=True)
            except Interrupted:
                return
            self._wake = loop.create_future()   # (made before the check: an add from now on wakes it)
            if self._stop_requested:
                return
            if not self.has_ready_work() and self.next_timer() is None:
                await self._wake
