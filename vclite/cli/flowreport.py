"""What a stopped `vcctl run` says about a JobFlow's attempts waiting for their retry, one line each.

A loop's summary (`4 items: 2 Completed, 2 retrying`) does not say which items wait, for what, or for
how long: the report lists every vcjob of a flow whose failed attempt waits for its retry — a loop's
item (`item 1: resnet50`, named as the live view names it), a repeat's iteration (`iteration 2`) or the
flow's one vcjob —, its attempt, and when the next attempt is due (the condition's `retryAt`), from the
JobFlow's status (and a withParam item's vcjob, for its value).
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from vclite.api import flow, meta
from vclite.cli import view
from vclite.controllers.jobflow import status as jobflow_status
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]
R = jobflow_status.Reason
WAITING = frozenset({R.RETRY_BACKOFF, R.RETRYING})   # a failed attempt whose retry is to come
_ATTEMPT = re.compile(r"^attempt \d+ (?:is created once the JobFlow is resumed|failed)")


def retry_waits(jf: Obj, flow_name: str, now: dt.datetime, snap: view.Snapshot | None = None) -> list[tuple[str, str]]:
    """(which, what) for each vcjob of flow `flow_name` whose retry is still to come, in item order:
    (`item 1: resnet50 (vcjob x-shard-1)`, `attempt 1 failed; retry 1 of 3 after a 30s back-off; next attempt due
    at 2026-01-02T10:00:05Z (in 25s)`); `vcjob x-a` for a flow without items or iterations. An item is named as
    the live view names it (view.loop_item: a withParam's value is read from its vcjob in `snap`)."""
    conditions = (jf.get("status") or {}).get("conditions") or {}
    base = flow.job_name(meta.name(jf), flow_name)
    loops = bool(_unit(_spec_flow(jf, flow_name)))
    found = []
    for key, cond in conditions.items():
        if not isinstance(cond, dict) or not _waits_for_retry(cond):
            continue
        if key == base and not loops:
            found.append((-1, f"vcjob {key}", _retry_text(cond, now)))
        elif loops and key.startswith(base + "-") and key[len(base) + 1:].isdigit():
            _, item = view.loop_item(jf, key, snap)
            found.append((int(key[len(base) + 1:]), f"{item} (vcjob {key})", _retry_text(cond, now)))
    return [(which, what) for _, which, what in sorted(found)]


def loop_vcjob(jf: Obj, key: str, snap: view.Snapshot | None = None) -> str:
    """`flow shard, item 1: resnet50 (vcjob x-shard-1)` for the vcjob of a loop's item or a repeat's iteration, as
    the live view names it (view.loop_item); `key` itself for any other vcjob (or a flow's summary)."""
    name, item = view.loop_item(jf, key, snap)
    return f"flow {name}, {item} (vcjob {key})" if item else key


LOOP_REASONS = frozenset({R.FAN_OUT, R.REPEAT})   # a loop flow's condition: its items' counts say the rest


def failed_condition(jf: Obj, key: str, cond: Obj, snap: view.Snapshot | None = None) -> str:
    """A failed flow's condition in a report: `flow train: 20 items: 19 Completed, 1 Failed` for a loop flow's
    (its reason, FanOut or Repeat, says nothing more), `flow s, item 1: resnet50 (vcjob x-s-1) NotRetried: …`
    for a loop item's, `x-b RetriesExhausted: …` for another vcjob's."""
    loop = next((e.name for e in view.layout(meta.name(jf), jf.get("spec") or {}) if e.loop_word and e.key == key),
                None)
    if loop is not None and cond.get("reason") in LOOP_REASONS:
        return f"flow {loop}: {cond.get('message', '')}".rstrip(": ")
    return f"{loop_vcjob(jf, key, snap)} {cond.get('reason')}: {cond.get('message', '')}".rstrip(": ")


def _spec_flow(jf: Obj, name: str) -> Obj:
    return next((f for f in (jf.get("spec") or {}).get("flows") or []
                 if isinstance(f, dict) and f.get("name") == name), {})


def _unit(spec_flow: Obj) -> str:
    """What a flow's vcjobs are: `item`s of a loop, `iteration`s of a repeat, or "" (one vcjob)."""
    return "iteration" if spec_flow.get("repeat") else "item" if (
        "withItems" in spec_flow or "withParam" in spec_flow) else ""


def _waits_for_retry(cond: Obj) -> bool:
    reason = cond.get("reason")
    return reason in WAITING or (reason == R.SUSPENDED and bool(_ATTEMPT.match(str(cond.get("message") or ""))))


def _retry_text(cond: Obj, now: dt.datetime) -> str:
    """The retry verdict and when the next attempt is due; why the attempt failed (after `; last attempt: `) is
    left to the report's line of the failed vcjob, which shows its log's last lines too."""
    text = str(cond.get("message") or cond.get("reason")).partition(jobflow_status.LAST_ATTEMPT)[0]
    due = clock_mod.parse_time(cond.get(jobflow_status.RETRY_AT))
    if due is None:
        return text
    return f"{text}; next attempt due at {cond[jobflow_status.RETRY_AT]} ({_from_now(due, now)})"


def next_attempt(cond: Obj, now: dt.datetime) -> str:
    """`next attempt in 25s` for a vcjob's condition waiting out its retry's back-off (`retryAt`); "" otherwise
    (the live view's detail: it is drawn again every second)."""
    due = clock_mod.parse_time(cond.get(jobflow_status.RETRY_AT)) if cond.get("reason") == R.RETRY_BACKOFF else None
    return "" if due is None else f"next attempt {_from_now(due, now)}"


def _from_now(due: dt.datetime, now: dt.datetime) -> str:
    left = (due - now).total_seconds()
    return f"in {clock_mod.format_duration(round(left))}" if left >= 1 else "now" if left > -1 else \
        f"{clock_mod.format_duration(round(-left))} ago"
