"""Scheduler scenarios ported from Volcano's unit tests (reference §4.1, §4.4), plus vclite's own
"why is it pending" cases. Each row: cluster objects + tiers + actions -> expected binds,
pipelined reservations, PodGroup phases and condition messages, from one pure `run_session`.
Tiers built in code have every enable flag OFF unless listed, as in Volcano's tests."""
from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from vclite.scheduler import conf, registry
from vclite.scheduler.framework import hooks, plugin, session, snapshot

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
P = conf.plugin


# ---- compact object builders --------------------------------------------------------------------
def node(name, cpu, mem, pods=10, labels=None, unschedulable=False):
    n = {"metadata": {"name": name, "labels": labels or {}},
         "status": {"allocatable": {"cpu": str(cpu), "memory": mem, "pods": str(pods)}}}
    if unschedulable:
        n["spec"] = {"unschedulable": True}
    return n


def queue(name, weight=1, capability=None, state="Open", priority=None):
    spec = {"weight": weight}
    if priority is not None:
        spec["priority"] = priority
    if capability:
        spec["capability"] = capability
    return {"metadata": {"name": name}, "spec": spec, "status": {"state": state}}


def pg(key, q, min_member, phase="Inqueue", min_task_member=None, min_resources=None, created=None):
    ns, name = key.split("/")
    spec = {"queue": q, "minMember": min_member}
    if min_task_member is not None:
        spec["minTaskMember"] = min_task_member
    if min_resources is not None:
        spec["minResources"] = min_resources
    md = {"name": name, "namespace": ns}
    if created:
        md["creationTimestamp"] = created
    return {"metadata": md, "spec": spec, "status": {"phase": phase} if phase else {}}


def pod(key, group, cpu="1", mem="1G", node=None, phase="Pending", role=None, selector=None, deleting=False):
    ns, name = key.split("/")
    md = {"name": name, "namespace": ns, "uid": key, "annotations": {"scheduling.k8s.io/group-name": group}}
    if role:
        md["annotations"]["volcano.sh/task-spec"] = role
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    requests = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v}
    spec = {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    return {"metadata": md, "spec": spec, "status": {"phase": phase}}


T_ALLOC = [[P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True, enableJobStarving=True),
            P("drf", enablePreemptable=True, enableJobOrder=True),
            P("proportion", enableQueueOrder=True, enableReclaimable=True, enabledAllocatable=True),
            P("predicates", enablePredicate=True), P("nodeorder", enableNodeOrder=True)]]
T_FAIR = [[P("drf", enablePreemptable=True, enableJobOrder=True),
           P("proportion", enableQueueOrder=True, enableReclaimable=True, enabledAllocatable=False),
           P("predicates", enablePredicate=True), P("nodeorder", enableNodeOrder=True)]]
# T_ENQ without sla (not implemented): none of ENQ-01..04 depends on it.
T_ENQ = [[P("drf", enableJobOrder=True, enableJobEnqueued=True),
          P("proportion", enableQueueOrder=True, enableJobEnqueued=True),
          P("gang", enableJobOrder=True)]]
PROP_ENQ = [[P("proportion", enabledAllocatable=False, enabledOverused=False, enableJobEnqueued=True)]]
PROP_ALL = [[P("proportion", enabledAllocatable=True, enabledOverused=True, enableJobEnqueued=True)]]
T_DEFAULTISH = [[P("priority", enableJobOrder=True, enableTaskOrder=True),
                 P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True)],
                [P("predicates", enablePredicate=True),
                 P("proportion", enableQueueOrder=True, enabledAllocatable=True, enabledOverused=True,
                   enableJobEnqueued=True)]]


@dataclasses.dataclass
class Case:
    tiers: list
    actions: str
    nodes: list
    queues: list
    podgroups: list
    pods: list
    bind: dict | None = None
    pipelined: dict | None = None
    phases: dict | None = None       # pg key -> phase after the session (None = no status update)
    messages: dict | None = None     # pg key -> substring of the Unschedulable condition message
    classes: list = dataclasses.field(default_factory=list)   # PriorityClasses


