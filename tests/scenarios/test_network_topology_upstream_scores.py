"""network-topology-aware's scores, row by row as Volcano's plugin unit tests give them
(plugins/network-topology-aware/network_topology_aware_test.go): TestNetworkTopologyAwareNodeScore_Hard and
_Soft (BatchNodeOrder for a pod of a job with networkTopology, every row run in both modes) and
TestHyperNodeOrderFn (HyperNodeOrder's bin-packing per HyperNode).

Upstream hands the task its PodGroup's `volcano.sh/job-allocated-hypernode` annotation; vclite recovers the
job's allocated HyperNode from its placed pods (actions/allocated.py), which gives the same HyperNode in every
row (the lowest holding the running pods). Scores are compared to one decimal, as upstream's eps (0.1)."""
import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import hypernodes, session, snapshot

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue
from .test_scheduler_topology import hn

SPINE = [hn("s1", 2, "s3", "s4", kind="HyperNode"), hn("s2", 2, "s5", "s6", kind="HyperNode"),
         hn("s3", 1, "s3-n1", "s3-n2"), hn("s4", 1, "s4-n1", "s4-n2"),
         hn("s5", 1, "s5-n1", "s5-n2"), hn("s6", 1, "s6-n1", "s6-n2")]
THREE_TIERS = [hn("s0", 3, "s1", "s2", kind="HyperNode")] + SPINE
S2_OUTSIDE_S0 = [hn("s0", 3, "s1", kind="HyperNode")] + SPINE      # s0 holds s1 only: s2 shares no HyperNode
TWO_TIERS = [hn("s0", 2, "s1", "s2", kind="HyperNode"), hn("s1", 1, "s1-n1", "s1-n2"), hn("s2", 1, "s2-n1", "s2-n2")]
ONE_TIER = TWO_TIERS[1:]
RACK_NODES = [f"s{r}-n{i}" for r in (3, 4, 5, 6) for i in (1, 2)]
PAIR_NODES = [f"s{r}-n{i}" for r in (1, 2) for i in (1, 2)]


def task_pod(name, node_name=None, role="worker"):
    p = pod(f"c1/{name}", "pg1", cpu="2", mem="4G", node=node_name, phase="Running" if node_name else "Pending")
    p["metadata"]["labels"] = {"volcano.sh/task-spec": role}
    return p


def node_scores(tree, node_names, placed, mode, scored, min_member=1, weight=1):
    """BatchNodeOrder of the pending pod of pg1 (networkTopology `mode`, highestTierAllowed 0, as
    BuildPodGroupWithNetWorkTopologies gives it), the others running where `placed` says, over the
    nodes `scored` alone (upstream's scoreNodes: the tie-break by task share looks at these only)."""
    group = pg("c1/pg1", "q1", min_member)
    group["spec"]["networkTopology"] = {"mode": mode, "highestTierAllowed": 0}
    pods = [task_pod(f"p{i + 1}", n, "master" if i == 0 else "worker") for i, n in enumerate(placed)]
    pods.append(task_pod(f"p{len(placed) + 1}"))
    nodes_ = [node(n, 2, "4Gi") for n in node_names]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], podgroups=[group], pods=pods, hypernodes=tree)
    tiers = [[P("network-topology-aware", {"weight": weight}, enabledHyperNodeOrder=True, enableNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values() if not t.node)
    rows = np.array([ssn.nodes.index[n] for n in scored])
    got = np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=float), (len(rows),))
    return {ssn.nodes.names[r]: float(v) for r, v in zip(rows, got)}


