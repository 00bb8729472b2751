"""The vcjob lifecycle table, walked row by row (every phase × every action), the count rules,
and the JOB-* scenarios of the reference (§4.8) that are decided by the table alone."""
from __future__ import annotations

import pytest

from vclite.api import batch
from vclite.controllers.job import state

P, A = batch.JobPhase, batch.Action
KJ, KT, SJ = state.Primitive.KILL_JOB, state.Primitive.KILL_TARGET, state.Primitive.SYNC_JOB
SOFT, NONE = state.Retain.SOFT, state.Retain.NONE
RESTARTS = (A.RESTART_TASK, A.RESTART_POD, A.RESTART_PARTITION)

# The reference table (§1.5), restated independently: phase -> {action group: expected row}.
# A row is (primitive, retain, bump retryCount, to, rule); "else" covers every other action.
ACTIVE = {
    (A.RESTART_JOB,): (KJ, NONE, True, P.RESTARTING, None),
    RESTARTS: (KT, None, True, P.RESTARTING, None),
    (A.ABORT_JOB,): (KJ, SOFT, False, P.ABORTING, None),
    (A.COMPLETE_JOB,): (KJ, SOFT, False, P.COMPLETING, None),
    (A.TERMINATE_JOB,): (KJ, SOFT, False, P.TERMINATING, None),
}
EXPECTED = {
    P.PENDING: {**ACTIVE, "else": (SJ, None, False, P.RUNNING, state.Rule.STARTED)},
    P.RUNNING: {**ACTIVE, "else": (SJ, None, False, None, state.Rule.RUNNING)},
    P.RESTARTING: {(A.SYNC_JOB,): (SJ, None, False, None, state.Rule.RESTARTING),
                   RESTARTS: (KT, None, False, None, state.Rule.RESTARTING),
                   "else": (KJ, NONE, False, None, state.Rule.RESTARTING)},
    P.ABORTING: {(A.RESUME_JOB,): (KJ, SOFT, True, P.RESTARTING, None),
                 "else": (KJ, SOFT, False, P.ABORTED, state.Rule.DRAINED)},
    P.ABORTED: {(A.RESUME_JOB,): (KJ, SOFT, True, P.RESTARTING, None), "else": (KJ, SOFT, False, None, None)},
    P.COMPLETING: {"else": (KJ, SOFT, False, P.COMPLETED, state.Rule.DRAINED)},
    P.TERMINATING: {"else": (KJ, SOFT, False, P.TERMINATED, state.Rule.DRAINED)},
    P.COMPLETED: {"else": (KJ, SOFT, False, None, None)},
    P.FAILED: {"else": (KJ, SOFT, False, None, None)},
    P.TERMINATED: {"else": (KJ, SOFT, False, None, None)},
}


def _expected(phase: P, action: A) -> tuple:
    for group, row in EXPECTED[phase].items():
        if group != "else" and action in group:
            return row
    return EXPECTED[phase]["else"]


WALK = [pytest.param(phase, action, _expected(phase, action), id=f"{phase}-{action}")
        for phase in P for action in A]


@pytest.mark.parametrize("phase,action,want", WALK)
def test_every_row_of_the_table(phase, action, want):
    t = state.row(phase, action)
    assert (t.primitive, t.retain, t.bump_retry, t.to, t.rule) == want


def test_the_walk_covers_all_phases_and_actions():
    assert len(WALK) == len(P) * len(A) == 130


@pytest.mark.parametrize("phase,action", [
    pytest.param("Bogus", A.SYNC_JOB, id="unknown-phase"),
    pytest.param("", A.SYNC_JOB, id="empty-phase"),
    pytest.param(P.RUNNING, "Explode", id="unknown-action"),
    pytest.param(P.RUNNING, None, id="no-action"),
    pytest.param(["Running"], A.SYNC_JOB, id="phase-not-a-string"),
    pytest.param(P.RUNNING, {"action": "SyncJob"}, id="action-not-a-string"),
])
def test_illegal_inputs_raise(phase, action):
    before = dict(state.TABLE)
    with pytest.raises(ValueError, match=r"unknown (job phase|action) "):
        state.decide(phase, action, state.Counts(), state.SpecSummary())
    assert dict(state.TABLE) == before


