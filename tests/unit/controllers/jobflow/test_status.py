"""JobFlowStatus tables: Volcano's U7–U12, U21 and D4–D17 (status side), adapted where vclite
deliberately differs — every such row is marked `deviation:` with the reason."""
from __future__ import annotations

import copy
import json
import datetime as dt

import pytest

from vclite.api import batch, flow
from vclite.controllers.jobflow import runstate as rs
from vclite.controllers.jobflow import status as st
from vclite.lib import clock as clock_mod

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
NOW_S = "2026-01-01T00:10:00Z"
T0, T1, T2, T3 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z"
JP, FP = batch.JobPhase, flow.FlowPhase


def jobflow(flows, status=None, name="jobflow", deleting=False):
    md = {"name": name, "namespace": "default", "uid": "jf-uid"}
    if deleting:
        md["deletionTimestamp"] = T3
    obj = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": md,
           "spec": {"flows": flows, "jobRetainPolicy": "retain"}}
    if status is not None:
        obj["status"] = status
    return obj


def job(name, phase="", created=None, ltt=None, retry=0, rd=None, tsc=None):
    obj = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": name, "namespace": "default"}, "status": {}}
    if created:
        obj["metadata"]["creationTimestamp"] = created
    if phase or ltt:
        obj["status"]["state"] = {"phase": phase}
        if ltt:
            obj["status"]["state"]["lastTransitionTime"] = ltt
    if retry:
        obj["status"]["retryCount"] = retry
    if rd:
        obj["status"]["runningDuration"] = rd
    if tsc:
        obj["status"]["taskStatusCount"] = tsc
    return obj


def fl(name, *targets):
    return {"name": name, "dependsOn": {"targets": list(targets)}} if targets else {"name": name}


# ---- where each vcjob phase is listed --------------------------------------------------------------
@pytest.mark.parametrize("phase, listed_in, flow_phase", [
    pytest.param("", "pendingJobs", FP.PENDING, id="D8-empty-phase-pending"),   # deviation: Volcano unKnowJobs
    pytest.param(JP.PENDING, "pendingJobs", FP.PENDING, id="pending"),
    pytest.param(JP.RUNNING, "runningJobs", FP.RUNNING, id="running"),
    pytest.param(JP.COMPLETING, "runningJobs", FP.RUNNING, id="completing-visible-as-running"),  # deviation: hidden
    pytest.param(JP.COMPLETED, "completedJobs", FP.SUCCEED, id="completed"),
    pytest.param(JP.FAILED, "failedJobs", FP.FAILED, id="U8-failed"),
    pytest.param(JP.TERMINATED, "terminatedJobs", FP.FAILED, id="U9-terminated"),
    pytest.param(JP.TERMINATING, "terminatedJobs", FP.FAILED, id="terminating-visible-fails"),  # deviation: hidden
    pytest.param(JP.ABORTING, "unKnowJobs", FP.PENDING, id="aborting-unknown"),
    pytest.param(JP.ABORTED, "unKnowJobs", FP.PENDING, id="D7-aborted-unknown-not-failed"),
    pytest.param(JP.RESTARTING, "unKnowJobs", FP.PENDING, id="restarting-unknown"),
    pytest.param("Weird", "unKnowJobs", FP.PENDING, id="unknown-phase"),
])
def test_bucket_of_every_phase(phase, listed_in, flow_phase):
    out = st.compute(jobflow([fl("a")]), [job("jobflow-a", phase, created=T0)], NOW)
    assert {k: out[k] for k in st.LISTS if k in out} == {listed_in: ["jobflow-a"]}
    assert out["state"] == {"phase": flow_phase}


def test_every_job_phase_has_a_bucket():
    assert set(batch.JobPhase) <= set(st.BUCKETS)


# ---- phase rules ----------------------------------------------------------------------------------
def facts(previous="", phases=(), all_completed=False, deleting=False):
    return st.Facts(previous, deleting, frozenset(phases), all_completed)


