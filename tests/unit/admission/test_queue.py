"""Queue admission: Volcano's queue webhook (pkg/webhooks/admission/queues) defaults, checks and delete
guard; the expected messages are those of Volcano's validate_queue_test.go where it has a case."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from vclite.admission import admit, base
from vclite.api import kinds, meta
from vclite.apiserver import inprocess
from vclite.lib import clock, errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]


def q(name: str = "q", status: Obj | None = None, annotations: dict[str, str] | None = None, **spec: Any) -> Obj:
    obj: Obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                "spec": spec}
    if annotations:
        obj["metadata"]["annotations"] = annotations
    if status is not None:
        obj["status"] = status
    return obj


VIEW = views.default_view(views.queue("parent"), views.queue("c1", parent="parent"),
                          views.queue("c2", parent="parent"), views.queue("busy"), views.queue("idle"),
                          views.podgroup("pg1", "busy"), views.podgroup("pg2", "busy", namespace="team"))


def create(obj: Obj) -> Obj | None:
    return admit.admit(Op.CREATE, kinds.QUEUE, obj, None, VIEW)


def refusal(op: Op, new: Obj, old: Obj | None = None) -> list[str]:
    try:
        admit.admit(op, kinds.QUEUE, new, old, VIEW)
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


DEFAULT_CASES = [
    pytest.param(q(), {"weight": 1, "reclaimable": True}, None, id="weight-and-reclaimable"),
    pytest.param(q() | {"spec": None}, {"weight": 1, "reclaimable": True}, None, id="no-spec"),
    pytest.param(q(weight=0), {"weight": 1, "reclaimable": True}, None, id="weight-0-becomes-1"),
    pytest.param(q(weight=4, reclaimable=False), {"weight": 4, "reclaimable": False}, None, id="explicit-kept"),
    pytest.param(q(annotations={"volcano.sh/hierarchy": "sci/dev", "volcano.sh/hierarchy-weights": "2/3"}),
                 {"weight": 1, "reclaimable": True},
                 {"volcano.sh/hierarchy": "root/sci/dev", "volcano.sh/hierarchy-weights": "1/2/3"},
                 id="legacy-hierarchy-rooted"),
    pytest.param(q(annotations={"volcano.sh/hierarchy": "root/sci", "volcano.sh/hierarchy-weights": "1/2"}),
                 {"weight": 1, "reclaimable": True},
                 {"volcano.sh/hierarchy": "root/sci", "volcano.sh/hierarchy-weights": "1/2"},
                 id="legacy-hierarchy-already-rooted"),
]


@pytest.mark.parametrize("obj, spec, annotations", DEFAULT_CASES)
def test_create_defaults(obj: Obj, spec: Obj, annotations: dict[str, str] | None) -> None:
    out = create(obj)
    assert out["spec"] == spec
    assert out["metadata"].get("annotations") == annotations


def test_update_adds_no_defaults() -> None:
    old = create(q())
    new = copy.deepcopy(old)
    del new["spec"]["reclaimable"]
    assert "reclaimable" not in admit.admit(Op.UPDATE, kinds.QUEUE, new, old, VIEW)["spec"]


REJECT_CASES = [
    pytest.param(Op.CREATE, q(weight=-1), None,
                 ["spec.weight: Invalid value: -1: should be greater than or equal to 1"], id="weight-negative"),
    pytest.param(Op.UPDATE, q(weight=0), q(weight=1),
                 ["spec.weight: Invalid value: 0: should be greater than or equal to 1"], id="update-weight-0"),
    pytest.param(Op.CREATE, q(weight=70000), None,
                 ["spec.weight: Invalid value: 70000: should be less than or equal to 65535"], id="weight-too-big"),
    pytest.param(Op.CREATE, q(weight="2"), None, ['spec.weight: Invalid value: "2": must be of type integer'],
                 id="weight-not-integer"),
    pytest.param(Op.CREATE, q(priority=-1), None,
                 ["spec.priority: Invalid value: -1: should be greater than or equal to 0"], id="priority-negative"),
    pytest.param(Op.CREATE, q(status={"state": "Paused"}), None,
                 ['status.state: Invalid value: "Paused": queue state must be in [Open Closed]'], id="state-unknown"),
    pytest.param(Op.CREATE, q(state="Closing"), None,
                 ['spec.state: Invalid value: "Closing": queue state must be in [Open Closed]'], id="spec-state-unknown"),
    pytest.param(Op.CREATE, q(capability={"cpu": "-10"}), None,
                 ['spec.capability.cpu: Invalid value: "-10": must be greater than or equal to 0'],
                 id="capability-negative"),
    pytest.param(Op.CREATE, q(deserved={"cpu": "-5"}), None,
                 ['spec.deserved.cpu: Invalid value: "-5": must be greater than or equal to 0'], id="deserved-negative"),
    pytest.param(Op.CREATE, q(guarantee={"resource": {"cpu": "-2"}}), None,
                 # (Volcano also reports `deserved[cpu] must be >= guarantee[cpu]=-2`; a bad value is reported once)
                 ['spec.guarantee.resource.cpu: Invalid value: "-2": must be greater than or equal to 0'],
                 id="guarantee-negative"),
    pytest.param(Op.CREATE, q(guarantee={"resource": {"cpu": "1"}}), None,
                 ['spec.deserved.cpu: Invalid value: "<nil>": deserved[cpu] must be >= guarantee[cpu]=1'],
                 id="guarantee-without-deserved"),
    pytest.param(Op.CREATE, q(deserved={"cpu": "2"}, capability={"cpu": "1"}), None,
                 ['spec.deserved.cpu: Invalid value: "2": deserved[cpu]=2 must be <= capability[cpu]=1'],
                 id="deserved-above-capability"),
    pytest.param(Op.CREATE, q(deserved={"memory": "1Gi"}, guarantee={"resource": {"memory": "3Gi"}}), None,
                 ['spec.deserved.memory: Invalid value: "1Gi": deserved[memory]=1Gi must be >= guarantee[memory]=3Gi'],
                 id="deserved-below-guarantee"),
    pytest.param(Op.CREATE, q(capability={"cpu": "ten"}), None,
                 ["spec.capability.cpu: invalid quantity \"ten\": quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"], id="capability-unparseable"),
    pytest.param(Op.CREATE, q("self", parent="self"), None, ["spec.parent: queue self cannot use itself as parent"],
                 id="parent-self"),
    pytest.param(Op.CREATE, q(parent="ghost"), None,
                 ['spec.parent: failed to get parent queue of queue q: queues.scheduling.volcano.sh "ghost" not found'],
                 id="parent-missing"),
    pytest.param(Op.UPDATE, q(parent="ghost", weight=1), q(weight=1),
                 ['spec.parent: failed to get parent queue of queue q: queues.scheduling.volcano.sh "ghost" not found'],
                 id="update-parent-missing"),
    pytest.param(Op.CREATE, q() | {"metadata": {"name": "q", "namespace": "default"}}, None,
                 ["metadata.namespace: Forbidden: not allowed on this type"], id="namespace-on-cluster-scoped"),
    pytest.param(Op.CREATE, q("Team_A"), None,
                 ['metadata.name: Invalid value: "Team_A": a lowercase RFC 1123 subdomain must consist of lower case '
                  "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                  "'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"], id="name-invalid"),
    # spec.affinity as the CRD's structural schema types it (the nodegroup plugin reads these lists)
    pytest.param(Op.CREATE, q(affinity={"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "g1"}}),
                 None, ['spec.affinity.nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution: '
                        'Invalid value: "g1": must be of type array'], id="affinity-groups-not-a-list"),
    pytest.param(Op.CREATE, q(affinity={"nodeGroupAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": ["g1", 3]}}), None,
                 ['spec.affinity.nodeGroupAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[1]: '
                  'Invalid value: 3: must be of type string'], id="affinity-group-not-a-string"),
    pytest.param(Op.CREATE, q(affinity={"nodeGroupAffinity": ["g1"]}), None,
                 ["spec.affinity.nodeGroupAffinity: Invalid value: [\"g1\"]: must be of type object"],
                 id="affinity-rules-not-an-object"),
    pytest.param(Op.CREATE, q(affinity="g1"), None, ['spec.affinity: Invalid value: "g1": must be of type object'],
                 id="affinity-not-an-object"),
    # (an empty list was read as no spec: stored without a weight once the controller gave it its parent)
    pytest.param(Op.CREATE, {**q(), "spec": []}, None, ["spec: Invalid value: []: must be of type object"],
                 id="spec-an-empty-list"),
]


@pytest.mark.parametrize("op, new, old, expected", REJECT_CASES)
def test_rejects(op: Op, new: Obj, old: Obj | None, expected: list[str]) -> None:
    assert refusal(op, new, old) == expected


ACCEPT_CASES = [
    pytest.param(Op.CREATE, q(status={"state": "Closed"}), None, id="state-closed"),
    pytest.param(Op.CREATE, q(status={"state": "Open"}), None, id="state-open"),
    pytest.param(Op.UPDATE, q(weight=2, status={"state": "Closing"}), q(weight=1, status={"state": "Closing"}),
                 id="update-keeps-controller-state"),
    pytest.param(Op.CREATE, q(guarantee={"resource": {"cpu": "1"}}, deserved={"cpu": "1000m", "memory": "2Gi"},
                              capability={"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": 4}), None,
                 id="guarantee-le-deserved-le-capability"),
    pytest.param(Op.CREATE, q(deserved={"cpu": "4"}, capability={"memory": "1Gi"}), None,
                 id="deserved-beyond-unset-capability"),
    pytest.param(Op.CREATE, q(parent="parent"), None, id="parent-exists"),
    pytest.param(Op.CREATE, q(parent="root"), None, id="parent-root"),
    pytest.param(Op.UPDATE, q(weight=3, parent="gone"), q(weight=1, parent="gone"), id="update-unchanged-parent"),
    pytest.param(Op.UPDATE_STATUS, q(weight=-1, status={"state": "Unknown"}), q(weight=1), id="status-write"),
    pytest.param(Op.CREATE, q(affinity={"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["g1"],
                                                              "preferredDuringSchedulingIgnoredDuringExecution": []},
                                        "nodeGroupAntiAffinity": None}), None, id="affinity-lists-of-groups"),
]


@pytest.mark.parametrize("op, new, old", ACCEPT_CASES)
def test_accepts(op: Op, new: Obj, old: Obj | None) -> None:
    assert refusal(op, new, old) == []


DELETE_CASES = [
    pytest.param("default", "`default` queue can not be deleted", id="default"),
    pytest.param("root", "`root` queue can not be deleted", id="root"),
    pytest.param("parent", "queue parent can not be deleted because it has 2 child queues: c1, c2", id="has-children"),
    pytest.param("busy", "queue busy can not be deleted because it has 2 podgroups: default/pg1, team/pg2",
                 id="has-podgroups"),
    pytest.param("idle", None, id="empty-queue"),
    pytest.param("c1", None, id="leaf-child"),
]


@pytest.mark.parametrize("name, message", DELETE_CASES)
def test_delete(name: str, message: str | None) -> None:
    stored = VIEW.get(kinds.QUEUE, "", name)
    if message is None:
        assert admit.admit(Op.DELETE, kinds.QUEUE, None, stored, VIEW) is None
    else:
        with pytest.raises(errors.Forbidden) as info:
            admit.admit(Op.DELETE, kinds.QUEUE, None, stored, VIEW)
        assert info.value.message == message


@pytest.mark.parametrize("state", ["Open", "Closed", "Closing", "Unknown"])
def test_a_clusters_existing_queue_may_be_in_any_state(state):
    """A scheduler dry-run loads a cluster's state, where the queue controller writes Closing and
    Unknown through the status subresource, past the webhook's create check."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False, existing_state=True)
    assert client.create(q("qs", status={"state": state}))["status"]["state"] == state
    with pytest.raises(errors.Invalid) as info:
        client.create(q("bad", status={"state": "Paused"}))
    assert info.value.message == ('Queue "bad" is invalid: status.state: Unsupported value: '
                                  '"Paused": supported values: "Open", "Closed", "Closing", "Unknown"')


