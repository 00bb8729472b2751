"""JobInfo gang arithmetic: readiness, per-role checks, whether to keep trying after a failure."""
from __future__ import annotations

import pytest

from vclite.scheduler.framework import fit, snapshot, status
from vclite.scheduler.framework import tasks as tasks_mod

from .. import objects

S = tasks_mod.TaskStatus


def job_with(min_member, statuses, min_task_member=None, best_effort=()):
    """statuses: list of (role, TaskStatus); tasks named r-<i>."""
    pods = []
    for i, (role, _) in enumerate(statuses):
        cpu = None if i in best_effort else "1"
        pods.append(objects.pod(f"ns/t-{i}", "g", cpu=cpu, mem=None if i in best_effort else "1Gi", role=role))
    snap = snapshot.build(objects.state(podgroups=[objects.pg("ns/g", min_member=min_member,
                                                              min_task_member=min_task_member)], pods=pods))
    job = snap.jobs["ns/g"]
    for i, (_, status) in enumerate(statuses):
        job.update_task_status(job.tasks[f"ns/t-{i}"], status)
    return job


@pytest.mark.parametrize("min_member, statuses, mtm, ready, pipelined, starving", [
    pytest.param(2, [("", S.RUNNING), ("", S.ALLOCATED)], None, True, True, False, id="two placed of two"),
    pytest.param(2, [("", S.RUNNING), ("", S.PIPELINED)], None, False, True, False, id="pipelined counts as waiting"),
    pytest.param(2, [("", S.SUCCEEDED), ("", S.PENDING)], None, False, False, True, id="succeeded counts ready"),
    pytest.param(2, [("m", S.RUNNING), ("m", S.RUNNING), ("w", S.PENDING)], {"m": 1, "w": 1}, False, False, False,
                 id="role below its minTaskMember"),
    pytest.param(1, [("m", S.RUNNING), ("w", S.PENDING)], {"m": 1, "w": 1}, True, True, False,
                 id="minMember below Σ minTaskMember: roles not checked"),
])
def test_readiness(min_member, statuses, mtm, ready, pipelined, starving):
    job = job_with(min_member, statuses, mtm)
    assert (job.check_task_ready() and job.is_ready()) is ready
    assert (job.check_task_pipelined() and job.is_pipelined()) is pipelined
    assert job.is_starving() is starving


def test_pending_best_effort_counts_as_ready():
    job = job_with(2, [("", S.RUNNING), ("", S.PENDING)], best_effort=(1,))
    assert job.is_ready()


@pytest.mark.parametrize("min_member, statuses, mtm, failed, want", [
    pytest.param(3, [("", S.ALLOCATED), ("", S.PENDING), ("", S.PENDING)], None, [1], False,
                 id="every task needed: stop"),
    pytest.param(1, [("m", S.PENDING), ("w", S.PENDING)], None, [0], True,
                 id="failed role has no minimum: continue"),
    pytest.param(2, [("m", S.ALLOCATED), ("m", S.PENDING), ("w", S.PENDING), ("w", S.PENDING)],
                 {"m": 1, "w": 1}, [1], True, id="failed role already has its minimum: continue"),
    pytest.param(2, [("m", S.ALLOCATED), ("m", S.PENDING), ("w", S.PENDING), ("w", S.PENDING)],
                 {"m": 2, "w": 0}, [1], False, id="failed role short of its minimum: stop"),
    pytest.param(2, [("m", S.PENDING), ("w", S.PENDING), ("w", S.PENDING)], {"m": 2, "w": 2}, [0], True,
                 id="min below Σ minTaskMember: enough pending in other roles"),
    pytest.param(3, [("m", S.PENDING), ("w", S.PENDING), ("w", S.PENDING), ("x", S.PENDING)],
                 {"m": 2, "w": 2}, [0, 1], False, id="min below Σ minTaskMember: not enough left"),
])
def test_need_continue_allocating(min_member, statuses, mtm, failed, want):
    job = job_with(min_member, statuses, mtm)
    for i in failed:
        job.record_fit_errors(job.tasks[f"ns/t-{i}"], fit.FitErrors(1, {"x": 1}))
    assert job.need_continue_allocating() is want


