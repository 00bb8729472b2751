"""resource-strategy-fit: arguments as Volcano reads them, and the node scores of its TestScore, sra and
proportional tests (plugins/resource-strategy-fit), computed over node rows as a session does."""
import types

import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.plugins import resource_strategy_fit as rsf

DIMS = dims_mod.Dims(["nvidia.com/gpu"])      # cpu, memory, pods, nvidia.com/gpu


def plugin(args):
    built = conf.build("allocate", [[conf.plugin("resource-strategy-fit", args)]])
    return rsf.ResourceStrategyFit(built.tiers[0][0].args)


def vec(cpu=0.0, mem=0.0, gpu=0.0):
    return np.array([cpu, mem, 0.0, gpu])


def score(args, req, used, alloc, notes=None):
    p = plugin(args)
    p.dims = DIMS
    p.nodes = types.SimpleNamespace(allocatable=np.array([alloc]), used=np.array([used]))
    sra = p.arguments.sra
    p.sra_weight = sra.weight if sra.enable else 0
    p.sra_sum = sum(w for _, w in sra.resources)
    p.sra_vector = np.zeros(len(DIMS))
    for name, w in sra.resources:
        p.sra_vector[DIMS.index[name]] += w
    task = types.SimpleNamespace(req=req, pod={"metadata": {"annotations": notes or {}}})
    return float(p.node_order(task, np.array([0]))[0])


def strategy(weight, **resources):
    return {"resourceStrategyFitWeight": weight,
            "resources": {name: {"type": kind, "weight": w} for name, (kind, w) in resources.items()}}


L, M = rsf.LEAST, rsf.MOST
LEAST_11 = strategy(10, cpu=(L, 1), memory=(L, 1))
POD = {rsf.SCORING_TYPE: L}


@pytest.mark.parametrize("args, req, used, alloc, notes, want", [
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500), None, 400, id="test1"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(400, 400), None, 250, id="test2"),
    pytest.param(strategy(10, cpu=(M, 1), memory=(M, 1)), vec(100, 100), vec(200, 200), vec(500, 500), None, 600,
                 id="test3"),
    pytest.param(strategy(10, cpu=(M, 1), memory=(M, 1)), vec(100, 100), vec(200, 200), vec(400, 400), None, 750,
                 id="test4"),
    pytest.param(strategy(10, cpu=(L, 2), memory=(M, 1)), vec(100, 100), vec(200, 200), vec(500, 500), None,
                 466.66666667, id="test5"),
    pytest.param(strategy(10, cpu=(L, 1), memory=(M, 2)), vec(100, 100), vec(200, 200), vec(500, 500), None,
                 533.33333333, id="test6"),
    pytest.param(strategy(10, cpu=(L, 1), memory=(M, 2)), vec(0, 100), vec(200, 200), vec(500, 500), None, 600,
                 id="test7"),
    pytest.param(strategy(10, cpu=(L, 1), memory=(M, 2)), vec(100, 100), vec(200, 200), vec(0, 400), None, 500,
                 id="test8-cpu-allocatable-0"),
    pytest.param(strategy(10, memory=(M, 2)), vec(100, 100), vec(200, 200), vec(500, 500), None, 600, id="test9"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {**POD, rsf.SCORING_WEIGHT: '{"cpu": 2, "memory": 1}'}, 400, id="pod-level-least"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {rsf.SCORING_TYPE: M, rsf.SCORING_WEIGHT: '{"cpu": 1, "memory": 2}'}, 600, id="pod-level-most"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {**POD, rsf.SCORING_WEIGHT: "invalid-json"}, 0, id="pod-level-invalid-json"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500), {**POD, rsf.SCORING_WEIGHT: '{"cpu": 2}'},
                 400, id="pod-level-missing-resource-weight"),
    # Go's json.Unmarshal into map[ResourceName]int fails on a weight that is not an integer: the node scores 0;
    # a null leaves the weight 0 (the resource counts for nothing)
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {**POD, rsf.SCORING_WEIGHT: '{"cpu": 1.5, "memory": 1}'}, 0, id="pod-level-fractional-weight"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {**POD, rsf.SCORING_WEIGHT: '{"cpu": true, "memory": 1}'}, 0, id="pod-level-boolean-weight"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {**POD, rsf.SCORING_WEIGHT: '{"cpu": "2", "memory": 1}'}, 0, id="pod-level-quoted-weight"),
    pytest.param(LEAST_11, vec(100, 100), vec(200, 200), vec(500, 500),
                 {**POD, rsf.SCORING_WEIGHT: '{"cpu": null, "memory": 1}'}, 400, id="pod-level-null-weight-is-0"),
    pytest.param(LEAST_11, vec(0, 0), vec(200, 200), vec(500, 500), None, 0, id="zero-resources-requested"),
    pytest.param(LEAST_11, vec(100, 100), vec(500, 500), vec(500, 500), None, 0, id="node-fully-allocated"),
    pytest.param(strategy(10, cpu=(L, 3), memory=(M, 1)), vec(100, 100), vec(200, 200), vec(500, 500), None, 450,
                 id="mixed-scoring-strategies"),
    pytest.param(strategy(20, cpu=(L, 5), memory=(L, 5)), vec(100, 100), vec(200, 200), vec(500, 500), None, 800,
                 id="high-weight-scenario"),
    pytest.param({}, vec(100, 100), vec(200, 200), vec(500, 500), None, 400, id="defaults-cpu-memory-least-10"),
    pytest.param(strategy(1, **{"nvidia.com/*": (M, 1)}), vec(0, 0, 1000), vec(0, 0, 1000), vec(0, 0, 4000), None,
                 50, id="a-prefix-pattern"),
])
def test_score(args, req, used, alloc, notes, want):
    assert score(args, req, used, alloc, notes) == pytest.approx(want)


