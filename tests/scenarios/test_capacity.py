"""The capacity plugin's scenarios, ported from Volcano's plugins/capacity/capacity_test.go with the
same inputs and expectations: Test_capacityPlugin_OnSessionOpenWithoutHierarchy (CAP-*),
TestEnqueueAndAllocatable (CAPENQ-*), Test_capacityPlugin_OnSessionOpenWithHierarchy (HCAP-*),
Test_capacityPlugin_AncestorReclaimScenarios (ANC-*), Test_buildHierarchicalQueueAttrs_nilSafety
(NIL-*), TestNoDoubleCountingForInqueueJobWithBindingTasks and TestJobEnqueuedOnOtherPluginsReject.
Each row: cluster objects + tiers + actions -> binds (compared whole), evictions (as a multiset),
pipelined reservations and PodGroup phases (for the jobs listed), as Volcano's uthelper checks them.
Tiers built in code have every enable flag OFF unless listed, as in Volcano's tests. The DRA cases
are not ported (vclite has no resource claims)."""
from __future__ import annotations

import collections
import dataclasses

import pytest

from tests.scenarios.test_scheduler_scenarios import NOW, P, rejecter
from vclite.scheduler import conf, registry
from vclite.scheduler.framework import session, snapshot

NS = "ns1"


# ---- builders (util.BuildNode / BuildPod / BuildPodGroup / BuildQueueWithResourcesQuantity) --------
def R(cpu="", mem="", **scalars):
    """api.BuildResourceList: empty strings are left out; scalars by name (`gpu` = nvidia.com/gpu)."""
    names = {"gpu": "nvidia.com/gpu", "a100": "nvidia.com/a100", "A100": "nvidia.com/A100", "rdma_hca": "rdma/hca",
             "hugepages_1Gi": "hugepages-1Gi"}
    out = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v}
    out.update({names.get(k, k): str(v) for k, v in scalars.items()})
    return out


def node(name, res, labels=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "status": {"allocatable": res}}


def queue(name, deserved=None, cap=None, parent=None, priority=None, guarantee=None, state="Open"):
    spec = {"weight": 1}
    if deserved:
        spec["deserved"] = deserved
    if cap:
        spec["capability"] = cap
    if parent:
        spec["parent"] = parent
    if priority is not None:
        spec["priority"] = priority
    if guarantee:
        spec["guarantee"] = {"resource": guarantee}
    return {"metadata": {"name": name}, "spec": spec, "status": {"state": state}}


def pg(name, q, min_member, phase, min_res=None):
    spec = {"queue": q, "minMember": min_member}
    if min_res is not None:
        spec["minResources"] = min_res
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec, "status": {"phase": phase}}


