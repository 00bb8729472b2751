"""Cyclic garbage collection at idle moments of the control plane, not in the middle of a burst.

CPython collects its youngest generation every 700 net allocations of container objects, wherever
the program is: often in the middle of the syncs between a job's end and the next job's start (the
critical path of a flow), where a collection adds a third of a millisecond. `collect_when_idle()`,
called by the runtime when it is about to wait (pods running, nothing ready), collects the youngest
generation early, once it holds IDLE_MIN_YOUNG allocations: the next burst starts from an empty
young generation, and a burst shorter than the threshold has no collection of its own. The middle
generation follows CPython's schedule (every `threshold1` young collections); the oldest is left to
CPython, whose rule also weighs how much of it is new. The thresholds are not changed: a long
burst still collects as usual.
"""
from __future__ import annotations

import gc

IDLE_MIN_YOUNG = 200   # fewer young allocations than this: not worth a collection now


def collect_when_idle() -> int | None:
    """Collect the young generation (or the middle one, when due) now; the generation, or None."""
    if not gc.isenabled():
        return None
    generation = owed_generation(gc.get_count(), gc.get_threshold())
    if generation is not None:
        gc.collect(generation)
    return generation


def owed_generation(counts: tuple[int, int, int], thresholds: tuple[int, int, int],
                    min_young: int = IDLE_MIN_YOUNG) -> int | None:
    """The generation to collect at an idle moment, 0 or 1 (None: not worth it). `counts` as
    gc.get_count(): net allocations since the last collection of generation 0, then collections of
    the generation below since the last of each; `thresholds` as gc.get_threshold() (0 first:
    collections off)."""
    (c0, c1, _), (t0, t1, _) = counts, thresholds
    if t0 <= 0 or c0 < min(min_young, t0):
        return None
    return 1 if c1 >= t1 else 0
