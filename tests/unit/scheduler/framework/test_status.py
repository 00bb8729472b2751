"""PodGroup phase at session close, condition upserts, and "changed" ignoring time-only changes."""
from __future__ import annotations

import pytest

from vclite.scheduler.framework import snapshot, status
from vclite.scheduler.framework import tasks as tasks_mod

from .. import objects

S = tasks_mod.TaskStatus


def job(min_member, phase, statuses):
    pods = [objects.pod(f"ns/t-{i}", "g") for i in range(len(statuses))]
    j = snapshot.build(objects.state(podgroups=[objects.pg("ns/g", min_member=min_member, phase=phase)],
                                     pods=pods)).jobs["ns/g"]
    for i, s in enumerate(statuses):
        t = j.tasks[f"ns/t-{i}"]
        j.update_task_status(t, s)
        t.node = "n1" if s != S.PENDING else ""
    return j


@pytest.mark.parametrize("min_member, phase, statuses, unschedulable, want", [
    pytest.param(2, "Pending", [S.PENDING, S.PENDING], False, "Pending", id="nothing scheduled"),
    pytest.param(2, "Inqueue", [S.PENDING, S.PENDING], False, "Inqueue", id="inqueue stays inqueue"),
    pytest.param(2, "Inqueue", [S.BINDING, S.BINDING], False, "Inqueue", id="binding is not yet scheduled"),
    pytest.param(2, "Inqueue", [S.BOUND, S.RUNNING], False, "Running", id="bound and running"),
    pytest.param(2, "Running", [S.SUCCEEDED, S.FAILED], False, "Completed", id="all scheduled tasks finished"),
    pytest.param(2, "Running", [S.RUNNING, S.RELEASING], False, "Running", id="releasing with a node counts"),
    pytest.param(2, "Running", [S.RUNNING, S.PENDING], True, "Unknown", id="running + unschedulable now"),
    pytest.param(2, "Running", [S.RUNNING, S.PENDING], False, "Pending", id="lost its gang"),
])
def test_phase(min_member, phase, statuses, unschedulable, want):
    assert status.phase(job(min_member, phase, statuses), unschedulable) == want


@pytest.mark.parametrize("statuses, want", [
    pytest.param([S.BINDING, S.BINDING], "Running", id="the session's binds complete the gang"),
    pytest.param([S.BINDING, S.BOUND], "Running", id="bound by an earlier session, binding now"),
    pytest.param([S.BINDING, S.PENDING], "Inqueue", id="half a gang bound is not running"),
    pytest.param([S.ALLOCATED, S.ALLOCATED], "Inqueue", id="allocated in a discarded statement"),
    pytest.param([S.BINDING, S.SUCCEEDED], "Running", id="not completed while one is binding"),
])
def test_phase_counting_binding_as_scheduled(statuses, want):
    """An embedded shell binds right after the session: the PodGroup is Running at once."""
    assert status.phase(job(2, "Inqueue", statuses), False, binding_scheduled=True) == want


def test_upsert_keeps_times_when_only_times_change():
    old = {"type": "Scheduled", "status": "True", "reason": "r", "message": "", "lastTransitionTime": "t0",
           "transitionID": "s0"}
    conds = [old]
    status.upsert(conds, dict(old, lastTransitionTime="t1", transitionID="s1"))
    assert conds == [old]
    status.upsert(conds, dict(old, status="False", lastTransitionTime="t1"))
    assert conds[0]["lastTransitionTime"] == "t1"
    status.upsert(conds, {"type": "Unschedulable", "status": "True"})
    assert [c["type"] for c in conds] == ["Scheduled", "Unschedulable"]


@pytest.mark.parametrize("old, new, changed", [
    pytest.param({"phase": "Running", "running": 1}, {"phase": "Running", "running": 1, "succeeded": 0, "failed": 0},
                 False, id="zero counts equal absent counts"),
    pytest.param({"phase": "Running", "conditions": [{"type": "A", "lastTransitionTime": "t0"}]},
                 {"phase": "Running", "conditions": [{"type": "A", "lastTransitionTime": "t1"}]}, False,
                 id="condition time only"),
    pytest.param({"phase": "Inqueue"}, {"phase": "Running"}, True, id="phase"),
    pytest.param({"phase": "Running", "conditions": [{"type": "A", "message": "x"}]},
                 {"phase": "Running", "conditions": [{"type": "A", "message": "y"}]}, True, id="message"),
])
def test_status_changed(old, new, changed):
    assert status.status_changed(old, new) is changed
