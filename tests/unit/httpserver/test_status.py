"""Status error objects: codes, reasons, messages and details as kube-apiserver shapes them."""
import pytest

from vclite.api import kinds
from vclite.httpserver import status as status_mod
from vclite.lib import errors


@pytest.mark.parametrize("err, code, reason", [
    pytest.param(errors.NotFound('jobflows.flow.volcano.sh "x" not found'), 404, "NotFound", id="not-found"),
    pytest.param(errors.AlreadyExists('jobflows.flow.volcano.sh "x" already exists'), 409, "AlreadyExists",
                 id="already-exists"),
    pytest.param(errors.Conflict("Operation cannot be fulfilled"), 409, "Conflict", id="conflict"),
    pytest.param(errors.Gone("too old resource version: 1 (5)"), 410, "Expired", id="gone"),
    pytest.param(errors.Forbidden("queue default is not closed"), 403, "Forbidden", id="forbidden"),
    pytest.param(status_mod.TooLarge("too large"), 413, "RequestEntityTooLarge", id="too-large"),
    pytest.param(status_mod.UnsupportedMediaType("no"), 415, "UnsupportedMediaType", id="unsupported-media"),
])
def test_codes_and_reasons(err, code, reason):
    st = status_mod.from_error(err, kinds.JOBFLOW, "x")
    assert (st["kind"], st["status"], st["code"], st["reason"], st["message"]) == \
        ("Status", "Failure", code, reason, err.message)
    assert st["details"] == {"name": "x", "group": "flow.volcano.sh", "kind": "jobflows"}


def test_invalid_carries_field_errors_as_causes():
    err = errors.Invalid("Job", "j1", [errors.FieldError("spec.tasks[0].replicas", "Invalid value: -1: must be >= 0"),
                                       errors.FieldError("spec.queue", "Required value")])
    st = status_mod.from_error(err, kinds.JOB, "j1")
    assert st["code"] == 422 and st["reason"] == "Invalid"
    assert st["message"] == ('Job.batch.volcano.sh "j1" is invalid: [spec.tasks[0].replicas: Invalid value: -1: '
                             'must be >= 0, spec.queue: Required value]')
    assert st["details"] == {"name": "j1", "group": "batch.volcano.sh", "kind": "Job", "causes": [
        {"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be >= 0", "field": "spec.tasks[0].replicas"},
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.queue"}]}


def test_apply_conflict_causes():
    st = status_mod.from_error(status_mod.ApplyConflict([("alice", ".spec.a")]), kinds.JOBFLOW, "f")
    assert st["code"] == 409 and st["reason"] == "Conflict"
    assert st["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.a'
    assert st["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                        "field": ".spec.a"}]


def test_unauthorized_says_nothing_else():
    assert status_mod.unauthorized() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                         "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_too_many_requests_carries_its_causes_and_retry_after_only():
    """NewTooManyRequests: no name, group or kind in the details (an eviction a budget refuses)."""
    err = errors.TooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10,
                                 [{"reason": "DisruptionBudget", "message": "The disruption budget b is still …"}])
    st = status_mod.from_error(err, kinds.POD, "p")
    assert (st["code"], st["reason"], st["message"]) == (429, "TooManyRequests", err.message)
    assert st["details"] == {"causes": err.causes, "retryAfterSeconds": 10}
    assert "details" not in status_mod.from_error(errors.TooManyRequests("slow down"), kinds.POD, "p")
