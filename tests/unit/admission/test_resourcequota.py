"""ResourceQuota admission: `spec.hard` names and quantities as kube's validation words them, scopes
refused."""
from __future__ import annotations

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def rq(hard=None, name="q", ns="default", **spec):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": ns},
            "spec": {"hard": hard or {}, **spec}}


def test_a_valid_quota_is_admitted_and_its_status_dropped():
    out = admit.admit(Op.CREATE, kinds.RESOURCEQUOTA,
                      {**rq({"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi", "count/secrets": "3",
                             "requests.nvidia.com/gpu": "2", "hugepages-2Mi": "1Gi"}),
                       "status": {"used": {"pods": "99"}}}, None, views.DictView())
    assert "status" not in out


@pytest.mark.parametrize("hard, path, message", [
    pytest.param({"foo": "1"}, "spec.hard[foo]", 'Invalid value: "foo": must be a standard resource for quota',
                 id="unknown name"),
    pytest.param({"cpu": "-1"}, "spec.hard[cpu]", 'Invalid value: "-1": must be greater than or equal to 0',
                 id="negative"),
    pytest.param({"pods": "1.5"}, "spec.hard[pods]", 'Invalid value: "1.5": must be an integer', id="half a pod"),
    pytest.param({"count/configmaps": "500m"}, "spec.hard[count/configmaps]", "must be an integer",
                 id="a fraction of an object"),
    pytest.param({"requests.nvidia.com/gpu": "0.5"}, "spec.hard[requests.nvidia.com/gpu]", "must be an integer",
                 id="half an extended resource"),
    pytest.param({"memory": "1x"}, "spec.hard[memory]", 'invalid quantity "1x": quantities must match',
                 id="no quantity"),
    pytest.param({"count/a/b": "1"}, "spec.hard[count/a/b]", "a qualified name must consist", id="not qualified"),
])
def test_bad_hard_entries_name_their_field(hard, path, message):
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.CREATE, kinds.RESOURCEQUOTA, rq(hard), None, views.DictView())
    assert [e.path for e in info.value.errors] == [path]
    assert message in info.value.errors[0].message


@pytest.mark.parametrize("spec", [{"scopes": ["BestEffort"]},
                                  {"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass",
                                                                           "operator": "Exists"}]}}])
def test_scopes_are_refused_not_ignored(spec):
    with pytest.raises(errors.Invalid, match="quota scopes are not supported by vclite"):
        admit.admit(Op.CREATE, kinds.RESOURCEQUOTA, rq({"pods": "1"}, **spec), None, views.DictView())
