"""nodegroup: a queue's node-group affinity as predicate and score, ported from Volcano's TestNodeGroup and
TestNodeGroupResourceLimits (plugins/nodegroup), plus the plugin placing jobs in a session."""
import json

import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import nodegroup

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue


def grouped(name, cpu, mem, group=None):
    return node(name, cpu, mem, labels={nodegroup.GROUP_LABEL: group} if group else {})


NODES = [grouped("n1", 2, "4Gi", "group1"), grouped("n2", 4, "16Gi", "group2"), grouped("n3", 4, "16Gi", "group3"),
         grouped("n4", 4, "16Gi", "group4"), grouped("n5", 4, "16Gi")]


def q(name, parent=None, required=(), preferred=(), anti_required=(), anti_preferred=(), affinity=True, notes=None):
    obj = queue(name)
    if parent:
        obj["spec"]["parent"] = parent
    if affinity:
        obj["spec"]["affinity"] = {
            "nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(required),
                                  "preferredDuringSchedulingIgnoredDuringExecution": list(preferred)},
            "nodeGroupAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(anti_required),
                                      "preferredDuringSchedulingIgnoredDuringExecution": list(anti_preferred)}}
    if notes:
        obj["metadata"]["annotations"] = notes
    return obj


Q1 = dict(required=["group1", "group3"], preferred=["group3"], anti_required=["group2", "group4"],
          anti_preferred=["group4"])
ROOT = q("root", **Q1)
OK, NO = "ok", "no"


def evaluate(queues, queue_name, arguments=None, hierarchy=False, nodes=NODES, pods=()):
    option = P("nodegroup", arguments or {}, enableNodeOrder=True, enablePredicate=True,
               **({"enableHierarchy": True} if hierarchy else {}))
    group = pg("c1/pg", queue_name, 1)
    state = snapshot.ClusterState(nodes=nodes, queues=queues, podgroups=[group],
                                  pods=[pod("c1/p", "pg", cpu="2", mem="4Gi"), *pods])
    ssn = session.open_session(state, conf.build("allocate", [[option]]), NOW)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == "p")
    rows = np.arange(len(ssn.nodes))
    scores = np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=float), (len(rows),))
    rejected = {}
    for failure in ssn.predicate(task, ssn.nodes):
        for reason, mask in failure.reasons:
            for r in np.flatnonzero(mask):
                rejected.setdefault(int(r), reason)
    names = ssn.nodes.names
    return ({names[r]: float(scores[r]) for r in rows}, {names[r]: rejected.get(int(r), OK) for r in rows})


def row(n1, n2, n3, n4, n5):
    return dict(zip(("n1", "n2", "n3", "n4", "n5"), (n1, n2, n3, n4, n5)))


UPSTREAM = [
    pytest.param([q("q1", "root", **Q1)], "q1", {}, False, row(100, 0, 150, -1, 0), row(OK, NO, OK, OK, NO),
                 id="soft-constraints-subset-of-hard"),
    pytest.param([q("q2", "root", required=["group1"], preferred=["group3"], anti_required=["group2"],
                    anti_preferred=["group4"])], "q2", {}, False, row(100, 0, 50, -1, 0), row(OK, NO, OK, OK, NO),
                 id="soft-constraints-not-subset-of-hard"),
    pytest.param([q("root-no-affinity", affinity=False)], "root-no-affinity", {"strict": False}, False,
                 row(0, 0, 0, 0, 0), row(NO, NO, NO, NO, OK), id="no-affinity-non-strict-only-unlabelled-nodes"),
    pytest.param([ROOT, q("q1", "root", **Q1), q("q1-child", "q1", affinity=False)], "q1-child", {}, True,
                 row(100, 0, 150, -1, 0), row(OK, NO, OK, OK, NO), id="inherits-from-parent"),
    pytest.param([ROOT, q("q-none", "root", affinity=False), q("q-none-child", "q-none", affinity=False)],
                 "q-none-child", {}, True, row(100, 0, 150, -1, 0), row(OK, NO, OK, OK, NO),
                 id="inherits-from-ancestor"),
    pytest.param([q("q-none", "root", affinity=False)], "q-none", {}, False, row(0, 0, 0, 0, 0),
                 row(NO, NO, NO, NO, NO), id="queue-without-affinity"),
    pytest.param([q("q3", preferred=["group1", "group3"])], "q3", {"enablePreferredOrder": True}, False,
                 row(50, 0, 25, 0, 0), row(OK, NO, OK, NO, NO), id="preferred-order"),
    pytest.param([ROOT, q("q1", "root", **Q1), q("q1-child", "q1", affinity=False)], "q1-child", {}, False,
                 row(0, 0, 0, 0, 0), row(NO, NO, NO, NO, NO), id="no-inheritance-without-hierarchy"),
]


