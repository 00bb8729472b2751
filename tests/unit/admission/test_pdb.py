"""PodDisruptionBudget admission: defaults and kube-apiserver's validation, one problem per mistake."""
from __future__ import annotations

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def pdb(**spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}, **spec}}


def admit_pdb(new, old=None, op=Op.CREATE):
    return admit.admit(op, kinds.PODDISRUPTIONBUDGET, new, old, views.default_view())


@pytest.mark.parametrize("spec, want", [
    pytest.param({}, {"minAvailable": 1}, id="neither-given-min-available-1"),
    pytest.param({"minAvailable": 0}, {"minAvailable": 0}, id="zero-kept"),
    pytest.param({"maxUnavailable": "50%"}, {"maxUnavailable": "50%"}, id="max-unavailable-alone"),
    pytest.param({"minAvailable": "100%"}, {"minAvailable": "100%"}, id="a-hundred-percent"),
])
def test_defaults(spec, want):
    out = admit_pdb(pdb(**spec))
    assert {k: out["spec"].get(k) for k in want} == want
    assert ("minAvailable" in out["spec"]) != ("maxUnavailable" in out["spec"])


def test_a_create_starts_from_the_zero_status():
    out = admit_pdb({**pdb(), "status": {"disruptionsAllowed": 5}})
    assert out["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


@pytest.mark.parametrize("spec, path, message", [
    pytest.param({"minAvailable": 1, "maxUnavailable": 1}, "spec",
                 "minAvailable and maxUnavailable cannot be both set", id="both"),
    pytest.param({"minAvailable": -1}, "spec.minAvailable", "must be greater than or equal to 0", id="negative"),
    pytest.param({"maxUnavailable": "5"}, "spec.maxUnavailable", "a valid percent string must be", id="no-percent"),
    pytest.param({"minAvailable": "150%"}, "spec.minAvailable", "must not be greater than 100%", id="over-100"),
    pytest.param({"minAvailable": 1.5}, "spec.minAvailable", "must be an integer or percentage", id="float"),
    pytest.param({"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
                 "spec.selector.matchExpressions[0].values", "must be specified when `operator` is 'In'", id="in"),
    pytest.param({"selector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}},
                 "spec.selector.matchExpressions[0].values", "may not be specified", id="exists-with-values"),
    pytest.param({"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}},
                 "spec.selector.matchExpressions[0].operator", 'Unsupported value: "Near"', id="operator"),
    pytest.param({"selector": {"matchLabels": {"a b": "x"}}}, "spec.selector.matchLabels", "name part must",
                 id="label-key"),
    pytest.param({"selector": {"matchLabels": {"app": "-x"}}}, "spec.selector.matchLabels", "valid label must",
                 id="label-value"),
    pytest.param({"unhealthyPodEvictionPolicy": "Sometimes"}, "spec.unhealthyPodEvictionPolicy",
                 '"IfHealthyBudget", "AlwaysAllow"', id="policy"),
])
def test_refuses_with_one_problem(spec, path, message):
    with pytest.raises(errors.Invalid) as info:
        admit_pdb(pdb(**spec))
    problems = info.value.errors
    assert len(problems) == 1 and problems[0].path == path and message in problems[0].message, problems


def test_the_spec_may_be_updated():
    old = admit_pdb(pdb(minAvailable=1))
    new = admit_pdb({**old, "spec": {**old["spec"], "minAvailable": 2}}, old, Op.UPDATE)
    assert new["spec"]["minAvailable"] == 2


@pytest.mark.parametrize("status, path, message", [
    pytest.param({"disruptionsAllowed": "x"}, "status.disruptionsAllowed", "must be of type integer", id="text"),
    pytest.param({"disruptionsAllowed": -1}, "status.disruptionsAllowed", "must be greater than or equal to 0",
                 id="negative-allowed"),
    pytest.param({"currentHealthy": -2}, "status.currentHealthy", "must be greater than or equal to 0",
                 id="negative-healthy"),
    pytest.param({"expectedPods": 1.5}, "status.expectedPods", "must be of type integer", id="fraction"),
    pytest.param({"observedGeneration": "1"}, "status.observedGeneration", "must be of type integer",
                 id="generation-text"),
    pytest.param({"disruptedPods": ["p"]}, "status.disruptedPods", "must be of type object", id="pods-list"),
    pytest.param({"disruptedPods": {"p": "soon"}}, "status.disruptedPods.p", "not an RFC 3339 time",
                 id="pod-time"),
    pytest.param({"conditions": {}}, "status.conditions", "must be of type array", id="conditions"),
])
def test_a_status_write_is_checked_as_kube_apiserver_checks_it(status, path, message):
    """The eviction API, the disruption controller and the scheduler's pdb plugin read the status: a write
    kube-apiserver refuses (decoding, ValidatePodDisruptionBudgetStatusUpdate) is refused naming the field."""
    old = admit_pdb(pdb())
    with pytest.raises(errors.Invalid) as info:
        admit_pdb({**old, "status": {**old["status"], **status}}, old, Op.UPDATE_STATUS)
    problems = info.value.errors
    assert len(problems) == 1 and problems[0].path == path and message in problems[0].message, problems


def test_a_good_status_write_is_admitted():
    old = admit_pdb(pdb())
    status = {**old["status"], "disruptionsAllowed": 1, "observedGeneration": 1,
              "disruptedPods": {"p": "2026-01-01T00:00:00Z"}, "conditions": []}
    assert admit_pdb({**old, "status": status}, old, Op.UPDATE_STATUS)["status"] == status
