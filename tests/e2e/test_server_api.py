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
