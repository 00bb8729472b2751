"""Volcano's network-topology e2e cases (test/e2e/hypernode/network_topology_test.go, Cases 1.1 to 3.1, and
network_topology_task_test.go, Cases 4.1 to 9.6: tasks with a partitionPolicy) on the embedded control
plane on a virtual clock, with the test kubelet of test_volcano_e2e_jobs.py and the scheduler configuration
of Volcano's CI (volcano-scheduler-ci.conf: the Helm tiers plus `sla` and
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
room (s0: n1 is free in both): Volcano places the job in s0 there, and so does vclite, which these pin; the
same holds for Case 7.2.

controller_runtime_test.go's `discovers, updates, and removes label topology while reconciling status` is at
the end, with the suite's label-discovery configuration. Not ported from test/e2e/hypernode: the
controller's deployment cases (its other cases and controller_ownership_transition_test.go: Helm releases,
Deployments, service accounts and RBAC, leader fail-over), which are about installing Volcano.
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


# ---- network_topology_task_test.go: tasks with a partitionPolicy, Cases 4.1 to 9.6 ----------------------------------
SOFT = {"mode": "soft"}


def partition_job(name: str, n: int, replicas: int, partitions: tuple, job_topology: dict | None,
                  job_min: int | None = None, task_min: int | None = None) -> dict:
    """e2eutil.JobSpec: one task of `replicas` CPU<n>Mem<n> pods with PartitionPolicy (total, size,
    minPartitions, networkTopology); the job's Min (else the task's Min, as CreateJob sums them)."""
    total, size, min_partitions, topology = partitions
    policy = {"totalPartitions": total, "partitionSize": size, "networkTopology": topology}
    if min_partitions is not None:
        policy["minPartitions"] = min_partitions
    task = {"name": f"task-{name}", "replicas": replicas, "partitionPolicy": policy, "template": {"spec": {
        "tolerations": TOLERATIONS, "restartPolicy": "OnFailure", "containers": [{
            "name": "nginx", "image": "nginx", "command": ["sleep", "1000"],
            "resources": {"requests": res(n), "limits": res(n)}}]}}}
    spec: dict = {}
    if task_min is not None:
        task["minAvailable"] = task_min
    if job_topology is not None:
        spec["networkTopology"] = job_topology
    if job_min is not None or task_min is not None:
        spec["minAvailable"] = job_min if job_min is not None else task_min
    return vcjob([task], name=f"job-{name}", **spec)


def nodes_of(hypernode: str) -> list[str]:
    members = {name: m for name, m, _ in TREE}
    return [n for m in members[hypernode] for n in (nodes_of(m) if m in members else [m])]


def pods_on(c: Cluster, hypernode: str) -> int:
    """VerifyHyperNodeScheduling's count: the test namespace's pods (the case's own included) on its nodes."""
    return sum(1 for p in c.client.list(kinds.POD, "default") if p["spec"].get("nodeName") in nodes_of(hypernode))


def kwok(*placed: tuple[int, int]) -> list[tuple[str, int]]:
    return [(f"kwok-node-{i}", size) for i, size in placed]


ALL6, ALL4, ALL2 = [(i, 6) for i in range(8)], [(i, 4) for i in range(8)], [(i, 2) for i in range(8)]
FULL_BUT_ONE = [(0, 6), (1, 2), (2, 6), (3, 2), (4, 6), (5, 2), (6, 6), (7, 2)]
TASK_CASES = [
    # name, placed, size, replicas, (total, size, minPartitions, partition topology), job topology, job min, task min,
    # expected: a set of nodes every pod is on, {hypernode: pods} counts, or None: the pods wait unplaced
    pytest.param("4-1", kwok((2, 1), (3, 1)), 2, 4, (2, 2, None, hard(1)), hard(1), None, 4, n(2, 3),
                 id="Case 4.1: Schedule to node-2 and node-3 when resources are enough"),
    pytest.param("4-2", kwok(*ALL6), 4, 2, (2, 1, None, hard(1)), hard(1), None, 2, None,
                 id="Case 4.2: Pods remain pending when no hypernode has sufficient resources"),
    pytest.param("4-3", kwok(*FULL_BUT_ONE), 4, 2, (2, 1, None, hard(1)), hard(1), None, 2, None,
                 id="Case 4.3: Pods remain pending when hypernode has sufficient resources but does not meet the "
                    "topological requirements"),
    pytest.param("5-1", kwok((2, 1), (3, 1)), 2, 4, (2, 2, None, hard(1)), hard(2), None, 4, n(2, 3),
                 id="Case 5.1: Schedule to node-2 and node-3 when resources are enough"),
    pytest.param("5-2", kwok((0, 3), (2, 3), (4, 6), (5, 6), (6, 6), (7, 6)), 3, 4, (2, 2, None, hard(1)), hard(2),
                 None, 4, {"s0": 3, "s1": 3, "s4": 6},
                 id="Case 5.2: Scheduling is performed in groups when resources are enough"),
    pytest.param("5-4", kwok((0, 6), (1, 6), (2, 1), (3, 1)), 2, 4, (2, 2, None, hard(1)), hard(2), None, 4, n(2, 3),
                 id="Case 5.4: Schedule to s1 when s0's resources are insufficient and s1's score is higher"),
    pytest.param("5-5", kwok(*ALL6), 4, 2, (2, 1, None, hard(1)), hard(2), None, 2, None,
                 id="Case 5.5: Pods remain pending when no hypernode has sufficient resources"),
    pytest.param("5-6", kwok(*ALL4), 4, 2, (2, 1, None, hard(1)), hard(2), None, 2, None,
                 id="Case 5.6: Pods remain pending when hypernode has sufficient resources but does not meet the "
                    "topological requirements"),
    pytest.param("6-1", kwok((2, 1), (3, 1)), 2, 4, (2, 2, None, SOFT), hard(2), None, 4, n(2, 3),
                 id="Case 6.1: Schedule to node-2 and node-3 when resources are enough"),
    pytest.param("6-2", kwok((0, 3), (1, 3), (2, 3), (3, 5), (4, 2), (6, 2)), 4, 4, (2, 2, None, SOFT), hard(2),
                 None, 4, n(4, 5, 6, 7), id="Case 6.2: Scheduling is performed in groups when resources are enough"),
    pytest.param("6-3", kwok((0, 6), (1, 2), (2, 2), (3, 2), (4, 6), (5, 2), (6, 2), (7, 2)), 4, 4,
                 (2, 2, None, SOFT), hard(2), None, 4, None,
                 id="Case 6.3: Pods remain pending when hypernode has sufficient resources but does not meet the "
                    "topological requirements"),
    pytest.param("7-1", kwok((0, 4), (4, 4), (2, 6), (3, 6), (6, 6), (7, 6)), 3, 4, (2, 2, None, hard(1)), SOFT,
                 None, 4, {"s0": 3, "s2": 3},
                 id="Case 7.1: Scheduling is performed in groups when resources are enough"),
    # upstream's check (three pods Pending) holds as the pods are created; each one-pod partition fits a tier-1
    # HyperNode (every node has 5.9 cpu free), so they are placed, one per node, as Volcano places them
    pytest.param("7-2", kwok(*ALL2), 4, 3, (3, 1, None, hard(1)), SOFT, None, 3, n(0, 1, 2, 3, 4, 5, 6, 7),
                 id="Case 7.2: Pods remain pending when hypernode has sufficient resources but does not meet the "
                    "topological requirements"),
    pytest.param("8-1", kwok((0, 4), (4, 4), (2, 6), (3, 6), (6, 6), (7, 6)), 3, 4, (2, 2, None, hard(1)), None,
                 None, 4, {"s0": 3, "s2": 3},
                 id="Case 8.1: Scheduling is performed in groups when resources are enough"),
    pytest.param("9-1", kwok((2, 1), (3, 1)), 3, 4, (2, 2, 2, hard(1)), hard(1), 4, None, n(2, 3),
                 id="Case 9.1: Schedule to node-2 and node-3 when hypernode resources just meet the job's "
                    "minAvailable requirement."),
    pytest.param("9-2", kwok((2, 1), (3, 1)), 3, 8, (4, 2, 4, hard(1)), hard(2), 4, None,
                 {"s0": 4, "s1": 6, "s4": 10},
                 id="Case 9.2: Schedule to s4 when hypernode resources has more resources than the minAvailable "
                    "resources requested by the job."),
    pytest.param("9-3", [], 3, 12, (6, 2, 2, hard(1)), hard(1), 6, None, None,
                 id="Case 9.3: Pods remain pending when hypernode resources meet minPartitions but do not meet the "
                    "job's minAvailable."),
    pytest.param("9-4", [], 3, 12, (6, 2, 4, hard(1)), hard(1), 4, None, None,
                 id="Case 9.4: Pods remain pending when hypernode resources meet the job's minAvailable but do not "
                    "meet minPartitions."),
]


@pytest.mark.parametrize("name, placed, size, replicas, partitions, job_topology, job_min, task_min, expected",
                         TASK_CASES)
def test_partitions_with_network_topology(name, placed, size, replicas, partitions, job_topology, job_min, task_min,
                                          expected):
    c = cluster(placed)
    run(c, partition_job(name, size, replicas, partitions, job_topology, job_min, task_min))
    pods = job_pods(c, name)
    assert len(pods) == replicas, pods
    if expected is None:
        assert set(pods.values()) == {("Pending", None)}, pods
    elif isinstance(expected, set):
        assert {phase for phase, _ in pods.values()} == {"Running"}, pods
        assert {node for _, node in pods.values()} <= expected, pods
    else:
        assert {h: pods_on(c, h) for h in expected} == expected, pods


@pytest.mark.parametrize("name, replicas, partitions, job_topology, job_min, killed", [
    pytest.param("5-3", 4, (2, 2, None, hard(1)), hard(2), None, 1,
                 id="Case 5.3: pod of job will be rescheduled to same hypernode when be killed"),
    pytest.param("9-5", 4, (2, 2, 2, hard(1)), hard(2), None, 1,
                 id="Case 9.5: pod of job will be rescheduled to same hypernode when be killed"),
    pytest.param("9-6", 8, (4, 2, 2, hard(1)), hard(1), 4, 2,
                 id="Case 9.6: subJob of job will be rescheduled to same hypernode when be killed"),
])
def test_killed_pods_of_partitions_come_back(name, replicas, partitions, job_topology, job_min, killed):
    """Cases 5.3 and 9.5: the job runs in s3 (n6 and n7 already run a pod each) and a killed pod comes back there.
    Case 9.6: a tier-1 HyperNode holds four of its eight 3-cpu pods, which make it ready (minAvailable 4, two
    partitions); its first two pods (a whole partition) are killed and run again (upstream checks no more)."""
    c = cluster(kwok((6, 1), (7, 1)))
    task_min = replicas if name == "5-3" else None
    run(c, partition_job(name, 2 if name == "5-3" else 3, replicas, partitions, job_topology, job_min, task_min))
    pods = job_pods(c, name)
    running = {pod for pod, (phase, _) in pods.items() if phase == "Running"}
    assert len(pods) == replicas and len(running) == (job_min or replicas), pods
    assert {pods[pod][1] for pod in running} <= n(6, 7), pods
    for pod in sorted(pods)[:killed]:
        assert pod in running
        c.client.delete(kinds.POD, "default", pod)
    for _ in range(4):
        c.kubelet()
    again = job_pods(c, name)
    assert {pod for pod, (phase, _) in again.items() if phase == "Running"} == running, again
    assert {again[pod][1] for pod in running} <= n(6, 7), again


# ---- controller_runtime_test.go: `discovers, updates, and removes label topology while reconciling status` --------
RACK = "volcano.sh/e2e-hypernode-rack"
SOURCE = "volcano.sh/network-topology-source"
DISCOVERY = """
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        e2e-rack-topology:
          - nodeLabel: volcano.sh/e2e-hypernode-rack
          - nodeLabel: kubernetes.io/hostname
"""   # (hack/run-e2e-kind.sh's controller_config_override for the HYPERNODE suite)


def set_rack(c: Cluster, node: str, rack: str) -> None:
    obj = c.client.get(kinds.NODE, "", node)
    labels = {k: v for k, v in obj["metadata"]["labels"].items() if k != RACK}
    if rack:
        labels[RACK] = rack
    c.client.update({**obj, "metadata": {**obj["metadata"], "labels": labels}})
    c.rt.settle()


def discovered_racks(c: Cluster) -> dict[str, tuple]:
    """expectDiscoveredTopology: {rack: (tier, tierName, members, nodeCount)} of the label source's HyperNodes."""
    out = {}
    for h in c.client.list(kinds.HYPERNODE):
        labels = h["metadata"].get("labels") or {}
        if labels.get(SOURCE) != "label":
            continue
        members = sorted(m["selector"]["exactMatch"]["name"] for m in h["spec"]["members"] if m["type"] == "Node")
        out[labels.get(RACK)] = (h["spec"]["tier"], h["spec"].get("tierName"), members,
                                 (h.get("status") or {}).get("nodeCount"))
    return out


def test_discovers_updates_and_removes_label_topology_while_reconciling_status():
    c = cluster([])
    c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}})
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
                     "data": {"volcano-controller.conf": DISCOVERY}})
    c.rt.settle()
    assert discovered_racks(c) == {}
    set_rack(c, "kwok-node-0", "rack-a")
    set_rack(c, "kwok-node-1", "rack-a")
    assert discovered_racks(c) == {"rack-a": (1, RACK, ["kwok-node-0", "kwok-node-1"], 2)}
    set_rack(c, "kwok-node-1", "rack-b")
    assert discovered_racks(c) == {"rack-a": (1, RACK, ["kwok-node-0"], 1), "rack-b": (1, RACK, ["kwok-node-1"], 1)}
    set_rack(c, "kwok-node-0", "")
    set_rack(c, "kwok-node-1", "")
    assert discovered_racks(c) == {}
    assert {h["metadata"]["name"] for h in c.client.list(kinds.HYPERNODE)} == {name for name, _, _ in TREE}
