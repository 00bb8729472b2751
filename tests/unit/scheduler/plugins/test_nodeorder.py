"""nodeorder: kube-scheduler's score formulas (worked values), their vector and per-node forms
agreeing to the bit, the session's cached scores staying equal to a fresh computation through
statement operations, and the inter-pod scores (affinity, topology spread)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.scheduler import conf
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.plugins import binpack, interpod, nodeorder, podindex

from .. import objects

GI = 2**30
NO = nodeorder


def a(*values):
    return np.array(values, dtype=np.float64)


@pytest.mark.parametrize("fn, req, alloc, want", [
    pytest.param(NO.least_requested, a(1000, 2500, 0), a(2000, 2000, 2000), [50, 0, 100], id="least"),
    pytest.param(NO.least_requested, a(10**9), a(4 * GI), [76], id="least rounds down (76.7)"),
    pytest.param(NO.most_requested, a(1000, 2500, 0), a(2000, 2000, 2000), [50, 100, 0], id="most caps at alloc"),
])
def test_resource_scores(fn, req, alloc, want):
    assert list(fn(req, alloc)) == want


@pytest.mark.parametrize("fractions, present, want", [
    pytest.param([a(0.5), a(0.25)], [None, None], [87], id="two: (1 - |Δ|/2)·100 = 87.5 -> 87"),
    pytest.param([a(0.93), a(0.07)], [None, None], [56], id="upstream float steps: (1 − 0.86…01/2)·100 -> 56"),
    pytest.param([a(0.2), a(0.4), a(0.6)], [None, None, None], [83], id="three: population std"),
    pytest.param([a(0.2), a(0.4), a(0.9)], [None, None, np.array([False])], [90], id="absent resource left out"),
    pytest.param([a(0.2), a(0.4)], [None, np.array([False])], [100], id="one resource: std 0"),
])
def test_balanced(fractions, present, want):
    assert list(NO.balanced(fractions, present)) == want


@pytest.mark.parametrize("scores, weights, present, want", [
    pytest.param([a(50), a(76)], [50, 50], [None, None], [63], id="⌊(50·50 + 50·76) / 100⌋"),
    pytest.param([a(50, 50), a(76, 76)], [50, 50], [None, np.array([True, False])], [63, 50],
                 id="a node without memory averages cpu only"),
    pytest.param([a(50), a(76)], [1, 1], [np.array([False]), np.array([False])], [0], id="nothing present -> 0"),
])
def test_weighted_mean(scores, weights, present, want):
    assert list(NO.weighted_mean(scores, weights, present)) == want


@pytest.mark.parametrize("counts, want", [
    pytest.param([0, 1, 2], [100, 50, 0], id="reversed and scaled to the max"),
    pytest.param([0, 0], [100, 100], id="no taint anywhere: all 100"),
    pytest.param([1, 3], [67, 0], id="integer division as upstream"),
])
def test_normalize_reverse(counts, want):
    assert list(NO.normalize_reverse(np.array(counts))) == want


@pytest.mark.parametrize("total, containers, want", [
    pytest.param(0, 1, 0, id="below 23MB"),
    pytest.param(1000 * NO.MB, 1, 100, id="at the per-container ceiling"),
    pytest.param(500 * NO.MB, 1, 48, id="between: (500 - 23) / 977"),
    pytest.param(1000 * NO.MB, 2, 49, id="two containers double the ceiling: 977 / 1977"),
])
def test_image_priority(total, containers, want):
    assert list(NO.image_priority(np.array([float(total)]), containers)) == [want]


@pytest.mark.parametrize("name, want", [
    ("busybox", "busybox:latest"), ("registry:5000/busybox", "registry:5000/busybox:latest"), ("img:1.0", "img:1.0")])
def test_normalized_image(name, want):
    assert NO.normalized_image(name) == want


def test_weighted_sum_adds_constants_once_and_skips_none():
    got = NO.weighted_sum([(1, a(1, 2)), (3, 100.0), (2, None), (2, a(10, 0))])
    assert list(got) == [321, 302]
    assert NO.weighted_sum([(3, 100.0)]) == 300.0


def test_default_weights_are_volcanos():
    args = conf.parse({"actions": "allocate", "tiers": [{"plugins": [{"name": "nodeorder"}]}]}).tiers[0][0].args
    assert (args.leastrequested, args.mostrequested, args.balancedresource, args.nodeaffinity, args.podaffinity,
            args.tainttoleration, args.imagelocality, args.podtopologyspread) == (1, 0, 1, 2, 2, 3, 1, 2)


# ---- vector and per-node forms agree; the cache equals a fresh computation ------------------------
W = NO.Arguments(leastrequested=2, mostrequested=3, balancedresource=5)
amounts = st.integers(0, 64_000)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(amounts, amounts, st.integers(1, 64_000), st.integers(1, 64_000)), min_size=1, max_size=8),
       amounts, amounts)
def test_resource_formula_vector_equals_scalar(nodes, cpu, mem):
    uc, um, ac, am = (a(*col) for col in zip(*nodes))
    vec = NO.resource_formula(uc, um, ac, am, float(cpu), float(mem), W, np.floor, np.minimum, np.maximum)
    one = [NO.resource_formula(float(x), float(y), float(p), float(q), float(cpu), float(mem), W, math.floor, min, max)
           for x, y, p, q in nodes]
    assert list(vec) == one


CONF = conf.build("allocate", [[conf.plugin("nodeorder", {"mostrequested.weight": 1}, enableNodeOrder=True),
                                conf.plugin("binpack", {"binpack.weight": 3}, enableNodeOrder=True)]])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["allocate", "pipeline", "evict", "commit", "discard"]),
                          st.integers(0, 5), st.integers(0, 3)), max_size=25))
def test_session_scores_equal_fresh_ones_through_statement_operations(ops):
    """The session caches the row-local resource and binpack scores per request and recomputes
    changed nodes (a few rows through the per-row Python formulas): always equal to a fresh sum."""
    nodes = [objects.node(f"n{i}", cpu=str(4 + i), mem=f"{8 + i}Gi") for i in range(4)]
    pods = [objects.pod(f"ns/p-{i}", "g", cpu=f"{500 * (1 + i % 3)}m", mem=f"{1 + i % 2}Gi") for i in range(6)]
    pods.append(objects.pod("ns/r-0", "g", cpu="1", node="n1", phase="Running"))
    ssn = session.open_session(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g", min_member=0)], pods=pods),
                               CONF, objects.NOW)
    no, bp = ssn.plugins
    tasks = sorted(ssn.jobs["ns/g"].tasks.values(), key=lambda t: t.name)
    rows = np.arange(4)
    stmt = ssn.statement()
    for op, t, n in ops:
        task = tasks[t]
        if op in ("allocate", "pipeline") and task.status.value == "Pending":
            getattr(stmt, op)(task, n)
        elif op == "evict" and task.status.value in ("Running", "Bound", "Binding"):
            stmt.evict(task)
        elif op == "commit":
            stmt.commit()
        elif op == "discard":
            stmt.discard()
        for probe in tasks:
            fresh = 0 + no.node_order(probe, rows) + no._resource_scores(no.resource_key(probe), slice(None))
            fresh = fresh + binpack.score(bp.key(probe), ssn.nodes.allocatable, ssn.nodes.used, slice(None),
                                          bp.weights, 3)
            assert list(ssn.node_order(probe, rows)) == list(fresh)


def test_few_rows_use_the_per_row_formula_with_the_same_result():
    nodes = [objects.node(f"n{i}", cpu=str(2 + i), mem=f"{3 + 2 * i}Gi") for i in range(20)]
    ssn = session.open_session(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g")],
                                             pods=[objects.pod("ns/p", "g", cpu="700m", mem="1500Mi")]),
                               CONF, objects.NOW)
    no, bp = ssn.plugins
    task = ssn.jobs["ns/g"].tasks["ns/p"]
    few, every = np.array([1, 7, 19]), np.arange(20)
    assert list(no.resource_order(task, few)) == list(no.resource_order(task, every)[few])
    assert list(bp.node_order(task, few)) == list(bp.node_order(task, every)[few])



@pytest.mark.parametrize("conf_", [pytest.param(CONF, id="nodeorder with binpack"),
                                   pytest.param(objects.default_conf(), id="default (constant scores folded in)")])
def test_the_scalar_form_gives_resource_orders_values(conf_):
    """`resource_row(key)` (the session's few-row form, hooks `row=`) gives each node what `resource_order` gives
    it, the folded constant included; a gpu request has no scalar form (the array path is taken)."""
    nodes = [objects.node(f"n{i}", cpu=str(2 + i), mem=f"{3 + 2 * i}Gi") for i in range(6)]
    pods = [objects.pod("ns/p", "g", cpu="700m", mem="1500Mi"),
            objects.pod("ns/busy", "g", cpu="1", mem="1Gi", node="n2", phase="Running")]
    ssn = session.open_session(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g")], pods=pods),
                               conf_, objects.NOW)
    no = next(p for p in ssn.plugins if isinstance(p, NO.NodeOrder))
    task = ssn.jobs["ns/g"].tasks["ns/p"]
    row = no.resource_row(no.resource_key(task))
    every = no.resource_order(task, np.arange(6))
    assert [row(r) for r in range(6)] == list(every) and all(type(row(r)) is float for r in range(6))
    assert ssn.hooks.row_form(no.resource_order) is None   # (a new bound method: not the one registered)
    assert [ssn.hooks.row_form(fn) for fn, _, _ in ssn.hooks.flat(hooks.Point.NODE_ORDER)].count(None) == \
        len(ssn.hooks.flat(hooks.Point.NODE_ORDER)) - 1
    assert no.resource_row((700.0, 1500.0 * 2**20, 1.0)) is None


# ---- inter-pod scores ------------------------------------------------------------------------------
HOST, ZONE, ANYWAY = "kubernetes.io/hostname", "zone", "ScheduleAnyway"


def _session(nodes, pods, weights):
    args = {f"{k}.weight": 0 for k in ("leastrequested", "balancedresource", "nodeaffinity", "podaffinity",
                                       "tainttoleration", "imagelocality", "podtopologyspread")}
    args.update({f"{k}.weight": v for k, v in weights.items()})
    c = conf.build("allocate", [[conf.plugin("nodeorder", args, enableNodeOrder=True)]])
    st_ = objects.state(nodes=nodes, podgroups=[objects.pg("ns/g", min_member=0)], pods=pods)
    return session.open_session(st_, c, objects.NOW)


def _labelled(pod, **labels):
    pod["metadata"]["labels"] = labels
    return pod


def test_spread_scores_nodeorder_07_numbers():
    nodes = [objects.node(f"n{i}", labels={ZONE: f"z{i}"}) for i in (1, 2, 3)]
    placed = [_labelled(objects.pod(f"ns/p{i}", "g", node=n, phase="Running"), app="foo")
              for i, n in ((1, "n1"), (2, "n1"), (3, "n2"))]
    new = _labelled(objects.pod("ns/p4", "g"), app="foo")
    new["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": ANYWAY,
                                                 "labelSelector": {"matchLabels": {"app": "foo"}}}]
    ssn = _session(nodes, placed + [new], {"podtopologyspread": 1})
    no = ssn.plugins[0]
    # counts 2, 1, 0; ln(3 + 2) = 1.609: raw 3, 2, 0 -> 100·(3 + 0 − s)/3
    assert list(no.interpod.spread_scores(new, np.arange(3))) == [0, 33, 100]
    other_ns = dict(new, metadata=dict(new["metadata"], namespace="other"))
    assert list(no.interpod.spread_scores(other_ns, np.arange(3))) == [100, 100, 100]


def test_spread_ignores_nodes_without_the_key():
    nodes = [objects.node("n1", labels={ZONE: "z1"}), objects.node("n2")]
    new = _labelled(objects.pod("ns/p", "g"), app="foo")
    new["spec"]["topologySpreadConstraints"] = [{"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": ANYWAY,
                                                 "labelSelector": {}}]
    no = _session(nodes, [new], {"podtopologyspread": 1}).plugins[0]
    assert list(no.interpod.spread_scores(new, np.arange(2))) == [100, 0]


def _aff(kind, when, weight, selector, key=HOST, **term):
    t = {"labelSelector": {"matchLabels": selector}, "topologyKey": key, **term}
    if when == "required":
        return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [t]}}
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": t}]}}


@pytest.mark.parametrize("incoming, existing_aff, want", [
    pytest.param(_aff("podAffinity", "preferred", 10, {"app": "db"}), None, [100, 0, 0], id="preferred affinity"),
    pytest.param(_aff("podAntiAffinity", "preferred", 10, {"app": "db"}), None, [0, 100, 100], id="anti-affinity"),
    pytest.param({}, _aff("podAffinity", "required", 0, {"app": "web"}), [100, 0, 0],
                 id="existing pod's required affinity towards the incoming pod (symmetry)"),
    pytest.param({}, _aff("podAntiAffinity", "preferred", 5, {"app": "web"}), [0, 100, 100],
                 id="existing pod's preferred anti-affinity"),
    pytest.param(_aff("podAffinity", "preferred", 10, {"app": "db"}, namespaces=["elsewhere"]), None, None,
                 id="term limited to other namespaces counts nothing"),
])
def test_pod_affinity_scores(incoming, existing_aff, want):
    nodes = [objects.node(f"n{i}", labels={HOST: f"n{i}"}) for i in (1, 2, 3)]
    existing = _labelled(objects.pod("ns/db", "g", node="n1", phase="Running"), app="db")
    if existing_aff:
        existing["spec"]["affinity"] = existing_aff
    new = _labelled(objects.pod("ns/web", "g"), app="web")
    if incoming:
        new["spec"]["affinity"] = incoming
    no = _session(nodes, [existing, new], {"podaffinity": 1}).plugins[0]
    got = no.interpod.affinity_scores(new, np.arange(3))
    assert (None if got is None else list(got)) == want


@pytest.mark.parametrize("term, owner_ns, pod_ns, want", [
    pytest.param({"labelSelector": {}}, "a", "a", True, id="default: the owner's namespace"),
    pytest.param({"labelSelector": {}}, "a", "b", False, id="other namespace"),
    pytest.param({"labelSelector": {}, "namespaces": ["b"]}, "a", "b", True, id="listed namespace"),
    pytest.param({"labelSelector": {}, "namespaceSelector": {}}, "a", "b", True, id="empty namespaceSelector: all"),
    pytest.param({"labelSelector": {}, "namespaceSelector": {"matchLabels": {"team": "x"}}}, "a", "b", True,
                 id="namespaceSelector selects the pod's namespace by its labels"),
    pytest.param({"labelSelector": {}, "namespaceSelector": {"matchLabels": {"team": "y"}}}, "a", "b", False,
                 id="namespaceSelector selecting other namespaces"),
    pytest.param({"labelSelector": {}, "namespaceSelector": {"matchLabels": {"team": "x"}}}, "b", "a", False,
                 id="a namespaceSelector replaces the owner's namespace"),
    pytest.param({"labelSelector": {}, "namespaces": ["a"], "namespaceSelector": {"matchLabels": {"team": "x"}}},
                 "c", "a", True, id="namespaces or namespaceSelector: the list"),
    pytest.param({"labelSelector": {}, "namespaces": ["a"], "namespaceSelector": {"matchLabels": {"team": "x"}}},
                 "c", "b", True, id="namespaces or namespaceSelector: the selector"),
    pytest.param({"labelSelector": {}, "namespaceSelector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["b"]}]}}, "a", "b", True,
                 id="the name label"),
    pytest.param({"labelSelector": {}, "namespaceSelector": {"matchExpressions": [
        {"key": "team", "operator": "DoesNotExist"}]}}, "a", "unknown", True,
                 id="a namespace the session does not know has no labels"),
    pytest.param({}, "a", "a", False, id="no labelSelector selects nothing"),
    pytest.param({"labelSelector": {}, "matchLabelKeys": ["rev"]}, "a", "a", False,
                 id="matchLabelKeys adds the owner's value"),
])
def test_term_matches(term, owner_ns, pod_ns, want):
    owner = {"metadata": {"namespace": owner_ns, "labels": {"rev": "1"}}}
    pod = {"metadata": {"namespace": pod_ns, "labels": {"rev": "2"}}}
    namespaces = [{"metadata": {"name": "a"}}, {"metadata": {"name": "b", "labels": {"team": "x"}}}]
    labels = podindex.PodIndex(None, [], namespaces).namespace_labels
    assert interpod.term_matches(term, owner, pod, labels) is want


def test_preferred_node_affinity_is_not_normalized():
    nodes = [objects.node("n1", labels={ZONE: "z1"}), objects.node("n2")]
    new = objects.pod("ns/p", "g")
    new["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [{"key": ZONE, "operator": "Exists"}]}}]}}
    ssn = _session(nodes, [new], {"nodeaffinity": 2})
    task = ssn.jobs["ns/g"].tasks["ns/p"]
    assert list(ssn.node_order(task, np.arange(2))) == [14, 0]


def test_image_locality():
    nodes = [objects.node("n1"), objects.node("n2")]
    nodes[0]["status"]["images"] = [{"names": ["busybox:latest"], "sizeBytes": 600 * NO.MB}]
    new = objects.pod("ns/p", "g")
    new["spec"]["containers"][0]["image"] = "busybox"
    ssn = _session(nodes, [new], {"imagelocality": 1})
    task = ssn.jobs["ns/g"].tasks["ns/p"]
    # 600MB × 1/2 nodes = 300MB: (300 − 23) / 977 -> 28
    assert list(ssn.node_order(task, np.arange(2))) == [28, 0]


def test_constant_scores_folded_into_the_cached_ones_give_the_same_totals():
    """Without preferred affinity, spread constraints, PreferNoSchedule taints or node images in the
    session, the other scores are one constant (tainttoleration's 100 × weight), added to the cached
    resource scores instead of a call per task; the totals are those of the unfolded path."""
    nodes = [objects.node(f"n{i}", cpu=str(2 + i), mem=f"{4 + i}Gi") for i in range(5)]
    pods = [objects.pod("ns/p", "g", cpu="1", mem="1Gi"),
            objects.pod("ns/busy", "g", cpu="1", node="n2", phase="Running")]
    folded = session.open_session(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g")], pods=pods),
                                  objects.default_conf(), objects.NOW)
    odd = objects.pod("other/x", None)
    odd["spec"]["affinity"] = {"podAffinity": {}}      # forces the per-task path, scores nothing
    unfolded = session.open_session(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g")], pods=pods + [odd]),
                                    objects.default_conf(), objects.NOW)
    assert [len(s.hooks.flat(hooks.Point.NODE_ORDER)) for s in (folded, unfolded)] == [1, 2]
    rows = np.arange(5)
    task_f, task_u = folded.jobs["ns/g"].tasks["ns/p"], unfolded.jobs["ns/g"].tasks["ns/p"]
    assert list(folded.node_order(task_f, rows)) == list(unfolded.node_order(task_u, rows))
