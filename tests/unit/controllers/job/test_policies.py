"""applyPolicies (POL-01..10 of the reference §4.8, plus the upstream TestApplyPolicies rows) and the
cancellation rules of delayed actions."""
from __future__ import annotations

import pytest

from vclite.api import batch
from vclite.controllers.job import policies

E, A = batch.Event, batch.Action
R = policies.Request


def _job(policies_=(), task_policies=(), version=0, uid="uid-1"):
    return {"metadata": {"name": "job1", "namespace": "test", "uid": uid},
            "spec": {"policies": list(policies_),
                     "tasks": [{"name": "task1", "replicas": 6, "policies": list(task_policies)},
                               {"name": "task2", "replicas": 1}]},
            "status": {"version": version}}


CASES = [
    ("POL-01-explicit-action", _job(), R(action=A.ENQUEUE_JOB), (A.ENQUEUE_JOB, None)),
    ("POL-02-out-of-sync-is-internal", _job([{"event": "PodEvicted", "action": "AbortJob"}]),
     R(event=E.OUT_OF_SYNC), (A.SYNC_JOB, None)),
    ("POL-03-pod-running-is-internal", _job([{"event": "*", "action": "AbortJob"}]), R(event=E.POD_RUNNING),
     (A.SYNC_JOB, None)),
    ("POL-04-other-job-uid", _job([{"event": "PodEvicted", "action": "TerminateJob"}]),
     R(event=E.POD_EVICTED, job_uid="job1-uid-10000"), (A.SYNC_JOB, None)),
    ("POL-05-stale-version", _job([{"event": "PodEvicted", "action": "TerminateJob"}], version=2),
     R(event=E.POD_EVICTED, job_version=1), (A.SYNC_JOB, None)),
    ("POL-06-pod-pending-with-timeout", _job([{"event": "PodPending", "action": "RestartPod", "timeout": "10s"}]),
     R(event=E.POD_PENDING), (A.RESTART_POD, 10.0)),
    ("POL-07-pod-pending-needs-timeout", _job([{"event": "PodPending", "action": "RestartPod"}]),
     R(event=E.POD_PENDING), (A.SYNC_JOB, None)),
    ("POL-10-any-event", _job([{"events": ["*"], "action": "AbortJob"}]), R(event=E.JOB_UNKNOWN),
     (A.ABORT_JOB, None)),
    ("command-issued-internal", _job([{"event": "*", "action": "AbortJob"}]),
     R(event=E.COMMAND_ISSUED, task_name="task1"), (A.SYNC_JOB, None)),
    ("same-uid-current-version", _job([{"event": "PodFailed", "action": "RestartJob"}], version=2),
     R(event=E.POD_FAILED, job_uid="uid-1", job_version=2), (A.RESTART_JOB, None)),
    ("newer-pod-version-not-stale", _job([{"event": "PodFailed", "action": "RestartJob"}], version=2),
     R(event=E.POD_FAILED, job_version=3), (A.RESTART_JOB, None)),
    ("no-version-never-stale", _job([{"event": "Unknown", "action": "RestartJob"}], version=4),
     R(event=E.JOB_UNKNOWN), (A.RESTART_JOB, None)),
    ("event-in-events-list", _job([{"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"}]),
     R(event=E.POD_FAILED), (A.RESTART_JOB, None)),
    ("event-and-events-merged", _job([{"events": ["PodEvicted"], "event": "TaskCompleted",
                                       "action": "CompleteJob"}]), R(event=E.TASK_COMPLETED), (A.COMPLETE_JOB, None)),
    ("no-match-syncs", _job([{"event": "PodEvicted", "action": "RestartJob"}]), R(event=E.POD_FAILED),
     (A.SYNC_JOB, None)),
    ("exit-code-match", _job([{"exitCode": 3, "action": "RestartJob"}]), R(event=E.POD_FAILED, exit_code=3),
     (A.RESTART_JOB, None)),
    ("exit-code-mismatch", _job([{"exitCode": 3, "action": "RestartJob"}]), R(event=E.POD_FAILED, exit_code=1),
     (A.SYNC_JOB, None)),
    ("exit-code-with-timeout", _job([{"exitCode": 137, "action": "RestartTask", "timeout": "1m30s"}]),
     R(event=E.POD_FAILED, exit_code=137), (A.RESTART_TASK, 90.0)),
    ("no-exit-code-no-match", _job([{"exitCode": 3, "action": "RestartJob"}]), R(event=E.POD_EVICTED),
     (A.SYNC_JOB, None)),
    ("task-level-overrides-job-level", _job([{"event": "PodFailed", "action": "AbortJob"}],
                                            [{"event": "PodFailed", "action": "RestartTask"}]),
     R(event=E.POD_FAILED, task_name="task1"), (A.RESTART_TASK, None)),
    ("task-level-only-for-its-task", _job([{"event": "PodFailed", "action": "AbortJob"}],
                                          [{"event": "PodFailed", "action": "RestartTask"}]),
     R(event=E.POD_FAILED, task_name="task2"), (A.ABORT_JOB, None)),
    ("task-level-miss-falls-back-to-job", _job([{"event": "PodFailed", "action": "AbortJob"}],
                                               [{"event": "PodEvicted", "action": "RestartTask"}]),
     R(event=E.POD_FAILED, task_name="task1"), (A.ABORT_JOB, None)),
    ("first-match-wins", _job([{"event": "PodFailed", "action": "AbortJob"},
                               {"event": "PodFailed", "action": "RestartJob"}]), R(event=E.POD_FAILED),
     (A.ABORT_JOB, None)),
    ("pending-without-timeout-falls-through", _job([{"event": "PodPending", "action": "AbortJob"},
                                                    {"event": "*", "action": "RestartJob", "timeout": "5s"}]),
     R(event=E.POD_PENDING), (A.RESTART_JOB, 5.0)),
    ("any-with-pending-needs-timeout", _job([{"event": "*", "action": "AbortJob"}]), R(event=E.POD_PENDING),
     (A.SYNC_JOB, None)),
    ("no-event-no-match", _job([{"event": "*", "action": "AbortJob"}]), R(), (A.SYNC_JOB, None)),
    # job_controller_util_test.go TestApplyPolicies rows not named above
    ("upstream-version-outdated", _job(), R(job_version=1), (A.SYNC_JOB, None)),
    ("upstream-task-policy-with-exitcode-no-event", _job(task_policies=[
        {"action": "SyncJob", "event": "CommandIssued", "exitCode": 0}]), R(task_name="task1"), (A.SYNC_JOB, None)),
    ("upstream-job-policy-command-issued", _job([{"action": "SyncJob", "event": "CommandIssued"}]),
     R(event=E.COMMAND_ISSUED), (A.SYNC_JOB, None)),
    ("upstream-job-policy-with-exitcode-empty-request", _job([
        {"action": "SyncJob", "event": "CommandIssued", "exitCode": 0}]), R(), (A.SYNC_JOB, None)),
    ("task-completed-complete-job", _job([{"event": "TaskCompleted", "action": "CompleteJob"}]),
     R(event=E.TASK_COMPLETED, task_name="task2"), (A.COMPLETE_JOB, None)),
]


