"""The disruption controller: a PodDisruptionBudget's status as kube-controller-manager computes it
(pkg/controller/disruption: trySync, getExpectedPodCount, countHealthyPods, buildDisruptedPodMap,
failSafe), then the controller over the in-process API."""
from __future__ import annotations

import datetime as dt

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.controllers import disruption
from vclite.lib import clock as clock_mod

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
VCJOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "j-uid", "controller": True}
RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}


def ago(seconds):
    return clock_mod.format_time(NOW - dt.timedelta(seconds=seconds))


def pod(name, ready=True, labels=None, owner=None, deleting=False, phase="Running"):
    md = {"name": name, "namespace": "default", "labels": {"app": "a"} if labels is None else labels}
    if owner:
        md["ownerReferences"] = [owner]
    if deleting:
        md["deletionTimestamp"] = ago(0)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def pdb(generation=1, status=None, **spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "b", "namespace": "default", "generation": generation},
            "spec": {"selector": {"matchLabels": {"app": "a"}}, **spec}, "status": status or {}}


def counts(status):
    return tuple(status.get(k) for k in ("expectedPods", "desiredHealthy", "currentHealthy", "disruptionsAllowed"))


@pytest.mark.parametrize("spec, pods, want", [
    pytest.param({"minAvailable": 2}, [pod("p1"), pod("p2"), pod("p3")], (3, 2, 3, 1), id="min-2-of-3-ready"),
    pytest.param({"minAvailable": 3}, [pod("p1"), pod("p2"), pod("p3", ready=False)], (3, 3, 2, 0),
                 id="one-not-ready-none-allowed"),
    pytest.param({"minAvailable": 0}, [pod("p1")], (1, 0, 1, 1), id="min-0"),
    pytest.param({"minAvailable": 1}, [], (0, 1, 0, 0), id="no-pods"),
    pytest.param({"minAvailable": 1}, [pod("p1"), pod("p2", deleting=True)], (2, 1, 1, 0),
                 id="a-pod-being-deleted-is-not-healthy"),
    pytest.param({"minAvailable": 1}, [pod("p1"), pod("p2", phase="Succeeded", ready=False)], (2, 1, 1, 0),
                 id="a-finished-pod-is-expected-but-not-healthy"),
    pytest.param({"minAvailable": 1}, [pod("p1"), pod("x", labels={"app": "other"})], (1, 1, 1, 0),
                 id="other-labels-not-selected"),
    pytest.param({"selector": {}, "minAvailable": 1}, [pod("p1"), pod("x", labels={})], (2, 1, 2, 1),
                 id="empty-selector-selects-all"),
    pytest.param({"selector": None, "minAvailable": 0}, [pod("p1")], (0, 0, 0, 0), id="no-selector-selects-none"),
    pytest.param({"maxUnavailable": 1}, [pod("p1"), pod("p2")], (0, 0, 2, 0),
                 id="max-unavailable-unmanaged-pods-expect-none"),
])
def test_status(spec, pods, want):
    budget = pdb(**spec)
    if budget["spec"].get("selector") is None:
        budget["spec"].pop("selector")
    selected = [p for p in pods if disruption.disruption.selects(budget, p["metadata"]["labels"])]
    out = disruption.compute(budget, selected, NOW)
    assert counts(out.status) == want
    assert out.status["observedGeneration"] == 1
    cond = out.status["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "DisruptionAllowed", "True" if want[3] > 0 else "False", "SufficientPods" if want[3] else "InsufficientPods")


@pytest.mark.parametrize("spec, pods, message", [
    pytest.param({"maxUnavailable": 1}, [pod("p1", owner=VCJOB)],
                 "jobs.batch.volcano.sh does not implement the scale subresource", id="vcjob-has-no-scale"),
    pytest.param({"minAvailable": "50%"}, [pod("p1", owner=RS)], 'found no controllers for pod "p1"',
                 id="replicaset-not-found"),
    pytest.param({"maxUnavailable": "10%"}, [pod("p1", owner={**VCJOB, "apiVersion": "x.io/v1", "kind": "Foo"})],
                 'no matches for kind "Foo" in version "x.io/v1"', id="unknown-kind"),
])
def test_a_failed_sync_allows_nothing_and_says_why(spec, pods, message):
    out = disruption.compute(pdb(status={"disruptionsAllowed": 3, "currentHealthy": 4, "observedGeneration": 1},
                                 **spec), pods, NOW)
    assert out.status["disruptionsAllowed"] == 0 and out.status["currentHealthy"] == 4
    cond = out.status["conditions"][0]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "SyncFailed", message)
    assert ("Warning", "CalculateExpectedPodCountFailed",
            f"Failed to calculate the number of expected pods: {message}") in out.events