STATUS_ENUM = 'supported values: "Open", "Closed", "Closing", "Unknown"'


@pytest.mark.parametrize("status, problem", [
    pytest.param({"state": "Closing"}, None, id="closing"),
    pytest.param({"state": "Unknown"}, None, id="unknown"),
    pytest.param({}, None, id="no-state"),
    pytest.param({"state": "Bad"}, f'status.state: Unsupported value: "Bad": {STATUS_ENUM}', id="bad"),
    pytest.param({"state": ""}, f'status.state: Unsupported value: "": {STATUS_ENUM}', id="empty"),
    pytest.param({"state": 3}, 'status.state: Invalid value: 3: must be of type string', id="not-a-string"),
])
def test_a_status_write_takes_the_state_from_the_crds_enum(status, problem):
    """`/status` (kubectl patch --subresource=status, a controller's write): Volcano's webhook does not see it,
    the Queue CRD's schema does (enum Open, Closed, Closing, Unknown); nothing is stored when refused."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    client.create(q("qs"))
    stored = client.get(kinds.QUEUE, "", "qs")
    if problem is None:
        client.update_status({**stored, "status": status})
        return
    with pytest.raises(errors.Invalid) as info:
        client.update_status({**stored, "status": status})
    assert info.value.message == f'Queue "qs" is invalid: {problem}'
    assert client.get(kinds.QUEUE, "", "qs").get("status") == stored.get("status")


def test_an_update_keeps_the_stored_status_as_a_crd_with_a_status_subresource():
    """`kubectl apply`/`replace` of a Queue with `status.state: Bad`: kube-apiserver puts the stored status back
    before the webhook sees the object (PrepareForUpdate), so Volcano accepts it and the state does not change."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    client.create(q("qs", status={"state": "Closed"}))
    stored = client.get(kinds.QUEUE, "", "qs")
    updated = client.update({**stored, "spec": {**stored["spec"], "weight": 3}, "status": {"state": "Bad"}})
    assert (updated["spec"]["weight"], updated["status"]) == (3, {"state": "Closed"})


