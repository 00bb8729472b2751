"""predicates and its matching helpers: label requirements, node selector terms, taints and
tolerations, host ports and the pods-on-nodes index, each as masks over nodes a, b, c, d."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.framework import snapshot
from vclite.scheduler.plugins import nodematch, podindex, predicates

from .. import objects

LABELS = {"a": {"zone": "z1", "gpu": "8"}, "b": {"zone": "z2", "gpu": "2"}, "c": {"zone": "z1"}, "d": {"gpu": "x"}}


def _nodes(taints=None):
    nodes = []
    for name, labels in LABELS.items():
        n = objects.node(name, labels=labels)
        if taints and name in taints:
            n["spec"] = {"taints": taints[name]}
        nodes.append(n)
    return nodes_mod.NodeState(dims_mod.Dims(), nodes)


def mask(*names):
    return [n in names for n in LABELS]


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


@pytest.mark.parametrize("req, want", [
    pytest.param(expr("zone", "In", "z1", "z9"), mask("a", "c"), id="In"),
    pytest.param(expr("zone", "NotIn", "z1"), mask("b", "d"), id="NotIn matches nodes without the label"),
    pytest.param(expr("gpu", "Exists"), mask("a", "b", "d"), id="Exists"),
    pytest.param(expr("gpu", "DoesNotExist"), mask("c"), id="DoesNotExist"),
    pytest.param(expr("gpu", "Gt", "4"), mask("a"), id="Gt (a non-integer label never matches)"),
    pytest.param(expr("gpu", "Lt", "4"), mask("b"), id="Lt"),
    pytest.param(expr("zone", "In"), None, id="In without values is invalid"),
    pytest.param(expr("gpu", "Exists", "1"), None, id="Exists with values is invalid"),
    pytest.param(expr("gpu", "Gt", "four"), None, id="Gt with a non-integer is invalid"),
    pytest.param(expr("gpu", "Gt", "1", "2"), None, id="Gt with two values is invalid"),
    pytest.param(expr("gpu", "Near", "1"), None, id="unknown operator is invalid"),
])
def test_requirement(req, want):
    got = nodematch.NodeLabels(_nodes()).requirement(req)
    assert (None if got is None else list(got)) == want


@pytest.mark.parametrize("term, want", [
    pytest.param({"matchExpressions": [expr("zone", "In", "z1"), expr("gpu", "Exists")]}, mask("a"), id="ANDed"),
    pytest.param({"matchFields": [expr("metadata.name", "In", "c")]}, mask("c"), id="matchFields name In"),
    pytest.param({"matchFields": [expr("metadata.name", "NotIn", "c")]}, mask("a", "b", "d"), id="name NotIn"),
    pytest.param({"matchFields": [expr("metadata.name", "In", "a", "b")]}, mask(), id="field with two values: dropped"),
    pytest.param({"matchFields": [expr("metadata.uid", "In", "a")]}, mask(), id="other field: dropped"),
    pytest.param({"matchExpressions": [expr("zone", "In", "z1"), expr("gpu", "Gt", "x")]}, mask(),
                 id="one invalid expression drops the term"),
    pytest.param({}, mask(), id="an empty term matches nothing"),
])
def test_term(term, want):
    assert list(nodematch.NodeLabels(_nodes()).term(term)) == want


def _pod(selector=None, required_terms=None, preferred=None, tolerations=None, ports=None):
    p = objects.pod("ns/p", "g", selector=selector, tolerations=tolerations)
    aff = {}
    if required_terms is not None:
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if aff:
        p["spec"]["affinity"] = {"nodeAffinity": aff}
    if ports:
        p["spec"]["containers"][0]["ports"] = ports
    return p


@pytest.mark.parametrize("pod, want", [
    pytest.param(_pod(), None, id="no constraint"),
    pytest.param(_pod(selector={"zone": "z1"}), mask("a", "c"), id="nodeSelector"),
    pytest.param(_pod(required_terms=[{"matchExpressions": [expr("gpu", "Lt", "4")]},
                                      {"matchFields": [expr("metadata.name", "In", "c")]}]), mask("b", "c"),
                 id="terms are ORed"),
    pytest.param(_pod(selector={"zone": "z1"}, required_terms=[{"matchExpressions": [expr("gpu", "Exists")]}]),
                 mask("a"), id="nodeSelector and affinity both apply"),
    pytest.param(_pod(required_terms=[]), mask(), id="no terms: nothing matches"),
])
def test_required(pod, want):
    got = nodematch.NodeLabels(_nodes()).required(pod)
    assert (None if got is None else list(got)) == want


def test_preferred_score_sums_matching_weights():
    pod = _pod(preferred=[{"weight": 5, "preference": {"matchExpressions": [expr("zone", "In", "z1")]}},
                          {"weight": 3, "preference": {"matchExpressions": [expr("gpu", "Exists")]}},
                          {"weight": 0, "preference": {"matchExpressions": [expr("zone", "Exists")]}}])
    assert list(nodematch.NodeLabels(_nodes()).preferred_score(pod)) == [8, 3, 5, 3]
    assert nodematch.NodeLabels(_nodes()).preferred_score(_pod()) is None


@pytest.mark.parametrize("toleration, taint, want", [
    pytest.param({"key": "k", "operator": "Exists"}, ("k", "v", "NoSchedule"), True, id="Exists any value"),
    pytest.param({"key": "k", "value": "v"}, ("k", "v", "NoSchedule"), True, id="Equal is the default operator"),
    pytest.param({"key": "k", "value": "w"}, ("k", "v", "NoSchedule"), False, id="Equal, other value"),
    pytest.param({"key": "k", "operator": "Exists", "effect": "NoExecute"}, ("k", "", "NoSchedule"), False,
                 id="other effect"),
    pytest.param({"operator": "Exists"}, ("k", "v", "NoExecute"), True, id="empty key with Exists: everything"),
    pytest.param({"value": "x"}, ("k", "", "NoSchedule"), False, id="empty key with Equal compares values only"),
    pytest.param({"key": "j", "operator": "Exists"}, ("k", "", "NoSchedule"), False, id="other key"),
])
def test_tolerates(toleration, taint, want):
    key, value, effect = taint
    assert nodematch.tolerates(toleration, key, effect, value) is want


TAINTS = {"a": [{"key": "soft", "effect": "PreferNoSchedule"}, {"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
          "b": [{"key": "evict", "value": "1", "effect": "NoExecute"},
                {"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
          "c": [{"key": "soft", "effect": "PreferNoSchedule"}, {"key": "soft2", "effect": "PreferNoSchedule"}]}


@pytest.mark.parametrize("tolerations, want", [
    pytest.param([], {nodematch.UNTOLERATED: mask("a", "b")}, id="NoSchedule and NoExecute taints, not PreferNoSchedule"),
    pytest.param([{"key": "evict", "operator": "Exists"}], {nodematch.UNTOLERATED: mask("a", "b")},
                 id="tolerating one of two"),
    pytest.param([{"key": "gpu", "operator": "Exists"}], {nodematch.UNTOLERATED: mask("b")}, id="b's other taint"),
    pytest.param([{"operator": "Exists"}], {}, id="tolerate everything"),
])
def test_untolerated_taints(tolerations, want):
    got = nodematch.NodeTaints(_nodes(TAINTS)).untolerated(tolerations)
    assert {r: list(m) for r, m in got} == want


def test_prefer_no_schedule_counts():
    taints = nodematch.NodeTaints(_nodes(TAINTS))
    assert list(taints.prefer_counts([])) == [1, 0, 2, 0]
    soft = {"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"}
    assert list(taints.prefer_counts([soft])) == [0, 0, 1, 0]
    assert taints.any_filter and taints.any_prefer
    assert not nodematch.NodeTaints(_nodes()).any_filter


@pytest.mark.parametrize("used, wanted, want", [
    pytest.param([("TCP", 80, "0.0.0.0")], [("TCP", 80, "0.0.0.0")], True, id="same port"),
    pytest.param([("TCP", 80, "0.0.0.0")], [("UDP", 80, "0.0.0.0")], False, id="other protocol"),
    pytest.param([("TCP", 80, "10.0.0.1")], [("TCP", 80, "0.0.0.0")], True, id="wildcard wanted vs a specific IP"),
    pytest.param([("TCP", 80, "0.0.0.0")], [("TCP", 80, "10.0.0.1")], True, id="specific wanted vs wildcard used"),
    pytest.param([("TCP", 80, "10.0.0.1")], [("TCP", 80, "10.0.0.2")], False, id="two specific IPs"),
    pytest.param([("TCP", 80, "0.0.0.0")], [("TCP", 81, "0.0.0.0")], False, id="other port"),
])
def test_port_conflicts(used, wanted, want):
    nodes = _nodes()
    existing = objects.pod("ns/e", None, node="a", phase="Running")
    existing["spec"]["containers"][0]["ports"] = [{"containerPort": 1, "hostPort": p, "protocol": proto, "hostIP": ip}
                                                  for proto, p, ip in used]
    index = podindex.PodIndex(nodes, [existing])
    assert list(index.port_conflicts(wanted)) == [want, False, False, False]


def test_host_ports_defaults_and_skips_container_only_ports():
    pod = _pod(ports=[{"containerPort": 80}, {"containerPort": 81, "hostPort": 8081},
                      {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}])
    assert podindex.host_ports(pod) == [("TCP", 8081, "0.0.0.0"), ("UDP", 53, "10.0.0.1")]


def test_pod_index_follows_events_logged_before_and_after_it_is_built():
    st = objects.state(nodes=[objects.node("a"), objects.node("b")], podgroups=[objects.pg("ns/g")],
                       pods=[objects.pod("ns/run", "g", node="a", phase="Running"),
                             objects.pod("ns/done", "g", node="a", phase="Succeeded"),
                             objects.pod("ns/new", "g"), objects.pod("ns/new2", "g")])
    snap = snapshot.build(st)
    index = podindex.PodIndex(snap.nodes, st.pods)
    tasks = snap.jobs["ns/g"].tasks
    new, new2 = tasks["ns/new"], tasks["ns/new2"]
    new.node = "b"
    index.on_allocate(new)           # logged: the index is not built yet
    assert sorted(uid for uid in dict(index.placed)) == []
    assert sorted((r, p["metadata"]["name"]) for r, p in index.pods()) == [(0, "run"), (1, "new")]
    new.node = ""
    index.on_deallocate(new)         # a discarded placement no longer names its node
    new2.node = "a"
    index.on_allocate(new2)
    assert sorted((r, p["metadata"]["name"]) for r, p in index.pods()) == [(0, "new2"), (0, "run")]


@pytest.mark.parametrize("selector, want", [
    pytest.param(None, False, id="nil selects nothing"),
    pytest.param({}, True, id="empty selects everything"),
    pytest.param({"matchLabels": {"app": "x"}}, True, id="matchLabels"),
    pytest.param({"matchLabels": {"app": "y"}}, False, id="matchLabels other value"),
    pytest.param({"matchExpressions": [expr("tier", "NotIn", "db")]}, True, id="NotIn without the label"),
    pytest.param({"matchExpressions": [expr("app", "In", "x", "y"), expr("tier", "DoesNotExist")]}, True, id="ANDed"),
    pytest.param({"matchExpressions": [expr("app", "Exists"), expr("app", "In", "y")]}, False, id="one fails"),
])
def test_pod_label_selector(selector, want):
    assert podindex.selector_matches(selector, {"app": "x"}) is want


# ---- the plugin ------------------------------------------------------------------------------------
def _run_predicate(pod, nodes, args=None, others=()):
    snap = snapshot.build(objects.state(nodes=nodes, podgroups=[objects.pg("ns/g")], pods=[pod, *others]))
    task = snap.jobs["ns/g"].tasks[pod["metadata"]["uid"]]
    plugin = predicates.Predicates(args or predicates.Arguments())
    plugin._attach(snap.nodes, snap.pods)
    failures = plugin.predicate(task, snap.nodes)
    return [([r for r, _ in f.reasons], f.resolvable) for f in failures]


def test_filters_in_volcanos_order_and_resolvability():
    nodes = [objects.node("a", unschedulable=True), objects.node("b", labels={"zone": "z1"})]
    nodes[1]["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    other = objects.pod("ns/o", "g", node="b", phase="Running")
    other["spec"]["containers"][0]["ports"] = [{"containerPort": 9, "hostPort": 9}]
    pod = _pod(selector={"zone": "z1"}, ports=[{"containerPort": 9, "hostPort": 9}])
    got = _run_predicate(pod, nodes, others=[other])
    assert got == [([predicates.UNSCHEDULABLE], False), ([predicates.SELECTOR_MISMATCH], False),
                   ([nodematch.UNTOLERATED], False), ([predicates.PORTS_IN_USE], True)]
    off = predicates.Arguments(node_affinity=False, taint_toleration=False, node_ports=False)
    assert _run_predicate(pod, nodes, off, others=[other]) == [([predicates.UNSCHEDULABLE], False)]


@pytest.mark.parametrize("selector, want_selector", [
    pytest.param(None, [], id="a pod without selector, affinity or spread (the shortcut)"),
    pytest.param({"zone": "z1"}, [([predicates.SELECTOR_MISMATCH], False)], id="with a nodeSelector"),
])
def test_a_pod_without_placement_constraints_still_meets_the_other_filters(selector, want_selector):
    """The filters a pod without node affinity, selector, affinity terms or spread constraints skips could find
    nothing; unschedulable nodes, taints and host ports still refuse it, in Volcano's order."""
    nodes = [objects.node("a", unschedulable=True), objects.node("b", labels={"zone": "z1"})]
    nodes[1]["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    other = objects.pod("ns/o", "g", node="b", phase="Running")
    other["spec"]["containers"][0]["ports"] = [{"containerPort": 9, "hostPort": 9}]
    pod = _pod(selector=selector, ports=[{"containerPort": 9, "hostPort": 9}])
    assert _run_predicate(pod, nodes, others=[other]) == [
        ([predicates.UNSCHEDULABLE], False), *want_selector, ([nodematch.UNTOLERATED], False),
        ([predicates.PORTS_IN_USE], True)]


def test_a_task_without_constraints_gets_no_failures():
    assert _run_predicate(_pod(), [objects.node("a"), objects.node("b")]) == []


def test_label_columns_are_built_once_per_key():
    labels = nodematch.NodeLabels(_nodes())
    codes, vocab = labels.column("zone")
    assert labels.column("zone")[0] is codes
    assert list(codes) == [vocab["z1"], vocab["z2"], vocab["z1"], -1]
    assert labels.values("zone") == ["z1", "z2", "z1", None]
    np.testing.assert_array_equal(labels.selector({"zone": "z1", "gpu": "8"}), mask("a"))