@pytest.mark.parametrize("phase,action", [("Running", "SyncJob"), (P.RUNNING, A.SYNC_JOB), ("Completed", "AbortJob")])
def test_a_phase_and_an_action_given_as_text_or_member_pick_the_same_row(phase, action):
    assert state.row(phase, action) is state.row(P(phase), A(action))


def _spec(min_available=0, max_retry=3, min_success=None, tasks=(("t", 1, None),)):
    return state.SpecSummary(min_available, max_retry, min_success,
                             tuple(state.TaskSummary(n, r, m) for n, r, m in tasks))


@pytest.mark.parametrize("phase,action,retry,max_retry,retain", [
    pytest.param(P.RUNNING, A.RESTART_JOB, 0, 3, NONE, id="first-retry-kills-all"),
    pytest.param(P.RUNNING, A.RESTART_JOB, 1, 3, NONE, id="second-retry-kills-all"),
    pytest.param(P.RUNNING, A.RESTART_JOB, 2, 3, SOFT, id="last-retry-keeps-finished"),
    pytest.param(P.RESTARTING, A.ABORT_JOB, 5, 3, SOFT, id="restarting-past-max"),
    pytest.param(P.PENDING, A.ABORT_JOB, 0, 3, SOFT, id="soft-stays-soft"),
    pytest.param(P.RUNNING, A.RESTART_JOB, 0, 1, SOFT, id="max-retry-1-always-last"),
])
def test_last_retry_keeps_succeeded_and_failed_pods(phase, action, retry, max_retry, retain):
    t = state.decide(phase, action, state.Counts(retry_count=retry), _spec(max_retry=max_retry))
    assert t.retain == retain


@pytest.mark.parametrize("retry", [0, 2])
@pytest.mark.parametrize("phase,action", [(phase, action) for phase in P for action in A])
def test_decide_for_reads_status_and_spec_only_when_the_row_needs_them(phase, action, retry):
    """decide_for(status dict, spec thunk) is decide(counts_of(status), spec), asking for the spec
    only on the KillJob rows without retention."""
    asked = []

    def spec():
        asked.append(1)
        return _spec(max_retry=3)
    t = state.decide_for(phase, action, {"retryCount": retry, "running": 1}, spec)
    assert t == state.decide(phase, action, state.Counts(running=1, retry_count=retry), _spec(max_retry=3))
    assert bool(asked) == (state.row(phase, action).primitive is KJ and state.row(phase, action).retain is NONE)


