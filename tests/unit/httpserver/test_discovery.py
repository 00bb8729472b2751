"""Discovery (legacy and aggregated) and OpenAPI v3 documents, from the kinds table."""
import pytest

from vclite.api import kinds
from vclite.httpserver import discovery, openapi


def resources(doc):
    return {r["name"]: r for r in doc["resources"]}


@pytest.mark.parametrize("group, version, plural, short_names", [
    pytest.param("flow.volcano.sh", "v1alpha1", "jobflows", ["jf"], id="jf"),
    pytest.param("flow.volcano.sh", "v1alpha1", "jobtemplates", ["jt"], id="jt"),
    pytest.param("batch.volcano.sh", "v1alpha1", "jobs", ["vcjob", "vj"], id="vcjob"),
    pytest.param("scheduling.volcano.sh", "v1beta1", "queues", ["q", "queue-v1beta1"], id="q"),
    pytest.param("scheduling.volcano.sh", "v1beta1", "podgroups", ["pg", "podgroup-v1beta1"], id="pg"),
])
def test_short_names_in_both_discovery_forms(group, version, plural, short_names):
    assert resources(discovery.api_resource_list(group, version))[plural]["shortNames"] == short_names
    agg = discovery.aggregated(core=False)
    entry = next(r for item in agg["items"] if item["metadata"]["name"] == group
                 for v in item["versions"] for r in v["resources"] if r["resource"] == plural)
    assert entry["shortNames"] == short_names


