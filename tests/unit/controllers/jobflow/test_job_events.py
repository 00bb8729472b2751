"""Which vcjob events sync their JobFlow at once (the rest refresh its status within STATUS_REFRESH),
which ones bring a phase its runningHistories must record, and when `jobRetainPolicy: delete` may
delete a vcjob of a succeeded JobFlow."""
import datetime as dt

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.controllers.jobflow import controller

E = client_mod.EventType


def job(phase="", deleting=False, duration=None, uid="u1", ltt=None):
    md = {"name": "f-a", "namespace": "default", "uid": uid}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {"state": {"phase": phase}} if phase else {}
    if ltt:
        status["state"]["lastTransitionTime"] = ltt
    if duration:
        status["runningDuration"] = duration
    return {"metadata": md, "status": status}


def ev(type_, new, old=None):
    return client_mod.WatchEvent(type_, kinds.JOB, new, old)


@pytest.mark.parametrize("event, flow_phase, urgent", [
    pytest.param(ev(E.ADDED, job()), "Running", True, id="created"),
    pytest.param(ev(E.DELETED, job("Running")), "Running", True, id="deleted"),
    pytest.param(ev(E.MODIFIED, job("Running", deleting=True), job("Running")), "Running", True, id="being deleted"),
    pytest.param(ev(E.MODIFIED, job("Completed"), job("Running")), "Running", True, id="just completed"),
    pytest.param(ev(E.MODIFIED, job("Failed"), job("Running")), "Running", True, id="just failed"),
    pytest.param(ev(E.MODIFIED, job("Terminating"), job("Running")), "Running", True, id="terminating"),
    pytest.param(ev(E.MODIFIED, job("Running"), job("Pending")), "Running", False, id="started: status only"),
    pytest.param(ev(E.MODIFIED, job("Completed", duration="3s"), job("Completed")), "Running", False,
                 id="finished job's end time, flow running"),
    pytest.param(ev(E.MODIFIED, job("Completed", duration="3s"), job("Completed")), "Succeed", True,
                 id="finished job's end time, flow finished"),
    pytest.param(ev(E.MODIFIED, job("Running", duration="3s"), job("Running")), "Succeed", False,
                 id="running job of a finished flow"),
])
def test_job_event_is_urgent(event, flow_phase, urgent):
    assert controller.job_event_is_urgent(event, flow_phase) is urgent


@pytest.mark.parametrize("event, records", [
    pytest.param(ev(E.ADDED, job()), True, id="created"),
    pytest.param(ev(E.MODIFIED, job("Pending"), job()), True, id="first phase"),
    pytest.param(ev(E.MODIFIED, job("Running"), job("Pending")), True, id="new phase"),
    pytest.param(ev(E.MODIFIED, job("Running", duration="3s"), job("Running")), False, id="same phase"),
    pytest.param(ev(E.MODIFIED, job("Pending", uid="u2"), job("Pending")), True, id="a new vcjob, same name"),
    pytest.param(ev(E.DELETED, job("Completed")), False, id="deleted"),
])
def test_job_event_changes_phase(event, records):
    assert controller.job_event_changes_phase(event) is records


NOW = dt.datetime(2026, 1, 1, 0, 0, 10, tzinfo=dt.timezone.utc)
GRACE = controller.DELETE_GRACE


@pytest.mark.parametrize("obj, wait", [
    pytest.param(job("Completed", duration="3s", ltt="2026-01-01T00:00:10Z"), 0, id="final status written"),
    pytest.param(job("Completed", ltt="2026-01-01T00:00:10Z"), GRACE, id="runningDuration not yet"),
    pytest.param(job("Failed", ltt="2026-01-01T00:00:08Z"), GRACE - 2, id="part of the grace passed"),
    pytest.param(job("Completed", ltt="2026-01-01T00:00:00Z"), 0, id="grace passed"),
    pytest.param(job("Completed", ltt="2026-01-01T00:01:00Z"), GRACE, id="finished in the future: at most the grace"),
    pytest.param(job("Completed"), 0, id="no transition time"),
    pytest.param(job("Running", ltt="2026-01-01T00:00:10Z"), 0, id="not finished"),
])
def test_delete_wait(obj, wait):
    assert controller.delete_wait(obj, NOW) == wait