@pytest.mark.parametrize("f, expected", [
    pytest.param(facts("", ["Running"]), FP.RUNNING, id="U7-pending-to-running"),
    pytest.param(facts("", ["Completed"]), FP.RUNNING, id="pending-completed-not-all-running"),
    pytest.param(facts("", ["Running", "Failed"]), FP.FAILED, id="pending-failed"),
    pytest.param(facts("", ["Terminated"]), FP.FAILED, id="D6-terminated-while-pending"),
    # deviation: Volcano's pending rule (state/pending.go) checks failedJobs only before Running, so a started flow with
    # a Terminated vcjob is Running at that sync and Failed at a later one (running.go), if another vcjob event comes
    pytest.param(facts("", ["Running", "Terminated"]), FP.FAILED, id="pending-started-and-terminated-fails-at-once"),
    pytest.param(facts("", ["Completed", "Terminated"]), FP.FAILED,
                 id="pending-completed-and-terminated-fails-at-once"),
    pytest.param(facts("", ["Pending"]), FP.PENDING, id="pending-stays"),
    pytest.param(facts("", []), FP.PENDING, id="nothing-yet"),
    pytest.param(facts("", ["Completed"], all_completed=True), FP.SUCCEED,
                 id="pending-straight-to-succeed"),                        # deviation: Volcano needs a Running sync
    pytest.param(facts("", [], all_completed=True), FP.SUCCEED, id="D10-no-flows-succeeds"),  # deviation: Pending forever
    pytest.param(facts("Running", ["Completed"], all_completed=True), FP.SUCCEED, id="U21-completed-all"),
    pytest.param(facts("Running", ["Failed"]), FP.FAILED, id="U21-failed"),
    pytest.param(facts("Running", ["Terminated"]), FP.FAILED, id="U21-D6-terminated"),
    pytest.param(facts("Running", ["Completed"]), FP.RUNNING, id="U21-completed-one-of-two"),
    pytest.param(facts("Running", ["Aborted"]), FP.RUNNING, id="D7-suspended-keeps-running"),
    pytest.param(facts("Running", ["Pending"]), FP.RUNNING, id="running-never-back-to-pending"),
    pytest.param(facts("Failed", ["Running"]), FP.FAILED, id="D5-failed-is-final"),
    pytest.param(facts("Succeed", ["Failed"]), FP.SUCCEED, id="succeed-is-final"),
    pytest.param(facts("Running", ["Running"], deleting=True), FP.TERMINATING, id="deleting-terminating"),
    pytest.param(facts("Succeed", [], deleting=True), FP.TERMINATING, id="deleting-overrides-final"),
])
def test_next_phase(f, expected):
    assert st.next_phase(f) == expected


# ---- Volcano's getAllJobStatus unit tests ------------------------------------------------------------
@pytest.mark.parametrize("phase, listed_in, flow_phase", [
    pytest.param(JP.RUNNING, "runningJobs", FP.RUNNING, id="U7"),
    pytest.param(JP.FAILED, "failedJobs", FP.FAILED, id="U8"),
    pytest.param(JP.TERMINATED, "terminatedJobs", FP.FAILED, id="U9"),
])
def test_u7_u8_u9_single_flow(phase, listed_in, flow_phase):
    out = st.compute(jobflow([fl("jobtemplate")]), [job("jobflow-jobtemplate", phase)], NOW)
    # Volcano writes zero start/end timestamps and restartCount 0; vclite omits unknown values (#3234).
    assert out == {
        listed_in: ["jobflow-jobtemplate"],
        "jobStatusList": [{"name": "jobflow-jobtemplate", "state": phase,
                           "runningHistories": [{"startTimestamp": NOW_S, "state": phase}]}],
        "conditions": {"jobflow-jobtemplate": {"phase": phase}},
        "state": {"phase": flow_phase},
    }


def test_u10_history_unchanged_when_phase_unchanged():
    prev = [{"startTimestamp": T0, "endTimestamp": T1, "state": "Completed"}]
    assert st.histories(prev, "Completed", NOW_S) == prev


