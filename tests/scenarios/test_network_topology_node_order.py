"""network-topology-aware's BatchNodeOrder: node scores for pods with and without network topology, ported
from Volcano's TestBatchNodeOrderFn (plugins/network-topology-aware) over its seven-HyperNode tree."""
import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue
from .test_scheduler_topology import hn

TREE = [hn("s0", 3, "s1", "s2", kind="HyperNode"), hn("s1", 2, "s3", "s4", kind="HyperNode"),
        hn("s2", 2, "s5", "s6", kind="HyperNode"),
        hn("s3", 1, "s3-n1", "s3-n2"), hn("s4", 1, "s4-n1", "s4-n2"),
        hn("s5", 1, "s5-n1", "s5-n2"), hn("s6", 1, "s6-n1", "s6-n2")]
SIZES = {"s3": (2, "4G", 8), "s4": (4, "4G", 8), "s5": (2, "8G", 16), "s6": (4, "8G", 16)}
NAMES = [f"{r}-n{i}" for r in SIZES for i in (1, 2)]


def nodes():
    out = []
    for name in NAMES:
        cpu, mem, foo = SIZES[name[:2]]
        n = node(name, cpu, mem)
        n["status"]["allocatable"]["example.com/foo"] = str(foo)
        out.append(n)
    return out


def foo_pod(key, group, node=None, phase="Pending", labels=None):
    p = pod(key, group, cpu="2", mem="4G", node=node, phase=phase)
    p["spec"]["containers"][0]["resources"]["requests"]["example.com/foo"] = "8"
    p["metadata"]["labels"] = labels or {}
    return p


CUSTOM = {"weight": 10, "hypernode.binpack.cpu": 1, "hypernode.binpack.memory": 4,
          "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
          "hypernode.binpack.resources.nvidia.com/gpu": 2, "hypernode.binpack.resources.example.com/foo": 3,
          "hypernode.binpack.normal-pod.enable": True, "hypernode.binpack.normal-pod.fading": 0}


def scores(arguments, pods, group=None):
    group = group or pg("ns1/pg1", "q1", 1)
    state = snapshot.ClusterState(nodes=nodes(), queues=[queue("q1")], podgroups=[group], pods=pods, hypernodes=TREE)
    tiers = [[P("network-topology-aware", arguments, enableNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values() if not t.node)
    rows = np.arange(len(ssn.nodes))
    got = np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=float), (len(rows),))
    return {ssn.nodes.names[r]: round(float(got[r]), 1) for r in rows}


def pair(s3, s4, s5, s6):
    return {f"{r}-n{i}": v for r, v in (("s3", s3), ("s4", s4), ("s5", s5), ("s6", s6)) for i in (1, 2)}


PENDING = [foo_pod("ns1/p1", "pg1")]
RUNNING_ON_S3 = PENDING + [foo_pod("ns1/p2", "pg1", "s3-n1", "Running"), foo_pod("ns1/p3", "pg1", "s3-n2", "Running")]


@pytest.mark.parametrize("arguments, pods, want", [
    pytest.param({"hypernode.binpack.normal-pod.enable": False}, PENDING, pair(0, 0, 0, 0), id="normal-pod-off"),
    # tiers 1..4 (the virtual top included), fading 0.8: s3 = (.5 + .8·.2083 + .64·.0833 + .512·.0833) / 2.952
    pytest.param({}, [pod("ns1/p1", "pg1", cpu="2", mem="4G")], pair(25.8, 21.6, 19.9, 15.7), id="defaults"),
    pytest.param(CUSTOM, PENDING, pair(500.0, 468.8, 281.2, 250.0), id="customized-fading-0"),
    pytest.param(CUSTOM, RUNNING_ON_S3, pair(0.0, 468.8, 281.2, 250.0), id="full-hypernode-scores-zero"),
])
def test_normal_pods_binpack_by_hypernode(arguments, pods, want):
    assert scores(arguments, pods) == want


def aware_group(nt_tier=2):
    group = pg("ns1/pg1", "q1", 2)
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": nt_tier}
    group["spec"]["subGroupPolicy"] = [{"name": "task1", "matchLabelKeys": ["volcano.sh/task-spec"],
                                        "networkTopology": {"mode": "hard", "highestTierAllowed": 2}}]
    return group


WORKER = {"volcano.sh/task-spec": "worker"}