def run(case: Case, reg=None):
    state = snapshot.ClusterState(nodes=case.nodes, queues=case.queues, podgroups=case.podgroups, pods=case.pods,
                                  priority_classes=case.classes)
    return session.run_session(state, conf.build(case.actions, case.tiers, registry=reg), NOW)


def phase_after(result, key):
    if key in result.podgroup_status:
        return result.podgroup_status[key]["phase"]
    return None


def unschedulable_message(result, key):
    for c in result.podgroup_status[key].get("conditions", []):
        if c["type"] == "Unschedulable" and c["status"] == "True":
            return c["message"]
    return None


MASTER, WORKER = {"nodeRole": "master"}, {"nodeRole": "worker"}

CASES = [
    pytest.param(Case(
        T_ALLOC, "allocate", [node("n1", 2, "4Gi", labels=WORKER)], [queue("c1")],
        [pg("c1/pg1", "c1", 1)],
        [pod("c1/p1", "pg1", role="master", selector=MASTER), pod("c1/p2", "pg1", role="worker", selector=WORKER)],
        bind={"c1/p2": "n1"}), id="ALLOC-01 node selector does not match one task"),
    pytest.param(Case(
        T_ALLOC, "allocate",
        [node("n1", 1, "2Gi", labels=MASTER), node("n2", 1, "2Gi", labels=WORKER)], [queue("c1")],
        [pg("c1/pg1", "c1", 2, min_task_member={"master": 1, "worker": 1})],
        [pod("c1/p0", "pg1", role="master", selector=MASTER), pod("c1/p1", "pg1", role="master", selector=MASTER),
         pod("c1/p2", "pg1", role="worker", selector=WORKER), pod("c1/p3", "pg1", role="worker", selector=WORKER)],
        bind={"c1/p0": "n1", "c1/p2": "n2"}), id="ALLOC-02 continue until min member met"),
    pytest.param(Case(
        T_ALLOC, "allocate",
        [node("n1", 1, "2Gi", labels=MASTER), node("n2", 2, "2Gi", labels=WORKER)], [queue("c1")],
        [pg("c1/pg1", "c1", 2, min_task_member={"master": 2, "worker": 0})],
        [pod("c1/p0", "pg1", role="master", selector=MASTER), pod("c1/p1", "pg1", role="master", selector=MASTER),
         pod("c1/p2", "pg1", role="worker", selector=WORKER), pod("c1/p3", "pg1", role="worker", selector=WORKER)],
        bind={}), id="ALLOC-03 master min member cannot be met"),
    pytest.param(Case(
        T_ALLOC, "allocate", [node("n1", 2, "4Gi")], [queue("c1")], [pg("c1/pg1", "c1", 0)],
        [pod("c1/p1", "pg1"), pod("c1/p2", "pg1")],
        bind={"c1/p1": "n1", "c1/p2": "n1"}), id="ALLOC-04 one job two pods one node"),
    pytest.param(Case(
        T_ALLOC, "allocate", [node("n1", 2, "4G")], [queue("c1"), queue("c2")],
        [pg("c1/pg1", "c1", 0), pg("c2/pg2", "c2", 0)],
        [pod("c1/pg1-p-1", "pg1"), pod("c1/pg1-p-2", "pg1"), pod("c2/pg2-p-1", "pg2"), pod("c2/pg2-p-2", "pg2")],
        bind={"c1/pg1-p-1": "n1", "c2/pg2-p-1": "n1"}), id="ALLOC-05 two jobs share one node by queue weight"),
    pytest.param(Case(
        T_FAIR, "allocate", [node("node-1", 5, "5G")], [queue("q-1"), queue("q-2")],
        [pg("ns-1/pg-small-1", "q-1", 0, "Running"), pg("ns-1/pg-large-1", "q-1", 0),
         pg("ns-1/pg-large-2", "q-2", 0)],
        [pod("ns-1/pod-small-1", "pg-small-1", "1", "1G", node="node-1", phase="Running"),
         pod("ns-1/pod-large-1", "pg-large-1", "2", "2G"), pod("ns-1/pod-large-2", "pg-large-2", "3", "2G")],
        bind={"ns-1/pod-large-2": "node-1"}), id="ALLOC-07 lower share queue first"),
    pytest.param(Case(
        T_FAIR, "allocate", [node("node-1", 5, "5G")], [queue("q-1")],
        [pg("ns-1/pg-1", "q-1", 0, "Running"), pg("ns-1/pg-2", "q-1", 0)],
        [pod("ns-1/pod-1", "pg-1", "1", "1G", node="node-1", phase="Running"), pod("ns-1/pod-2", "pg-2", "2", "2G")],
        bind={"ns-1/pod-2": "node-1"}), id="ALLOC-09 job without pending tasks puts queue back"),
    pytest.param(Case(
        T_ALLOC, "allocate", [node("n1", 2, "4G")], [queue("c1"), queue("c2")],
        [pg("c1/pg1", "c1", 0), pg("c1/pg2", "c2", 0)],
        [pod("c1/p1", "pg1", "3", "1G"), pod("c1/p2", "pg2", "1", "1G")],
        bind={"c1/p2": "n1"}), id="ALLOC-06 high priority queue should not block others"),
    pytest.param(Case(
        T_FAIR, "allocate", [node("node-1", 5, "5G")], [queue("q-1"), queue("q-2")],
        [pg("ns-1/pg-small-1", "q-1", 0, "Running"), pg("ns-1/pg-large-1", "q-1", 0),
         pg("ns-1/pg-small-2", "q-2", 0), pg("ns-1/pg-large-2", "q-2", 0)],
        [pod("ns-1/pod-small-1", "pg-small-1", "1", "1G", node="node-1", phase="Running"),
         pod("ns-1/pod-large-1", "pg-large-1", "2", "2G"), pod("ns-1/pod-large-2", "pg-large-2", "2", "2G"),
         pod("ns-1/pod-small-2", "pg-small-2", "1", "1G")],
        bind={"ns-1/pod-large-1": "node-1", "ns-1/pod-large-2": "node-1"}),
        id="ALLOC-08 a queue's share is updated before it goes back into the queue order"),
    # ---- enqueue ---------------------------------------------------------------------------------
    pytest.param(Case(
        T_ENQ, "enqueue", [], [queue("c1", capability={"cpu": "4", "memory": "4G"}),
                               queue("c2", capability={"cpu": "4", "memory": "4G"})],
        [pg("c1/pg1", "c1", 2)], [pod("c1/p1", "pg1"), pod("c1/p2", "pg1")],
        phases={"c1/pg1": "Inqueue"}), id="ENQ-01 inqueue stays inqueue"),
    pytest.param(Case(
        T_ENQ, "enqueue", [], [queue("c1", capability={"cpu": "4", "memory": "4G"}),
                               queue("c2", capability={"cpu": "4", "memory": "4G"})],
        [pg("c1/pg1", "c1", 1, "Pending"), pg("c1/pg2", "c2", 1, "Pending")],
        [pod("c1/p1", "pg1", "3", "1G"), pod("c1/p2", "pg2", "1", "1G")],
        phases={"c1/pg1": "Inqueue", "c1/pg2": "Inqueue"}), id="ENQ-02 pending without minResources enqueued"),
    pytest.param(Case(
        T_ENQ, "enqueue", [], [queue("c1", capability={"cpu": "4", "memory": "4G"})],
        [pg("c1/pg1", "c1", 2, "Running")],
        [pod("c1/p1", "pg1", phase="Running"), pod("c1/p2", "pg1", phase="Running")],
        phases={"c1/pg1": "Running"}), id="ENQ-03 running stays running"),
    pytest.param(Case(
        T_ENQ, "enqueue", [], [queue("c2")], [pg("c1/pg1", "c1", 1, "Pending")], [pod("c1/p1", "pg1")],
        phases={"c1/pg1": None}), id="ENQ-04 podgroup of a missing queue is not in the session"),
    pytest.param(Case(
        T_ENQ, "enqueue", [], [queue("c1", capability={"cpu": "1", "memory": "1G"})],
        [pg("c1/pg1", "c1", 1, "Pending", min_resources={"cpu": "8", "memory": "8G"})], [],
        phases={"c1/pg1": "Pending"}), id="ENQ-05 queue capability below minResources: stays Pending"),
]

