"""The PodGroup controller's pure parts: which pods get a group, its name and spec (Volcano's
pg_controller_handler.go buildPodGroupFromPod / GeneratePodgroupName)."""
from __future__ import annotations

import pytest

from vclite.api import batch, kinds, meta
from vclite.apiserver import inprocess
from vclite.controllers import podgroup
from vclite.lib import clock as clock_mod

OWNER = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "owner-uid", "controller": True}


def pod(scheduler="volcano", annotations=None, owners=None, priority_class=None, deleting=False):
    md = {"name": "p", "namespace": "ns", "uid": "pod-uid", "annotations": annotations or {}}
    if owners is not None:
        md["ownerReferences"] = owners
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"schedulerName": scheduler, "containers": [
        {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"requests": {"cpu": "250m"}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"metadata": md, "spec": spec}


@pytest.mark.parametrize("obj, wanted", [
    pytest.param(pod(), True, id="volcano pod without a group"),
    pytest.param(pod(annotations={"scheduling.k8s.io/group-name": "g"}), False, id="already in a group"),
    pytest.param(pod(scheduler="default-scheduler"), False, id="another scheduler's"),
    pytest.param(pod(deleting=True), False, id="being deleted"),
])
def test_wants_group(obj, wanted):
    assert podgroup.wants_group(obj) is wanted


@pytest.mark.parametrize("owners, name, owner_uid", [
    pytest.param(None, "podgroup-pod-uid", "pod-uid", id="bare pod: named after and owned by itself"),
    pytest.param([OWNER], "podgroup-owner-uid", "owner-uid", id="controller owner: its uid, its references"),
    pytest.param([{**OWNER, "controller": False}], "podgroup-pod-uid", "pod-uid", id="a non-controller owner"),
])
def test_name_and_owner(owners, name, owner_uid):
    group = podgroup.build(pod(owners=owners))
    assert group["metadata"]["name"] == name and group["metadata"]["namespace"] == "ns"
    assert [r["uid"] for r in group["metadata"]["ownerReferences"]] == [owner_uid]


def test_spec_from_the_pod():
    group = podgroup.build(pod(annotations={"scheduling.volcano.sh/queue-name": "q"}, priority_class="high"))
    assert group["spec"]["minMember"] == 1 and group["spec"]["queue"] == "q"
    assert group["spec"]["priorityClassName"] == "high" and group["status"] == {"phase": "Pending"}
    assert group["spec"]["minResources"]["cpu"] == "1250m" and group["spec"]["minResources"]["memory"] == "1Gi"
    assert "queue" not in podgroup.build(pod())["spec"]   # admission defaults it


def test_min_resources_are_the_pod_s_quota_usage_limits_included():
    """CalTaskRequests(pod, 1): the pod's quota usage, limits.cpu and limits.memory too."""
    p = pod()
    p["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "2", "memory": "2Gi"}
    assert podgroup.build(p)["spec"]["minResources"] == {
        "cpu": "1250m", "requests.cpu": "1250m", "memory": "1Gi", "requests.memory": "1Gi", "pods": "1",
        "count/pods": "1", "limits.cpu": "2", "limits.memory": "2Gi"}


MODE, TIER = "volcano.sh/network-topology-mode", "volcano.sh/network-topology-highest-tier"


@pytest.mark.parametrize("annotations, expected", [
    pytest.param({MODE: "hard", TIER: "2"}, {"mode": "hard", "highestTierAllowed": 2},
                 id="Pod with NetworkTopology annotations - hard mode with tier"),
    pytest.param({MODE: "soft"}, {"mode": "soft"}, id="Pod with NetworkTopology annotations - soft mode only"),
    pytest.param({TIER: "1"}, {"mode": "hard", "highestTierAllowed": 1},
                 id="Pod with tier annotation only - should default to hard mode"),
    pytest.param({}, None, id="Pod without NetworkTopology annotations"),
    pytest.param({MODE: "invalid", TIER: "3"}, {"mode": "hard", "highestTierAllowed": 3},
                 id="Pod with invalid mode annotation - should default to hard"),
    pytest.param({MODE: "SOFT"}, {"mode": "soft"}, id="mode in any case"),
    pytest.param({TIER: "two"}, {"mode": "hard"}, id="a tier Atoi cannot read is left out"),
    pytest.param({TIER: " 2"}, {"mode": "hard"}, id="Atoi reads no spaces"),
    pytest.param({TIER: "+02"}, {"mode": "hard", "highestTierAllowed": 2}, id="Atoi reads a sign and zeros"),
    pytest.param({TIER: "-1"}, {"mode": "hard"}, id="a negative tier is left out (the CRD would refuse it)"),
])
def test_network_topology_from_the_pod(annotations, expected):
    """Volcano's TestBuildPodGroupFromPodWithNetworkTopology, and strconv.Atoi's edges."""
    assert podgroup.build(pod(annotations=annotations))["spec"].get("networkTopology") == expected


def test_scheduling_annotations_and_labels_are_copied():
    """buildPodGroupFromPod: preemptable, cooldown and revocable zone; a disruption budget's min-available
    wins over its max-unavailable; nothing else."""
    p = pod(annotations={"volcano.sh/preemptable": "true", "volcano.sh/cooldown-time": "600s",
                         "volcano.sh/revocable-zone": "*", "volcano.sh/jdb-min-available": "2",
                         "volcano.sh/jdb-max-unavailable": "1", "other": "x"})
    p["metadata"]["labels"] = {"volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "60s", "app": "a"}
    md = podgroup.build(p)["metadata"]
    assert md["annotations"] == {"volcano.sh/preemptable": "true", "volcano.sh/cooldown-time": "600s",
                                 "volcano.sh/revocable-zone": "*", "volcano.sh/jdb-min-available": "2"}
    assert md["labels"] == {"volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "60s"}
    only_max = podgroup.build(pod(annotations={"volcano.sh/jdb-max-unavailable": "25%"}))["metadata"]
    assert only_max["annotations"] == {"volcano.sh/jdb-max-unavailable": "25%"} and "labels" not in only_max
    assert "annotations" not in podgroup.build(pod())["metadata"]


# ---- the controller over the in-process API (Volcano's pg_controller_test.go) ---------------------------
RS_UID = "7a09885b-b753-4924-9fba-77c0836bac20"
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "uid": RS_UID, "controller": True}


class _Env:
    """The PodGroup controller on the real in-process API, synced until its queue is empty."""

    def __init__(self):
        self.clock = clock_mod.VirtualClock()
        self.client = inprocess.new_client(self.clock)
        self.ctrl = podgroup.PodGroupController(self.client, self.clock)
        self.ctrl.start()

    def drain(self):
        while (key := self.ctrl.queue.get()) is not None:
            self.ctrl.sync(key)

    def groups(self):
        return {meta.name(g): g for g in self.client.list(kinds.PODGROUP, "test")}


def _api_pod(name, owners=None, annotations=None, priority_class=None, scheduler="volcano"):
    md = {"name": name, "namespace": "test", "annotations": annotations or {}}
    if owners:
        md["ownerReferences"] = owners
    spec = {"schedulerName": scheduler, "containers": [{"name": "c", "image": "x", "command": ["true"],
                                                        "resources": {"requests": {"cpu": "1"}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


@pytest.mark.parametrize("owners, priority_class, group, refs", [
    # pg_controller_test.go TestAddPodGroup "AddPodGroup: pod has ownerReferences and priorityClassName"
    pytest.param([RS_OWNER], "test-pc", f"podgroup-{RS_UID}", lambda uid: [RS_OWNER], id="owned-by-a-replicaset"),
    # TestAddPodGroup "AddPodGroup: pod has no ownerReferences or priorityClassName"
    pytest.param(None, None, "podgroup-{uid}", lambda uid: [
        {"apiVersion": "v1", "kind": "Pod", "name": "pod1", "uid": uid, "controller": True,
         "blockOwnerDeletion": True}],
        id="a-bare-pod-owns-its-group"),
])
def test_a_volcano_pod_gets_its_group_and_is_annotated_with_it(owners, priority_class, group, refs):
    env = _Env()
    if priority_class:
        env.client.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": priority_class}, "value": 10})
    uid = meta.uid(env.client.create(_api_pod("pod1", owners, priority_class=priority_class)))
    env.drain()
    name = group.format(uid=uid)
    (pg,) = env.groups().values()
    assert meta.name(pg) == name and pg["metadata"]["ownerReferences"] == refs(uid)
    assert pg["spec"]["minMember"] == 1 and pg["spec"].get("priorityClassName") == priority_class
    assert meta.annotations(env.client.get(kinds.POD, "test", "pod1"))[batch.GROUP_NAME] == name


@pytest.mark.parametrize("pod_obj", [
    # TestNoPodGroupCreatedForWhenKubeGroupNameAnnotationExists (both entries: a ReplicaSet's or a StatefulSet's
    # pod; vclite serves neither kind, the pod's annotation is what decides)
    pytest.param(_api_pod("rs-pod", [RS_OWNER], {batch.GROUP_NAME: "existing-pg"}), id="annotated-pod-of-a-replicaset"),
    pytest.param(_api_pod("sts-pod", [{**RS_OWNER, "kind": "StatefulSet", "name": "sts1"}],
                          {batch.GROUP_NAME: "existing-pg"}), id="annotated-pod-of-a-statefulset"),
    # TestAddStatefulSet "existing pod without scheduler name": another scheduler's pod gets no group
    pytest.param(_api_pod("other", scheduler="default-scheduler"), id="another-schedulers-pod"),
])
def test_no_group_is_made_for_a_pod_already_in_one_or_not_for_volcano(pod_obj):
    env = _Env()
    env.client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                       "metadata": {"name": "existing-pg", "namespace": "test"}, "spec": {"minMember": 1}})
    before = meta.annotations(env.client.create(pod_obj))
    env.drain()
    assert list(env.groups()) == ["existing-pg"]
    assert meta.annotations(env.client.get(kinds.POD, "test", meta.name(pod_obj))) == before


def test_the_pods_of_one_owner_share_its_group():
    """TestAddPodGroup "pod owners with group-min-member annotation": pod1 and pod2 of ReplicaSet rs1 both end in
    `podgroup-<rs1's uid>`. (The ReplicaSet's min-member annotation is not read: vclite serves no ReplicaSet, so the
    group keeps minMember 1.)"""
    env = _Env()
    for name in ("pod1", "pod2"):
        env.client.create(_api_pod(name, [RS_OWNER]))
        env.drain()
    assert list(env.groups()) == [f"podgroup-{RS_UID}"]
    assert env.groups()[f"podgroup-{RS_UID}"]["spec"]["minMember"] == 1
    assert {meta.annotations(p)[batch.GROUP_NAME] for p in env.client.list(kinds.POD, "test")} == {f"podgroup-{RS_UID}"}


@pytest.mark.parametrize("change", [
    pytest.param({"metadata": {"annotations": {batch.GROUP_NAME: None}}}, id="group-annotation-removed"),
    pytest.param({"metadata": {"annotations": {batch.GROUP_NAME: ""}}}, id="group-annotation-emptied"),
])
def test_a_pod_changed_later_is_not_looked_at_again_until_the_controller_starts_again(change):
    """Volcano's controller handles pod adds only (its informer's AddFunc; a restart lists every pod as added):
    a pod whose group annotation is taken away later keeps it away until then."""
    env = _Env()
    env.client.create(_api_pod("pod1"))
    env.drain()
    (first,) = env.groups()
    env.client.patch(kinds.POD, "test", "pod1", change)
    env.drain()
    assert not meta.annotations(env.client.get(kinds.POD, "test", "pod1")).get(batch.GROUP_NAME)
    assert list(env.groups()) == [first]
    env.ctrl.stop()
    again = podgroup.PodGroupController(env.client, env.clock)   # (the controller started again)
    again.start()
    while (key := again.queue.get()) is not None:
        again.sync(key)
    assert meta.annotations(env.client.get(kinds.POD, "test", "pod1"))[batch.GROUP_NAME] == first
