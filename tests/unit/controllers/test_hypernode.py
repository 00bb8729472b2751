"""The HyperNode controller's decisions: member counting, the discovery config, label discovery, reconcile."""
import pytest

from vclite.controllers import hypernode as hn


def node(name, **labels):
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}}


def hypernode(name, members, labels=None, tier=1):
    return {"kind": "HyperNode", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"tier": tier, "members": members}}


def member(kind="Node", **selector):
    return {"type": kind, "selector": selector}


NODES = [node("gpu-0", rack="a"), node("gpu-1", rack="a"), node("cpu-0", rack="b"), node("cpu-1")]


@pytest.mark.parametrize("members, count", [
    ([member(exactMatch={"name": "gpu-0"})], 1),
    ([member(exactMatch={"name": "no-such-node"})], 1),                  # counted by name, as upstream
    ([member("HyperNode", exactMatch={"name": "s0"}), member("HyperNode", exactMatch={"name": "s1"})], 2),
    ([member(exactMatch={"name": ""})], 0),
    ([member(regexMatch={"pattern": "^gpu-"})], 2),
    ([member(regexMatch={"pattern": "0"})], 2),                           # a search, as Go's MatchString
    ([member(regexMatch={"pattern": "("})], 0),                           # does not compile: none
    ([member(labelMatch={"matchLabels": {"rack": "a"}})], 2),
    ([member(labelMatch={"matchExpressions": [{"key": "rack", "operator": "Exists"}]})], 3),
    ([member(labelMatch={})], 0),                                         # an empty selector selects none
    ([member(regexMatch={"pattern": "gpu"}), member(labelMatch={"matchLabels": {"rack": "a"}})], 2),   # once
    ([member(regexMatch={"pattern": "gpu"}), member(exactMatch={"name": "cpu-1"})], 3),
    ([], 0),
])
def test_node_count_is_upstreams_member_count(members, count):
    assert hn.node_count(hypernode("h", members), NODES) == count


def configmap(text):
    return {"kind": "ConfigMap", "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
            "data": {hn.CONFIG_KEY: text}}


LABEL_CONF = """
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        rack-net:
          - nodeLabel: spine
          - nodeLabel: rack
          - nodeLabel: kubernetes.io/hostname
"""


@pytest.mark.parametrize("text, types, problem", [
    (LABEL_CONF, {"rack-net": ["rack", "spine"]}, None),
    (LABEL_CONF.replace("enabled: true", "enabled: false"), None, None),
    ("other: 1", None, None),
    ("networkTopologyDiscovery: [", {}, "is not valid YAML"),
    ("networkTopologyDiscovery: 3", {}, "must be a list"),
    (LABEL_CONF.replace("rack-net", "a-very-long-type-name-x"), {}, "longer than 20 characters"),
    (LABEL_CONF.replace("nodeLabel: rack", "nodeLabel: spine"), {}, "named twice"),
    (LABEL_CONF + "  - source: ufm\n    enabled: true\n", {"rack-net": ["rack", "spine"]}, "'ufm' is not supported"),
    ("networkTopologyDiscovery:\n  - source: ufm\n    enabled: true\n", {}, "'ufm' is not supported"),
    (LABEL_CONF.replace("enabled: true", 'enabled: "true"'), {}, "must be true or false, unquoted"),
    ("networkTopologyDiscovery:\n  - {source: label, enabled: true, config: {networkTopologyTypes: [1]}}\n", {},
     "must be a map"),
    # an entry without nodeLabel is an empty label, as mapstructure decodes it: the tiers stay where they are
    (LABEL_CONF.replace("nodeLabel: kubernetes.io/hostname", "nodelabel: kubernetes.io/hostname"),
     {"rack-net": ["rack", "spine"]}, "[rack-net][2]: no nodeLabel"),
    (LABEL_CONF.replace("nodeLabel: spine", "nodelabel: spine"), {"rack-net": ["rack", ""]},
     "[rack-net][0]: no nodeLabel"),
])
def test_parse_config(text, types, problem):
    got = hn.parse_config(configmap(text))
    if types is None:
        assert got is None
        return
    assert got.types == types
    assert (problem is None and not got.problems) or any(problem in p for p in got.problems)


def test_parse_config_without_the_configmap_or_key():
    assert hn.parse_config(None) is None
    assert hn.parse_config({"metadata": {}, "data": {"other": "x"}}) is None


