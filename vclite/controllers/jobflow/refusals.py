"""vcjobs the API refused for now (403: a ResourceQuota of the namespace): when to try again, when to give up.

A refused vcjob's flow waits (condition `CreateRefused`, the quota's message) and is tried again at every
sync of its JobFlow: at once when a ResourceQuota of the namespace changes (room given back, a limit
raised), otherwise after a back-off (RETRY_BASE seconds doubling, at most RETRY_MAX). Once it has been
refused for GIVE_UP seconds — Volcano's controllers drop a key after 15 rate-limited requeues, 5 ms
doubling: 163.8 s; vclite's vcjob controller then terminates the job — the flow fails (`FailedCreate`,
the quota's message): a run does not wait on room that never comes.

The time of the first refusal is kept in the stored JobFlow too — the flow's condition says
`refusedSince` (RFC 3339, microseconds) beside its reason `CreateRefused` — so a controller that starts
again (`vcctl server` restarted on its data directory) continues the window where it was instead of
starting a new one (`from_condition`): a vcjob refused for 100 s before a restart is given up 63.8 s
after it. The count of refusals is not stored (it would change the status at every refusal): a
restarted controller takes the count the back-off schedule makes over the time already waited
(`tries_by`), so its back-off goes on from there too.

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
    since: dt.datetime   # the first refusal of this run of refusals
    attempts: int = 0    # refusals so far


def verdict(r: Refusal, now: dt.datetime, give_up: float = GIVE_UP) -> tuple[bool, float]:
    """(give up now?, seconds until the next try) for a vcjob refused `r.attempts` times since `r.since`.
    The back-off doubles from RETRY_BASE up to RETRY_MAX, and the last try falls at `give_up` exactly."""
    waited = (now - r.since).total_seconds()
    left = give_up - waited
    if left <= 1e-6:   # (a timer set for exactly then may fire a rounding error early)
        return True, 0.0
    return False, min(RETRY_BASE * 2 ** max(0, r.attempts - 1), RETRY_MAX, left)


def tries_by(waited: float) -> int:
    """How many tries the back-off schedule (RETRY_BASE doubling, at most RETRY_MAX) makes within `waited`
    seconds of the first: 1 at once, then one at each back-off's end."""
    tries, at = 1, 0.0
    while True:
        at += min(RETRY_BASE * 2 ** (tries - 1), RETRY_MAX)
        if at > waited:
            return tries
        tries += 1


def from_condition(cond: Any, now: dt.datetime) -> Refusal | None:
    """The refusal a stored condition records (reason CreateRefused with `refusedSince`), as a restarted
    controller takes it up; None when it records none (or a time it cannot read, or one in the future)."""
    if not isinstance(cond, dict) or cond.get("reason") != st.Reason.CREATE_REFUSED or \
            not isinstance(cond.get(SINCE), str):
        return None
    try:
        since = clock_mod.parse_time(cond[SINCE])
    except ValueError:
        return None
    if since is None or since > now:
        return None
    return Refusal(since, tries_by((now - since).total_seconds()))


def give_up_message(message: str, r: Refusal, give_up: float = GIVE_UP) -> str:
    """The FailedCreate message of a vcjob refused until `give_up`."""
    return f"{message} (refused {r.attempts} times over {give_up:.1f}s: not tried again)"


class Refusals:
    """JobFlow key -> {vcjob name: Refusal}."""

    def __init__(self) -> None:
        self._by_flow: dict[str, dict[str, Refusal]] = {}

    def refused(self, key: str, job: str, now: dt.datetime, stored: Refusal | None = None) -> Refusal:
        """Record a refusal of `job`; `stored`: the refusal the stored status records (from_condition), taken
        up when this controller has none of its own (it started since)."""
        jobs = self._by_flow.setdefault(key, {})
        r = jobs.get(job)
        if r is None:
            r = jobs[job] = stored if stored is not None else Refusal(now)
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