# proportion_test.go TestEnqueueAndAllocable fixture
PROP_NODES = [node("n1", 2, "2G"), node("n2", 2, "2G")]
PROP_QUEUES = [queue("q1", capability={"cpu": "2", "memory": "2G"}), queue("q2", capability={"cpu": "3", "memory": "3G"}),
               queue("q3", capability={"cpu": "3", "memory": "3G"}, state="Closed")]
PROP_PGS = {
    "pg1": pg("ns/pg1", "q1", 1, "Running", min_resources={"cpu": "1", "memory": "2G"}),
    "pg2": pg("ns/pg2", "q2", 1, "Running", min_resources={"cpu": "2", "memory": "1G"}),
    "pg3": pg("ns/pg3", "q1", 1, "Pending", min_resources={"cpu": "1", "memory": "0G"}),
    "pg4": pg("ns/pg4", "q2", 1, "Pending", min_resources={"cpu": "0", "memory": "1G"}),
    "pg5": pg("ns/pg5", "q1", 1, "Pending", min_resources={"cpu": "1", "memory": "1G"}),
    "pg6": pg("ns/pg6", "q3", 1, "Pending", min_resources={"cpu": "1", "memory": "1G"}),
}
PROP_PODS = {
    "pod1": pod("ns/pod1", "pg1", "1", "2G", node="n1", phase="Running"),
    "pod2": pod("ns/pod2", "pg2", "2", "1G", node="n2", phase="Running"),
    "pod3": pod("ns/pod3", "pg3", "1", "0G"),
    "pod4": pod("ns/pod4", "pg4", "0", "1G"),
    "pod5": pod("ns/pod5", "pg5", "1", "1G"),
    "pod6": pod("ns/pod6", "pg6", "1", "1G"),
}
PROP_ALC = [[P("proportion", enabledAllocatable=True, enabledOverused=False, enableJobEnqueued=False)]]
CASES += [
    pytest.param(Case(
        PROP_ALL, "enqueue, allocate", PROP_NODES, PROP_QUEUES,
        [PROP_PGS[k] for k in ("pg1", "pg2", "pg3")], [PROP_PODS[k] for k in ("pod1", "pod2", "pod3")],
        bind={"ns/pod3": "n1"}, phases={"ns/pg3": "Inqueue"}),
        id="PROP-01 memory over deserved: a cpu-only job is enqueued and allocated"),
    pytest.param(Case(
        PROP_ALL, "enqueue, allocate", PROP_NODES, PROP_QUEUES,
        [PROP_PGS[k] for k in ("pg1", "pg2", "pg4")], [PROP_PODS[k] for k in ("pod1", "pod2", "pod4")],
        bind={"ns/pod4": "n2"}, phases={"ns/pg4": "Inqueue"}),
        id="PROP-02 cpu over deserved: a memory-only job is enqueued and allocated"),
    pytest.param(Case(
        PROP_ALC, "enqueue, allocate", PROP_NODES, PROP_QUEUES,
        [PROP_PGS[k] for k in ("pg1", "pg2", "pg5")], [PROP_PODS[k] for k in ("pod1", "pod2", "pod5")],
        bind={}), id="PROP-04 over deserved: not allocated"),
    pytest.param(Case(
        [[P("proportion", enableQueueOrder=True)]], "allocate, reclaim",
        [node("n1", 2, "4Gi"), node("n2", 2, "4Gi")],
        [queue("q1", capability={"cpu": "2", "memory": "4Gi"}, priority=5),
         queue("q2", capability={"cpu": "2", "memory": "4Gi"}, priority=1),
         queue("q3", capability={"cpu": "2", "memory": "4Gi"}, priority=10)],
        [pg("ns/pg1", "q1", 1, "Running"), pg("ns/pg2", "q2", 1), pg("ns/pg3", "q3", 1)],
        [pod("ns/p1", "pg1", "2", "4Gi", node="n1", phase="Running"), pod("ns/p2", "pg2", "2", "4Gi"),
         pod("ns/p3", "pg3", "2", "4Gi")],
        bind={"ns/p3": "n2"}), id="PROP-06 queues are served in priority order"),
    pytest.param(Case(
        PROP_ENQ, "enqueue, allocate", PROP_NODES, PROP_QUEUES,
        [PROP_PGS[k] for k in ("pg1", "pg2", "pg5")], [PROP_PODS[k] for k in ("pod1", "pod2", "pod5")],
        bind={}, phases={"ns/pg5": "Pending"},
        messages={"ns/pg5": 'queue resource quota insufficient: insufficient memory; '
                            'job needs memory 1G but queue "q1" can get at most 0'}),
        id="PROP-03 exceeds queue capability: not enqueued"),
    pytest.param(Case(
        PROP_ENQ, "enqueue, allocate", PROP_NODES, PROP_QUEUES, [PROP_PGS["pg6"]], [PROP_PODS["pod6"]],
        bind={}, phases={"ns/pg6": "Pending"}, messages={"ns/pg6": 'queue "q3" is Closed'}),
        id="PROP-05 closed queue: not enqueued"),
]

