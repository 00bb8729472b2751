"""overcommit: factors as Volcano reads them, and who is admitted: idle = total × factor − used,
inqueue from Inqueue jobs and the unplaced part of Running ones."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.plugins import overcommit

from .. import objects

DIMS = dims_mod.Dims(["nvidia.com/gpu"])


def _args(arguments):
    return conf.build("allocate", [[conf.plugin("overcommit", arguments)]]).tiers[0][0].args


@pytest.mark.parametrize("arguments, want", [
    pytest.param({}, [1.2, 1.2, 1.2, 1.2], id="default 1.2 everywhere"),
    pytest.param({"overcommit-factor": 2}, [2, 2, 2, 2], id="one factor"),
    pytest.param({"overcommit-factor.cpu": 1.0, "overcommit-factor.nvidia.com/gpu": 3}, [1.0, 1.2, 1.2, 3.0],
                 id="per resource"),
    pytest.param({"overcommit-factor": 1}, [1, 1, 1, 1], id="1: no overcommit"),
])
def test_factors(arguments, want):
    assert list(_args(arguments).factors(DIMS)) == want


def test_bad_factor_fails_at_load():
    with pytest.raises(ValueError, match="overcommit-factor.cpu"):
        _args({"overcommit-factor.cpu": "lots"})


BELOW_ONE = ("must be at least 1, got {} (Volcano warns that overcommit-factor cannot be less than 1 and uses 1.2 "
             "instead); 1 means no overcommit")


@pytest.mark.parametrize("arguments, key, value", [
    pytest.param({"overcommit-factor": 0.9}, "overcommit-factor", "0.9", id="factor"),
    pytest.param({"overcommit-factor": 0}, "overcommit-factor", "0", id="zero"),
    pytest.param({"overcommit-factor.memory": 0.5}, "overcommit-factor.memory", "0.5", id="per resource"),
])
def test_a_factor_below_one_is_refused_not_silently_replaced(arguments, key, value):
    """Volcano logs a warning and uses 1.2; vclite says so where the value was written (file:line at load)."""
    with pytest.raises(ValueError) as info:
        _args(arguments)
    assert f"plugin \"overcommit\": argument '{key}': " + BELOW_ONE.format(value) in str(info.value)


def _session(podgroups, pods, factor=None):
    args = {} if factor is None else {"overcommit-factor": factor}
    c = conf.build("enqueue", [[conf.plugin("overcommit", args, enableJobEnqueued=True)]])
    st = objects.state(nodes=[objects.node("n1", cpu="4", mem="8Gi"), objects.node("n2", cpu="4", mem="8Gi")],
                       podgroups=podgroups, pods=pods)
    ssn = session.open_session(st, c, objects.NOW)
    return ssn, ssn.plugins[0]


def test_idle_and_inqueue_at_session_open():
    ssn, plugin = _session(
        [objects.pg("ns/in", min_resources={"cpu": "2"}),
         objects.pg("ns/run", phase="Running", min_member=1, min_resources={"cpu": "3"}),
         objects.pg("ns/run-short", phase="Running", min_member=2, min_resources={"cpu": "5"}),
         objects.pg("ns/pend", phase="Pending", min_resources={"cpu": "7"})],
        [objects.pod("ns/r", "run", cpu="1", node="n1", phase="Running"),
         objects.pod("ns/s", "run-short", cpu="1", node="n2", phase="Running")])
    cpu = ssn.dims.index["cpu"]
    assert plugin.idle[cpu] == pytest.approx(8000 * 1.2 - 2000)
    # Inqueue, nothing placed: 2; Running with minMember placed: 3 − 1 allocated; run-short: not counted
    assert plugin.inqueue[cpu] == 2000 + 2000


@pytest.mark.parametrize("phases, reserved", [
    pytest.param(["Running", "Running"], 2000, id="both placed: minResources fully allocated"),
    pytest.param(["Running", "Succeeded"], 3000, id="one placed (= minMember): the rest is reserved"),
    # Volcano's CalculateAllocatedTaskNum counts placed tasks only: a PodGroup whose tasks finished
    # while it is still Running (until the session writes Completed) reserves nothing
    pytest.param(["Succeeded", "Succeeded"], 0, id="all finished: nothing"),
    pytest.param(["Failed", "Succeeded"], 0, id="all finished, one failed: nothing"),
])
def test_running_podgroup_reserves_by_placed_tasks(phases, reserved):
    ssn, plugin = _session(
        [objects.pg("ns/run", phase="Running", min_member=1, min_resources={"cpu": "4"})],
        [objects.pod(f"ns/p{i}", "run", cpu="1", node="n1", phase=ph) for i, ph in enumerate(phases)])
    assert plugin.inqueue[ssn.dims.index["cpu"]] == reserved


@pytest.mark.parametrize("min_resources, want", [
    pytest.param(None, hooks.Vote.PERMIT, id="no minResources: permit"),
    pytest.param({"cpu": "5"}, hooks.Vote.PERMIT, id="2 inqueue + 5 ≤ 9.6 − 1"),
    pytest.param({"cpu": "7"}, hooks.Vote.REJECT, id="2 + 7 > 8.6"),
    pytest.param({"memory": "1Gi", "pods": "100"}, hooks.Vote.PERMIT, id="pods are not compared"),
    pytest.param({"nvidia.com/gpu": "1"}, hooks.Vote.REJECT, id="a resource no node has"),
])
def test_job_enqueueable(min_resources, want):
    ssn, plugin = _session([objects.pg("ns/in", min_resources={"cpu": "2"}),
                            objects.pg("ns/new", phase="Pending", min_resources=min_resources)],
                           [objects.pod("ns/busy", None, cpu="1", node="n1", phase="Running")])
    assert plugin.job_enqueueable(ssn.jobs["ns/new"]) == want
    if want == hooks.Vote.REJECT:
        assert ssn.enqueue_notes["ns/new"][1].startswith(overcommit.OVERUSED)


def test_enqueued_jobs_count_as_inqueue():
    ssn, plugin = _session([objects.pg(f"ns/j{i}", phase="Pending", min_resources={"cpu": "4"}) for i in range(3)], [])
    jobs = [ssn.jobs[f"ns/j{i}"] for i in range(3)]
    assert plugin.job_enqueueable(jobs[0]) == hooks.Vote.PERMIT
    plugin.job_enqueued(jobs[0])
    plugin.job_enqueued(jobs[1])
    assert plugin.job_enqueueable(jobs[2]) == hooks.Vote.REJECT
    note = ssn.enqueue_notes["ns/j2"][1]
    assert note == ("resource in cluster is overused: overused cpu; "
                    "job needs cpu 4 but the cluster can admit at most cpu 1600m "
                    "more (overcommit-factor 1.2)")
    assert np.isfinite(plugin.idle).all()


def test_inqueue_job_with_bound_pods_is_not_counted_twice():
    """pgA (Inqueue, minResources 3 cpu) had its pods bound last session: they are in `used`, so
    only the unplaced rest of minResources is inqueue, and a 1-cpu job still fits 4 cpu × 1.2."""
    c = conf.build("enqueue", [[conf.plugin("overcommit", enableJobEnqueued=True)]])
    st = objects.state(nodes=[objects.node("n1", cpu="4", mem="8Gi")],
                       podgroups=[objects.pg("ns/a", min_member=3, min_resources={"cpu": "3"}),
                                  objects.pg("ns/b", phase="Pending", min_resources={"cpu": "1"})],
                       pods=[objects.pod(f"ns/a-{i}", "a", cpu="1", node="n1") for i in range(3)])
    ssn = session.open_session(st, c, objects.NOW)
    plugin = ssn.plugins[0]
    assert plugin.inqueue[ssn.dims.index["cpu"]] == 0
    assert plugin.job_enqueueable(ssn.jobs["ns/b"]) == hooks.Vote.PERMIT


def _gated(pod: dict, *gates: str) -> dict:
    pod["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    return pod


@pytest.mark.parametrize("gates, inqueue, admitted", [
    pytest.param([(), ()], 4000, False, id="nothing gated: all of minResources is held"),
    pytest.param([("example.com/g",), ()], 3000, True, id="one gated pod: its cpu is not held"),
    pytest.param([("example.com/g",), ("example.com/g",)], 2000, True, id="both gated: only the rest of minResources"),
    pytest.param([("example.com/g",), ("example.com/g",), ("example.com/g",), ("example.com/g",)], 0, True,
                 id="more gated than minResources: floored at 0"),
    pytest.param([("scheduling.volcano.sh/queue-allocation-gate",), ()], 4000, False,
                 id="Volcano's queue-allocation gate alone still holds"),
    pytest.param([("scheduling.volcano.sh/queue-allocation-gate", "example.com/g"), ()], 3000, True,
                 id="queue-allocation gate and another: not held"),
])
def test_scheduling_gated_pods_hold_no_inqueue_room(gates, inqueue, admitted):
    """Volcano's DeductSchGatedResources: an Inqueue job's gated pods are left out of `inqueue`, at session open
    and when it is enqueued. 8 cpu × 1.2 = 9.6 idle; the 6-cpu job fits beside no more than 3.6 held."""
    ssn, plugin = _session(
        [objects.pg("ns/in", min_member=4, min_resources={"cpu": "4"}),
         objects.pg("ns/new", phase="Pending", min_resources={"cpu": "6"})],
        [_gated(objects.pod(f"ns/in-{i}", "in", cpu="1"), *g) for i, g in enumerate(gates)])
    cpu = ssn.dims.index["cpu"]
    assert plugin.inqueue[cpu] == inqueue
    assert (plugin.job_enqueueable(ssn.jobs["ns/new"]) == hooks.Vote.PERMIT) == admitted
    plugin.inqueue[:] = 0
    plugin.job_enqueued(ssn.jobs["ns/in"])   # (the same deduction when it is admitted in this session)
    assert plugin.inqueue[cpu] == inqueue


# overcommit_test.go TestOvercommitPlugin: nodes 2 cpu/4Gi and 4 cpu/16Gi, one Inqueue PodGroup (minMember 2,
# queue c1), overcommit{jobEnqueued}; each job is marked enqueued, then asked whether it is enqueueable.
@pytest.mark.parametrize("factor, min_resources, queue_capability, want", [
    pytest.param(1.2, {"cpu": "2000m", "memory": "2G"}, None, hooks.Vote.PERMIT,
                 id="overCommitFactor is more than 0"),
    # ("overCommitFactor is less than 0": 0.8, which Volcano replaces by 1.2 — vclite refuses such a configuration,
    #  test_a_factor_below_one_is_refused_not_silently_replaced)
    pytest.param(1.2, {"cpu": "20000m", "memory": "20G"}, None, hooks.Vote.REJECT,
                 id="when the required resources of pg are too large"),
    pytest.param(1.2, None, {"cpu": "200m", "memory": "0.5G"}, hooks.Vote.PERMIT,
                 id="when pg does not fill MinResources"),
])
def test_volcano_overcommit_plugin(factor, min_resources, queue_capability, want):
    c = conf.build("enqueue", [[conf.plugin("overcommit", {"overcommit-factor": factor}, enableJobEnqueued=True)]])
    st = objects.state(nodes=[objects.node("n1", cpu="2", mem="4Gi"), objects.node("n2", cpu="4", mem="16Gi")],
                       queues=[objects.queue("c1", capability=queue_capability)],
                       podgroups=[objects.pg("test-namespace/pg1", "c1", min_member=2, min_resources=min_resources)])
    ssn = session.open_session(st, c, objects.NOW)
    plugin = ssn.plugins[0]
    job = ssn.jobs["test-namespace/pg1"]
    plugin.job_enqueued(job)
    assert plugin.job_enqueueable(job) == want
