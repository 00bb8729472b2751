"""resource-strategy-fit's upstream rows that test_resource_strategy_fit.py has no twin for
(plugins/resource-strategy-fit/resource_strategy_fit_test.go): Test_calculateWeight, Test_mostRequestedScore,
Test_leastRequestedScore, TestResourceStrategyFitPlugin_OnSessionOpen, TestResourceStrategyFitPlugin,
TestAllocate and Test_findResourceConfigWithPrefix. Row names are upstream's."""
import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import resource_strategy_fit as rsf

from tests.scenarios.test_scheduler_scenarios import NOW, P, node, pg, pod, queue
from .test_resource_strategy_fit import L, M, plugin, score, strategy, vec


# ---- Test_calculateWeight -----------------------------------------------------------------------------------
@pytest.mark.parametrize("args, weight, want", [
    pytest.param({"resourceStrategyFitWeight": 10, "resources": {"cpu": {"type": M, "weight": 1},
                                                                 "memory": {"type": L, "weight": 2}}},
                 10, {"cpu": (M, 1), "memory": (L, 2)}, id="test1"),
    pytest.param({"resources": {"cpu": {"type": M, "weight": 1}, "memory": {"type": L, "weight": 2}}},
                 10, {"cpu": (M, 1), "memory": (L, 2)}, id="test2-default-weight"),
    pytest.param({"resourceStrategyFitWeight": 10}, 10, {"cpu": (L, 1), "memory": (L, 1)},
                 id="test3-default-resources"),
    # test4..7 also give "ResourceStrategyFitPlusWeight", a name Volcano does not read (see the refusal below)
    pytest.param({"resources": {"cpu": {"type": L, "weight": 1}, "*": {"type": M, "weight": 2}}},
                 10, {"cpu": (L, 1)}, id="test4-a-bare-star-is-dropped"),
    pytest.param({"resources": {"nvidia.com/gpu/*": {"type": M, "weight": 3},
                                "cloudml.gpu**": {"type": L, "weight": 2}}},
                 10, {"nvidia.com/gpu/*": (M, 3)}, id="test5-two-stars-dropped"),
    pytest.param({"resources": {"memory": {"type": L, "weight": 1}, "cloudml.*.gpu": {"type": M, "weight": 2},
                                "*.com/gpu": {"type": M, "weight": 3}}},
                 10, {"memory": (L, 1)}, id="test6-a-star-not-last-dropped"),
    pytest.param({"resources": {"nvidia.com/gpu/*": {"type": M, "weight": 3},
                                "example.com/foo/*": {"type": L, "weight": 2},
                                "*test*resource*": {"type": M, "weight": 4}, "*": {"type": L, "weight": 1}}},
                 10, {"nvidia.com/gpu/*": (M, 3), "example.com/foo/*": (L, 2)}, id="test7-valid-prefixes-kept"),
])
def test_volcano_calculate_weight(args, weight, want):
    p = plugin(args)
    assert (p.weight, p.strategy) == (weight, want)


def test_volcano_calculate_weight_an_argument_volcano_does_not_read_is_refused():
    """test4..7's `ResourceStrategyFitPlusWeight`: Volcano ignores a name it does not read; vclite refuses the
    configuration, naming it (docs/differences.md)."""
    with pytest.raises(conf.ConfError, match="unknown argument \"ResourceStrategyFitPlusWeight\""):
        plugin({"ResourceStrategyFitPlusWeight": 10})


# ---- Test_mostRequestedScore, Test_leastRequestedScore --------------------------------------------------------
@pytest.mark.parametrize("kind", [M, L])
@pytest.mark.parametrize("req, used, cap, weight", [
    pytest.param(0, 0, 0, 0, id="test1-nothing-scores-0"),
    pytest.param(1, 2, 2, 1, id="test2-over-capacity-scores-the-node-0"),
])
def test_volcano_requested_scores(kind, req, used, cap, weight):
    """The per-resource score (cpu here, in cores) through a node's score: nothing requested, or a request
    over what the node has left (upstream's error), scores the node 0."""
    notes = {rsf.SCORING_TYPE: kind, rsf.SCORING_WEIGHT: f'{{"cpu": {weight}}}'}   # a weight of 0 is reachable
    assert score(strategy(10, cpu=(kind, 1)), vec(req * 1000), vec(used * 1000), vec(cap * 1000), notes) == 0


# ---- TestResourceStrategyFitPlugin_OnSessionOpen ----------------------------------------------------------------
def test_volcano_on_session_open_with_an_empty_session():
    state = snapshot.ClusterState()
    ssn = session.open_session(state, conf.build("allocate", [[P("resource-strategy-fit", enableNodeOrder=True)]]),
                               NOW)
    assert ssn.jobs == {} and len(ssn.nodes) == 0


# ---- TestResourceStrategyFitPlugin ------------------------------------------------------------------------------
GPU, FOO = "nvidia.com/gpu", "example.com/foo"


def scalar_pod(name, mem, **scalars):
    p = pod(f"c1/{name}", "pg1", cpu="1", mem=mem)
    p["spec"]["containers"][0]["resources"]["requests"].update({k: str(v) for k, v in scalars.items()})
    return p


def scalar_node(name, **scalars):
    n = node(name, 4, "4Gi")
    n["status"]["allocatable"].update({k: str(v) for k, v in scalars.items()})
    return n


