"""gang (validity, order, session-close conditions) and predicates (node filters as masks)."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import snapshot
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import gang, predicates

from .. import objects


@pytest.mark.parametrize("min_member, mtm, pods, want", [
    pytest.param(2, None, [("", "Pending"), ("", "Pending")], None, id="valid"),
    pytest.param(3, None, [("", "Pending"), ("", "Failed"), ("", "Running")],
                 ("NotEnoughTasks", "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"), id="too few"),
    pytest.param(2, {"m": 1, "w": 1}, [("m", "Pending"), ("m", "Pending")],
                 ("NotEnoughPodsOfTask", "Not enough valid pods of each task for gang-scheduling"), id="role missing"),
])
def test_job_valid(min_member, mtm, pods, want):
    snap = snapshot.build(objects.state(
        nodes=[objects.node("n1")], podgroups=[objects.pg("ns/g", min_member=min_member, min_task_member=mtm)],
        pods=[objects.pod(f"ns/p-{i}", "g", role=r, phase=ph, node="n1" if ph != "Pending" else None)
              for i, (r, ph) in enumerate(pods)]))
    result = gang.Gang.job_valid(snap.jobs["ns/g"])
    assert (None if result is None else (result.reason, result.message)) == want


def test_invalid_job_gets_its_reason_and_is_not_scheduled():
    st = objects.state(nodes=[objects.node("n1")], podgroups=[objects.pg("ns/g", min_member=3)],
                       pods=[objects.pod("ns/g-0", "g"), objects.pod("ns/g-1", "g")])
    result = objects.run(st)
    assert result.binds == {}
    cond = result.podgroup_status["ns/g"]["conditions"][0]
    assert (cond["type"], cond["reason"]) == ("Unschedulable", "NotEnoughTasks")


def test_ready_job_turns_an_old_unschedulable_condition_false():
    old = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": "m",
           "transitionID": "x", "lastTransitionTime": "2025-01-01T00:00:00Z"}
    st = objects.state(nodes=[objects.node("n1")], podgroups=[objects.pg("ns/g", conditions=[old])],
                       pods=[objects.pod("ns/g-0", "g")])
    conds = {c["type"]: c for c in objects.run(st).podgroup_status["ns/g"]["conditions"]}
    assert conds["Unschedulable"]["status"] == "False"
    assert conds["Scheduled"]["status"] == "True"


def test_not_ready_jobs_first():
    snap = snapshot.build(objects.state(
        nodes=[objects.node("n1")], podgroups=[objects.pg("ns/ready"), objects.pg("ns/waiting")],
        pods=[objects.pod("ns/r", "ready", node="n1", phase="Running"), objects.pod("ns/w", "waiting")]))
    assert gang.Gang.job_order(snap.jobs["ns/waiting"], snap.jobs["ns/ready"]) == -1
    assert gang.Gang.job_order(snap.jobs["ns/ready"], snap.jobs["ns/waiting"]) == 1


def _predicate(task_pod, args=None):
    nodes = [objects.node("a", labels={"zone": "z1"}), objects.node("b", labels={"zone": "z2"}, unschedulable=True),
             objects.node("c", labels={"zone": "z1", "gpu": "yes"})]
    snap = snapshot.build(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g")], pods=[task_pod]))
    task = snap.jobs["ns/g"].tasks[task_pod["metadata"]["uid"]]
    plugin = predicates.Predicates(args or predicates.Arguments())
    failures = plugin.predicate(task, snap.nodes)
    return [(r, list(m)) for f in failures for r, m in f.reasons]


@pytest.mark.parametrize("pod, want", [
    pytest.param(objects.pod("ns/p", "g"), [(predicates.UNSCHEDULABLE, [False, True, False])], id="cordoned node"),
    pytest.param(objects.pod("ns/p", "g", tolerations=[{"key": "node.kubernetes.io/unschedulable",
                                                        "operator": "Exists", "effect": "NoSchedule"}]),
                 [], id="tolerates the unschedulable taint"),
    pytest.param(objects.pod("ns/p", "g", tolerations=[{"operator": "Exists"}], selector={"zone": "z1", "gpu": "yes"}),
                 [(predicates.SELECTOR_MISMATCH, [True, True, False])], id="selector: every label must match"),
])
def test_predicates(pod, want):
    assert _predicate(pod) == want


def test_node_affinity_argument_turns_the_selector_check_off():
    pod = objects.pod("ns/p", "g", selector={"zone": "nowhere"}, tolerations=[{"operator": "Exists"}])
    assert _predicate(pod, predicates.Arguments(node_affinity=False)) == []


def test_toleration_matching():
    t = predicates.tolerates
    key = "node.kubernetes.io/unschedulable"
    assert t({"key": key, "operator": "Exists"}, key, "NoSchedule")
    assert t({"key": key, "value": ""}, key, "NoSchedule")
    assert not t({"key": key, "effect": "NoExecute", "operator": "Exists"}, key, "NoSchedule")
    assert not t({"key": "other", "operator": "Exists"}, key, "NoSchedule")
    assert not t({"value": "x"}, key, "NoSchedule")
    assert np.all([t({"operator": "Exists"}, key, "NoSchedule")])


# Volcano's gang_test.go TestShouldSkipUnschedulableForReleasing (reference §4.7 GANG-01..05): a job whose
# releasing tasks (still on a node) with its scheduled ones cover minMember, and with nothing pending or
# pipelined, gets no Unschedulable condition. GANG-03 (a task pipelined in the session) cannot be a state file.
S = tasks_mod.TaskStatus


@pytest.mark.parametrize("min_member, tasks, want", [
    pytest.param(2, [(S.RUNNING, "node-1"), (S.RELEASING, "node-2")], True, id="GANG-01"),
    pytest.param(2, [(S.RUNNING, "node-1"), (S.RELEASING, "node-2"), (S.PENDING, None)], False, id="GANG-02"),
    pytest.param(2, [(S.RUNNING, "node-1"), (S.RELEASING, "node-2"), (S.PIPELINED, "node-3")], False, id="GANG-03"),
    pytest.param(1, [(S.RELEASING, None)], False, id="GANG-04"),
    pytest.param(3, [(S.RUNNING, "node-1"), (S.RELEASING, "node-2")], False, id="GANG-05"),
])
def test_should_skip_unschedulable_for_releasing(min_member, tasks, want):
    nodes = [objects.node(f"node-{i}") for i in (1, 2, 3)]
    pods = [objects.pod(f"ns/t-{i}", "g", node=n if s != S.PIPELINED else None,
                        phase="Running" if s in (S.RUNNING, S.RELEASING) else "Pending", deleting=s == S.RELEASING)
            for i, (s, n) in enumerate(tasks)]
    job = snapshot.build(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g", min_member=min_member)],
                                       pods=pods)).jobs["ns/g"]
    for i, (status, node) in enumerate(tasks):
        task = job.tasks[f"ns/t-{i}"]
        task.node = node or ""      # a pipelined task holds the node it waits on
        job.update_task_status(task, status)
    assert job.covered_by_releasing() is want


@pytest.mark.parametrize("node_pods, placed", [
    pytest.param("0", [], id="node-allows-no-pod"),
    pytest.param("1", [("ns/other-0", "other")], id="node-full-by-pod-count"),
])
@pytest.mark.parametrize("cpu", [pytest.param("1", id="with-requests"), pytest.param(None, id="without-requests")])
def test_a_node_out_of_pod_slots_is_reported_whether_or_not_the_pod_requests_resources(node_pods, placed, cpu):
    """The pod count is checked for every pod (as NodeResourcesFit does), and a gang short of a BestEffort pod
    that fit nowhere says why as one short of any other pod: its PodGroup is not called Scheduled."""
    st = objects.state(nodes=[objects.node("n1", pods=node_pods)],
                       podgroups=[objects.pg("ns/g"), *(objects.pg(f"ns/{g}", phase="Running") for _, g in placed)],
                       pods=[objects.pod("ns/g-0", "g", cpu=cpu, mem=None if cpu is None else "1Gi"),
                             *(objects.pod(k, g, node="n1", phase="Running") for k, g in placed)])
    result = objects.run(st, "enqueue, allocate, backfill")
    assert result.binds == {}
    cond = {c["type"]: c for c in result.podgroup_status["ns/g"]["conditions"]}["Unschedulable"]
    assert (cond["status"], cond["reason"]) == ("True", "NotEnoughResources")
    assert "1/1 tasks in gang unschedulable" in cond["message"] and "1 Insufficient pods." in cond["message"]
    reason, message, _ = result.pod_conditions["ns/g-0"]
    assert reason == "Unschedulable" and message.startswith("0/1 nodes are unavailable: 1 Insufficient pods."), message


@pytest.mark.parametrize("cpu, selector, says", [
    pytest.param("64", None, "pod needs cpu 64, but the largest node has 4", id="bigger-than-any-node"),
    pytest.param("3", None, 'task needs cpu 3 but queue "default" deserves cpu 4 and has cpu 2 allocated',
                 id="more-than-the-queue-has-left"),
    pytest.param("1", {"zone": "x"}, "0/1 nodes are unavailable: 1 node(s) didn't match Pod's node affinity/selector.",
                 id="a-predicate-refuses-every-node"),
])
def test_a_pod_beyond_a_placed_gang_that_fits_nowhere_says_why(cpu, selector, says):
    """The gang (minMember 1) is placed, its second pod fits no node: the PodGroup is not Unschedulable, yet the pod
    is told why it waits (PodScheduled=False, Volcano's RecordJobStatusEvent tells every waiting task); it used to
    say nothing, and `vcctl run` stopped on a Running vcjob with no reason."""
    st = objects.state(nodes=[objects.node("n1", cpu="4")], podgroups=[objects.pg("ns/g", min_member=1)],
                       pods=[objects.pod("ns/g-0", "g", cpu="2"),
                             objects.pod("ns/g-1", "g", cpu=cpu, selector=selector)])
    result = objects.run(st, "enqueue, allocate, backfill")
    assert result.binds == {"ns/g-0": "n1"}
    reason, message, _ = result.pod_conditions["ns/g-1"]
    assert reason == "Unschedulable" and message, result.pod_conditions
    assert says in message
    assert "ns/g-0" not in result.pod_conditions
