"""Volcano's e2e PodGroup cases on the embedded control plane on a virtual clock, with the test kubelet of
test_volcano_e2e_jobs.py (bound pods go Running; a deleted pod stays Terminating until the test says its
kubelet is done):
- test/e2e/schedulingaction/terminating_podgroup.go: `PodGroup should stay Running while scheduled members
  are terminating` (both entries). Upstream's pods trap SIGTERM and have a 300 s grace period, so they stay
  Terminating on their node; upstream watches the PodGroup for 15 s. Here every PodGroup version written from
  the deletion on is watched (the scheduler runs a session on each change, not each second), then 15 s pass.
"""
from __future__ import annotations

import pytest

from tests.scenarios.test_volcano_e2e_jobs import Cluster, node
from vclite.api import kinds, meta

PG = "pg-sticky-releasing"


def sticky_pod(name: str) -> dict:
    """e2e createStickyPod: a volcano pod of the PodGroup that ignores SIGTERM, with a 300 s grace period."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "default", "annotations": {"scheduling.k8s.io/group-name": PG}},
        "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "terminationGracePeriodSeconds": 300,
                 "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "trap '' TERM; sleep 999999"],
                                 "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}]}}


@pytest.mark.parametrize("members", [
    pytest.param(1, id="single-Pod PodGroup"),
    pytest.param(2, id="partially terminating multi-Pod PodGroup"),
])
def test_podgroup_stays_running_while_scheduled_members_are_terminating(members: int) -> None:
    c = Cluster([node("n1", "2")])
    c.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
              "metadata": {"name": PG, "namespace": "default"}, "spec": {"minMember": members, "queue": "default"}})
    for i in range(members):
        c.create(sticky_pod(f"sticky-releasing-{i}"))
    c.kubelet()
    assert set(c.pods().values()) == {"Running"}
    assert meta.phase(c.client.get(kinds.PODGROUP, "default", PG)) == "Running"

    seen: list[dict] = []
    c.client.watch(kinds.PODGROUP, lambda ev: seen.append(ev.object["status"]))
    c.client.delete(kinds.POD, "default", "sticky-releasing-0")   # (its kubelet never finishes it here)
    c.rt.settle()
    c.rt.clock.advance(15)
    c.rt.settle()

    assert meta.is_deleting(c.client.get(kinds.POD, "default", "sticky-releasing-0"))
    status = c.client.get(kinds.PODGROUP, "default", PG)["status"]
    assert [s["phase"] for s in seen] + [status["phase"]] == ["Running"] * (len(seen) + 1)
    unschedulable = [cond for st in seen + [status] for cond in st.get("conditions") or []
                     if cond["type"] == "Unschedulable" and cond["status"] == "True"]
    assert unschedulable == []   # (upstream forbids NotEnoughResources; Volcano writes no condition at all)
