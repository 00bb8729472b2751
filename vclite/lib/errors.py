"""Error values shared by every layer: field errors (admission) and API errors (store, client).

Errors are data: an Invalid error carries the list of FieldErrors, each with a Kubernetes-style
field path (`spec.tasks[1].replicas`) and a message (Volcano's wording where Volcano has one).
This module must not import anything from vclite.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class FieldError:
    """One problem with one field. `path` like `spec.tasks[0].name`; `message` human text;
    `offset`: where in the field's text the problem is (an expression's), when known."""

    path: str
    message: str
    offset: int | None = dataclasses.field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class Expected(Exception):
    """A failure a sync reports with a message that says it all (pods the API refused): the runtime logs it
    without a traceback, which would only show the controller's own code. `waits_on_others`: trying again
    cannot succeed until something else changes (a ResourceQuota refused the create: another pod must end or
    the quota change), so the retry is a chore timer (workqueue.py) and a run with nothing else left can tell
    it is stuck."""

    def __init__(self, message: str = "", waits_on_others: bool = False):
        super().__init__(message)
        self.waits_on_others = waits_on_others


class ApiError(Exception):
    """Base of errors returned by the API (store / client). `code` is the HTTP status code."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotFound(ApiError):
    code = 404
    reason = "NotFound"


class AlreadyExists(ApiError):
    code = 409
    reason = "AlreadyExists"


class Conflict(ApiError):
    """Optimistic concurrency failure: the write named a stale resourceVersion."""

    code = 409
    reason = "Conflict"


class BadRequest(ApiError):
    code = 400
    reason = "BadRequest"


class Gone(ApiError):
    """A watch asked to resume from a resourceVersion older than the retained history."""

    code = 410
    reason = "Expired"


class Unauthorized(ApiError):
    """401: no credentials, or wrong ones (the server learned nothing from the request)."""

    code = 401
    reason = "Unauthorized"


class Forbidden(ApiError):
    code = 403
    reason = "Forbidden"


class TooManyRequests(ApiError):
    """429: try again later (`retry_after` seconds, 0: unsaid); `causes` as the Status details carry
    them ({"reason": ..., "message": ...}), e.g. an eviction a PodDisruptionBudget refuses."""

    code = 429
    reason = "TooManyRequests"

    def __init__(self, message: str, retry_after: int = 0, causes: list[dict] | None = None):
        super().__init__(message)
        self.retry_after, self.causes = retry_after, list(causes or ())


class Unreachable(ApiError):
    """The server could not be reached at all (refused, DNS, TLS handshake, timeout): no answer, unlike every
    other ApiError, which is the server's. kube/client.py raises it; the Event recorder (apiserver/events.py) tries
    a write that failed so again, as client-go's, where it gives a refusal (any other ApiError) up at once."""

    code = 503
    reason = "ServiceUnavailable"


class Invalid(ApiError):
    """Admission rejected an object; `errors` lists every field problem found."""

    code = 422
    reason = "Invalid"

    def __init__(self, kind: str, name: str, errors: list[FieldError]):
        self.kind, self.name, self.errors = kind, name, list(errors)
        detail = "; ".join(str(e) for e in self.errors)
        super().__init__(f'{kind} "{name}" is invalid: {detail}')


def json_type(value: object) -> str:
    """The JSON / YAML name of a value's type, for messages: `object`, `array`, `string`, `number`,
    `boolean` or `null` (users write manifests, not Python: never `dict` or `NoneType`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
