"""An oracle for a flow's retries in time, written from docs/jobflow-primitives.md ("Retry", "Suspend and
resume") and docs/jobflow-expressions.md (`retry: {limit, backoff}`), not from the engine: when each attempt's
vcjob is created, the `activeDeadlineSeconds` a retry attempt's pods get, and why the last failure was not
retried — given each attempt's run time and phase, the moments the JobFlow is suspended or resumed, the
moments a failed vcjob is deleted during its back-off (its TTL), and a time the controller is down.

Time is counted in seconds from the first attempt's creation (0), in ticks of half a second; attempts run
whole or half seconds; the JobFlow is suspended or resumed, and the controller goes down or comes back, on whole
seconds. In each tick, in this order: the controller, when it comes back from being down, rebuilds its state
from the stored status and the vcjobs (`restart`); the controller acts (a retry due is created); the attempt
running ends, if it ends then (and is deleted at once if so drawn); the JobFlow is suspended or resumed, if it
is then. While the controller is down nothing is observed or created (the vcjobs still end, the annotation
still changes). A vcjob's times are kept to the second (`lastTransitionTime`, `creationTimestamp`).

The rules, as the docs state them (n = retries so far; `delay(n) = duration × factor^n`, at most `cap`;
`factor` 1 when absent; `first` = the first attempt's creation; `end` = first + maxDuration):
- the back-off runs from the failure: the vcjob's transition time, kept to the second — or when the controller
  sees the failure within that second, from then; a controller that restarts during the back-off knows the
  failure to the second only, so it waits the same to the second (its retry may come up to a second sooner);
- an attempt that ends Failed or Terminated is retried unless n = limit (`no retries left (limit L)`), or the
  failure came after `end` (`maxDuration … has passed`), or its back-off would end after `end` (`a … back-off
  would end after maxDuration …`) — decided as it is seen failing; else the retry is due when the back-off ends;
- a retry due is created at the first moment at or after it when the controller is up and the JobFlow not
  suspended — unless that moment is after `end` (`… passed while the retry waited`): then it is not retried;
- a retry attempt created at `t` has `activeDeadlineSeconds = end - t` in whole seconds (at least 1); a first
  attempt, or any
  attempt without maxDuration, has none;
- a failed vcjob deleted during its back-off counts as that attempt: the retry is created as if it were there;
- the failure counts only when no retry is left: the flow's outcome is its last attempt's phase; its condition
  then says `RetriesExhausted` and why; `retries` counts the retries made and `firstCreateTime` is the first
  attempt's creation once there was a retry.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from vclite.lib import clock as clock_mod

FAILURES = ("Failed", "Terminated")


@dataclasses.dataclass(frozen=True)
class Retry:
    limit: int
    duration: int
    factor: int | None = None
    cap: int | None = None
    max_duration: int | None = None

    def spec(self) -> dict:
        backoff: dict = {"duration": f"{self.duration}s"}
        if self.factor is not None:
            backoff["factor"] = self.factor
        if self.cap is not None:
            backoff["cap"] = f"{self.cap}s"
        if self.max_duration is not None:
            backoff["maxDuration"] = f"{self.max_duration}s"
        return {"limit": self.limit, "backoff": backoff}

    def delay(self, n: int) -> int:
        wait = self.duration * (self.factor or 1) ** n
        return min(wait, self.cap) if self.cap is not None else wait


@dataclasses.dataclass(frozen=True)
class Script:
    retry: Retry
    attempts: Sequence[tuple[float, str]]   # (seconds it runs, its phase), one per attempt; the last repeats
    toggles: frozenset[int] = frozenset()   # ticks at which the suspension is switched (suspended, resumed, …)
    deleted: frozenset[int] = frozenset()   # attempts whose failed vcjob is deleted as it fails (a TTL of 0)
    down: tuple[int, int] | None = None     # the controller is down for the ticks [a, b); rebuilt at b

    def suspended_after(self, t: float) -> bool:
        """Whether the JobFlow is suspended once the tick at `t` is over (False before 0)."""
        return sum(1 for s in self.toggles if s <= t) % 2 == 1

    def up(self, t: float) -> bool:
        return self.down is None or not self.down[0] <= t < self.down[1]

    def attempt(self, k: int) -> tuple[float, str]:
        return self.attempts[min(k, len(self.attempts) - 1)]


TICK = 0.5


@dataclasses.dataclass(frozen=True)
class Attempt:
    created: float
    deadline: int | None            # its pods' activeDeadlineSeconds
    ends: float
    phase: str


@dataclasses.dataclass(frozen=True)
class Prediction:
    attempts: tuple[Attempt, ...]
    outcome: str                    # the flow's: the last attempt's phase
    reason: str                     # "" (Completed), RetriesExhausted
    message: str                    # why the last failure was not retried
    retries: int


def fmt_time(seconds: int) -> str:
    return f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def predict(script: Script, horizon: int) -> Prediction:
    r = script.retry
    first = 0
    end = None if r.max_duration is None else first + r.max_duration
    limit_text = "" if end is None else (f"maxDuration {clock_mod.format_duration(r.max_duration)} from the first "
                                         f"attempt ({fmt_time(first)})")
    made: list[Attempt] = []
    created: float = 0
    for n in range(r.limit + 1):
        run, phase = script.attempt(n)
        deadline = None if n == 0 or end is None else max(1, int(end - created))
        failed_at = created + run
        made.append(Attempt(created, deadline, failed_at, phase))
        if phase not in FAILURES:
            return Prediction(tuple(made), phase, "", "", n)
        # seen as it fails, or by the controller back from being down (after that second): its time to the second
        origin = failed_at if script.up(failed_at) else float(int(failed_at))
        why = ""
        if n >= r.limit:
            why = f"attempt {n + 1} failed; no retries left (limit {r.limit})"
        elif end is not None and origin > end:
            why = f"attempt {n + 1} failed; not retried: {limit_text} has passed"
        elif end is not None and origin + r.delay(n) > end:
            why = (f"attempt {n + 1} failed; not retried: a {clock_mod.format_duration(r.delay(n))} back-off would "
                   f"end after {limit_text}")
        if why:
            return Prediction(tuple(made), phase, "RetriesExhausted", why, n)
        due = origin + r.delay(n)
        if script.down is not None and failed_at < script.down[1] <= due:   # rebuilt during the back-off
            due = float(int(failed_at)) + r.delay(n)
        ticks = (i * TICK for i in range(int(due / TICK), int(horizon / TICK)))
        at = next(t for t in ticks if script.up(t) and (
            not script.suspended_after(t - TICK) or not script.suspended_after(t)))
        if end is not None and at > end:
            return Prediction(tuple(made), phase, "RetriesExhausted",
                              f"attempt {n + 1} failed; not retried: {limit_text} passed while the retry waited", n)
        created = at
    raise AssertionError("unreachable")