def test_a_scale_counts_each_controller_once():
    scales = {"a": 4, "b": 2}
    pods = [pod("p1", owner={**VCJOB, "uid": "a"}), pod("p2", owner={**VCJOB, "uid": "a"}),
            pod("p3", owner={**VCJOB, "uid": "b"}), pod("p4")]
    out = disruption.compute(pdb(minAvailable="50%"), pods, NOW, scale=lambda ref, ns: scales[ref["uid"]])
    assert counts(out.status) == (6, 3, 4, 1)
    assert [reason for _, reason, _ in out.events] == ["UnmanagedPods"]
    out = disruption.compute(pdb(maxUnavailable="30%"), pods, NOW, scale=lambda ref, ns: scales[ref["uid"]])
    assert counts(out.status) == (6, 4, 4, 0)   # 30% of 6 rounded up is 2


def test_disrupted_pods_are_not_healthy_for_two_minutes_then_dropped_with_a_warning():
    pods = [pod("p1"), pod("p2"), pod("p3")]
    status = {"disruptedPods": {"p1": ago(30), "p2": ago(121), "gone": ago(10)}}
    out = disruption.compute(pdb(minAvailable=1, status=status), pods, NOW)
    assert out.status["disruptedPods"] == {"p1": ago(30)}
    assert counts(out.status) == (3, 1, 2, 1)
    assert out.recheck_at == NOW + dt.timedelta(seconds=90)
    assert out.pod_events == [("p2", "Warning", "NotDeleted", "Pod was expected by PDB default/b to be deleted but "
                                                            "it wasn't")]


def test_the_condition_keeps_its_transition_time_while_its_status_holds():
    first = disruption.compute(pdb(minAvailable=1), [pod("p1"), pod("p2")], NOW).status
    later = NOW + dt.timedelta(minutes=5)
    again = disruption.compute(pdb(minAvailable=1, status=first, generation=2), [pod("p1"), pod("p2")], later).status
    assert again["conditions"][0]["lastTransitionTime"] == first["conditions"][0]["lastTransitionTime"]
    assert again["observedGeneration"] == 2 and again["conditions"][0]["observedGeneration"] == 2
    flipped = disruption.compute(pdb(minAvailable=2, status=again), [pod("p1"), pod("p2")], later).status
    assert flipped["conditions"][0]["lastTransitionTime"] == clock_mod.format_time(later)


def test_the_controller_writes_the_status_and_follows_the_pods():
    clock = clock_mod.VirtualClock(NOW)
    client = inprocess.new_client(clock)
    controller = disruption.DisruptionController(client, clock)
    controller.start()
    client.create({**pdb(minAvailable=1), "status": None})
    for name in ("p1", "p2"):
        client.create({**pod(name), "spec": {"containers": [{"name": "c", "image": "x", "command": ["true"]}]}})
    for p in client.list(kinds.POD):
        client.update_status({**p, "status": pod("x")["status"]})
    while (key := controller.queue.get()) is not None:
        controller.sync(key)
    stored = client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")
    assert counts(stored["status"]) == (2, 1, 2, 1)
    client.delete(kinds.POD, "default", "p2")
    while (key := controller.queue.get()) is not None:
        controller.sync(key)
    stored = client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")
    assert counts(stored["status"]) == (1, 1, 1, 0) and stored["status"]["conditions"][0]["status"] == "False"
    controller.stop()


def test_a_deleting_budget_is_observed_at_the_generation_its_deletion_gave_it():
    """A budget its finalizers hold: the delete bumps its generation (markAsDeleting) and the controller, which
    syncs a deleting budget as any other, records it in status.observedGeneration and the condition's; so the
    eviction API does not call it 'still being processed' until it goes."""
    clock = clock_mod.VirtualClock(NOW)
    client = inprocess.new_client(clock)
    controller = disruption.DisruptionController(client, clock)
    controller.start()
    budget = {**pdb(minAvailable=1), "status": None}
    client.create({**budget, "metadata": {**budget["metadata"], "finalizers": ["example.com/hold"]}})
    client.delete(kinds.PODDISRUPTIONBUDGET, "default", "b")
    while (key := controller.queue.get()) is not None:
        controller.sync(key)
    stored = client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")
    assert stored["metadata"]["generation"] == 2 and stored["metadata"]["deletionTimestamp"]
    assert (stored["status"]["observedGeneration"], stored["status"]["conditions"][0]["observedGeneration"]) == (2, 2)
    controller.stop()


def test_pods_are_followed_only_once_a_budget_exists_and_those_made_before_count():
    clock = clock_mod.VirtualClock(NOW)
    client = inprocess.new_client(clock)
    controller = disruption.DisruptionController(client, clock)
    controller.start()
    for name in ("p1", "p2"):
        client.create({**pod(name), "spec": {"containers": [{"name": "c", "image": "x", "command": ["true"]}]}})
    for p in client.list(kinds.POD):
        client.update_status({**p, "status": pod("x")["status"]})
    assert list(controller.pods.items()) == []   # (no budget: a pod event costs this controller nothing)
    client.create({**pdb(minAvailable=1), "status": None})
    while (key := controller.queue.get()) is not None:
        controller.sync(key)
    assert counts(client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")["status"]) == (2, 1, 2, 1)
    controller.stop()
