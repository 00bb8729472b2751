"""ResourceQuota admission: `spec.hard` names and quantities as kube's validation words them, scopes
refused; and the quota plugin's verdict on creates, over a View of stored objects."""
from __future__ import annotations

import pytest

from vclite.admission import admit, resourcequota
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def rq(hard=None, name="q", ns="default", **spec):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": ns},
            "spec": {"hard": hard or {}, **spec}}


def pod(name, cpu="1", phase=None, ns="default", prio=None):
    res = {"limits": {"cpu": cpu}} if cpu else {}
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
         "spec": {"containers": [{"name": "main", "command": ["x"], "resources": res}]}}
    if prio:
        p["spec"]["priorityClassName"] = prio
    if phase:
        p["status"] = {"phase": phase}
    return p


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


@pytest.mark.parametrize("spec, errors_", [
    pytest.param({"hard": {"pods": "1"}, "scopes": ["BestEffort"]}, [], id="BestEffort counts pods"),
    pytest.param({"hard": {"cpu": "1"}, "scopes": ["NotBestEffort", "Terminating"]}, [], id="two scopes"),
    pytest.param({"hard": {"cpu": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}, [], id="priority class In"),
    pytest.param({"hard": {"pods": "1"}, "scopes": ["Sometimes"]},
                 [("spec.scopes", 'Invalid value: ["Sometimes"]: unsupported scope')], id="unknown scope"),
    pytest.param({"hard": {"cpu": "1", "pods": "1"}, "scopes": ["BestEffort"]},
                 [("spec.scopes", 'Invalid value: ["BestEffort"]: unsupported scope applied to resource cpu')],
                 id="BestEffort limits no cpu"),
    pytest.param({"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]},
                 [("spec.scopes", 'Invalid value: ["Terminating", "NotTerminating"]: conflicting scopes')],
                 id="conflicting"),
    pytest.param({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "BestEffort", "operator": "In", "values": ["x"]}]}},
                 [("spec.scopeSelector.matchExpressions[0].operator",
                   'Invalid value: "In": must be \'Exist\' when scope is any of ResourceQuotaScopeTerminating, '
                   'ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort '
                   'or ResourceQuotaScopeCrossNamespacePodAffinity')], id="BestEffort takes Exists only"),
    pytest.param({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "NotIn"}]}},
                 [("spec.scopeSelector.matchExpressions[0].values", "Required value: must be at least one value when "
                   "`operator` is 'In' or 'NotIn' for scope selector")], id="NotIn without values"),
    pytest.param({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "Near"}]}},
                 [("spec.scopeSelector.matchExpressions[0].operator",
                   'Invalid value: "Near": not a valid selector operator')], id="unknown operator"),
])
def test_scopes_as_kube_validates_them(spec, errors_):
    obj = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
           "spec": spec}
    if not errors_:
        admit.admit(Op.CREATE, kinds.RESOURCEQUOTA, obj, None, views.DictView())
        return
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.CREATE, kinds.RESOURCEQUOTA, obj, None, views.DictView())
    assert [(e.path, e.message) for e in info.value.errors] == errors_