NODE_SCORE_ROWS = [
    pytest.param(THREE_TIERS, RACK_NODES, [], 1, 1, {"s3-n1": 0.0, "s4-n1": 0.0, "s5-n1": 0.0},
                 id="first-scheduling-scores-every-node-zero"),
    pytest.param(S2_OUTSIDE_S0, RACK_NODES, ["s3-n1", "s3-n2"], 1, 1, {"s5-n1": 0.0, "s6-n1": 0.0},
                 id="rescheduled-no-common-hypernode-with-the-allocated-one-scores-zero"),
    pytest.param(THREE_TIERS, RACK_NODES, ["s3-n1", "s3-n2"], 1, 1, {"s3-n1": 100.0, "s4-n1": 66.6, "s5-n1": 33.3},
                 id="rescheduled-by-the-lca-tier"),
    pytest.param(TWO_TIERS, PAIR_NODES, ["s1-n1"], 1, 1, {"s1-n1": 100.0, "s2-n1": 50.0},
                 id="rescheduled-two-tiers"),
    pytest.param(ONE_TIER, PAIR_NODES, ["s1-n1"], 1, 1, {"s1-n1": 100.0, "s2-n1": 0.0},
                 id="rescheduled-one-tier"),
    pytest.param(THREE_TIERS, RACK_NODES, ["s3-n1", "s3-n2"], 1, 2, {"s3-n1": 200.0, "s4-n1": 133.3, "s5-n1": 66.6},
                 id="rescheduled-plugin-weight-2"),
    pytest.param(THREE_TIERS, RACK_NODES, ["s3-n1", "s3-n2", "s4-n1"], 3, 1,
                 {"s3-n1": 116.6, "s4-n1": 91.6, "s5-n1": 33.3}, id="rescheduled-tie-broken-by-task-share"),
]


@pytest.mark.parametrize("mode", ["hard", "soft"])
@pytest.mark.parametrize("tree, node_names, placed, min_member, weight, want", NODE_SCORE_ROWS)
def test_volcano_network_topology_aware_node_score(mode, tree, node_names, placed, min_member, weight, want):
    """TestNetworkTopologyAwareNodeScore_Hard and _Soft: the same seven rows, the mode alone differs."""
    got = node_scores(tree, node_names, placed, mode, list(want), min_member, weight)
    assert got == pytest.approx(want, abs=0.1)


