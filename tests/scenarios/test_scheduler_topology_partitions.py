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