def test_legacy_resource_list_has_subresources_and_verbs():
    core = resources(discovery.api_resource_list("", "v1"))
    assert core["pods/log"]["verbs"] == ["get"] and core["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert "watch" in core["pods"]["verbs"] and core["pods"]["categories"] == ["all"]
    assert core["namespaces"]["namespaced"] is False
    flows = resources(discovery.api_resource_list("flow.volcano.sh", "v1alpha1"))
    assert set(flows) == {"jobflows", "jobflows/status", "jobtemplates", "jobtemplates/status"}


def test_the_streaming_subresources_of_pods_as_kube_apiserver_lists_them():
    """pods/exec, pods/attach and pods/portforward: verbs create and get, their options kinds, in both forms."""
    want = {("exec", "PodExecOptions"), ("attach", "PodAttachOptions"), ("portforward", "PodPortForwardOptions")}
    core = resources(discovery.api_resource_list("", "v1"))
    assert {(n.split("/")[1], r["kind"]) for n, r in core.items()
            if n.startswith("pods/") and r["verbs"] == ["create", "get"]} == want
    pods = next(r for item in discovery.aggregated(core=True)["items"] for v in item["versions"]
                for r in v["resources"] if r["resource"] == "pods")
    assert {(s["subresource"], s["responseKind"]["kind"]) for s in pods["subresources"]
            if s["verbs"] == ["create", "get"]} == want


def test_aggregated_core_and_groups():
    core = discovery.aggregated(core=True)
    assert [i["metadata"]["name"] for i in core["items"]] == [""]
    groups = discovery.aggregated(core=False, version="v2beta1")
    assert groups["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    served = (*kinds.ALL, *kinds.VIEWS)
    assert {i["metadata"]["name"] for i in groups["items"]} == {k.group for k in served if k.group} | {
        "metrics.k8s.io", "apps", "batch", "networking.k8s.io", "discovery.k8s.io"}
    jobs = next(r for i in groups["items"] for v in i["versions"] for r in v["resources"] if r["resource"] == "jobs")
    assert jobs["scope"] == "Namespaced" and jobs["subresources"][0]["subresource"] == "status"


def test_the_metrics_api_is_discovered_as_metrics_server_serves_it():
    """What `kubectl top` looks for before it reads: the group metrics.k8s.io, version v1beta1, read-only pods
    (namespaced, PodMetrics) and nodes (NodeMetrics), in the group list and in both discovery forms."""
    assert {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
            "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}} in \
        discovery.api_group_list()["groups"]
    legacy = discovery.api_resource_list("metrics.k8s.io", "v1beta1")["resources"]
    assert {(r["name"], r["kind"], r["namespaced"], tuple(r["verbs"])) for r in legacy} == {
        ("pods", "PodMetrics", True, ("get", "list")), ("nodes", "NodeMetrics", False, ("get", "list"))}
    item = next(i for i in discovery.aggregated(core=False)["items"] if i["metadata"]["name"] == "metrics.k8s.io")
    assert {(r["resource"], r["scope"], r["responseKind"]["kind"]) for r in item["versions"][0]["resources"]} == {
        ("pods", "Namespaced", "PodMetrics"), ("nodes", "Cluster", "NodeMetrics")}


# kubectl 1.32's default `apply --prune` list: it stops if the server does not serve one of them
PRUNED_BY_DEFAULT = {("", "v1", "ConfigMap"), ("", "v1", "Endpoints"), ("", "v1", "PersistentVolumeClaim"),
                     ("", "v1", "Pod"), ("", "v1", "ReplicationController"), ("", "v1", "Secret"),
                     ("", "v1", "Service"), ("batch", "v1", "Job"), ("batch", "v1", "CronJob"),
                     ("networking.k8s.io", "v1", "Ingress"), ("apps", "v1", "DaemonSet"),
                     ("apps", "v1", "Deployment"), ("apps", "v1", "ReplicaSet"), ("apps", "v1", "StatefulSet"),
                     ("", "v1", "Namespace"), ("", "v1", "PersistentVolume")}


def test_every_kind_kubectl_prunes_by_default_is_discovered_and_volcanos_groups_come_first():
    found = set()
    for core in (True, False):
        for item in discovery.aggregated(core=core)["items"]:
            for v in item["versions"]:
                found |= {(item["metadata"]["name"], v["version"], r["responseKind"]["kind"]) for r in v["resources"]}
    assert PRUNED_BY_DEFAULT <= found
    legacy = {(g, v, r["kind"]) for g, v in [("", "v1"), ("apps", "v1"), ("batch", "v1"), ("networking.k8s.io", "v1")]
              for r in discovery.api_resource_list(g, v)["resources"] if "/" not in r["name"]}
    assert PRUNED_BY_DEFAULT <= legacy
    names = [g["name"] for g in discovery.api_group_list()["groups"]]
    assert names.index("batch.volcano.sh") < names.index("batch")   # `jobs`, `cronjobs` stay Volcano's
    deployments = next(r for r in discovery.api_resource_list("apps", "v1")["resources"] if r["name"] == "deployments")
    assert deployments["verbs"] == ["get", "list"] and deployments["shortNames"] == ["deploy"]
    endpoints = next(r for r in discovery.api_resource_list("", "v1")["resources"] if r["name"] == "endpoints")
    assert endpoints["verbs"] == ["get", "list", "watch"]   # (computed, and watched: endpointwatch.py)
    slices = next(r for r in discovery.aggregated(False, "v2")["items"] if r["metadata"]["name"] == "discovery.k8s.io")
    assert slices["versions"][0]["resources"][0]["verbs"] == ["get", "list", "watch"]


def test_group_list_and_version():
    names = [g["name"] for g in discovery.api_group_list()["groups"]]
    assert names == list(dict.fromkeys(names)) and "flow.volcano.sh" in names
    v = discovery.version_info()
    assert (v["major"], v["minor"]) == ("1", "32") and v["gitVersion"].startswith("v1.32.")


@pytest.mark.parametrize("kind", [pytest.param(k, id=k.kind) for k in kinds.ALL])
def test_openapi_patch_operation_enables_server_side_validation(kind):
    """What kubectl apply checks before sending fieldValidation=Strict (ecosystem.md §B)."""
    root = openapi.root()
    gv = openapi.gv_path(kind.group, kind.version)
    assert root["paths"][gv]["serverRelativeURL"].startswith(f"/openapi/v3/{gv}?hash=")
    doc = openapi.group_version_document(kind.group, kind.version)
    ops = [p["patch"] for p in doc["paths"].values()
           if p["patch"]["x-kubernetes-group-version-kind"] == {"group": kind.group, "version": kind.version,
                                                                "kind": kind.kind}]
    assert len(ops) == 1
    assert "fieldValidation" in [p["name"] for p in ops[0]["parameters"]]
    assert "application/strategic-merge-patch+json" not in ops[0]["requestBody"]["content"]
    assert openapi.schema_name(kind) in doc["components"]["schemas"]
