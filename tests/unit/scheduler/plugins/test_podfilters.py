"""podfilters: kube-scheduler's InterPodAffinity and PodTopologySpread filters, through the
predicates plugin, over nodes a, b (zone z1), c (zone z2) and d (no zone), all with a hostname."""
from __future__ import annotations

import pytest

from vclite.scheduler.framework import snapshot
from vclite.scheduler.plugins import podfilters, predicates

from .. import objects

HOST = "kubernetes.io/hostname"
ZONES = {"a": "z1", "b": "z1", "c": "z2", "d": None}
AFF, ANTI, EXISTING = podfilters.AFFINITY_MISMATCH, podfilters.ANTI_AFFINITY_MISMATCH, podfilters.EXISTING_ANTI_AFFINITY
SKEW, MISSING = podfilters.SPREAD_MISMATCH, podfilters.SPREAD_MISSING_LABEL


def _nodes(taint_c=False):
    out = []
    for name, zone in ZONES.items():
        n = objects.node(name, labels={HOST: name, **({"zone": zone} if zone else {})})
        if taint_c and name == "c":
            n["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
        out.append(n)
    return out


def pod(key, node=None, labels=None, anti=None, aff=None, spread=None, deleting=False, selector=None):
    p = objects.pod(key, "g", node=node, phase="Running" if node else "Pending", deleting=deleting, selector=selector)
    p["metadata"]["labels"] = dict(labels or {})
    affinity = {}
    if anti is not None:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if aff is not None:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": aff}
    if affinity:
        p["spec"]["affinity"] = affinity
    if spread is not None:
        p["spec"]["topologySpreadConstraints"] = spread
    return p


def term(key=HOST, **match):
    return {"labelSelector": {"matchLabels": match}, "topologyKey": key}


def constraint(key="zone", skew=1, **extra):
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "w"}}, **extra}


def verdicts(incoming, others=(), args=None, taint_c=False):
    """node -> the reason charged to it (the first filter that rejects it), '' if it passes."""
    snap = snapshot.build(objects.state(nodes=_nodes(taint_c), podgroups=[objects.pg("ns/g")],
                                        pods=[incoming, *others]))
    task = snap.jobs["ns/g"].tasks[incoming["metadata"]["uid"]]
    plugin = predicates.Predicates(args or predicates.Arguments())
    plugin._attach(snap.nodes, snap.pods)
    out = dict.fromkeys(ZONES, "")
    for failure in plugin.predicate(task, snap.nodes):
        for reason, mask in failure.reasons:
            for name, hit in zip(ZONES, mask):
                if hit and not out[name]:
                    out[name] = reason
    return "".join(f"{n}:{_short(out[n])} " for n in ZONES).strip()


def _short(reason):
    return {"": "ok", AFF: "aff", ANTI: "anti", EXISTING: "existing", SKEW: "skew", MISSING: "missing",
            predicates.SELECTOR_MISMATCH: "selector"}.get(reason, reason)


