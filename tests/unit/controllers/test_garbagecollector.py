"""The garbage collector's pure parts (Volcano's garbagecollector_test.go: needsCleanup, isJobFinished,
getFinishAndExpireTime, jobFinishTime); the controller itself runs in tests/scenarios/test_vcjob_lifecycle.py."""
from __future__ import annotations

import datetime as dt

import pytest

from vclite.controllers import garbagecollector as gc

T = "0001-01-01T01:01:01Z"   # upstream's testTime


def job(phase="", ttl=None, finished=T):
    obj = {"metadata": {"name": "job1", "namespace": "test"}, "spec": {}, "status": {"state": {}}}
    if ttl is not None:
        obj["spec"]["ttlSecondsAfterFinished"] = ttl
    if phase:
        obj["status"]["state"]["phase"] = phase
    if finished:
        obj["status"]["state"]["lastTransitionTime"] = finished
    return obj


@pytest.mark.parametrize("obj, needed", [
    pytest.param(job("Completed", 3), True, id="NeedsCleanup-Success-Case"),
    pytest.param(job("Running", 3), False, id="NeedsCleanup-Failure-Case"),
    pytest.param(job("Completed"), False, id="IsJobFinished-True-Case-but-no-ttl"),
    pytest.param(job("Failed", 0), True, id="failed-is-finished"),
    pytest.param(job("Terminated", 0), True, id="terminated-is-finished"),
    pytest.param(job("Aborted", 0), False, id="aborted-is-not-finished"),
    pytest.param(job("", 0), False, id="TimeLeft-Failure-Case-no-phase"),
])
def test_needs_cleanup(obj, needed):
    assert gc.needs_cleanup(obj) is needed


@pytest.mark.parametrize("obj, expiry", [
    pytest.param(job("Completed", 3), dt.datetime(1, 1, 1, 1, 1, 4, tzinfo=dt.timezone.utc),
                 id="GetFinishAndExpireTime-Success-case"),
    pytest.param(job("Completed", 2), dt.datetime(1, 1, 1, 1, 1, 3, tzinfo=dt.timezone.utc),
                 id="GetFinishAndExpireTime-Failure-case"),   # (upstream's "failure" is another ttl, no error)
    pytest.param(job("Completed", 3, finished=None), None, id="JobFinishTime-Failure-Case-no-transition-time"),
    pytest.param(job("Running", 3), None, id="TimeLeft-not-to-be-cleaned-up"),
])
def test_expires_at(obj, expiry):
    assert gc.expires_at(obj) == expiry
