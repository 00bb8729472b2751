"""HyperNode admission: the CRD schema (topology.volcano.sh_hypernodes.yaml), the hypernode
ValidatingAdmissionPolicy and webhook (admit_hypernode.go), with their messages."""
from __future__ import annotations

from typing import Any

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]
VIEW = views.default_view()


def hn(name: str = "s0", *members: Obj, status: Obj | None = None, **spec: Any) -> Obj:
    obj: Obj = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
                "spec": {"tier": 1, **spec}}
    if members:
        obj["spec"]["members"] = list(members)
    if status is not None:
        obj["status"] = status
    return obj


def node(**selector: Any) -> Obj:
    return {"type": "Node", "selector": selector}


def refusal(new: Obj) -> list[str]:
    try:
        admit.admit(Op.CREATE, kinds.HYPERNODE, new, None, VIEW)
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


GOOD = [
    pytest.param(hn("s0", node(exactMatch={"name": "node-0"}), node(exactMatch={"name": "node-1"})), id="exact"),
    pytest.param(hn("s1", node(regexMatch={"pattern": "^node-[0-9]+$"})), id="regex"),
    pytest.param(hn("s2", node(labelMatch={"matchLabels": {"rack": "r1"}})), id="label"),
    # upstream admit_hypernode_test.go "validate valid hypernode" and "… with labelMatch"
    pytest.param(hn("hypernode-1", node(exactMatch={"name": "node-1"})), id="upstream-valid-hypernode"),
    pytest.param(hn("hypernode-label", node(labelMatch={"matchLabels": {"topology-rack": "rack1"}})),
                 id="upstream-valid-labelmatch"),
    pytest.param(hn("s3", {"type": "HyperNode", "selector": {"exactMatch": {"name": "s0"}}}, tier=2,
                    tierName="spine"), id="nested-with-tier-name"),
    pytest.param(hn("s4", node(exactMatch={"name": "n"}), tier=0), id="tier-0"),
]


@pytest.mark.parametrize("obj", GOOD)
def test_good_hypernodes_are_admitted(obj: Obj) -> None:
    assert refusal(obj) == []


BAD = [
    pytest.param(hn("s0"), ["spec.members: Invalid value: null: member must have at least one member"],
                 id="no-members"),
    pytest.param(hn("s0", members=[]), ["spec.members: Invalid value: 0: spec.members in body should have at least "
                                        "1 items"], id="empty-members"),
    pytest.param({**hn("s0", node(exactMatch={"name": "a"})), "spec": {"members": [node(exactMatch={"name": "a"})]}},
                 ["spec.tier: Required value"], id="no-tier"),
    pytest.param(hn("s0", node(exactMatch={"name": "a"}), tier=-1),
                 ["spec.tier: Invalid value: -1: should be greater than or equal to 0"], id="negative-tier"),
    pytest.param(hn("s0", node(exactMatch={"name": "a"}), tier="1"),
                 ['spec.tier: Invalid value: "1": must be of type integer'], id="tier-string"),
    pytest.param(hn("s0", node(exactMatch={"name": "a"}), tierName="x" * 254),
                 ["spec.tierName: Too long: may not be longer than 253"], id="tier-name-too-long"),
    pytest.param(hn("s0", node()),
                 ["spec.members[0].selector: Invalid value: {}: Either ExactMatch or RegexMatch or LabelMatch must be "
                  "specified"], id="no-selector"),
    pytest.param(hn("s0", node(exactMatch={"name": "a"}, regexMatch={"pattern": "a"})),
                 ['spec.members[0].selector: Invalid value: {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": '
                  '"a"}}: Only one of ExactMatch, RegexMatch, or LabelMatch can be specified'], id="two-selectors"),
    pytest.param(hn("s0", {"selector": {"exactMatch": {"name": "a"}}}), ["spec.members[0].type: Required value"],
                 id="no-type"),
    pytest.param(hn("s0", {"type": "Rack", "selector": {"exactMatch": {"name": "a"}}}),
                 ['spec.members[0].type: Unsupported value: "Rack": supported values: "Node", "HyperNode"'],
                 id="bad-type"),
    pytest.param(hn("s0", node(exactMatch={})), ["spec.members[0].selector.exactMatch.name: Required value"],
                 id="exact-no-name"),
    pytest.param(hn("s0", node(exactMatch={"name": "Node_A"})),
                 ['spec.members[0].selector.exactMatch.name: Invalid value: "Node_A": spec.members[].selector.'
                  "exactMatch.name in body should match "
                  "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"],
                 id="exact-bad-name"),   # (the CRD's pattern, checked before the webhook)
    pytest.param(hn("s0", node(regexMatch={})), ["spec.members[0].selector.regexMatch.pattern: Required value"],
                 id="regex-no-pattern"),
    pytest.param(hn("s0", node(regexMatch={"pattern": ""})),
                 ['spec.members[0].selector.regexMatch.pattern: Invalid value: "": spec.members[].selector.regexMatch.'
                  "pattern in body should be at least 1 chars long"], id="regex-empty"),   # (the CRD's minLength)
    pytest.param(hn("s0", node(regexMatch={"pattern": "node-(["})),
                 ['spec.members[0].selector.regexMatch.pattern: Invalid value: "node-([": member regexMatch pattern '
                  "is invalid: unterminated character set at position 6"], id="regex-does-not-compile"),
    # upstream admit_hypernode_test.go "validate invalid hypernode with invalid regexMatch"
    pytest.param(hn("hypernode-1", node(regexMatch={"pattern": "a(b"})),
                 ['spec.members[0].selector.regexMatch.pattern: Invalid value: "a(b": member regexMatch pattern '
                  "is invalid: missing ), unterminated subpattern at position 1"], id="upstream-regex-a(b"),
    pytest.param(hn("s0", node(exactMatch={"name": "a"}), node(labelMatch="rack=r1")),
                 ['spec.members[1].selector.labelMatch: Invalid value: "rack=r1": must be of type object'],
                 id="label-not-object"),
]


@pytest.mark.parametrize("obj,expected", BAD)
def test_bad_hypernodes_are_refused_with_upstream_messages(obj: Obj, expected: list[str]) -> None:
    assert refusal(obj) == expected


def test_status_is_dropped_on_create_and_the_kind_is_cluster_scoped() -> None:
    out = admit.admit(Op.CREATE, kinds.HYPERNODE, hn("s0", node(exactMatch={"name": "a"}), status={"nodeCount": 3}),
                      None, VIEW)
    assert out is not None and "status" not in out
    assert kinds.by_resource_name("hn") is kinds.HYPERNODE and not kinds.HYPERNODE.namespaced
    assert kinds.lookup("topology.volcano.sh/v1alpha1", "HyperNode") is kinds.HYPERNODE