def test_u12_two_jobs():
    jobs = [job("jobFlowA-A", JP.COMPLETED, created=T0, retry=1, rd="1s"),
            job("jobFlowA-B", JP.RUNNING, created=T1)]
    out = st.compute(jobflow([fl("A"), fl("B", "A")], name="jobFlowA"), jobs, NOW)
    assert out == {
        "runningJobs": ["jobFlowA-B"],
        "completedJobs": ["jobFlowA-A"],
        "jobStatusList": [
            {"name": "jobFlowA-A", "state": "Completed", "startTimestamp": T0, "endTimestamp": T1,
             "restartCount": 1, "runningHistories": [{"startTimestamp": NOW_S, "state": "Completed"}]},
            {"name": "jobFlowA-B", "state": "Running", "startTimestamp": T1,
             "runningHistories": [{"startTimestamp": NOW_S, "state": "Running"}]},
        ],
        "conditions": {"jobFlowA-A": {"phase": "Completed", "createTime": T0, "runningDuration": "1s"},
                       "jobFlowA-B": {"phase": "Running", "createTime": T1}},
        "state": {"phase": "Running"},   # deviation: Volcano's getAllJobStatus leaves the phase to the closure
    }


# ---- histories record the vcjob's own transition times (D17) -------------------------------------------
@pytest.mark.parametrize("previous, phase, at, expected", [
    pytest.param([], "", T1, [], id="D8-no-phase-no-history"),
    pytest.param([], "Pending", T1, [{"startTimestamp": T1, "state": "Pending"}], id="first"),
    pytest.param([{"startTimestamp": T1, "state": "Pending"}], "Running", T2,
                 [{"startTimestamp": T1, "endTimestamp": T2, "state": "Pending"},
                  {"startTimestamp": T2, "state": "Running"}], id="D17-pending-then-running"),
    pytest.param([{"startTimestamp": T2, "state": "Pending"}], "Running", T1,
                 [{"startTimestamp": T2, "endTimestamp": T2, "state": "Pending"},
                  {"startTimestamp": T2, "state": "Running"}], id="never-backwards"),
])
def test_histories(previous, phase, at, expected):
    before = copy.deepcopy(previous)
    assert st.histories(previous, phase, at) == expected
    assert previous == before   # a closed entry is replaced, never changed: the old status stays as it was


@pytest.mark.parametrize("at, start, expected_start", [
    pytest.param("2026-01-01T00:00:05Z", "2026-01-01T00:00:03Z", "2026-01-01T00:00:05Z", id="forward"),
    pytest.param("2026-01-01T00:00:01Z", "2026-01-01T00:00:03Z", "2026-01-01T00:00:03Z", id="backwards-clamped"),
    pytest.param("2026-01-01T00:00:01.5Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:01.5Z",
                 id="fractional-later-forward"),
    pytest.param("2026-01-01T00:00:00.5Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:01Z",
                 id="fractional-earlier-clamped"),
])
def test_histories_never_run_backwards_whatever_the_text_length(at, start, expected_start):
    out = st.histories([{"startTimestamp": start, "state": "Pending"}], "Running", at)
    assert out[-1] == {"startTimestamp": expected_start, "state": "Running"}


def test_d17_history_uses_transition_time_not_sync_time():
    flows = [fl("a")]
    s1 = st.compute(jobflow(flows), [job("jobflow-a", JP.PENDING, created=T0, ltt=T0)], NOW)
    s2 = st.compute(jobflow(flows, s1), [job("jobflow-a", JP.RUNNING, created=T0, ltt=T2)],
                    NOW + dt.timedelta(minutes=5))
    assert s2["jobStatusList"][0]["runningHistories"] == [
        {"startTimestamp": T0, "endTimestamp": T2, "state": "Pending"}, {"startTimestamp": T2, "state": "Running"}]