@pytest.mark.parametrize("stored, new, kind, want", [
    pytest.param([], pod("a"), kinds.POD, None, id="no quota"),
    pytest.param([rq({"pods": "1"}), pod("x")], pod("a"), kinds.POD,
                 "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1", id="pods"),
    pytest.param([rq({"pods": "1"}), pod("x", phase="Succeeded")], pod("a"), kinds.POD, None,
                 id="a finished pod does not count"),
    pytest.param([rq({"pods": "1"}, ns="other"), pod("x")], pod("a"), kinds.POD, None,
                 id="another namespace's quota"),
    pytest.param([rq({"limits.cpu": "2"}), pod("x", "1500m")], pod("a", "1"), kinds.POD,
                 "exceeded quota: q, requested: limits.cpu=1, used: limits.cpu=1500m, limited: limits.cpu=2",
                 id="limits.cpu"),
    pytest.param([rq({"pods": "5"}, name="b"), rq({"pods": "1"}, name="a"), pod("x")], pod("y"), kinds.POD,
                 "exceeded quota: a, requested: pods=1, used: pods=1, limited: pods=1", id="the first quota by name"),
    pytest.param([rq({"memory": "1Gi"}, name="z"), rq({"pods": "0"}, name="a")], pod("a"), kinds.POD,
                 "failed quota: z: must specify memory for: main", id="constraints before usage"),
    pytest.param([rq({"count/configmaps": "1"}), {"apiVersion": "v1", "kind": "ConfigMap",
                                                   "metadata": {"name": "m", "namespace": "default"}}],
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n", "namespace": "default"}},
                 kinds.CONFIGMAP, "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, "
                                  "limited: count/configmaps=1", id="count/configmaps"),
    pytest.param([rq({"count/configmaps": "1"})], pod("a"), kinds.POD, None, id="a pod is no configmap"),
    pytest.param([rq({"pods": "1"}, scopes=["BestEffort"]), pod("x", cpu=None)], pod("a"), kinds.POD, None,
                 id="a BestEffort quota does not count a pod with a cpu limit"),
    pytest.param([rq({"pods": "1"}, scopes=["BestEffort"]), pod("x", cpu=None), pod("y")], pod("b", cpu=None),
                 kinds.POD, "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1",
                 id="a BestEffort quota counts the best-effort pods"),
    pytest.param([rq({"pods": "0"}, scopes=["Terminating"])], pod("a"), kinds.POD, None,
                 id="Terminating: only pods with activeDeadlineSeconds"),
    pytest.param([rq({"pods": "0"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]})], pod("a", prio="high"), kinds.POD,
                 "exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0", id="PriorityClass In"),
    pytest.param([rq({"pods": "0"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]})], pod("a", prio="low"), kinds.POD,
                 None, id="PriorityClass In, another class"),
    pytest.param([rq({"count/configmaps": "0"}, scopes=["NotBestEffort"])],
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n", "namespace": "default"}},
                 kinds.CONFIGMAP, None, id="a scoped quota counts no configmap"),
    pytest.param([rq({"resourcequotas": "1"})], rq({"pods": "1"}, name="r"), kinds.RESOURCEQUOTA,
                 "exceeded quota: q, requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1",
                 id="the legacy resourcequotas count"),
])
def test_refusal(stored, new, kind, want):
    assert resourcequota.refusal(kind, new, views.DictView(*stored)) == want


def test_admit_refuses_a_create_over_the_quota_with_403_and_kubes_words():
    view = views.DictView(rq({"pods": "0"}))
    with pytest.raises(errors.Forbidden) as info:
        admit.admit(Op.CREATE, kinds.POD, pod("a"), None, view)
    assert str(info.value) == \
        'pods "a" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0'


def test_existing_state_is_not_checked_again():
    """A scheduler dry-run's objects were admitted by their cluster already."""
    view = views.DictView(rq({"pods": "0"}))
    view.existing_state = True
    admit.admit(Op.CREATE, kinds.POD, pod("a"), None, view)


@pytest.mark.parametrize("status, path, message", [
    pytest.param({"hard": {"cpu": "lots"}}, "status.hard[cpu]", 'invalid quantity "lots"', id="hard-quantity"),
    pytest.param({"used": {"cpu": "-1"}}, "status.used[cpu]", "must be greater than or equal to 0",
                 id="used-negative"),
    pytest.param({"used": {"pods": "0.5"}}, "status.used[pods]", "must be an integer", id="used-fraction"),
    pytest.param({"used": {"widgets": "1"}}, "status.used[widgets]", "must be a standard resource for quota",
                 id="used-name"),
    pytest.param({"used": "zz"}, "status.used", "must be of type object", id="used-text"),
])
def test_a_status_write_is_checked_as_kube_apiserver_checks_it(status, path, message):
    """The scheduler's resourcequota plugin reads status.hard and status.used: a write kube-apiserver
    refuses (ValidateResourceQuotaStatusUpdate) is refused naming the field, instead of being kept."""
    old = rq({"cpu": "2"})
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.UPDATE_STATUS, kinds.RESOURCEQUOTA, {**old, "status": status}, old, views.DictView())
    problems = info.value.errors
    assert len(problems) == 1 and problems[0].path == path and message in problems[0].message, problems


