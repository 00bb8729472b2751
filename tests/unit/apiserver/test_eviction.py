"""The eviction subresource's decision (kube-apiserver's EvictionREST) over the in-process API: which
evictions a PodDisruptionBudget refuses, with what, and what an allowed one writes."""
from __future__ import annotations

import datetime as dt

import pytest

from vclite.api import kinds
from vclite.apiserver import eviction, inprocess
from vclite.lib import clock as clock_mod
from vclite.lib import errors

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
STAMP = clock_mod.format_time(NOW)


@pytest.fixture
def api():
    clock = clock_mod.VirtualClock(NOW)
    return inprocess.new_client(clock), clock


def add_pod(client, name, phase="Running", ready=True, labels=None):
    client.create({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": "a"}},
                   "spec": {"containers": [{"name": "c", "image": "x", "command": ["true"]}]}})
    pod = client.get(kinds.POD, "default", name)
    client.update_status({**pod, "status": {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}})


def add_pdb(client, name="b", status=None, generation_bump=False, **spec):
    client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": name, "namespace": "default"},
                   "spec": {"selector": {"matchLabels": {"app": "a"}}, **spec}})
    stored = client.get(kinds.PODDISRUPTIONBUDGET, "default", name)
    full = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0,
            "observedGeneration": 1, **(status or {})}
    if full["disruptionsAllowed"] < 0:   # (refused by policy/v1's status validation: only a store write has it)
        client.store.update(kinds.PODDISRUPTIONBUDGET, {**stored, "status": full}, subresource="status")
    else:
        client.update_status({**stored, "status": full})
    if generation_bump:
        stored = client.get(kinds.PODDISRUPTIONBUDGET, "default", name)
        client.update({**stored, "spec": {**stored["spec"], "minAvailable": 5}})


def gone(client, name):
    try:
        pod = client.get(kinds.POD, "default", name)
    except errors.NotFound:
        return True
    return bool(pod["metadata"].get("deletionTimestamp"))


@pytest.mark.parametrize("pod, budget, error, cause", [
    pytest.param({}, {"minAvailable": 1, "status": {"currentHealthy": 1, "desiredHealthy": 1}},
                 errors.TooManyRequests, "The disruption budget b needs 1 healthy pods and has 1 currently",
                 id="no-disruption-allowed"),
    pytest.param({}, {"minAvailable": 1, "status": {"disruptionsAllowed": 1}, "generation_bump": True},
                 errors.TooManyRequests, "The disruption budget b is still being processed by the server.",
                 id="status-older-than-spec"),
    pytest.param({}, {"minAvailable": 1, "status": {"disruptionsAllowed": -1}}, errors.Forbidden,
                 "pdb disruptions allowed is negative", id="negative"),
    pytest.param({"ready": False}, {"minAvailable": 1, "status": {"currentHealthy": 0, "desiredHealthy": 1}},
                 errors.TooManyRequests, "needs 1 healthy pods and has 0 currently",
                 id="unready-pod-while-the-budget-is-short"),
])
def test_refused(api, pod, budget, error, cause):
    client, clock = api
    add_pod(client, "p", **pod)
    add_pdb(client, **budget)
    before = client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")
    with pytest.raises(error) as info:
        eviction.evict(client, clock, "default", "p")
    message = str(info.value.causes[0]["message"]) if isinstance(info.value, errors.TooManyRequests) \
        else info.value.message
    assert cause in message
    if isinstance(info.value, errors.TooManyRequests):
        assert info.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
    assert not gone(client, "p")
    assert client.get(kinds.PODDISRUPTIONBUDGET, "default", "b") == before


@pytest.mark.parametrize("pod, budget", [
    pytest.param({"phase": "Succeeded", "ready": False}, {"minAvailable": 1}, id="finished-pod"),
    pytest.param({"phase": "Pending", "ready": False}, {"minAvailable": 1}, id="pending-pod"),
    pytest.param({"labels": {"app": "other"}}, {"minAvailable": 1}, id="not-selected"),
    pytest.param({"ready": False}, {"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"},
                 id="unready-always-allow"),
    pytest.param({"ready": False}, {"minAvailable": 1, "status": {"currentHealthy": 2, "desiredHealthy": 1}},
                 id="unready-while-the-budget-is-healthy"),
])
def test_deleted_without_spending_the_budget(api, pod, budget):
    client, clock = api
    add_pod(client, "p", **pod)
    add_pdb(client, **budget)
    before = client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")["status"]
    eviction.evict(client, clock, "default", "p")
    assert gone(client, "p")
    assert client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")["status"] == before


def test_an_allowed_eviction_spends_the_budget_and_notes_the_pod(api):
    client, clock = api
    add_pod(client, "p")
    add_pdb(client, minAvailable=1, status={"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1})
    eviction.evict(client, clock, "default", "p", dry_run=True)
    assert not gone(client, "p")
    assert client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")["status"]["disruptionsAllowed"] == 1
    eviction.evict(client, clock, "default", "p")
    assert gone(client, "p")
    status = client.get(kinds.PODDISRUPTIONBUDGET, "default", "b")["status"]
    assert status["disruptionsAllowed"] == 0 and status["disruptedPods"] == {"p": STAMP}
    cond = status["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("DisruptionAllowed", "False", "InsufficientPods")


def test_two_budgets_over_one_pod_are_an_error(api):
    client, clock = api
    add_pod(client, "p")
    add_pdb(client, "b1", minAvailable=0, status={"disruptionsAllowed": 1})
    add_pdb(client, "b2", minAvailable=0, status={"disruptionsAllowed": 1})
    with pytest.raises(eviction.MultipleBudgets) as info:
        eviction.evict(client, clock, "default", "p")
    assert info.value.code == 500 and "more than one PodDisruptionBudget" in info.value.message


def test_a_budget_without_selector_selects_nothing_and_an_empty_one_everything(api):
    client, clock = api
    add_pod(client, "p", labels={"x": "y"})
    add_pdb(client, "none", minAvailable=1)
    stored = client.get(kinds.PODDISRUPTIONBUDGET, "default", "none")
    client.update({**stored, "spec": {"minAvailable": 1}})
    add_pdb(client, "all", selector={}, minAvailable=1, generation_bump=False)
    with pytest.raises(errors.TooManyRequests) as info:
        eviction.evict(client, clock, "default", "p")
    assert "The disruption budget all needs" in info.value.causes[0]["message"]


def test_the_disruption_target_condition_names_the_generation_it_was_set_for(api):
    """As kube's eviction (Kubernetes 1.33+): DisruptionTarget carries the pod's generation as its
    observedGeneration; the graceful deletion that follows bumps the generation."""
    client, clock = api
    add_pod(client, "p")
    client.bind("default", "p", "n1")
    eviction.evict(client, clock, "default", "p")
    pod = client.get(kinds.POD, "default", "p")
    target = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert [(c["reason"], c.get("observedGeneration")) for c in target] == [("EvictionByEvictionAPI", 1)]
    assert pod["metadata"]["generation"] == 2 and pod["metadata"]["deletionTimestamp"]
