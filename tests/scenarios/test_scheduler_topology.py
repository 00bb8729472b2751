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


# ---- allocate_test.go TestAllocateWithNetWorkTopologies, job-level rows ----------------------------
# Nodes 2 cpu/4Gi each; every pod asks 2 cpu/4G, so one pod per node; gang{jobOrder, jobReady, jobPipelined,
# jobStarving}, predicates, network-topology-aware{nodeOrder, hyperNodeOrder, hyperNodeGradient}. Volcano's
# rows count the binds (MinimalBindCheck). A "rescheduled" job has two pods running on s0 (s3) and one
# pending; upstream's test writes volcano.sh/job-allocated-hypernode on its PodGroup, which neither Volcano's
# scheduler (since v1.14) nor vclite reads: a first session recovers the job's HyperNode from where its pods
# run (the same HyperNode in every row here).
TASK, JOB = "volcano.sh/task-spec", "volcano.sh/job-spec"
TREE2 = [hn("s0", 1, "s0-n1", "s0-n2", tier_name=TASK), hn("s1", 1, "s1-n3", "s1-n4", tier_name=TASK),
         hn("s2", 2, "s0", "s1", kind="HyperNode", tier_name=JOB)]
NODES2 = ("s0-n1", "s0-n2", "s1-n3", "s1-n4")
TREE3 = [hn(f"s{i}", 1, f"s{i}-n1", f"s{i}-n2") for i in (3, 4, 5, 6)] + [
    hn("s1", 2, "s3", "s4", kind="HyperNode"), hn("s2", 2, "s5", "s6", kind="HyperNode"),
    hn("s0", 3, "s1", "s2", kind="HyperNode")]
NODES3 = tuple(f"s{i}-n{j}" for i in (3, 4, 5, 6) for j in (1, 2))
RACKS_ONLY = [hn("s0", 1, "s0-n1", "s0-n2", tier_name=TASK), hn("s1", 1, "s1-n3", "s1-n4", tier_name=TASK)]


def upstream_job(min_member, nt, pending, running=()):
    group = pg("c1/pg1", "q1", min_member)
    group["spec"]["networkTopology"] = nt
    pods = [pod(f"c1/r{i}", "pg1", "2", "4G", node=n, phase="Running") for i, n in enumerate(running)]
    pods += [pod(f"c1/p{i}", "pg1", "2", "4G") for i in range(pending)]
    return [group], pods


def hard(tier):
    return {"mode": "hard", "highestTierAllowed": tier}


def hard_name(name):
    return {"mode": "hard", "highestTierName": name}


