"""Volcano's network-topology e2e cases (test/e2e/hypernode/network_topology_test.go, Cases 1.1 to 3.1) on the
embedded control plane on a virtual clock, with the test kubelet of test_volcano_e2e_jobs.py and the scheduler
configuration of Volcano's CI (volcano-scheduler-ci.conf: the Helm tiers plus `sla` and
`network-topology-aware`).

The cluster is the one hack/run-e2e-kind.sh makes for the suite: eight kwok nodes of 8 cpu and 8Gi, tainted
`kwok.x-k8s.io/node=fake:NoSchedule`, in the 3-tier HyperNode tree below, beside kind's tainted control plane
and its four workers (4 cpu, 16Gi here: a CI runner's), which no HyperNode holds. kind's kindnet DaemonSet
tolerates every taint, so each kwok node also runs a pod of 100m cpu and 50Mi: that is what makes a kwok
node with 4 cpu taken too small for two more 2-cpu pods. The other pods of a case are bound by nodeName, as
upstream's e2eutil.CreatePod with `Node` binds them (kwok runs a pod whatever it asks).

                          s6
                   /              \\
                 s4               s5
              /     \\          /     \\
            s0      s1       s2       s3
          /  \\     /  \\     /  \\     /  \\
         n0  n1   n2  n3   n4  n5   n6  n7

Upstream's VerifyPodScheduling checks that every pod of the job is on one of the expected nodes; these pin
the same. Cases 1.3 and 2.2 mean "no HyperNode has room" but upstream's check (WaitTaskPhase: two pods
Pending) holds the moment the job's pods are created, before any scheduling, and their clusters do leave
room (s0: n1 is free in both): Volcano places the job in s0 there, and so does vclite, which these pin.
"""
from __future__ import annotations

import pytest

from tests import scheduler_confs
from tests.scenarios.test_volcano_e2e_jobs import Cluster, vcjob
from vclite.api import kinds
from vclite.scheduler import conf

CI_CONF = (scheduler_confs.helm_conf("enqueue, allocate, backfill, reclaim, preempt")
           .replace("  - name: conformance\n", "  - name: conformance\n  - name: sla\n")
           + "  - name: network-topology-aware\n")
KWOK_TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
TOLERATIONS = [{"key": "kwok.x-k8s.io/node", "operator": "Equal", "value": "fake", "effect": "NoSchedule"}]
TREE = [("s0", ["kwok-node-0", "kwok-node-1"], 1), ("s1", ["kwok-node-2", "kwok-node-3"], 1),
        ("s2", ["kwok-node-4", "kwok-node-5"], 1), ("s3", ["kwok-node-6", "kwok-node-7"], 1),
        ("s4", ["s0", "s1"], 2), ("s5", ["s2", "s3"], 2), ("s6", ["s4", "s5"], 3)]


def _node(name: str, cpu: int, memory: str, taints: list[dict]) -> dict:
    cap = {"cpu": str(cpu), "memory": memory, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints} if taints else {},
            "status": {"allocatable": cap, "capacity": dict(cap), "conditions": [{"type": "Ready", "status": "True"}]}}


def res(n: float) -> dict:
    """e2eutil.CPU<n>Mem<n>: n cpu and n Gi; kindnet's 100m and 50Mi."""
    return {"cpu": "100m", "memory": "50Mi"} if n < 1 else {"cpu": str(n), "memory": f"{n}Gi"}


def bound_pod(name: str, node: str, n: float, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"nodeName": node, "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "c", "image": "nginx", "command": ["sleep", "1000"],
                                     "resources": {"requests": res(n), "limits": res(n)}}]},
            "status": {"phase": "Running"}}


def cluster(placed: list[tuple[str, int]]) -> Cluster:
    kwok = [_node(f"kwok-node-{i}", 8, "8Gi", [KWOK_TAINT]) for i in range(8)]
    kind = [_node("control-plane", 4, "16Gi", [{"key": "node-role.kubernetes.io/control-plane",
                                                 "effect": "NoSchedule"}])]
    kind += [_node(f"worker{i}", 4, "16Gi", []) for i in range(1, 5)]
    c = Cluster(kwok + kind, conf.parse(CI_CONF))
    for name, members, tier in TREE:
        c.client.create({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
                         "spec": {"tier": tier, "members": [
                             {"type": "Node" if tier == 1 else "HyperNode", "selector": {"exactMatch": {"name": m}}}
                             for m in members]}})
    for i in range(8):
        c.client.create(bound_pod(f"kindnet-{i}", f"kwok-node-{i}", 0, "kube-system"))
    for i, (node, n) in enumerate(placed):
        c.client.create(bound_pod(f"case-pod-{i}", node, n))
    c.rt.settle()
    return c