@pytest.mark.parametrize("queues, queue_name, arguments, hierarchy, scores, fits", UPSTREAM)
def test_node_group_affinity(queues, queue_name, arguments, hierarchy, scores, fits):
    got_scores, got_fits = evaluate(queues, queue_name, arguments, hierarchy)
    assert got_scores == scores
    assert {n: (OK if v == OK else NO) for n, v in got_fits.items()} == fits


def test_reasons_name_why_each_node_is_refused():
    _, fits = evaluate([q("q1", "root", **Q1)], "q1")
    assert fits == row(OK, nodegroup.UNSATISFIED, OK, OK, nodegroup.LABEL_NOT_FOUND)
    _, fits = evaluate([q("q-none", affinity=False)], "q-none")
    assert fits == row(*[nodegroup.NOT_SPECIFIED] * 4, nodegroup.LABEL_NOT_FOUND)


BIG = [grouped("n1", 16, "64Gi", "group1"), grouped("n2", 16, "64Gi", "group2")]
PREFER_BOTH = dict(preferred=["group1", "group2"])


def limits(doc):
    return {nodegroup.LIMITS_ANNOTATION: doc if isinstance(doc, str) else json.dumps(doc)}


RUNNING = [pod("c1/r1", "other", cpu="6", mem="8Gi", node="n1", phase="Running")]


@pytest.mark.parametrize("notes, fits", [
    pytest.param(None, {"n1": OK, "n2": OK}, id="no-annotation"),
    pytest.param(limits({"group1": {"cpu": "10"}}), {"n1": OK, "n2": OK}, id="under-the-limit"),
    pytest.param(limits({"group1": {"memory": "1Gi"}, "group2": {"cpu": "1"}}),
                 {"n1": nodegroup.LIMIT_EXCEEDED, "n2": nodegroup.LIMIT_EXCEEDED}, id="each-limited-dimension"),
    pytest.param(limits({"group1": {"nvidia.com/gpu": "1"}}), {"n1": OK, "n2": OK},
                 id="an-omitted-dimension-is-unlimited"),
    pytest.param(limits({"group1": {"cpu": "7"}}), {"n1": nodegroup.LIMIT_EXCEEDED, "n2": OK},
                 id="placed-pods-count-6+2-over-7"),
    pytest.param(limits("{not json"), {"n1": nodegroup.LIMIT_INVALID, "n2": nodegroup.LIMIT_INVALID},
                 id="invalid-annotation-refuses-everywhere"),
    pytest.param(limits("null"), {"n1": OK, "n2": OK}, id="json-null-is-no-limit"),   # Go: a nil map, no error
    pytest.param(limits("[]"), {"n1": nodegroup.LIMIT_INVALID, "n2": nodegroup.LIMIT_INVALID},
                 id="a-list-is-invalid"),
])
def test_node_group_resource_limits(notes, fits):
    queues = [q("q1", **PREFER_BOTH, notes=notes), queue("other")]
    others = [pg("c1/other", "q1", 1, phase="Running")]
    option = P("nodegroup", {}, enableNodeOrder=True, enablePredicate=True)
    state = snapshot.ClusterState(nodes=BIG, queues=queues, podgroups=[pg("c1/pg", "q1", 1), *others],
                                  pods=[pod("c1/p", "pg", cpu="2", mem="4Gi"), *RUNNING])
    ssn = session.open_session(state, conf.build("allocate", [[option]]), NOW)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == "p")
    got = {n: OK for n in ssn.nodes.names}
    for failure in ssn.predicate(task, ssn.nodes):
        for reason, mask in failure.reasons:
            for r in np.flatnonzero(mask):
                got[ssn.nodes.names[r]] = reason
    assert got == fits


