"""Which vcjob events sync their JobFlow at once (the rest refresh its status within STATUS_REFRESH)."""
import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.controllers.jobflow import controller

E = client_mod.EventType


def job(phase="", deleting=False, duration=None):
    md = {"name": "f-a", "namespace": "default"}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {"state": {"phase": phase}} if phase else {}
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