@pytest.mark.parametrize("pods, want", [
    # nothing of the partition placed yet: no HyperNode to stay near, every node 0
    pytest.param([foo_pod("ns1/p1", "pg1", labels=WORKER)], pair(0, 0, 0, 0), id="first-placement-zero"),
    # p2 on s4-n1: its partition's HyperNode is s4; s3 shares s1 (tier 2: (4-2)/3), s5/s6 only s0 (tier 3: 1/3);
    # the best nodes (s4's) tie and add the share of the partition's tasks there (1 of 2)
    pytest.param([foo_pod("ns1/p1", "pg1", labels=WORKER), foo_pod("ns1/p2", "pg1", "s4-n1", "Running", WORKER)],
                 pair(66.7, 150.0, 33.3, 33.3), id="stay-near-the-partition"),
    # placed on s3-n1 and s4-n1: their HyperNode is s1; s3 and s4 tie at (4-2)/3 and add 1/3 each
    pytest.param([foo_pod("ns1/p1", "pg1", labels=WORKER), foo_pod("ns1/p2", "pg1", "s4-n1", "Running", WORKER),
                  foo_pod("ns1/p3", "pg1", "s3-n1", "Running", WORKER)],
                 pair(100.0, 100.0, 33.3, 33.3), id="lca-tier-and-task-share"),
])
def test_pods_with_network_topology_stay_near_their_partition(pods, want):
    assert scores({}, pods, aware_group()) == want


def test_a_pod_in_a_partition_without_topology_is_scored_as_a_normal_pod():
    group = aware_group()
    group["spec"]["subGroupPolicy"][0].pop("networkTopology")
    pods = [foo_pod("ns1/p1", "pg1", labels=WORKER), foo_pod("ns1/p2", "pg1", "s4-n1", "Running", WORKER)]
    assert scores(CUSTOM, pods, group) == scores(CUSTOM, pods, pg("ns1/pg1", "q1", 1))


@pytest.mark.parametrize("racks", [
    pytest.param({"s0": ("s0-n1", "s0-n2"), "s1": ("s1-n3", "s1-n4"), "s2": ("s2-n5", "s2-n6")}, id="upstream"),
    pytest.param({"s0": ("n1", "n4"), "s1": ("n2", "n5"), "s2": ("n3", "n6")}, id="racks-interleaved-by-name"),
])
def test_volcano_hypernode_binpack_with_network_topologies(racks):
    """allocate_test.go TestHyperNodeBinpackWithNetWorkTopologies: a 4-pod gang (hard, tier 2) over three
    racks of two one-pod nodes fills two racks (2 + 2): each pod prefers the nodes nearest to those placed,
    then the rack holding more of its tasks (with name order alone, interleaved racks would get 1+1+1+1)."""
    tree = [hn(r, 1, *members) for r, members in racks.items()] + [hn("s3", 2, *racks, kind="HyperNode")]
    group = pg("c1/pg1", "q1", 4)
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 2}
    roles = ["master", "worker", "worker", "worker"]
    pods = []
    for i, role in enumerate(roles):
        p = pod(f"c1/p{i + 1}", "pg1", cpu="4", mem="8Gi")
        p["metadata"]["labels"] = {"volcano.sh/task-spec": role}
        pods.append(p)
    nodes_ = [node(n, 4, "8Gi") for members in racks.values() for n in members]
    tiers = [[P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True, enableJobStarving=True),
              P("predicates", enablePredicate=True),
              P("network-topology-aware", enableNodeOrder=True, enabledHyperNodeOrder=True)]]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], podgroups=[group], pods=pods, hypernodes=tree)
    binds = session.run_session(state, conf.build("allocate", tiers), NOW).binds
    per_rack = sorted(sum(1 for n in binds.values() if n in members) for members in racks.values())
    assert per_rack == [0, 2, 2], binds


def test_normal_pods_follow_the_hypernode_usage_this_session_made():
    """Upstream's HyperNode resource cache is updated by the Allocate/Deallocate events of the session: a
    pod placed earlier in the session makes its rack fuller for the next pod's bin-packing. a1 takes a
    4-cpu pod (rack-a 5/8 for the next 1-cpu pod) where rack-b, which already runs 2 cpu, offers 3/8."""
    tree = [hn("rack-a", 1, "a1", "a2"), hn("rack-b", 1, "b1", "b2")]
    nodes_ = [node(n, 4, "8Gi") for n in ("a1", "a2", "b1", "b2")]
    first, second = pg("c1/first", "q1", 1, created="2026-01-01T00:00:00Z"), pg("c1/second", "q1", 1,
                                                                                created="2026-01-01T00:01:00Z")
    pods = [pod("c1/busy", "busy", cpu="2", mem="", node="b1", phase="Running"),
            pod("c1/first-0", "first", cpu="4", mem="", selector={"kubernetes.io/hostname": "a1"}),
            pod("c1/second-0", "second", cpu="1", mem="")]
    nodes_[0]["metadata"]["labels"] = {"kubernetes.io/hostname": "a1"}
    tiers = [[P("predicates", enablePredicate=True), P("network-topology-aware", enableNodeOrder=True)]]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], podgroups=[first, second], pods=pods,
                                  hypernodes=tree)
    binds = session.run_session(state, conf.build("allocate", tiers), NOW).binds
    assert binds == {"c1/first-0": "a1", "c1/second-0": "a2"}


