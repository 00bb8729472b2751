"""Quota arithmetic as Kubernetes' quota evaluators count: a pod's usage, object-count names, a
namespace's usage, the "exceeded quota" and "must specify" messages, and which names a quota takes."""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from vclite.api import kinds, quota


def pod(requests=None, limits=None, phase=None, init=None, name="main"):
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    p = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": name, "resources": res}]}}
    if init is not None:
        p["spec"]["initContainers"] = init
    if phase:
        p["status"] = {"phase": phase}
    return p


@pytest.mark.parametrize("obj, want", [
    pytest.param(pod(), {"count/pods": F(1), "pods": F(1)}, id="best effort: pods only"),
    pytest.param(pod({"cpu": "500m", "memory": "1Gi"}),
                 {"count/pods": F(1), "pods": F(1), "cpu": F(1, 2), "requests.cpu": F(1, 2), "memory": F(2**30),
                  "requests.memory": F(2**30)}, id="requests under both names"),
    pytest.param(pod(limits={"cpu": "2", "ephemeral-storage": "1G"}),
                 {"count/pods": F(1), "pods": F(1), "cpu": F(2), "requests.cpu": F(2), "limits.cpu": F(2),
                  "ephemeral-storage": F(10**9), "requests.ephemeral-storage": F(10**9),
                  "limits.ephemeral-storage": F(10**9)}, id="a limit without a request requests it"),
    pytest.param(pod({"nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"}),
                 {"count/pods": F(1), "pods": F(1), "requests.nvidia.com/gpu": F(1), "hugepages-2Mi": F(4 * 2**20),
                  "requests.hugepages-2Mi": F(4 * 2**20)}, id="extended as requests.* only, hugepages both"),
    pytest.param(pod({"cpu": "1"}, phase="Succeeded"), {"count/pods": F(1)}, id="finished: count/pods only"),
    pytest.param(pod({"cpu": "1"}, phase="Failed"), {"count/pods": F(1)}, id="failed: count/pods only"),
    pytest.param(pod({"cpu": "1"}, init=[{"name": "i", "resources": {"requests": {"cpu": "3"}}}]),
                 {"count/pods": F(1), "pods": F(1), "cpu": F(3), "requests.cpu": F(3)},
                 id="an init container's larger request"),
])
def test_pod_usage(obj, want):
    assert quota.pod_usage(obj) == want


@pytest.mark.parametrize("kind, names", [
    (kinds.POD, ("count/pods",)),
    (kinds.CONFIGMAP, ("count/configmaps", "configmaps")),
    (kinds.SECRET, ("count/secrets", "secrets")),
    (kinds.RESOURCEQUOTA, ("count/resourcequotas", "resourcequotas")),
    (kinds.JOB, ("count/jobs.batch.volcano.sh",)),
    (kinds.PODGROUP, ("count/podgroups.scheduling.volcano.sh",)),
])
def test_count_names(kind, names):
    assert quota.count_names(kind) == names


def test_usage_sums_pods_and_counts_for_the_hard_names_only():
    pods = [pod({"cpu": "500m"}), pod({"cpu": "1"}, limits={"cpu": "2"}), pod({"cpu": "4"}, phase="Succeeded")]
    got = quota.usage(["requests.cpu", "limits.cpu", "pods", "count/pods", "count/configmaps", "services"], pods,
                      {"count/configmaps": 2, "count/secrets": 9})
    assert got == {"requests.cpu": F(3, 2), "limits.cpu": F(2), "pods": F(2), "count/pods": F(3),
                   "count/configmaps": F(2), "services": F(0)}


@pytest.mark.parametrize("hard, used, requested, want", [
    pytest.param({"pods": F(2)}, {"pods": F(1)}, {"pods": F(1), "cpu": F(5)}, None, id="within"),
    pytest.param({"pods": F(1)}, {"pods": F(1)}, {"pods": F(1)},
                 "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1", id="pods"),
    pytest.param({"requests.cpu": F(2), "requests.memory": F(2**30), "pods": F(10)},
                 {"requests.cpu": F(3, 2), "requests.memory": F(2**29)},
                 {"requests.cpu": F(1), "requests.memory": F(2**29), "pods": F(1)},
                 "exceeded quota: q, requested: requests.cpu=1, used: requests.cpu=1500m, limited: requests.cpu=2",
                 id="only the names over their limit"),
    pytest.param({"requests.memory": F(2**30), "limits.memory": F(2**30)}, {},
                 {"requests.memory": F(3 * 2**29), "limits.memory": F(3 * 2**29)},
                 "exceeded quota: q, requested: limits.memory=1536Mi,requests.memory=1536Mi, "
                 "used: limits.memory=0,requests.memory=0, limited: limits.memory=1Gi,requests.memory=1Gi",
                 id="several, sorted, memory in binary units"),
    pytest.param({"cpu": F(1)}, {"cpu": F(2)}, {"cpu": F(0)},
                 "exceeded quota: q, requested: cpu=0, used: cpu=2, limited: cpu=1",
                 id="a hard lowered below what is used refuses even a zero request"),
    pytest.param({"requests.nvidia.com/gpu": F(1)}, {}, {"pods": F(1)}, None, id="a name not requested"),
])
def test_exceeded(hard, used, requested, want):
    assert quota.exceeded("q", hard, used, requested) == want