W = {"app": "w"}
CASES = [
    # ---- anti-affinity of the incoming pod
    pytest.param(pod("ns/p", labels=W, anti=[term(app="w")]), [pod("ns/e", "a", W)],
                 "a:anti b:ok c:ok d:ok", id="anti by hostname: only the node with a match"),
    pytest.param(pod("ns/p", labels=W, anti=[term("zone", app="w")]), [pod("ns/e", "a", W)],
                 "a:anti b:anti c:ok d:ok", id="anti by zone: the whole zone; a node without the key passes"),
    pytest.param(pod("ns/p", labels=W, anti=[term(app="w")]), [pod("ns/e", "a", W, deleting=True)],
                 "a:anti b:ok c:ok d:ok", id="a terminating pod still counts for affinity"),
    pytest.param(pod("ns/p", labels=W, anti=[term(app="w")]), [pod("other/e", "a", W)],
                 "a:ok b:ok c:ok d:ok", id="terms look in the owner's namespace by default"),
    pytest.param(pod("ns/p", labels=W, anti=[dict(term(app="w"), namespaces=["other"])]), [pod("other/e", "a", W)],
                 "a:anti b:ok c:ok d:ok", id="namespaces list"),
    pytest.param(pod("ns/p", labels=W, anti=[dict(term(app="w"), namespaceSelector={})]), [pod("other/e", "a", W)],
                 "a:anti b:ok c:ok d:ok", id="empty namespaceSelector: every namespace"),
    pytest.param(pod("ns/p", labels=W, anti=[{"topologyKey": HOST}]), [pod("ns/e", "a", W)],
                 "a:ok b:ok c:ok d:ok", id="no labelSelector selects no pod"),
    pytest.param(pod("ns/p", labels={"app": "w", "run": "1"},
                     anti=[dict(term(app="w"), matchLabelKeys=["run"])]),
                 [pod("ns/e1", "a", {"app": "w", "run": "1"}), pod("ns/e2", "b", {"app": "w", "run": "2"})],
                 "a:anti b:ok c:ok d:ok", id="matchLabelKeys: same value only"),
    pytest.param(pod("ns/p", labels={"app": "w", "run": "1"},
                     anti=[dict(term(app="w"), mismatchLabelKeys=["run"])]),
                 [pod("ns/e1", "a", {"app": "w", "run": "1"}), pod("ns/e2", "b", {"app": "w", "run": "2"})],
                 "a:ok b:anti c:ok d:ok", id="mismatchLabelKeys: other values only"),
    # ---- anti-affinity of the pods already there
    pytest.param(pod("ns/p", labels=W), [pod("ns/e", "c", {"app": "db"}, anti=[term("zone", app="w")])],
                 "a:ok b:ok c:existing d:ok", id="an existing pod's anti-affinity keeps its zone free of us"),
    pytest.param(pod("ns/p", labels={"app": "x"}), [pod("ns/e", "c", {"app": "db"}, anti=[term("zone", app="w")])],
                 "a:ok b:ok c:ok d:ok", id="an existing pod's anti-affinity that does not select us"),
    # ---- affinity of the incoming pod
    pytest.param(pod("ns/p", labels=W, aff=[term("zone", app="db")]), [pod("ns/e", "c", {"app": "db"})],
                 "a:aff b:aff c:ok d:aff", id="affinity by zone"),
    pytest.param(pod("ns/p", labels=W, aff=[term("zone", app="db"), term(HOST, tier="x")]),
                 [pod("ns/e", "c", {"app": "db", "tier": "x"}), pod("ns/f", "a", {"app": "db"})],
                 "a:aff b:aff c:ok d:aff", id="a pod must match every term to count"),
    pytest.param(pod("ns/p", labels=W, aff=[term("zone", app="db")]), [],
                 "a:aff b:aff c:aff d:aff", id="nothing to be near: no node"),
    pytest.param(pod("ns/p", labels=W, aff=[term("zone", app="w")]), [],
                 "a:ok b:ok c:ok d:aff", id="the first of a group that wants to be together (nodes with the key)"),
    pytest.param(pod("ns/p", labels=W, aff=[term("zone", app="w")], anti=[term(app="w")]),
                 [pod("ns/e", "a", W)], "a:anti b:ok c:aff d:aff",
                 id="affinity to the zone, anti-affinity to the node"),
    # ---- topology spread (DoNotSchedule)
    pytest.param(pod("ns/p", labels=W, spread=[constraint()]), [pod("ns/e1", "a", W), pod("ns/e2", "b", W)],
                 "a:skew b:skew c:ok d:missing", id="z1 has 2, z2 has 0: only z2"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint(skew=2)]), [pod("ns/e1", "a", W)],
                 "a:ok b:ok c:ok d:missing", id="within maxSkew"),
    pytest.param(pod("ns/p", labels={"app": "x"}, spread=[constraint()]), [pod("ns/e1", "a", W)],
                 "a:ok b:ok c:ok d:missing", id="the pod not matching its own selector adds nothing"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint()]),
                 [pod("ns/e1", "a", W), pod("ns/e2", "c", W, deleting=True)],
                 "a:skew b:skew c:ok d:missing", id="terminating pods are not counted"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint()]), [pod("other/e1", "a", W), pod("other/e2", "b", W)],
                 "a:ok b:ok c:ok d:missing", id="only the pod's namespace is counted"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint(minDomains=3)]),
                 [pod("ns/e1", "a", W), pod("ns/e2", "c", W)],
                 "a:skew b:skew c:skew d:missing", id="fewer domains than minDomains: the minimum is 0"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint()], selector={"zone": "z1"}),
                 [pod("ns/e1", "a", W), pod("ns/e2", "b", W)],
                 "a:ok b:ok c:selector d:selector",
                 id="nodeAffinityPolicy Honor: z1 is the only domain the pod may use, so it is not skewed"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint(HOST)], selector={"zone": "z1"}),
                 [pod("ns/e1", "a", W), pod("ns/e2", "c", W), pod("ns/e3", "c", W)],
                 "a:skew b:ok c:selector d:selector",
                 id="nodeAffinityPolicy Honor: c's two pods do not count, a's one is a skew over b"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint(HOST, nodeAffinityPolicy="Ignore")],
                     selector={"zone": "z1"}),
                 [pod("ns/e1", "a", W), pod("ns/e2", "b", W)],
                 "a:skew b:skew c:selector d:selector",
                 id="nodeAffinityPolicy Ignore: c and d (0 pods) set the minimum"),
    pytest.param(pod("ns/p", labels=W, spread=[constraint("zone", nodeTaintsPolicy="Honor")]),
                 [pod("ns/e1", "a", W)], "a:skew b:skew c:ok d:missing",
                 id="nodeTaintsPolicy Honor: tainted c is not a domain, z1 alone is the minimum"),
    pytest.param(pod("ns/p", labels=W, spread=[dict(constraint(), labelSelector={})]),
                 [pod("ns/e1", "a", W), pod("ns/e2", "b", W)], "a:ok b:ok c:ok d:missing",
                 id="an empty labelSelector counts no pod"),
    pytest.param(pod("ns/p", labels=W, spread=[dict(constraint(), whenUnsatisfiable="ScheduleAnyway")]),
                 [pod("ns/e1", "a", W), pod("ns/e2", "b", W)], "a:ok b:ok c:ok d:ok",
                 id="ScheduleAnyway only scores"),
    pytest.param(pod("ns/p", labels={"app": "w", "v": "2"},
                     spread=[constraint(matchLabelKeys=["v"])]),
                 [pod("ns/e1", "a", {"app": "w", "v": "1"}), pod("ns/e2", "b", {"app": "w", "v": "1"})],
                 "a:ok b:ok c:ok d:missing", id="matchLabelKeys: other versions are not counted"),
]


