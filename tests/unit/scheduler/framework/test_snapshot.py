"""Snapshot: pod -> task status, node accounting, which pods and jobs enter the session."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import snapshot
from vclite.scheduler.framework import tasks as tasks_mod

from .. import objects

S = tasks_mod.TaskStatus


@pytest.mark.parametrize("phase, node, deleting, want", [
    pytest.param("Pending", None, False, S.PENDING, id="pending"),
    pytest.param("Pending", "n1", False, S.BOUND, id="pending with node -> Bound"),
    pytest.param("Pending", "n1", True, S.RELEASING, id="pending being deleted -> Releasing"),
    pytest.param("Running", "n1", False, S.RUNNING, id="running"),
    pytest.param("Running", "n1", True, S.RELEASING, id="running being deleted -> Releasing"),
    pytest.param("Succeeded", "n1", False, S.SUCCEEDED, id="succeeded"),
    pytest.param("Failed", "n1", False, S.FAILED, id="failed"),
    pytest.param("Unknown", "n1", False, S.UNKNOWN, id="unknown"),
    pytest.param("", None, False, S.PENDING, id="no phase yet"),
])
def test_pod_status(phase, node, deleting, want):
    assert tasks_mod.pod_status(objects.pod("ns/p", "g", node=node, phase=phase, deleting=deleting)) == want


def test_node_accounting():
    snap = snapshot.build(objects.state(
        nodes=[objects.node("b", cpu="4", mem="8Gi", pods="10"), objects.node("a", cpu="2", mem="4Gi"),
               objects.node("down", ready=False)],
        podgroups=[objects.pg("ns/g")],
        pods=[objects.pod("ns/run", "g", "1", "1Gi", node="b", phase="Running"),
              objects.pod("ns/rel", "g", "1", "1Gi", node="b", phase="Running", deleting=True),
              objects.pod("ns/done", "g", "1", "1Gi", node="b", phase="Succeeded"),
              objects.pod("ns/other", None, "500m", "0", node="a", phase="Running", scheduler="default-scheduler"),
              objects.pod("ns/lost", "g", "1", "1Gi", node="down", phase="Running")]))
    nodes = snap.nodes
    assert nodes.names == ["a", "b"]                           # sorted; NotReady node left out
    gi = 2**30
    np.testing.assert_array_equal(nodes.allocatable[1], [4000, 8 * gi, 10])
    np.testing.assert_array_equal(nodes.used[1], [2000, 2 * gi, 2])   # Succeeded frees its share
    np.testing.assert_array_equal(nodes.releasing[1], [1000, gi, 1])
    np.testing.assert_array_equal(nodes.idle[1], [2000, 6 * gi, 8])
    np.testing.assert_array_equal(nodes.future_idle()[1], [3000, 7 * gi, 9])
    np.testing.assert_array_equal(nodes.used[0], [500, 0, 1])  # another scheduler's pod still occupies
    assert set(snap.jobs["ns/g"].tasks) == {"ns/run", "ns/rel", "ns/done", "ns/lost"}
    np.testing.assert_array_equal(snap.total, [6000, 12 * gi, 20])


def test_node_without_pods_allocatable_gets_kubelet_default():
    n = objects.node("a")
    del n["status"]["allocatable"]["pods"]
    snap = snapshot.build(objects.state(nodes=[n]))
    assert snap.nodes.allocatable[0][snap.dims.pods] == 110


def test_jobs_need_an_existing_queue_and_tasks_our_scheduler():
    snap = snapshot.build(objects.state(
        queues=[objects.queue("default")],
        podgroups=[objects.pg("ns/ok"), objects.pg("ns/lost", q="missing")],
        pods=[objects.pod("ns/a", "ok"), objects.pod("ns/b", "ok", scheduler="default-scheduler"),
              objects.pod("ns/c", None), objects.pod("ns/d", "lost"), objects.pod("other/e", "ok")]))
    assert list(snap.jobs) == ["ns/ok"]
    assert list(snap.jobs["ns/ok"].tasks) == ["ns/a"]


def test_priorities_and_extended_resources():
    pcs = [{"metadata": {"name": "high"}, "value": 1000}, {"metadata": {"name": "norm"}, "value": 5, "globalDefault": True}]
    gpu_pod = objects.pod("ns/gpu", "g", priority=7)
    gpu_pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "2"}
    gpu_pod["metadata"]["annotations"]["volcano.sh/task-priority"] = "9"
    snap = snapshot.build(objects.state(
        podgroups=[objects.pg("ns/g", priority_class="high"), objects.pg("ns/h")],
        pods=[gpu_pod, objects.pod("ns/plain", "h")], priority_classes=pcs))
    assert snap.jobs["ns/g"].priority == 1000 and snap.jobs["ns/h"].priority == 5
    gpu = snap.jobs["ns/g"].tasks["ns/gpu"]
    assert gpu.priority == 9 and snap.jobs["ns/h"].tasks["ns/plain"].priority == 5   # (the global default's)
    assert gpu.req[snap.dims.index["nvidia.com/gpu"]] == 2000   # scalar resources in thousandths


@pytest.mark.parametrize("classes, spec, want", [
    ([], {}, 1),                                                     # unset, no class: Volcano's 1
    ([("d", 100, True)], {}, 100),                                   # the global default's, as admission writes
    ([("d", 100, True), ("e", 40, True)], {}, 40),                   # several: the lowest, as admission picks
    ([("d", 100, True), ("c", 7, False)], {"priorityClassName": "c"}, 7),
    ([("d", 100, True)], {"priority": 3}, 3),                        # what the pod carries
    ([("d", 100, True)], {"priority": 0}, 0),
])
def test_task_priority_when_the_pod_carries_none(classes, spec, want):
    pcs = [{"metadata": {"name": n}, "value": v, "globalDefault": g} for n, v, g in classes]
    pod = objects.pod("ns/p", "g")
    pod["spec"].pop("priority", None)
    pod["spec"].update(spec)
    snap = snapshot.build(objects.state(podgroups=[objects.pg("ns/g")], pods=[pod], priority_classes=pcs))
    assert snap.jobs["ns/g"].tasks["ns/p"].priority == want


def test_best_effort_task():
    snap = snapshot.build(objects.state(podgroups=[objects.pg("ns/g")],
                                        pods=[objects.pod("ns/be", "g", cpu=None, mem=None)]))
    assert snap.jobs["ns/g"].tasks["ns/be"].best_effort


def test_podgroups_read_once_across_sessions_and_never_shared_mutably():
    """With a request_cache (the scheduler keeps one), a PodGroup object seen in an earlier build is
    not read again; every build still gets fresh JobInfos (a session changes phase, conditions,
    allocated and tasks), and a new version of a PodGroup (a new object) is read anew."""
    cache: dict = {}
    waiting = objects.pg("ns/w", phase="Pending", min_resources={"cpu": "2"}, priority_class="high",
                         conditions=[{"type": "Unschedulable", "status": "True", "reason": "r", "message": "m"}])
    other = objects.pg("ns/o")
    pcs = [{"metadata": {"name": "high"}, "value": 1000}]

    def build(podgroups, classes=pcs):
        st = objects.state(podgroups=podgroups, priority_classes=classes)
        st.request_cache = cache
        return snapshot.build(st)

    first = build([waiting, other])
    entries = cache[snapshot.SHARED_MEMO]["podgroups"]
    entry = entries[id(waiting)]
    job = first.jobs["ns/w"]
    job.phase = "Inqueue"                      # what a session does to its infos
    job.conditions.append({"type": "Scheduled"})
    job.allocated += 1
    second = build([other, waiting])
    assert cache[snapshot.SHARED_MEMO]["podgroups"][id(waiting)] is entry   # read once
    again = second.jobs["ns/w"]
    assert again is not job and list(second.jobs) == ["ns/o", "ns/w"]    # sorted by key, fresh infos
    assert again.phase == "Pending" and len(again.conditions) == 1 and not again.allocated.any()
    assert again.priority == 1000 and again.min_resources[second.dims.index["cpu"]] == 2000
    assert build([other, waiting], classes=[]).jobs["ns/w"].priority == 0   # classes are read each time

    newer = {**waiting, "status": {"phase": "Inqueue"}}   # a new version is a new object
    third = build([newer])
    assert third.jobs["ns/w"].phase == "Inqueue" and third.jobs["ns/w"].conditions == []
    assert set(cache[snapshot.SHARED_MEMO]["podgroups"]) == {id(newer)}   # gone PodGroups are dropped


def test_a_pods_own_resources_request_is_its_request_and_not_shared_with_a_pod_without():
    """Two pods whose containers ask the same but one of which requests 3 cpus itself (PodLevelResources):
    the request memo (by what the request depends on) must not give one's request to the other."""
    big = objects.pod("ns/big", "g", cpu="1")
    big["spec"]["resources"] = {"requests": {"cpu": "3"}}
    small = objects.pod("ns/small", "g", cpu="1")
    snap = snapshot.build(objects.state(podgroups=[objects.pg("ns/g")], pods=[small, big]))
    cpu = snap.dims.index["cpu"]
    tasks = snap.jobs["ns/g"].tasks
    assert (tasks["ns/small"].req[cpu], tasks["ns/big"].req[cpu]) == (1000, 3000)


