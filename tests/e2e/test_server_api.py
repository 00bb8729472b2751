"""What Kubernetes clients ask of `vcctl server` beyond the kinds vclite runs: list semantics
(resourceVersionMatch), through the official Python client and the real kubectl.

One real server for the module.
"""
import shutil

import pytest

from tests import vcctl_server

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=2,memory=2Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)


@pytest.fixture(scope="module")
def core(server):
    from kubernetes import client, config
    return client.CoreV1Api(config.new_client_from_config(str(server.kubeconfig)))


def test_a_list_with_resource_version_match_exact_answers_that_version(core):
    from kubernetes import client
    body = {"metadata": {"name": "rvm"}, "data": {"k": "1"}}
    first = core.create_namespaced_config_map("default", body)
    at = first.metadata.resource_version
    core.patch_namespaced_config_map("rvm", "default", {"data": {"k": "2"}})
    then = core.list_namespaced_config_map("default", resource_version=at, resource_version_match="Exact")
    assert then.metadata.resource_version == at and [c.data for c in then.items if c.metadata.name == "rvm"] == [
        {"k": "1"}]
    now = core.list_namespaced_config_map("default", resource_version=at, resource_version_match="NotOlderThan")
    assert [c.data for c in now.items if c.metadata.name == "rvm"] == [{"k": "2"}]
    with pytest.raises(client.ApiException) as refused:
        core.list_namespaced_config_map("default", resource_version_match="Exact")
    assert refused.value.status == 422 and "resourceVersionMatch is forbidden unless resourceVersion is provided" \
        in refused.value.body


def test_kubectl_get_raw_of_a_version_the_server_has_not_reached(kubectl):
    r = kubectl("get", "--raw", "/api/v1/configmaps?resourceVersion=99999999&resourceVersionMatch=Exact", check=False)
    assert r.returncode != 0 and "Too large resource version: 99999999" in r.stderr, r.stderr


def test_kubectl_create_service_gets_kube_apiservers_defaults(kubectl):
    import json
    out = json.loads(kubectl("create", "service", "nodeport", "web", "--tcp=80:8080", "-o", "json").stdout)
    spec = out["spec"]
    assert spec["type"] == "NodePort" and spec["sessionAffinity"] == "None"
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]]
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"], spec["internalTrafficPolicy"]) == (
        ["IPv4"], "SingleStack", "Cluster")
    assert spec["ports"][0]["protocol"] == "TCP" and 30000 <= spec["ports"][0]["nodePort"] <= 32767
    # applied again without the assigned fields: they are kept, as kube-apiserver keeps them
    kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
         "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}))
    again = json.loads(kubectl("get", "svc", "web", "-o", "json").stdout)["spec"]
    assert again["clusterIP"] == spec["clusterIP"] and again["ports"][0]["nodePort"] == spec["ports"][0]["nodePort"]
    bad = kubectl("create", "service", "clusterip", "bad", "--tcp=0:80", check=False)
    assert bad.returncode != 0 and "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535" in bad.stderr
    assert kubectl("get", "svc", "bad", check=False).returncode != 0
