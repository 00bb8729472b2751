"""admission/common.py's shared reads: the items of an array of objects (`objects_in`), and the three checks
that use it (a Service's status conditions and load-balancer ingress, a PodGroup's subGroupPolicy) giving the
same messages, in the items' order."""
from __future__ import annotations

import pytest

from vclite.admission import common, podgroup, statuswrites
from vclite.lib import errors


def texts(errs):
    return [f"{e.path}: {e.message}" for e in errs]


@pytest.mark.parametrize("value, items, problems", [
    pytest.param(None, [], [], id="absent"),
    pytest.param([], [], [], id="empty"),
    pytest.param({"a": 1}, [], ['p: Invalid value: {"a": 1}: must be of type array'], id="no-array"),
    pytest.param("x", [], ['p: Invalid value: "x": must be of type array'], id="a-string"),
    pytest.param([{"a": 1}, 5, {"b": 2}, "s", None],
                 [("p[0]", {"a": 1}), ("p[2]", {"b": 2})],
                 ["p[1]: Invalid value: 5: must be of type object", 'p[3]: Invalid value: "s": must be of type object',
                  "p[4]: Invalid value: null: must be of type object"], id="mixed"),
])
def test_objects_in_gives_the_objects_and_a_type_error_for_the_rest(value, items, problems):
    errs: list[errors.FieldError] = []
    assert list(common.objects_in(value, "p", errs)) == items
    assert texts(errs) == problems


def test_the_type_errors_come_in_the_items_order_with_the_callers_own():
    errs: list[errors.FieldError] = []
    for at, item in common.objects_in([{"ok": 1}, 7, {"ok": 2}], "p", errs):
        errs.append(errors.FieldError(at, f"own {item['ok']}"))
    assert texts(errs) == ["p[0]: own 1", "p[1]: Invalid value: 7: must be of type object", "p[2]: own 2"]


@pytest.mark.parametrize("check, want", [
    pytest.param(lambda: statuswrites.condition_shapes([{"type": 1}, "x"], "status.conditions"),
                 ["status.conditions[0].type: Invalid value: 1: must be of type string",
                  'status.conditions[1]: Invalid value: "x": must be of type object'], id="service-conditions"),
    pytest.param(lambda: statuswrites.condition_shapes("x", "status.conditions"),
                 ['status.conditions: Invalid value: "x": must be of type array'], id="conditions-no-array"),
    pytest.param(lambda: statuswrites._load_balancer({"spec": {"type": "LoadBalancer"}}, {"loadBalancer": {
        "ingress": [3, {"ip": "x"}]}}),
        ["status.loadBalancer.ingress[0]: Invalid value: 3: must be of type object",
         'status.loadBalancer.ingress[1].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or '
         "2001:db8::ffff)"], id="ingress"),
    pytest.param(lambda: statuswrites._load_balancer({"spec": {"type": "ClusterIP"}}, {"loadBalancer": {
        "ingress": [3]}}), ["status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is "
                            "'LoadBalancer'"], id="ingress-not-a-load-balancer"),
    pytest.param(lambda: statuswrites._load_balancer({"spec": {"type": "ClusterIP"}}, {"loadBalancer": {
        "ingress": "a"}}), ['status.loadBalancer.ingress: Invalid value: "a": must be of type array'],
        id="ingress-no-array"),
    pytest.param(lambda: statuswrites._load_balancer({"spec": {"type": "ClusterIP"}}, {"loadBalancer": {
        "ingress": []}}), [], id="ingress-empty-on-a-cluster-ip"),
    pytest.param(lambda: podgroup._sub_group_policies(["a", {"name": "n", "networkTopology": {
        "mode": "hard", "highestTierAllowed": 1, "highestTierName": "t"}}]),
        ['spec.subGroupPolicy[0]: Invalid value: "a": must be of type object',
         "spec.subGroupPolicy[1].networkTopology: in subGroupPolicy 'n': must not specify 'highestTierAllowed' and "
         "'highestTierName' in networkTopology simultaneously"], id="sub-group-policy"),
    pytest.param(lambda: podgroup._sub_group_policies({"a": 1}),
                 ['spec.subGroupPolicy: Invalid value: {"a": 1}: must be of type array'], id="policies-no-array"),
])
def test_the_checks_over_arrays_of_objects_keep_their_messages(check, want):
    assert texts(check()) == want