def node_scores(arguments, pods, nodes_):
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("c1")], podgroups=[pg("c1/pg1", "c1", 0)], pods=pods)
    tiers = [[P("resource-strategy-fit", arguments, enableNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    rows = np.arange(len(ssn.nodes))
    out = {}
    for task in ssn.jobs["c1/pg1"].tasks.values():
        got = np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=float), (len(rows),))
        out[task.key] = {ssn.nodes.names[r]: float(got[r]) for r in rows}
    return out


def gpu_foo(foo_weight):
    return {"resourceStrategyFitWeight": 10, "resources": {GPU: {"type": M, "weight": 1},
                                                           FOO: {"type": L, "weight": foo_weight}}}


SINGLE_JOB = ({"c1/p1": {"n1": 0, "n2": 0, "n3": 800, "n4": 600}, "c1/p2": {"n1": 0, "n2": 0, "n3": 700, "n4": 400},
               "c1/p3": {"n1": 200, "n2": 400, "n3": 0, "n4": 0}, "c1/p4": {"n1": 300, "n2": 600, "n3": 0, "n4": 0}})


@pytest.mark.parametrize("arguments, pods, nodes_, want", [
    pytest.param(gpu_foo(1), [scalar_pod("p1", "1Gi", **{FOO: 2}), scalar_pod("p2", "1Gi", **{FOO: 3}),
                              scalar_pod("p3", "10Gi", **{GPU: 2}), scalar_pod("p4", "1Gi", **{GPU: 3})],
                 [scalar_node("n1", **{GPU: 10}), scalar_node("n2", **{GPU: 5}), scalar_node("n3", **{FOO: 10}),
                  scalar_node("n4", **{FOO: 5})], SINGLE_JOB, id="single-job"),
    pytest.param(gpu_foo(2), [scalar_pod("p5", "1Gi", **{GPU: 4, FOO: 4})],
                 [scalar_node("n5", **{GPU: 10, FOO: 5}), scalar_node("n6", **{FOO: 10})],
                 {"c1/p5": {"n5": 266.66666666, "n6": 399.99999999}}, id="single-job-two-resources"),
])
def test_volcano_resource_strategy_fit_plugin(arguments, pods, nodes_, want):
    got = node_scores(arguments, pods, nodes_)
    assert got == {k: pytest.approx(v, abs=0.1) for k, v in want.items()}


# ---- TestAllocate -------------------------------------------------------------------------------------------------
def typed_pod(name, kind, node_name=None, gpu=None):
    p = pod(f"c1/{name}", "pg1", cpu="1", mem="1G", node=node_name, phase="Running" if node_name else "Pending",
            selector={"nodeResourceType": kind})
    p["metadata"]["labels"] = {"volcano.sh/task-spec": "worker"}
    if gpu:
        p["spec"]["containers"][0]["resources"]["requests"][GPU] = str(gpu)
    return p


def typed_node(name, kind, gpu=None):
    n = node(name, 5, "10Gi", labels={"nodeResourceType": kind})
    if gpu:
        n["status"]["allocatable"][GPU] = str(gpu)
    return n


ALLOCATE_TIERS = [[P("resource-strategy-fit", {"resourceStrategyFitWeight": 10,
                                               "resources": {GPU: {"type": M, "weight": 2},
                                                             "cpu": {"type": L, "weight": 1}}},
                     enableNodeOrder=True),
                   P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True, enableJobStarving=True),
                   P("drf", enablePreemptable=True, enableJobOrder=True),
                   P("proportion", enableQueueOrder=True, enableReclaimable=True, enabledAllocatable=True),
                   P("predicates", enablePredicate=True), P("nodeorder", enableNodeOrder=True)]]


@pytest.mark.parametrize("pods, want", [
    pytest.param([typed_pod("p1", "gpu", gpu=2), typed_pod("p2", "gpu", "n2", gpu=2)], {"c1/p1": "n2"},
                 id="gpu-most-allocated"),
    pytest.param([typed_pod("p3", "cpu"), typed_pod("p4", "cpu", "n3")], {"c1/p3": "n4"}, id="cpu-least-allocated"),
])
def test_volcano_allocate(pods, want):
    nodes_ = [typed_node("n1", "gpu", 10), typed_node("n2", "gpu", 10), typed_node("n3", "cpu"),
              typed_node("n4", "cpu")]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("c1")], podgroups=[pg("c1/pg1", "c1", 1)], pods=pods)
    assert session.run_session(state, conf.build("allocate", ALLOCATE_TIERS), NOW).binds == want


# ---- Test_findResourceConfigWithPrefix -------------------------------------------------------------------------
@pytest.mark.parametrize("name, resources, want", [
    pytest.param("nvidia.com/gpu", {"nvidia.com/gpu": (M, 3), "nvidia.com/*": (L, 1)}, (M, 3),
                 id="exact_match_priority"),
    pytest.param("nvidia.com/gpu/v100", {"nvidia.com/gpu/*": (M, 2), "nvidia.com/*": (L, 1)}, (M, 2),
                 id="longest_prefix_match"),
    pytest.param("example.com/foo", {"nvidia.com/gpu/*": (M, 2)}, None, id="no_match_found"),
    pytest.param("any.resource", {}, None, id="empty_resources_map"),
    pytest.param("cloudml.gpu/tensorflow/v2", {"cloudml.gpu/tensorflow/*": (M, 3), "cloudml.gpu/*": (L, 2),
                                               "cloudml/*": (M, 1)}, (M, 3),
                 id="multiple_valid_wildcards_longest_match"),
])
def test_volcano_find_resource_config_with_prefix(name, resources, want):
    assert rsf.config_for(name, resources) == want