SOFT = {"mode": "soft", "highestTierAllowed": 0}
ON_S0, ON_S3 = ("s0-n1", "s0-n2"), ("s3-n1", "s3-n2")
UPSTREAM_TOPOLOGY = [
    pytest.param(upstream_job(3, SOFT, 3), TREE2, NODES2, 3,
                 id="soft network topology constrain, can allocate job when resources are enough"),
    pytest.param(upstream_job(1, SOFT, 2), TREE2, NODES2, 2,
                 id="soft network topology constrain, can allocate job when minavailable < replicas"),
    pytest.param(upstream_job(2, SOFT, 1, ON_S0), TREE2, NODES2, 1,
                 id="soft network topology constrain and tasks in job rescheduled, can allocate job when resources "
                    "are enough"),
    pytest.param(upstream_job(3, SOFT, 1, ON_S0), TREE2, NODES2, 1,
                 id="soft ... rescheduled, can allocate job when resources are enough and minavailable = replicas"),
    pytest.param(upstream_job(2, SOFT, 1, ON_S3), TREE3, NODES3, 1,
                 id="soft ... rescheduled, can allocate job when cross highestTierAllowed tier and hyperNodesInfo has "
                    "three tier"),
    pytest.param(upstream_job(3, hard(1), 3), TREE2, NODES2, 0,
                 id="hard network topology constrain, can not allocate job when cross highestTierAllowed tier"),
    pytest.param(upstream_job(3, hard(2), 3), TREE2, NODES2, 3,
                 id="hard network topology constrain, can allocate job when highestTierAllowed not reached"),
    pytest.param(upstream_job(2, hard(1), 2), TREE2, NODES2, 2,
                 id="hard network topology constrain, can allocate job when multi hyperNodes are available"),
    pytest.param(upstream_job(1, hard(1), 2), TREE2, NODES2, 2,
                 id="hard network topology constrain, can allocate job when minavailable < replicas"),
    pytest.param(upstream_job(2, hard(2), 1, ON_S0), TREE2, NODES2, 1,
                 id="hard ... rescheduled, can allocate job when highestTierAllowed not reached"),
    pytest.param(upstream_job(3, hard(2), 1, ON_S0), TREE2, NODES2, 1,
                 id="hard ... rescheduled, can allocate job when highestTierAllowed not reached and minavailable = "
                    "replicas"),
    pytest.param(upstream_job(2, hard(2), 1, ON_S3), TREE3, NODES3, 1,
                 id="hard ... rescheduled, can allocate job when highestTierAllowed not reached and hyperNodesInfo "
                    "has three tier"),
    pytest.param(upstream_job(2, hard(1), 1, ON_S0), TREE2, NODES2, 0,
                 id="hard ... rescheduled, can not allocate job when cross highestTierAllowed tier"),
    pytest.param(upstream_job(2, hard(1), 1, ON_S3), TREE3, NODES3, 0,
                 id="hard ... rescheduled, can not allocate job when cross highestTierAllowed tier and "
                    "hyperNodesInfo has three tier"),
    pytest.param(upstream_job(2, hard(2), 1, ON_S0), RACKS_ONLY, NODES2, 1,
                 id="hard ... rescheduled, can allocate job when LCAHyperNode is empty"),
    pytest.param(upstream_job(3, hard_name(TASK), 3), TREE2, NODES2, 0,
                 id="hard network topology constrain, can not allocate job when cross highestTierName tier"),
    pytest.param(upstream_job(3, hard_name(JOB), 3), TREE2, NODES2, 3,
                 id="hard network topology constrain, can allocate job when the tier corresponding to "
                    "highestTierName not reached"),
    pytest.param(upstream_job(2, hard_name(TASK), 2), TREE2, NODES2, 2,
                 id="hard network topology constrain (highestTierName), can allocate job when multi hyperNodes are "
                    "available"),
    pytest.param(upstream_job(2, hard_name(JOB), 1, ON_S0), TREE2, NODES2, 1,
                 id="hard ... task in job rescheduled, can allocate job when the tier corresponding to "
                    "highestTierName not reached"),
    pytest.param(upstream_job(3, hard_name(JOB), 1, ON_S0), TREE2, NODES2, 1,
                 id="hard ... task in job rescheduled, can allocate job when the tier corresponding to "
                    "highestTierName not reached and minavailable = replicas"),
    pytest.param(upstream_job(2, hard_name(TASK), 1, ON_S0), TREE2, NODES2, 0,
                 id="hard ... rescheduled, can not allocate job when cross the tier corresponding to "
                    "highestTierName"),
    pytest.param(upstream_job(2, hard_name("volcano.sh/hypercluster"), 1, ON_S0), RACKS_ONLY, NODES2, 1,
                 id="hard ... highestTierName ... rescheduled, can allocate job when here is no corresponding "
                    "highestTierAllowed for highestTierName"),
]
UPSTREAM_TIERS = [[P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True,
                     enableJobStarving=True),
                   P("predicates", enablePredicate=True),
                   P("network-topology-aware", enableNodeOrder=True, enabledHyperNodeOrder=True,
                     enabledHyperNodeGradient=True)]]