# ---- sequences of syncs: each status feeds the next ---------------------------------------------------
def run(flows, steps):
    """steps: [(jobs, deleting)] -> list of (phase, status) after each step."""
    status, out = None, []
    for jobs, deleting in steps:
        status = st.compute(jobflow(flows, status, deleting=deleting), jobs, NOW)
        out.append(status)
    return out


A = "jobflow-a"


@pytest.mark.parametrize("flows, steps, phases", [
    pytest.param([fl("a")], [([job(A, "Pending")], 0), ([job(A, "Running")], 0), ([job(A, "Completed")], 0)],
                 ["Pending", "Running", "Succeed"], id="D4-pending-running-succeed"),
    pytest.param([fl("a"), fl("b", "a")], [([job(A, "Failed")], 0), ([job(A, "Running")], 0)],
                 ["Failed", "Failed"], id="D5-failed-stays-failed"),
    pytest.param([fl("a")], [([job(A, "Running")], 0), ([job(A, "Aborted")], 0), ([job(A, "Running")], 0)],
                 ["Running", "Running", "Running"], id="D7-suspend-resume"),
    pytest.param([fl("a"), fl("a")], [([job(A, "Completed")], 0)], ["Succeed"],
                 id="D9-duplicates-still-succeed"),                       # deviation: Volcano stuck Running
    pytest.param([], [([], 0)], ["Succeed"], id="D10-empty-flows"),       # deviation: Volcano Pending forever
    pytest.param([fl("a")], [([job(A, "Running")], 0), ([job(A, "Running")], 1), ([], 1)],
                 ["Running", "Terminating", "Terminating"], id="delete-running-flow"),  # deviation: never set
])
def test_phase_sequences(flows, steps, phases):
    assert [s["state"]["phase"] for s in run(flows, steps)] == phases


def test_d5_failed_flow_still_refreshes_its_jobs():
    # deviation: Volcano freezes the whole status once Failed; vclite keeps the phase but shows the jobs.
    flows = [fl("a"), fl("b")]
    s = run(flows, [([job(A, "Failed"), job("jobflow-b", "Running")], 0),
                    ([job(A, "Failed"), job("jobflow-b", "Completed")], 0)])[-1]
    assert s["state"]["phase"] == "Failed" and s["completedJobs"] == ["jobflow-b"]


def test_d12_succeeded_flow_keeps_lists_after_its_jobs_are_deleted():
    flows = [fl("a"), fl("b", "a")]
    done = [job(A, "Completed", created=T0), job("jobflow-b", "Completed", created=T1)]
    first, after = run(flows, [(done, 0), ([], 0)])
    assert first["state"]["phase"] == "Succeed"
    assert after == first


# ---- flows without a vcjob are visible ---------------------------------------------------------------
def test_waiting_flows_are_listed_with_a_reason():
    flows = [fl("a"), fl("b", "a"), fl("c", "a", "b")]
    out = st.compute(jobflow(flows), [job(A, "Running", created=T0)], NOW)
    assert out["pendingJobs"] == ["jobflow-b", "jobflow-c"]
    assert out["conditions"]["jobflow-b"] == {
        "phase": "Pending", "reason": "WaitingForDependencies", "message": "waiting for jobflow-a to be Completed"}
    assert out["conditions"]["jobflow-c"]["message"] == "waiting for jobflow-a, jobflow-b to be Completed"
    assert [e["name"] for e in out["jobStatusList"]] == [A], "no history for jobs that do not exist"


@pytest.mark.parametrize("note, phase, listed_in", [
    pytest.param(st.Note(JP.PENDING, st.Reason.TEMPLATE_NOT_FOUND, 'JobTemplate "a" not found'),
                 "Pending", "pendingJobs", id="D11-template-missing-waits"),
    pytest.param(st.Note(JP.FAILED, st.Reason.FAILED_CREATE, "queue closed"), "Failed", "failedJobs",
                 id="D18-rejected-vcjob-fails-flow"),
])
def test_notes(note, phase, listed_in):
    out = st.compute(jobflow([fl("a")]), [], NOW, {"a": note})
    assert out["conditions"] == {A: {"phase": str(note.phase), "reason": str(note.reason), "message": note.message}}
    assert out[listed_in] == [A] and out["state"]["phase"] == phase
    again = st.compute(jobflow([fl("a")], out), [], NOW)
    assert again == out or phase == "Pending", "a creation failure stays reported once the flow has failed"


