"""proportion: water-filling worked examples, shares, and the hooks' answers in a session.

Vectors are (cpu millicores, memory bytes, pods)."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks
from vclite.scheduler.plugins import proportion

from .. import objects

DIMS = dims_mod.Dims()
INF = np.inf
G = 10**9


def v(cpu=0.0, mem=0.0, pods=0.0):
    return np.array([cpu, mem, pods], dtype=np.float64)


def attr(name, weight=1, request=v(), cap=v(INF, INF, INF), guarantee=v()):
    return proportion.QueueAttr(name, weight, request, v(), v(), v(), guarantee, cap, v())


WATER_FILLING = [
    pytest.param(v(10000), [attr("a", request=v(2000)), attr("b", request=v(20000))],
                 {"a": v(2000), "b": v(8000)},
                 id="equal weights: a is met at its request, b gets the rest in round 2"),
    pytest.param(v(10000), [attr("a", 3, request=v(20000)), attr("b", 1, request=v(20000))],
                 {"a": v(7500), "b": v(2500)}, id="weights 3:1 split everything in one round"),
    pytest.param(v(10000), [attr("a", request=v(10000), cap=v(3000, INF, INF)), attr("b", request=v(10000))],
                 {"a": v(3000), "b": v(7000)},
                 id="capped queue stops at realCapability; the rest flows to b over rounds 2 and 3"),
    pytest.param(v(10000), [attr("a", request=v(1000), guarantee=v(4000)), attr("b", request=v(20000))],
                 {"a": v(4000), "b": v(6000)}, id="guarantee raises deserved above request"),
    pytest.param(v(5000, 5 * G, 10), [attr("q-1", request=v(3000, 3 * G, 2)), attr("q-2", request=v(3000, 2 * G, 1))],
                 {"q-1": v(2500, 3 * G, 2), "q-2": v(2500, 2 * G, 1)},
                 id="ALLOC-07: memory left over after round 1 goes to q-1 in rounds 2-3"),
    pytest.param(v(4000), [attr("a", request=v(0)), attr("b", request=v(1000))],
                 {"a": v(0), "b": v(1000)}, id="a queue requesting nothing deserves nothing"),
    pytest.param(v(0), [attr("a", request=v(1000))], {"a": v(0)}, id="empty cluster: nothing to share"),
]


@pytest.mark.parametrize("total, attrs, want", WATER_FILLING)
def test_water_filling(total, attrs, want):
    proportion.water_fill(total, attrs, DIMS)
    got = {a.name: a.deserved for a in attrs}
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=0, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("allocated, deserved, want", [
    pytest.param(v(1000, G, 1), v(2500, 3 * G, 2), 0.5, id="max over dimensions (pods counts)"),
    pytest.param(v(1000), v(), 0.0, id="nothing deserved -> 0"),
    pytest.param(v(3000), v(2500), 1.2, id="over its share -> above 1"),
])
def test_share(allocated, deserved, want):
    assert proportion.share(allocated, deserved) == pytest.approx(want)


def test_real_capability_subtracts_other_guarantees_and_caps():
    total, total_g = v(10000, 10 * G), v(4000, 0)
    rc = proportion.real_capability(total, total_g, v(1000), v(INF, 3 * G))
    np.testing.assert_array_equal(rc, v(7000, 3 * G, 0))


def _plugin(ssn) -> proportion.Proportion:
    return next(p for p in ssn.plugins if isinstance(p, proportion.Proportion))


@pytest.mark.parametrize("phases, reserved", [
    pytest.param(["Running"], 3000, id="placed task reaches minMember: minResources − allocated"),
    pytest.param(["Succeeded"], 0, id="finished task: nothing (Volcano's CalculateAllocatedTaskNum)"),
    pytest.param(["Failed"], 0, id="failed task: nothing"),
])
def test_running_podgroup_reserves_by_placed_tasks(phases, reserved):
    st = objects.state(
        nodes=[objects.node("n1", cpu="8", mem="8Gi", pods="10")], queues=[objects.queue("a")],
        podgroups=[objects.pg("ns/run", "a", 1, "Running", min_resources={"cpu": "4"})],
        pods=[objects.pod(f"ns/run-{i}", "run", "1", "1Gi", node="n1", phase=ph) for i, ph in enumerate(phases)])
    p = _plugin(objects.open_session(st, "enqueue"))
    assert p.attrs["a"].inqueue[0] == reserved


@pytest.mark.parametrize("gates, reserved", [
    pytest.param([(), ()], 4000, id="nothing gated"),
    pytest.param([("example.com/g",), ()], 3000, id="a gated pod's request is not reserved"),
    pytest.param([("example.com/g",)] * 5, 0, id="gated beyond minResources: floored at 0"),
    pytest.param([("scheduling.volcano.sh/queue-allocation-gate",), ()], 4000,
                 id="Volcano's own queue-allocation gate alone: reserved"),
])
def test_inqueue_leaves_out_scheduling_gated_pods(gates, reserved):
    """Volcano's DeductSchGatedResources, at session open and on JobEnqueued."""
    pods = [objects.pod(f"ns/in-{i}", "in", "1", "1Gi") for i in range(len(gates))]
    for pod, g in zip(pods, gates):
        pod["spec"]["schedulingGates"] = [{"name": name} for name in g]
    st = objects.state(
        nodes=[objects.node("n1", cpu="8", mem="8Gi", pods="10")], queues=[objects.queue("a")],
        podgroups=[objects.pg("ns/in", "a", 1, "Inqueue", min_resources={"cpu": "4"})], pods=pods)
    p = _plugin(objects.open_session(st, "enqueue"))
    assert p.attrs["a"].inqueue[0] == reserved
    p.attrs["a"].inqueue[:] = 0
    p.job_enqueued(p.ssn.jobs["ns/in"])
    assert p.attrs["a"].inqueue[0] == reserved


