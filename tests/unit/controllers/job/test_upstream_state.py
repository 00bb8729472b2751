"""Volcano's job_state_test.go, case by case, against vclite's real job controller and in-process API.

Upstream runs each phase's Execute(action) with a fake controller whose job status holds the counters.
Here the job is stored with that phase, retryCount and counters, the counters that KillJob recounts are real
pods of the job (running, pending or held terminating by a finalizer), and the controller executes the action
(`JobController._run`: the table row, then KillJob / SyncJob through the API). The PodGroup is still Pending,
so a SyncJob evaluates the stored counters, as upstream's syncJob does before the scheduler enqueues the job.
"""
from __future__ import annotations

import pytest

from vclite.api import batch
from vclite.api import kinds
from vclite.controllers.job import pods as pods_mod
from tests.scenarios.test_vcjob_lifecycle import Cluster, task, vcjob

A, P = batch.Action, batch.JobPhase
HOLD = "test/hold"


def _pod(c, job, task_name, index, phase):
    """A pod of the job in `phase`; "Terminating": running, then deleted and held by a finalizer."""
    spec_task = next(t for t in job["spec"]["tasks"] if t["name"] == task_name)
    pod = pods_mod.build_pod(job, spec_task, index)
    if phase == "Terminating":
        pod["metadata"]["finalizers"] = [HOLD]
    c.client.create(pod)
    c.client.patch(kinds.POD, "default", pod["metadata"]["name"],
                   {"status": {"phase": "Running" if phase == "Terminating" else phase}}, status=True)
    if phase == "Terminating":
        c.client.delete(kinds.POD, "default", pod["metadata"]["name"])


def run_case(phase, action, status=None, pods=(), tasks=(("task1", 1),), **spec):
    """The job in `phase` with `status` counters and `pods` ((task, phase) each); `action` executed once."""
    c = Cluster()
    c.create(vcjob("job1", tasks=[task(n, r) for n, r in tasks], **spec))
    job = c.job("job1")
    st = {**job["status"], **(status or {}), "state": {"phase": str(phase)}}
    c.client.update_status({**job, "status": st})
    seen: dict[str, int] = {}
    for task_name, pod_phase in pods:
        seen[task_name] = seen.get(task_name, -1) + 1
        _pod(c, c.job("job1"), task_name, seen[task_name], pod_phase)
    job = c.ctrl._get("default/job1")
    assert job is not None and job["status"]["state"]["phase"] == str(phase)
    c.ctrl._run(job, action, "", "", "")
    return c.job("job1")["status"]