@pytest.mark.parametrize("obj, hard, want", [
    pytest.param(pod({"cpu": "1"}), {"pods"}, None, id="pods alone asks nothing"),
    pytest.param(pod({"cpu": "1"}), {"requests.cpu"}, None, id="requested"),
    pytest.param(pod(limits={"cpu": "1"}), {"requests.cpu", "limits.cpu"}, None, id="a limit is its request too"),
    pytest.param(pod({"cpu": "1"}), {"limits.cpu", "memory"}, "must specify limits.cpu for: main; memory for: main",
                 id="each missing name"),
    pytest.param(pod({"cpu": "1"}, init=[{"name": "init", "resources": {}}]), {"cpu"}, "must specify cpu for: init",
                 id="init containers too"),
    pytest.param(pod(), {"requests.nvidia.com/gpu", "requests.ephemeral-storage"}, None,
                 id="only cpu and memory are constrained"),
])
def test_must_specify(obj, hard, want):
    assert quota.must_specify(obj, hard) == want


@pytest.mark.parametrize("name, ok", [
    ("cpu", True), ("requests.memory", True), ("limits.ephemeral-storage", True), ("pods", True),
    ("services.loadbalancers", True), ("hugepages-2Mi", True), ("requests.hugepages-1Gi", True),
    ("count/pods", True), ("requests.nvidia.com/gpu", True), ("count/jobs.batch.volcano.sh", True),
    ("foo", False), ("limits.nvidia", False), ("requests.gpu", False), ("gpu", False),
])
def test_name_problem(name, ok):
    assert (quota.name_problem(name) is None) == ok


@pytest.mark.parametrize("name, integer", [
    ("pods", True), ("configmaps", True), ("count/pods", True), ("requests.nvidia.com/gpu", True),
    ("nvidia.com/gpu", True), ("cpu", False), ("requests.memory", False), ("hugepages-2Mi", False),
])
def test_is_integer(name, integer):
    assert quota.is_integer(name) == integer


def spec_pod(**spec):
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


