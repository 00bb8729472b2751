"""Counting pods into vcjob status counters, and the per-task checks (TaskCompleted, TaskFailed,
dependsOn readiness)."""
from __future__ import annotations

import pytest

from vclite.controllers.job import status


def _pod(name, task="t", phase="Running", deleting=False, restarts=(), init_restarts=(), ready=None):
    st = {"phase": phase} if phase is not None else {}
    if restarts or ready is not None:
        st["containerStatuses"] = [{"restartCount": r, "ready": bool(ready)} for r in (restarts or (0,))]
    if init_restarts:
        st["initContainerStatuses"] = [{"restartCount": r} for r in init_restarts]
    md = {"name": name, "annotations": {"volcano.sh/task-spec": task} if task else {}}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": md, "status": st}


@pytest.mark.parametrize("pods,counters,tsc", [
    pytest.param([], {}, {}, id="none"),
    pytest.param([_pod("a", phase="Pending"), _pod("b"), _pod("c", phase="Succeeded"), _pod("d", phase="Failed")],
                 dict(pending=1, running=1, succeeded=1, failed=1),
                 {"t": {"phase": {"Pending": 1, "Running": 1, "Succeeded": 1, "Failed": 1}}}, id="each-phase"),
    pytest.param([_pod("a", phase="Unknown"), _pod("b", phase="Weird")], dict(unknown=2),
                 {"t": {"phase": {"Unknown": 2}}}, id="unknown"),
    pytest.param([_pod("a", phase=None)], dict(pending=1), {"t": {"phase": {"Pending": 1}}},
                 id="no-phase-is-pending"),
    pytest.param([_pod("a", deleting=True), _pod("b", task="u")], dict(terminating=1, running=1),
                 {"u": {"phase": {"Running": 1}}}, id="deleting-counts-terminating-only"),
    pytest.param([_pod("a", task=None)], dict(running=1), {}, id="no-task-annotation"),
    pytest.param([_pod("a", task="ps"), _pod("b", task="worker"), _pod("c", task="worker", phase="Succeeded")],
                 dict(running=2, succeeded=1),
                 {"ps": {"phase": {"Running": 1}}, "worker": {"phase": {"Running": 1, "Succeeded": 1}}},
                 id="per-task"),
])
def test_tally(pods, counters, tsc):
    t = status.tally(pods)
    want = {f: counters.get(f, 0) for f in status.COUNTER_FIELDS}
    assert t.counters() == want
    assert t.task_status_count == tsc
    st = {"running": 9, "state": {"phase": "Running"}}
    status.write_counts(st, t)
    assert st == {"state": {"phase": "Running"}, **{k: v for k, v in want.items() if v},
                  **({"taskStatusCount": tsc} if tsc else {})}


def _job(replicas=2, max_retry=None, min_available=None, depends=None):
    tasks = [{"name": "a", "replicas": replicas}, {"name": "b", "replicas": 1}]
    if max_retry is not None:
        tasks[0]["maxRetry"] = max_retry
    if min_available is not None:
        tasks[0]["minAvailable"] = min_available
    if depends is not None:
        tasks[1]["dependsOn"] = depends
    return {"metadata": {"name": "j"}, "spec": {"tasks": tasks}}


@pytest.mark.parametrize("job,pods,done", [
    pytest.param(_job(), [_pod("j-a-0", "a", "Succeeded"), _pod("j-a-1", "a", "Succeeded")], True, id="all"),
    pytest.param(_job(), [_pod("j-a-0", "a", "Succeeded"), _pod("j-a-1", "a", "Failed")], False, id="one-failed"),
    pytest.param(_job(), [_pod("j-a-0", "a", "Succeeded")], False, id="one-missing"),
    pytest.param(_job(replicas=0), [], False, id="no-replicas"),
])
def test_task_completed(job, pods, done):
    assert status.task_completed(job, "a", pods) is done


@pytest.mark.parametrize("job,pods,failed", [
    pytest.param(_job(), [_pod("x", "a", restarts=(1,)), _pod("y", "a", restarts=(2,))], True,
                 id="default-max-retry-3-reached"),
    pytest.param(_job(), [_pod("x", "a", restarts=(1,)), _pod("y", "a", restarts=(1,))], False, id="below"),
    pytest.param(_job(max_retry=2), [_pod("x", "a", restarts=(1,), init_restarts=(1,))], True,
                 id="init-containers-count"),
    pytest.param(_job(max_retry=2), [_pod("x", "a", "Failed", restarts=(5,))], False, id="failed-pods-ignored"),
    pytest.param(_job(max_retry=-1), [_pod("x", "a", restarts=(50,))], False, id="unlimited"),
    pytest.param(_job(max_retry=1), [_pod("x", "a", "Pending", restarts=(0, 1))], True, id="pending-multi-container"),
])
def test_task_failed(job, pods, failed):
    assert status.task_failed(job, "a", pods) is failed


@pytest.mark.parametrize("job,pods,ok", [
    pytest.param(_job(), {}, True, id="no-dependsOn"),
    pytest.param(_job(depends={"name": ["a"]}), {}, False, id="dependency-not-created"),
    pytest.param(_job(depends={"name": ["a"]}),
                 {"j-a-0": _pod("j-a-0", "a", ready=True), "j-a-1": _pod("j-a-1", "a", "Succeeded")}, True,
                 id="running-ready-and-succeeded"),
    pytest.param(_job(depends={"name": ["a"]}),
                 {"j-a-0": _pod("j-a-0", "a", ready=False), "j-a-1": _pod("j-a-1", "a", ready=True)}, False,
                 id="container-not-ready"),
    pytest.param(_job(min_available=1, depends={"name": ["a"]}),
                 {"j-a-0": _pod("j-a-0", "a", ready=True), "j-a-1": _pod("j-a-1", "a", "Pending")}, True,
                 id="min-available-enough"),
    pytest.param(_job(depends={"name": ["a"]}), {"j-a-0": _pod("j-a-0", "a"), "j-a-1": _pod("j-a-1", "a")}, True,
                 id="running-without-container-statuses"),
])
def test_dependencies_met(job, pods, ok):
    assert status.dependencies_met(job, job["spec"]["tasks"][1], pods) is ok


@pytest.mark.parametrize("iteration,ready,ok", [
    pytest.param("any", {"a"}, True, id="any-one-ready"),
    pytest.param("any", set(), False, id="any-none-ready"),
    pytest.param("all", {"a"}, False, id="all-needs-both"),
    pytest.param(None, {"a", "c"}, True, id="default-all-both-ready"),
])
def test_depends_on_iteration(iteration, ready, ok):
    job = {"metadata": {"name": "j"}, "spec": {"tasks": [
        {"name": "a", "replicas": 1}, {"name": "c", "replicas": 1},
        {"name": "b", "replicas": 1,
         "dependsOn": {"name": ["a", "c"], **({"iteration": iteration} if iteration else {})}}]}}
    pods = {f"j-{t}-0": _pod(f"j-{t}-0", t, "Succeeded") for t in ready}
    assert status.dependencies_met(job, job["spec"]["tasks"][2], pods) is ok