def test_a_queues_resource_names_are_read_once_per_version_and_a_new_version_is_read_anew():
    """The session's dimensions include every resource a Queue's spec names. With a request_cache, a Queue
    version seen before is not read again; a new version (a new object) naming another resource is, and
    deleted Queues' entries are dropped."""
    cache: dict = {}

    def build(queues):
        st = objects.state(nodes=[objects.node("n1")], queues=queues)
        st.request_cache = cache
        return snapshot.build(st)

    q1 = objects.queue("default", capability={"cpu": "4"})
    q2 = objects.queue("q2", guarantee={"memory": "1Gi"})
    first = build([q1, q2])
    assert {"cpu", "memory"} <= set(first.dims.names) and "nvidia.com/gpu" not in first.dims.names
    names = cache[snapshot.SHARED_MEMO]["queue_names"]
    kept = names[id(q1)]
    assert build([q1, q2]).dims is first.dims and cache[snapshot.SHARED_MEMO]["queue_names"][id(q1)] is kept

    newer = {**q1, "spec": {**q1["spec"], "capability": {"cpu": "4", "nvidia.com/gpu": "2"}}}
    second = build([newer, q2])
    assert "nvidia.com/gpu" in second.dims.names
    assert second.queues["default"].capability[second.dims.index["nvidia.com/gpu"]] == 2000
    deserved = {**q2, "spec": {**q2["spec"], "deserved": {"example.com/foo": "1"}}}   # (capacity's)
    assert "example.com/foo" in build([newer, deserved]).dims.names
    assert set(cache[snapshot.SHARED_MEMO]["queue_names"]) == {id(newer), id(deserved)}   # gone versions dropped