# ---- vclite's own: why a job waits, pipelining, node filters ---------------------------------------
CASES += [
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate",
        [node("a", 1, "4Gi"), node("b", 1, "4Gi"), node("c", 8, "4Gi", labels={"zone": "z2"})], [queue("default")],
        [pg("ns/big", "default", 3, "Inqueue")],
        [pod(f"ns/big-{i}", "big", "2", "1Gi", selector={"zone": "z1"} if i else None) for i in range(3)],
        bind={}, phases={"ns/big": "Inqueue"},
        # big-0 fit node c in a statement that was then discarded: it counts as schedulable (2/3)
        messages={"ns/big": "2/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
                            "Pending: 1 Schedulable, 2 Unschedulable. Origin reason is big-1: 0/3 nodes are "
                            "unavailable: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu."}),
        id="MSG-01 per-node reasons aggregated"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("a", 4, "8Gi"), node("b", 2, "8Gi")], [queue("default")],
        [pg("ns/huge", "default", 1, "Inqueue")], [pod("ns/huge-0", "huge", "64", "1Gi")],
        bind={}, messages={"ns/huge": "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, "
                                      "1 minAvailable; Pending: 1 Unschedulable. Origin reason is: pod needs cpu 64, "
                                      "but the largest node has 4; task needs cpu 64 but queue "
                                      '"default" deserves cpu 6 and has cpu 0 allocated'}),
        id="MSG-02 task bigger than the cluster says so"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("a", 4, "8Gi"), node("b", 4, "8Gi")], [queue("default")],
        [pg("ns/huge", "default", 1, "Inqueue")], [pod("ns/huge-0", "huge", "6", "1Gi")],
        bind={}, messages={"ns/huge": "0/2 nodes are unavailable: 2 Insufficient cpu. "
                                      "pod needs cpu 6, but the largest node has 4"}),
        id="MSG-02b task bigger than every node says so"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("a", 4, "8Gi")], [queue("default", capability={"cpu": "4"})],
        [pg("ns/wide", "default", 2, "Pending", min_resources={"cpu": "8", "memory": "2Gi"})],
        [], bind={}, phases={"ns/wide": "Pending"},
        messages={"ns/wide": 'queue resource quota insufficient: insufficient cpu; '
                             'job needs cpu 8 but queue "default" can get at most 4'}),
        id="MSG-03 enqueue quota rejection is written before pods exist"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("a", 4, "8Gi", unschedulable=True), node("b", 1, "8Gi")],
        [queue("default")], [pg("ns/j", "default", 1, "Inqueue")], [pod("ns/j-0", "j", "2", "1Gi")],
        bind={}, messages={"ns/j": "0/2 nodes are unavailable: 1 Insufficient cpu, 1 node(s) were unschedulable."}),
        id="MSG-04 unschedulable node"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("a", 4, "8Gi")], [queue("default")],
        [pg("ns/old", "default", 1, "Running"), pg("ns/new", "default", 2, "Inqueue")],
        [pod("ns/old-0", "old", "3", "1Gi", node="a", phase="Running", deleting=True),
         pod("ns/new-0", "new", "2", "1Gi"), pod("ns/new-1", "new", "2", "1Gi")],
        bind={}, pipelined={"ns/new": ["a", "a"]}), id="PIPE-01 gang waits on releasing resources"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("a", 4, "8Gi")], [queue("default")],
        [pg("ns/old", "default", 1, "Running"), pg("ns/new", "default", 2, "Inqueue")],
        [pod("ns/old-0", "old", "3", "1Gi", node="a", phase="Running", deleting=True),
         pod("ns/new-0", "new", "1", "1Gi"), pod("ns/new-1", "new", "2", "1Gi")],
        bind={}, pipelined={"ns/new": ["a"]}),   # new-0 is allocated from idle, new-1 pipelined
        id="PIPE-02 gang partly idle partly releasing binds nothing yet"),
    pytest.param(Case(
        T_DEFAULTISH, "enqueue, allocate", [node("b", 4, "8Gi"), node("a", 4, "8Gi")], [queue("default")],
        [pg("ns/j", "default", 2, "Pending", min_resources={"cpu": "2"})],
        [pod("ns/j-0", "j", "1", "1Gi"), pod("ns/j-1", "j", "1", "1Gi")],
        bind={"ns/j-0": "a", "ns/j-1": "a"}, phases={"ns/j": "Inqueue"}),
        id="TIE-01 enqueue then allocate; ties go to the first node by name"),
]