def test_a_good_status_write_is_admitted():
    old = rq({"cpu": "2"})
    new = {**old, "status": {"hard": {"cpu": "2"}, "used": {"cpu": "500m"}}}
    assert admit.admit(Op.UPDATE_STATUS, kinds.RESOURCEQUOTA, new, old, views.DictView()) == new


def pvc(name, storage="1Gi", cls=None, ns="default"):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


GOLD = "gold.storageclass.storage.k8s.io/"


@pytest.mark.parametrize("stored, new, want", [
    pytest.param([rq({"persistentvolumeclaims": "1"}), pvc("x")], pvc("a"),
                 "exceeded quota: q, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=1, "
                 "limited: persistentvolumeclaims=1", id="persistentvolumeclaims"),
    pytest.param([rq({"count/persistentvolumeclaims": "1"}), pvc("x")], pvc("a"),
                 "exceeded quota: q, requested: count/persistentvolumeclaims=1, used: count/persistentvolumeclaims=1, "
                 "limited: count/persistentvolumeclaims=1", id="count/persistentvolumeclaims"),
    pytest.param([rq({"requests.storage": "3Gi"}), pvc("x", "2Gi")], pvc("a", "2Gi"),
                 "exceeded quota: q, requested: requests.storage=2Gi, used: requests.storage=2Gi, "
                 "limited: requests.storage=3Gi", id="requests.storage"),
    pytest.param([rq({"requests.storage": "3Gi"}), pvc("x", "1Gi")], pvc("a", "2Gi"), None, id="room left"),
    pytest.param([rq({GOLD + "requests.storage": "1Gi"})], pvc("a", "2Gi", "gold"),
                 f"exceeded quota: q, requested: {GOLD}requests.storage=2Gi, used: {GOLD}requests.storage=0, "
                 f"limited: {GOLD}requests.storage=1Gi", id="per class storage"),
    pytest.param([rq({GOLD + "requests.storage": "1Gi"})], pvc("a", "2Gi", "silver"), None,
                 id="another class is not charged"),
    pytest.param([rq({GOLD + "persistentvolumeclaims": "1"}), pvc("x", cls="gold"), pvc("y", cls="silver")],
                 pvc("a", cls="gold"), f"exceeded quota: q, requested: {GOLD}persistentvolumeclaims=1, "
                 f"used: {GOLD}persistentvolumeclaims=1, limited: {GOLD}persistentvolumeclaims=1",
                 id="per class count"),
    pytest.param([rq({"requests.storage": "1Gi"})], pod("a"), None, id="a pod charges no storage"),
])
def test_claims_charge_quotas(stored, new, want):
    assert resourcequota.refusal(kinds.PERSISTENTVOLUMECLAIM, new, views.DictView(*stored)) == want


def test_the_default_class_is_named_before_the_quota_is_checked():
    """The DefaultStorageClass plugin runs before ResourceQuota: a claim without a class is charged to the default."""
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "x.io/y",
          "metadata": {"name": "gold", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}
    with pytest.raises(errors.Forbidden) as info:
        admit.admit(Op.CREATE, kinds.PERSISTENTVOLUMECLAIM, pvc("a"), None,
                    views.DictView(sc, rq({GOLD + "persistentvolumeclaims": "0"})))
    assert str(info.value).startswith(f'persistentvolumeclaims "a" is forbidden: exceeded quota: q, requested: '
                                      f'{GOLD}persistentvolumeclaims=1')
