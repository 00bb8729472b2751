"""enqueue and allocate details the ported scenarios do not pin down; shuffle_test.go TestShuffle."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler import conf, registry
from vclite.scheduler.framework import hooks, plugin, session

from .. import objects


class Scores:
    """A test plugin scoring nodes by a fixed table (node name -> score)."""
    name = "scores"
    Arguments = plugin.NoArguments
    table: dict = {}

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.NODE_ORDER, lambda task, rows: np.array([self.table.get(ssn.nodes.names[r], 0)
                                                                     for r in rows], dtype=float))

    def on_session_close(self, ssn):
        pass


def _run_with_scores(st, table):
    Scores.table = table
    reg = registry.default_registry().with_plugins(Scores)
    c = conf.build("allocate", [[conf.plugin("gang", enableJobReady=True, enableJobPipelined=True),
                                 conf.plugin("predicates", enablePredicate=True),
                                 conf.plugin("scores", enableNodeOrder=True)]], registry=reg)
    return session.run_session(st, c, objects.NOW)


def test_highest_score_wins_and_ties_go_to_the_first_node_by_name():
    st = objects.state(nodes=[objects.node(n) for n in ("c", "a", "b")], podgroups=[objects.pg("ns/g")],
                       pods=[objects.pod("ns/g-0", "g")])
    assert _run_with_scores(st, {"b": 5, "c": 5}).binds == {"ns/g-0": "b"}
    assert _run_with_scores(st, {}).binds == {"ns/g-0": "a"}


def test_idle_nodes_are_preferred_to_releasing_ones_whatever_the_score():
    st = objects.state(
        nodes=[objects.node("a", cpu="2"), objects.node("b", cpu="2")],
        podgroups=[objects.pg("ns/old", phase="Running"), objects.pg("ns/g")],
        pods=[objects.pod("ns/old-0", "old", "2", node="a", phase="Running", deleting=True),
              objects.pod("ns/g-0", "g", "1")])
    assert _run_with_scores(st, {"a": 100}).binds == {"ns/g-0": "b"}


def test_best_effort_and_gated_pods_are_left_to_backfill():
    gated = objects.pod("ns/g-1", "g")
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    st = objects.state(nodes=[objects.node("a")], podgroups=[objects.pg("ns/g", min_member=0)],
                       pods=[objects.pod("ns/g-0", "g", cpu=None, mem=None), gated, objects.pod("ns/g-2", "g")])
    assert objects.run(st).binds == {"ns/g-2": "a"}


def test_without_enqueue_allocate_admits_pending_jobs():
    st = objects.state(nodes=[objects.node("a")], podgroups=[objects.pg("ns/g", phase="Pending")],
                       pods=[objects.pod("ns/g-0", "g")])
    assert objects.run(st, "allocate").binds == {"ns/g-0": "a"}
    assert objects.run(st, "enqueue, allocate").binds == {"ns/g-0": "a"}
    with_enqueue_only_allocate = objects.default_conf("allocate, enqueue")
    assert session.run_session(st, with_enqueue_only_allocate, objects.NOW).binds == {}


def test_higher_priority_job_goes_first():
    pcs = [{"metadata": {"name": "high"}, "value": 100}]
    st = objects.state(nodes=[objects.node("a", cpu="1")],
                       podgroups=[objects.pg("ns/low"), objects.pg("ns/high", priority_class="high")],
                       pods=[objects.pod("ns/low-0", "low"), objects.pod("ns/high-0", "high")], priority_classes=pcs)
    assert objects.run(st).binds == {"ns/high-0": "a"}


def test_rejected_job_is_told_why_and_the_reason_clears_once_admitted():
    pgs = [objects.pg("ns/g", phase="Pending", min_resources={"cpu": "8"})]
    small = objects.state(nodes=[objects.node("a", cpu="4")], podgroups=pgs)
    first = objects.run(small).podgroup_status["ns/g"]
    assert first["phase"] == "Pending"
    assert first["conditions"][0]["reason"] == "NotEnoughResources"
    pgs[0]["status"] = first
    big = objects.state(nodes=[objects.node("a", cpu="16")], podgroups=pgs)
    second = objects.run(big).podgroup_status["ns/g"]
    assert second["phase"] == "Inqueue"
    assert second["conditions"][0]["status"] == "False"


def test_enqueue_tries_every_job_of_a_queue_after_a_rejection():
    st = objects.state(nodes=[objects.node("a", cpu="4")], podgroups=[
        objects.pg("ns/big", phase="Pending", min_resources={"cpu": "8"}),
        objects.pg("ns/small", phase="Pending", min_resources={"cpu": "1"})])
    status = objects.run(st, "enqueue").podgroup_status
    assert status["ns/big"]["phase"] == "Pending" and status["ns/small"]["phase"] == "Inqueue"


class LowPriorityVictims:
    """shuffle_test.go's fake plugin: its VictimTasks function offers every candidate of priority 10."""
    name = "fake"
    Arguments = plugin.NoArguments

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.VICTIM_TASKS, lambda tasks: [t for t in tasks if t.priority == 10])

    def on_session_close(self, ssn):
        pass


