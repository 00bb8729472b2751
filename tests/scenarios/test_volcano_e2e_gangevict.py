"""Volcano's e2e gang-aware eviction cases (test/e2e/gangevict/gangevict.go: GP-*, GR-*) on the embedded control
plane on a virtual clock, with upstream's gangEvictConfig (actions `allocate, backfill, gangreclaim, gangpreempt`;
priority, gang and drf with enablePreemptable false, conformance, sla, flat capacity in the first tier beside
them; overcommit, predicates, nodeorder, binpack, network-topology-aware).

As upstream: NodesNumLimit 4 with CPU1Mem1 is four nodes with one cpu and 1Gi each (upstream fills bigger kind
nodes with placeholder pods; here the nodes are that size), every queue has `deserved` set (deservedCPU: n cpu
and n Gi), victims are labelled `volcano.sh/preemptable: "true"`. The topology cases run on four 8-cpu nodes
(upstream's kwok nodes) under the tree s2 (tier 2) = {s0, s1}, s0 = {n0, n1}, s1 = {n2, n3} (tier 1).
Upstream waits for "at least n pods Running" (and 60 s for a negative); these pin the exact counts once the
sessions, evictions, the vcjob controller's replacements and the kubelet have settled.

Through the real CLI: tests/e2e/test_gangevict_vcctl.py."""
from __future__ import annotations

import pytest

from tests.scenarios.test_volcano_e2e_jobs import Cluster, task, vcjob
from vclite.api import kinds
from vclite.scheduler import conf