# ---- hierarchical queues (validate_queue.go validateHierarchicalQueue{,Resources}; messages from
# validate_queue_test.go where it has the case) ------------------------------------------------------------
def _tree(*extra: Obj) -> Any:
    return views.default_view(
        views.queue("parent-queue-resource-test", parent="root", capability={"cpu": "10", "memory": "20Gi"},
                    guarantee={"resource": {"cpu": "8", "memory": "16Gi"}}),
        views.queue("sibling-queue-resource-test", parent="parent-queue-resource-test",
                    capability={"cpu": "3", "memory": "6Gi"}, guarantee={"resource": {"cpu": "2", "memory": "4Gi"}}),
        views.queue("parent-queue-to-update", parent="root", capability={"cpu": "20", "memory": "40Gi"},
                    guarantee={"resource": {"cpu": "10", "memory": "20Gi"}}),
        views.queue("child-queue-a", parent="parent-queue-to-update", capability={"cpu": "12", "memory": "24Gi"},
                    guarantee={"resource": {"cpu": "6", "memory": "12Gi"}}),
        views.queue("child-queue-b", parent="parent-queue-to-update", capability={"cpu": "8", "memory": "16Gi"},
                    guarantee={"resource": {"cpu": "4", "memory": "8Gi"}}),
        views.queue("busy-leaf", parent="root") | {"status": {"allocated": {"pods": "1"}}},
        views.queue("d1", parent="root"), views.queue("d2", parent="d1"), views.queue("d3", parent="d2"),
        views.queue("d4", parent="d3"), views.queue("d5", parent="d4"),
        views.queue("parent-queue-empty-parent", parent="", capability={"cpu": "100", "memory": "100Gi"}),
        views.queue("child-of-empty-parent", parent="parent-queue-empty-parent",
                    capability={"cpu": "50", "memory": "50Gi"}), *extra)