def test_shuffle_select_pods_with_low_priority_and_evict_them():
    """shuffle_test.go TestShuffle: three running jobs on two nodes; shuffle evicts exactly the low-priority pod
    of each, as the victim plugin chose them."""
    placed = [("pod1-1", "pg1", "node1", 10), ("pod1-2", "pg1", "node1", 100), ("pod1-3", "pg1", "node1", 100),
              ("pod2-1", "pg2", "node1", 10), ("pod2-2", "pg2", "node2", 100),
              ("pod3-1", "pg3", "node2", 10), ("pod3-2", "pg3", "node2", 100)]
    st = objects.state(
        nodes=[objects.node(n, cpu="4", mem="8Gi") for n in ("node1", "node2")],
        podgroups=[objects.pg(f"test/pg{i}", min_member=0, phase="Running") for i in (1, 2, 3)],
        pods=[objects.pod(f"test/{name}", group, "1", "2G", node=where, phase="Running", priority=prio)
              for name, group, where, prio in placed])
    reg = registry.default_registry().with_plugins(LowPriorityVictims)
    c = conf.build("shuffle", [[conf.plugin("fake", enabledVictim=True)]], registry=reg)
    assert sorted(session.run_session(st, c, objects.NOW).evictions) == ["test/pod1-1", "test/pod2-1", "test/pod3-1"]


SKIPPED = "Task {} with role spec {} has already predicated failed, skip"
ZONE = {"zone": "nowhere"}


def test_tasks_of_a_role_that_already_fit_nowhere_are_skipped_and_told_so():
    """allocate.go: once a task of a role (`volcano.sh/task-spec`) fits no node, the job's later tasks of that
    role are not tried in the session and each is recorded with Volcano's fit error (its name, not its
    namespace); a task without a role is tried for itself, one of another role is allocated. Their pods'
    PodScheduled conditions carry the message; the PodGroup's names the first task with fit errors (Volcano's
    origin reason), in the job's task order."""
    st = objects.state(nodes=[objects.node("n1", cpu="2")],
                       podgroups=[objects.pg("ns/g", min_member=3)],
                       pods=[*(objects.pod(f"ns/g-big-{i}", "g", role="big", selector=ZONE) for i in range(3)),
                             objects.pod("ns/g-none-0", "g", selector=ZONE),
                             objects.pod("ns/g-small-0", "g", cpu="1", role="small")])
    result = objects.run(st)
    told = {k: m for k, (_, m, _) in result.pod_conditions.items()}
    unfit = "0/1 nodes are unavailable: 1 node(s) didn't match Pod's node affinity/selector."
    assert result.binds == {}
    assert told == {"ns/g-big-0": unfit, "ns/g-big-1": SKIPPED.format("g-big-1", "big"),
                    "ns/g-big-2": SKIPPED.format("g-big-2", "big"), "ns/g-none-0": unfit,
                    "ns/g-small-0": "Pod ns/g-small-0 can possibly be assigned to n1, once minAvailable is satisfied"}
    cond = {c["type"]: c for c in result.podgroup_status["ns/g"]["conditions"]}["Unschedulable"]
    assert cond["message"] == ("2/5 tasks in gang unschedulable: pod group is not ready, 3 minAvailable, 5 Pending; "
                               f"Pending: 1 Schedulable, 4 Unschedulable. Origin reason is g-big-0: {unfit}")


NO_PROPORTION = 'actions: "enqueue, allocate, backfill, preempt, reclaim"\ntiers:\n' \
                "- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n" \
                "- plugins: [{name: drf}, {name: predicates}, {name: nodeorder}, {name: binpack}]\n"