# Rule rows: (id, phase, action, counts, spec, expected phase after, changed)
RULES = [
    # JOB-01 / JOB-02 (Pending sync, rule P)
    ("JOB-01", P.PENDING, A.SYNC_JOB, dict(running=3), _spec(3, tasks=(("t", 3, None),)), P.RUNNING, True),
    ("JOB-02", P.PENDING, A.SYNC_JOB, dict(running=2), _spec(3, tasks=(("t", 3, None),)), P.PENDING, False),
    ("pending-counts-finished", P.PENDING, A.ENQUEUE_JOB, dict(succeeded=1, failed=1, running=1),
     _spec(3, tasks=(("t", 3, None),)), P.RUNNING, True),
    # JOB-08..12, JOB-15 (Running sync, rule R)
    ("JOB-08", P.RUNNING, A.SYNC_JOB, dict(succeeded=2, task_succeeded={"t1": 2}),
     _spec(0, tasks=(("t1", 2, None),)), P.COMPLETED, True),
    ("JOB-09", P.RUNNING, A.SYNC_JOB, dict(succeeded=1, pending=1, task_succeeded={"t1": 1}),
     _spec(0, tasks=(("t1", 2, None),)), P.RUNNING, False),
    ("JOB-10", P.RUNNING, A.SYNC_JOB, dict(pending=5), _spec(3, tasks=(("t1", 5, None),)), P.PENDING, True),
    ("JOB-11", P.RUNNING, A.SYNC_JOB, dict(running=2, pending=3), _spec(3, tasks=(("t1", 5, None),)),
     P.PENDING, True),
    ("JOB-12", P.RUNNING, A.SYNC_JOB, dict(running=1, succeeded=1, failed=1, pending=2),
     _spec(3, tasks=(("t1", 5, None),)), P.RUNNING, False),
    ("JOB-15", P.RUNNING, A.SYNC_JOB, dict(succeeded=2, running=2), _spec(4, min_success=2, tasks=(("t1", 4, None),)),
     P.COMPLETED, True),
    ("minSuccess-not-reached", P.RUNNING, A.SYNC_JOB, dict(succeeded=1, failed=3),
     _spec(1, min_success=2, tasks=(("t1", 4, None),)), P.FAILED, True),
    ("issue-1046-some-failed-still-completed", P.RUNNING, A.SYNC_JOB, dict(succeeded=3, failed=1),
     _spec(3, tasks=(("t1", 4, None),)), P.COMPLETED, True),
    ("all-finished-too-few-succeeded", P.RUNNING, A.SYNC_JOB, dict(succeeded=1, failed=3),
     _spec(3, tasks=(("t1", 4, None),)), P.FAILED, True),
    ("task-minAvailable-not-succeeded", P.RUNNING, A.SYNC_JOB,
     dict(succeeded=3, failed=1, task_succeeded={"ps": 0, "worker": 3}),
     _spec(4, tasks=(("ps", 1, 1), ("worker", 3, 3))), P.FAILED, True),
    ("task-minAvailable-ignored-when-job-min-smaller", P.RUNNING, A.SYNC_JOB,
     dict(succeeded=3, failed=1, task_succeeded={"ps": 0, "worker": 3}),
     _spec(3, tasks=(("ps", 1, 1), ("worker", 3, 3))), P.COMPLETED, True),
    ("task-not-in-taskStatusCount-skipped", P.RUNNING, A.SYNC_JOB, dict(succeeded=4,
     task_succeeded={"worker": 3}), _spec(4, tasks=(("ps", 1, 1), ("worker", 3, 3))), P.COMPLETED, True),
    ("scaled-to-zero-keeps-phase", P.RUNNING, A.SYNC_JOB, dict(), _spec(0, tasks=(("t", 0, None),)), P.RUNNING,
     False),
    # JOB-17 / JOB-18 (Restarting, rule S)
    ("JOB-17", P.RESTARTING, A.SYNC_JOB, dict(retry_count=3), _spec(max_retry=3), P.FAILED, True),
    ("JOB-18", P.RESTARTING, A.SYNC_JOB, dict(retry_count=1, min_available=1),
     _spec(max_retry=3, tasks=(("task1", 1, None), ("task2", 1, None))), P.PENDING, True),
    ("restarting-still-terminating", P.RESTARTING, A.SYNC_JOB, dict(retry_count=1, min_available=2, terminating=2),
     _spec(2, tasks=(("t", 2, None),)), P.RESTARTING, False),
    ("restarting-uses-status-minAvailable", P.RESTARTING, A.RESTART_TASK, dict(min_available=1, terminating=1),
     _spec(2, tasks=(("t", 2, None),)), P.PENDING, True),
    # JOB-19 / 20 / 22 / 23 (drained)
    ("JOB-19", P.ABORTING, A.SYNC_JOB, dict(), _spec(), P.ABORTED, True),
    ("JOB-20", P.ABORTING, A.SYNC_JOB, dict(terminating=1), _spec(), P.ABORTING, False),
    ("aborting-failed-pods-do-not-block", P.ABORTING, A.SYNC_JOB, dict(failed=2, succeeded=1, unknown=1), _spec(),
     P.ABORTED, True),
    ("JOB-22-drained", P.COMPLETING, A.SYNC_JOB, dict(), _spec(), P.COMPLETED, True),
    ("JOB-22-remaining", P.COMPLETING, A.SYNC_JOB, dict(running=1), _spec(), P.COMPLETING, False),
    ("JOB-23", P.TERMINATING, A.RESTART_JOB, dict(), _spec(), P.TERMINATED, True),
    ("terminating-pending-left", P.TERMINATING, A.SYNC_JOB, dict(pending=1), _spec(), P.TERMINATING, False),
    # JOB-03..07, JOB-21, JOB-24 (fixed targets)
    ("JOB-03-pending", P.PENDING, A.RESTART_JOB, dict(), _spec(), P.RESTARTING, True),
    ("JOB-03-running", P.RUNNING, A.RESTART_JOB, dict(), _spec(), P.RESTARTING, True),
    ("JOB-04", P.RUNNING, A.RESTART_TASK, dict(), _spec(), P.RESTARTING, True),
    ("JOB-05", P.RUNNING, A.ABORT_JOB, dict(), _spec(), P.ABORTING, True),
    ("JOB-06", P.PENDING, A.TERMINATE_JOB, dict(), _spec(), P.TERMINATING, True),
    ("JOB-07", P.RUNNING, A.COMPLETE_JOB, dict(running=1), _spec(), P.COMPLETING, True),
    ("JOB-21", P.ABORTED, A.RESUME_JOB, dict(), _spec(), P.RESTARTING, True),
    ("JOB-24-completed", P.COMPLETED, A.RESTART_JOB, dict(running=1), _spec(), P.COMPLETED, False),
    ("JOB-24-failed", P.FAILED, A.RESUME_JOB, dict(), _spec(), P.FAILED, False),
    ("JOB-24-terminated", P.TERMINATED, A.SYNC_JOB, dict(), _spec(), P.TERMINATED, False),
    ("aborted-sync-stays", P.ABORTED, A.SYNC_JOB, dict(), _spec(), P.ABORTED, False),
]


