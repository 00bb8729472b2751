"""Kubernetes protobuf bodies (as `kubectl create namespace|configmap|priorityclass` sends them)."""
import pytest

from vclite.httpserver import bodies, protobuf
from vclite.httpserver import status as status_mod
from vclite.lib import errors


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(number, value):
    if isinstance(value, bool) or isinstance(value, int):
        return varint(number << 3) + varint(int(value) if value >= 0 else value + (1 << 64))
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number, key, value):
    return field(number, field(1, key) + field(2, value))


def envelope(api_version, kind, raw):
    return protobuf.MAGIC + field(1, field(1, api_version) + field(2, kind)) + field(2, raw) + field(3, "") + \
        field(4, "")


# As gogo-protobuf writes them: every string field present, empty ones too.
META = field(1, "cfg") + field(2, "") + field(3, "team") + field(4, "") + field(5, "") + field(6, "") + \
    field(7, 0) + field(8, b"") + entry(11, "app", "web") + field(14, "f1")


@pytest.mark.parametrize("body, expected", [
    pytest.param(envelope("v1", "ConfigMap", field(1, META) + entry(2, "a", "1") + entry(3, "bin", b"\x00\x01")),
                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "team",
                                                                         "labels": {"app": "web"}, "finalizers": ["f1"]},
                  "data": {"a": "1"}, "binaryData": {"bin": "AAE="}}, id="configmap"),
    pytest.param(envelope("v1", "Namespace", field(1, field(1, "team")) + field(2, b"") + field(3, field(1, ""))),
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}, id="namespace"),
    pytest.param(envelope("scheduling.k8s.io/v1", "PriorityClass", field(1, field(1, "zero")) + field(2, 0) +
                          field(3, False) + field(4, "d")),
                 {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "zero"},
                  "value": 0, "description": "d"}, id="priorityclass-zero-value-kept"),
    pytest.param(envelope("scheduling.k8s.io/v1", "PriorityClass", field(1, field(1, "neg")) + field(2, -5)),
                 {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "neg"},
                  "value": -5}, id="negative-int"),
    # `kubectl create quota q --hard=pods=2,requests.cpu=500m --scopes=BestEffort`: Quantity is {string = 1}
    pytest.param(envelope("v1", "ResourceQuota", field(1, field(1, "q")) + field(2, entry(1, "pods", field(1, "2")) +
                                                                         entry(1, "requests.cpu", field(1, "500m")) +
                                                                         field(2, "BestEffort")) + field(3, b"")),
                 {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                  "spec": {"hard": {"pods": "2", "requests.cpu": "500m"}, "scopes": ["BestEffort"]}},
                 id="resourcequota"),
    # `kubectl drain` deletes each pod through client-go, which sends its DeleteOptions as protobuf
    pytest.param(envelope("v1", "DeleteOptions", field(1, 0) + field(4, "Foreground") + field(5, "All") +
                          field(2, field(1, "u-1") + field(2, "7"))),
                 {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                  "propagationPolicy": "Foreground", "dryRun": ["All"],
                  "preconditions": {"uid": "u-1", "resourceVersion": "7"}}, id="delete-options-grace-zero-kept"),
    pytest.param(envelope("meta.k8s.io/v1", "DeleteOptions", field(1, 30) + field(3, True)),
                 {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 30,
                  "orphanDependents": True}, id="delete-options-meta"),
    pytest.param(envelope("v1", "DeleteOptions", b""), {"apiVersion": "v1", "kind": "DeleteOptions"},
                 id="delete-options-empty"),
    # `kubectl create service nodeport web --tcp=80:8080 --node-port=30080`, as kubectl 1.32 writes it
    pytest.param(envelope("v1", "Service", field(1, field(1, "web") + field(2, "")) + field(2, field(
        1, field(1, "80-8080") + field(2, "TCP") + field(3, 80) + field(4, field(1, 0) + field(2, 8080) + field(3, ""))
        + field(5, 30080)) + entry(2, "app", "web") + field(3, "") + field(4, "NodePort") + field(7, "") +
        field(12, 0) + field(13, False)) + field(3, field(1, b""))),
                 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                  "spec": {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080,
                                      "nodePort": 30080}], "selector": {"app": "web"}, "type": "NodePort"}},
                 id="service"),
    pytest.param(envelope("v1", "Service", field(1, field(1, "named")) + field(2, field(
        1, field(3, 443) + field(4, field(1, 1) + field(2, 0) + field(3, "https"))))),
                 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "named"},
                  "spec": {"ports": [{"port": 443, "targetPort": "https"}]}}, id="service-named-target-port"),
    # `kubectl create pdb b --selector=app=a --min-available=0`: a zero IntOrString is a value, kept
    pytest.param(envelope("policy/v1", "PodDisruptionBudget", field(1, field(1, "b")) + field(2, field(
        1, field(1, 0) + field(2, 0) + field(3, "")) + field(2, entry(1, "app", "a") + b"") + field(4, ""))),
                 {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
                  "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "a"}}}}, id="pdb-min-zero"),
    pytest.param(envelope("policy/v1", "PodDisruptionBudget", field(1, field(1, "b")) + field(2, field(
        3, field(1, 1) + field(3, "50%")) + field(2, b"") + field(4, "AlwaysAllow"))),
                 {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
                  "spec": {"maxUnavailable": "50%", "selector": {}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}},
                 id="pdb-empty-selector-kept"),
])
def test_decodes(body, expected):
    assert bodies.decode(body, "application/vnd.kubernetes.protobuf") == expected


@pytest.mark.parametrize("body, error", [
    pytest.param(envelope("v1", "Pod", field(1, field(1, "p"))), status_mod.UnsupportedMediaType, id="unknown-kind"),
    pytest.param(b"\x0a\x02hi", errors.BadRequest, id="no-magic"),
    pytest.param(protobuf.MAGIC + b"\x0a\xff\xff\xff", errors.BadRequest, id="truncated"),
    pytest.param(protobuf.MAGIC + b"\x0b", errors.BadRequest, id="bad-wire-type"),
    pytest.param(envelope("v1", "ConfigMap", field(1, field(1, b"\xff\xfe"))), errors.BadRequest, id="not-utf8"),
])
def test_refuses(body, error):
    with pytest.raises(error):
        protobuf.decode(body)


def test_an_unknown_kind_is_refused_naming_each_known_kind_once():
    with pytest.raises(status_mod.UnsupportedMediaType) as info:
        protobuf.decode(envelope("v1", "Pod", b""))
    assert str(info.value).count("DeleteOptions") == 1 and "not Pod: send application/json" in str(info.value)