def _refusal(op: Op, new: Obj, old: Obj | None = None) -> list[str]:
    try:
        admit.admit(op, kinds.QUEUE, new, old, _tree())
    except errors.Invalid as e:
        return [fe.detail if hasattr(fe, "detail") else str(fe) for fe in e.errors]
    return []


G48, G1020 = {"cpu": "4", "memory": "8Gi"}, {"cpu": "10", "memory": "20Gi"}
HIERARCHY_REJECT = [
    pytest.param(Op.CREATE, q("child-capability-exceeds-parent", parent="parent-queue-resource-test",
                              capability={"cpu": "20", "memory": "40Gi"}), None,
                 "queue child-capability-exceeds-parent capability[cpu]=20 exceeds its ancestor's capability=10",
                 id="child capability above the parent's"),
    pytest.param(Op.CREATE, q("siblings-guarantee-exceeds", parent="parent-queue-resource-test",
                              capability={"cpu": "7", "memory": "14Gi"}, deserved={"cpu": "7", "memory": "14Gi"},
                              guarantee={"resource": {"cpu": "7", "memory": "14Gi"}}), None,
                 "parent queue parent-queue-resource-test validation failed: sum of children's guarantee "
                 "(cpu 9000.00, memory 19327352832.00) exceeds parent's guarantee limit (cpu 8000.00, memory "
                 "17179869184.00)", id="siblings' guarantees above the parent's"),
    pytest.param(Op.UPDATE, q("parent-queue-to-update", parent="root", capability={"cpu": "10", "memory": "20Gi"},
                              guarantee={"resource": G1020}, deserved=G1020),
                 q("parent-queue-to-update", parent="root", capability={"cpu": "20", "memory": "40Gi"},
                   guarantee={"resource": G1020}, deserved=G1020),
                 "queue parent-queue-to-update capability[cpu]=10 is smaller than its descendants' max capability=12",
                 id="parent capability below a child's on update"),
    # validate_queue_test.go "Sum of children's guarantee exceeds parent guarantee on UPDATE" (children 6+4 here)
    pytest.param(Op.UPDATE, q("parent-queue-to-update", parent="root", capability={"cpu": "20", "memory": "40Gi"},
                              guarantee={"resource": {"cpu": "9", "memory": "18Gi"}},
                              deserved={"cpu": "20", "memory": "40Gi"}),
                 q("parent-queue-to-update", parent="root", capability={"cpu": "20", "memory": "40Gi"},
                   guarantee={"resource": G1020}, deserved={"cpu": "20", "memory": "40Gi"}),
                 "queue parent-queue-to-update validation failed: sum of children's guarantee (cpu 10000.00, memory "
                 "21474836480.00) exceeds parent's guarantee limit (cpu 9000.00, memory 19327352832.00)",
                 id="children's guarantees above the parent's on update"),
    # validate_queue_test.go "Update queue with empty parent - should validate child constraints"
    pytest.param(Op.UPDATE, q("parent-queue-empty-parent", parent="", weight=1,
                              capability={"cpu": "30", "memory": "30Gi"}),
                 q("parent-queue-empty-parent", parent="", weight=1, capability={"cpu": "100", "memory": "100Gi"}),
                 "queue parent-queue-empty-parent capability[cpu]=30 is smaller than its descendants' max capability=50",
                 id="update with an empty parent still checks the children"),
    pytest.param(Op.CREATE, q("leaf-of-busy", parent="busy-leaf"), None,
                 "queue busy-leaf cannot be the parent queue of queue leaf-of-busy because it has allocated Pods: 1",
                 id="a leaf with pods cannot become a parent"),
    pytest.param(Op.CREATE, q("d6", parent="d5"), None, "queue d6 exceeds the maximum allowed depth of 5",
                 id="too deep"),
    pytest.param(Op.UPDATE, q("root", capability={"cpu": "4"}), q("root"),
                 "root queue's resource attributes (capability, deserved, guarantee) cannot be modified",
                 id="root protected"),
    # vclite's own rule: Volcano's webhook lets an update loop the parents
    pytest.param(Op.UPDATE, q("d1", parent="d3"), q("d1", parent="root"),
                 "queue d1 cannot use d3 as parent: d3 is under d1, so the parents would loop (d1 -> d3 -> d2 -> d1)",
                 id="a parent below the queue"),
    pytest.param(Op.UPDATE, q("parent-queue-to-update", parent="child-queue-a"), q("parent-queue-to-update"),
                 "queue parent-queue-to-update cannot use child-queue-a as parent: child-queue-a is under "
                 "parent-queue-to-update, so the parents would loop (parent-queue-to-update -> child-queue-a -> "
                 "parent-queue-to-update)", id="its own child as parent"),
]