def pod(name, group, res, node_name="", preemptable=None, priority=None, selector=None):
    md = {"name": name, "namespace": NS, "uid": f"{NS}/{name}",
          "annotations": {"scheduling.k8s.io/group-name": group}}
    if preemptable is not None:
        md["labels"] = {"volcano.sh/preemptable": "true" if preemptable else "false"}
    spec = {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": res}}]}
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if selector:
        spec["nodeSelector"] = selector
    return {"metadata": md, "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def running(name, group, node_name, res, **kw):
    return pod(name, group, res, node_name, **kw)


def pending(name, group, res, **kw):
    return pod(name, group, res, **kw)


@dataclasses.dataclass
class Case:
    tiers: list
    actions: str
    nodes: list
    queues: list
    podgroups: list
    pods: list
    bind: dict = dataclasses.field(default_factory=dict)
    evict: list = dataclasses.field(default_factory=list)
    pipelined: dict | None = None
    phases: dict | None = None


def run(case: Case, reg=None) -> session.SessionResult:
    state = snapshot.ClusterState(nodes=case.nodes, queues=case.queues, podgroups=case.podgroups, pods=case.pods)
    return session.run_session(state, conf.build(case.actions, case.tiers, registry=reg), NOW)


def check(case: Case, result: session.SessionResult) -> None:
    assert result.binds == {f"{NS}/{k}": v for k, v in case.bind.items()}
    assert collections.Counter(result.evictions) == collections.Counter(f"{NS}/{k}" for k in case.evict)
    for job, nodes in (case.pipelined or {}).items():
        assert result.pipelined.get(f"{NS}/{job}"), f"{job} has no pipelined task"
        assert set(result.pipelined[f"{NS}/{job}"]) <= set(nodes)
    for job, phase in (case.phases or {}).items():
        key = f"{NS}/{job}"
        before = next(p["status"]["phase"] for p in case.podgroups if p["metadata"]["name"] == job)
        assert result.podgroup_status.get(key, {}).get("phase", before) == phase


# ---- Test_capacityPlugin_OnSessionOpenWithoutHierarchy ----------------------------------------------
T_CAP = [[P("capacity", enabledAllocatable=True, enablePreemptive=True, enableReclaimable=True, enableQueueOrder=True),
          P("predicates", enablePredicate=True), P("gang", enableJobStarving=True)]]
WORKER = {"selector": "worker"}
N1, N2 = node("n1", R("2", "4Gi", pods=10), WORKER), node("n2", R("2", "4Gi", pods=10))
N3, N4 = node("n3", R("2", "4Gi", A100=10, pods=10), WORKER), node("n4", R("2", "4Gi", A100=10, pods=10))
N7 = node("n7", R("4", "8Gi", gpu=4, pods=10))
N8 = node("n8", R("4", "8Gi", gpu=1, pods=10))
NO = False


def cap_case(nodes, queues, pgs, pods, **kw):
    return Case(T_CAP, "allocate, reclaim", nodes, queues, pgs, pods, **kw)


FLAT = [
    pytest.param(cap_case(
        [N1, N2], [queue("q1", None, R("2", "2Gi"))], [pg("pg1", "q1", 1, "Running"), pg("pg2", "q1", 1, "Inqueue")],
        [running("p1", "pg1", "n1", R("1", "1Gi")), pending("p2", "pg2", R("1", "1Gi"), selector=WORKER)],
        bind={"p2": "n1"}), id="CAP-00 pod allocatable when queue has not exceed capability"),
    pytest.param(cap_case(
        [N1, N2], [queue("q2", None, R("1.5", "1.5Gi"))],
        [pg("pg3", "q2", 1, "Running"), pg("pg4", "q2", 1, "Inqueue")],
        [running("p3", "pg3", "n1", R("1", "1Gi")), pending("p4", "pg4", R("1", "1Gi"))]),
        id="CAP-01 pod not allocatable when queue exceeds capability"),
    pytest.param(cap_case(
        [N1, N2], [queue("q3", R("2", "4Gi")), queue("q4", R("2", "4Gi"))],
        [pg("pg5", "q3", 1, "Running"), pg("pg6", "q4", 1, "Inqueue")],
        [running("p5", "pg5", "n1", R("2", "4Gi"), preemptable=NO), running("p6", "pg5", "n2", R("2", "4Gi")),
         pending("p7", "pg6", R("2", "4Gi"))],
        evict=["p6"], pipelined={"pg6": ["n2"]}), id="CAP-02 reclaim from other queues when allocated < deserved"),
    pytest.param(cap_case(
        [N3, N4], [queue("q5", R("2", "4Gi", A100=10)), queue("q6", R("2", "4Gi", A100=10))],
        [pg("pg7", "q5", 1, "Running"), pg("pg8", "q6", 1, "Running"), pg("pg9", "q6", 1, "Inqueue")],
        [running("p8", "pg7", "n3", R("0", "0Gi", A100=10), preemptable=NO),
         running("p9", "pg7", "n4", R("0", "0Gi", A100=10)),
         running("p10", "pg8", "n3", R("2", "4Gi")), running("p11", "pg8", "n4", R("2", "4Gi")),
         pending("p12", "pg9", R("0", "0Gi", A100=10))],
        evict=["p9"], pipelined={"pg9": ["n4"]}),
        id="CAP-03 cpu and memory overused, scalar not: a scalar-only task reclaims"),
    pytest.param(cap_case(
        [node("n5", R("2", "4Gi", pods=10)), node("n6", R("2", "4Gi", pods=10))],
        [queue("q7", None, R("2", "4Gi"), priority=5), queue("q8", None, R("2", "4Gi"), priority=1),
         queue("q9", None, R("2", "4Gi"), priority=10)],
        [pg("pg10", "q7", 1, "Running"), pg("pg11", "q8", 1, "Inqueue"), pg("pg12", "q9", 1, "Inqueue")],
        [running("p13", "pg10", "n5", R("2", "4Gi")), pending("p14", "pg11", R("2", "4Gi")),
         pending("p15", "pg12", R("2", "4Gi"))],
        bind={"p15": "n6"}), id="CAP-04 queues are served by priority"),
    pytest.param(cap_case(
        [N1], [queue("q10", R("2", "2Gi"), R("4", "4Gi")), queue("q11", R("0", "0Gi"), R("2", "2Gi"))],
        [pg("pg16", "q10", 1, "Running"), pg("pg17", "q10", 1, "Inqueue"), pg("pg18", "q11", 1, "Running")],
        [running("p16", "pg16", "n1", R("1", "3Gi")), pending("p17", "pg17", R("1", "1Gi")),
         running("p18", "pg18", "n1", R("1", "1Gi"))],
        evict=["p18"], pipelined={"pg17": ["n1"]}),
        id="CAP-05 reclaim when allocated + request <= deserved on one dimension"),
    pytest.param(cap_case(
        [N1], [queue("q12", R("1", "2Gi"), R("4", "4Gi")), queue("q13", R("0", "0Gi"), R("2", "2Gi"))],
        [pg("pg19", "q12", 1, "Running"), pg("pg20", "q12", 1, "Inqueue"), pg("pg21", "q13", 1, "Running")],
        [running("p19", "pg19", "n1", R("1", "1Gi")), pending("p20", "pg20", R("1", "2Gi")),
         running("p21", "pg21", "n1", R("1", "1Gi"))],
        pipelined={}), id="CAP-06 no reclaim when allocated + request > deserved"),
    pytest.param(cap_case(
        [N7], [queue("queue14", R("2", "4Gi", gpu=2)), queue("queue15"), queue("queue16", R("2", "4Gi", gpu=2))],
        [pg("pg22", "queue14", 1, "Running"), pg("pg23", "queue15", 1, "Running"), pg("pg24", "queue16", 1, "Running"),
         pg("pg25", "queue16", 1, "Inqueue")],
        [running("p22", "pg22", "n7", R("2", "4Gi")), running("p23", "pg23", "n7", R("0", "0Gi", gpu=1)),
         running("p24", "pg24", "n7", R("2", "1Gi", gpu=1)), pending("p25", "pg25", R("2", "3Gi", gpu=1))],
        pipelined={}), id="CAP-07 allocated lacks a scalar deserved names: not reclaimed (volcano#4918 bug 2)"),
    pytest.param(cap_case(
        [N8], [queue("queue17", R("2", "2Gi")), queue("queue18", R("2", "4Gi", gpu=1))],
        [pg("pg26", "queue17", 1, "Running"), pg("pg27", "queue17", 1, "Running"), pg("pg28", "queue17", 1, "Running"),
         pg("pg29", "queue18", 1, "Running"), pg("pg30", "queue18", 1, "Inqueue")],
        [running("p26", "pg26", "n8", R("0", "4Gi")), running("p27", "pg27", "n8", R("1", "0Gi")),
         running("p28", "pg28", "n8", R("0", "0Gi", gpu=1)), running("p29", "pg29", "n8", R("2", "4Gi")),
         pending("p30", "pg30", R("1", "0Gi", gpu=1))],
        evict=["p28"], pipelined={"pg30": ["n8"]}), id="CAP-08 only the reclaimer's dimensions are reclaimed"),
    pytest.param(cap_case(
        [N8], [queue("queue19", R("", "", gpu=1)), queue("queue20", R("2", "2Gi"))],
        [pg("pg31", "queue19", 1, "Running"), pg("pg32", "queue20", 1, "Inqueue")],
        [running("p31", "pg31", "n8", R("4", "4Gi", gpu=1)), pending("p32", "pg32", R("1", "1Gi"))],
        pipelined={}), id="CAP-09 a victim within its scalar deserved is not reclaimed for cpu/memory"),
    pytest.param(cap_case(
        [node("n9", R("8", "100Gi", pods=10)), node("n10", R("8", "100Gi", pods=10))],
        [queue("queue21", R("8", "100Gi"), R("8", "100Gi")), queue("queue22", None, R("2", "5Gi"))],
        [pg("pg33", "queue21", 1, "Running"), pg("pg34", "queue21", 1, "Inqueue"), pg("pg35", "queue22", 1, "Running")],
        [running("p33", "pg33", "n9", R("7", "90Gi")), pending("p34", "pg34", R("2", "5Gi")),
         running("p35", "pg35", "n10", R("2", "5Gi"))],
        pipelined={}), id="CAP-10 Preemptive respects capability (volcano#5048)"),
]

# ---- TestEnqueueAndAllocatable ----------------------------------------------------------------------
T_CAPENQ = [[P("capacity", enabledAllocatable=True, enablePreemptive=True, enabledOverused=True,
               enableJobEnqueued=True)]]
RES = {"1c3g": R("1", "3G"), "3c1g": R("3", "1G"), "1c0g": R("1", "0G"), "0c1g": R("0", "1G"), "1c1g": R("1", "1G")}
ENQ_NODES = [node("n1", R("3", "3G", pods=10)), node("n2", R("3", "3G", pods=10))]
ENQ_QUEUES = [queue("q1", R("2", "2G"), R("2", "2G")), queue("q2", R("2", "2G"), R("3", "3G"))]
ENQ_RUNNING = [pg("pg1", "q1", 1, "Running", RES["1c3g"]), pg("pg2", "q2", 1, "Running", RES["3c1g"])]
ENQ_PODS = [running("pod1", "pg1", "n1", RES["1c3g"]), running("pod2", "pg2", "n2", RES["3c1g"])]


def enq_case(pgs, pods, bind=None, queues=ENQ_QUEUES):
    return Case(T_CAPENQ, "enqueue, allocate", ENQ_NODES, queues, pgs, pods, bind or {})


ENQ = [
    pytest.param(enq_case(ENQ_RUNNING + [pg("pg3", "q1", 1, "Pending", RES["1c0g"])],
                          ENQ_PODS + [pending("pod3", "pg3", RES["1c0g"])], {"pod3": "n1"}),
                 id="CAPENQ-0 memory over deserved: a cpu-only job is enqueued and allocated"),
    pytest.param(enq_case(ENQ_RUNNING + [pg("pg4", "q2", 1, "Pending", RES["0c1g"])],
                          ENQ_PODS + [pending("pod4", "pg4", RES["0c1g"])], {"pod4": "n2"}),
                 id="CAPENQ-1 cpu over deserved: a memory-only job is enqueued and allocated"),
    pytest.param(enq_case(ENQ_RUNNING + [pg("pg5", "q1", 1, "Pending", RES["1c1g"])],
                          ENQ_PODS + [pending("pod5", "pg5", RES["1c1g"])]),
                 id="CAPENQ-2 over capability: not enqueued"),
    pytest.param(enq_case([pg("pg6", "q3", 1, "Pending", RES["1c1g"])], [pending("pod6", "pg6", RES["1c1g"])],
                          queues=[dict(queue("q3", None, R("3", "3G"), state="Closed"))]),
                 id="CAPENQ-4 closed queue: not enqueued"),
]


@pytest.mark.parametrize("case", FLAT + ENQ)
def test_flat_capacity(case: Case):
    check(case, run(case))


# ---- Test_capacityPlugin_OnSessionOpenWithHierarchy ------------------------------------------------
def caph(level=None, priority=False, enqueued=True, preemptive=True):
    args = {"ancestorReclaimLevel": level} if level is not None else None
    flags = dict(enabledAllocatable=True, enableReclaimable=True, enableQueueOrder=True, enableHierarchy=True)
    if preemptive:
        flags["enablePreemptive"] = True
    if enqueued:
        flags["enableJobEnqueued"] = True
    tier = [P("capacity", args, **flags), P("predicates", enablePredicate=True), P("gang", enableJobStarving=True)]
    if priority:
        tier.append(P("priority", enableJobOrder=True, enableTaskOrder=True))
    return [tier]


def hq(name, parent, deserved=None, cap=None, guarantee=None):
    return queue(name, deserved, cap, parent=parent or None, guarantee=guarantee)


H_N1 = node("n1", R("8", "8Gi", pods=11))
ROOT = hq("root", "")
ROOT1 = hq("root", "", None, R("16", "16Gi"))
ROOT2 = hq("root", "", R("16", "16Gi", a100=4, rdma=1000))
Q1, Q2 = hq("q1", "root", None, R("4", "4Gi")), hq("q2", "root", None, R("4", "4Gi"))
Q11, Q12 = hq("q11", "q1", None, R("1", "1Gi")), hq("q12", "q1", None, R("3", "3Gi"))
Q3 = hq("q3", "root", R("4", "4Gi", pods=10), R("4", "4Gi", pods=10))
Q4 = hq("q4", "root", R("2", "2Gi", pods=1), R("4", "4Gi", pods=4))
Q31 = hq("q31", "q3", R("2", "2Gi", pods=2), R("4", "4Gi", pods=4))
Q32 = hq("q32", "q3", R("2", "2Gi", pods=2), R("4", "4Gi", pods=4))
Q33 = hq("q33", "q3", R("0", "0Gi", pods=2), R("4", "4Gi", pods=4))
P6 = running("p6", "pg5", "n1", R("2", "2Gi"), preemptable=NO)
G4 = {"cpu": "4", "memory": "3Gi"}
N2_GPU = node("n2", R("8", "8Gi", gpu=8, pods=10, hugepages_1Gi=0))
N3_A100 = node("n3", R("16", "16Gi", a100=5, rdma_hca=1001, pods=11))
A2R1 = R("1", "1Gi", a100=2, rdma_hca=1)


def h_case(nodes, queues, pgs, pods, **kw):
    return Case(caph(), "enqueue, reclaim, allocate", nodes, queues, pgs, pods, **kw)


HIER = [
    pytest.param(h_case([H_N1], [ROOT, Q1, Q2, Q11, Q12], [pg("pg1", "q11", 1, "Inqueue")],
                        [pending("p1", "pg1", R("1", "1Gi"))], bind={"p1": "n1"}),
                 id="HCAP-00 allocatable in a leaf queue"),
    pytest.param(h_case([H_N1], [ROOT, Q1, Q2, Q11, Q12], [pg("pg2", "q1", 1, "Pending")],
                        [pending("p2", "pg2", R("1", "1Gi"))]),
                 id="HCAP-01 not allocatable in a queue that has children"),
    pytest.param(h_case([H_N1], [ROOT, Q3, Q4, Q31, Q32], [pg("pg3", "q31", 2, "Inqueue")],
                        [pending("p3", "pg3", R("2", "2Gi")), pending("p4", "pg3", R("2", "2Gi"))],
                        bind={"p3": "n1", "p4": "n1"}), id="HCAP-02 allocatable within capability"),
    pytest.param(h_case([H_N1], [ROOT, Q3, Q31, Q32, Q4],
                        [pg("pg4", "q4", 1, "Running"), pg("pg5", "q31", 1, "Running"), pg("pg6", "q32", 1, "Inqueue")],
                        [running("p5", "pg4", "n1", R("4", "4Gi")), P6, running("p7", "pg5", "n1", R("2", "2Gi")),
                         pending("p8", "pg6", R("2", "2Gi"))],
                        evict=["p7"], pipelined={"pg6": ["n1"]}), id="HCAP-03 reclaim from a sibling over deserved"),
    pytest.param(h_case([H_N1], [ROOT, Q3, Q31, Q32, Q33],
                        [pg("pg5", "q31", 1, "Running"), pg("pg7", "q32", 1, "Running"),
                         pg("pg8", "q33", 1, "Inqueue")],
                        [P6, running("p9", "pg7", "n1", R("2", "2Gi")), pending("p10", "pg8", R("3", "3Gi"))]),
                 id="HCAP-04 not allocatable when an ancestor's real capability is short"),
    pytest.param(h_case([H_N1], [ROOT, hq("q5", "root", None, R("", "4Gi")), hq("q51", "q5", None, R("", "2Gi"))],
                        [pg("pg9", "q51", 1, "Running")], [pending("p11", "pg9", R("1", ""))], bind={"p11": "n1"}),
                 id="HCAP-05 unset cpu/memory capability inherited from the parent"),
    pytest.param(h_case([H_N1], [ROOT, hq("q6", "root", None, R("2", "4Gi")), hq("q61", "q6"), hq("q62", "q6")],
                        [pg("pg10", "q61", 1, "Pending", R("2", "4Gi")),
                         pg("pg11", "q62", 1, "Pending", R("2", "4Gi"))],
                        [], phases={"pg10": "Inqueue", "pg11": "Pending"}),
                 id="HCAP-06 not enqueued when an ancestor's capability is used up"),
    pytest.param(h_case([H_N1], [ROOT, hq("q7", "root", None, R("6", "4Gi")),
                                 hq("q71", "q7", None, R("6", "4Gi"), guarantee=G4),
                                 hq("q72", "q7", None, R("6", "4Gi"), guarantee=G4)], [], []),
                 id="HCAP-07 children's guarantees above the parent's capability: no failure"),
    pytest.param(h_case([node("n-gpu", R("8", "8Gi", gpu=8, pods=10))],
                        [ROOT, hq("q8", "root", R("4", "4Gi", gpu=8)), hq("q81", "q8", R("2", "2Gi", gpu=4)),
                         hq("q82", "q8", R("2", "2Gi", gpu=4))],
                        [pg("pg12", "q81", 1, "Inqueue")], [pending("p12", "pg12", R("2", "2Gi", gpu=1))],
                        bind={"p12": "n-gpu"}), id="HCAP-08 scalar deserved: allocatable"),
    pytest.param(h_case([N2_GPU], [ROOT, hq("q9", "root", R("2", "2Gi", gpu=8, hugepages_1Gi=0)),
                                   hq("q91", "q9", R("2", "2Gi", gpu=4, hugepages_1Gi=0))],
                        [pg("pg13", "q91", 1, "Inqueue")], [pending("p13", "pg13", R("2", "2Gi", gpu=1))],
                        bind={"p13": "n2"}), id="HCAP-09 zero scalars in deserved: allocatable"),
    pytest.param(h_case([H_N1], [ROOT1, hq("q10", "root", None, R("10", "4Gi"))], [], []),
                 id="HCAP-10 root capability above the cluster: no failure"),
    pytest.param(h_case([N2_GPU], [ROOT, hq("case11_queue1", "root"),
                                   hq("case11_queue11", "case11_queue1", None, R("4", "4Gi", gpu=4)),
                                   hq("case11_queue12", "case11_queue1", None, R("4", "4Gi", gpu=4))],
                        [pg("pg14", "case11_queue11", 1, "Inqueue"), pg("pg15", "case11_queue12", 1, "Inqueue")],
                        [pending("p14", "pg14", R("1", "1Gi", gpu=4)), pending("p15", "pg15", R("1", "1Gi", gpu=4))],
                        bind={"p14": "n2", "p15": "n2"}), id="HCAP-11 unset scalar capability inherited"),
    pytest.param(h_case([N3_A100], [ROOT2, hq("case12_queue1", "root", R("", "", a100=2)),
                                    hq("case12_queue11", "case12_queue1", R("", "", a100=2)),
                                    hq("case12_queue12", "case12_queue1")],
                        [pg("pg16", "case12_queue11", 1, "Inqueue"), pg("pg17", "case12_queue12", 1, "Running"),
                         pg("pg18", "case12_queue12", 1, "Running")],
                        [pending("p16", "pg16", A2R1), running("p17", "pg17", "n3", A2R1),
                         running("p18", "pg18", "n3", A2R1, preemptable=NO)],
                        evict=["p17"], pipelined={"pg16": ["n3"]}),
                 id="HCAP-12 reclaim when allocated <= deserved on one scalar dimension"),
]


@pytest.mark.parametrize("case", HIER)
def test_hierarchical_capacity(case: Case):
    check(case, run(case))


# ---- Test_capacityPlugin_AncestorReclaimScenarios ---------------------------------------------------
A1R1 = R("1", "1Gi", a100=1, rdma_hca=1)
N_A4 = node("n1", R("16", "16Gi", a100=4, rdma_hca=1001, pods=11))
N_22 = node("n1", R("2", "2Gi", pods=10))


def anc_case(level, priority, nodes, queues, pgs, pods, **kw):
    return Case(caph(level, priority), "enqueue, reclaim, allocate", nodes, queues, pgs, pods, **kw)


def project_tree():
    return [ROOT2, hq("project1_root", "root", R("", "", a100=1), R("", "", a100=2)),
            hq("project1_non-preemptable", "project1_root", R("", "", a100=1), R("", "", a100=1)),
            hq("project1_preemptable", "project1_root"),
            hq("project2_root", "root", R("", "", a100=3), R("", "", a100=4)),
            hq("project2_non-preemptable", "project2_root", R("", "", a100=3), R("", "", a100=3)),
            hq("project2_preemptable", "project2_root")]


def level_tree():
    two, one, four = R("2", "2Gi"), R("1", "1Gi"), R("4", "4Gi")
    return [ROOT, hq("grand-a", "root", two, four), hq("parent-a", "grand-a", two, two),
            hq("queue-a", "parent-a", two, two), hq("grand-b", "root", R("3", "3Gi"), four),
            hq("parent-b", "grand-b", one, two), hq("queue-b", "parent-b", one, two)]


def victim_and_reclaimer(victim_queue, reclaimer_queue, victim=R("2", "2Gi"), reclaimer=R("2", "2Gi")):
    return ([pg("pg-victim", victim_queue, 1, "Running"), pg("pg-reclaimer", reclaimer_queue, 1, "Inqueue")],
            [running("p-victim", "pg-victim", "n1", victim), pending("p-reclaimer", "pg-reclaimer", reclaimer)])


RECLAIMED = dict(evict=["p-victim"], pipelined={"pg-reclaimer": ["n1"]})
KEPT = dict(pipelined={})
ANC = [
    pytest.param(anc_case(
        1, True, [N_A4], [ROOT2, hq("case1_queue1", "root", R("", "", a100=1)), hq("case1_queue11", "case1_queue1"),
                          hq("case1_queue2", "root")],
        [pg("pg1", "case1_queue2", 1, "Running"), pg("pg2", "case1_queue11", 1, "Inqueue")],
        [running("p1", "pg1", "n1", R("1", "1Gi", a100=4, rdma_hca=1)), pending("p2", "pg2", A1R1)],
        evict=["p1"], pipelined={"pg2": ["n1"]}), id="ANC-01 reclaim on the parent's deserved at level 1"),
    pytest.param(anc_case(
        1, True, [N_A4], project_tree(),
        [pg(f"pg{i}", "project2_preemptable", 1, "Running") for i in (1, 2, 3, 4)] + [
            pg("pg5", "project1_preemptable", 1, "Pending")],
        [running("p1", "pg1", "n1", A1R1, priority=2), running("p2", "pg2", "n1", A1R1, priority=2),
         running("p3", "pg3", "n1", A1R1, priority=2), running("p4", "pg4", "n1", A1R1, priority=1),
         pending("p5", "pg5", A1R1)],
        evict=["p4"], pipelined={"pg5": ["n1"]}),
        id="ANC-02 cross-parent reclaim when the victim's child and parent are over deserved"),
    pytest.param(anc_case(
        1, True, [N_A4], project_tree(),
        [pg("pg1", "project2_preemptable", 1, "Running"), pg("pg2", "project2_preemptable", 1, "Running"),
         pg("pg3", "project2_preemptable", 1, "Running"), pg("pg4_reclaimed", "project2_preemptable", 1, "Inqueue"),
         pg("pg5_pipelined", "project1_preemptable", 1, "Running"),
         pg("pg6", "project2_non-preemptable", 1, "Pending")],
        [running("p1", "pg1", "n1", A1R1, priority=2), running("p2", "pg2", "n1", A1R1, priority=2),
         running("p3", "pg3", "n1", A1R1, priority=2), pending("p4", "pg4_reclaimed", A1R1),
         running("p5", "pg5_pipelined", "n1", A1R1), pending("p6", "pg6", A1R1)],
        evict=["p3"], pipelined={"pg6": ["n1"]}), id="ANC-03 the sibling queue's victim goes first"),
    pytest.param(anc_case(
        1, True, [node("n1", R("8", "8Gi", a100=1, rdma_hca=1001, pods=11))],
        [ROOT2, hq("case4_parent1", "root", R("", "", a100=1)), hq("case4_child1", "case4_parent1", R("", "", a100=1)),
         hq("case4_child1_sibling", "case4_parent1"), hq("case4_parent2", "root", R("", "", a100=1)),
         hq("case4_child2", "case4_parent2", R("", "", a100=1))],
        [pg("pg1", "case4_child1", 1, "Running"), pg("pg2", "case4_child2", 1, "Pending"),
         pg("pg3", "case4_child1_sibling", 1, "Running")],
        [running("p1", "pg1", "n1", A1R1), pending("p2", "pg2", A1R1),
         running("p3", "pg3", "n1", A1R1, preemptable=NO)],
        **KEPT), id="ANC-04 cross-parent reclaim blocked when the victim's child is not over deserved"),
    pytest.param(anc_case(0, False, [N_22], level_tree(), *victim_and_reclaimer("queue-b", "queue-a"), **RECLAIMED),
                 id="ANC-05 level 0: leaf deserved decides"),
    pytest.param(anc_case(1, False, [N_22], level_tree(), *victim_and_reclaimer("queue-b", "queue-a"), **RECLAIMED),
                 id="ANC-06 level 1: the parents' check passes"),
    pytest.param(anc_case(2, False, [N_22], level_tree(), *victim_and_reclaimer("queue-b", "queue-a"), **KEPT),
                 id="ANC-07 level 2: the grandparents' check fails"),
    pytest.param(anc_case(
        1, False, [N_22], [ROOT, hq("parent", "root", R("4", "4Gi"), R("4", "4Gi")), hq("queue-a", "parent"),
                           hq("queue-b", "parent")],
        *victim_and_reclaimer("queue-b", "queue-a"), **KEPT),
        id="ANC-08 level 1: siblings without leaf deserved do not reclaim"),
    pytest.param(anc_case(
        2, False, [N_22], [ROOT, hq("grand", "root", R("2", "2Gi"), R("2", "2Gi")), hq("parent-a", "grand"),
                           hq("queue-a", "parent-a"), hq("parent-b", "grand"), hq("queue-b", "parent-b")],
        *victim_and_reclaimer("queue-b", "queue-a"), **KEPT),
        id="ANC-09 level 2: cousins without leaf deserved under one grandparent do not reclaim"),
    pytest.param(anc_case(
        2, False, [N_22], [ROOT, hq("grand", "root", R("1", "1Gi"), R("2", "2Gi")),
                           hq("parent-deep", "grand", R("1", "1Gi"), R("2", "2Gi")), hq("queue-deep", "parent-deep"),
                           hq("queue-shallow", "grand")],
        *victim_and_reclaimer("queue-deep", "queue-shallow"), **KEPT),
        id="ANC-10 level 2: unbalanced tree under one grandparent, no leaf deserved"),
    pytest.param(anc_case(
        2, False, [node("n1", R("4", "4Gi", pods=10, a100=2))],
        [ROOT, hq("shallow-parent", "root", R("", "", a100=1)),
         hq("queue-shallow", "shallow-parent", R("", "", a100=1)),
         hq("deep-grand", "root", R("", "", a100=2)), hq("deep-parent", "deep-grand", R("", "", a100=1)),
         hq("queue-deep", "deep-parent", R("", "", a100=1))],
        *victim_and_reclaimer("queue-deep", "queue-shallow", R("1", "1Gi", a100=2), R("1", "1Gi", a100=1)), **KEPT),
        id="ANC-11 level 2: the depth-2 ancestor is not over deserved"),
]


@pytest.mark.parametrize("case", ANC)
def test_ancestor_reclaim(case: Case):
    check(case, run(case))


# ---- Test_buildHierarchicalQueueAttrs_nilSafety ------------------------------------------------------
NIL_TIERS = [[P("capacity", enabledAllocatable=True, enableReclaimable=True, enableQueueOrder=True,
                enableHierarchy=True, enableJobEnqueued=True),
              P("predicates", enablePredicate=True), P("gang", enableJobStarving=True)]]
N_44 = node("n1", R("4", "4Gi", pods=10))


@pytest.mark.parametrize("case", [
    pytest.param(Case(NIL_TIERS, "allocate", [N_44], [], [], []), id="NIL-1 no root queue: nothing scheduled"),
    pytest.param(Case(NIL_TIERS, "allocate", [N_44], [hq("root", "")], [pg("pg-orphan", "deleted-queue", 1, "Inqueue")],
                      [pending("orphan", "pg-orphan", R("1", "1Gi"))]), id="NIL-2 a job of a deleted queue"),
])
def test_nil_safety(case: Case):
    check(case, run(case))


def test_no_root_queue_says_why():
    """vclite's own: without a root queue nothing is allocatable, and the pod says why."""
    case = Case(NIL_TIERS, "allocate", [N_44], [queue("q1")], [pg("pg1", "q1", 1, "Inqueue")],
                [pending("p1", "pg1", R("1", "1Gi"))])
    result = run(case)
    assert result.binds == {}
    assert 'the root queue "root" does not exist' in result.pod_conditions[f"{NS}/p1"][1]


def test_a_job_in_a_parent_queue_does_not_stop_the_others():
    """Volcano schedules nothing at all while one PodGroup sits in a queue that has children
    (buildHierarchicalQueueAttrs fails); vclite refuses only that job (docs/differences.md)."""
    case = Case(caph(), "enqueue, allocate", [H_N1], [ROOT, Q1, Q2, Q11, Q12],
                [pg("pg-parent", "q1", 1, "Inqueue"), pg("pg-leaf", "q11", 1, "Inqueue")],
                [pending("p-parent", "pg-parent", R("1", "1Gi")), pending("p-leaf", "pg-leaf", R("1", "1Gi"))])
    result = run(case)
    assert result.binds == {f"{NS}/p-leaf": "n1"}
    assert 'queue "q1" is not a leaf queue' in result.pod_conditions[f"{NS}/p-parent"][1]


# ---- TestNoDoubleCountingForInqueueJobWithBindingTasks (two sessions) --------------------------------
def test_no_double_counting_for_inqueue_job_with_binding_tasks():
    tiers = [[P("capacity", enabledAllocatable=True, enabledOverused=True, enableJobEnqueued=True)]]
    nodes = [node("n1", R("4", "8Gi", pods=10))]
    queues = [queue("q1", None, R("4", "8Gi"))]
    pga = pg("pga", "q1", 3, "Inqueue", R("3", "3Gi"))
    pods = [pending(f"pa{i}", "pga", R("1", "1Gi")) for i in (1, 2, 3)]
    r1 = session.run_session(snapshot.ClusterState(nodes, queues, [pga], pods), conf.build("allocate", tiers), NOW)
    assert r1.binds == {f"{NS}/pa{i}": "n1" for i in (1, 2, 3)}
    for p in pods:
        p["spec"]["nodeName"] = "n1"   # bound, not yet running; pgA still Inqueue
    pgb = pg("pgb", "q1", 1, "Pending", R("1", "1Gi"))
    state = snapshot.ClusterState(nodes, queues, [pga, pgb], pods + [pending("pb1", "pgb", R("1", "1Gi"))])
    r2 = session.run_session(state, conf.build("enqueue, allocate", tiers), NOW)
    assert r2.binds == {f"{NS}/pb1": "n1"}


# ---- TestJobEnqueuedOnOtherPluginsReject -----------------------------------------------------------
def test_job_enqueued_only_after_every_voter_admits():
    reg = registry.default_registry().with_plugins(rejecter("pga", "test-rejecter"))
    tiers = [[P("capacity", enableJobEnqueued=True), P("test-rejecter", enableJobEnqueued=True)]]
    pga, pgb = pg("pga", "q1", 1, "Pending", R("1", "1G")), pg("pgb", "q1", 1, "Pending", R("1", "1G"))
    pga["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    pgb["metadata"]["creationTimestamp"] = "2026-01-01T00:00:01Z"
    case = Case(tiers, "enqueue", [node("n1", R("4", "4G", pods=10))], [queue("q1", R("1", "4G"), R("1", "4G"))],
                [pga, pgb], [pending("poda", "pga", R("1", "1G")), pending("podb", "pgb", R("1", "1G"))],
                phases={"pgb": "Inqueue", "pga": "Pending"})
    check(case, run(case, reg))


# ---- actions/reclaim/reclaim_test.go: "can not reclaim resources when queue is not open (capacity)" ----
def test_reclaim06_closed_queue_does_not_reclaim():
    tiers = [[P("conformance", enableReclaimable=True), P("gang", enableReclaimable=True, enableJobStarving=True),
              P("capacity", enableReclaimable=True, enableQueueOrder=True, enablePreemptive=True)]]
    pg1 = pg("pg1", "q1", 1, "Running")
    pg1["spec"]["priorityClassName"] = "low-priority"
    pg2 = pg("pg2", "q2", 1, "Inqueue")
    pg2["spec"]["priorityClassName"] = "high-priority"
    case = Case(tiers, "reclaim", [node("n1", R("3", "3Gi"))], [queue("q1"), queue("q2", state="Closed")], [pg1, pg2],
                [running("preemptee1", "pg1", "n1", R("1", "1G"), preemptable=NO),
                 running("preemptee2", "pg1", "n1", R("1", "1G"), preemptable=True),
                 running("preemptee3", "pg1", "n1", R("1", "1G"), preemptable=NO),
                 pending("preemptor1", "pg2", R("1", "1G"))], pipelined={})
    check(case, run(case))
    # vclite's own: the check matters — give q2 what it deserves, and only the open queue reclaims.
    case.queues[1]["spec"]["deserved"] = R("3", "3Gi")
    check(case, run(case))
    case.queues[1]["status"]["state"] = "Open"
    assert run(case).evictions == [f"{NS}/preemptee2"]
