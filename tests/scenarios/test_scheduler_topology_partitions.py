"""Partition-level network topology (a PodGroup's subGroupPolicy[].networkTopology, from a vcjob task's
partitionPolicy), as Volcano's TestAllocateWithPartitionPolicyNetworkTopology
(actions/allocate/allocate_test.go): every pod asks for a whole node (2 cpu), so a rack of two
nodes holds two. Upstream's PodGroup also names the job's allocated HyperNode; a first session
recovers it from the placed pods (test_scheduler_topology_allocated.py: kept across sessions), which
the cases place accordingly. Upstream's tier-0 racks are tier 1 here."""
from __future__ import annotations

import dataclasses

import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot

from .test_scheduler_scenarios import NOW, node, pg, queue, unschedulable_message
from .test_scheduler_topology import TIERS, hn

SPEC, INST = "volcano.sh/task-spec", "volcano.sh/task-instance"
TWO_TIER = [hn("s0", 1, "s0-n1", "s0-n2"), hn("s1", 1, "s1-n3", "s1-n4"), hn("s2", 2, "s0", "s1", kind="HyperNode")]
FOUR = ["s0-n1", "s0-n2", "s1-n3", "s1-n4"]
THREE_TIER = [hn("s0", 3, "s1", "s2", kind="HyperNode"), hn("s1", 2, "s3", "s4", kind="HyperNode"),
              hn("s2", 2, "s5", "s6", kind="HyperNode")]
THREE_TIER += [hn(f"s{i}", 1, f"s{i}-n1", f"s{i}-n2") for i in (3, 4, 5, 6)]
EIGHT = [f"s{i}-n{j}" for i in (3, 4, 5, 6) for j in (1, 2)]


def sub(name, key, mode, tier=None, size=None):
    nt = {"mode": mode}
    if tier is not None:
        nt["highestTierAllowed"] = tier
    p = {"name": name, "matchLabelKeys": [key], "networkTopology": nt}
    if size is not None:
        p["subGroupSize"] = size
    return p