@pytest.mark.parametrize("op, new, old, message", HIERARCHY_REJECT)
def test_hierarchy_rejects(op: Op, new: Obj, old: Obj | None, message: str) -> None:
    assert any(message in m for m in _refusal(op, new, old)), _refusal(op, new, old)


@pytest.mark.parametrize("op, new, old", [
    pytest.param(Op.CREATE, q("fits", parent="parent-queue-resource-test", capability={"cpu": "5"}), None,
                 id="within the parent"),
    pytest.param(Op.CREATE, q("d5b", parent="d4"), None, id="depth 5"),
    pytest.param(Op.UPDATE, q("d3", parent="d1"), q("d3", parent="d2"), id="moved up its own branch: no loop"),
    pytest.param(Op.UPDATE, q("root", weight=2), q("root"), id="root weight may change"),
    pytest.param(Op.UPDATE, q("child-queue-b", parent="parent-queue-to-update", weight=5, deserved=G48,
                              capability={"cpu": "8", "memory": "16Gi"}, guarantee={"resource": G48}),
                 q("child-queue-b", parent="parent-queue-to-update", capability={"cpu": "8", "memory": "16Gi"},
                   deserved=G48, guarantee={"resource": G48}), id="resources unchanged: not re-checked"),
])
def test_hierarchy_accepts(op: Op, new: Obj, old: Obj | None) -> None:
    assert _refusal(op, new, old) == []


# ---- legacy hierarchy annotations (validate_queue.go validateHierarchicalAttributes; rows and messages of
# validate_queue_test.go TestAdmitQueues) ------------------------------------------------------------------
H, HW = "volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"
ORDINARY = q("ordinary-hierarchical-queue", annotations={H: "root/node1/node2", HW: "1/2/3"}, weight=1)


