"""List and watch options as kube-apiserver reads them: validation, and which state a list answers.

`check(query, watching)` is apimachinery's ValidateListOptions (with the WatchList defaults of
kube-apiserver 1.32): `resourceVersionMatch` needs a `resourceVersion`, is forbidden with
`continue`, is `Exact` or `NotOlderThan` (a watch: `NotOlderThan`, and only with
`sendInitialEvents`), `Exact` is forbidden for version "0"; `sendInitialEvents` is for watches
only and needs `resourceVersionMatch=NotOlderThan`. A problem is one 422 naming the field
(`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: …`).

`list_read(query, current)` says what a valid list reads: the current state, or the state at an
exact version (`resourceVersionMatch=Exact`, or a non-zero `resourceVersion` with `limit` and no
match, kube-apiserver's legacy rule). A version above the current one is kube-apiserver's 504
`Too large resource version` (which it answers after waiting up to 3 s for its cache: here every
write is visible at once, so it answers at once). Pure.
"""
from __future__ import annotations

from typing import Mapping

from vclite.lib import errors

EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"
TOO_LARGE_CAUSE = "Too large resource version"
TOO_LARGE_RETRY_SECONDS = 1


class InvalidOptions(errors.ApiError):
    """422 for list or watch options kube-apiserver refuses (kind ListOptions of meta.k8s.io)."""

    code = 422
    reason = "Invalid"
    GROUP, KIND = "meta.k8s.io", "ListOptions"

    def __init__(self, field_errors: list[errors.FieldError]):
        self.errors = list(field_errors)
        parts = [str(e) for e in self.errors]
        agg = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        super().__init__(f'{self.KIND}.{self.GROUP} "" is invalid: {agg}')


class TooLargeResourceVersion(errors.ApiError):
    """504: a list (or watch) asked for a version the store has not reached."""

    code = 504
    reason = "Timeout"

    def __init__(self, wanted: int, current: int):
        super().__init__(f"Timeout: Too large resource version: {wanted}, current: {current}")


def _flag(value: str | None) -> bool | None:
    """A boolean query parameter as Go's strconv.ParseBool reads it (None: not given)."""
    if value is None:
        return None
    if value in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if value in ("0", "f", "F", "false", "FALSE", "False", ""):
        return False
    raise errors.BadRequest(f'invalid boolean value "{value}"')


def check(query: Mapping[str, str], watching: bool) -> None:
    """InvalidOptions (422) with every problem of the request's list or watch options, else nothing."""
    rv = query.get("resourceVersion") or ""
    match = query.get("resourceVersionMatch") or ""
    cont = query.get("continue") or ""
    initial = _flag(query.get("sendInitialEvents"))
    if watching and initial is None and not match and rv in ("", "0"):
        initial, match = True, NOT_OLDER_THAN   # (SetListOptionsDefaults: a legacy watch, the same stream)
    path = "resourceVersionMatch"
    errs: list[errors.FieldError] = []
    if watching:
        if initial is not None and match != NOT_OLDER_THAN:
            errs.append(errors.FieldError(path, "Forbidden: sendInitialEvents requires setting "
                                                "resourceVersionMatch to NotOlderThan"))
        if match:
            if initial is None:
                errs.append(errors.FieldError(path, "Forbidden: resourceVersionMatch is forbidden for watch "
                                                    "unless sendInitialEvents is provided"))
            if match != NOT_OLDER_THAN:
                errs.append(errors.FieldError(path, f'Unsupported value: "{match}": supported values: '
                                                    f'"{NOT_OLDER_THAN}"'))
            if cont:
                errs.append(errors.FieldError(path, "Forbidden: resourceVersionMatch is forbidden when continue "
                                                    "is provided"))
    else:
        if match:
            if not rv:
                errs.append(errors.FieldError(path, "Forbidden: resourceVersionMatch is forbidden unless "
                                                    "resourceVersion is provided"))
            if cont:
                errs.append(errors.FieldError(path, "Forbidden: resourceVersionMatch is forbidden when continue "
                                                    "is provided"))
            if match not in (EXACT, NOT_OLDER_THAN):
                errs.append(errors.FieldError(path, f'Unsupported value: "{match}": supported values: '
                                                    f'"{EXACT}", "{NOT_OLDER_THAN}", ""'))
            if match == EXACT and rv == "0":
                errs.append(errors.FieldError(path, 'Forbidden: resourceVersionMatch "exact" is forbidden for '
                                                    'resourceVersion "0"'))
        if initial is not None:
            errs.append(errors.FieldError("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"))
    if errs:
        raise InvalidOptions(errs)


def version(query: Mapping[str, str]) -> int | None:
    """The request's resourceVersion as a number (None: not given, or "0"); BadRequest if not one."""
    rv = query.get("resourceVersion") or ""
    if rv in ("", "0"):
        return None
    if not (rv.isascii() and rv.isdigit()):
        raise errors.BadRequest(f'invalid resourceVersion "{rv}"')   # (kube-apiserver: not a uint64)
    return int(rv)


def list_read(query: Mapping[str, str], current: int) -> int | None:
    """For a valid list: the version whose state it answers (None: the current state).
    TooLargeResourceVersion when the request asks for one the store has not reached."""
    wanted = version(query)
    if wanted is None:
        return None
    if wanted > current:
        raise TooLargeResourceVersion(wanted, current)
    match = query.get("resourceVersionMatch") or ""
    legacy_exact = not match and bool(query.get("limit") not in (None, "", "0")) and not query.get("continue")
    return wanted if match == EXACT or legacy_exact else None