# (upstream test, case, phase, action, counters, pods, tasks, spec, phase wanted, retryCount wanted)
CASES = [
    ("TestAbortedState_Execute", "ResumeAction", P.ABORTED, A.RESUME_JOB, {}, (), None, {}, P.RESTARTING, 1),
    ("TestAbortedState_Execute", "AnyOtherAction", P.ABORTED, A.RESTART_JOB, {}, (), None, {}, P.ABORTED, None),
    ("TestAbortingState_Execute", "ResumeAction", P.ABORTING, A.RESUME_JOB, {}, (), None, {}, P.RESTARTING, 1),
    ("TestAbortingState_Execute", "AnyOtherAction-no-pods", P.ABORTING, A.RESTART_JOB, {}, (), None, {},
     P.ABORTED, None),
    ("TestAbortingState_Execute", "AnyOtherAction-pods", P.ABORTING, A.RESTART_JOB, {"pending": 1},
     (("task1", "Pending"),), None, {}, P.ABORTING, None),
    ("TestCompletingState_Execute", "pods", P.COMPLETING, A.RESUME_JOB, {"running": 2},
     (("task1", "Running"), ("task1", "Running")), (("task1", 2),), {}, P.COMPLETING, None),
    ("TestCompletingState_Execute", "no-pods", P.COMPLETING, A.RESUME_JOB, {}, (), None, {}, P.COMPLETED, None),
    ("TestFinishedState_Execute", "Completed", P.COMPLETED, A.RESUME_JOB, {}, (), None, {}, P.COMPLETED, None),
    ("TestPendingState_Execute", "RestartJob-no-terminating", P.PENDING, A.RESTART_JOB, {}, (), None, {},
     P.RESTARTING, 1),
    ("TestPendingState_Execute", "RestartJob-terminating", P.PENDING, A.RESTART_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.RESTARTING, 1),
    ("TestPendingState_Execute", "AbortJob-no-terminating", P.PENDING, A.ABORT_JOB, {}, (), None, {},
     P.ABORTING, None),
    ("TestPendingState_Execute", "AbortJob-terminating", P.PENDING, A.ABORT_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.ABORTING, None),
    ("TestPendingState_Execute", "TerminateJob-terminating", P.PENDING, A.TERMINATE_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.TERMINATING, None),
    ("TestPendingState_Execute", "CompleteJob-no-terminating", P.PENDING, A.COMPLETE_JOB, {}, (), None, {},
     P.COMPLETING, None),
    ("TestPendingState_Execute", "CompleteJob-terminating", P.PENDING, A.COMPLETE_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.COMPLETING, None),
    ("TestPendingState_Execute", "Enqueue-minAvailable-equal-running", P.PENDING, A.ENQUEUE_JOB, {"running": 3},
     (), (("task1", 3),), {"minAvailable": 3}, P.RUNNING, None),
    ("TestPendingState_Execute", "Enqueue-minAvailable-above-running", P.PENDING, A.ENQUEUE_JOB, {"running": 2},
     (), (("task1", 3),), {"minAvailable": 3}, P.PENDING, None),
    ("TestPendingState_Execute", "Sync-minAvailable-above-running", P.PENDING, A.SYNC_JOB, {"running": 2},
     (), (("task1", 3),), {"minAvailable": 3}, P.PENDING, None),
    ("TestRestartingState_Execute", "RetryCount-reached-MaxRetry", P.RESTARTING, A.RESTART_JOB,
     {"retryCount": 3}, (), None, {"maxRetry": 3}, P.FAILED, 3),
    ("TestRestartingState_Execute", "RetryCount-below-MaxRetry", P.RESTARTING, A.RESTART_JOB,
     {"retryCount": 1, "minAvailable": 1}, (), (("task1", 1), ("task2", 1)), {"maxRetry": 3, "minAvailable": 1},
     P.PENDING, 1),
    ("TestRunningState_Execute", "RestartJob-terminating", P.RUNNING, A.RESTART_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.RESTARTING, 1),
    ("TestRunningState_Execute", "RestartJob-no-terminating", P.RUNNING, A.RESTART_JOB, {}, (), None, {},
     P.RESTARTING, 1),
    ("TestRunningState_Execute", "AbortJob-no-terminating", P.RUNNING, A.ABORT_JOB, {}, (), None, {},
     P.ABORTING, None),
    ("TestRunningState_Execute", "AbortJob-terminating", P.RUNNING, A.ABORT_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.ABORTING, None),
    ("TestRunningState_Execute", "TerminateJob-no-terminating", P.RUNNING, A.TERMINATE_JOB, {}, (), None, {},
     P.TERMINATING, None),
    ("TestRunningState_Execute", "TerminateJob-terminating", P.RUNNING, A.TERMINATE_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.TERMINATING, None),
    ("TestRunningState_Execute", "CompleteJob-no-terminating", P.RUNNING, A.COMPLETE_JOB, {}, (), None, {},
     P.COMPLETING, None),
    ("TestRunningState_Execute", "CompleteJob-terminating", P.RUNNING, A.COMPLETE_JOB, {"terminating": 2},
     (("task1", "Terminating"), ("task1", "Terminating")), (("task1", 2),), {}, P.COMPLETING, None),
    ("TestRunningState_Execute", "Sync-total-equals-failed+succeeded", P.RUNNING, A.SYNC_JOB,
     {"succeeded": 2, "taskStatusCount": {"task1": {"phase": {"Succeeded": 2}}}}, (), (("task1", 2),), {},
     P.COMPLETED, None),
    ("TestRunningState_Execute", "Sync-total-above-failed+succeeded", P.RUNNING, A.SYNC_JOB,
     {"succeeded": 1, "taskStatusCount": {"task1": {"phase": {"Succeeded": 1}}}}, (), (("task1", 2),), {},
     P.RUNNING, None),
    ("TestRunningState_Execute", "Sync-back-to-pending-all-pending", P.RUNNING, A.SYNC_JOB, {"pending": 5}, (),
     (("task1", 5),), {"minAvailable": 3}, P.PENDING, None),
    ("TestRunningState_Execute", "Sync-back-to-pending-pending-above-total-minAvailable", P.RUNNING, A.SYNC_JOB,
     {"pending": 3, "running": 2}, (), (("task1", 5),), {"minAvailable": 3}, P.PENDING, None),
    ("TestRunningState_Execute", "Sync-keep-running-pending-within-total-minAvailable", P.RUNNING, A.SYNC_JOB,
     {"pending": 2, "running": 1, "succeeded": 1, "failed": 1}, (), (("task1", 5),), {"minAvailable": 3},
     P.RUNNING, None),
    ("TestTerminatingState_Execute", "pods", P.TERMINATING, A.TERMINATE_JOB, {"running": 2},
     (("task1", "Running"), ("task1", "Running")), (("task1", 2),), {}, P.TERMINATING, None),
    ("TestTerminatingState_Execute", "no-pods", P.TERMINATING, A.TERMINATE_JOB, {}, (), None, {},
     P.TERMINATED, None),
]


@pytest.mark.parametrize("phase, action, counters, pods, tasks, spec, want, retry",
                         [pytest.param(*row[2:], id=f"{row[0]}-{row[1]}") for row in CASES])
def test_upstream_job_state_execute(phase, action, counters, pods, tasks, spec, want, retry):
    st = run_case(phase, action, counters, pods, tasks or (("task1", 1),), **spec)
    assert st["state"]["phase"] == str(want)
    if retry is not None:
        assert st.get("retryCount", 0) == retry