def _annotated(hierarchy: str, weights: str, name: str = "hierarchy-weights-dont-match") -> Obj:
    return q(name, annotations={H: hierarchy, HW: weights}, weight=1)


H_AT, W_AT = "metadata.annotations[volcano.sh/hierarchy]: ", "metadata.annotations[volcano.sh/hierarchy-weights]: "


@pytest.mark.parametrize("op, new, expected", [
    pytest.param(Op.CREATE, _annotated("root/a/b", "1/2/3/4"),
                 [H_AT + 'Invalid value: "root/a/b": volcano.sh/hierarchy must have the same length '
                  'with volcano.sh/hierarchy-weights'], id="hierarchy-weights-dont-match"),
    pytest.param(Op.CREATE, _annotated("root/a/b", "1/-1/3"),
                 [W_AT + 'Invalid value: "1/-1/3": -1 in the 1/-1/3 must be larger than 0'],
                 id="weights-negative"),
    pytest.param(Op.CREATE, _annotated("root/a/b", "1/a/3"),
                 [W_AT + 'Invalid value: "1/a/3": a in the 1/a/3 is invalid number: '
                  'strconv.ParseFloat: parsing "a": invalid syntax'], id="weights-format-illegal"),
    pytest.param(Op.CREATE, _annotated("root/a", "1/0"),
                 [W_AT + 'Invalid value: "1/0": 0 in the 1/0 must be larger than 0'], id="weight-zero"),
    pytest.param(Op.CREATE, _annotated("root/a", "1/NaN"),
                 [W_AT + 'Invalid value: "1/NaN": NaN in the 1/NaN must be larger than 0'],
                 id="weight-nan-vclite-refuses"),
    pytest.param(Op.CREATE, _annotated("root/a", "1/1e999"),
                 [W_AT + 'Invalid value: "1/1e999": 1e999 in the 1/1e999 is invalid number: '
                  'strconv.ParseFloat: parsing "1e999": value out of range'], id="weight-out-of-range"),
    pytest.param(Op.CREATE, _annotated("root/a", "1/ 2"),
                 [W_AT + 'Invalid value: "1/ 2":  2 in the 1/ 2 is invalid number: '
                  'strconv.ParseFloat: parsing " 2": invalid syntax'], id="weight-with-space"),
    pytest.param(Op.CREATE, _annotated("root/node1", "1/4", "hierarchical-queue-in-sub-path-of-another-queue"),
                 [H_AT + 'Invalid value: "root/node1": root/node1 is not allowed to be in the sub path '
                  'of root/node1/node2 of queue ordinary-hierarchical-queue'], id="hierarchy-in-sub-path"),
    pytest.param(Op.CREATE, _annotated("node1", "4", "rooted-by-the-mutation-first"),
                 [H_AT + 'Invalid value: "root/node1": root/node1 is not allowed to be in the sub path '
                  'of root/node1/node2 of queue ordinary-hierarchical-queue'], id="checked-after-rooting"),
    pytest.param(Op.UPDATE, _annotated("root/a/b", "1/2"),
                 [H_AT + 'Invalid value: "root/a/b": volcano.sh/hierarchy must have the same length '
                  'with volcano.sh/hierarchy-weights'], id="update-checked-too"),
    pytest.param(Op.CREATE, _annotated("root/node", "1/4", "hierarchical-queue-with-name-that-is-substring"), [],
                 id="hierarchy-a-substring-of-another"),
    pytest.param(Op.CREATE, _annotated("root/node1/node2/x", "1/2/3/0.5", "deeper"), [], id="below-another"),
    pytest.param(Op.CREATE, _annotated("root/b", "1/0x1p-2", "hex-weight"), [], id="go-hex-float-weight"),
    pytest.param(Op.UPDATE, ORDINARY, [], id="a-queue-is-not-under-itself"),
])
def test_hierarchy_annotations(op: Op, new: Obj, expected: list[str]) -> None:
    view = views.default_view(ORDINARY)
    old = _annotated("root/a", "1/2", meta.name(new)) if op is Op.UPDATE else None
    try:
        admit.admit(op, kinds.QUEUE, copy.deepcopy(new), old, view)
    except errors.Invalid as e:
        assert [str(fe) for fe in e.errors] == expected
    else:
        assert expected == []


