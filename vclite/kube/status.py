"""Kubernetes `Status` error objects back into `vclite.lib.errors` values.

The table `BY_CODE` maps an HTTP status code to the error class; a 409 is `AlreadyExists` or
`Conflict` by the Status `reason`; a 422 becomes `Invalid` with one `FieldError` per
`details.causes` entry. The server's own message is kept verbatim as the error's message (what
`vcctl` prints, as Volcano's vcctl prints client-go's error). Pure functions; no I/O.
"""
from __future__ import annotations

import json
from typing import Any

from vclite.lib import errors

Obj = dict[str, Any]


Unauthorized = errors.Unauthorized  # shared with the other side of the wire (lib/errors)


Unreachable = errors.Unreachable   # the server could not be reached at all (refused, DNS, TLS handshake, timeout)


BY_CODE: dict[int, type[errors.ApiError]] = {
    400: errors.BadRequest,
    401: Unauthorized,
    403: errors.Forbidden,
    404: errors.NotFound,
    409: errors.Conflict,
    410: errors.Gone,
}

UNAUTHORIZED_HINT = ("the server has asked for the client to provide credentials (Unauthorized): "
                     "the kubeconfig's token or certificate is missing or wrong")


def parse_body(data: bytes) -> Obj | None:
    try:
        body = json.loads(data.decode("utf-8")) if data else None
    except (UnicodeDecodeError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def _invalid(status: Obj, message: str) -> errors.Invalid:
    details = status.get("details") or {}
    causes = [errors.FieldError(str(c.get("field") or ""), str(c.get("message") or c.get("reason") or ""))
              for c in details.get("causes") or [] if isinstance(c, dict)]
    exc = errors.Invalid(str(details.get("kind") or ""), str(details.get("name") or ""), causes)
    if message:  # keep the server's wording
        exc.message = message
        exc.args = (message,)
    return exc


def to_error(code: int, body: Obj | None, text: str = "") -> errors.ApiError:
    """The ApiError for a non-2xx response: `body` is the parsed JSON (a Status, normally), `text`
    the raw body for servers that answer with something else (a proxy's HTML page)."""
    status = body if body and body.get("kind") == "Status" else None
    message = str((status or {}).get("message") or "")
    reason = str((status or {}).get("reason") or "")
    code = int((status or {}).get("code") or code)
    if code == 422 or reason == "Invalid":
        return _invalid(status or {}, message or f"the server rejected the object as invalid (HTTP {code})")
    if code == 409 and reason == "AlreadyExists":
        cls: type[errors.ApiError] = errors.AlreadyExists
    elif code == 401:
        return Unauthorized(message if message and message != "Unauthorized" else UNAUTHORIZED_HINT)
    else:
        cls = BY_CODE.get(code, errors.ApiError)
    if not message:
        snippet = " ".join(text.split())[:200]
        message = f"the server responded with HTTP {code}" + (f": {snippet}" if snippet else "")
    exc = cls(message)
    if cls is errors.ApiError:  # keep the real code and reason (500, 415, 429 ...)
        exc.code = code
        exc.reason = reason or "InternalError"
    return exc


def from_response(code: int, data: bytes) -> errors.ApiError:
    return to_error(code, parse_body(data), data.decode("utf-8", "replace"))