GANG_EVICT_CONF = """\
actions: "allocate, backfill, gangreclaim, gangpreempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
  - name: capacity
    enableHierarchy: false
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""
PRIORITIES = {"high": 100, "med": 50, "low": 10}
TIER1 = {"s0": {"n0", "n1"}, "s1": {"n2", "n3"}}


def _node(name: str, cpu: int) -> dict:
    res = {"cpu": str(cpu), "memory": f"{cpu}Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": res, "capacity": res, "conditions": [{"type": "Ready", "status": "True"}]}}


def cluster(queues: dict[str, int], guarantee: dict[str, int] | None = None, topology: bool = False,
            reclaimable: dict[str, bool] | None = None) -> Cluster:
    """Four nodes (1 cpu each, or 8 under a HyperNode tree), the queues with `deserved` cpu (and Gi)."""
    c = Cluster([_node(f"n{i}", 8 if topology else 1) for i in range(4)], conf.parse(GANG_EVICT_CONF))
    for name, value in PRIORITIES.items():
        c.client.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                         "metadata": {"name": name}, "value": value})
    for name, cpu in queues.items():
        spec = {"weight": 1, "deserved": {"cpu": str(cpu), "memory": f"{cpu}Gi"}}
        if guarantee and name in guarantee:
            spec["guarantee"] = {"resource": {"cpu": str(guarantee[name]), "memory": f"{guarantee[name]}Gi"}}
        if reclaimable and name in reclaimable:
            spec["reclaimable"] = reclaimable[name]
        c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                         "spec": spec})
    if topology:
        for name, tier, kind, members in (("s0", 1, "Node", ("n0", "n1")), ("s1", 1, "Node", ("n2", "n3")),
                                          ("s2", 2, "HyperNode", ("s0", "s1"))):
            c.client.create({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                             "metadata": {"name": name}, "spec": {"tier": tier, "members": [
                                 {"type": kind, "selector": {"exactMatch": {"name": m}}} for m in members]}})
    c.rt.settle()
    return c


def gang(name: str, queue: str, priority: str, replicas: int, min_available: int, preemptable: bool = False,
         cpu: int = 1, roles: list[tuple[str, int, int]] | None = None, tier: int | None = None,
         partitions: tuple[int, int, int] | None = None) -> dict:
    """createGangJob (one task of `replicas`), createMultiRoleGangJob (`roles`: name, replicas, minAvailable),
    createTopologyGangJob (`tier`: hard highestTierAllowed), createSubGroupTopologyGangJob (`partitions`:
    total, size, minPartitions)."""
    labels = {"volcano.sh/preemptable": "true"} if preemptable else {}
    tasks = []
    for role, rep, role_min in roles or [("t", replicas, None)]:
        t = task(role, rep, role_min, cpu=str(cpu))
        t["template"]["metadata"] = {"labels": labels}
        t["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = f"{cpu}Gi"
        if partitions:
            total, size, minimum = partitions
            t["partitionPolicy"] = {"totalPartitions": total, "partitionSize": size, "minPartitions": minimum}
        tasks.append(t)
    spec = {"minAvailable": min_available, "queue": queue, "priorityClassName": priority}
    if tier is not None:
        spec["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    return vcjob(tasks, name=name, **spec)


def run(c: Cluster, obj: dict) -> None:
    c.client.create(obj)
    for _ in range(6):   # sessions, evictions, the vcjob controller's replacements, the kubelet
        c.kubelet()


def pods(c: Cluster, job: str) -> list[dict]:
    return [p for p in c.client.list(kinds.POD, "default")
            if p["metadata"].get("annotations", {}).get("volcano.sh/job-name") == job and c.pod_phase(p) == "Running"]


def running(c: Cluster, *jobs: str) -> tuple[int, ...]:
    return tuple(len(pods(c, j)) for j in jobs)


def by_role(c: Cluster, job: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods(c, job):
        role = p["metadata"]["annotations"].get("volcano.sh/task-spec")
        out[role] = out.get(role, 0) + 1
    return out


def in_one_tier1_domain(c: Cluster, job: str) -> bool:
    nodes = {p["spec"]["nodeName"] for p in pods(c, job)}
    return any(nodes <= members for members in TIER1.values())


# ---- gangpreempt --------------------------------------------------------------------------------------------
def test_gp1_safe_bundle_preemption_evicts_surplus_and_the_victim_gang_survives():
    c = cluster({"gp-q": 4})
    run(c, gang("victim", "gp-q", "low", 4, 2, preemptable=True))
    assert running(c, "victim") == (4,)
    run(c, gang("preemptor", "gp-q", "high", 2, 2))
    assert running(c, "preemptor", "victim") == (2, 2)


def test_gp2_safe_bundles_harvested_across_gangs_none_broken():
    c = cluster({"gp-q": 4})
    run(c, gang("victim-a", "gp-q", "low", 2, 1, preemptable=True))
    run(c, gang("victim-b", "gp-q", "low", 2, 1, preemptable=True))
    run(c, gang("preemptor", "gp-q", "high", 2, 2))
    assert running(c, "preemptor", "victim-a", "victim-b") == (2, 1, 1)


def test_gp3_whole_bundle_eviction_breaks_exactly_one_gang():
    c = cluster({"gp-q": 4})
    run(c, gang("victim-a", "gp-q", "low", 2, 2, preemptable=True))
    run(c, gang("victim-b", "gp-q", "low", 2, 2, preemptable=True))
    run(c, gang("preemptor", "gp-q", "high", 2, 2))
    assert running(c, "preemptor") == (2,)
    assert sorted(running(c, "victim-a", "victim-b")) == [0, 2]


def test_gp4_whole_bundles_of_both_gangs_for_a_large_preemptor():
    c = cluster({"gp-q": 4})
    run(c, gang("victim-a", "gp-q", "low", 2, 2, preemptable=True))
    run(c, gang("victim-b", "gp-q", "low", 2, 2, preemptable=True))
    run(c, gang("preemptor", "gp-q", "high", 4, 4))
    assert running(c, "preemptor", "victim-a", "victim-b") == (4, 0, 0)


def test_gp5_basic_gang_preemption_of_a_lower_priority_gang():
    """The victim has no surplus: its whole bundle (4 pods) goes, and its 4-pod gang cannot restart on 2 nodes."""
    c = cluster({"gp-q": 4})
    run(c, gang("victim", "gp-q", "low", 4, 4, preemptable=True))
    run(c, gang("preemptor", "gp-q", "high", 2, 2))
    assert running(c, "preemptor", "victim") == (2, 0)


def test_gp6_gang_preemption_does_not_cross_queues():
    c = cluster({"q1": 2, "q2": 2}, reclaimable={"q2": False})
    run(c, gang("victim", "q2", "low", 4, 4, preemptable=True))
    run(c, gang("preemptor", "q1", "high", 2, 2))
    assert running(c, "preemptor", "victim") == (0, 4)


def test_gp7_an_equal_priority_gang_is_not_preempted():
    c = cluster({"gp-q": 4})
    run(c, gang("victim", "gp-q", "med", 4, 4, preemptable=True))
    run(c, gang("preemptor", "gp-q", "med", 2, 2))
    assert running(c, "preemptor", "victim") == (0, 4)


def test_gp8_a_medium_preemptor_cannot_evict_high_priority_victims():
    c = cluster({"gp-q": 4})
    run(c, gang("gang-a", "gp-q", "high", 2, 2, preemptable=True))
    run(c, gang("gang-b", "gp-q", "low", 2, 2, preemptable=True))
    run(c, gang("preemptor-c", "gp-q", "med", 4, 4))
    assert running(c, "preemptor-c", "gang-a", "gang-b") == (0, 2, 2)


def test_gpr1_a_role_at_its_minimum_is_kept():
    c = cluster({"gp-q": 4})
    run(c, gang("victim", "gp-q", "low", 0, 3, preemptable=True, roles=[("ps", 1, 1), ("worker", 3, 2)]))
    assert running(c, "victim") == (4,)
    run(c, gang("preemptor", "gp-q", "high", 1, 1))
    assert running(c, "preemptor", "victim") == (1, 3)
    assert by_role(c, "victim") == {"ps": 1, "worker": 2}


def test_gps1_sub_group_slack_keeps_one_partition_whole():
    c = cluster({"gp-q": 4}, topology=True)
    run(c, gang("victim", "gp-q", "low", 4, 2, preemptable=True, tier=2, partitions=(2, 2, 1)))
    run(c, gang("preemptor", "gp-q", "high", 2, 2, tier=2))
    assert running(c, "preemptor") == (2,)
    assert running(c, "victim")[0] >= 2


@pytest.mark.parametrize("victim, preemptor, cpu, want, one_domain", [
    pytest.param((4, 2), (2, 2, 1), 1, (2, 4), True, id="GP-T1: hard tier 1, within one domain"),
    pytest.param((4, 4), (3, 3, 1), 5, (0, 4), False, id="GP-T2: 3x5 cpu cannot pack into a tier-1 domain"),
    pytest.param((4, 2), (3, 3, 2), 1, (3, 4), False, id="GP-T3: hard tier 2, the wider domain"),
    pytest.param((4, 2), (2, 2, 2), 1, (2, 4), True, id="GP-T4: hard tier 2, placed within one tier-1 domain"),
])
def test_gpt_network_topology(victim, preemptor, cpu, want, one_domain):
    """The 8-cpu nodes leave room: preemption is not needed where the preemptor fits, and evicts nothing where
    it would not fit anyway (GP-T2)."""
    c = cluster({"gp-q": 16 if cpu > 1 else 4}, topology=True)
    run(c, gang("victim", "gp-q", "low", *victim, preemptable=True, tier=2))
    rep, minimum, tier = preemptor
    run(c, gang("preemptor", "gp-q", "high", rep, minimum, cpu=cpu, tier=tier))
    assert running(c, "preemptor", "victim") == want
    if one_domain:
        assert in_one_tier1_domain(c, "preemptor")


# ---- gangreclaim --------------------------------------------------------------------------------------------
def test_gr1_safe_bundle_reclaim_evicts_surplus_and_the_victim_gang_survives():
    c = cluster({"q1": 2, "q2": 2})
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True))
    run(c, gang("reclaimer", "q1", "low", 2, 2))
    assert running(c, "reclaimer", "victim") == (2, 2)


def test_gr2_whole_bundle_reclaim_breaks_exactly_one_gang():
    c = cluster({"q1": 2, "q2": 2})
    run(c, gang("victim-a", "q2", "low", 2, 2, preemptable=True))
    run(c, gang("victim-b", "q2", "low", 2, 2, preemptable=True))
    run(c, gang("reclaimer", "q1", "low", 2, 2))
    assert running(c, "reclaimer") == (2,)
    assert sorted(running(c, "victim-a", "victim-b")) == [0, 2]


def test_gr3_basic_gang_reclaim_from_an_overusing_queue():
    c = cluster({"q1": 2, "q2": 2})
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True))
    run(c, gang("reclaimer", "q1", "low", 2, 2))
    assert running(c, "reclaimer") == (2,)


def test_gr4_no_reclaim_from_queues_within_their_deserved():
    c = cluster({"q1": 2, "q2": 2, "q3": 2})
    run(c, gang("job-q2", "q2", "low", 2, 2, preemptable=True))
    run(c, gang("job-q3", "q3", "low", 2, 2, preemptable=True))
    run(c, gang("reclaimer", "q1", "low", 2, 2))
    assert running(c, "reclaimer", "job-q2", "job-q3") == (0, 2, 2)


def test_gr5_no_reclaim_from_a_queue_that_is_not_reclaimable():
    c = cluster({"q1": 2, "q2": 2})
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True))
    q2 = c.client.get(kinds.QUEUE, "", "q2")
    q2["spec"]["reclaimable"] = False
    c.client.update(q2)
    c.rt.settle()
    run(c, gang("reclaimer", "q1", "low", 2, 2))
    assert running(c, "reclaimer", "victim") == (0, 4)


def test_gr6_reclaim_stops_at_the_guarantee():
    """q2 (guarantee 2, deserved 2) uses 4: only 2 cpu may be taken back; q1 needs 4."""
    c = cluster({"q1": 4, "q2": 2}, guarantee={"q2": 2})
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True))
    run(c, gang("reclaimer", "q1", "low", 4, 4))
    assert running(c, "reclaimer", "victim") == (0, 4)


def test_gr7_an_overused_queue_does_not_reclaim():
    c = cluster({"q1": 1, "q2": 3})
    run(c, gang("job-q1", "q1", "low", 2, 2, preemptable=True))
    run(c, gang("job-q2", "q2", "low", 2, 2, preemptable=True))
    run(c, gang("reclaimer", "q1", "low", 2, 2))
    assert running(c, "reclaimer", "job-q1", "job-q2") == (0, 2, 2)


def test_grr1_a_role_at_its_minimum_is_kept():
    c = cluster({"q1": 1, "q2": 3})
    run(c, gang("victim", "q2", "low", 0, 3, preemptable=True, roles=[("ps", 1, 1), ("worker", 3, 2)]))
    run(c, gang("reclaimer", "q1", "low", 1, 1))
    assert running(c, "reclaimer", "victim") == (1, 3)
    assert by_role(c, "victim") == {"ps": 1, "worker": 2}


def test_grs1_sub_group_slack_keeps_one_partition_whole():
    c = cluster({"q1": 2, "q2": 2}, topology=True)
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True, tier=2, partitions=(2, 2, 1)))
    run(c, gang("reclaimer", "q1", "low", 2, 2, tier=2))
    assert running(c, "reclaimer") == (2,)
    assert running(c, "victim")[0] >= 2


@pytest.mark.parametrize("victim, reclaimer, cpu, want, one_domain", [
    pytest.param((4, 2), (2, 2, 1), 1, (2, 4), True, id="GR-T1: hard tier 1, within one domain"),
    pytest.param((4, 4), (3, 3, 1), 5, (0, 4), False, id="GR-T2: 3x5 cpu cannot pack into a tier-1 domain"),
    pytest.param((4, 2), (3, 3, 2), 1, (3, 4), False, id="GR-T3: hard tier 2, the wider domain"),
    pytest.param((4, 2), (2, 2, 2), 1, (2, 4), True, id="GR-T4: hard tier 2, placed within one tier-1 domain"),
])
def test_grt_network_topology(victim, reclaimer, cpu, want, one_domain):
    deserved = 16 if cpu > 1 else 2
    c = cluster({"q1": deserved, "q2": deserved}, topology=True)
    run(c, gang("victim", "q2", "low", *victim, preemptable=True, tier=2))
    rep, minimum, tier = reclaimer
    run(c, gang("reclaimer", "q1", "low", rep, minimum, cpu=cpu, tier=tier))
    assert running(c, "reclaimer", "victim") == want
    if one_domain:
        assert in_one_tier1_domain(c, "reclaimer")


# ---- not upstream: the same shapes on full nodes, where eviction is needed -------------------------------------
def small_topology_cluster(queues: dict[str, int]) -> Cluster:
    """The HyperNode tree over four 1-cpu nodes."""
    c = cluster(queues, topology=True)
    for n in c.client.list(kinds.NODE):
        res = {"cpu": "1", "memory": "1Gi", "pods": "110"}
        n["status"] = dict(n["status"], allocatable=res, capacity=res)
        c.client.update_status(n)
    c.rt.settle()
    return c


@pytest.mark.parametrize("action", ["gangpreempt", "gangreclaim"])
def test_a_hard_tier1_gang_evicts_within_one_domain(action):
    """The victim fills the four 1-cpu nodes; a 2-pod gang limited to tier 1 takes two surplus pods of one
    tier-1 HyperNode, not one here and one there."""
    q = "q1" if action == "gangreclaim" else "q2"
    c = small_topology_cluster({"q1": 2, "q2": 2})
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True, tier=2))
    assert running(c, "victim") == (4,)
    run(c, gang("starving", q, "high", 2, 2, tier=1))
    assert running(c, "starving", "victim") == (2, 2)
    assert in_one_tier1_domain(c, "starving") and in_one_tier1_domain(c, "victim")


@pytest.mark.parametrize("action", ["gangpreempt", "gangreclaim"])
def test_sub_group_slack_on_full_nodes_takes_one_partition_whole(action):
    """Two partitions of two (minPartitions 1) fill the nodes: the surplus is one whole partition, and the
    other stays (upstream GP-S1/GR-S1, where the 8-cpu nodes need no eviction)."""
    q = "q1" if action == "gangreclaim" else "q2"
    c = small_topology_cluster({"q1": 2, "q2": 2})
    run(c, gang("victim", "q2", "low", 4, 2, preemptable=True, tier=2, partitions=(2, 2, 1)))
    assert running(c, "victim") == (4,)
    run(c, gang("starving", q, "high", 2, 2, tier=2))
    assert running(c, "starving", "victim") == (2, 2)
    left = {p["metadata"]["labels"].get("volcano.sh/partition-id") for p in pods(c, "victim")}
    assert len(left) == 1, left
