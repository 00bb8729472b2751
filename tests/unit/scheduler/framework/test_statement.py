"""Statement: operations take effect at once; commit reports decisions; discard restores exactly."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import session
from vclite.scheduler.framework import statement as statement_mod
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import proportion

from .. import objects

TaskStatus = tasks_mod.TaskStatus


def _session():
    st = objects.state(
        nodes=[objects.node("a", cpu="4", mem="8Gi"), objects.node("b", cpu="2", mem="4Gi")],
        podgroups=[objects.pg("ns/j", min_member=2), objects.pg("ns/old", min_member=1, phase="Running")],
        pods=[objects.pod("ns/j-0", "j", "1", "1Gi"), objects.pod("ns/j-1", "j", "500m", "512Mi"),
              objects.pod("ns/j-2", "j", "2", "1Gi"),
              objects.pod("ns/old-0", "old", "1", "2Gi", node="b", phase="Running")])
    return objects.open_session(st, "allocate")


def _books(ssn):
    prop = next(p for p in ssn.plugins if isinstance(p, proportion.Proportion))
    return (ssn.nodes.copy_arrays(), {k: a.allocated.copy() for k, a in prop.attrs.items()},
            {t.key: (t.status, t.node) for j in ssn.jobs.values() for t in j.tasks.values()},
            {k: j.allocated.copy() for k, j in ssn.jobs.items()})


def _assert_same(a, b):
    (na, pa, ta, ja), (nb, pb, tb, jb) = a, b
    for name in na:
        assert np.array_equal(na[name], nb[name]), name
    for k in pa:
        assert np.array_equal(pa[k], pb[k]), k
    assert ta == tb
    for k in ja:
        assert np.array_equal(ja[k], jb[k]), k


OPS = [
    pytest.param([("allocate", "ns/j-0", 0)], id="allocate"),
    pytest.param([("pipeline", "ns/j-1", 1)], id="pipeline"),
    pytest.param([("evict", "ns/old-0", None)], id="evict"),
    pytest.param([("allocate", "ns/j-0", 0), ("pipeline", "ns/j-1", 1), ("evict", "ns/old-0", None),
                  ("allocate", "ns/j-2", 0)], id="mixed"),
]


def _apply(ssn, stmt, ops):
    tasks = {t.key: t for j in ssn.jobs.values() for t in j.tasks.values()}
    for op, key, row in ops:
        if op == "evict":
            stmt.evict(tasks[key], "test")
        else:
            getattr(stmt, op)(tasks[key], row)


@pytest.mark.parametrize("ops", OPS)
def test_discard_restores_everything_exactly(ops):
    ssn = _session()
    before = _books(ssn)
    stmt = ssn.statement()
    _apply(ssn, stmt, ops)
    assert not all(np.array_equal(before[0][k], v) for k, v in ssn.nodes.copy_arrays().items())
    stmt.discard()
    _assert_same(before, _books(ssn))
    assert stmt.operations == []


def test_operations_update_node_columns():
    ssn = _session()
    tasks = {t.key: t for j in ssn.jobs.values() for t in j.tasks.values()}
    idle_a = ssn.nodes.idle[0].copy()
    stmt = ssn.statement()
    stmt.allocate(tasks["ns/j-0"], 0)
    np.testing.assert_array_equal(ssn.nodes.idle[0], idle_a - tasks["ns/j-0"].req)
    stmt.pipeline(tasks["ns/j-1"], 1)
    np.testing.assert_array_equal(ssn.nodes.pipelined[1], tasks["ns/j-1"].req)
    stmt.evict(tasks["ns/old-0"])
    np.testing.assert_array_equal(ssn.nodes.releasing[1], tasks["ns/old-0"].req)
    fi = ssn.nodes.future_idle()
    np.testing.assert_array_equal(fi[1], ssn.nodes.idle[1] + tasks["ns/old-0"].req - tasks["ns/j-1"].req)
    assert [tasks[k].status for k in ("ns/j-0", "ns/j-1", "ns/old-0")] == [
        TaskStatus.ALLOCATED, TaskStatus.PIPELINED, TaskStatus.RELEASING]


def test_commit_returns_decisions_and_records_them():
    ssn = _session()
    tasks = {t.key: t for j in ssn.jobs.values() for t in j.tasks.values()}
    stmt = ssn.statement()
    _apply(ssn, stmt, [("allocate", "ns/j-0", 0), ("pipeline", "ns/j-1", 1), ("evict", "ns/old-0", None)])
    decisions = stmt.commit()
    Op, D = statement_mod.Op, statement_mod.Decision
    assert decisions == [D(Op.ALLOCATE, "ns/j-0", "a"), D(Op.PIPELINE, "ns/j-1", "b"), D(Op.EVICT, "ns/old-0", "b")]
    assert ssn.binds == {"ns/j-0": "a"} and ssn.evictions == ["ns/old-0"]
    assert tasks["ns/j-0"].status == TaskStatus.BINDING
    assert stmt.operations == []


def test_discard_remembers_the_last_tentative_placement():
    ssn = _session()
    task = ssn.jobs["ns/j"].tasks["ns/j-0"]
    stmt = ssn.statement()
    stmt.allocate(task, 0)
    stmt.discard()
    assert task.status == TaskStatus.PENDING and task.node == ""
    assert task.last_transaction == (TaskStatus.ALLOCATED, "a", False)


@pytest.mark.parametrize("task_key, row, evicted_for, waits_release", [
    pytest.param("ns/j-0", 0, False, False, id="idle-room: waits only for its gang"),
    pytest.param("ns/j-2", 1, False, True, id="no-idle-room: waits for resources being released"),
    pytest.param("ns/j-2", 1, True, True, id="pods-evicted-for-it"),
])
def test_pipeline_notes_what_the_task_waits_for_and_discard_keeps_it(task_key, row, evicted_for, waits_release):
    ssn = _session()
    task = ssn.jobs["ns/j"].tasks[task_key]
    stmt = ssn.statement()
    stmt.pipeline(task, row, evicted_for=evicted_for)
    assert (task.status, task.evicted_for, task.waits_release) == (TaskStatus.PIPELINED, evicted_for, waits_release)
    stmt.discard()
    assert (task.evicted_for, task.waits_release) == (False, False)
    assert task.last_transaction == (TaskStatus.PIPELINED, ("a", "b")[row], evicted_for)


@pytest.mark.parametrize("op", ["allocate", "pipeline"])
def test_a_refused_allocation_is_undone_at_once_and_noted(op):
    """An allocate handler returning statement.Refused (a device plugin finding no card): every handler is still
    told, then the operation is undone exactly (node columns, proportion's books, the task) with every
    deallocate handler told, nothing is logged for commit, and the task's job notes why. Any other return value
    of a handler is not a refusal."""
    ssn = _session()
    told = []
    ssn.hooks.register(statement_mod.hooks.Point.ALLOCATE_EVENT, 0,
                       lambda t: told.append(("refuse", t.key)) or statement_mod.Refused("no card fits"))
    ssn.hooks.register(statement_mod.hooks.Point.ALLOCATE_EVENT, 1, lambda t: told.append(("after", t.key)) or "x")
    ssn.hooks.register(statement_mod.hooks.Point.DEALLOCATE_EVENT, 1, lambda t: told.append(("undo", t.node)))
    before = _books(ssn)
    stmt = ssn.statement()
    task = next(t for t in ssn.jobs["ns/j"].tasks.values() if t.key == "ns/j-0")
    assert getattr(stmt, op)(task, 0) == "no card fits"
    _assert_same(before, _books(ssn))
    assert (task.status, task.node, stmt.operations) == (TaskStatus.PENDING, "", [])
    assert told == [("refuse", "ns/j-0"), ("after", "ns/j-0"), ("undo", "a")]
    verb = "allocation to" if op == "allocate" else "reservation on"
    assert ssn.jobs["ns/j"].task_notes[task.uid] == f'{verb} node "a" undone: no card fits'
    assert stmt.commit() == []


def test_a_refusal_after_a_discarded_placement_is_what_the_pod_is_told():
    """j-0 was placed on a then discarded (its gang short), then refused on b: its PodScheduled message is the
    refusal, the last thing that happened to it (before: "can possibly be assigned to a, once minAvailable is
    satisfied", from the discarded placement), and gang no longer counts it as schedulable."""
    ssn = _session()
    task = ssn.jobs["ns/j"].tasks["ns/j-0"]
    stmt = ssn.statement()
    stmt.allocate(task, 0)
    stmt.discard()
    ssn.hooks.register(statement_mod.hooks.Point.ALLOCATE_EVENT, 0, lambda t: statement_mod.Refused("no card fits"))
    assert stmt.allocate(task, 1) == "no card fits"
    assert task.last_transaction is None
    ssn.unschedulable_now.add("ns/j")
    reason, message, _ = session.close_session(ssn).pod_conditions["ns/j-0"]
    assert (reason, message) == ("Unschedulable", 'allocation to node "b" undone: no card fits')


def test_after_a_refusal_the_close_looks_only_at_the_jobs_it_touched(monkeypatch):
    """Forty jobs run; j's gang is satisfied (j-1 placed) but its j-0 was refused: the close works out the message
    of j's refused pod only — no other job's waiting pods are walked nor its message composed — and tells it."""
    running = [objects.pg(f"ns/r{i}", min_member=1, phase="Running") for i in range(40)]
    st = objects.state(
        nodes=[objects.node("a", cpu="64", mem="128Gi")],
        podgroups=[objects.pg("ns/j", min_member=1), *running],
        pods=[objects.pod("ns/j-0", "j", "1", "1Gi"), objects.pod("ns/j-1", "j", "1", "1Gi"),
              *(objects.pod(f"ns/r{i}-0", f"r{i}", "1", "1Gi", node="a", phase="Running") for i in range(40))])
    ssn = objects.open_session(st, "allocate")
    ssn.hooks.register(statement_mod.hooks.Point.ALLOCATE_EVENT, 0,
                       lambda t: statement_mod.Refused("no card fits") if t.key == "ns/j-0" else None)
    stmt = ssn.statement()
    assert stmt.allocate(ssn.jobs["ns/j"].tasks["ns/j-1"], 0) is None
    assert stmt.allocate(ssn.jobs["ns/j"].tasks["ns/j-0"], 0) == "no card fits"
    stmt.commit()
    composed = []
    real = session.status_mod.base_error_message
    monkeypatch.setattr(session.status_mod, "base_error_message", lambda job: composed.append(job.uid) or real(job))
    result = session.close_session(ssn)
    assert composed == ["ns/j"]
    assert result.pod_conditions == {"ns/j-0": ("Unschedulable", 'allocation to node "a" undone: no card fits', "")}
