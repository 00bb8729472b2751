"""Endpoints and EndpointSlices computed from Services and Pods, as Kubernetes' controllers write them."""
import datetime

import pytest

from vclite.api import kinds
from vclite.httpserver import endpoints

SVC = {"apiVersion": "v1", "kind": "Service",
       "metadata": {"name": "web", "namespace": "ns", "uid": "u-svc", "labels": {"team": "a"},
                    "creationTimestamp": "2026-01-01T00:00:00Z", "resourceVersion": "7"},
       "spec": {"selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                          {"name": "admin", "port": 81, "targetPort": 9000, "protocol": "TCP"}]}}


def pod(name, ready=True, named_port=True, ns="ns", labels=None, phase="Running", ip="127.0.0.1", deleting=False):
    md = {"name": name, "namespace": ns, "uid": f"u-{name}", "labels": labels or {"app": "web"}}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    ports = [{"containerPort": 8080, "name": "http"}] if named_port else []
    return {"metadata": md, "spec": {"nodeName": "local-0", "containers": [{"name": "main", "ports": ports}]},
            "status": {"phase": phase, "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_ready_and_not_ready_pods_and_the_ports_they_have():
    ep = endpoints.of_service(SVC, [pod("a"), pod("b", ready=False), pod("c", named_port=False),
                                    pod("other-ns", ns="x"), pod("unselected", labels={"app": "db"}),
                                    pod("done", phase="Succeeded"), pod("no-ip", ip=""), pod("going", deleting=True)])
    assert ep["metadata"]["name"] == "web" and ep["metadata"]["labels"] == {"team": "a"}
    full = [{"name": "http", "port": 8080, "protocol": "TCP"}, {"name": "admin", "port": 9000, "protocol": "TCP"}]
    by_ports = {tuple(p["port"] for p in s["ports"]): s for s in ep["subsets"]}
    assert by_ports[(8080, 9000)]["ports"] == full
    assert [a["targetRef"]["name"] for a in by_ports[(8080, 9000)]["addresses"]] == ["a"]
    assert [a["targetRef"]["name"] for a in by_ports[(8080, 9000)]["notReadyAddresses"]] == ["b"]
    assert [a["targetRef"]["name"] for a in by_ports[(9000,)]["addresses"]] == ["c"]   # (no port named http)


@pytest.mark.parametrize("spec", [
    pytest.param({"ports": [{"port": 80}]}, id="no-selector"),
    pytest.param({"type": "ExternalName", "externalName": "x.example.com", "selector": {"app": "web"}},
                 id="external-name"),
])
def test_a_service_without_endpoints(spec):
    svc = {**SVC, "spec": spec}
    assert endpoints.of_service(svc, [pod("a")]) is None and endpoints.slices_of(svc, [pod("a")]) == []


def test_a_service_without_pods_has_empty_endpoints_and_one_empty_slice():
    assert "subsets" not in endpoints.of_service(SVC, [])
    (placeholder,) = endpoints.slices_of(SVC, [])
    assert placeholder["endpoints"] == [] and placeholder["ports"] == []


def test_slices_are_labelled_with_the_service_name_and_owned_by_it():
    (one,) = endpoints.slices_of(SVC, [pod("a"), pod("b", ready=False)])
    md = one["metadata"]
    assert md["labels"][endpoints.SERVICE_NAME_LABEL] == "web" and md["ownerReferences"][0]["uid"] == "u-svc"
    assert md["uid"] != "u-svc" and md["uid"] == endpoints.slices_of(SVC, [])[0]["metadata"]["uid"]
    assert [(e["targetRef"]["name"], e["conditions"]["ready"]) for e in one["endpoints"]] == [("a", True), ("b", False)]


def test_tables_as_kubectl_prints_them():
    now = datetime.datetime(2026, 1, 2, tzinfo=datetime.timezone.utc)
    pods = [pod(f"p{i}") for i in range(3)]
    ep = endpoints.table("Endpoints", endpoints.all_of([SVC], pods), now, "9", lambda o, n: "1d", "v1")
    assert [c["name"] for c in ep["columnDefinitions"]] == ["Name", "Endpoints", "Age"]
    assert ep["rows"][0]["cells"] == ["web", "127.0.0.1:8080,127.0.0.1:9000,127.0.0.1:8080 + 3 more...", "1d"]
    sl = endpoints.table("EndpointSlice", endpoints.all_slices([SVC], pods), now, "9", lambda o, n: "1d", "v1")
    assert sl["rows"][0]["cells"] == ["web-0", "IPv4", "8080,9000", "127.0.0.1,127.0.0.1,127.0.0.1", "1d"]


def test_an_unnamed_port_of_a_slice_has_an_empty_name():
    """(kubectl describe service dereferences every port's name.)"""
    svc = {**SVC, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}]}}
    assert endpoints.slices_of(svc, [pod("a")])[0]["ports"] == [{"name": "", "port": 80, "protocol": "TCP"}]


def test_the_kubernetes_service_has_the_api_servers_address():
    from vclite.httpserver import apiservice
    svc = {**apiservice.service(44321), "metadata": {**apiservice.service(44321)["metadata"], "uid": "u-k"}}
    assert endpoints.of_service(svc, []) is None   # (no address known: a plain Service without selector)
    ep = endpoints.of_service(svc, [], ("127.0.0.1", 44321))
    assert ep["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                              "ports": [{"name": "https", "port": 44321, "protocol": "TCP"}]}]
    [piece] = endpoints.slices_of(svc, [], ("127.0.0.1", 44321))
    assert piece["metadata"]["name"] == "kubernetes"
    assert piece["metadata"]["labels"][endpoints.SERVICE_NAME_LABEL] == "kubernetes"
    assert piece["endpoints"][0]["addresses"] == ["127.0.0.1"] and piece["ports"][0]["port"] == 44321
    other = {**SVC, "spec": {"ports": [{"port": 80}]}}   # (another Service without selector: none)
    assert endpoints.of_service(other, [], ("127.0.0.1", 44321)) is None


@pytest.mark.parametrize("address, expect", [("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"), ("::", "::1"),
                                             ("10.1.2.3", "10.1.2.3"), ("localhost", "127.0.0.1")])
def test_the_endpoint_address_of_a_listening_address(address, expect):
    from vclite.httpserver import apiservice
    assert apiservice.endpoint_ip(address) == expect


@pytest.mark.parametrize("change", [
    pytest.param({"ports": [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": 1234}]}, id="ports"),
    pytest.param({"type": "NodePort"}, id="type"),
])
def test_a_change_of_the_kubernetes_services_ports_or_type_is_undone(change):
    """As the bootstrap controller reconciles it (kubectl edit svc kubernetes kept port 8443 before)."""
    from vclite.apiserver import inprocess
    from vclite.httpserver import apiservice
    from vclite.lib import clock
    client = inprocess.InProcessClient(inprocess.memory.MemoryStore(clock.VirtualClock()), clock.VirtualClock())
    apiservice.ensure(client, 44321)
    current = client.get(kinds.SERVICE, "default", "kubernetes")
    assert not apiservice.needs_fix(current, 44321)
    changed = client.update({**current, "spec": {**current["spec"], **change}})
    assert apiservice.needs_fix(changed, 44321)
    apiservice.ensure(client, 44321)
    fixed = client.get(kinds.SERVICE, "default", "kubernetes")
    assert not apiservice.needs_fix(fixed, 44321)
    assert fixed["spec"]["type"] == "ClusterIP" and fixed["spec"]["clusterIP"] == apiservice.CLUSTER_IP
    assert fixed["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 44321}]