def topology_job(name: str, n: int, network_topology: dict) -> dict:
    """e2eutil.JobSpec with NetworkTopology: one task of two pods of CPU<n>Mem<n>, minAvailable 2."""
    task = {"name": f"task-{name}", "replicas": 2, "minAvailable": 2, "template": {"spec": {
        "tolerations": TOLERATIONS, "restartPolicy": "OnFailure", "containers": [{
            "name": "nginx", "image": "nginx", "command": ["sleep", "1000"],
            "resources": {"requests": res(n), "limits": res(n)}}]}}}
    return vcjob([task], name=f"job-{name}", minAvailable=2, networkTopology=network_topology)


def job_pods(c: Cluster, name: str) -> dict[str, tuple[str, str | None]]:
    return {p["metadata"]["name"]: (c.pod_phase(p), p["spec"].get("nodeName"))
            for p in c.client.list(kinds.POD, "default") if p["metadata"]["name"].startswith(f"job-{name}-")}


def run(c: Cluster, job: dict) -> None:
    c.client.create(job)
    for _ in range(4):
        c.kubelet()


def hard(tier: int) -> dict:
    return {"mode": "hard", "highestTierAllowed": tier}


def n(*indexes: int) -> set[str]:
    return {f"kwok-node-{i}" for i in indexes}


@pytest.mark.parametrize("name, placed, size, topology, nodes", [
    pytest.param("1-1", [("kwok-node-2", 1), ("kwok-node-3", 1)], 2, hard(1), n(2, 3),
                 id="Case 1.1: Schedule to node-2 and node-3 when resources are enough"),
    pytest.param("1-2", [("kwok-node-2", 4), ("kwok-node-3", 4), ("kwok-node-4", 1)], 4, hard(1), n(4, 5),
                 id="Case 1.2: Schedule to s2 when s1's resources are insufficient and s2's score is higher"),
    pytest.param("1-3", [("kwok-node-0", 4), ("kwok-node-2", 4), ("kwok-node-2", 4), ("kwok-node-3", 4),
                         ("kwok-node-4", 4), ("kwok-node-6", 4), ("kwok-node-6", 4), ("kwok-node-7", 4)], 2, hard(1),
                 n(0, 1), id="Case 1.3: Pods remain pending when no hypernode has sufficient resources"),
    pytest.param("2-1", [("kwok-node-0", 4), ("kwok-node-2", 4), ("kwok-node-4", 4), ("kwok-node-6", 4),
                         ("kwok-node-5", 1)], 2, hard(2), n(5, 7),
                 id="Case 2.1: Schedule to tier 2 when tier 1 resources are insufficient"),
    pytest.param("2-2", [("kwok-node-0", 4), ("kwok-node-1", 4), ("kwok-node-2", 4), ("kwok-node-4", 4),
                         ("kwok-node-5", 1), ("kwok-node-6", 1)], 2, hard(2), n(0, 1),
                 id="Case 2.2: pods are pending when tier 2 resources are insufficient"),
    pytest.param("3-1", [("kwok-node-0", 6), ("kwok-node-2", 6), ("kwok-node-4", 6), ("kwok-node-6", 6),
                         ("kwok-node-1", 4), ("kwok-node-3", 4), ("kwok-node-5", 5), ("kwok-node-7", 4)], 2,
                 {"mode": "soft"}, n(5, 7), id="Case 3.1: Schedule to single hypernode in soft mode"),
])
def test_network_topology(name, placed, size, topology, nodes):
    c = cluster(placed)
    created: list[tuple[str, str | None]] = []   # each job pod as first written: what upstream's 1.3 and 2.2 see
    c.client.watch(kinds.POD, lambda ev: created.append((c.pod_phase(ev.object), ev.object["spec"].get("nodeName")))
                   if ev.type == "ADDED" and ev.object["metadata"]["name"].startswith(f"job-{name}-") else None)
    run(c, topology_job(name, size, topology))
    assert created == [("Pending", None), ("Pending", None)]
    pods = job_pods(c, name)
    assert len(pods) == 2 and {phase for phase, _ in pods.values()} == {"Running"}, pods
    assert {node for _, node in pods.values()} <= nodes, pods


def test_case_2_3_pod_of_job_will_be_rescheduled_to_same_hypernode_when_be_killed():
    c = cluster([("kwok-node-0", 1)])
    run(c, topology_job("2-3", 2, hard(1)))
    assert {node for _, node in job_pods(c, "2-3").values()} <= n(0, 1)
    first = sorted(job_pods(c, "2-3"))[0]
    c.client.delete(kinds.POD, "default", first)
    for _ in range(4):
        c.kubelet()
    pods = job_pods(c, "2-3")
    assert len(pods) == 2 and {phase for phase, _ in pods.values()} == {"Running"}, pods
    assert {node for _, node in pods.values()} <= n(0, 1), pods