def p(name, labels, node=None, selector=None):
    spec = {"schedulerName": "volcano",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "4G"}}}]}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    return {"metadata": {"name": name, "namespace": "c1", "uid": f"c1/{name}", "labels": labels,
                         "annotations": {"scheduling.k8s.io/group-name": "pg1"}},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def m(node=None, **kw):
    return p(kw.pop("name"), {SPEC: "master"}, node, **kw)


def w(name, node=None, key=SPEC):
    return p(name, {key: "worker"}, node)


@dataclasses.dataclass
class Case:
    min_member: int
    job_nt: dict
    policies: list
    pods: list
    binds: int                   # how many pods are bound
    where: dict = dataclasses.field(default_factory=dict)   # pod -> node
    tree: list = dataclasses.field(default_factory=lambda: TWO_TIER)
    nodes: list = dataclasses.field(default_factory=lambda: FOUR)
    labels: dict = dataclasses.field(default_factory=dict)  # node -> labels


HARD = lambda t: {"mode": "hard", "highestTierAllowed": t}   # noqa: E731
SOFT = {"mode": "soft"}
PLACED_S0 = [m("s0-n1", name="p1"), w("p2", "s0-n2"), w("p3")]   # master and a worker running in rack s0
PLACED_S3 = [m("s3-n1", name="p1"), w("p2", "s3-n2"), w("p3")]
SPLIT = [m("s0-n1", name="p1"), w("p2", "s1-n3"), w("p3")]       # the worker partition already in s1
CASES = [
    pytest.param(Case(3, HARD(2), [sub("task1", SPEC, "soft")], [m(name="p1"), w("p2"), w("p3")], 3),
                 id="job-hard-sub-soft-enough-resources"),
    pytest.param(Case(1, HARD(1), [sub("task1", SPEC, "soft")], [m(name="p1"), w("p2")], 2),
                 id="job-hard-sub-soft-min-below-replicas"),
    pytest.param(Case(1, HARD(1), [sub("task1", SPEC, "soft")], [m(name="p1", selector={"nodeRole": "master"})], 1,
                      {"p1": "s1-n2"}, [hn("s0", 1, "s0-n1"), hn("s1", 1, "s1-n2")], ["s0-n1", "s1-n2"],
                      {"s1-n2": {"nodeRole": "master"}}), id="job-hard-sub-soft-node-affinity"),
    pytest.param(Case(2, HARD(2), [sub("task1", SPEC, "soft")], PLACED_S0, 1),
                 id="job-hard-sub-soft-rescheduled"),
    pytest.param(Case(3, HARD(2), [sub("task1", SPEC, "soft")], PLACED_S0, 1),
                 id="job-hard-sub-soft-rescheduled-min-equals-replicas"),
    pytest.param(Case(2, HARD(2), [sub("task1", SPEC, "soft")], PLACED_S3, 1,
                      tree=THREE_TIER, nodes=EIGHT), id="job-hard-sub-soft-rescheduled-three-tiers"),
    pytest.param(Case(3, SOFT, [sub("task1", SPEC, "hard", 1, 2), sub("task2", INST, "hard", 1, 1)],
                      [m(name="p1"), m(name="p2"), w("p3", key=INST)], 3, {"p3": "s1-n3"},
                      [hn("s0", 1, "s0-n1", "s0-n2"), hn("s1", 1, "s1-n3"), hn("s2", 2, "s0", "s1", kind="HyperNode")],
                      ["s0-n1", "s0-n2", "s1-n3"]), id="job-soft-sub-hard-two-policies"),
    pytest.param(Case(1, SOFT, [sub("task1", SPEC, "hard", 1)], [m(name="p1"), w("p2")], 2),
                 id="job-soft-sub-hard-min-below-replicas"),
    pytest.param(Case(3, SOFT, [sub("task1", SPEC, "hard", 1)], [m(name="p1"), w("p2"), w("p3"), w("p4")], 0),
                 id="job-soft-sub-hard-partition-larger-than-a-rack"),
    pytest.param(Case(2, SOFT, [sub("task1", SPEC, "hard", 1)], SPLIT, 1,
                      {"p3": "s1-n4"}), id="job-soft-sub-hard-rescheduled-stays-with-its-partition"),
    pytest.param(Case(2, SOFT, [sub("task1", SPEC, "hard", 2)],
                      [m("s3-n1", name="p1"), w("p2", "s3-n2"), w("p3", "s4-n1"), w("p4", "s4-n2"), w("p5")], 0,
                      tree=THREE_TIER, nodes=EIGHT), id="job-soft-sub-hard-rescheduled-cannot-cross-tier"),
    pytest.param(Case(3, HARD(2), [sub("task1", SPEC, "hard", 1)], [m(name="p1"), w("p2"), w("p3")], 3),
                 id="job-hard-sub-hard-tier-not-reached"),
    pytest.param(Case(3, HARD(2), [sub("task1", SPEC, "hard", 1, 1), sub("task2", INST, "hard", 1, 2)],
                      [m(name="p1"), w("p2", key=INST), w("p3", key=INST)], 3, {"p1": "s1-n3"},
                      [hn("s0", 1, "s0-n1", "s0-n2"), hn("s1", 1, "s1-n3"), hn("s2", 2, "s0", "s1", kind="HyperNode")],
                      ["s0-n1", "s0-n2", "s1-n3"]), id="job-hard-sub-hard-partition-size-decides-the-rack"),
    pytest.param(Case(2, HARD(2), [sub("task1", SPEC, "hard", 1)], [m(name="p1"), w("p2")], 2),
                 id="job-hard-sub-hard-several-hypernodes"),
    pytest.param(Case(1, HARD(2), [sub("task1", SPEC, "hard", 1, 1)], [m(name="p1"), w("p2")], 2),
                 id="job-hard-sub-hard-min-below-replicas"),
    pytest.param(Case(2, HARD(2), [sub("task1", SPEC, "hard", 1)], SPLIT, 1,
                      {"p3": "s1-n4"}), id="job-hard-sub-hard-rescheduled-joins-its-partition"),
    pytest.param(Case(3, HARD(2), [sub("task1", SPEC, "hard", 2)], PLACED_S0, 1),
                 id="job-hard-sub-hard-rescheduled-tier-2"),
    pytest.param(Case(2, HARD(3), [sub("task1", SPEC, "hard", 2)], PLACED_S3, 1,
                      tree=THREE_TIER, nodes=EIGHT), id="job-hard-sub-hard-rescheduled-three-tiers"),
    pytest.param(Case(2, HARD(2), [sub("task1", SPEC, "hard", 1)], PLACED_S0, 0),
                 id="job-hard-sub-hard-rescheduled-cannot-leave-its-rack"),
    pytest.param(Case(2, HARD(3), [sub("task1", SPEC, "hard", 2)],
                      [m("s3-n1", name="p1"), w("p2", "s3-n2"), w("p3", "s4-n1"), w("p4", "s4-n2"), w("p5")], 0,
                      tree=THREE_TIER, nodes=EIGHT), id="job-hard-sub-hard-rescheduled-three-tiers-full"),
    pytest.param(Case(2, HARD(3), [sub("task1", SPEC, "hard", 2)], PLACED_S0, 1, tree=TWO_TIER[:2]),
                 id="job-hard-sub-hard-rescheduled-lca-hypernode-empty"),
]


def run(case: Case):
    group = pg("c1/pg1", "q1", case.min_member)
    group["spec"]["networkTopology"] = case.job_nt
    group["spec"]["subGroupPolicy"] = case.policies
    nodes = [node(n, 2, "4Gi", labels=case.labels.get(n)) for n in case.nodes]
    state = snapshot.ClusterState(nodes=nodes, queues=[queue("q1")], podgroups=[group], pods=case.pods,
                                  hypernodes=case.tree)
    return session.run_session(state, conf.build("allocate", TIERS), NOW)


@pytest.mark.parametrize("case", CASES)
def test_partition_topology(case: Case):
    result = run(case)
    assert len(result.binds) == case.binds, result.binds
    for pod, where in case.where.items():
        assert result.binds.get(f"c1/{pod}") == where, result.binds


def test_partition_kept_within_one_rack_even_when_the_job_may_span_two():
    """The job may span the spine (tier 2), each partition only a rack (tier 1): two partitions of two
    workers each land in different racks, never one rack split between them."""
    pods = [p(f"a{i}", {"part": "a"}) for i in range(2)] + [p(f"b{i}", {"part": "b"}) for i in range(2)]
    result = run(Case(4, HARD(2), [sub("p", "part", "hard", 1, 2)], pods, 4))
    racks = {k[3]: {n[:2] for kk, n in result.binds.items() if kk[3] == k[3]} for k in result.binds}
    assert racks and all(len(r) == 1 for r in racks.values()), result.binds


def test_partition_that_fits_nowhere_says_why():
    pods = [p(f"a{i}", {"part": "a"}) for i in range(3)]
    result = run(Case(3, SOFT, [sub("p", "part", "hard", 1, 3)], pods, 0))
    assert not result.binds
    assert "network topology" in unschedulable_message(result, "c1/pg1")


# ---- TestAllocateWithPartitionPolicyNetworkTopology: the minSubGroups and "rescheduling scenario" rows ----------
# Upstream's tiers: gang{jobOrder, jobReady, jobPipelined, jobStarving, subJobReady, subJobOrder}, predicates,
# network-topology-aware{nodeOrder, hyperNodeOrder, hyperNodeGradient}. Upstream checks at least the binds it
# names (MinimalBindCheck); these pin the exact number. A PodGroup's allocated HyperNode (upstream's third
# argument) is recovered from where its pods run, as test_scheduler_topology.py says.
UPSTREAM_TIERS = [[conf.plugin("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True,
                               enableJobStarving=True, enabledSubJobReady=True, enabledSubJobOrder=True),
                   conf.plugin("predicates", enablePredicate=True),
                   conf.plugin("network-topology-aware", enableNodeOrder=True, enabledHyperNodeOrder=True,
                               enabledHyperNodeGradient=True)]]


def mp(name, key, value, node=None, cpu="2", mem="4Gi"):
    """A pod of pg1 labelled key=value (its partition), running on `node` or pending."""
    out = p(name, {key: value}, node)
    out["spec"]["containers"][0]["resources"]["requests"] = {"cpu": cpu, "memory": mem}
    return out


def msub(name, key, tier, size, min_sub_groups=None, mode="hard"):
    out = sub(name, key, mode, tier, size)
    if min_sub_groups is not None:
        out["minSubGroups"] = min_sub_groups
    return out


FIVE = [mp("p1", SPEC, "master"), mp("p2", INST, "worker"), mp("p3", INST, "worker"),
        mp("p4", INST, "worker2"), mp("p5", INST, "worker2")]
EIGHT_PODS = [mp(f"p{i}", SPEC, f"master{'' if i == 1 else i}") for i in (1, 2, 3, 4)] + [
    mp("p5", INST, "worker"), mp("p6", INST, "worker"), mp("p7", INST, "worker2"), mp("p8", INST, "worker2")]
S3_TREE = [hn("s0", 1, "s0-n1", "s0-n2"), hn("s1", 1, "s1-n3", "s1-n4"), hn("s2", 1, "s2-n5"),
           hn("s3", 2, "s0", "s1", "s2", kind="HyperNode")]
SMALL_TREE = [hn("s0", 1, "s0-n1", "s0-n2"), hn("s1", 1, "s1-n3"), hn("s2", 2, "s0", "s1", kind="HyperNode")]
S0_ONLY = [hn("s0", 1, "s0-n1", "s0-n2")]
J = "podgroup hard network topology constrain and subGroup hard network topology constrain"
JR = J + " with minSubGroups and tasks in job rescheduled"
MIN_SUB_GROUPS = [
    pytest.param(5, HARD(2), [msub("task1", SPEC, 1, 1, 1), msub("task2", INST, 1, 2, 2)], FIVE, 5, {"p1": "s2-n5"},
                 S3_TREE, {n: 2 for n in FOUR + ["s2-n5"]},
                 id=J + ", can allocate job according to the network topology constrain of subGroup policy with "
                        "minSubGroups"),
    pytest.param(3, HARD(2), [msub("task1", SPEC, 1, 1, 1), msub("task2", INST, 1, 2, 1)], FIVE, 3, {"p1": "s1-n3"},
                 SMALL_TREE, {"s0-n1": 2, "s0-n2": 2, "s1-n3": 2},
                 id=J + ", ... with minSubGroups and minavailable = replicas"),
    pytest.param(3, HARD(2), [msub("task1", SPEC, 1, 1, 2), msub("task2", INST, 1, 2, 1)], EIGHT_PODS, 4, {},
                 TWO_TIER, {n: 2 for n in FOUR}, id=J + ", ... with minSubGroups and hypernode resources meet "
                                                        "minSubGroups"),
    pytest.param(5, HARD(2), [msub("task1", SPEC, 1, 1, 1), msub("task2", INST, 1, 2, 1)], FIVE, 0, {},
                 TWO_TIER, {n: 2 for n in FOUR}, id=J + ", can not allocate job when minMember is not satisfied"),
    pytest.param(3, HARD(2), [msub("task1", SPEC, 1, 1, 1), msub("task2", INST, 1, 2, 2)], FIVE, 0, {},
                 TWO_TIER, {n: 2 for n in FOUR}, id=J + ", can not allocate job when minSubGroups is not satisfied"),
    pytest.param(2, HARD(2), [msub("task1", SPEC, 1, 2, 1)],
                 [mp("p1", SPEC, "master", "s0-n1"), mp("p2", SPEC, "worker", "s1-n3"), mp("p3", SPEC, "worker")],
                 1, {"p3": "s1-n4"}, TWO_TIER, {n: 2 for n in FOUR},
                 id=JR + ", two available hyperNodes, can allocate job to nodes with affinity"),
    pytest.param(2, HARD(2), [msub("task1", SPEC, 1, 2, 1)],
                 [mp("p1", SPEC, "master", "s0-n1"), mp("p2", SPEC, "worker", "s1-n3"),
                  mp("p3", SPEC, "worker", "s1-n4"), mp("p4", SPEC, "worker")], 0, {}, TWO_TIER, {n: 2 for n in FOUR},
                 id=JR + ", can not allocate job when hypernode resources are insufficient."),
    pytest.param(4, HARD(2), [msub("task1", SPEC, 2, 2, 2)],
                 [mp("p1", SPEC, "master", "s0-n1"), mp("p2", SPEC, "worker", "s0-n2"), mp("p3", SPEC, "worker"),
                  mp("p4", SPEC, "master")], 2, {}, TWO_TIER, {n: 2 for n in FOUR},
                 id=JR + ", can allocate job when highestTierAllowed not reached and minAvailable = replicas"),
    pytest.param(3, HARD(2), [msub("task1", SPEC, 1, 1, 2), msub("task2", INST, 1, 2, 1)],
                 [mp("p1", SPEC, "master"), mp("p2", SPEC, "master2"), mp("p3", SPEC, "master3", "s0-n1"),
                  mp("p4", SPEC, "master4", "s0-n2")] + EIGHT_PODS[4:], 2, {}, TWO_TIER, {n: 2 for n in FOUR},
                 id=JR + ", can allocate job when subGroup is rescheduled"),
    pytest.param(4, HARD(2), [msub("task1", SPEC, 1, 4)],
                 [mp("p1", SPEC, "worker", "s0-n1", mem="4G"), mp("p2", SPEC, "worker", "s0-n2", mem="4G"),
                  mp("p3", SPEC, "worker", mem="4G"), mp("p4", SPEC, "worker", mem="4G")], 2, {},
                 TWO_TIER, {n: 4 for n in FOUR},
                 id="rescheduling scenario: SubJob with multiple pending tasks, GetMinResources returns sum of all "
                    "pending tasks resources"),
    pytest.param(3, HARD(2), [msub("task1", SPEC, 1, 3)],
                 [mp("p1", SPEC, "worker", "s0-n1", mem="4G"), mp("p2", SPEC, "worker", "s0-n2", mem="4G"),
                  mp("p3", SPEC, "worker", mem="4G")], 1, {}, SMALL_TREE, {"s0-n1": 4, "s0-n2": 4, "s1-n3": 4},
                 id="rescheduling scenario: SubJob with single pending task"),
    pytest.param(6, HARD(2), [msub("task1", SPEC, 1, 3), msub("task2", INST, 1, 3)],
                 [mp("p1", SPEC, "master", "s0-n1", mem="4G"), mp("p2", SPEC, "master", "s0-n2", mem="4G"),
                  mp("p3", SPEC, "master", mem="4G"), mp("p4", INST, "worker", "s1-n3", mem="4G"),
                  mp("p5", INST, "worker", mem="4G"), mp("p6", INST, "worker", mem="4G")], 3, {},
                 TWO_TIER, {n: 4 for n in FOUR},
                 id="rescheduling scenario: multiple SubJobs with different pending task counts"),
    pytest.param(3, HARD(1), [msub("task1", SPEC, 1, 3)],
                 [mp("p1-running", SPEC, "worker", "s0-n1", mem="4G"), mp("p2-pending-small", SPEC, "worker", mem="4G"),
                  mp("p3-pending-large", SPEC, "worker", cpu="4", mem="8G")], 2, {}, S0_ONLY,
                 {"s0-n1": 10, "s0-n2": 10}, id="rescheduling scenario: pending tasks with different resource "
                                                "requirements"),
    pytest.param(3, HARD(1), [msub("task1", SPEC, 1, 3)],
                 [mp("p1", SPEC, "worker", "s0-n1", cpu="4", mem="4G"), mp("p2", SPEC, "worker", cpu="4", mem="4G"),
                  mp("p3", SPEC, "worker", cpu="4", mem="4G")], 0, {}, S0_ONLY, {"s0-n1": 4, "s0-n2": 4},
                 id="rescheduling scenario: insufficient resources for pending tasks allocation"),
    pytest.param(4, HARD(2), [msub("task1", SPEC, 2, 4)],
                 [mp("p1", SPEC, "worker", "s0-n1", mem="4G"), mp("p2", SPEC, "worker", "s0-n2", mem="4G"),
                  mp("p3", SPEC, "worker", mem="4G"), mp("p4", SPEC, "worker", mem="4G")], 2, {},
                 TWO_TIER, {n: 4 for n in FOUR},
                 id="rescheduling scenario: SubJob rescheduling within tier-2 HyperNode constraint"),
    pytest.param(2, None, [{"name": "worker", "matchLabelKeys": [SPEC], "subGroupSize": 1, "minSubGroups": 2}],
                 [mp("p1", SPEC, "worker-0", mem="4G"), mp("p2", SPEC, "worker-1", mem="4G")], 2, {}, [],
                 {"n1": 2, "n2": 2},
                 id="no network topology at job or subgroup level but has SubJobPolicy, can allocate job successfully"),
]


@pytest.mark.parametrize("min_member, job_nt, policies, pods, binds, where, tree, nodes", MIN_SUB_GROUPS)
def test_volcano_partitions_with_min_sub_groups(min_member, job_nt, policies, pods, binds, where, tree, nodes):
    group = pg("c1/pg1", "q1", min_member)
    if job_nt:
        group["spec"]["networkTopology"] = job_nt
    group["spec"]["subGroupPolicy"] = policies
    node_objs = [node(n, cpu, f"{2 * cpu}Gi") for n, cpu in nodes.items()]
    state = snapshot.ClusterState(nodes=node_objs, queues=[queue("q1")], podgroups=[group], pods=pods,
                                  hypernodes=tree)
    result = session.run_session(state, conf.build("allocate", UPSTREAM_TIERS), NOW)
    assert len(result.binds) == binds, result.binds
    for name, where_to in where.items():
        assert result.binds.get(f"c1/{name}") == where_to, result.binds
