"""pdb: victims filtered by PodDisruptionBudgets (plugins/pdb/pdb.go, pdb_test.go), and shuffle with it."""
from __future__ import annotations

import pytest

from tests.unit.scheduler import objects as o
from vclite.scheduler import conf
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.plugins import pdb as pdb_plugin

JOB_LABEL = "volcano.sh/job-name"


def budget(allowed, selector=None, name="test-pdb", namespace="default", disrupted=None):
    status = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = {p: "2026-01-01T00:00:00Z" for p in disrupted}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {JOB_LABEL: "job-1"}} if selector is None else selector},
            "status": status}


def open_session(pdbs, labels=({JOB_LABEL: "job-1"}, {JOB_LABEL: "job-1"}), plugins=None, actions="preempt"):
    pods = []
    for i, lb in enumerate(labels, 1):
        p = o.pod(f"default/test-pod{i}", "pg1", node="n1", phase="Running")
        p["metadata"]["labels"] = dict(lb)
        pods.append(p)
    st = o.state([o.node("n1")], None, [o.pg("default/pg1", phase="Running")], pods)
    st.pdbs = list(pdbs)
    tiers = [plugins or [conf.plugin("pdb", enablePreemptable=True, enableReclaimable=True, enabledVictim=True)]]
    ssn = session.open_session(st, conf.build(actions, tiers), o.NOW)
    tasks = {t.pod["metadata"]["name"]: t for t in ssn.jobs["default/pg1"].tasks.values()}
    return ssn, [tasks[f"test-pod{i}"] for i in range(1, len(labels) + 1)]


# pdb_test.go TestPreemptableAndReclaimableFn: (pdbs, victims by index); VictimTasks' map there is the
# VictimFilter's result here
@pytest.mark.parametrize("pdbs, victims", [
    pytest.param([], [0, 1], id="test without pdbs"),
    pytest.param([budget(0)], [], id="test with pdbs(can evict 0 pod)"),
    pytest.param([budget(1)], [0], id="test with pdbs(can evict 1 pod)"),
])
def test_volcano_rows(pdbs, victims):
    ssn, tasks = open_session(pdbs)
    want = [tasks[i] for i in victims]
    for point in (hooks.Point.PREEMPTABLE, hooks.Point.RECLAIMABLE):
        # (an empty list leaves the tier undecided: Volcano's Preemptable answers nil)
        assert ssn.hooks.call(point, tasks[0], tasks) == (want or None)
    assert ssn.victim_filter(tasks) == want


@pytest.mark.parametrize("pdbs, labels, victims", [
    pytest.param([budget(1, disrupted=["test-pod1"])], None, [0, 1],
                 id="a-pod-the-api-already-counted-spends-nothing"),
    pytest.param([budget(0, selector={})], None, [0, 1], id="an-empty-selector-selects-nothing"),
    pytest.param([budget(0, namespace="other")], None, [0, 1], id="another-namespace"),
    pytest.param([budget(0)], ({}, {JOB_LABEL: "job-1"}), [0], id="a-pod-without-labels-is-not-protected"),
    pytest.param([budget(2), budget(1, name="b2", selector={"matchExpressions": [
        {"key": JOB_LABEL, "operator": "Exists"}]})], None, [0], id="every-budget-of-the-pod-must-allow-it"),
])
def test_budgets(pdbs, labels, victims):
    ssn, tasks = open_session(pdbs, **({"labels": labels} if labels else {}))
    assert ssn.victim_filter(tasks) == [tasks[i] for i in victims]


def test_the_victim_filter_alone_makes_shuffle_evict_nothing():
    """Upstream's pdb is a VictimTasks function: with shuffle it would evict every pod no budget protects."""
    ssn, tasks = open_session([budget(1)], actions="shuffle")
    assert ssn.victim_tasks(tasks) == []
    shuffle = conf.build("shuffle", [[conf.plugin("pdb")]], default_on=True)
    result = session.run_session(open_state([budget(1)]), shuffle, o.NOW)
    assert result.evictions == []


def open_state(pdbs):
    pods = [o.pod(f"default/test-pod{i}", "pg1", node="n1", phase="Running") for i in (1, 2)]
    for p in pods:
        p["metadata"]["labels"] = {JOB_LABEL: "job-1"}
    st = o.state([o.node("n1")], None, [o.pg("default/pg1", phase="Running")], pods)
    st.pdbs = list(pdbs)
    return st


def test_shuffle_evicts_only_what_the_budgets_allow_of_what_another_plugin_chose():
    st = open_state([budget(1)])
    ssn = session.open_session(st, conf.build("shuffle", [[conf.plugin("pdb")]], default_on=True), o.NOW)
    tasks = sorted((t for t in ssn.jobs["default/pg1"].tasks.values()), key=lambda t: t.key)
    ssn.hooks.register(hooks.Point.VICTIM_TASKS, 0, lambda ts: list(ts), plugin="evict-all")
    assert ssn.victim_filter(ssn.victim_tasks(tasks)) == [tasks[0]]
    assert pdb_plugin.allowed([t.pod for t in tasks], st.pdbs) == [True, False]