def test_session_accounting_and_hooks():
    st = objects.state(
        nodes=[objects.node("n1", cpu="8", mem="8Gi", pods="10")],
        queues=[objects.queue("a"), objects.queue("b", priority=5), objects.queue("closed", state="Closed")],
        podgroups=[objects.pg("ns/run", "a", 1, "Running", min_resources={"cpu": "1"}),
                   objects.pg("ns/wait", "a", 1, "Inqueue", min_resources={"cpu": "2"}),
                   objects.pg("ns/b", "b", 1, "Inqueue"),
                   objects.pg("ns/c", "closed", 1, "Pending")],
        pods=[objects.pod("ns/run-0", "run", "2", "1Gi", node="n1", phase="Running"),
              objects.pod("ns/wait-0", "wait", "2", "1Gi"), objects.pod("ns/b-0", "b", "1", "1Gi"),
              objects.pod("ns/c-0", "c", "1", "1Gi")])
    ssn = objects.open_session(st, "allocate")
    p = _plugin(ssn)
    a = p.attrs["a"]
    np.testing.assert_array_equal(a.allocated, v(2000, 2**30, 1))
    np.testing.assert_array_equal(a.request, v(4000, 2 * 2**30, 2))
    np.testing.assert_array_equal(a.inqueue, v(2000, 0, 0))      # Inqueue job: minResources − allocated
    np.testing.assert_array_equal(a.elastic, v(1000, 2**30, 1))  # running job above its minResources
    qa, qb = ssn.queues["a"], ssn.queues["b"]
    assert ssn.queue_less(qb, qa)                                # higher spec.priority first
    assert not ssn.overused(qa)
    task = ssn.jobs["ns/wait"].tasks["ns/wait-0"]
    assert ssn.allocatable(qa, task)
    ssn.hooks.call(hooks.Point.ALLOCATE_EVENT, task)             # allocate events update the share
    np.testing.assert_array_equal(a.allocated, v(4000, 2 * 2**30, 2))
    assert ssn.overused(qa)
    closed_task = ssn.jobs["ns/c"].tasks["ns/c-0"]
    assert not ssn.allocatable(ssn.queues["closed"], closed_task)
    assert ssn.task_notes["ns/c-0"] == 'queue "closed" is Closed'


@pytest.mark.parametrize("capability, min_resources, allowed, message", [
    pytest.param({"cpu": "4"}, {"cpu": "3"}, True, None, id="fits the capability"),
    pytest.param({"cpu": "4"}, {"cpu": "8"}, False,
                 'queue resource quota insufficient: insufficient cpu; job needs cpu 8 but queue "q" can get at most 3',
                 id="one dimension short (1 cpu already allocated)"),
    pytest.param({"cpu": "4", "memory": "1Gi"}, {"cpu": "8", "memory": "2Gi"}, False,
                 'queue resource quota insufficient: insufficient cpu, insufficient memory; '
                 'job needs cpu 8, memory 2Gi but queue "q" can get at most '
                 "cpu 3, memory 0",
                 id="two dimensions short"),
    pytest.param(None, None, True, None, id="no minResources: always admitted"),
])
def test_job_enqueueable(capability, min_resources, allowed, message):
    st = objects.state(
        nodes=[objects.node("n1", cpu="16", mem="64Gi")], queues=[objects.queue("q", capability=capability)],
        podgroups=[objects.pg("ns/run", "q", 1, "Running", min_resources={"cpu": "1", "memory": "1Gi"}),
                   objects.pg("ns/new", "q", 1, "Pending",
                                                                        min_resources=min_resources)],
        pods=[objects.pod("ns/run-0", "run", "1", "1Gi", node="n1", phase="Running")])
    ssn = objects.open_session(st)
    job = ssn.jobs["ns/new"]
    assert ssn.job_enqueueable(job) is allowed
    assert ssn.enqueue_notes.get(job.uid, (None, None))[1] == message
