"""Lifecycle-policy checks for vcjob tasks and jobs (`spec.policies`, `spec.tasks[i].policies`), as
Volcano's validatePolicies (pkg/webhooks/admission/jobs/validate/util.go) words them.

Differences from Volcano, on purpose: every problem is reported (Volcano stops at the first in a
list), and the action is checked for exitCode policies too (Volcano only checks it for event
policies, letting `{exitCode: 1, action: Bogus}` through to the controller). Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import common
from vclite.api import batch
from vclite.lib import clock, errors

FieldError = errors.FieldError

VALID_EVENTS = tuple(e.value for e in batch.Event if e in batch.POLICY_EVENTS)
VALID_ACTIONS = tuple(a.value for a in batch.Action if a in batch.POLICY_ACTIONS)
# Volcano appends this (Go `%v` of the two lists) after a policy error.
VALID_SUFFIX = f" valid events are [{' '.join(VALID_EVENTS)}], valid actions are [{' '.join(VALID_ACTIONS)}]"


def validate_policies(policies: Any, path: str) -> list[FieldError]:
    """All problems in one policy list; events and exit codes must be unique across the list."""
    if policies is None:
        return []
    if not isinstance(policies, list):
        return [FieldError(path, common.type_error(policies, "array"))]
    errs: list[FieldError] = []
    seen_events: dict[str, str] = {}
    seen_codes: set[int] = set()
    for k, policy in enumerate(policies):
        pp = f"{path}[{k}]"
        if not isinstance(policy, dict):
            errs.append(FieldError(pp, common.type_error(policy, "object")))
            continue
        events = _events(policy, pp, errs)
        code = common.check_int(policy, "exitCode", f"{pp}.exitCode", errs)
        if events or policy.get("exitCode") is not None or policy.get("action") is not None:
            _check_action(policy, pp, errs)   # (an empty policy is one problem: the one below)
        _check_timeout(policy, pp, errs)
        if events and policy.get("exitCode") is not None:
            errs.append(FieldError(pp, "must not specify event and exitCode simultaneously"))
        elif not events and policy.get("exitCode") is None:
            errs.append(FieldError(pp, "either event and exitCode should be specified"))
        elif events:
            for event, epath in events:
                if event not in batch.POLICY_EVENTS:
                    errs.append(FieldError(epath, common.invalid(event, "invalid policy event;" + VALID_SUFFIX)))
                elif event in seen_events:
                    errs.append(FieldError(epath, f"duplicate event {event}  across different policy"))
                else:
                    seen_events[event] = epath
        elif code is not None:
            if code == 0:
                errs.append(FieldError(f"{pp}.exitCode", "0 is not a valid error code"))
            elif code in seen_codes:
                errs.append(FieldError(f"{pp}.exitCode", f"duplicate exitCode {code}"))
            seen_codes.add(code)
    if batch.Event.ANY in seen_events and len(seen_events) > 1:
        errs.append(FieldError(path, "if there's * here, no other policy should be here"))
    return errs


def _events(policy: dict, pp: str, errs: list[FieldError]) -> list[tuple[str, str]]:
    """(event, path) for `events[*]` then `event`, without repeats inside the one policy."""
    out: list[tuple[str, str]] = []
    events = policy.get("events")
    if events is not None and not isinstance(events, list):
        errs.append(FieldError(f"{pp}.events", common.type_error(events, "array")))
        events = None
    for m, ev in enumerate(events or []):
        if not isinstance(ev, str):
            errs.append(FieldError(f"{pp}.events[{m}]", common.type_error(ev, "string")))
        elif ev and ev not in (e for e, _ in out):
            out.append((ev, f"{pp}.events[{m}]"))
    event = common.check_type(policy, "event", f"{pp}.event", errs, str, "string")
    if event and event not in (e for e, _ in out):
        out.append((event, f"{pp}.event"))
    return out


def _check_action(policy: dict, pp: str, errs: list[FieldError]) -> None:
    action = policy.get("action")
    if action is not None and not isinstance(action, str):
        errs.append(FieldError(f"{pp}.action", common.type_error(action, "string")))
    elif action not in batch.POLICY_ACTIONS:
        errs.append(FieldError(f"{pp}.action", common.invalid(action if action is not None else "",
                                                              "invalid policy action;" + VALID_SUFFIX)))


def _check_timeout(policy: dict, pp: str, errs: list[FieldError]) -> None:
    timeout = policy.get("timeout")
    if timeout is None:
        return
    try:
        clock.parse_duration(timeout)
    except ValueError:
        errs.append(FieldError(f"{pp}.timeout", common.invalid(
            timeout, "must be a duration such as 30s, 5m or 1h30m")))
