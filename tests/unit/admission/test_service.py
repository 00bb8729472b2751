"""Service admission: kube-apiserver's defaults, field checks, cluster IP and node port allocation."""
from __future__ import annotations

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def svc(name="s", ns="default", **spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def admit_svc(new, *others, old=None, op=Op.CREATE):
    return admit.admit(op, kinds.SERVICE, new, old, views.DictView(*others))


def test_a_plain_service_gets_kube_apiservers_defaults():
    out = admit_svc(svc(selector={"app": "a"}, ports=[{"port": 80}]))
    assert out["spec"] == {"selector": {"app": "a"}, "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                           "type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                           "clusterIP": "10.96.1.0", "clusterIPs": ["10.96.1.0"], "ipFamilyPolicy": "SingleStack",
                           "ipFamilies": ["IPv4"]}
    assert out["status"] == {"loadBalancer": {}}


@pytest.mark.parametrize("spec, wanted", [
    pytest.param({"clusterIP": "None", "selector": {"a": "b"}},
                 {"clusterIPs": ["None"], "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}, id="headless"),
    pytest.param({"clusterIP": "None"},
                 {"clusterIPs": ["None"], "ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv4", "IPv6"]},
                 id="headless-without-selector"),
    pytest.param({"type": "NodePort", "ports": [{"port": 80, "targetPort": "http", "name": "a"}]},
                 {"externalTrafficPolicy": "Cluster",
                  "ports": [{"port": 80, "targetPort": "http", "name": "a", "protocol": "TCP", "nodePort": 30000}]},
                 id="node-port"),
    pytest.param({"type": "LoadBalancer", "ports": [{"port": 80}]},
                 {"allocateLoadBalancerNodePorts": True, "externalTrafficPolicy": "Cluster"}, id="load-balancer"),
    pytest.param({"sessionAffinity": "ClientIP", "ports": [{"port": 80}]},
                 {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}}}, id="client-ip-affinity"),
    pytest.param({"clusterIP": "10.96.0.7", "ports": [{"port": 80}]}, {"clusterIPs": ["10.96.0.7"]}, id="chosen-ip"),
])
def test_defaults_by_type(spec, wanted):
    out = admit_svc(svc(**spec))["spec"]
    assert {k: out.get(k) for k in wanted} == wanted


def test_an_externalname_service_has_no_address():
    out = admit_svc(svc(type="ExternalName", externalName="db.example.com"))["spec"]
    assert "clusterIP" not in out and "ipFamilies" not in out and "internalTrafficPolicy" not in out


def test_addresses_and_node_ports_in_use_are_skipped():
    taken = admit_svc(svc("a", type="NodePort", ports=[{"port": 80}]))
    out = admit_svc(svc("b", type="NodePort", ports=[{"port": 80}]), taken)["spec"]
    assert out["clusterIP"] == "10.96.1.1" and out["ports"][0]["nodePort"] == 30001


