"""Volcano's job_controller_handler_test.go, case by case, against vclite's job controller watch handlers:
what each API change leaves in the controller's watch cache and its queue. The changes are real writes
through the in-process API where the API can make them, else watch events handed to the handler (a
duplicate ADDED, a pod deleted that the cache never saw), as upstream's tests call the handlers."""
from __future__ import annotations

import pytest

from vclite.api import batch
from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.apiserver import inprocess
from vclite.controllers.job import controller as job_controller
from vclite.controllers.job import pods as pods_mod
from vclite.lib import clock as clock_mod
from tests.scenarios.test_vcjob_lifecycle import task, vcjob

ADDED, MODIFIED, DELETED = (client_mod.EventType.ADDED, client_mod.EventType.MODIFIED,
                            client_mod.EventType.DELETED)
KEY = "default/job1"


@pytest.fixture
def ctl():
    """The controller watching the API, nothing synced yet (upstream's newController)."""
    clock = clock_mod.VirtualClock()
    client = inprocess.new_client(clock)
    ctrl = job_controller.JobController(client, clock)
    ctrl.start()
    return ctrl


def _job(ctl):
    return ctl.client.create(vcjob("job1", tasks=[task("task1", 2)]))


def _pod(job, index=0, phase="Pending", **md):
    pod = pods_mod.build_pod(job, job["spec"]["tasks"][0], index)
    pod["metadata"].update(md)
    pod["status"] = {"phase": phase}
    pod["metadata"]["resourceVersion"] = f"{index}-{phase}"
    return pod


def _cached(ctl):
    return {name: p["status"].get("phase") for pods in (ctl._pods.get(KEY) or {}).values()
            for name, p in pods.items()}


def test_add_command(ctl):
    """TestAddCommandFunc "AddCommand Success Case": a bus Command aimed at a job is queued for it. (The failure
    case, a string handed to the handler, is Go's interface{} plumbing: not applicable.)"""
    uid = _job(ctl)["metadata"]["uid"]
    ctl.queue.get()
    ctl.client.create({"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
                       "metadata": {"name": "valid-command", "namespace": "default"}, "action": "AbortJob",
                       "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "job1",
                                  "uid": uid}})
    assert len(ctl.queue) == 1
    assert [r.event for r in ctl._requests[KEY]][-1] == batch.Event.COMMAND_ISSUED


def test_add_job(ctl):
    """TestJobAddFunc "AddJob Success": the job is in the cache and its key queued once."""
    _job(ctl)
    assert KEY in ctl._jobs and len(ctl.queue) == 1


@pytest.mark.parametrize("new_phase, same_version, queued", [
    pytest.param("Running", False, True, id="Job-Update-Success"),
    pytest.param("Pending", True, False, id="Job-Update-Failure-same-resourceVersion"),
])
def test_update_job(ctl, new_phase, same_version, queued):
    """TestUpdateJobFunc: the cache follows the job's phase; an update with the same resourceVersion is ignored."""
    job = _job(ctl)
    ctl.queue.get()
    ctl._requests.clear()
    old = {**job, "status": {"state": {"phase": "Pending"}}}
    new = {**job, "status": {"state": {"phase": new_phase}}}
    if not same_version:
        new["metadata"] = {**job["metadata"], "resourceVersion": "54469999"}
    ctl._on_job(client_mod.WatchEvent(MODIFIED, kinds.JOB, new, old))
    if queued:
        assert ctl._jobs[KEY]["status"]["state"]["phase"] == new_phase
    assert bool(ctl._requests.get(KEY)) is queued


@pytest.mark.parametrize("events, want", [
    pytest.param([(ADDED, "Pending", {})], {"job1-task1-0": "Pending"}, id="AddPod-Success"),
    pytest.param([(ADDED, "Pending", {}), (ADDED, "Pending", {})], {"job1-task1-0": "Pending"},
                 id="AddPod-Duplicate-Pod"),
    pytest.param([(ADDED, "Pending", {"deletionTimestamp": "2026-01-01T00:00:00Z"})], {"job1-task1-0": "Pending"},
                 id="AddPod-terminating-pod-still-cached"),
    pytest.param([(ADDED, "Pending", {}), (MODIFIED, "Running", {})], {"job1-task1-0": "Running"},
                 id="UpdatePod-Success"),
    pytest.param([(ADDED, "Pending", {}), (MODIFIED, "Failed", {})], {"job1-task1-0": "Failed"},
                 id="UpdatePod-Failed"),
    pytest.param([(ADDED, "Running", {}), (MODIFIED, "Running", {"deletionTimestamp": "2026-01-01T00:00:00Z"})],
                 {"job1-task1-0": "Running"}, id="UpdatePod-keeps-terminating-pod"),
])
def test_add_and_update_pod(ctl, events, want):
    """TestAddPodFunc and TestUpdatePodFunc: the pod in the job's cache, by task, with its latest phase."""
    job = _job(ctl)
    old = None
    for type_, phase, md in events:
        pod = _pod(job, 0, phase, **md)
        if type_ is MODIFIED:
            pod["metadata"]["resourceVersion"] += "-m"
        ctl._on_pod(client_mod.WatchEvent(type_, kinds.POD, pod, old if type_ is MODIFIED else None))
        old = pod
    assert _cached(ctl) == want
    assert set(ctl._pods[KEY]) == {"task1"}


@pytest.mark.parametrize("deleted, left", [
    pytest.param(1, {"job1-task1-0"}, id="DeletePod-success"),
    pytest.param(2, {"job1-task1-0", "job1-task1-1"}, id="DeletePod-Pod-NotAvailable"),
])
def test_delete_pod(ctl, deleted, left):
    """TestDeletePodFunc: a deleted pod leaves the cache; one the cache never had changes nothing."""
    job = _job(ctl)
    for i in (0, 1):
        ctl._on_pod(client_mod.WatchEvent(ADDED, kinds.POD, _pod(job, i, "Running"), None))
    ctl._on_pod(client_mod.WatchEvent(DELETED, kinds.POD, _pod(job, deleted, "Running"), None))
    assert set(_cached(ctl)) == left


def test_update_podgroup(ctl):
    """TestUpdatePodGroupFunc: a PodGroup going Pending -> Running queues its job."""
    _job(ctl)
    ctl.queue.get()
    ctl.sync(KEY)   # (the PodGroup is made by the first sync)
    while ctl.queue.get() is not None:
        pass
    [pg] = ctl.client.list(kinds.PODGROUP, "default")
    ctl.client.patch(kinds.PODGROUP, "default", pg["metadata"]["name"], {"status": {"phase": "Running"}}, status=True)
    assert len(ctl.queue) == 1


@pytest.mark.parametrize("drop, cached", [
    pytest.param(None, True, id="valid-pod"),
    pytest.param("volcano.sh/task-spec", False, id="missing-TaskSpecKey"),
    pytest.param("volcano.sh/job-version", False, id="missing-JobVersion"),
])
def test_pod_without_task_or_version_is_not_cached(ctl, drop, cached):
    """pkg/controllers/apis/job_info_test.go TestJobInfo_AddPod: a pod without the task-spec or job-version
    annotation is refused by the job's cache (here: not cached, no request)."""
    job = _job(ctl)
    ctl.queue.get()
    ctl._requests.clear()
    pod = _pod(job)
    if drop:
        del pod["metadata"]["annotations"][drop]
    ctl._on_pod(client_mod.WatchEvent(ADDED, kinds.POD, pod, None))
    assert bool(_cached(ctl)) is cached and bool(ctl._requests.get(KEY)) is cached