def hypernode_scores(nodes_, pods, arguments):
    group = pg("ns1/pg1", "q1", 2)
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 2}
    group["spec"]["subGroupPolicy"] = [{"name": "task1", "matchLabelKeys": ["volcano.sh/task-spec"]}]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], podgroups=[group], pods=pods,
                                  hypernodes=THREE_TIERS)
    tiers = [[P("network-topology-aware", arguments, enabledHyperNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    job = next(iter(ssn.jobs.values()))
    names = sorted(ssn.topology.tier)
    return dict(zip(names, (float(s) for s in np.asarray(ssn.hypernode_order(job, names), dtype=float))))


def hn_nodes(foo=False):
    out = []
    for rack, (cpu, mem, foo_first) in {"s3": (2, "4G", 8), "s4": (4, "4G", 8), "s5": (2, "8G", 16),
                                         "s6": (4, "8G", 16)}.items():
        for i in (1, 2):
            n = node(f"{rack}-n{i}", cpu, mem)
            if foo:
                n["status"]["allocatable"]["example.com/foo"] = str(foo_first if i == 1 else 0)
            out.append(n)
    return out


def hn_pods(foo=False):
    out = []
    for name in ("p1", "p2"):
        p = pod(f"ns1/{name}", "pg1", cpu="4", mem="4G")
        p["metadata"]["labels"] = {"volcano.sh/task-spec": "worker"}
        if foo:
            p["spec"]["containers"][0]["resources"]["requests"]["example.com/foo"] = "8"
        out.append(p)
    return out


CUSTOM = {"weight": 10, "hypernode.binpack.cpu": 3, "hypernode.binpack.memory": 4,
          "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
          "hypernode.binpack.resources.nvidia.com/gpu": 2, "hypernode.binpack.resources.example.com/foo": 3,
          "hypernode.binpack.normal-pod.enable": True, "hypernode.binpack.normal-pod.fading": 0}
TOP = hypernodes.TOP


@pytest.mark.parametrize("foo, arguments, want", [
    pytest.param(False, {}, {"s0": 25.0, "s1": 58.3, "s2": 45.8, "s3": 0.0, "s4": 100.0, "s5": 0.0, "s6": 75.0,
                             TOP: 25.0}, id="default-arguments"),
    pytest.param(True, CUSTOM, {"s0": 266.7, "s1": 700.0, "s2": 450.0, "s3": 0.0, "s4": 0.0, "s5": 0.0,
                                "s6": 800.0, TOP: 266.7}, id="customized-arguments"),
])
def test_volcano_hypernode_order_fn(foo, arguments, want):
    """TestHyperNodeOrderFn: two 4-cpu pods of one partition, every HyperNode (the cluster's top included)."""
    assert hypernode_scores(hn_nodes(foo), hn_pods(foo), arguments) == pytest.approx(want, abs=0.1)


# ---- TestNew: the invalid-arguments row ---------------------------------------------------------------------
def test_volcano_new_with_invalid_numbers_takes_the_defaults():
    """TestNew "build plugin with customized invalid arguments", its numbers: a negative weight, resource
    weight or fading is the default; a resource weight given for a resource not listed is not read."""
    args = {"weight": -1, "hypernode.binpack.cpu": -1, "hypernode.binpack.memory": -1,
            "hypernode.binpack.resources": "nvidia.com/gpuxxx, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": -1, "hypernode.binpack.resources.example.com/foo": -1,
            "hypernode.binpack.normal-pod.fading": -1}
    state = snapshot.ClusterState(nodes=[node("n1", 4, "8Gi")], queues=[queue("q1")], hypernodes=[hn("r", 1, "n1")])
    ssn = session.open_session(state, conf.build("allocate", [[P("network-topology-aware", args)]]), NOW)
    plugin = next(p for p in ssn.plugins if getattr(p, "name", "") == "network-topology-aware")
    assert plugin.arguments.resource_weights() == {"cpu": 1, "memory": 1, "nvidia.com/gpuxxx": 1, "example.com/foo": 1}
    assert (plugin.scale, plugin.arguments.normal_pod_enable, plugin._fading()) == (100, True, 0.8)


def test_volcano_new_with_a_bool_parse_bool_refuses_is_refused_at_load():
    """The same row's `hypernode.binpack.normal-pod.enable: "a"`: Volcano logs it and keeps true; vclite refuses
    the configuration, naming the argument (docs/differences.md, plugin arguments of the wrong type)."""
    with pytest.raises(conf.ConfError, match=r"normal-pod\.enable.*got 'a'"):
        conf.build("allocate", [[P("network-topology-aware", {"hypernode.binpack.normal-pod.enable": "a"})]])


def test_volcano_new_with_customized_valid_arguments():
    """TestNew "build plugin with customized valid arguments": a weight under a resource name not listed
    (`…nvidia.com/gpuxxx`) leaves the listed resource at 1."""
    args = {"weight": 2, "hypernode.binpack.cpu": 3, "hypernode.binpack.memory": 4,
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpuxxx": 5, "hypernode.binpack.resources.example.com/foo": 6,
            "hypernode.binpack.normal-pod.enable": False, "hypernode.binpack.normal-pod.fading": 0}
    state = snapshot.ClusterState(nodes=[node("n1", 4, "8Gi")], queues=[queue("q1")], hypernodes=[hn("r", 1, "n1")])
    ssn = session.open_session(state, conf.build("allocate", [[P("network-topology-aware", args)]]), NOW)
    plugin = next(p for p in ssn.plugins if getattr(p, "name", "") == "network-topology-aware")
    assert plugin.arguments.resource_weights() == {"cpu": 3, "memory": 4, "nvidia.com/gpu": 1, "example.com/foo": 6}
    assert (plugin.scale, plugin.arguments.normal_pod_enable, plugin._fading()) == (200, False, 0.0)