@pytest.mark.parametrize("phase,action,counts,spec,want,changed",
                         [pytest.param(*r[1:], id=r[0]) for r in RULES])
def test_rules(phase, action, counts, spec, want, changed):
    c = state.Counts(**counts)
    t = state.decide(phase, action, c, spec)
    out = state.apply(t, phase, c, spec)
    assert (out.phase, out.changed) == (want, changed)


@pytest.mark.parametrize("phase,action,retry,want", [
    pytest.param(P.RUNNING, A.RESTART_JOB, 0, 1, id="restart-bumps"),
    pytest.param(P.PENDING, A.RESTART_POD, 2, 3, id="restart-pod-bumps"),
    pytest.param(P.ABORTED, A.RESUME_JOB, 1, 2, id="resume-counts-as-retry-issue-3067"),
    pytest.param(P.RESTARTING, A.RESTART_TASK, 1, 1, id="restarting-does-not-bump"),
    pytest.param(P.RUNNING, A.SYNC_JOB, 1, 1, id="sync-does-not-bump"),
])
def test_retry_count(phase, action, retry, want):
    c = state.Counts(retry_count=retry)
    out = state.apply(state.decide(phase, action, c, _spec()), phase, c, _spec())
    assert out.retry_count == want


def test_three_suspend_resume_cycles_fail_the_job():
    """Issue #3067: with maxRetry 3, the third resume leads to Failed (resume is a retry)."""
    spec, retry = _spec(1, max_retry=3), 0
    for _ in range(3):
        out = state.apply(state.decide(P.ABORTED, A.RESUME_JOB, state.Counts(retry_count=retry), spec),
                          P.ABORTED, state.Counts(retry_count=retry), spec)
        retry = out.retry_count
        c = state.Counts(retry_count=retry, min_available=1)
        after = state.apply(state.decide(P.RESTARTING, A.SYNC_JOB, c, spec), P.RESTARTING, c, spec)
    assert after.phase == P.FAILED and retry == 3


def test_summarize_and_counts_of():
    spec = state.summarize({"minAvailable": 2, "minSuccess": 1, "tasks": [
        {"name": "a", "replicas": 2}, {"name": "b", "replicas": 1, "minAvailable": 1}]})
    assert spec == _spec(2, 3, 1, (("a", 2, None), ("b", 1, 1)))
    assert spec.total == 3 and spec.total_task_min_available == 3
    assert state.summarize({"maxRetry": 0}).max_retry == 3
    c = state.counts_of({"running": 2, "retryCount": 1, "minAvailable": 2,
                         "taskStatusCount": {"a": {"phase": {"Succeeded": 2}}, "b": {"phase": {"Running": 1}}}})
    assert (c.running, c.retry_count, c.min_available, dict(c.task_succeeded)) == (2, 1, 2, {"a": 2, "b": 0})


def test_diagrams_cover_every_row():
    md = state.render_markdown()
    assert md.count("\n| ") == len(state.TABLE)
    assert "| Restarting | anything else | KillJob(None); rule S |" in md
    mermaid = state.render_mermaid()
    assert mermaid.startswith("stateDiagram-v2")
    for phase in P:
        assert f"    {phase} -->" in mermaid or f"--> {phase}" in mermaid
    assert "Running --> Failed" in mermaid and "Aborting --> Aborted" in mermaid