@pytest.mark.parametrize("nodes", [
    pytest.param([], id="no node"),
    pytest.param([objects.node("a", ready=False)], id="no Ready node"),
])
def test_a_session_without_nodes_says_so_instead_of_failing(nodes):
    """No node in the session and nothing (proportion) holding the tasks back: allocate's fast path took the
    best of no scores and raised; now the job waits with Volcano's `0/0 nodes are unavailable`."""
    st = objects.state(nodes=nodes, podgroups=[objects.pg("ns/g", min_member=1)],
                       pods=[objects.pod("ns/g-0", "g"), objects.pod("ns/g-1", "g", cpu=None, mem=None)])
    result = session.run_session(st, conf.parse(NO_PROPORTION), objects.NOW)
    assert result.binds == {} and result.evictions == []
    message = result.podgroup_status["ns/g"]["conditions"][0]["message"]
    assert message.endswith(". Origin reason is g-0: 0/0 nodes are unavailable"), message


OVERUSED = ("resource in cluster is overused: overused cpu; "
            "job needs cpu {need} but the cluster can admit at most cpu 4800m more")


@pytest.mark.parametrize("min_member, min_cpu, pods, want", [
    pytest.param(1, "6", [], "pod needs cpu 6, but the largest node has 4; " + OVERUSED.format(need=6),
                 id="a vcjob's one pod, before it exists: bigger than any node"),
    pytest.param(2, "10", [], "one of its 2 pods needs at least cpu 5, but the largest node has 4; "
                 + OVERUSED.format(need=10), id="two pods sharing more than a node each"),
    pytest.param(3, "9", [], OVERUSED.format(need=9), id="each pod fits a node: only the cluster is short"),
    pytest.param(1, "6", [objects.pod("ns/g-0", "g", cpu="6")],
                 "pod needs cpu 6, but the largest node has 4; " + OVERUSED.format(need=6), id="a pod of it"),
    pytest.param(1, "6", [objects.pod("ns/g-0", "g", cpu="1")], OVERUSED.format(need=6),
                 id="pods that fit a node, whatever minResources says"),
])
def test_a_job_no_node_could_ever_run_is_told_so_when_enqueue_refuses_it(min_member, min_cpu, pods, want):
    """The issue's plain message for a job bigger than any node was only given by allocate: a job enqueue
    refused first (overcommit: a small cluster) was told the cluster was overused, as if waiting would help."""
    st = objects.state(nodes=[objects.node("a", cpu="4")],
                       podgroups=[objects.pg("ns/g", min_member=min_member, phase="Pending",
                                             min_resources={"cpu": min_cpu})], pods=pods)
    result = objects.run(st)
    status = result.podgroup_status["ns/g"]
    assert status["phase"] == "Pending"
    message = next(c["message"] for c in status["conditions"] if c["type"] == "Unschedulable")
    assert message.startswith(want), message


@pytest.mark.parametrize("phase, cpu, binds, after, again", [
    # Volcano's JobInfo.IsPending is phase Pending or "": any other phase — Unknown, or one another tool wrote —
    # is not taken by enqueue and is taken by allocate; the session then writes Running, or Pending unless Inqueue
    # (and, Pending now, enqueue takes it in the next session: asked for at once, as Volcano's next period)
    pytest.param("Foo", "1", {"ns/g-0": "a"}, "Running", False, id="unknown-phase-allocated-before-enqueue"),
    pytest.param("Unknown", "1", {"ns/g-0": "a"}, "Running", False, id="phase-Unknown-the-same"),
    pytest.param("Pending", "1", {}, "Inqueue", False, id="pending-waits-for-enqueue"),
    pytest.param("", "1", {}, "Inqueue", False, id="no-phase-is-pending"),
    pytest.param("Foo", "8", {}, "Pending", True, id="unknown-phase-not-enqueued-and-not-placed-becomes-Pending"),
    pytest.param("Pending", "8", {}, "Inqueue", False, id="pending-enqueued-though-not-placed"),
])
def test_a_podgroup_phase_the_scheduler_does_not_know_is_not_pending(phase, cpu, binds, after, again):
    st = objects.state(nodes=[objects.node("a", cpu="4")], podgroups=[objects.pg("ns/g", phase=phase)],
                       pods=[objects.pod("ns/g-0", "g", cpu=cpu)])
    result = session.run_session(st, objects.default_conf("allocate, enqueue"), objects.NOW,
                                 binding_scheduled=True)   # (as the live scheduler, which binds at once)
    assert result.binds == binds
    assert result.podgroup_status["ns/g"]["phase"] == after
    assert result.recheck_at == (objects.NOW if again else None)
