"""The HyperNode controller in a running control plane: nodeCount, and HyperNodes discovered from node labels."""
import pytest

from vclite.api import kinds, meta
from vclite.controllers import hypernode as hn
from vclite.lib import clock
from vclite.runtime import gates, runtime

CONF = """
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        rack-net:
          - nodeLabel: example.com/spine
          - nodeLabel: example.com/rack
          - nodeLabel: kubernetes.io/hostname
"""


def node(name, **labels):
    cap = {"cpu": "2", "memory": "4Gi", "pods": "10"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {k.replace("_", "/"): v for k, v in labels.items()}},
            "status": {"capacity": cap, "allocatable": cap}}


NODES = [node("n0", **{"example.com_rack": "r0", "example.com_spine": "s0"}),
         node("n1", **{"example.com_rack": "r0", "example.com_spine": "s0"}),
         node("n2", **{"example.com_rack": "r1", "example.com_spine": "s0"}),
         node("n3")]


def start(controllers=gates.KNOWN):
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[dict(n) for n in NODES], run_pods=False,
                         controllers=controllers)
    rt.start()
    return rt


def with_config(rt, text=CONF):
    rt.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}})
    rt.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
                      "data": {hn.CONFIG_KEY: text}})
    rt.settle()


def discovered(rt):
    """{label value: (tier, member names, nodeCount)} of the label source's HyperNodes."""
    out = {}
    names = {}
    items = [h for h in rt.client.list(kinds.HYPERNODE) if meta.labels(h).get(hn.SOURCE_LABEL) == "label"]
    for h in items:
        labels = meta.labels(h)
        names[meta.name(h)] = labels.get("example.com/rack") or labels.get("example.com/spine")
    for h in items:
        members = sorted(names.get(m["selector"]["exactMatch"]["name"], m["selector"]["exactMatch"]["name"])
                         for m in h["spec"]["members"])
        out[names[meta.name(h)]] = (h["spec"]["tier"], members, (h.get("status") or {}).get("nodeCount"))
    return out


def test_label_discovery_builds_the_tree_and_counts_members():
    rt = start()
    assert rt.client.list(kinds.HYPERNODE) == []          # no ConfigMap: nothing discovered
    with_config(rt)
    assert discovered(rt) == {"r0": (1, ["n0", "n1"], 2), "r1": (1, ["n2"], 1), "s0": (2, ["r0", "r1"], 2)}


def test_discovery_follows_node_labels_and_hypernode_deletions():
    rt = start()
    with_config(rt)
    n2 = rt.client.get(kinds.NODE, "", "n2")
    rt.client.update({**n2, "metadata": {**n2["metadata"], "labels": {"example.com/rack": "r0",
                                                                      "example.com/spine": "s0"}}})
    rt.settle()
    assert discovered(rt) == {"r0": (1, ["n0", "n1", "n2"], 3), "s0": (2, ["r0"], 1)}   # r1 deleted
    r0 = next(h for h in rt.client.list(kinds.HYPERNODE) if meta.labels(h).get("example.com/rack") == "r0")
    rt.client.delete(kinds.HYPERNODE, "", meta.name(r0))
    rt.settle()
    again = next(h for h in rt.client.list(kinds.HYPERNODE) if meta.labels(h).get("example.com/rack") == "r0")
    assert meta.name(again) == meta.name(r0) and meta.uid(again) != meta.uid(r0)      # made again, same name


def test_a_changed_configmap_rebuilds_and_a_bad_one_is_reported_once():
    rt = start()
    with_config(rt)
    cm = rt.client.get(kinds.CONFIGMAP, "volcano-system", "volcano-controller-configmap")
    bad = CONF.replace("rack-net", "a-name-longer-than-twenty") + "  - source: ufm\n    enabled: true\n"
    rt.client.update({**cm, "data": {hn.CONFIG_KEY: bad}})
    rt.settle()
    assert len(discovered(rt)) == 3     # nothing usable: what exists is left as it is, as upstream
    warnings = [e for e in rt.client.list(kinds.EVENT, "volcano-system") if e.get("reason") == "InvalidDiscoveryConfig"]
    assert sorted(e["message"].split(":")[0] for e in warnings) == [
        "networkTopologyDiscovery[1]", "networkTopologyTypes"]
    assert all(e.get("count", 1) == 1 for e in warnings)
    cm = rt.client.get(kinds.CONFIGMAP, "volcano-system", "volcano-controller-configmap")
    rt.client.update({**cm, "data": {hn.CONFIG_KEY: CONF.replace("          - nodeLabel: example.com/spine\n", "")}})
    rt.settle()
    assert discovered(rt) == {"r0": (1, ["n0", "n1"], 2), "r1": (1, ["n2"], 1)}      # one tier now


def test_node_count_of_a_hand_written_hypernode_follows_nodes():
    rt = start()
    rt.client.create({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "gpus"},
                      "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^n[0-2]$"}}}]}})
    rt.settle()
    assert rt.client.get(kinds.HYPERNODE, "", "gpus")["status"]["nodeCount"] == 3
    rt.client.delete(kinds.NODE, "", "n0")
    rt.settle()
    assert rt.client.get(kinds.HYPERNODE, "", "gpus")["status"]["nodeCount"] == 2


def test_the_controller_can_be_turned_off():
    rt = start(controllers=gates.enabled(["*", "-hyperNode-controller"]))
    with_config(rt)
    assert rt.client.list(kinds.HYPERNODE) == []


@pytest.mark.parametrize("spine_missing_on", ["n0", "n2"])
def test_a_node_stops_at_its_first_missing_label(spine_missing_on):
    rt = start()
    n = rt.client.get(kinds.NODE, "", spine_missing_on)
    rt.client.update({**n, "metadata": {**n["metadata"], "labels": {
        k: v for k, v in meta.labels(n).items() if k != "example.com/spine"}}})
    with_config(rt)
    tree = discovered(rt)
    assert tree["s0"][0] == 2 and tree["r0"][1] == ["n0", "n1"]