def test_fading_zero_with_a_tier_zero_hypernode_scores_by_tier_zero():
    """0^(0-1) is infinite (upstream's math.Pow; Python's ** raised ZeroDivisionError and stopped the
    session): tier 0 alone counts, the limit of the weighted mean."""
    tree = [hn("t0-a", 0, "a1"), hn("t0-b", 0, "b1"), hn("rack", 1, "t0-a", "t0-b", kind="HyperNode")]
    state = snapshot.ClusterState(nodes=[node("a1", 4, "8Gi"), node("b1", 2, "8Gi")], queues=[queue("q1")],
                                  podgroups=[pg("c1/pg", "q1", 1)], pods=[pod("c1/p", "pg", cpu="1", mem="")],
                                  hypernodes=tree)
    tiers = [[P("network-topology-aware", {"hypernode.binpack.normal-pod.fading": 0}, enableNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values())
    got = np.asarray(ssn.node_order(task, np.arange(2)), dtype=float)
    assert [round(float(v), 1) for v in got] == [25.0, 50.0]   # 1/4 and 1/2 of each tier-0 HyperNode


def test_without_hypernodes_batch_node_order_is_not_registered():
    """Every node is in the virtual top alone and would score alike: nothing to pay for per task."""
    from vclite.scheduler.framework import hooks
    state = snapshot.ClusterState(nodes=[node("a1", 4, "8Gi")], queues=[queue("q1")],
                                  podgroups=[pg("c1/pg", "q1", 1)], pods=[pod("c1/p", "pg", cpu="1")])
    tiers = [[P("network-topology-aware", enableNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    assert ssn.hooks.flat(hooks.Point.NODE_ORDER) == []


def test_hypernode_order_counts_what_this_session_pipelined():
    """HyperNodeOrder reads the same event-fed cache: a pod pipelined earlier in the session (waiting for a
    Releasing pod on b1) makes rack-b fuller. rack-a holds 5 of 8 cpus, rack-b 4 (2 running, 2 releasing) and
    then `first`'s 2 pipelined: the 2-cpu gang packs rack-b (8/8) rather than rack-a (7/8)."""
    tree = [hn("rack-a", 1, "a1", "a2"), hn("rack-b", 1, "b1", "b2")]
    nodes_ = [node(n, 4, "8Gi", labels={"kubernetes.io/hostname": n}) for n in ("a1", "a2", "b1", "b2")]
    first = pg("c1/first", "q1", 1, created="2026-01-01T00:00:00Z")
    gang = pg("c1/gang", "q1", 2, created="2026-01-01T00:01:00Z")
    gang["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    pods = [pod("c1/r1", "other", cpu="4", mem="", node="a1", phase="Running"),
            pod("c1/r2", "other", cpu="1", mem="", node="a2", phase="Running"),
            pod("c1/r3", "other", cpu="2", mem="", node="b1", phase="Running"),
            pod("c1/r4", "other", cpu="2", mem="", node="b1", phase="Running", deleting=True),
            pod("c1/first-0", "first", cpu="2", mem="", selector={"kubernetes.io/hostname": "b1"}),
            pod("c1/gang-0", "gang", cpu="1", mem=""), pod("c1/gang-1", "gang", cpu="1", mem="")]
    tiers = [[P("gang", enableJobReady=True, enableJobPipelined=True, enableJobOrder=True),
              P("predicates", enablePredicate=True),
              P("network-topology-aware", enabledHyperNodeOrder=True, enableNodeOrder=True)]]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], podgroups=[first, gang], pods=pods,
                                  hypernodes=tree)
    result = session.run_session(state, conf.build("allocate", tiers), NOW)
    assert result.pipelined == {"c1/first": ["b1"]}
    assert sorted(result.binds.items()) == [("c1/gang-0", "b2"), ("c1/gang-1", "b2")], result.binds