def test_flows_not_created_after_failure_say_so():
    flows = [fl("a"), fl("b", "a"), fl("c", "x"), fl("x")]
    out = st.compute(jobflow(flows), [job(A, "Failed"), job("jobflow-x", "Running")], NOW)
    assert out["conditions"]["jobflow-c"] == {
        "phase": "Pending", "reason": "NotCreated", "message": "not created: the JobFlow is Failed"}
    assert out["conditions"]["jobflow-b"] == {
        "phase": "Skipped", "reason": "DependencyNeverMet", "message": "dependsOn target a was Failed"}


def test_blocked_flows_name_the_problem():
    out = st.compute(jobflow([fl("a", "zz"), fl("x", "y"), fl("y", "x")]), [], NOW)
    assert out["conditions"]["jobflow-a"]["reason"] == "UndefinedTarget"
    assert out["conditions"]["jobflow-x"]["message"] == "flows x -> y -> x form a dependency cycle"


def test_jobs_of_flows_removed_from_spec_are_still_listed():
    out = st.compute(jobflow([fl("a")]), [job(A, "Running"), job("jobflow-old", "Failed", created=T0)], NOW)
    assert out["failedJobs"] == ["jobflow-old"] and out["state"]["phase"] == "Failed"


def test_unknown_status_fields_are_kept():
    out = st.compute(jobflow([fl("a")], {"futureField": 1, "state": {"phase": "Running", "extra": "x"}}),
                     [job(A, "Running")], NOW)
    assert out["futureField"] == 1 and out["state"] == {"phase": "Running", "extra": "x"}


def test_conditions_carry_task_status_count():
    tsc = {"worker": {"phase": {"Running": 2}}}
    out = st.compute(jobflow([fl("a")]), [job(A, "Running", created=T0, rd="90s", tsc=tsc)], NOW)
    assert out["conditions"][A] == {"phase": "Running", "createTime": T0, "runningDuration": "90s",
                                    "taskStatusCount": tsc}
    assert out["jobStatusList"][0]["endTimestamp"] == clock_mod.format_time(
        clock_mod.parse_time(T0) + dt.timedelta(seconds=90))


def test_vanished_job_of_running_flow_is_shown_as_to_be_created_again():
    flows = [fl("a")]
    first = st.compute(jobflow(flows), [job(A, "Running", created=T0)], NOW)
    out = st.compute(jobflow(flows, first), [], NOW)
    assert out["conditions"][A]["reason"] == "Creating"
    assert out["jobStatusList"] == first["jobStatusList"], "entries of vanished jobs are never pruned"


# ---- a big flow's whole object stays under etcd's limit -----------------------------------------
ETCD_LIMIT = 3 * 1024 * 1024 // 2   # etcd's default request limit (1.5 MiB): a bigger JobFlow cannot be stored


