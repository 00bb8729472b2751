"""Kubernetes Status objects map back to vclite.lib.errors values, keeping the server's message."""
import json

import pytest

from vclite.kube import status
from vclite.lib import errors


def st(code, reason, message, details=None):
    out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
           "reason": reason, "code": code}
    if details is not None:
        out["details"] = details
    return out


NOT_FOUND = st(404, "NotFound", 'jobflows.flow.volcano.sh "x" not found',
               {"name": "x", "group": "flow.volcano.sh", "kind": "jobflows"})
EXISTS = st(409, "AlreadyExists", 'jobflows.flow.volcano.sh "x" already exists')
CONFLICT = st(409, "Conflict", 'Operation cannot be fulfilled on jobflows.flow.volcano.sh "x": the object has been '
                               "modified; please apply your changes to the latest version and try again")
INVALID = st(422, "Invalid", 'JobFlow.flow.volcano.sh "x" is invalid: spec.flows: Invalid value: "a": jobflow Flow '
                             "is not DAG", {"name": "x", "group": "flow.volcano.sh", "kind": "JobFlow", "causes": [
                                 {"reason": "FieldValueInvalid", "field": "spec.flows",
                                  "message": 'Invalid value: "a": jobflow Flow is not DAG'},
                                 {"reason": "FieldValueRequired", "field": "spec.flows[1].name"}]})


@pytest.mark.parametrize("code, body, text, cls, message", [
    pytest.param(404, NOT_FOUND, "", errors.NotFound, NOT_FOUND["message"], id="404-not-found"),
    pytest.param(409, EXISTS, "", errors.AlreadyExists, EXISTS["message"], id="409-already-exists"),
    pytest.param(409, CONFLICT, "", errors.Conflict, CONFLICT["message"], id="409-conflict"),
    pytest.param(409, st(409, "", "other"), "", errors.Conflict, "other", id="409-without-reason-is-conflict"),
    pytest.param(400, st(400, "BadRequest", "bad"), "", errors.BadRequest, "bad", id="400"),
    pytest.param(403, st(403, "Forbidden", 'jobs is forbidden: User "u" cannot list'), "", errors.Forbidden,
                 'jobs is forbidden: User "u" cannot list', id="403"),
    pytest.param(410, st(410, "Expired", "too old resource version: 1 (5)"), "", errors.Gone,
                 "too old resource version: 1 (5)", id="410-expired"),
    pytest.param(401, st(401, "Unauthorized", "Unauthorized"), "", status.Unauthorized, status.UNAUTHORIZED_HINT,
                 id="401-bare-gets-a-hint"),
    pytest.param(401, None, "", status.Unauthorized, status.UNAUTHORIZED_HINT, id="401-no-body"),
    pytest.param(401, st(401, "Unauthorized", "token expired"), "", status.Unauthorized, "token expired",
                 id="401-with-message-kept"),
    pytest.param(502, None, "<html><body>Bad   gateway</body></html>", errors.ApiError,
                 "the server responded with HTTP 502: <html><body>Bad gateway</body></html>", id="502-html-proxy"),
    pytest.param(500, None, "", errors.ApiError, "the server responded with HTTP 500", id="500-empty"),
    pytest.param(200, st(404, "NotFound", "nf"), "", errors.NotFound, "nf", id="status-code-wins"),
])
def test_to_error(code, body, text, cls, message):
    exc = status.to_error(code, body, text)
    assert type(exc) is cls
    assert exc.message == message and str(exc) == message


def test_other_codes_keep_code_and_reason():
    exc = status.to_error(415, st(415, "UnsupportedMediaType", "the body of the request was in an unknown format"))
    assert type(exc) is errors.ApiError
    assert (exc.code, exc.reason) == (415, "UnsupportedMediaType")


def test_invalid_carries_every_cause_as_a_field_error_and_the_server_message():
    exc = status.to_error(422, INVALID)
    assert isinstance(exc, errors.Invalid)
    assert (exc.kind, exc.name) == ("JobFlow", "x")
    assert exc.errors == [errors.FieldError("spec.flows", 'Invalid value: "a": jobflow Flow is not DAG'),
                          errors.FieldError("spec.flows[1].name", "FieldValueRequired")]
    assert exc.message == INVALID["message"] and str(exc) == INVALID["message"]


def test_invalid_without_status_body_is_still_invalid():
    exc = status.to_error(422, None, "nope")
    assert isinstance(exc, errors.Invalid) and exc.errors == []
    assert "invalid" in exc.message


@pytest.mark.parametrize("data, want", [
    pytest.param(json.dumps(NOT_FOUND).encode(), errors.NotFound, id="json-status"),
    pytest.param(b"\xff\xfe", errors.ApiError, id="not-utf8"),
    pytest.param(b"[1, 2]", errors.ApiError, id="json-not-an-object"),
])
def test_from_response(data, want):
    assert type(status.from_response(404 if want is errors.NotFound else 500, data)) is want