def test_allocations_in_the_session_count_against_the_limit():
    """Two 4-cpu jobs of a queue limited to 6 cpus on group1 (preferred): the second goes to group2."""
    queues = [q("q1", preferred=["group1", "group2"], notes=limits({"group1": {"cpu": "6"}}))]
    groups = [pg("c1/a", "q1", 1, created="2026-01-01T00:00:00Z"), pg("c1/b", "q1", 1, created="2026-01-01T00:00:01Z")]
    pods = [pod("c1/a-0", "a", cpu="4", mem="1Gi"), pod("c1/b-0", "b", cpu="4", mem="1Gi")]
    tiers = [[P("gang", enableJobReady=True, enableJobOrder=True),
              P("nodegroup", {"enablePreferredOrder": True}, enableNodeOrder=True, enablePredicate=True)]]
    state = snapshot.ClusterState(nodes=BIG, queues=queues, podgroups=groups, pods=pods)
    result = session.run_session(state, conf.build("allocate", tiers), NOW)
    assert result.binds == {"c1/a-0": "n1", "c1/b-0": "n2"}


def test_unschedulable_message_names_the_reasons():
    queues = [q("q-none", affinity=False)]
    state = snapshot.ClusterState(nodes=NODES, queues=queues, podgroups=[pg("c1/pg", "q-none", 1)],
                                  pods=[pod("c1/p", "pg", cpu="2", mem="4Gi")])
    tiers = [[P("gang", enableJobReady=True), P("nodegroup", enablePredicate=True)]]
    result = session.run_session(state, conf.build("allocate", tiers), NOW)
    message = next(c["message"] for c in result.podgroup_status["c1/pg"]["conditions"] if c["type"] == "Unschedulable")
    assert "4 node group affinity not specified" in message and "1 node group label not found" in message, message


def test_a_discarded_gang_gives_its_node_group_allocations_back():
    """A 3-pod gang over a 2-cpu limit on group1 places two pods and is discarded (its third fits nowhere):
    the Deallocate events of the discard take them off the group's count (upstream's DeallocateFunc sees the
    task's node), so the next job of the queue fits under the limit."""
    queues = [q("q1", required=["group1"], notes=limits({"group1": {"cpu": "2"}}))]
    groups = [pg("c1/gang", "q1", 3, created="2026-01-01T00:00:00Z"),
              pg("c1/small", "q1", 1, created="2026-01-01T00:00:01Z")]
    pods = [*(pod(f"c1/gang-{i}", "gang", cpu="1", mem="1Gi") for i in range(3)),
            pod("c1/small-0", "small", cpu="1", mem="1Gi")]
    tiers = [[P("gang", enableJobReady=True, enableJobPipelined=True, enableJobOrder=True),
              P("nodegroup", enableNodeOrder=True, enablePredicate=True)]]
    state = snapshot.ClusterState(nodes=BIG, queues=queues, podgroups=groups, pods=pods)
    result = session.run_session(state, conf.build("allocate", tiers), NOW)
    assert result.binds == {"c1/small-0": "n1"}


def test_a_group_named_twice_in_the_preferred_list_keeps_its_first_place():
    """docs/differences.md: Volcano's index map keeps the last place (group1: 2 of 2 distinct, score 0)."""
    scores, _ = evaluate([q("q3", preferred=["group1", "group3", "group1"])], "q3", {"enablePreferredOrder": True})
    assert (scores["n1"], scores["n3"]) == (50, 25)