@pytest.mark.parametrize("environ, ref", [
    ({}, ("volcano-system", "volcano-controller-configmap")),
    ({"KUBE_POD_NAMESPACE": "vc", "HELM_RELEASE_NAME": "prod"}, ("vc", "prod-controller-configmap")),
])
def test_configmap_ref_follows_upstreams_environment(environ, ref):
    assert hn.configmap_ref(environ) == ref


def test_clean_type_name():
    assert hn.clean_type_name("Topo_A2.x-1/y") == "topo-a2.x-1-y"


TYPES = {"rack-net": ["rack", "spine"]}
RACKED = [node("n0", rack="r0", spine="s0"), node("n1", rack="r0", spine="s0"), node("n2", rack="r1", spine="s0"),
          node("n3", rack="r2"), node("n4", spine="s1"), node("n5")]


def by_labels(found):
    return {tuple(sorted((k, v) for k, v in h["metadata"]["labels"].items() if k != hn.SOURCE_LABEL)):
            (h["spec"]["tier"], h["spec"]["tierName"],
             sorted(m["selector"]["exactMatch"]["name"] for m in h["spec"]["members"]),
             {m["type"] for m in h["spec"]["members"]})
            for h in found.values()}


def test_discover_builds_a_tier_per_label_from_the_one_above_the_nodes_own():
    found = hn.discover(TYPES, RACKED, [])
    names = {h["metadata"]["labels"].get("rack") or h["metadata"]["labels"].get("spine"): n for n, h in found.items()}
    got = by_labels(found)
    assert got[(("rack", "r0"),)] == (1, "rack", ["n0", "n1"], {"Node"})
    assert got[(("rack", "r1"),)] == (1, "rack", ["n2"], {"Node"})
    assert got[(("rack", "r2"),)] == (1, "rack", ["n3"], {"Node"})     # no spine label: tier 1 only
    assert got[(("spine", "s0"),)] == (2, "spine", sorted([names["r0"], names["r1"]]), {"HyperNode"})
    assert len(found) == 4        # n4 has no rack label: it stops at once; n5 has none
    for name, h in found.items():
        assert name.startswith(f"hypernode-rack-net-tier{h['spec']['tier']}-") and len(name.rsplit("-", 1)[1]) == 5
        assert h["metadata"]["labels"][hn.SOURCE_LABEL] == "label"
    assert hn.discover(TYPES, list(reversed(RACKED)), []) == found          # the same input, the same names


def test_discover_keeps_the_names_of_existing_hypernodes_and_avoids_taken_ones():
    first = hn.discover(TYPES, RACKED, [])
    r0 = next(n for n, h in first.items() if h["metadata"]["labels"].get("rack") == "r0")
    adopted = hypernode("hypernode-rack-net-tier1-abcde", [], {hn.SOURCE_LABEL: "label", "rack": "r0"})
    squatter = hypernode(next(n for n, h in first.items() if h["metadata"]["labels"].get("rack") == "r1"), [])
    again = hn.discover(TYPES, RACKED, [adopted, squatter])
    assert "hypernode-rack-net-tier1-abcde" in again and r0 not in again
    assert squatter["metadata"]["name"] not in again       # a name someone else holds is not taken
    assert len(again) == 4


def test_reconcile_creates_updates_and_deletes_only_its_own_source():
    found = hn.discover(TYPES, RACKED, [])
    names = sorted(found)
    stale = hypernode("hypernode-rack-net-tier1-zzzzz", [], {hn.SOURCE_LABEL: "label", "rack": "gone"})
    mine_changed = {**found[names[0]], "spec": {"tier": 1, "members": []},
                    "metadata": {**found[names[0]]["metadata"], "resourceVersion": "7"}}
    unchanged = found[names[1]]
    by_hand = hypernode("rack-by-hand", [member(exactMatch={"name": "n9"})])
    plan = hn.reconcile(found, [stale, mine_changed, unchanged, by_hand])
    assert sorted(meta_name(h) for h in plan.create) == names[2:]
    assert [meta_name(h) for h in plan.update] == [names[0]]
    assert plan.update[0]["spec"] == found[names[0]]["spec"]
    assert plan.update[0]["metadata"]["resourceVersion"] == "7"
    assert plan.delete == ["hypernode-rack-net-tier1-zzzzz"]


def meta_name(obj):
    return obj["metadata"]["name"]