@pytest.mark.parametrize("job,req,want", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_apply_policies(job, req, want):
    assert policies.apply_policies(job, req) == want


def _d(action=A.RESTART_POD, event=E.POD_FAILED, task="t", pod="p", uid="u1", part=""):
    return policies.Delayed(action, event, task, pod, uid, part, due=10.0)


@pytest.mark.parametrize("delayed,req,cancelled", [
    pytest.param(_d(event=E.POD_PENDING), R(event=E.POD_RUNNING, pod_name="p", pod_uid="u1"), True,
                 id="running-cancels-pending-same-uid"),
    pytest.param(_d(event=E.POD_PENDING), R(event=E.POD_FAILED, pod_name="p", pod_uid="u1"), True,
                 id="failed-cancels-pending-same-uid"),
    pytest.param(_d(event=E.POD_PENDING), R(event=E.POD_RUNNING, pod_name="p", pod_uid="u2"), False,
                 id="recreated-pod-does-not-cancel"),
    pytest.param(_d(event=E.POD_PENDING), R(event=E.POD_PENDING, pod_name="p", pod_uid="u1"), False,
                 id="pending-never-cancels"),
    pytest.param(_d(event=E.POD_FAILED), R(event=E.POD_RUNNING, pod_name="p", pod_uid="u9"), True,
                 id="running-cancels-failed"),
    pytest.param(_d(event=E.POD_EVICTED), R(event=E.POD_RUNNING, pod_name="p"), True, id="running-cancels-evicted"),
    pytest.param(_d(event=E.POD_FAILED), R(event=E.POD_EVICTED, pod_name="p"), False, id="evicted-keeps-failed"),
    pytest.param(_d(event=E.POD_FAILED), R(event=E.POD_RUNNING, pod_name="q"), False, id="other-pod"),
    pytest.param(_d(event=E.POD_PENDING), R(event=E.OUT_OF_SYNC, pod_name="p", pod_uid="u1"), False,
                 id="non-pod-event"),
])
def test_cancelled_by_request(delayed, req, cancelled):
    assert policies.cancelled_by_request(delayed, req) is cancelled


@pytest.mark.parametrize("delayed,executed,cancelled", [
    pytest.param(_d(action=A.ABORT_JOB), (A.RESTART_JOB, "x", "y", ""), True, id="job-action-cancels-job-actions"),
    pytest.param(_d(action=A.RESTART_POD), (A.RESTART_JOB, "t", "p", ""), False, id="job-action-keeps-pod-actions"),
    pytest.param(_d(action=A.RESTART_TASK, task="t"), (A.RESTART_TASK, "t", "z", ""), True, id="same-task"),
    pytest.param(_d(action=A.RESTART_TASK, task="t"), (A.RESTART_TASK, "u", "p", ""), False, id="other-task"),
    pytest.param(_d(action=A.RESTART_POD, pod="p"), (A.RESTART_POD, "x", "p", ""), True, id="same-pod"),
    pytest.param(_d(action=A.RESTART_POD, pod="p"), (A.RESTART_POD, "t", "q", ""), False, id="other-pod"),
    pytest.param(_d(action=A.RESTART_PARTITION, part="1"), (A.RESTART_PARTITION, "t", "q", "1"), True,
                 id="same-partition"),
    pytest.param(_d(action=A.RESTART_PARTITION, part="1"), (A.RESTART_PARTITION, "t", "p", "0"), False,
                 id="other-partition"),
])
def test_cancelled_by_action(delayed, executed, cancelled):
    assert policies.cancelled_by_action(delayed, *executed) is cancelled


@pytest.mark.parametrize("action,kind", [
    pytest.param(A.RESTART_TASK, policies.ActionType.TASK, id="task"),
    pytest.param(A.RESTART_POD, policies.ActionType.POD, id="pod"),
    pytest.param(A.RESTART_PARTITION, policies.ActionType.PARTITION, id="partition"),
    pytest.param(A.RESUME_JOB, policies.ActionType.JOB, id="resume"),
    pytest.param(A.SYNC_JOB, policies.ActionType.JOB, id="sync-defaults-to-job"),
])
def test_action_type(action, kind):
    assert policies.action_type(action) is kind