# backfill: BestEffort tasks (no cpu/memory request) are left by allocate and placed here.
T_BACKFILL = [[P("priority", enableJobOrder=True, enableTaskOrder=True),
               P("gang", enableJobOrder=True, enableJobReady=True, enableJobPipelined=True),
               P("predicates", enablePredicate=True)]]
CASES += [
    pytest.param(Case(
        T_BACKFILL, "allocate, backfill", [node("n1", 1, "1Gi", pods=2)], [queue("c1")],
        [pg("c1/pg1", "c1", 1)], [pod("c1/be-1", "pg1", cpu=None, mem=None), pod("c1/be-2", "pg1", cpu=None, mem=None),
                                  pod("c1/be-3", "pg1", cpu=None, mem=None)],
        bind={"c1/be-1": "n1", "c1/be-2": "n1"}), id="BACKFILL best-effort pods fill the node's pod slots"),
    pytest.param(Case(
        T_BACKFILL, "allocate", [node("n1", 1, "1Gi")], [queue("c1")],
        [pg("c1/pg1", "c1", 1)], [pod("c1/be-1", "pg1", cpu=None, mem=None)],
        bind={}), id="BACKFILL allocate alone leaves best-effort pods"),
    pytest.param(Case(
        T_BACKFILL, "backfill", [node("n1", 1, "1Gi")], [queue("c1")],
        [pg("c1/pg1", "c1", 1, phase="Pending")], [pod("c1/be-1", "pg1", cpu=None, mem=None)],
        bind={}), id="BACKFILL skips jobs still Pending (not enqueued)"),
]