SRA = {"resourceStrategyFitWeight": 0,
       "sra": {"enable": True, "resources": "nvidia.com/gpu", "weight": 10, "resourceWeight": {"nvidia.com/gpu": 1}}}


@pytest.mark.parametrize("req, alloc, want", [
    pytest.param(vec(1000, 1e9), vec(4000, 8e9), 1000, id="a-cpu-pod-prefers-a-node-without-gpus"),
    pytest.param(vec(1000, 1e9), vec(4000, 8e9, 4000), 0, id="a-gpu-node-scores-0-for-it"),
    pytest.param(vec(1000, 1e9, 1000), vec(4000, 8e9), 0, id="a-node-lacking-what-the-pod-asks"),
    pytest.param(vec(1000, 1e9, 1000), vec(4000, 8e9, 4000), 0, id="a-gpu-pod-on-a-gpu-node"),
])
def test_sra(req, alloc, want):
    assert score(SRA, req, vec(), alloc) == pytest.approx(want)


@pytest.mark.parametrize("args, message", [
    pytest.param({"resources": "cpu"}, "expected a mapping"),
    pytest.param({"resources": {"cpu": {"weight": "2"}}}, "expected an integer"),
    pytest.param({"sra": {"enable": "yes"}}, "expected true or false"),
    pytest.param({"proportional": {"enable": True, "resources": "nvidia.com/gpu",
                                   "resourceProportion": {"nvidia.com/gpu.cpu": "four"}}}, "expected a number"),
    pytest.param({"resourceStrategyFitWeight": "10"}, "expected an integer"),
])
def test_bad_arguments_fail_at_load(args, message):
    with pytest.raises(ValueError) as e:
        conf.build("allocate", [[conf.plugin("resource-strategy-fit", args)]])
    assert message in str(e.value)


def test_arguments_as_volcano_reads_them():
    args = plugin({"resources": {"nvidia.com/*": {"Type": "MostAllocated", "Weight": 0}, "*": {"type": L},
                                 "a*b*": {"type": L}, "cpu": {"type": "Other", "weight": 3}},
                   "resourceStrategyFitWeight": -1}).arguments
    assert args.strategy() == {"nvidia.com/*": (M, 1), "cpu": (L, 3)}   # bad patterns dropped, type/weight fixed
    assert plugin({"resourceStrategyFitWeight": -1}).weight == rsf.DEFAULT_WEIGHT
    assert rsf.config_for("nvidia.com/gpu", {"nvidia.*": (L, 1), "nvidia.com/*": (M, 2)}) == (M, 2)
    assert rsf.config_for("nvidia.com/gpu", {"nvidia.com/gpu": (L, 5), "nvidia.com/*": (M, 2)}) == (L, 5)


def test_proportional_predicate_keeps_a_gpu_nodes_cpu_for_its_gpus():
    from vclite.scheduler.framework import session, snapshot
    from tests.scenarios.test_scheduler_scenarios import NOW, node, pg, pod, queue
    gpu_node = node("g1", 8, "16G")
    gpu_node["status"]["allocatable"]["nvidia.com/gpu"] = "2"
    args = {"proportional": {"enable": True, "resources": "nvidia.com/gpu",
                             "resourceProportion": {"nvidia.com/gpu.cpu": 3, "nvidia.com/gpu.memory": 4}}}
    tiers = [[conf.plugin("resource-strategy-fit", args, enablePredicate=True)]]

    def feasible(cpu, gpu=None, nodes=(gpu_node, node("c1", 8, "16G"))):
        p = pod("c1/p", "pg", cpu=cpu, mem="1G")
        if gpu:
            p["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = gpu
        state = snapshot.ClusterState(nodes=list(nodes), queues=[queue("q1")],
                                      podgroups=[pg("c1/pg", "q1", 1)], pods=[p])
        ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
        task = next(t for j in ssn.jobs.values() for t in j.tasks.values())
        ok, errors = ssn.feasible_nodes(task, copy=True)
        return sorted(ssn.nodes.names[i] for i in np.flatnonzero(ok)), errors
    assert feasible("2")[0] == ["c1", "g1"]            # 8 − 2 cpus ≥ 2 gpus × 3
    assert feasible("3")[0] == ["c1"]                  # 8 − 3 < 6: g1's cpus are kept for its gpus
    assert feasible("3", gpu="1")[0] == ["g1"]         # a pod asking for a gpu is not held back
    ok, errors = feasible("3", nodes=(gpu_node,))
    assert ok == [] and errors.histogram == {"proportional of resource nvidia.com/gpu check failed": 1}
