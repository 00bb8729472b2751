"""A de-duplicating work queue with delayed and rate-limited adds, as client-go's, single-threaded.

A controller's watch handlers only `add` keys; its worker pops keys with `get` and reconciles.
A key added while already queued is queued once. Delays are measured on the injected clock;
`next_ready_at()` tells the runtime when the earliest delayed key becomes ready, so it can sleep
(real clock) or jump (virtual clock) exactly that far. `on_add` is called whenever a key becomes
ready, so the runtime can wake up; it must not do work itself.

A delayed add is either progress (the default: its sync may move some job or flow forward, e.g. a
policy's timeout or a retry's back-off) or a chore (`chore=True`: clean-up and bookkeeping, e.g.
deleting a finished vcjob after its ttlSecondsAfterFinished). Both fire alike;
`next_progress_at()` ignores chores, so a run with nothing left but chores can tell it is stuck
instead of waiting an hour for a TTL.

A key added `later` is work nothing waits for (e.g. the clean-up after a vcjob finished): it waits in
a second lane, which `get` serves only once the first is empty and the runtime takes as background
work (after the pods just bound have started). Added again without `later`, it moves to the first lane.
"""
from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict
from typing import Callable, Hashable

from vclite.lib import clock as clock_mod


CONTROLLER_MAX_DELAY = 1000.0   # client-go's DefaultControllerRateLimiter: per-item back-off at most 1000 s
BACKOFF_EXPONENT_MAX = 62   # failures past which a back-off is its cap whatever the base (2 ** 62 ns > 146 years)


class WorkQueue:
    def __init__(self, clock: clock_mod.Clock, base_delay: float = 0.005, max_delay: float = 60.0,
                 on_add: Callable[[], None] | None = None):
        self._clock = clock
        self._ready: OrderedDict[Hashable, None] = OrderedDict()
        self._later: OrderedDict[Hashable, None] = OrderedDict()   # the second lane (see the docstring)
        self._delayed: list[tuple[float, int, Hashable]] = []   # progress
        self._due: dict[Hashable, float] = {}  # earliest pending delayed add per key
        self._chores: list[tuple[float, int, Hashable]] = []
        self._chore_due: dict[Hashable, float] = {}
        self._seq = itertools.count()
        self._failures: dict[Hashable, int] = {}
        self._base, self._max = base_delay, max_delay
        self.on_add = on_add

    def add(self, key: Hashable, later: bool = False) -> None:
        if key in self._ready or later and key in self._later:
            return
        if later:
            self._later[key] = None
        else:
            self._later.pop(key, None)
            self._ready[key] = None
        if self.on_add:
            self.on_add()

    def discard(self, key: Hashable) -> None:
        """Take `key` out of both lanes (not its delayed adds): its work was done another way."""
        self._ready.pop(key, None)
        self._later.pop(key, None)

    def add_after(self, key: Hashable, delay: float, chore: bool = False) -> None:
        """Add `key` once `delay` seconds have passed; `chore`: clean-up or bookkeeping that cannot
        move anything forward (see the module docstring)."""
        if delay <= 0:
            self.add(key)
            return
        due = self._clock.monotonic() + delay
        dues, heap = (self._chore_due, self._chores) if chore else (self._due, self._delayed)
        if dues.get(key, float("inf")) <= due:
            return  # an earlier delayed add of the same key and kind is already pending: coalesce
        dues[key] = due
        heapq.heappush(heap, (due, next(self._seq), key))

    def add_rate_limited(self, key: Hashable, chore: bool = False) -> None:
        """Re-queue after a failure, with per-key exponential back-off (`chore`: see add_after)."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        # (client-go's: a back-off past what a Duration holds is the cap; 2 ** n as a float overflows after
        # n = 1023, a key retried for ever every second would stop the loop in 17 minutes)
        delay = self._max if n > BACKOFF_EXPONENT_MAX else min(self._base * (2 ** n), self._max)
        self.add_after(key, delay, chore=chore)

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def _promote(self) -> None:
        delayed, chores = self._delayed, self._chores
        if not (delayed or chores):
            return
        now = self._clock.monotonic() + 1e-9
        while True:   # both kinds in the order they fell due
            if delayed and delayed[0][0] <= now and not (chores and chores[0] < delayed[0]):
                heap, dues = delayed, self._due
            elif chores and chores[0][0] <= now:
                heap, dues = chores, self._chore_due
            else:
                return
            due, _, key = heapq.heappop(heap)
            if dues.get(key) == due:
                del dues[key]
            self.add(key)

    def get(self, later: bool = True) -> Hashable | None:
        """The next ready key (removed from the queue), or None if nothing is ready now; without
        `later`, only a key of the first lane."""
        if self._delayed or self._chores:   # (most queues of a run are empty: no call for them)
            self._promote()
        if self._ready:
            return self._ready.popitem(last=False)[0]
        if later and self._later:
            return self._later.popitem(last=False)[0]
        return None

    def get_later(self) -> Hashable | None:
        """The next key of the second lane (added `later`), or None."""
        return self._later.popitem(last=False)[0] if self._later else None

    def has_ready(self) -> bool:
        self._promote()
        return bool(self._ready or self._later)

    def next_ready_at(self) -> float | None:
        """Monotonic time at which the earliest delayed key becomes ready (None if none is delayed)."""
        if self._chores:
            return min(self._chores[0][0], self._delayed[0][0]) if self._delayed else self._chores[0][0]
        return self._delayed[0][0] if self._delayed else None

    def next_progress_at(self) -> float | None:
        """`next_ready_at`, chores left out: when the earliest delayed add that may move things on fires."""
        return self._delayed[0][0] if self._delayed else None

    def timer_keys(self) -> set[Hashable]:
        """The keys a delayed add (of either kind) will make ready."""
        return {key for _, _, key in self._delayed} | {key for _, _, key in self._chores}

    def __len__(self) -> int:
        return len(self._ready) + len(self._later) + len(self._delayed) + len(self._chores)