def test_role_cache_and_valid_counts():
    job = job_with(3, [("w", S.PENDING), ("w", S.PENDING), ("", S.FAILED), ("", S.PENDING)])
    job.record_fit_errors(job.tasks["ns/t-0"], fit.FitErrors(1, {"x": 1}))
    assert job.has_role_fit_errors(job.tasks["ns/t-1"])
    assert not job.has_role_fit_errors(job.tasks["ns/t-3"])   # no role: never cached
    assert job.valid_task_num() == 3                           # Failed tasks are not valid


def test_allocated_follows_status():
    job = job_with(1, [("", S.PENDING), ("", S.PENDING)])
    t = job.tasks["ns/t-0"]
    job.update_task_status(t, S.ALLOCATED)
    assert job.allocated[0] == 1000
    job.update_task_status(t, S.PIPELINED)
    assert job.allocated[0] == 0


# helpers.CompareTask, the task order when no plugin decides: the pod's index (the part after the last `-` of a
# name of at least three parts, GetPodIndexUnderTask), else creation time, then uid.
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"


def _task(name, created, uid=None):
    pod = objects.pod(f"ns/{name}", "g")
    pod["metadata"].update(creationTimestamp=created, uid=uid or name)
    snap = snapshot.build(objects.state(podgroups=[objects.pg("ns/g")], pods=[pod]))
    return snap.jobs["ns/g"].tasks[uid or name]


@pytest.mark.parametrize("left, right, want", [
    pytest.param(("j-t-2", T1), ("j-t-10", T0), -1, id="index-numeric-not-text-before-creation"),
    pytest.param(("a-t-1", T1), ("b-t-1", T0), 1, id="equal-index-then-creation"),
    pytest.param(("j-t-x", T0), ("j-t-1", T1), -1, id="no-number-then-creation"),
    pytest.param(("w-9", T1), ("w-10", T0), 1, id="two-part-name-has-no-index"),
    pytest.param(("job-worker-007", T1), ("job-worker-8", T0), -1, id="leading-zeros"),
    pytest.param(("j-t-1", T0, "u2"), ("j-t-1", T0, "u1"), 1, id="all-equal-then-uid"),
    # controllers/job/helpers/helpers_test.go TestCompareTask, its six rows
    pytest.param(("prod-worker-21", T0, "pod-1"), ("prod-worker-1", T0, "pod-2"), 1, id="upstream-21-after-1"),
    pytest.param(("prod-worker-0", T0, "pod-1"), ("prod-worker-3", T0, "pod-2"), -1, id="upstream-0-before-3"),
    pytest.param(("prod-worker", T0, "pod-1"), ("prod-worker-3", "2026-01-01T01:00:00Z", "pod-2"), -1,
                 id="upstream-no-index-older-first"),
    pytest.param(("prod-worker", T0, "pod-1"), ("prod-worker-3", "2025-12-31T23:00:00Z", "pod-2"), 1,
                 id="upstream-no-index-newer-after"),
    pytest.param(("prod-worker", T0, "pod-1"), ("prod-worker-3", T0, "pod-2"), -1, id="upstream-same-time-uid"),
    pytest.param(("prod-worker", T0, "pod-2"), ("prod-worker-3", T0, "pod-1"), 1, id="upstream-same-time-uid-after"),
])
def test_compare_tasks(left, right, want):
    assert tasks_mod.compare_tasks(_task(*left), _task(*right)) == want
    assert tasks_mod.compare_tasks(_task(*right), _task(*left)) == -want


