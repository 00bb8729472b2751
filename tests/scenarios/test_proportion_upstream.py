"""proportion's TestProportion (plugins/proportion/proportion_test.go), both rows.

Upstream runs allocate with proportion, gang and priority session after session, deleting a PodGroup of q1
after each, and reads the queue's allocated resources from the scheduler's Prometheus metric
(`volcano_queue_allocated_*`): it must fall to nothing once q1's PodGroups are gone ("pod-deallocate").
vclite has no such metric; a session reports each queue's allocated as the patch of its `status.allocated`
(SessionResult.queue_status), which the scheduler writes: the same figure, read there. Upstream's loop returns
after its first row, so "realcapability-test" never runs there; here it runs: a queue whose capability names
no `rdma/hca` still counts a running pod's `rdma/hca` in what it holds."""
import copy

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue

TIERS = [[P("proportion", enablePredicate=True), P("gang", enableJobReady=True, enableJobPipelined=True),
          P("priority", enableJobOrder=True)]]
ANTI_WORKER = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
     "topologyKey": "kubernetes.io/hostname"}]}}


def running(key, group, cpu, mem, extra=None, worker=True):
    """A Running pod no node holds (upstream's BuildPod with an empty node name)."""
    p = pod(key, group, cpu=cpu, mem=mem, phase="Running")
    if worker:
        p["metadata"]["labels"] = {"role": "worker"}
        p["spec"]["affinity"] = copy.deepcopy(ANTI_WORKER)
    p["spec"]["containers"][0]["resources"]["requests"].update(extra or {})
    return p


W1, W2, W3 = running("ns1/worker-1", "pg1", "3", "3k"), running("ns1/worker-2", "pg1", "5", "5k"), \
    running("ns1/worker-3", "pg2", "4", "4k")
GPU = {"nvidia.com/gpu": "1", "rdma/hca": "1"}
W4 = running("ns1/rdma-demo", "pg3", "1", "1k", GPU, worker=False)


def nodes():
    out = [node("node1", 4, "4k", pods=15, labels={"selector": "worker", "kubernetes.io/hostname": "node1"}),
           node("node2", 3, "3k", pods=15, labels={"kubernetes.io/hostname": "node2"}),
           node("node3", 4, "4k", pods=15, labels={"kubernetes.io/hostname": "node3"})]
    out[2]["status"]["allocatable"].update({"nvidia.com/gpu": "8", "rdma/hca": "1k"})
    return out


def podgroups():
    pg1, pg2, pg3 = pg("ns1/pg1", "q1", 2), pg("ns1/pg2", "q1", 1), pg("ns1/pg3", "q2", 1,
                                                                        min_resources={"cpu": "1", "memory": "1k",
                                                                                       **GPU})
    pg1["spec"]["priorityClassName"] = "p2"
    pg2["spec"]["priorityClassName"] = pg3["spec"]["priorityClassName"] = "p1"
    return {"pg1": pg1, "pg2": pg2, "pg3": pg3}


CLASSES = [{"metadata": {"name": "p1"}, "value": 1}, {"metadata": {"name": "p2"}, "value": 2}]


def queues():
    return {"q1": queue("q1", 0), "q2": queue("q2", 0, capability={"cpu": "2", "memory": "2k", "pods": "10",
                                                                    "nvidia.com/gpu": "4"})}


def run(qs, groups, pods, nodes_):
    state = snapshot.ClusterState(nodes=nodes_, queues=list(qs.values()), podgroups=list(groups.values()), pods=pods,
                                  priority_classes=CLASSES)
    result = session.run_session(state, conf.build("allocate", TIERS), NOW)
    for name, patch in result.queue_status.items():   # the scheduler writes them: the next session reads them
        qs[name] = {**qs[name], "status": {**qs[name].get("status", {}), **patch}}
    return result


def test_volcano_proportion_pod_deallocate():
    """A queue's allocated follows its PodGroups: 12 cpus with pg1 and pg2, 4 once pg1 is deleted, nothing once
    pg2 is too (the pods are left: without their PodGroup they are no job of the session)."""
    qs, groups, pods = queues(), podgroups(), [W1, W2, W3]
    del groups["pg3"]
    seen = []
    for gone in ("pg1", "pg2", None):
        result = run(qs, groups, pods, nodes()[:2])
        assert result.binds == {}
        seen.append({k: qs["q1"]["status"]["allocated"][k] for k in ("cpu", "memory")})
        if gone:
            del groups[gone]
    assert seen == [{"cpu": "12", "memory": "12k"}, {"cpu": "4", "memory": "4k"}, {"cpu": "0", "memory": "0"}]


def test_volcano_proportion_realcapability():
    qs = queues()
    result = run(qs, podgroups(), [W1, W2, W3, W4], nodes())
    assert result.binds == {}
    assert qs["q2"]["status"]["allocated"] == {"cpu": "1", "memory": "1k", "nvidia.com/gpu": "1", "pods": "1",
                                               "rdma/hca": "1"}
    assert qs["q1"]["status"]["allocated"]["cpu"] == "12"