# ---- validate_queue_test.go TestValidateChildAgainstAncestorForCapability: root ← ancestor-gp (cpu 100,
# memory 100Gi, gpu 8) ← ancestor-p (cpu 50, memory 50Gi) and ancestor-p-nocap; each child created under them ----
GPU = "nvidia.com/gpu"
_ANCESTORS = (views.queue("ancestor-gp", parent="root", capability={"cpu": "100", "memory": "100Gi", GPU: "8"}),
              views.queue("ancestor-p", parent="ancestor-gp", capability={"cpu": "50", "memory": "50Gi"}),
              views.queue("ancestor-p-nocap", parent="ancestor-gp"))
_EXCEEDS = "exceeds its ancestor's capability"


@pytest.mark.parametrize("child, message", [
    pytest.param(q("child-exceed-cpu", parent="ancestor-p", weight=1, capability={"cpu": "60"}),
                 "queue child-exceed-cpu capability[cpu]=60 exceeds its ancestor's capability=50",
                 id="Child CPU exceeds direct parent capability"),
    pytest.param(q("child-exceed-mem", parent="ancestor-p", weight=1, capability={"memory": "55Gi"}), _EXCEEDS,
                 id="Child memory exceeds grandparent capability (skips parent with lower limit)"),
    pytest.param(q("child-exceed-gpu", parent="ancestor-p", weight=1, capability={GPU: "10"}), _EXCEEDS,
                 id="Child GPU exceeds grandparent capability (parent has no GPU)"),
    pytest.param(q("child-within-limits", parent="ancestor-p", weight=1,
                   capability={"cpu": "40", "memory": "40Gi", GPU: "4"}), None, id="Child within all ancestor limits"),
    pytest.param(q("child-no-cap", parent="ancestor-p", weight=1), None, id="Child without capability should pass"),
    pytest.param(q("child-under-nocap", parent="ancestor-p-nocap", weight=1, capability={"cpu": "200"}),
                 "queue child-under-nocap capability[cpu]=200 exceeds its ancestor's capability=100",
                 id="Child under parent without capability - checks grandparent"),
    pytest.param(q("child-under-nocap-ok", parent="ancestor-p-nocap", weight=1, capability={"cpu": "80"}), None,
                 id="Child under parent without capability - within grandparent limits"),
])
def test_upstream_child_against_ancestor_capability(child: Obj, message: str | None) -> None:
    _create_admitted_or_refused(child, views.default_view(*_ANCESTORS), message)


# ---- validate_queue_test.go TestValidateChildrenConstraintsForCapability: the parent admitted (created) with
# the listed children (and their subtrees) in the store --------------------------------------------------
_PARENT_A = q("vc-parent-a", parent="root", weight=1, capability={"cpu": "20", "memory": "20Gi", GPU: "4"},
              guarantee={"resource": {"cpu": "20", "memory": "20Gi"}}, deserved={"cpu": "20", "memory": "20Gi"})
_PARENT_B = q("vc-parent-b", parent="root", weight=1, capability={"cpu": "50", "memory": "50Gi"},
              guarantee={"resource": {"cpu": "50", "memory": "50Gi"}}, deserved={"cpu": "50", "memory": "50Gi"})
_SMALLER = "is smaller than its descendants' max capability"


@pytest.mark.parametrize("parent, children, message", [
    pytest.param(_PARENT_A, [views.queue("vc-child-a1", parent="vc-parent-a", capability={"memory": "15Gi"}),
                             views.queue("vc-grandchild-a1-1", parent="vc-child-a1", capability={"cpu": "25"}),
                             views.queue("vc-child-a2", parent="vc-parent-a",
                                         capability={"cpu": "10", "memory": "10Gi", GPU: "3"})],
                 "queue vc-parent-a capability[cpu]=20 is smaller than its descendants' max capability=25",
                 id="Grandchild CPU exceeds parent capability via subtree (child has no CPU cap)"),
    pytest.param(_PARENT_B, [views.queue("vc-child-b1", parent="vc-parent-b", capability={"cpu": "30"}),
                             views.queue("vc-child-b2", parent="vc-parent-b", capability={"cpu": "20"})], None,
                 id="All children within parent capability"),
    pytest.param(q("vc-parent-c", parent="root", weight=1),
                 [views.queue("vc-child-c1", parent="vc-parent-c", capability={"cpu": "100"})], None,
                 id="Parent without capability skips capability check"),
    pytest.param(_PARENT_B, [], None, id="Parent with no children"),
    pytest.param(_PARENT_A, [views.queue("child-gpu-ok", parent="vc-parent-a", capability={GPU: "3"})], None,
                 id="Child GPU capability within parent GPU limit"),
    pytest.param(_PARENT_A, [views.queue("child-gpu-exceed", parent="vc-parent-a", capability={GPU: "5"})], _SMALLER,
                 id="Child GPU capability exceeds parent GPU limit via subtree"),
])
def test_upstream_children_constraints_capability(parent: Obj, children: list[Obj], message: str | None) -> None:
    _create_admitted_or_refused(parent, views.default_view(*children), message)


