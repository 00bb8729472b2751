"""Network-topology-aware allocation, in the shape of Volcano's TestAllocateWithNetWorkTopologies
(actions/allocate/allocate_test.go: the HyperNode tree s0 = {s0-n1, s0-n2} and s1 = {s1-n3, s1-n4}
at tier 1 under s2 at tier 2) and network_topology_aware_test.go (HyperNodeOrder's bin-packing).
Each case is one pure `run_session` over gang, predicates and network-topology-aware."""
from __future__ import annotations

import dataclasses

import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import hypernodes, session, snapshot
from vclite.scheduler.plugins import network_topology

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue, unschedulable_message


def hn(name, tier, *members, kind="Node", how="exactMatch", tier_name=None):
    sel = [{"type": kind, "selector": {how: {"name": m} if how == "exactMatch" else m}} for m in members]
    spec = {"tier": tier, "members": sel}
    if tier_name:
        spec["tierName"] = tier_name
    return {"metadata": {"name": name}, "spec": spec}


TREE = [hn("s0", 1, "s0-n1", "s0-n2"), hn("s1", 1, "s1-n3", "s1-n4"), hn("s2", 2, "s0", "s1", kind="HyperNode",
                                                                           tier_name="spine")]
NODES = [node(n, 2, "4Gi") for n in ("s0-n1", "s0-n2", "s1-n3", "s1-n4")]
TIERS = [[P("gang", enableJobReady=True, enableJobPipelined=True, enableJobOrder=True),
          P("predicates", enablePredicate=True), P("network-topology-aware", enabledHyperNodeOrder=True)]]


def job(name, n, cpu="1", nt=None, placed=()):
    group = pg(f"c1/{name}", "q1", n)
    if nt is not None:
        group["spec"]["networkTopology"] = nt
    pods = [pod(f"c1/{name}-{i}", name, cpu=cpu, mem="1Gi") for i in range(n - len(placed))]
    pods += [pod(f"c1/{name}-r{i}", name, cpu=cpu, mem="1Gi", node=nd, phase="Running") for i, nd in enumerate(placed)]
    return [group], pods


@dataclasses.dataclass
class Case:
    jobs: list
    bind_nodes: dict            # job -> the set of nodes its pods are bound to (None: none bound)
    tree: list = dataclasses.field(default_factory=lambda: TREE)
    others: list = dataclasses.field(default_factory=list)   # other pods already placed
    message: str | None = None   # job -> in its Unschedulable message


def run(case: Case):
    groups = [g for j in case.jobs for g in j[0]]
    pods = [p for j in case.jobs for p in j[1]] + case.others
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("q1")], podgroups=groups, pods=pods,
                                  hypernodes=case.tree)
    return session.run_session(state, conf.build("allocate", TIERS), NOW)


HARD1 = {"mode": "hard", "highestTierAllowed": 1}
CASES = [
    pytest.param(Case([job("j", 4, nt=HARD1)], {"j": {"s0-n1", "s0-n2"}}), id="hard-tier1-fits-in-s0-by-name"),
    pytest.param(Case([job("j", 4, nt=HARD1)], {"j": {"s1-n3", "s1-n4"}},
                      others=[pod("c1/busy", "other", cpu="1", mem="1Gi", node="s0-n1", phase="Running")]),
                 id="hard-tier1-skips-a-hypernode-too-full"),
    pytest.param(Case([job("j", 6, nt=HARD1)], {"j": None}, message="fits in no single HyperNode of tier <= 1"),
                 id="hard-tier1-gang-larger-than-any-rack-waits"),
    pytest.param(Case([job("j", 6, nt={"mode": "hard", "highestTierAllowed": 2})],
                      {"j": {"s0-n1", "s0-n2", "s1-n3"}}), id="hard-tier2-spans-the-spine"),
    pytest.param(Case([job("j", 6, nt={"mode": "hard", "highestTierName": "spine"})],
                      {"j": {"s0-n1", "s0-n2", "s1-n3"}}), id="highest-tier-name-resolves-to-tier-2"),
    pytest.param(Case([job("j", 6, nt={"mode": "soft"})], {"j": {"s0-n1", "s0-n2", "s1-n3"}}),
                 id="soft-falls-back-to-the-cluster"),
    pytest.param(Case([job("j", 2, nt={"mode": "soft"})], {"j": {"s0-n1"}}), id="soft-prefers-the-lowest-tier"),
    pytest.param(Case([job("j", 4, nt=HARD1, placed=("s1-n3",))], {"j": {"s1-n3", "s1-n4"}}),
                 id="partly-running-job-stays-in-its-hypernode"),
    pytest.param(Case([job("j", 5, nt=HARD1, placed=("s1-n3",))], {"j": None},
                      message="fits in no single HyperNode of tier <= 1"), id="partly-running-job-cannot-leave"),
    pytest.param(Case([job("j", 2, nt=HARD1)], {"j": {"s0-n1"}}, tree=[]), id="no-hypernodes-tier1-is-the-cluster"),
    pytest.param(Case([job("j", 2, nt={"mode": "hard", "highestTierAllowed": 0})], {"j": None}, tree=[],
                      message="no HyperNode of tier <= 0 can hold the gang"), id="no-hypernodes-tier0-waits"),
    pytest.param(Case([job("j", 2, nt={"mode": "hard", "highestTierName": "nowhere"})], {"j": {"s0-n1"}}),
                 id="unknown-tier-name-is-no-limit"),
    pytest.param(Case([job("j", 4)], {"j": {"s0-n1", "s0-n2"}}), id="job-without-topology-unchanged"),
]


