"""Placement scenarios: binpack and nodeorder scores (reference §4.6: BINPACK-01, NODEORDER-01/02/04/06/07),
predicates (node affinity, taints, host ports, max pods, inter-pod affinity, topology spread) and
overcommit at enqueue, each one pure `run_session` (or, for BINPACK-01, a direct NodeOrder call as
upstream's test does). Builders come
from test_scheduler_scenarios; tiers built in code have every enable flag OFF unless listed."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import predicates

from .test_scheduler_scenarios import NOW, P, Case, node, pg, pod, queue, run, unschedulable_message


def spec(obj, **fields):
    """`obj` with extra pod/node spec fields (affinity, tolerations, taints, topologySpreadConstraints...)."""
    obj.setdefault("spec", {}).update(fields)
    return obj


def labelled(obj, **labels):
    obj["metadata"].setdefault("labels", {}).update(labels)
    return obj


def requests(obj, **extra):
    obj["spec"]["containers"][0]["resources"]["requests"].update(extra)
    return obj


def allocatable(obj, **extra):
    obj["status"]["allocatable"].update(extra)
    return obj


def ports(obj, *host_ports, ip=None, protocol=None):
    extra = {**({"hostIP": ip} if ip else {}), **({"protocol": protocol} if protocol else {})}
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": p, "hostPort": p, **extra} for p in host_ports]
    return obj


# ---- BINPACK-01: direct NodeOrder scores -----------------------------------------------------------
BINPACK_ARGS = {"binpack.weight": 10, "binpack.cpu": 2, "binpack.memory": 3,
                "binpack.resources": "nvidia.com/gpu, example.com/foo",
                "binpack.resources.nvidia.com/gpu": 7, "binpack.resources.example.com/foo": 8}


BINPACK_02_ARGS = {"binpack.weight": 1, "binpack.cpu": 1, "binpack.memory": 1, "binpack.resources": "nvidia.com/gpu",
                   "binpack.resources.nvidia.com/gpu": 23}


@pytest.mark.parametrize("args, want", [
    pytest.param(BINPACK_ARGS, {"p1": [700, 137.5, 0], "p2": [0, 375, 0], "p3": [0, 531.25, 0],
                                "p4": [0, 173.076923076, 0]}, id="BINPACK-01"),
    pytest.param(BINPACK_02_ARGS, {"p1": [75, 15.625, 0], "p2": [0, 37.5, 0], "p3": [0, 50.5, 0], "p4": [0, 50, 0]},
                 id="BINPACK-02 unit weights, gpu 23"),
])
def test_binpack_scores(args, want):
    """binpack_test.go TestNode (both cases): NodeOrder scores of each pending or bound task on each node."""
    nodes = [node("n1", 2, "4Gi"), allocatable(node("n2", 4, "16Gi"), **{"nvidia.com/gpu": "4"}),
             allocatable(node("n3", 2, "4Gi"), **{"example.com/foo": "16"})]
    pods = [pod("c1/p1", "pg1", "1", "1Gi", node="n1"), pod("c1/p2", "pg1", "1500m", None, node="n3"),
            requests(pod("c1/p3", "pg1", "2", "10Gi"), **{"nvidia.com/gpu": "2"}),
            requests(pod("c1/p4", "pg1", "3", "4Gi"), **{"example.com/foo": "3"})]
    c = conf.build("allocate", [[P("binpack", args, enableNodeOrder=True)]])
    ssn = session.open_session(snapshot.ClusterState(nodes, [queue("c1")], [pg("c1/pg1", "c1", 0)], pods), c, NOW)
    rows = np.arange(3)
    got = {t.name: list(ssn.node_order(t, rows)) for t in ssn.jobs["c1/pg1"].tasks.values()}
    for name, scores in want.items():
        assert got[name] == pytest.approx(scores, abs=1e-6), name


# ---- NODEORDER-*: tiers gang{jobReady}, nodeorder{nodeOrder} with all eight weights given ----------
WEIGHTS = ("leastrequested", "mostrequested", "balancedresource", "nodeaffinity", "podaffinity", "tainttoleration",
           "imagelocality", "podtopologyspread")


def t_nodeorder(**weights):
    args = {f"{w}.weight": weights.get(w, 0) for w in WEIGHTS}
    return [[P("gang", enableJobReady=True), P("nodeorder", args, enableNodeOrder=True)]]


HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
PREFER_ZONE1 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1"]}]}}]}}
PREFER_S1 = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"service": "s1"}}, "topologyKey": HOST}}]}}
SPREAD_ZONE = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "foo"}}}]


def _hosts(*names, cpu=2, mem="4Gi"):
    return [node(n, cpu, mem, labels={HOST: n}) for n in names]


def _zones(cpu=4, mem="4Gi"):
    return [node(f"n{i}", cpu, mem, labels={ZONE: f"zone{i}"}) for i in (1, 2, 3)]


NODEORDER = [
    pytest.param(Case(t_nodeorder(leastrequested=1), "allocate", [node("n1", 2, "4Gi"), node("n2", 4, "8Gi")],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1")], bind={"c1/p1": "n2"}),
                 id="NODEORDER-01 least requested picks the emptier node"),
    pytest.param(Case(t_nodeorder(mostrequested=1), "allocate", [node("n1", 2, "4Gi"), node("n2", 4, "8Gi")],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1")], bind={"c1/p1": "n1"}),
                 id="NODEORDER-02 most requested picks the fuller node"),
    pytest.param(Case(t_nodeorder(balancedresource=10), "allocate", [node("n1", 2, "2Gi"), node("n2", 4, "2Gi")],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1", "1", "1Gi")],
                      bind={"c1/p1": "n1"}),
                 id="NODEORDER-03 balanced allocation prefers the balanced node"),
    pytest.param(Case(t_nodeorder(balancedresource=10), "allocate", [node("n1", 4, "2Gi"), node("n2", 2, "2Gi")],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1", "1", "1Gi")],
                      bind={"c1/p1": "n2"}),
                 id="NODEORDER-03b the same with the balanced node second (against the name tie-break)"),
    pytest.param(Case(t_nodeorder(nodeaffinity=10), "allocate",
                      [node("n1", 2, "4Gi", labels={ZONE: "zone1"}), node("n2", 2, "4Gi", labels={ZONE: "zone2"})],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [spec(pod("c1/p1", "pg1"), affinity=PREFER_ZONE1)],
                      bind={"c1/p1": "n1"}),
                 id="NODEORDER-04 preferred node affinity"),
    pytest.param(Case(t_nodeorder(nodeaffinity=10), "allocate",
                      [node("n1", 2, "4Gi", labels={ZONE: "zone2"}), node("n2", 2, "4Gi", labels={ZONE: "zone1"})],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [spec(pod("c1/p1", "pg1"), affinity=PREFER_ZONE1)],
                      bind={"c1/p1": "n2"}),
                 id="NODEORDER-04b the same with zone1 on the second node (against the name tie-break)"),
    pytest.param(Case(t_nodeorder(podaffinity=10), "allocate", _hosts("n1", "n2", "n3"), [queue("c1")],
                      [pg("c1/pg1", "c1", 0), pg("c1/pg0", "c1", 0, "Running")],
                      [labelled(pod("c1/p1", "pg0", node="n1", phase="Running"), service="s1"),
                       labelled(pod("c1/p-noise", "pg0", node="n3", phase="Running"), service="s2"),
                       spec(pod("c1/p2", "pg1"), affinity=PREFER_S1)],
                      bind={"c1/p2": "n1"}),
                 id="NODEORDER-06 preferred pod affinity"),
    pytest.param(Case(t_nodeorder(podaffinity=10), "allocate", _hosts("n1", "n2", "n3"), [queue("c1")],
                      [pg("c1/pg1", "c1", 0), pg("c1/pg0", "c1", 0, "Running")],
                      [labelled(pod("c1/p-noise", "pg0", node="n3", phase="Running"), service="s2"),
                       labelled(pod("c1/p1", "pg0", node="n2", phase="Running"), service="s1"),
                       spec(pod("c1/p2", "pg1"), affinity=PREFER_S1)],
                      bind={"c1/p2": "n2"}),
                 id="NODEORDER-06b the same with the matching pod on n2 (against the name tie-break)"),
    pytest.param(Case(t_nodeorder(podtopologyspread=10), "allocate", _zones(), [queue("c1")],
                      [pg("c1/pg1", "c1", 0), pg("c1/pg0", "c1", 0, "Running")],
                      [labelled(pod(f"c1/{p}", "pg0", node=n, phase="Running"), app="foo")
                       for p, n in (("p1", "n1"), ("p2", "n1"), ("p3", "n2"))]
                      + [spec(labelled(pod("c1/p4", "pg1"), app="foo"), topologySpreadConstraints=SPREAD_ZONE)],
                      bind={"c1/p4": "n3"}),
                 id="NODEORDER-07 ScheduleAnyway spread goes to the emptiest zone"),
    pytest.param(Case(t_nodeorder(tainttoleration=10), "allocate",
                      [spec(node("n1", 2, "4Gi"), taints=[{"key": "a", "value": "x", "effect": "PreferNoSchedule"}]),
                       node("n2", 2, "4Gi")],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1")], bind={"c1/p1": "n2"}),
                 id="PreferNoSchedule taint only lowers the score"),
    pytest.param(Case(t_nodeorder(tainttoleration=10), "allocate",
                      [node("n1", 2, "4Gi"),
                       spec(node("n2", 2, "4Gi"), taints=[{"key": "key1", "value": "value1",
                                                           "effect": "PreferNoSchedule"}])],
                      [queue("c1")], [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1")], bind={"c1/p1": "n1"}),
                 id="NODEORDER-05 taint toleration prefers the node without a PreferNoSchedule taint"),
    pytest.param(Case(t_nodeorder(), "allocate", [node("n2", 2, "4Gi"), node("n1", 4, "8Gi")], [queue("c1")],
                      [pg("c1/pg1", "c1", 0)], [pod("c1/p1", "pg1")], bind={"c1/p1": "n1"}),
                 id="all weights 0: equal scores break to the first node by name"),
]


# ---- predicates -----------------------------------------------------------------------------------
# predicates_test.go: required anti-affinity among `role: worker` pods per hostname (getWorkerAffinity)
WORKER_ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
     "topologyKey": "kubernetes.io/hostname"}]}}
P1_P2 = [{"metadata": {"name": "p1"}, "value": 1}, {"metadata": {"name": "p2"}, "value": 2}]


def _prio(obj, class_name):
    obj["spec"]["priorityClassName"] = class_name
    return obj


def _worker(key, group, cpu, mem, anti=True, selector=None):
    p = labelled(pod(key, group, cpu, mem, selector=selector), role="worker")
    return spec(p, affinity=WORKER_ANTI) if anti else p


VOLCANO_PREDICATES = [
    pytest.param(Case(
        [[P("predicates", enablePredicate=True), P("gang", enableJobReady=True, enableJobPipelined=True),
          P("priority", enableJobOrder=True)]], "allocate",
        [node("node1", 14, "14k", labels={"selector": "worker", "kubernetes.io/hostname": "node1"}),
         node("node2", 3, "3k", labels={"kubernetes.io/hostname": "node2"})],
        [queue("q1", weight=0)],
        [_prio(pg("ns1/pg1", "q1", 2), "p2"), _prio(pg("ns1/pg2", "q1", 1), "p1")],
        [_worker("ns1/worker-1", "pg1", "3", "3k", selector={"selector": "worker"}),
         _worker("ns1/worker-2", "pg1", "5", "5k"), _worker("ns1/worker-3", "pg2", "4", "4k")],
        bind={"ns1/worker-3": "node1"}, classes=P1_P2),
        id="PRED-01 TestEventHandler: a gang that cannot place its second worker gives its node back"),
    pytest.param(Case(
        [[P("predicates", enablePredicate=True)]], "allocate, backfill",
        [node("node1", 4, "4k", pods=2, labels={"selector": "worker"})], [queue("q1", weight=0)],
        [_prio(pg("ns1/pg1", "q1", 2), "p2"), _prio(pg("ns1/pg2", "q1", 1), "p1")],
        [labelled(pod("ns1/worker-1", "pg1", None, None, selector={"selector": "worker"}), role="worker"),
         labelled(pod("ns1/worker-2", "pg1", None, None), role="worker"),
         labelled(pod("ns1/worker-3", "pg2", None, None), role="worker")],
        bind={"ns1/worker-1": "node1", "ns1/worker-2": "node1"}, classes=P1_P2),
        id="PRED-02 TestNodeNum: best-effort pods stop at the node's pod count"),
]


@pytest.mark.parametrize("case", VOLCANO_PREDICATES)
def test_volcano_predicates(case):
    assert run(case).binds == case.bind


def _required(*exprs, fields=()):
    term = {}
    if exprs:
        term["matchExpressions"] = [{"key": k, "operator": op, **({"values": list(v)} if v is not None else {})}
                                    for k, op, v in exprs]
    if fields:
        term["matchFields"] = [{"key": "metadata.name", "operator": op, "values": [v]} for op, v in fields]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


T_PRED = [[P("gang", enableJobReady=True, enableJobPipelined=True), P("predicates", enablePredicate=True)]]
DEDICATED = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
AFFINITY_MISMATCH = predicates.SELECTOR_MISMATCH
GPU_NODES = [node("a", 4, "8Gi", labels={"gpu": "8", "zone": "z1"}), node("b", 4, "8Gi", labels={"gpu": "2"}),
             node("c", 4, "8Gi", labels={"zone": "z2"})]
NOTOL = "node(s) had untolerated taint(s)"


def _pred(pods, nodes=GPU_NODES, min_member=0, **kw):
    groups = [pg("c1/pg1", "c1", min_member), pg("c1/old", "c1", 0, "Running")]
    return Case(T_PRED, "allocate", nodes, [queue("c1")], groups, pods, **kw)


PREDICATES = [
    pytest.param(_pred([spec(pod("c1/p", "pg1"), affinity=_required(("gpu", "Gt", ["4"])))], bind={"c1/p": "a"}),
                 id="required affinity Gt"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"), affinity=_required(("gpu", "Lt", ["4"])))], bind={"c1/p": "b"}),
                 id="required affinity Lt (a label that is not there never matches)"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"), affinity=_required(("gpu", "DoesNotExist", None)))],
                       bind={"c1/p": "c"}),
                 id="required affinity DoesNotExist"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"),
                             affinity=_required(("zone", "NotIn", ["z1"]), ("gpu", "Exists", None)))],
                       bind={"c1/p": "b"}), id="expressions are ANDed; NotIn matches a missing label"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"), affinity=_required(fields=[("In", "c")]))], bind={"c1/p": "c"}),
                 id="matchFields metadata.name"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"), affinity=_required(("zone", "In", ["z9"])))], min_member=1, bind={},
                       messages={"c1/pg1": f"0/3 nodes are unavailable: 3 {AFFINITY_MISMATCH}."}),
                 id="no node matches: the reason names affinity"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"), nodeSelector={"zone": "z1"},
                             affinity=_required(("gpu", "Lt", ["4"])))],
                       min_member=1, bind={}), id="nodeSelector and required affinity must both hold"),
    pytest.param(_pred([pod("c1/p", "pg1")], min_member=1, bind={},
                       nodes=[spec(node("a", 4, "8Gi"), taints=[DEDICATED]),
                              spec(node("b", 4, "8Gi"), taints=[{"key": "x", "effect": "PreferNoSchedule"},
                                                               dict(DEDICATED, effect="NoExecute")])],
                       messages={"c1/pg1": f"0/2 nodes are unavailable: 2 {NOTOL}."}),
                 id="NoSchedule and NoExecute taints filter, named in the reason"),
    pytest.param(_pred([spec(pod("c1/p", "pg1"), tolerations=[{"key": "dedicated", "value": "ml"}])],
                       nodes=[spec(node("a", 4, "8Gi"), taints=[DEDICATED])],
                       bind={"c1/p": "a"}), id="a matching toleration lets the pod in"),
    pytest.param(_pred([ports(pod("c1/old-0", "old", node="a", phase="Running"), 8080),
                        ports(pod("c1/p", "pg1"), 8080)], nodes=GPU_NODES[:2], bind={"c1/p": "b"}),
                 id="host port used by a running pod"),
    pytest.param(_pred([ports(pod("c1/old-0", "old", node="a", phase="Running"), 8080, protocol="UDP"),
                        ports(pod("c1/p", "pg1"), 8080)], nodes=GPU_NODES[:2], bind={"c1/p": "a"}),
                 id="same port, other protocol: no conflict"),
    pytest.param(_pred([ports(pod("c1/old-0", "old", node="a", phase="Running"), 8080, ip="10.0.0.1"),
                        ports(pod("c1/p", "pg1"), 8080, ip="10.0.0.2")], nodes=GPU_NODES[:2], bind={"c1/p": "a"}),
                 id="same port on two specific host IPs: no conflict"),
    pytest.param(_pred([ports(pod(f"c1/p-{i}", "pg1"), 9000) for i in range(3)], nodes=GPU_NODES[:2], min_member=2,
                       bind={"c1/p-0": "a", "c1/p-1": "b"}),
                 id="ports taken earlier in the same session count (a gang spreads, the third waits)"),
    pytest.param(_pred([ports(pod(f"c1/p-{i}", "pg1"), 9000) for i in range(3)], nodes=GPU_NODES[:2], min_member=3,
                       bind={}, messages={"c1/pg1": f"0/2 nodes are unavailable: 2 {predicates.PORTS_IN_USE}."}),
                 id="a gang that needs the port on three nodes of two does not start"),
    pytest.param(_pred([pod(f"c1/p-{i}", "pg1", "100m", "10Mi") for i in range(3)], nodes=[node("a", 4, "8Gi", pods=2)],
                       min_member=3, bind={}, messages={"c1/pg1": "0/1 nodes are unavailable: 1 Insufficient pods."}),
                 id="max pods per node"),
]

# ---- inter-pod affinity and topology spread (kube-scheduler's filters, in one session) -------------
HOSTS = [node(n, 4, "8Gi", labels={"kubernetes.io/hostname": n, "zone": z}) for n, z in
         (("a", "z1"), ("b", "z1"), ("c", "z2"))]
ANTI_SELF = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}]}}
NEAR_DB = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]}}
SPREAD_HARD = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "w"}}}]


def _worker(i, **fields):
    return spec(labelled(pod(f"c1/w-{i}", "pg1", "100m", "10Mi"), app="w"), **fields)


INTERPOD = [
    pytest.param(_pred([_worker(i, affinity=ANTI_SELF) for i in range(3)], nodes=HOSTS, min_member=3,
                       bind={"c1/w-0": "a", "c1/w-1": "b", "c1/w-2": "c"}),
                 id="required anti-affinity spreads a gang one per node (tasks placed earlier count)"),
    pytest.param(_pred([_worker(i, affinity=ANTI_SELF) for i in range(4)], nodes=HOSTS, min_member=4, bind={},
                       messages={"c1/pg1": "0/3 nodes are unavailable: 3 node(s) didn't match pod anti-affinity "
                                           "rules."}),
                 id="four anti-affine workers on three nodes: the gang waits, saying why"),
    pytest.param(_pred([labelled(pod("c1/db", "old", "100m", "10Mi", node="c", phase="Running"), app="db"),
                        _worker(0, affinity=NEAR_DB)], nodes=HOSTS, bind={"c1/w-0": "c"}),
                 id="required affinity: the zone of the matching pod"),
    pytest.param(_pred([_worker(i, topologySpreadConstraints=SPREAD_HARD) for i in range(4)], nodes=HOSTS,
                       min_member=4, bind={"c1/w-0": "a", "c1/w-1": "c", "c1/w-2": "a", "c1/w-3": "c"}),
                 id="DoNotSchedule spread alternates zones within one session"),
]


def _role(p, role="w"):
    p["metadata"]["annotations"]["volcano.sh/task-spec"] = role
    return p


SPREAD_MESSAGE = "0/3 nodes are unavailable: 3 node(s) didn't match pod topology spread constraints."


ONE_SWITCH = [{"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "s0"},
               "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": n}}}
                                               for n in ("a", "b", "c")]}}]


def _partitioned(group):
    group["spec"]["subGroupPolicy"] = [{"name": "all", "matchLabelKeys": ["app"], "subGroupSize": 4}]


def _within_switch(group):
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}


def _partitioned_within_switch(group):
    _partitioned(group)
    group["spec"]["subGroupPolicy"][0]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}


@pytest.mark.parametrize("path", [
    pytest.param(None, id="allocate's ordinary path"),
    pytest.param(_partitioned, id="subGroupPolicy: one cache per partition's attempt"),
    pytest.param(_within_switch, id="networkTopology: one cache per HyperNode's dry run"),
    pytest.param(_partitioned_within_switch, id="a partition's networkTopology"),
])
@pytest.mark.parametrize("cache, bind", [
    pytest.param(True, {}, id="cached: zone z1 stays refused to the role, so the fourth worker fits nowhere"),
    pytest.param(False, {"c1/w-0": "a", "c1/w-1": "c", "c1/w-2": "a", "c1/w-3": "c"},
                 id="predicateErrorCacheEnable false: every worker is checked on every node"),
])
def test_the_predicate_error_cache_refuses_a_node_again_to_the_same_role(path, cache, bind):
    """Volcano's allocate caches a predicate failure per (job, role, node) for one attempt at the job's tasks: w-1
    fails on z1's nodes (z1 already has w-0: skew 2), and w-2, w-3 of the same role are refused there again
    without a check though z2 has caught up; w-3 then fails on c too (skew 2), and the gang of four waits. Derived
    from util/predicate_helper.go and allocate's allocateResourcesForTasks, which every path of allocate takes (a
    partitioned job's per partition, a networkTopology job's per HyperNode); without a role nothing is cached (the
    INTERPOD row `DoNotSchedule spread alternates zones`)."""
    workers = [_role(_worker(i, topologySpreadConstraints=SPREAD_HARD)) for i in range(4)]
    case = _pred(workers, nodes=HOSTS, min_member=4)
    if path is not None:
        path(case.podgroups[0])
    configurations = [{"name": "allocate", "arguments": {"predicateErrorCacheEnable": cache}}]
    result = session.run_session(
        snapshot.ClusterState(nodes=case.nodes, queues=case.queues, podgroups=case.podgroups, pods=case.pods,
                              hypernodes=ONE_SWITCH if path in (_within_switch, _partitioned_within_switch) else []),
        conf.build(case.actions, case.tiers, configurations), NOW)
    assert result.binds == bind
    if path is None:
        assert (SPREAD_MESSAGE in (unschedulable_message(result, "c1/pg1") or "")) == cache


@pytest.mark.parametrize("case", NODEORDER + PREDICATES + INTERPOD)
def test_placement(case: Case):
    result = run(case)
    assert result.binds == case.bind
    for key, want in (case.messages or {}).items():
        assert want in (unschedulable_message(result, key) or ""), result.podgroup_status.get(key)


def test_predicate_arguments_turn_filters_off():
    tainted = spec(node("a", 4, "8Gi"), taints=[DEDICATED])
    pods = [ports(pod("c1/old-0", "old", node="a", phase="Running"), 8080),
            spec(ports(pod("c1/p", "pg1"), 8080), affinity=_required(("zone", "In", ["nowhere"])))]
    args = {"predicate.NodeAffinityEnable": False, "predicate.TaintTolerationEnable": False,
            "predicate.NodePortsEnable": False}
    tiers = [[P("gang", enableJobReady=True), P("predicates", args, enablePredicate=True)]]
    case = Case(tiers, "allocate", [tainted], [queue("c1")], [pg("c1/pg1", "c1", 1), pg("c1/old", "c1", 0, "Running")],
                pods)
    assert run(case).binds == {"c1/p": "a"}
    assert run(dataclasses.replace(case, tiers=T_PRED)).binds == {}


def test_reasons_are_kube_schedulers():
    assert predicates.SELECTOR_MISMATCH == "node(s) didn't match Pod's node affinity/selector"
    assert predicates.PORTS_IN_USE == "node(s) didn't have free ports for the requested pod ports"


# ---- the default configuration places by these scores too ------------------------------------------
def _default_tiers(extra=()):
    return [[P("priority", enableJobOrder=True, enableTaskOrder=True),
             P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True)],
            [P("overcommit", enableJobEnqueued=True), P("predicates", enablePredicate=True),
             P("proportion", enableQueueOrder=True, enabledAllocatable=True, enabledOverused=True,
               enableJobEnqueued=True),
             P("nodeorder", enableNodeOrder=True), *extra]]


def test_default_nodeorder_spreads_and_binpack_packs():
    nodes = [node("a", 4, "8Gi"), node("b", 4, "8Gi")]
    pods = [pod(f"c1/p-{i}", "pg1", "1", "1Gi") for i in range(2)]
    spread = run(Case(_default_tiers(), "allocate", nodes, [queue("c1")], [pg("c1/pg1", "c1", 2)], pods))
    assert spread.binds == {"c1/p-0": "a", "c1/p-1": "b"}
    packed = run(Case(_default_tiers([P("binpack", {"binpack.weight": 10}, enableNodeOrder=True)]), "allocate",
                      nodes, [queue("c1")], [pg("c1/pg1", "c1", 2)], pods))
    assert packed.binds == {"c1/p-0": "a", "c1/p-1": "a"}


# ---- overcommit at enqueue -------------------------------------------------------------------------
def _enqueue(factor_args):
    tiers = [[P("overcommit", factor_args, enableJobEnqueued=True)]]
    jobs = [pg(f"c1/j{i}", "c1", 1, "Pending", min_resources={"cpu": "3", "memory": "1Gi"},
               created=f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    return run(Case(tiers, "enqueue", [node("a", 4, "8Gi"), node("b", 4, "8Gi")], [queue("c1")], jobs, []))


@pytest.mark.parametrize("args, admitted", [
    pytest.param({}, 3, id="default 1.2: 8 cpu admit 9.6 cpu of 3-cpu jobs -> 3"),
    pytest.param({"overcommit-factor": 1.0}, 2, id="factor 1.0: exactly the cluster -> 2"),
    pytest.param({"overcommit-factor": 2.0, "overcommit-factor.cpu": 1.0}, 2, id="per-resource factor for cpu"),
])
def test_overcommit_limits_enqueue(args, admitted):
    result = _enqueue(args)
    phases = [result.podgroup_status[f"c1/j{i}"]["phase"] for i in range(3)]
    assert phases.count("Inqueue") == admitted
    if admitted < 3:
        assert ("resource in cluster is overused: overused cpu; "
                "job needs cpu 3") in unschedulable_message(result, "c1/j2")
