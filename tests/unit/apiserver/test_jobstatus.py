"""jobstatus.mismatch: where a vcjob's status does not decode into v1alpha1.JobStatus — the same answer as vcctl's
typed reads (gotyped.mismatch over kindtypes.JOB_STATUS), field by field."""
from __future__ import annotations

import pytest

from vclite.apiserver import jobstatus
from vclite.cli import gotyped, kindtypes

T = "2026-01-01T00:00:00Z"
RUNNING = {"state": {"phase": "Running", "reason": "", "lastTransitionTime": T}, "minAvailable": 3,
           "taskStatusCount": {"ps": {"phase": {"Running": 1}}, "worker": {"phase": {"Running": 2, "Pending": 1}}},
           "running": 3, "pending": 1, "version": 2, "retryCount": 0, "runningDuration": "5s",
           "controlledResources": {"plugin-env": "env"},
           "conditions": [{"status": "Pending", "lastTransitionTime": T}, {"status": "Running"}], "extra": [1]}


@pytest.mark.parametrize("status, where", [
    (None, None),
    ({}, None),
    (RUNNING, None),
    ({"taskStatusCount": None, "state": None, "conditions": [None], "running": None}, None),
    ({"taskStatusCount": {"t": {"phase": None}, "u": None, "v": {}}}, None),
    ({"running": 2.0, "failed": -1}, None),
    ("Running", "status"),
    ({"taskStatusCount": {"Running": "one"}}, "status.taskStatusCount"),
    ({"taskStatusCount": {"t": {"phase": {"Running": "one"}}}}, "status.taskStatusCount.phase"),
    ({"taskStatusCount": {"t": {"phase": {"Running": 1.5}}}}, "status.taskStatusCount.phase"),
    ({"taskStatusCount": {"t": {"phase": ["Running"]}}}, "status.taskStatusCount.phase"),
    ({"taskStatusCount": ["t"]}, "status.taskStatusCount"),
    ({"state": "Running"}, "status.state"),
    ({"state": {"phase": 3}}, "status.state.phase"),
    ({"state": {"phase": "Running", "message": ["m"]}}, "status.state.message"),
    ({"state": {"lastTransitionTime": "yesterday"}}, "status.state.lastTransitionTime"),
    ({"running": "3"}, "status.running"),
    ({"retryCount": True}, "status.retryCount"),
    ({"version": 1 << 31}, "status.version"),
    ({"minAvailable": {"n": 1}}, "status.minAvailable"),
    ({"runningDuration": 5}, "status.runningDuration"),
    ({"controlledResources": {"plugin-env": 1}}, "status.controlledResources"),
    ({"controlledResources": ["env"]}, "status.controlledResources"),
    ({"conditions": {"status": "Pending"}}, "status.conditions"),
    ({"conditions": ["Pending"]}, "status.conditions"),
    ({"conditions": [{"status": "Pending", "lastTransitionTime": 5}]}, "status.conditions.lastTransitionTime"),
    ({"conditions": [{"status": True}]}, "status.conditions.status"),
    ({**RUNNING, "succeeded": "all"}, "status.succeeded"),
])
def test_where_a_status_does_not_decode_as_vcctls_typed_read_finds_it(status, where):
    found = jobstatus.mismatch(status)
    assert (found[0] if found else None) == where, found
    typed = gotyped.mismatch(status, kindtypes.JOB_STATUS, ("status",))
    assert (".".join(typed.path) if typed else None) == where, typed


def test_fields_the_previous_version_shares_are_not_looked_at_again():
    """(a shared value was looked at in the version before; what changed is)"""
    bad_counts = {"t": {"phase": {"Running": "one"}}}
    before = {"taskStatusCount": bad_counts, "running": 1}
    assert jobstatus.mismatch({"taskStatusCount": bad_counts, "running": 2}, before) is None
    assert jobstatus.mismatch({"taskStatusCount": {"t": {"phase": {"Running": "one"}}}}, before) is not None
    assert jobstatus.mismatch({"taskStatusCount": bad_counts, "running": "2"}, before)[0] == "status.running"
