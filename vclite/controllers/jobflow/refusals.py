"""vcjobs the API refused for now (403: a ResourceQuota of the namespace): when to try again, when to give up.

A refused vcjob's flow waits (condition `CreateRefused`, the quota's message) and is tried again at every
sync of its JobFlow: at once when a ResourceQuota of the namespace changes (room given back, a limit
raised), otherwise after a back-off (RETRY_BASE seconds doubling, at most RETRY_MAX). Once it has been
refused for GIVE_UP seconds — Volcano's controllers drop a key after 15 rate-limited requeues, 5 ms
doubling: 163.8 s; vclite's vcjob controller then terminates the job — the flow fails (`FailedCreate`,
the quota's message): a run does not wait on room that never comes.

The window counts only time this controller has run: it starts at the first refusal a controller sees,
so a restarted controller (`vcctl server` stopped and started again on its data directory, `vcctl
controller` restarted) starts a new window and a new back-off, as Volcano's rate limiter does with its
controller. A stop of any length therefore never fails a flow by itself, whose vcjob was refused only briefly
while the control plane ran; the cost is that a vcjob refused just before a restart may wait up to GIVE_UP
seconds more after it. The first refusal's time is still kept in the stored JobFlow for people — the flow's
condition says `refusedSince` (RFC 3339, microseconds) beside its reason `CreateRefused` — and a restarted
controller keeps it there (`stored_since`): it is when the vcjob was first refused, not the window's start.

Pure bookkeeping: the controller records refusals and creations and asks what is due.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from vclite.controllers.jobflow import status as st
from vclite.lib import clock as clock_mod

RETRY_BASE = 0.005
RETRY_MAX = 10.0
GIVE_UP = 0.005 * (2 ** 15 - 1)   # seconds: Volcano's back-off over its 15 requeues (--max-requeue-num)
SINCE = "refusedSince"   # the condition field: when the vcjob was first refused (this run of refusals)


@dataclasses.dataclass
class Refusal:
    since: dt.datetime   # the window's start: the first refusal this controller saw
    attempts: int = 0    # refusals so far (by this controller)
    first: dt.datetime | None = None   # the first refusal a controller before this one recorded (refusedSince)

    @property
    def first_refused(self) -> dt.datetime:
        """When the vcjob was first refused, restarts included: the condition's `refusedSince`."""
        return self.first if self.first is not None and self.first < self.since else self.since


def verdict(r: Refusal, now: dt.datetime, give_up: float = GIVE_UP) -> tuple[bool, float]:
    """(give up now?, seconds until the next try) for a vcjob refused `r.attempts` times since `r.since`.
    The back-off doubles from RETRY_BASE up to RETRY_MAX, and the last try falls at `give_up` exactly."""
    waited = (now - r.since).total_seconds()
    left = give_up - waited
    if left <= 1e-6:   # (a timer set for exactly then may fire a rounding error early)
        return True, 0.0
    return False, min(RETRY_BASE * 2 ** max(0, r.attempts - 1), RETRY_MAX, left)


def stored_since(cond: Any, now: dt.datetime) -> dt.datetime | None:
    """When a stored condition says the vcjob was first refused (reason CreateRefused with `refusedSince`), as
    a restarted controller keeps it; None when it records none (or a time it cannot read, or one in the future).
    Only what the condition shows: the window restarts with the controller (the module's docstring)."""
    if not isinstance(cond, dict) or cond.get("reason") != st.Reason.CREATE_REFUSED or \
            not isinstance(cond.get(SINCE), str):
        return None
    try:
        since = clock_mod.parse_time(cond[SINCE])
    except ValueError:
        return None
    if since is None or since > now:
        return None
    return since


def give_up_message(message: str, r: Refusal, give_up: float = GIVE_UP) -> str:
    """The FailedCreate message of a vcjob refused until `give_up`."""
    return f"{message} (refused {r.attempts} times over {give_up:.1f}s: not tried again)"


class Refusals:
    """JobFlow key -> {vcjob name: Refusal}."""

    def __init__(self) -> None:
        self._by_flow: dict[str, dict[str, Refusal]] = {}

    def refused(self, key: str, job: str, now: dt.datetime, first: dt.datetime | None = None) -> Refusal:
        """Record a refusal of `job`; the first one this controller sees starts its window. `first`: when the
        stored status says it was first refused (stored_since), kept for the condition only."""
        jobs = self._by_flow.setdefault(key, {})
        r = jobs.get(job)
        if r is None:
            r = jobs[job] = Refusal(now, first=first)
        r.attempts += 1
        return r

    def created(self, key: str, job: str) -> None:
        jobs = self._by_flow.get(key)
        if jobs is not None:
            jobs.pop(job, None)
            if not jobs:
                del self._by_flow[key]

    def forget(self, key: str) -> None:
        self._by_flow.pop(key, None)

    def keep_only(self, key: str, jobs: set[str]) -> None:
        """Drop the refusals of `key`'s vcjobs not in `jobs` (no longer refused: made, or not wanted)."""
        for job in [j for j in self._by_flow.get(key, {}) if j not in jobs]:
            self.created(key, job)

    def next_try(self, key: str, now: dt.datetime) -> float | None:
        """Seconds until `key`'s next try (None: nothing of it is refused). A refusal whose time is up was
        due in the sync that asks (which fails it when it tries it again): one it did not try is dropped."""
        jobs = self._by_flow.get(key, {})
        waits = []
        for job, r in list(jobs.items()):
            up, wait = verdict(r, now)
            if up:
                self.created(key, job)
            else:
                waits.append(wait)
        return min(waits) if waits else None

    def in_namespace(self, ns: str) -> list[str]:
        """The JobFlow keys of namespace `ns` with a refused vcjob."""
        return [k for k in self._by_flow if k.partition("/")[0] == ns]

    def __bool__(self) -> bool:
        return bool(self._by_flow)
