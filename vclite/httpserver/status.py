"""`Status` objects: every error the HTTP API returns, shaped as kube-apiserver's.

`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":…,"reason":…,
"details":{…},"code":…}`; kubectl prints `Error from server (<reason>): <message>`, and for 422
Invalid `The <Kind> "<name>" is invalid:` followed by one line per `details.causes` entry (the
admission FieldErrors). The HTTP-only error classes (401, 405, 406, 413, 415) live here. Pure.
"""
from __future__ import annotations

from typing import Any

from vclite.api import kinds
from vclite.httpserver import listopts
from vclite.lib import errors

Obj = dict[str, Any]


Unauthorized = errors.Unauthorized  # shared with the other side of the wire (lib/errors)


class MethodNotAllowed(errors.ApiError):
    code = 405
    reason = "MethodNotAllowed"


class NotAcceptable(errors.ApiError):
    code = 406
    reason = "NotAcceptable"


class TooLarge(errors.ApiError):
    code = 413
    reason = "RequestEntityTooLarge"


class UnsupportedMediaType(errors.ApiError):
    code = 415
    reason = "UnsupportedMediaType"


class InvalidPatch(errors.ApiError):
    """A JSON patch that does not apply (a failed `test`, a missing path). Kubernetes answers it as a
    generic 422 whose only cause carries the patch library's words; kubectl prints
    `The request is invalid: : <them>`."""
    code = 422
    reason = "Invalid"
    GENERIC = "the server rejected our request due to an error in our request"


class ApplyConflict(errors.Conflict):
    """Server-side apply: fields owned by another manager would change (`causes`: field, manager)."""

    def __init__(self, conflicts: list[tuple[str, str]]):
        """`conflicts`: (manager, field); a manager of an Update written `name" using v1` shows as
        kube-apiserver names it (`conflict with "name" using v1`)."""
        self.conflicts = conflicts
        n = len(conflicts)
        lines = "\n".join(f'- conflict with "{mgr}: {field}' if '"' in mgr else f'- conflict with "{mgr}": {field}'
                          for mgr, field in conflicts)
        first = conflicts[0][0] if conflicts else ""
        shown = f'"{first}' if '"' in first else f'"{first}"'
        super().__init__(f"Apply failed with {n} conflict{'s' if n != 1 else ''}: " +
                         (f"conflict with {shown}: {conflicts[0][1]}" if n == 1 else "\n" + lines))


CAUSE_TYPES = (("Required value", "FieldValueRequired"), ("Unsupported value", "FieldValueNotSupported"),
               ("Duplicate value", "FieldValueDuplicate"), ("Forbidden", "FieldValueForbidden"),
               ("Too long", "FieldValueTooLong"), ("Too many", "FieldValueTooMany"))


def cause_type(message: str) -> str:
    for prefix, cause in CAUSE_TYPES:
        if message.startswith(prefix):
            return cause
    return "FieldValueInvalid"


def qualified_kind(kind: kinds.Kind) -> str:
    return f"{kind.kind}.{kind.group}" if kind.group else kind.kind


def invalid_message(kind: kinds.Kind, name: str, field_errors: list[errors.FieldError]) -> str:
    parts = [str(e) for e in field_errors]
    agg = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return f'{qualified_kind(kind)} "{name}" is invalid: {agg}'


def status(code: int, reason: str, message: str, details: Obj | None = None) -> Obj:
    obj: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                "reason": reason, "code": code}
    if details:
        obj["details"] = details
    return obj


def from_error(err: errors.ApiError, kind: kinds.Kind | None = None, name: str | None = None) -> Obj:
    """The Status for an API error raised while serving `kind`/`name` (either may be unknown)."""
    if isinstance(err, listopts.InvalidOptions):
        return status(err.code, err.reason, err.message, {
            "group": err.GROUP, "kind": err.KIND,
            "causes": [{"reason": cause_type(e.message), "message": e.message, "field": e.path} for e in err.errors]})
    if isinstance(err, listopts.TooLargeResourceVersion):
        return status(err.code, err.reason, err.message, {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": listopts.TOO_LARGE_CAUSE}],
            "retryAfterSeconds": listopts.TOO_LARGE_RETRY_SECONDS})
    details: Obj = {}
    if name:
        details["name"] = name
    if kind is not None:
        details["group"] = kind.group
        details["kind"] = kind.plural
    message = err.message
    named = getattr(err, "details_as", None)   # (the error names its group and kind: a delete's precondition)
    if named:
        details = dict(named)
    if isinstance(err, errors.Invalid):
        k = kind or kinds.by_kind(err.kind)
        details = {"name": err.name or name or "", "group": k.group if k else "", "kind": err.kind,
                   "causes": [{"reason": cause_type(e.message), "message": e.message, "field": e.path}
                              for e in err.errors]}
        if k is not None:
            message = invalid_message(k, err.name or name or "", err.errors)
    elif isinstance(err, InvalidPatch):
        return status(err.code, err.reason, InvalidPatch.GENERIC,
                      {"causes": [{"reason": "UnexpectedServerResponse", "message": err.message}]})
    elif isinstance(err, errors.TooManyRequests):   # (NewTooManyRequests: no name, group or kind)
        details = {"causes": err.causes} if err.causes else {}
        if err.retry_after > 0:
            details["retryAfterSeconds"] = err.retry_after
    elif isinstance(err, ApplyConflict):
        details["causes"] = [{"reason": "FieldManagerConflict",
                              "message": f'conflict with "{mgr}' + ('' if '"' in mgr else '"'), "field": field}
                             for mgr, field in err.conflicts]
    return status(err.code, err.reason, message, details)


def unauthorized() -> Obj:
    return status(401, "Unauthorized", "Unauthorized")


def not_found_path() -> Obj:
    return status(404, "NotFound", "the server could not find the requested resource", {})