@pytest.mark.parametrize("spec, obj, want", [
    pytest.param({}, pod(), True, id="no scope: every pod"),
    pytest.param({"scopes": ["BestEffort"]}, pod(), True, id="best effort"),
    pytest.param({"scopes": ["BestEffort"]}, pod({"memory": "1Gi"}), False, id="a memory request is not best effort"),
    pytest.param({"scopes": ["BestEffort"]}, pod({"nvidia.com/gpu": "1"}), True, id="QoS looks at cpu and memory"),
    pytest.param({"scopes": ["BestEffort"]}, pod(init=[{"name": "i", "resources": {"limits": {"cpu": "1"}}}]), False,
                 id="an init container's limit"),
    pytest.param({"scopes": ["NotBestEffort"]}, pod({"cpu": "1"}), True, id="not best effort"),
    pytest.param({"scopes": ["Terminating"]}, spec_pod(activeDeadlineSeconds=60), True, id="terminating"),
    pytest.param({"scopes": ["Terminating"]}, spec_pod(), False, id="no deadline: not terminating"),
    pytest.param({"scopes": ["NotTerminating"]}, spec_pod(), True, id="not terminating"),
    pytest.param({"scopes": ["NotTerminating", "BestEffort"]}, spec_pod(activeDeadlineSeconds=1), False,
                 id="every scope must match"),
    pytest.param({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists"}]}},
                 spec_pod(priorityClassName="high"), True, id="priority class exists"),
    pytest.param({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists"}]}},
                 spec_pod(), False, id="no priority class"),
    pytest.param({"scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}]}}, spec_pod(), True,
                 id="NotIn: a pod without a class"),
    pytest.param({"scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high", "mid"]}]}},
                 spec_pod(priorityClassName="mid"), True, id="In"),
    pytest.param({"scopes": ["CrossNamespacePodAffinity"]}, spec_pod(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k", "namespaceSelector": {}}]}}),
                 True, id="cross-namespace affinity"),
    pytest.param({"scopes": ["CrossNamespacePodAffinity"]}, spec_pod(affinity={"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {"topologyKey": "k"}}]}}),
                 False, id="same-namespace affinity"),
])
def test_pod_matches(spec, obj, want):
    assert quota.pod_matches(spec, obj) == want


@pytest.mark.parametrize("scope, name, ok", [
    ("BestEffort", "pods", True), ("BestEffort", "cpu", False), ("BestEffort", "count/pods", True),
    ("Terminating", "limits.memory", True), ("Terminating", "configmaps", False),
    ("NotBestEffort", "requests.ephemeral-storage", False), ("PriorityClass", "requests.cpu", True),
])
def test_scope_allows(scope, name, ok):
    assert quota.scope_allows(scope, name) == ok


def svc(type_=None, ports=2, allocate=None, node_ports=0):
    spec = {"ports": [{"port": 80 + i, **({"nodePort": 30000 + i} if i < node_ports else {})} for i in range(ports)]}
    if type_:
        spec["type"] = type_
    if allocate is not None:
        spec["allocateLoadBalancerNodePorts"] = allocate
    return {"metadata": {"name": "s"}, "spec": spec}


@pytest.mark.parametrize("obj, want", [
    pytest.param(svc(), {}, id="ClusterIP: nothing"),
    pytest.param(svc("NodePort", 3), {"services.nodeports": F(3)}, id="a node port per port"),
    pytest.param(svc("LoadBalancer", 2), {"services.nodeports": F(2), "services.loadbalancers": F(1)},
                 id="load balancer"),
    pytest.param(svc("LoadBalancer", 3, allocate=False, node_ports=1),
                 {"services.nodeports": F(1), "services.loadbalancers": F(1)},
                 id="no node ports allocated: only those it names"),
])
def test_service_usage(obj, want):
    assert quota.service_usage(obj) == want


def test_service_totals():
    services = [svc("NodePort", 2), svc("LoadBalancer", 1), svc()]
    assert quota.service_totals(["services.nodeports", "services.loadbalancers", "pods"], services) == \
        {"services.nodeports": 3, "services.loadbalancers": 1}


def claim(storage="1Gi", cls=None, allocated=None, annotation=None):
    c = {"metadata": {"name": "c"}, "spec": {"resources": {"requests": {"storage": storage}}}}
    if cls is not None:
        c["spec"]["storageClassName"] = cls
    if allocated is not None:
        c["status"] = {"allocatedResources": {"storage": allocated}}
    if annotation is not None:
        c["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": annotation}
    return c


GI = F(2**30)
GOLD = "gold.storageclass.storage.k8s.io/"


@pytest.mark.parametrize("obj, want", [
    pytest.param(claim(), {"persistentvolumeclaims": F(1), "count/persistentvolumeclaims": F(1),
                           "requests.storage": GI}, id="no class"),
    pytest.param(claim(cls="gold"), {"persistentvolumeclaims": F(1), "count/persistentvolumeclaims": F(1),
                                     "requests.storage": GI, GOLD + "persistentvolumeclaims": F(1),
                                     GOLD + "requests.storage": GI}, id="a class: charged to it too"),
    pytest.param(claim(annotation="gold"), {"persistentvolumeclaims": F(1), "count/persistentvolumeclaims": F(1),
                                            "requests.storage": GI, GOLD + "persistentvolumeclaims": F(1),
                                            GOLD + "requests.storage": GI}, id="the beta annotation's class"),
    pytest.param(claim("1Gi", allocated="2Gi"), {"persistentvolumeclaims": F(1), "count/persistentvolumeclaims": F(1),
                                                 "requests.storage": 2 * GI}, id="allocated more: an expansion"),
    pytest.param(claim("2Gi", allocated="1Gi"), {"persistentvolumeclaims": F(1), "count/persistentvolumeclaims": F(1),
                                                 "requests.storage": 2 * GI}, id="requested more"),
])
def test_claim_usage(obj, want):
    assert quota.claim_usage(obj) == want


def test_object_counts_sum_the_claims_storage_per_class():
    claims = [claim("1Gi", "gold"), claim("2Gi", "silver"), claim("1Gi")]
    listed = {kinds.PERSISTENTVOLUMECLAIM: claims}
    names = ["requests.storage", GOLD + "requests.storage", "persistentvolumeclaims", "count/persistentvolumeclaims"]
    assert quota.object_counts(names, lambda k: listed.get(k, [])) == {
        "requests.storage": 4 * GI, GOLD + "requests.storage": GI, "persistentvolumeclaims": 3,
        "count/persistentvolumeclaims": 3}
    assert not quota.needs_pods(names)
    assert quota.show(GI, GOLD + "requests.storage") == "1Gi"