@pytest.mark.parametrize("completed, failed, at_work", [
    pytest.param(0, 0, 2, id="start-every-flow-being-created"),
    pytest.param(5_000, 0, 2, id="half-way"),
    pytest.param(10_000, 0, 2, id="every-job-completed"),
    pytest.param(3_000, 1, 2, id="a-failure-leaves-the-rest-not-created"),
    pytest.param(0, 0, 10_000, id="every-job-running-at-once"),   # (a cluster wide enough for all of them)
    pytest.param(2_000, 0, 1_000, id="a-thousand-running"),
])
def test_a_10000_job_fan_out_fits_in_etcd_at_every_stage(completed, failed, at_work):
    """start -> 10,000 parallel flows -> end (names as long as the peer benchmark's): the JobFlow with its
    status, as the controller writes it, stays under 1.5 MiB, and every vcjob is still named in it. The first
    vcjobs running keep their detail (rs.DETAILED_RUNNING of them), the others are as compact as Pending ones."""
    n = 10_000
    flows = [fl("start"), *(fl(f"m{i}", "start") for i in range(n)), fl("end", *(f"m{i}" for i in range(n)))]
    jobs = [job("bench-start", JP.COMPLETED, T0, T1, rd="1s")]
    jobs += [job(f"bench-m{i}", JP.COMPLETED, T1, T2, rd="4s") for i in range(completed)]
    jobs += [job(f"bench-m{completed + i}", JP.FAILED, T1, T2, rd="4s") for i in range(failed)]
    at_work = min(at_work, n - completed - failed)
    tasks = {"main": {"phase": {"Running": 1}}}
    jobs += [job(f"bench-m{completed + failed + i}", JP.RUNNING, T1, T2, rd="4s", tsc=tasks) for i in range(at_work)]
    obj = jobflow(flows, name="bench")
    obj["status"] = st.compute(obj, jobs, NOW)
    size = len(json.dumps(obj, separators=(",", ":")))
    assert size < ETCD_LIMIT, size
    conditions = obj["status"]["conditions"]
    assert {f"bench-m{i}" for i in range(n)} <= set(conditions)
    if completed == n:
        assert obj["status"]["state"]["phase"] == FP.RUNNING and conditions["bench-m0"] == {"phase": JP.COMPLETED}
    done = [e for e in obj["status"]["jobStatusList"] if e["state"] == JP.COMPLETED]
    assert len(done) == completed + 1 and all(set(e) == {"name", "state"} for e in done)
    running = [e for e in obj["status"]["jobStatusList"] if e["state"] == JP.RUNNING]
    detailed = [e for e in running if e.get("startTimestamp") == T1 and e.get("runningHistories")]
    assert len(running) == at_work
    assert len(detailed) == min(len(running), rs.DETAILED_RUNNING)   # the first at work: in detail
    assert all(set(e) == {"name", "state"} for e in running if e not in detailed)
    if failed:
        assert obj["status"]["state"]["phase"] == FP.FAILED
        assert conditions[f"bench-m{n - 1}"] == {"phase": JP.PENDING, "reason": st.Reason.NOT_CREATED}
    elif completed + at_work < n:
        assert conditions[f"bench-m{n - 1}"] == {"phase": JP.PENDING, "reason": st.Reason.CREATING}


WHY = "pod f-b-main-0: container main exited with code 3 (Error)"


@pytest.mark.parametrize("cond, why, message, recorded", [
    pytest.param({"phase": "Failed"}, WHY, WHY, WHY, id="failed"),
    pytest.param({"phase": "Terminated"}, WHY, WHY, WHY, id="terminated"),
    pytest.param({"phase": "Failed", "reason": "RetriesExhausted", "message": "attempt 3 failed; no retries left"},
                 WHY, f"attempt 3 failed; no retries left; last attempt: {WHY}", WHY, id="retries-exhausted"),
    pytest.param({"phase": "Failed", "reason": "NotRetried", "message": "attempt 1 failed; not retried"},
                 WHY, f"attempt 1 failed; not retried; last attempt: {WHY}", WHY, id="not-retried"),
    pytest.param({"phase": "Failed", "reason": "RetriesExhausted", "message": "attempt 3 failed"}, "",
                 "attempt 3 failed", None, id="nothing-said-read-again"),
    pytest.param({"phase": "Failed"}, "", "", None, id="nothing-at-all"),
    pytest.param({"phase": "Failed", "reason": "FailedCreate", "message": "denied"}, "", "denied", None,
                 id="another-failure's-message"),
])
def test_a_failed_vcjobs_condition_records_why(cond, why, message, recorded):
    """with_failure writes why a vcjob failed into its condition's message; recorded_failure reads it back (a
    restarted controller: its pods may be gone)."""
    written = st.with_failure(cond.get("message", ""), why)
    assert written == message
    assert st.recorded_failure({**cond, **({"message": written} if written else {})}) == recorded
