"""Volcano's scheduling-gates e2e cases (test/e2e/schedulinggates/scheduling_gates.go: SchedulingGatesQueueAdmission)
on the embedded control plane on a virtual clock, with the test kubelet of test_volcano_e2e_jobs.py and the CI
scheduler configuration with `capacity` in place of `proportion`, as upstream's ConfigMap modifier makes it.

A pod annotated `scheduling.volcano.sh/queue-allocation-gate: "true"` is created with that scheduling gate; the
scheduler removes it once the pod's queue has room (and it is the pod's only gate); a pod let through that still
waits (unschedulable) keeps its room in the queue. Upstream runs this behind an alpha feature gate; vclite has no
feature gates and acts on the pod's opt-in alone (docs/differences.md).
"""
from __future__ import annotations

from tests import scheduler_confs
from tests.scenarios.test_volcano_e2e_jobs import Cluster
from tests.scenarios.test_volcano_e2e_scheduling import CI_ACTIONS, CONTROL_PLANE_TAINT, WORKERS, _node
from vclite.api import kinds
from vclite.scheduler import conf

GATE = "scheduling.volcano.sh/queue-allocation-gate"
OTHER_GATE = "example.com/other-gate"
SLOT = {"cpu": "500m", "memory": "512Mi"}
CAPACITY_CONF = scheduler_confs.helm_conf(CI_ACTIONS).replace("  - name: proportion\n", "  - name: capacity\n")


def cluster(queue: str, podgroup: str) -> Cluster:
    """Upstream's kind cluster; a queue whose capability is one slot and a PodGroup (minMember 1) in it."""
    c = Cluster([_node("control-plane", [CONTROL_PLANE_TAINT])] + [_node(n) for n in WORKERS],
                conf.parse(CAPACITY_CONF))
    c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": queue},
                     "spec": {"weight": 1, "capability": SLOT}})
    c.rt.settle()
    assert c.client.get(kinds.QUEUE, "", queue)["status"]["state"] == "Open"
    c.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                     "metadata": {"name": podgroup, "namespace": "default"},
                     "spec": {"minMember": 1, "queue": queue, "minResources": SLOT}})
    return c


def gated_pod(name: str, queue: str, podgroup: str, **spec) -> dict:
    """e2eutil.CreatePod with the group, the opt-in annotation and the queue; one slot of requests."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "annotations": {
        "scheduling.k8s.io/group-name": podgroup, GATE: "true", "scheduling.volcano.sh/queue-name": queue}},
        "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "containers": [{
            "name": "nginx", "image": "nginx", "command": ["sleep", "1000"],
            "resources": {"requests": SLOT, "limits": SLOT}}], **spec}}


def settle(c: Cluster) -> None:
    for _ in range(3):
        c.kubelet()


def state(c: Cluster, name: str) -> tuple[str, list[str]]:
    pod = c.client.get(kinds.POD, "default", name)
    return c.pod_phase(pod), [g["name"] for g in pod["spec"].get("schedulingGates") or []]


def test_unschedulable_pod_with_removed_gate_reserves_queue_capacity_and_blocks_other_pods():
    q, pg = "capacity-test-queue", "test-podgroup"
    c = cluster(q, pg)
    created = c.client.create(gated_pod("pod-1", q, pg))
    assert [g["name"] for g in created["spec"]["schedulingGates"]] == [GATE]   # the webhook's gate
    settle(c)
    assert state(c, "pod-1") == ("Running", [])
    c.client.delete(kinds.POD, "default", "pod-1")
    settle(c)

    c.client.create(gated_pod("pod-2", q, pg, nodeSelector={"kubernetes.io/fake-node": "fake"}))
    settle(c)
    assert state(c, "pod-2") == ("Pending", [])         # let through, and unschedulable: it keeps its room
    c.client.create(gated_pod("pod-3", q, pg))
    settle(c)
    assert state(c, "pod-3") == ("Pending", [GATE])     # (upstream deletes pod-2 without looking)
    c.client.delete(kinds.POD, "default", "pod-2")
    settle(c)
    assert state(c, "pod-3") == ("Running", [])


def test_multiple_scheduling_gates_scheduler_skips_until_only_volcano_gate_remains_then_removes_it():
    q, pg, name = "capacity-multigate-queue", "test-pg-multigate", "pod-multigate"
    c = cluster(q, pg)
    c.client.create(gated_pod(name, q, pg, schedulingGates=[{"name": OTHER_GATE}]))
    settle(c)
    assert state(c, name) == ("Pending", [OTHER_GATE, GATE])   # both gates remain
    pod = c.client.get(kinds.POD, "default", name)
    c.client.update({**pod, "spec": {**pod["spec"], "schedulingGates": [{"name": GATE}]}})
    settle(c)
    assert state(c, name) == ("Running", [])