@pytest.mark.parametrize("incoming, others, want", CASES)
def test_filters(incoming, others, want):
    assert verdicts(incoming, others) == want


def test_taint_honoring_needs_the_taint():
    # without nodeTaintsPolicy, tainted c is a domain with 0 pods: z1 (1 pod) is skewed
    incoming = pod("ns/p", labels=W, spread=[constraint("zone")])
    got = verdicts(incoming, [pod("ns/e1", "a", W)], taint_c=True)
    assert got.startswith("a:skew b:skew c:")   # c itself is refused by its taint, not by spread


def test_arguments_turn_the_filters_off():
    off = predicates.Arguments(pod_affinity=False, pod_topology_spread=False)
    incoming = pod("ns/p", labels=W, anti=[term(app="w")], spread=[constraint()])
    others = [pod("ns/e1", "a", W), pod("ns/e2", "b", W)]
    assert verdicts(incoming, others, off) == "a:ok b:ok c:ok d:ok"
    assert verdicts(incoming, others) == "a:anti b:anti c:ok d:missing"


def test_resolvability():
    snap = snapshot.build(objects.state(nodes=_nodes(), podgroups=[objects.pg("ns/g")], pods=[
        pod("ns/p", labels=W, aff=[term("zone", app="db")], anti=[term(app="w")], spread=[constraint()]),
        pod("ns/e1", "c", {"app": "db"}), pod("ns/e2", "c", W)]))
    task = snap.jobs["ns/g"].tasks["ns/p"]
    plugin = predicates.Predicates(predicates.Arguments())
    plugin._attach(snap.nodes, snap.pods)
    got = {f.reasons[0][0]: f.resolvable for f in plugin.predicate(task, snap.nodes)}
    assert got == {AFF: False, ANTI: True, SKEW: True, MISSING: False}


def test_pods_placed_in_the_session_count():
    snap = snapshot.build(objects.state(nodes=_nodes(), podgroups=[objects.pg("ns/g")], pods=[
        pod("ns/p1", labels=W, anti=[term(app="w")]), pod("ns/p2", labels=W, anti=[term(app="w")])]))
    tasks = snap.jobs["ns/g"].tasks
    plugin = predicates.Predicates(predicates.Arguments())
    plugin._attach(snap.nodes, snap.pods)
    assert plugin.predicate(tasks["ns/p2"], snap.nodes) == []
    tasks["ns/p1"].node = "b"
    plugin._on_allocate(tasks["ns/p1"])
    [failure] = plugin.predicate(tasks["ns/p2"], snap.nodes)
    assert failure.reasons[0][0] == ANTI and list(failure.reasons[0][1]) == [False, True, False, False]