@pytest.mark.parametrize("case", CASES)
def test_scenario(case: Case):
    result = run(case)
    if case.bind is not None:
        assert result.binds == case.bind
    if case.pipelined is not None:
        assert result.pipelined == case.pipelined
    for key, want in (case.phases or {}).items():
        assert phase_after(result, key) == want
    for key, want in (case.messages or {}).items():
        assert want in (unschedulable_message(result, key) or ""), result.podgroup_status.get(key)


def test_prop07_inqueue_not_double_counted_for_binding_tasks():
    """PROP-07: after session 1 binds pgA (still Inqueue), pgA's inqueue is minRes − allocated = 0,
    so pgB fits the queue's capability in session 2."""
    nodes = [node("n1", 4, "8Gi")]
    queues = [queue("q1", capability={"cpu": "4", "memory": "8Gi"})]
    pga = pg("ns/pgA", "q1", 3, "Inqueue", min_resources={"cpu": "3", "memory": "3Gi"})
    pods = [pod(f"ns/pA{i}", "pgA", "1", "1Gi") for i in range(1, 4)]
    c1 = conf.build("allocate", PROP_ALL)
    r1 = session.run_session(snapshot.ClusterState(nodes, queues, [pga], pods), c1, NOW)
    assert r1.binds == {"ns/pA1": "n1", "ns/pA2": "n1", "ns/pA3": "n1"}
    for p in pods:
        p["spec"]["nodeName"] = r1.binds[f"ns/{p['metadata']['name']}"]
    pgb = pg("ns/pgB", "q1", 1, "Pending", min_resources={"cpu": "1", "memory": "1Gi"})
    c2 = conf.build("enqueue, allocate", PROP_ALL)
    r2 = session.run_session(snapshot.ClusterState(nodes, queues, [pga, pgb], pods + [pod("ns/pB1", "pgB", "1", "1Gi")]),
                             c2, NOW)
    assert r2.binds == {"ns/pB1": "n1"}


