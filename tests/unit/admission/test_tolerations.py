"""A pod's (and a vcjob task template's) tolerations are checked as Kubernetes' ValidateTolerations checks them."""
from __future__ import annotations

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import test_vcjob, views

Op = admit.Operation


def pod(*tolerations):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "command": ["true"]}], "tolerations": list(tolerations)}}


def create(obj, kind=kinds.POD):
    return admit.admit(Op.CREATE, kind, obj, None, views.default_view())


@pytest.mark.parametrize("toleration, field, words", [
    pytest.param({"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
                 "key", 'Invalid value: "nospecialchars^=@": name part must consist of', id="key"),
    pytest.param({"key": "foo", "operator": "In", "value": "bar"}, "operator",
                 'Unsupported value: "In": supported values: "Equal", "Exists"', id="operator"),
    pytest.param({"key": "foo", "operator": "Exists", "value": "bar"}, "operator",
                 "value must be empty when `operator` is 'Exists'", id="exists-with-value"),
    pytest.param({"operator": "Equal", "value": "bar"}, "operator",
                 'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values '
                 'and all keys"', id="no-key"),
    pytest.param({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule",
                  "tolerationSeconds": 20}, "effect",
                 "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
                 id="seconds-without-no-execute"),
    pytest.param({"key": "foo", "value": "bad value"}, "operator", 'Invalid value: "bad value": a valid label must be',
                 id="value"),
    pytest.param({"key": "foo", "operator": "Exists", "effect": "NoRun"}, "effect",
                 'Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
                 id="effect"),
])
def test_bad_tolerations_are_refused_naming_the_field(toleration, field, words):
    with pytest.raises(errors.Invalid) as e:
        create(pod({"key": "ok", "operator": "Exists"}, toleration))
    assert [fe.path for fe in e.value.errors] == [f"spec.tolerations[1].{field}"]
    assert words in e.value.errors[0].message, e.value.errors[0].message
    template = test_vcjob.task(template={"spec": {"containers": [test_vcjob.container()], "tolerations": [toleration]}})
    test_vcjob.assert_has(test_vcjob.rejected(test_vcjob.job(template)), f"spec.tasks[0].template.spec.tolerations[0]."
                                                                        f"{field}", words)


@pytest.mark.parametrize("toleration", [
    {"operator": "Exists"},
    {"key": "example.com/gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "batch"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
])
def test_good_tolerations_pass(toleration):
    assert create(pod(toleration))["spec"]["tolerations"] == [toleration]