@pytest.mark.parametrize("job_objs, tree, node_names, binds", UPSTREAM_TOPOLOGY)
def test_volcano_allocate_with_network_topologies(job_objs, tree, node_names, binds):
    groups, pods = job_objs
    state = snapshot.ClusterState(nodes=[node(n, 2, "4Gi") for n in node_names], queues=[queue("q1")],
                                  podgroups=groups, pods=pods, hypernodes=tree)
    result = session.run_session(state, conf.build("allocate", UPSTREAM_TIERS), NOW)
    assert len(result.binds) == binds, result.binds


@pytest.mark.parametrize("used_rack, want", [
    pytest.param("s0", {"c1/p1": "s0-n1", "c1/p2": "s0-n2"},
                 id="hard network topology constrain, allocate job to highest score hypeNode with node level binpack"),
    pytest.param("s1", {"c1/p1": "s1-n3", "c1/p2": "s1-n4"}, id="the same with the used rack second by name"),
])
def test_volcano_node_level_score_with_network_topologies(used_rack, want):
    """allocate_test.go TestNodeLevelScoreWithNetWorkTopologies: binpack and network-topology-aware put a
    2-pod gang (hard, tier 1) on the rack another job already uses, each pod on the node binpack prefers."""
    tiers = [[UPSTREAM_TIERS[0][0], UPSTREAM_TIERS[0][1], P("binpack", enableNodeOrder=True), UPSTREAM_TIERS[0][2]]]
    g1, g2 = pg("c1/pg1", "q1", 2), pg("c1/pg2", "q1", 2, "Running")
    g1["spec"]["networkTopology"] = hard(1)
    g2["spec"]["networkTopology"] = {"mode": "", "highestTierAllowed": 1}
    small, large = ("s0-n1", "s0-n2") if used_rack == "s0" else ("s1-n3", "s1-n4")
    pods = [pod("c1/p1", "pg1", "2", "4Gi"), pod("c1/p2", "pg1", "4", "8Gi"),
            pod("c1/p3", "pg2", "2", "4Gi", node=small, phase="Running"),
            pod("c1/p4", "pg2", "4", "8Gi", node=large, phase="Running")]
    nodes = [node("s0-n1", 4, "8Gi"), node("s0-n2", 8, "16Gi"), node("s1-n3", 4, "8Gi"), node("s1-n4", 8, "16Gi")]
    state = snapshot.ClusterState(nodes=nodes, queues=[queue("q1")], podgroups=[g1, g2], pods=pods, hypernodes=TREE)
    assert session.run_session(state, conf.build("allocate", tiers), NOW).binds == want


@pytest.mark.parametrize("nt", [
    pytest.param(SOFT, id="soft network topology constrain, two available hyperNodes, can allocate job to nodes with "
                          "affinity"),
    pytest.param(hard(1), id="hard network topology constrain, two available hyperNodes, can allocate job to nodes "
                             "with affinity"),
])
def test_volcano_two_available_hypernodes_node_affinity(nt):
    """allocate_test.go TestAllocateWithNetWorkTopologies: two one-node racks (upstream's tier 0, tier 1 here); the
    pod's nodeSelector holds on the second rack's node only, and the job is placed there."""
    group = pg("c1/pg1", "q1", 1)
    group["spec"]["networkTopology"] = nt
    p = pod("c1/p1", "pg1", "2", "4G", selector={"nodeRole": "master"})
    p["metadata"]["labels"] = {"volcano.sh/task-spec": "master"}
    nodes = [node("s0-n1", 2, "4Gi"), node("s1-n2", 2, "4Gi", labels={"nodeRole": "master"})]
    tree = [hn("s0", 1, "s0-n1"), hn("s1", 1, "s1-n2")]
    state = snapshot.ClusterState(nodes=nodes, queues=[queue("q1")], podgroups=[group], pods=[p], hypernodes=tree)
    assert session.run_session(state, conf.build("allocate", UPSTREAM_TIERS), NOW).binds == {"c1/p1": "s1-n2"}
