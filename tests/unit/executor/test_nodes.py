"""--nodes parsing and host-sized Node objects."""
import os

import pytest

from vclite.api import core, quantity
from vclite.executor import devices, nodes


def test_host_node_is_ready_and_sized_from_the_host():
    n = nodes.host_node("local")
    assert n["apiVersion"] == "v1" and n["kind"] == "Node"
    assert n["metadata"]["name"] == "local"
    assert n["metadata"]["labels"][core.HOSTNAME_LABEL] == "local"
    assert n["status"]["capacity"] == n["status"]["allocatable"]
    assert n["status"]["allocatable"]["cpu"] == str(os.cpu_count())
    assert quantity.parse(n["status"]["allocatable"]["memory"]) > 0
    assert n["status"]["allocatable"]["pods"] == "110"
    assert quantity.parse(n["status"]["allocatable"]["ephemeral-storage"]) > 0   # a kubelet reports it too
    assert {"type": "Ready", "status": "True"}.items() <= n["status"]["conditions"][0].items()


HOST = nodes.host_resources()


@pytest.mark.parametrize("value, expected", [
    pytest.param("1", [("local-0", HOST)], id="one-host-node"),
    pytest.param(" 3 ", [(f"local-{i}", HOST) for i in range(3)], id="three-host-nodes"),
    pytest.param("(cpu=2,memory=4Gi)", [("local-0", {**HOST, "cpu": "2", "memory": "4Gi"})], id="one-group-no-count"),
    pytest.param("2x(cpu=500m)", [(f"local-{i}", {**HOST, "cpu": "500m"}) for i in range(2)],
                 id="count-default-memory"),
    pytest.param("1x(cpu=8,memory=32Gi,pods=10)+2x(cpu=32,nvidia.com/gpu=4)",
                 [("local-0", {**HOST, "cpu": "8", "memory": "32Gi", "pods": "10"}),
                  ("local-1", {**HOST, "cpu": "32", "nvidia.com/gpu": "4"}),
                  ("local-2", {**HOST, "cpu": "32", "nvidia.com/gpu": "4"})], id="two-groups-extended-resource"),
    pytest.param("(cpu=1e+3)", [("local-0", {**HOST, "cpu": "1e+3"})], id="plus-inside-quantity-not-a-separator"),
    pytest.param("( cpu = 4 , )", [("local-0", {**HOST, "cpu": "4"})], id="spaces-and-trailing-comma"),
])
def test_good_nodes_option(value, expected):
    got = nodes.parse_nodes_option(value)
    assert [(n["metadata"]["name"], n["status"]["allocatable"]) for n in got] == expected
    assert all(n["status"]["capacity"] == n["status"]["allocatable"] for n in got)


@pytest.mark.parametrize("value, host, gpus", [
    pytest.param("2", 4, ["2", "2"], id="4 GPUs, 2 nodes: 2 each"),
    pytest.param("3", 4, ["2", "1", "1"], id="4 GPUs, 3 nodes: the first ones get the rest"),
    pytest.param("3", 2, ["1", "1", None], id="more nodes than GPUs: some get none"),
    pytest.param("1", 4, ["4"], id="one node: all of them"),
    pytest.param("2", 0, [None, None], id="no GPU"),
])
def test_host_sized_nodes_share_out_the_hosts_gpus(monkeypatch, value, host, gpus):
    """(each node declaring all of them, two pods on different nodes were given the same GPU)"""
    monkeypatch.setattr(devices, "host_gpus", lambda: tuple(f"GPU-{i}" for i in range(host)))
    got = nodes.parse_nodes_option(value)
    assert [n["status"]["allocatable"].get(devices.GPU) for n in got] == gpus
    assert devices.shared_gpus(devices.node_devices(got, devices.host_gpus()), devices.host_gpus()) is None


@pytest.mark.parametrize("value, fragment", [
    pytest.param("", "empty", id="empty"),
    pytest.param("0", "between 1 and", id="zero-nodes"),
    pytest.param("-2", "not a number of nodes", id="negative"),
    pytest.param("three", "not a number of nodes", id="word"),
    pytest.param("\u00b2", "not a number of nodes", id="superscript-digit"),   # int()'s own error before
    pytest.param("2x(cpu=two)", "invalid quantity", id="bad-quantity"),
    pytest.param("2x(cpus=2)", "unknown resource 'cpus'", id="typo-resource"),
    pytest.param("2x(cpu)", "is not name=quantity", id="missing-value"),
    pytest.param("2x(cpu=1,cpu=2)", "given twice", id="duplicate-resource"),
    pytest.param("0x(cpu=1)", "at least one node", id="zero-count"),
    pytest.param("2*(cpu=1)", "is not [COUNTx]", id="star-is-not-the-grammar"),
    pytest.param("2x(cpu=1);1x(cpu=2)", "is not [COUNTx]", id="semicolon-separator"),
    pytest.param("(memory=-1Gi)", "negative", id="negative-quantity"),
    pytest.param("999999999x(cpu=1)", "more than", id="too-many-nodes"),
    pytest.param("missing-nodes.yaml", "no such file", id="missing-file"),
])
def test_bad_nodes_option_names_the_accepted_forms(value, fragment):
    with pytest.raises(ValueError) as ei:
        nodes.parse_nodes_option(value)
    msg = str(ei.value)
    assert fragment in msg
    assert "--nodes accepts one of" in msg and "COUNTx" in msg and "PATH" in msg


NODE_FILE = """\
apiVersion: v1
kind: Node
metadata: {name: big, labels: {zone: a}}
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "110"}
  custom: kept
---
apiVersion: v1
kind: Node
metadata: {name: small}
status:
  allocatable: {cpu: "2", memory: 4Gi}
"""