def _create_admitted_or_refused(queue: Obj, view, message: str | None) -> None:
    """Admit `queue`'s create in `view`: refused with a field error containing `message`, or (None) admitted."""
    try:
        admit.admit(Op.CREATE, kinds.QUEUE, queue, None, view)
    except errors.Invalid as e:
        assert message is not None and any(message in fe.message for fe in e.errors), e.errors
        return
    assert message is None, f"expected a refusal containing {message!r}"


@pytest.mark.parametrize("chain, max_depth, accepted", [
    pytest.param(["q1", "q2", "q3"], 5, True, id="Depth 3 is allowed when maxDepth is 5"),
    pytest.param(["q1", "q2", "q3"], 3, True, id="Depth 3 is allowed when maxDepth is 3"),
    pytest.param(["q1", "q2", "q3"], 2, False, id="Depth 3 is rejected when maxDepth is 2"),
    pytest.param(["a1", "a2", "a3", "a4", "a5"], None, True, id="depth 5 allowed by default"),
    pytest.param(["a1", "a2", "a3", "a4", "a5", "a6"], None, False, id="depth 6 refused by default"),
    pytest.param(["a1"], 1, True, id="right under root with maxDepth 1"),
    pytest.param(["a1", "a2"], 1, False, id="depth 2 refused with maxDepth 1"),
])
def test_upstream_queue_depth(chain: list[str], max_depth: int | None, accepted: bool) -> None:
    """validate_queue_test.go TestValidateQueueDepthDynamic (root → q1 → q2, q3 created under q2), its maxDepth
    the webhook's --max-queue-depth (`vcctl server --max-queue-depth`; None: the default, 5)."""
    view = views.default_view(*(views.queue(n, parent=p) for n, p in zip(chain[:-1], ["root", *chain[:-2]])))
    if max_depth is not None:
        view.webhook = base.WebhookConfig(max_queue_depth=max_depth)
    new = q(chain[-1], parent=chain[-2] if len(chain) > 1 else "root", weight=1)
    if accepted:
        assert admit.admit(Op.CREATE, kinds.QUEUE, new, None, view)
        return
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.CREATE, kinds.QUEUE, new, None, view)
    assert [e.message for e in info.value.errors] == [
        f"queue {chain[-1]} exceeds the maximum allowed depth of {max_depth or 5}"]


@pytest.mark.parametrize("check, allocated, refusal", [
    pytest.param(True, {"cpu": "2", "pods": "2"}, "queue busy cannot be deleted because it has allocated Pods: 2",
                 id="on-with-pods"),
    pytest.param(True, {"cpu": "0", "pods": "0"}, None, id="on-no-pods"),
    # (Quantity.Value() rounds a fraction up, and `!IsZero()` refuses any non-zero quantity)
    pytest.param(True, {"pods": "500m"}, "queue busy cannot be deleted because it has allocated Pods: 1",
                 id="on-half-a-pod-is-one"),
    pytest.param(True, {"pods": "1500m"}, "queue busy cannot be deleted because it has allocated Pods: 2",
                 id="on-a-pod-and-a-half-is-two"),
    pytest.param(True, {"pods": "1n"}, "queue busy cannot be deleted because it has allocated Pods: 1",
                 id="on-a-nano-pod-is-one"),
    pytest.param(True, {"pods": "-500m"}, "queue busy cannot be deleted because it has allocated Pods: -1",
                 id="on-negative-rounded-away-from-zero"),
    pytest.param(True, None, None, id="on-no-allocated"),
    pytest.param(False, {"pods": "2"}, None, id="off-by-default"),
])
def test_enable_queue_allocated_pods_check(check: bool, allocated: Obj | None, refusal: str | None) -> None:
    """validateQueueDeleting with --enable-queue-allocated-pods-check: the queue's status.allocated pods."""
    stored = views.queue("busy")
    if allocated is not None:
        stored["status"] = {"state": "Open", "allocated": allocated}
    view = views.default_view(stored)
    if check:
        view.webhook = base.WebhookConfig(queue_allocated_pods_check=True)
    if refusal is None:
        assert admit.admit(Op.DELETE, kinds.QUEUE, None, stored, view) is None
        return
    with pytest.raises(errors.Forbidden) as info:
        admit.admit(Op.DELETE, kinds.QUEUE, None, stored, view)
    assert info.value.message == refusal