@pytest.mark.parametrize("case", CASES)
def test_topology_allocation(case: Case):
    result = run(case)
    for name, nodes in case.bind_nodes.items():
        bound = {n for k, n in result.binds.items() if k.startswith(f"c1/{name}-")}
        assert (bound or None) == nodes, result.binds
    if case.message:
        assert case.message in unschedulable_message(result, "c1/j")


def test_hard_gang_goes_to_the_fuller_hypernode_when_the_plugin_scores():
    """HyperNodeOrder bin-packs: with s0 half used, a 2-pod gang goes to s0 (higher (used+req)/allocatable),
    ahead of s1 which comes first by name only when scores tie."""
    busy = [pod("c1/busy", "other", cpu="1", mem="1Gi", node="s1-n3", phase="Running")]
    result = run(Case([job("j", 2, nt=HARD1)], {}, others=busy))
    assert {n for n in result.binds.values()} <= {"s1-n3", "s1-n4"}, result.binds


@pytest.mark.parametrize("members, expected", [
    pytest.param([{"type": "Node", "selector": {"regexMatch": {"pattern": "^s0-"}}}], {"s0-n1", "s0-n2"}, id="regex"),
    pytest.param([{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}], {"s1-n4"},
                 id="label"),
    pytest.param([{"type": "Node", "selector": {"labelMatch": {}}}], set(), id="empty-label-selector-none"),
    pytest.param([{"type": "Node", "selector": {"exactMatch": {"name": "ghost"}}}], set(), id="missing-node"),
])
def test_members_resolve_to_leaf_nodes(members, expected):
    nodes = [node(n, 2, "4Gi", labels={"rack": "a"} if n == "s1-n4" else None) for n in
             ("s0-n1", "s0-n2", "s1-n3", "s1-n4")]
    snap = snapshot.build(snapshot.ClusterState(nodes=nodes))
    tree = hypernodes.build([{"metadata": {"name": "h"}, "spec": {"tier": 1, "members": members}}], snap.nodes)
    assert {snap.nodes.names[i] for i in tree.leaves["h"].nonzero()[0]} == expected
    assert tree.top_tier == 2 and tree.parent["h"] == hypernodes.TOP


def test_tree_nesting_cycles_and_lca():
    snap = snapshot.build(snapshot.ClusterState(nodes=NODES))
    tree = hypernodes.build(TREE + [hn("a", 3, "b", kind="HyperNode"), hn("b", 3, "a", kind="HyperNode")], snap.nodes)
    assert tree.leaves["s2"].all() and tree.tier["s2"] == 2 and tree.top_tier == 4
    assert tree.lca("s0", "s1") == "s2" and tree.ancestors("s0") == ["s0", "s2", hypernodes.TOP]
    assert tree.parent["a"] in ("b", hypernodes.TOP) and tree.parent["b"] in ("a", hypernodes.TOP)
    assert not (tree.parent["a"] == "b" and tree.parent["b"] == "a")


@pytest.mark.parametrize("args, expected", [
    pytest.param({}, {"cpu": 1, "memory": 1}, id="defaults"),
    pytest.param({"hypernode.binpack.cpu": 5, "hypernode.binpack.memory": -1, "hypernode.binpack.resources":
                  "nvidia.com/gpu", "hypernode.binpack.resources.nvidia.com/gpu": 2},
                 {"cpu": 5, "memory": 1, "nvidia.com/gpu": 2}, id="weights-and-extra-resources"),
])
def test_plugin_arguments(args, expected):
    c = conf.build("allocate", [[P("network-topology-aware", args)]])
    plugin = c.tiers[0][0].instantiate()
    assert isinstance(plugin, network_topology.NetworkTopologyAware)
    assert plugin.arguments.resource_weights() == expected