# ---- Volcano's FitError and TaskSchedulingReason (api/job_info_test.go TestTaskSchedulingReason, and more) -----
POD_NUMBER = fit.FitErrors(3, {"node(s) pod number exceeded": 1, "node(s) resource fit failed": 2})
NOWHERE = fit.FitErrors(2, {"Insufficient cpu": 2})
REFUSED = 'allocation to node "n1" undone: no card fits'
QUEUE_FULL = 'queue "q" cannot take the task now'
SIX = "pod group is not ready, 6 Pending, 6 minAvailable"
ALLOC = {i: (S.ALLOCATED, f"node{i - 1}", False) for i in (2, 3, 4)}   # task-3 .. task-5 of upstream's case


def _assign(i):
    return f"Pod ns/t-{i} can possibly be assigned to node{i - 1}, once minAvailable is satisfied"   # (ALLOC's)


@pytest.mark.parametrize("min_member, statuses, last, fits, notes, origin, want, pods", [
    # upstream's case, word for word (its task-1 .. task-6 are t-0 .. t-5 here)
    pytest.param(6, [S.PENDING] * 6, ALLOC, {5: POD_NUMBER}, {}, "",
                 f"{SIX}; Pending: 3 Schedulable, 3 Unschedulable. Origin reason is t-5: 0/3 nodes are unavailable: "
                 "1 node(s) pod number exceeded, 2 node(s) resource fit failed.",
                 {0: "job", 1: "job", 2: _assign(2), 3: _assign(3), 4: _assign(4), 5: POD_NUMBER.error()},
                 id="upstream: task3 ~ 5 are schedulable"),
    pytest.param(6, [S.PENDING] * 6, {}, {4: NOWHERE, 1: POD_NUMBER}, {}, "",
                 f"{SIX}; Pending: 6 Unschedulable. Origin reason is t-1: {POD_NUMBER.error()}",
                 {1: POD_NUMBER.error(), 4: NOWHERE.error(), 0: "job"},
                 id="the first task with fit errors in the job's order, not the first recorded"),
    pytest.param(6, [S.PENDING] * 6, {}, {1: NOWHERE}, {0: QUEUE_FULL}, 'queue "q" is Closed',
                 f'{SIX}; Pending: 6 Unschedulable. Origin reason is: queue "q" is Closed',
                 {0: 'queue "q" is Closed', 1: NOWHERE.error(), 2: 'queue "q" is Closed'},
                 id="an action's reason for the job is JobFitErrors: the origin, and the pods' message"),
    pytest.param(6, [S.PENDING] * 6, {}, {0: NOWHERE}, {3: REFUSED, 2: QUEUE_FULL}, "",
                 f"{SIX}; Pending: 6 Unschedulable. Origin reason is: {REFUSED}",
                 {0: NOWHERE.error(), 2: REFUSED, 3: REFUSED, 5: REFUSED},
                 id="notes fold into JobFitErrors: the first noted, for every pod without fit errors"),
    pytest.param(6, [S.PENDING] * 6, {}, {3: NOWHERE}, {3: REFUSED}, "",
                 f"{SIX}; Pending: 6 Unschedulable. Origin reason is t-3: {NOWHERE.error()}",
                 {3: NOWHERE.error(), 0: "job"}, id="a note on a task with fit errors is not the job's"),
    pytest.param(2, [S.RUNNING, S.ALLOCATED, S.PENDING], {}, {2: NOWHERE}, {}, "",
                 f"pod group is ready, 1 Allocated, 1 Pending, 1 Running, 2 minAvailable; Pending: 1 Unschedulable. "
                 f"Origin reason is t-2: {NOWHERE.error()}", {2: NOWHERE.error()}, id="pod group is ready"),
    pytest.param(12, [S.PENDING] * 10 + [S.RUNNING, S.PIPELINED], {0: (S.PIPELINED, "n2", True)}, {}, {}, "",
                 "pod group is not ready, 1 Pipelined, 1 Running, 10 Pending, 12 minAvailable; "
                 "Pending: 10 Unschedulable",
                 {0: "Pod ns/t-0 can possibly be assigned to n2, once resource is released and minAvailable is "
                     "satisfied", 1: "job"},
                 id="counts sorted as strings, as Go's sort.Strings; no origin without fit errors"),
    pytest.param(0, [S.SUCCEEDED], {}, {}, {}, "", "pod group is ready, 0 minAvailable, 1 Succeeded", {},
                 id="nothing pending: no Pending histogram"),
])
def test_fit_error_and_task_scheduling_reason(min_member, statuses, last, fits, notes, origin, want, pods):
    """JobInfo.fit_error is Volcano's FitError; each pod's message is TaskSchedulingReason's, the job's FitError
    ("job") where it is empty (RecordJobStatusEvent's baseErrorMessage)."""
    job = job_with(min_member, [("", s) for s in statuses])
    for i, transaction in last.items():
        job.tasks[f"ns/t-{i}"].last_transaction = transaction
    for i, errors in fits.items():
        job.record_fit_errors(job.tasks[f"ns/t-{i}"], errors)
    for i, note in notes.items():
        job.task_notes[f"ns/t-{i}"] = note
    job.origin_reason = origin
    assert job.fit_error() == want
    base = status.base_error_message(job)
    assert base == want
    told = {i: status.task_scheduling_reason(job, job.tasks[f"ns/t-{i}"], base)[1] for i in pods}
    assert told == {i: want if m == "job" else m for i, m in pods.items()}