def rejecter(job_name, plugin_name="rejecter"):
    """A test plugin (as PROP-08's and capacity's upstream tests have): rejects the PodGroup `job_name`
    at enqueue, abstains for every other."""
    class Rejecter:
        name = plugin_name
        Arguments = plugin.NoArguments

        def __init__(self, arguments):
            pass

        def on_session_open(self, ssn, reg):
            reg.add(hooks.Point.JOB_ENQUEUEABLE,
                    lambda job: hooks.Vote.REJECT if job.name == job_name else hooks.Vote.ABSTAIN)

        def on_session_close(self, ssn):
            pass
    return Rejecter


def test_prop08_job_enqueued_only_after_all_voters_admit():
    reg = registry.default_registry().with_plugins(rejecter("pgA"))
    tiers = [[P("proportion", enableJobEnqueued=True), P("rejecter", enableJobEnqueued=True)]]
    case = Case(tiers, "enqueue", [node("n1", 4, "4G")], [queue("q1", capability={"cpu": "1", "memory": "4G"})],
                [pg("ns1/pgA", "q1", 1, "Pending", min_resources={"cpu": "1", "memory": "1G"}, created="2026-01-01T00:00:00Z"),
                 pg("ns1/pgB", "q1", 1, "Pending", min_resources={"cpu": "1", "memory": "1G"}, created="2026-01-01T00:00:01Z")],
                [pod("ns1/a", "pgA", "1", "1G"), pod("ns1/b", "pgB", "1", "1G")])
    result = run(case, reg)
    assert result.podgroup_status["ns1/pgB"]["phase"] == "Inqueue"
    assert result.podgroup_status["ns1/pgA"]["phase"] == "Pending"