def test_nodes_from_yaml_file(tmp_path):
    f = tmp_path / "nodes.yaml"
    f.write_text(NODE_FILE)
    big, small = nodes.parse_nodes_option(str(f))
    assert big["metadata"]["labels"] == {core.HOSTNAME_LABEL: "big", "zone": "a"}
    assert big["status"]["allocatable"] == {"cpu": "64", "memory": "256Gi", "pods": "110"}
    assert big["status"]["custom"] == "kept"
    assert small["status"]["capacity"] == {"cpu": "2", "memory": "4Gi"}
    assert small["status"]["conditions"][0]["type"] == "Ready"


@pytest.mark.parametrize("text, fragment", [
    # a problem of the file is located as `vcctl validate` locates one: file:line, the object, the field
    pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
                 "--nodes {f}:1: document 1: is not a v1 Node (v1 Pod): the file holds Nodes only", id="not-a-node"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\n"
                 "metadata: {name: a}\n", "--nodes {f}:7: Node/a: metadata.name: defined twice (first at {f}:1)",
                 id="duplicate-name"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: lots}}\n",
                 "--nodes {f}:4: Node/a: status.capacity.cpu: invalid quantity", id="bad-quantity"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus:\n  allocatable:\n    memory: lots\n",
                 "--nodes {f}:6: Node/a: status.allocatable.memory: invalid quantity", id="bad-quantity-own-line"),
    # the runtime's API refused it after the file was read: a traceback out of `vcctl run --nodes`
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus:\n  capacity:\n"
                 "    volcano.sh/gpu-number: \"-2\"\n",
                 '--nodes {f}:6: Node/a: status.capacity[volcano.sh/gpu-number]: Invalid value: "-2": must be greater '
                 "than or equal to 0", id="negative-amount"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: 5\n",
                 "--nodes {f}:4: Node/a: status: Invalid value: 5: must be of type object", id="status-not-an-object"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {taints: 5}\n",
                 "Node/a: spec.taints: Invalid value: 5: must be of type array", id="taints-not-a-list"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: [x]}\n",
                 "Node/a: metadata.labels: Invalid value: [\"x\"]: must be of type object", id="labels-not-a-map"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {unschedulable: 'yes'}\n",
                 "spec.unschedulable: Invalid value: \"yes\": must be of type boolean", id="unschedulable-string"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec:\n  taints: [{key: k, effect: Nope}]\n",
                 "--nodes {f}:5: Node/a: spec.taints[0].effect: Unsupported value: \"Nope\"", id="taint-effect"),
    pytest.param("apiVersion: v1\nkind: Node\nmetadata: {labels: {a: b}}\n",
                 "--nodes {f}:3: document 1 (Node): metadata.name: Required value", id="no-name"),
    pytest.param("a: [1, 2\n", "--nodes {f}:2:1: document 1: invalid YAML", id="yaml-syntax"),
    pytest.param("", "holds no Node", id="empty-file"),
])
def test_bad_node_files(tmp_path, text, fragment):
    f = tmp_path / "nodes.yaml"
    f.write_text(text)
    with pytest.raises(ValueError) as ei:
        nodes.parse_nodes_option(str(f))
    assert fragment.format(f=f) in str(ei.value)
    if "{f}" in fragment:
        assert "--nodes accepts one of" not in str(ei.value), "the file's form was understood: no list of forms"


NODE_INFO_FIELDS = ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
                    "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture")


def test_every_node_has_each_node_info_field_a_kubelet_writes(tmp_path):
    """The official Python client refuses a Node whose nodeInfo lacks one (its model requires them all)."""
    path = tmp_path / "nodes.yaml"
    path.write_text("kind: Node\napiVersion: v1\nmetadata: {name: big}\nstatus:\n  nodeInfo: {osImage: Mine}\n")
    for n in [nodes.host_node("local"), *nodes.parse_nodes_option("2x(cpu=1)"), *nodes.parse_nodes_option(str(path))]:
        info = n["status"]["nodeInfo"]
        assert all(isinstance(info.get(f), str) for f in NODE_INFO_FIELDS), info
        assert info["operatingSystem"] == "linux" and info["kubeletVersion"] == "vclite"
    assert nodes.parse_nodes_option(str(path))[0]["status"]["nodeInfo"]["osImage"] == "Mine"


READY = {"type": "Ready", "status": "True", "reason": "KubeletReady"}


def _with(*conditions):
    return {"kind": "Node", "status": {"conditions": list(conditions)}}


@pytest.mark.parametrize("previous, transition", [
    pytest.param(None, "T2", id="new-node"),
    pytest.param(_with({**READY, "lastHeartbeatTime": "T1", "lastTransitionTime": "T0"}), "T0", id="still-ready"),
    pytest.param(_with({**READY, "status": "False", "lastTransitionTime": "T0"}), "T2", id="became-ready"),
    pytest.param(_with({**READY}), "T2", id="previous-without-times"),
    pytest.param({"kind": "Node", "status": None}, "T2", id="previous-without-status"),
])
def test_stamped_conditions_have_a_heartbeat_and_keep_their_transition(previous, transition):
    got = nodes.stamped(_with(dict(READY)), "T2", previous)
    assert got["status"]["conditions"] == [{**READY, "lastHeartbeatTime": "T2", "lastTransitionTime": transition}]


def test_unstamped_ignores_only_the_condition_times():
    status = _with(dict(READY))["status"]
    assert nodes.unstamped(nodes.stamped(_with(dict(READY)), "T2")["status"]) == nodes.unstamped(status) == status
    assert nodes.unstamped({**status, "capacity": {"cpu": "2"}}) != nodes.unstamped(status)


def test_stamped_node_without_status():
    assert nodes.stamped({"kind": "Node", "status": None}, "T1") == {"kind": "Node", "status": {"conditions": []}}
