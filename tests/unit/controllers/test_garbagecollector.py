"""The garbage collector's pure parts (Volcano's garbagecollector_test.go: needsCleanup, isJobFinished,
getFinishAndExpireTime, jobFinishTime) and its delete's UID precondition; the controller itself runs in
tests/scenarios/test_vcjob_lifecycle.py."""
from __future__ import annotations

import datetime as dt

import pytest

from vclite.api import kinds, meta
from vclite.apiserver import inprocess
from vclite.controllers import garbagecollector as gc
from vclite.lib import clock as clock_mod
from vclite.lib import errors

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


def test_the_delete_carries_the_uid_read_so_a_vcjob_made_again_meanwhile_is_kept():
    """Volcano deletes with `Preconditions{UID: fresh.UID}`: a vcjob deleted and created again under the
    same name between the final read and the delete is a Conflict (retried), never deleted unjudged."""
    clock = clock_mod.VirtualClock()
    api = inprocess.new_client(clock)
    spec = {"ttlSecondsAfterFinished": 0, "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}
    made = api.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                       "metadata": {"name": "j", "namespace": "default"}, "spec": spec})
    api.update_status({**made, "status": {"state": {"phase": "Completed", "lastTransitionTime": clock_mod.format_time(
        clock.now())}}})
    read = api.get

    def get_then_remake(kind, ns, name):
        obj = read(kind, ns, name)
        if kind is kinds.JOB:   # (another client deletes the vcjob and makes a new one of the same name)
            api.delete(kinds.JOB, ns, name)
            api.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                        "metadata": {"name": "j", "namespace": "default"}, "spec": spec})
        return obj

    collector = gc.GarbageCollector(api, clock)
    collector.start()
    api.get = get_then_remake
    with pytest.raises(errors.Conflict, match="the UID in the precondition"):
        collector.sync("default/j")
    api.get = read
    kept = api.get(kinds.JOB, "default", "j")
    assert kept["metadata"]["uid"] != made["metadata"]["uid"] and not meta.is_deleting(kept)
    collector.sync("default/j")   # (the retry judges the new one: not finished, not deleted)
    assert api.get(kinds.JOB, "default", "j")["metadata"]["uid"] == kept["metadata"]["uid"]