def test_failed_roles_are_kept_per_partition_and_reset():
    """FitFailedRoles(subJob) / ResetFitErr / ResetSubJobFitErr over a job with a subGroupPolicy."""
    group = objects.pg("ns/g", min_member=1)
    group["spec"]["subGroupPolicy"] = [{"name": "p", "matchLabelKeys": ["part"], "subGroupSize": 2}]
    pods = []
    for i, part in enumerate(["a", "a", "b", None, None]):
        p = objects.pod(f"ns/t-{i}", "g", role="w")
        if part:
            p["metadata"]["labels"] = {"part": part}
        pods.append(p)
    job = snapshot.build(objects.state(podgroups=[group], pods=pods)).jobs["ns/g"]
    t = [job.tasks[f"ns/t-{i}"] for i in range(4)]
    assert [job.sub_job(x) for x in t] == ["p/a", "p/a", "p/b", ""]
    job.record_fit_errors(t[0], fit.FitErrors(1, {"x": 1}))
    assert [job.has_role_fit_errors(x) for x in t] == [True, True, False, False]
    assert not job.need_continue_allocating("p/a")   # subGroupSize 2 of its 2 tasks: every one is needed
    assert job.need_continue_allocating("")          # the default partition of a job with policies: size 1
    job.record_fit_errors(t[3], fit.FitErrors(1, {"x": 1}))
    job.reset_failed_roles("p/a")
    assert [job.has_role_fit_errors(x) for x in t] == [False, False, False, True]
    job.reset_failed_roles()
    assert not any(job.has_role_fit_errors(x) for x in t)
    assert set(job.nodes_fit_errors) == {"ns/t-0", "ns/t-3"}   # what the pods are told stays


@pytest.mark.parametrize("statuses", [
    pytest.param([S.PENDING], id="one status"),
    pytest.param([S.RUNNING, S.BINDING, S.PENDING], id="three statuses"),
    pytest.param([S.RUNNING, S.BINDING, S.PENDING, S.PIPELINED, S.SUCCEEDED, S.FAILED, S.RELEASING], id="seven"),
    pytest.param([], id="no task"),
])
@pytest.mark.parametrize("asked", [
    tasks_mod.ALLOCATED_STATUS, tasks_mod.SCHEDULED_STATUS, (S.SUCCEEDED, S.FAILED), frozenset(S), (), (S.PENDING,)])
def test_count_by_status_whichever_side_is_walked(statuses, asked):
    """count() walks the job's statuses or the asked ones, whichever are fewer: the same number."""
    job = job_with(0, [("", s) for s in statuses])
    assert job.count(asked) == sum(1 for t in job.tasks.values() if t.status in asked)