@pytest.mark.parametrize("spec, field, words", [
    pytest.param({}, "spec.ports", "Required value", id="no-ports"),
    pytest.param({"ports": [{"port": 0}]}, "spec.ports[0].port", "Invalid value: 0: must be between 1 and 65535",
                 id="port-zero"),
    pytest.param({"selector": {"app": [1]}, "ports": [{"port": 80}]}, "spec.selector.app",
                 "Invalid value: [1]: must be of type string", id="selector-value-a-list"),
    pytest.param({"selector": {"app": "a b"}, "ports": [{"port": 80}]}, "spec.selector",
                 'Invalid value: "a b": a valid label must be', id="selector-value-not-a-label"),
    pytest.param({"selector": ["app"], "ports": [{"port": 80}]}, "spec.selector", "must be of type object",
                 id="selector-a-list"),
    pytest.param({"ports": [{"port": [80]}]}, "spec.ports[0].port", "Invalid value: [80]: must be of type integer",
                 id="port-a-list"),
    pytest.param({"ports": [{"port": {}}]}, "spec.ports[0].port", "must be of type integer", id="port-an-object"),
    pytest.param({"ports": [{"port": 80, "protocol": ["TCP"]}]}, "spec.ports[0].protocol", "Unsupported value",
                 id="protocol-a-list"),
    pytest.param({"ports": [{"port": 80, "protocol": "HTTP"}]}, "spec.ports[0].protocol",
                 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"', id="protocol"),
    pytest.param({"ports": [{"port": 80, "name": "a"}, {"port": 81}]}, "spec.ports[1].name", "Required value",
                 id="second-port-unnamed"),
    pytest.param({"ports": [{"port": 80, "name": "a"}, {"port": 81, "name": "a"}]}, "spec.ports[1].name",
                 'Duplicate value: "a"', id="port-names-twice"),
    pytest.param({"ports": [{"port": 80, "targetPort": 70000}]}, "spec.ports[0].targetPort",
                 "Invalid value: 70000", id="target-port"),
    pytest.param({"ports": [{"port": 80, "targetPort": "http_x"}]}, "spec.ports[0].targetPort",
                 'Invalid value: "http_x"', id="target-port-name"),
    pytest.param({"type": "Cluster", "ports": [{"port": 80}]}, "spec.type",
                 'Unsupported value: "Cluster": supported values: "ClusterIP", "ExternalName"', id="type"),
    pytest.param({"sessionAffinity": "Sticky", "ports": [{"port": 80}]}, "spec.sessionAffinity",
                 'Unsupported value: "Sticky"', id="affinity"),
    pytest.param({"ports": [{"port": 80, "nodePort": 30080}]}, "spec.ports[0].nodePort",
                 "Forbidden: may not be used when `type` is 'ClusterIP'", id="node-port-on-cluster-ip"),
    pytest.param({"type": "ExternalName"}, "spec.externalName", "Required value", id="external-name"),
    pytest.param({"clusterIP": "10.0.0.1", "ports": [{"port": 80}]}, "spec.clusterIPs",
                 "provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12", id="ip-out-of-range"),
    pytest.param({"clusterIP": "ten", "ports": [{"port": 80}]}, "spec.clusterIPs[0]",
                 'Invalid value: "ten": must be a valid IP address', id="not-an-ip"),
    pytest.param({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}, "spec.ports[0].nodePort",
                 "The range of valid ports is 30000-32767", id="node-port-out-of-range"),
    pytest.param({"ipFamilyPolicy": "RequireDualStack", "ports": [{"port": 80}]}, "spec.ipFamilyPolicy",
                 "this cluster is not configured for dual-stack services", id="dual-stack"),
    pytest.param({"type": "NodePort", "clusterIP": "None", "ports": [{"port": 80}]}, "spec.clusterIPs[0]",
                 """Invalid value: "None": may not be set to 'None' for NodePort services""", id="headless-node-port"),
    pytest.param({"type": "LoadBalancer", "clusterIP": "None", "ports": [{"port": 80}]}, "spec.clusterIPs[0]",
                 "may not be set to 'None' for LoadBalancer services", id="headless-load-balancer"),
    pytest.param({"externalTrafficPolicy": "Local", "ports": [{"port": 80}]}, "spec.externalTrafficPolicy",
                 'Invalid value: "Local": may only be set for externally-accessible services',
                 id="traffic-policy-on-cluster-ip"),
])
def test_refusals_name_the_field(spec, field, words):
    with pytest.raises(errors.Invalid) as caught:
        admit_svc(svc(**spec))
    assert caught.value.errors[0].path == field and words in caught.value.errors[0].message, caught.value


def test_an_address_in_use_is_refused():
    first = admit_svc(svc("a", clusterIP="10.96.0.9", ports=[{"port": 80}]))
    with pytest.raises(errors.Invalid, match="failed to allocate IP 10.96.0.9: provided IP is already allocated"):
        admit_svc(svc("b", clusterIP="10.96.0.9", ports=[{"port": 80}]), first)


def test_an_update_keeps_what_was_assigned_and_may_not_change_the_address():
    created = admit_svc(svc(type="NodePort", ports=[{"port": 80}]))
    updated = admit_svc(svc(type="NodePort", ports=[{"port": 80}], selector={"a": "b"}), created, old=created,
                        op=Op.UPDATE)["spec"]
    assert updated["clusterIP"] == created["spec"]["clusterIP"] and updated["ports"][0]["nodePort"] == 30000
    with pytest.raises(errors.Invalid, match='spec.clusterIP: Invalid value: "10.96.0.99": field is immutable'):
        admit_svc(svc(type="NodePort", clusterIP="10.96.0.99", ports=[{"port": 80}]), created, old=created,
                  op=Op.UPDATE)


def test_an_external_traffic_policy_is_kept_where_the_service_is_reachable_from_outside():
    """ClusterIP with externalIPs is externally accessible (kube's ExternallyAccessible); an update that only
    changes the type of a NodePort Service to ClusterIP is not refused for the policy it already had."""
    out = admit_svc(svc(externalIPs=["1.2.3.4"], externalTrafficPolicy="Local", ports=[{"port": 80}]))
    assert out["spec"]["externalTrafficPolicy"] == "Local"
    old = admit_svc(svc(type="NodePort", ports=[{"port": 80}]))
    new = {**old, "spec": {**old["spec"], "type": "ClusterIP",
                           "ports": [{k: v for k, v in p.items() if k != "nodePort"} for p in old["spec"]["ports"]]}}
    assert admit_svc(new, old=old, op=Op.UPDATE)["spec"]["type"] == "ClusterIP"


@pytest.mark.parametrize("spec, field, words", [
    pytest.param({"clusterIP": "10.96.0.7", "clusterIPs": ["10.96.0.8"], "ports": [{"port": 80}]}, "spec.clusterIPs",
                 'Invalid value: ["10.96.0.8"]: first value must match `clusterIP`', id="cluster-ips-mismatch"),
    pytest.param({"clusterIPs": ["10.96.0.8"], "ports": [{"port": 80}]}, "spec.clusterIPs",
                 "must be empty when `clusterIP` is not specified", id="cluster-ips-without-cluster-ip"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}},
                  "ports": [{"port": 80}]}, "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                 "Invalid value: 0: must be greater than 0 and less than 86400", id="affinity-timeout-zero"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86401}},
                  "ports": [{"port": 80}]}, "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                 "Invalid value: 86401", id="affinity-timeout-over-a-day"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": "1h"}},
                  "ports": [{"port": 80}]}, "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                 "must be of type integer", id="affinity-timeout-not-a-number"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": []},
                  "ports": [{"port": 80}]}, "spec.sessionAffinityConfig.clientIP", "must be of type object",
                 id="affinity-client-ip-not-an-object"),
    pytest.param({"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}, "ports": [{"port": 80}]},
                 "spec.sessionAffinityConfig", "Forbidden: must not be set when session affinity is None",
                 id="affinity-config-without-client-ip"),
])
def test_cluster_ips_and_session_affinity_config_are_checked(spec, field, words):
    with pytest.raises(errors.Invalid) as caught:
        admit_svc(svc(**spec))
    assert caught.value.errors[0].path == field and words in caught.value.errors[0].message, caught.value.errors


@pytest.mark.parametrize("spec, expect", [
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {}}, 10800, id="empty-config"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {}}}, 10800, id="no-timeout"),
    pytest.param({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86400}}},
                 86400, id="a-day"),
])
def test_client_ip_affinity_gets_its_timeout_where_missing(spec, expect):
    out = admit_svc(svc(ports=[{"port": 80}], **spec))["spec"]
    assert out["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": expect}}


def test_matching_cluster_ips_are_accepted():
    out = admit_svc(svc(clusterIP="10.96.0.7", clusterIPs=["10.96.0.7"], ports=[{"port": 80}]))["spec"]
    assert out["clusterIPs"] == ["10.96.0.7"]
