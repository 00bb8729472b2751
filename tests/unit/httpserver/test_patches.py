"""Patch application: JSON patch, strategic merge, server-side apply with field ownership."""
import pytest

from vclite.httpserver import patches
from vclite.httpserver import status as status_mod
from vclite.lib import errors

DOC = {"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"list": [1, 2, 3], "m": {"k": "v"}}}


@pytest.mark.parametrize("ops, expected_spec", [
    pytest.param([{"op": "add", "path": "/spec/n", "value": 5}], {"list": [1, 2, 3], "m": {"k": "v"}, "n": 5},
                 id="add-field"),
    pytest.param([{"op": "add", "path": "/spec/list/-", "value": 4}], {"list": [1, 2, 3, 4], "m": {"k": "v"}},
                 id="append"),
    pytest.param([{"op": "add", "path": "/spec/list/0", "value": 0}], {"list": [0, 1, 2, 3], "m": {"k": "v"}},
                 id="insert"),
    pytest.param([{"op": "remove", "path": "/spec/list/1"}], {"list": [1, 3], "m": {"k": "v"}}, id="remove-item"),
    pytest.param([{"op": "replace", "path": "/spec/m/k", "value": "w"}], {"list": [1, 2, 3], "m": {"k": "w"}},
                 id="replace"),
    pytest.param([{"op": "move", "from": "/spec/m", "path": "/spec/moved"}], {"list": [1, 2, 3], "moved": {"k": "v"}},
                 id="move"),
    pytest.param([{"op": "copy", "from": "/spec/m/k", "path": "/spec/c"}], {"list": [1, 2, 3], "m": {"k": "v"}, "c": "v"},
                 id="copy"),
    pytest.param([{"op": "test", "path": "/spec/m/k", "value": "v"}, {"op": "remove", "path": "/spec/m"}],
                 {"list": [1, 2, 3]}, id="test-passes"),
    pytest.param([{"op": "add", "path": "/spec/a~1b", "value": 1}], {"list": [1, 2, 3], "m": {"k": "v"}, "a/b": 1},
                 id="escaped-pointer"),
])
def test_json_patch(ops, expected_spec):
    out = patches.json_patch(DOC, ops)
    assert out["spec"] == expected_spec
    assert DOC["spec"] == {"list": [1, 2, 3], "m": {"k": "v"}}  # never mutates its argument


@pytest.mark.parametrize("ops, error, words", [
    pytest.param([{"op": "test", "path": "/spec/m/k", "value": "other"}], status_mod.InvalidPatch,
                 "testing value /spec/m/k failed: test failed", id="test-fails"),
    pytest.param([{"op": "remove", "path": "/spec/nope"}], status_mod.InvalidPatch,
                 "remove operation does not apply: path /spec/nope does not exist", id="remove-missing"),
    pytest.param([{"op": "replace", "path": "/spec/nope", "value": 1}], status_mod.InvalidPatch,
                 "replace operation does not apply: path /spec/nope does not exist", id="replace-missing"),
    pytest.param([{"op": "add", "path": "/spec/list/9", "value": 1}], status_mod.InvalidPatch,
                 "add operation does not apply: array index 9 out of range", id="index-out-of-range"),
    pytest.param([{"op": "replace", "path": "/spec/list/²", "value": 1}], status_mod.InvalidPatch,
                 "replace operation does not apply: invalid array index '²'", id="index-not-ascii-digits"),
    pytest.param([{"op": "add", "path": "/nope/deeper", "value": 1}], status_mod.InvalidPatch,
                 "add operation does not apply: path /nope/deeper does not exist", id="missing-parent"),
    pytest.param([{"op": "frobnicate", "path": "/spec"}], errors.BadRequest, "unknown JSON patch operation",
                 id="unknown-op"),
    pytest.param([{"op": "add", "path": "/spec/x"}], errors.BadRequest, "needs a value", id="add-without-value"),
    pytest.param({"op": "add"}, errors.BadRequest, "must be a list", id="not-a-list"),
    pytest.param([{"op": "add", "path": "spec", "value": 1}], errors.BadRequest, "invalid JSON pointer",
                 id="bad-pointer"),
    pytest.param([{"op": "replace", "path": "", "value": [1]}], status_mod.InvalidPatch,
                 "the patched document is not an object", id="result-not-object"),
    # bounds: a shallow patch must not build a document no body could carry, nor block the server
    pytest.param([{"op": "add", "path": "/spec/d" + "/x" * i, "value": {}} for i in range(120)],
                 status_mod.InvalidPatch, "the patched document is nested deeper than 100 levels",
                 id="adds-nesting-past-the-body-limit"),
    pytest.param([{"op": "copy", "from": "/spec", "path": f"/spec/c{i}"} for i in range(40)], status_mod.InvalidPatch,
                 "copy operation does not apply: Unable to complete the copy, the accumulated size increase of copy "
                 "is 4718574, exceeding the limit 3145728", id="copies-doubling-the-document"),
    pytest.param([{"op": "test", "path": "/spec", "value": {}}] * 10001, status_mod.TooLarge,
                 "The allowed maximum operations in a JSON patch is 10000, got 10001", id="too-many-operations"),
])
def test_json_patch_errors(ops, error, words):
    with pytest.raises(error) as caught:
        patches.json_patch(DOC, ops)
    assert caught.value.message == words if error is status_mod.InvalidPatch else words in caught.value.message


def test_a_patch_that_does_not_apply_is_kubernetes_generic_422():
    """As the apiserver answers it: kubectl prints `The request is invalid: : <the cause>`."""
    st = status_mod.from_error(status_mod.InvalidPatch("testing value /spec/w failed: test failed"))
    assert (st["code"], st["reason"], st["message"]) == (
        422, "Invalid", "the server rejected our request due to an error in our request")
    assert st["details"] == {"causes": [{"reason": "UnexpectedServerResponse",
                                         "message": "testing value /spec/w failed: test failed"}]}


POD = {"spec": {"containers": [{"name": "a", "image": "i1", "command": ["x"]}, {"name": "b", "image": "i2"}]},
       "metadata": {"finalizers": ["f1"]}}


@pytest.mark.parametrize("patch, merge_keys, expected", [
    pytest.param({"spec": {"containers": [{"name": "a", "image": "new"}]}}, True,
                 [{"name": "a", "image": "new", "command": ["x"]}, {"name": "b", "image": "i2"}],
                 id="merge-by-name"),
    pytest.param({"spec": {"containers": [{"name": "c", "image": "i3"}]}}, True,
                 [{"name": "a", "image": "i1", "command": ["x"]}, {"name": "b", "image": "i2"}, {"name": "c", "image": "i3"}],
                 id="new-item-appended"),
    pytest.param({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}, True, [{"name": "b", "image": "i2"}],
                 id="delete-directive"),
    pytest.param({"spec": {"$setElementOrder/containers": [{"name": "b"}], "containers": [{"name": "b", "image": "x"}]}},
                 True, [{"name": "a", "image": "i1", "command": ["x"]}, {"name": "b", "image": "x"}],
                 id="order-hint-ignored"),
    pytest.param({"spec": {"containers": [{"name": "a", "image": "new"}]}}, False, [{"name": "a", "image": "new"}],
                 id="custom-resource-replaces-lists"),
])
def test_strategic_merge(patch, merge_keys, expected):
    assert patches.strategic_merge(POD, patch, merge_keys)["spec"]["containers"] == expected


def test_strategic_merge_finalizers_are_a_set_and_replace_directive():
    out = patches.strategic_merge(POD, {"metadata": {"finalizers": ["f1", "f2"]}})
    assert out["metadata"]["finalizers"] == ["f1", "f2"]
    out = patches.strategic_merge(POD, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}})
    assert out["metadata"]["finalizers"] == []
    out = patches.strategic_merge(POD, {"spec": {"$patch": "replace", "x": 1}})
    assert out["spec"] == {"x": 1}


NOW = "2026-01-01T00:00:00Z"
CFG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
       "data": {"a": "1", "b": "2"}}


def owners(obj):
    return {e["manager"]: patches.decode_fields(e["fieldsV1"]) for e in obj["metadata"]["managedFields"]}


def test_apply_creates_with_ownership():
    out = patches.apply(None, CFG, "kubectl", False, NOW)
    assert out["data"] == {"a": "1", "b": "2"} and out["metadata"]["name"] == "c"
    assert owners(out) == {"kubectl": {("data", "a"), ("data", "b")}}
    assert out["metadata"]["managedFields"][0]["operation"] == "Apply"


def test_apply_removes_fields_the_manager_dropped_and_keeps_others():
    current = patches.apply(None, CFG, "kubectl", False, NOW)
    current["data"]["extra"] = "set by someone else"
    out = patches.apply(current, {**CFG, "data": {"a": "1"}}, "kubectl", False, NOW)
    assert out["data"] == {"a": "1", "extra": "set by someone else"}


def test_apply_is_idempotent():
    once = patches.apply(None, CFG, "kubectl", False, NOW)
    assert patches.apply(once, CFG, "kubectl", False, NOW) == once


def test_apply_conflict_with_another_manager_and_force():
    current = patches.apply(None, CFG, "alice", False, NOW)
    with pytest.raises(status_mod.ApplyConflict) as exc:
        patches.apply(current, {**CFG, "data": {"a": "changed"}}, "bob", False, NOW)
    assert exc.value.conflicts == [("alice", ".data.a")] and exc.value.code == 409
    forced = patches.apply(current, {**CFG, "data": {"a": "changed"}}, "bob", True, NOW)
    assert forced["data"]["a"] == "changed"
    assert owners(forced) == {"alice": {("data", "b")}, "bob": {("data", "a")}}


def test_apply_same_value_is_shared_not_a_conflict():
    current = patches.apply(None, CFG, "alice", False, NOW)
    out = patches.apply(current, {**CFG, "data": {"a": "1"}}, "bob", False, NOW)
    assert owners(out)["bob"] == {("data", "a")}
    # alice drops `a` but bob still owns it: it stays
    out = patches.apply(out, {**CFG, "data": {"b": "2"}}, "alice", False, NOW)
    assert out["data"] == {"a": "1", "b": "2"}


def test_apply_annotation_manager_does_not_touch_spec():
    # kubectl apply --server-side: one apply for the object, one for the last-applied annotation
    current = patches.apply(None, CFG, "kubectl", False, NOW)
    ann = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "namespace": "default", "annotations": {"last": "x"}}}
    out = patches.apply(current, ann, "kubectl-last-applied", False, NOW)
    assert out["data"] == CFG["data"] and out["metadata"]["annotations"] == {"last": "x"}
    again = patches.apply(out, CFG, "kubectl", False, NOW)
    assert again["metadata"]["annotations"] == {"last": "x"}


def test_apply_ignores_status_on_the_main_resource_and_identity_fields():
    cfg = {**CFG, "status": {"x": 1}, "metadata": {**CFG["metadata"], "uid": "u", "resourceVersion": "3"}}
    out = patches.apply(None, cfg, "kubectl", False, NOW)
    assert "status" not in out and "uid" not in out["metadata"] and "resourceVersion" not in out["metadata"]


def test_apply_needs_a_field_manager():
    with pytest.raises(errors.BadRequest):
        patches.apply(None, CFG, "", False, NOW)


@pytest.mark.parametrize("paths", [
    pytest.param({("spec", "a"), ("spec", "b", "c")}, id="nested"),
    pytest.param({("metadata", "labels", "app.kubernetes.io/name")}, id="dotted-key"),
    pytest.param(set(), id="empty"),
])
def test_fields_round_trip(paths):
    assert patches.decode_fields(patches.encode_fields(paths)) == paths


def test_a_services_ports_merge_by_port_and_a_containers_by_container_port():
    svc = {"spec": {"ports": [{"name": "a", "port": 80, "targetPort": 8080}, {"name": "b", "port": 81}]}}
    out = patches.strategic_merge(svc, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}})
    assert out["spec"]["ports"] == [{"name": "a", "port": 80, "targetPort": 9090}, {"name": "b", "port": 81}]
    pod = {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "x"}]}]}}
    out = patches.strategic_merge(pod, {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80,
                                                                                        "protocol": "UDP"}]}]}})
    assert out["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "name": "x", "protocol": "UDP"}]


def _updaters(obj):
    return {e["manager"]: patches.decode_fields(e["fieldsV1"]) for e in obj["metadata"]["managedFields"]
            if e["operation"] == "Update"}


def test_a_write_that_is_not_an_apply_owns_what_it_set_and_an_apply_conflicts_with_it():
    created = patches.record_update(None, CFG, "kubectl-create", NOW)
    assert _updaters(created) == {"kubectl-create": {("data", "a"), ("data", "b")}}
    assert created["metadata"]["managedFields"][0]["apiVersion"] == "v1"
    with pytest.raises(status_mod.ApplyConflict) as exc:
        patches.apply(created, {**CFG, "data": {"a": "2"}}, "kubectl", False, NOW)
    assert exc.value.conflicts == [('kubectl-create" using v1', ".data.a")]
    assert str(exc.value) == 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a'
    same = patches.apply(created, {**CFG, "data": {"a": "1"}}, "kubectl", False, NOW)   # (the same value: shared)
    assert _updaters(same) == {"kubectl-create": {("data", "a"), ("data", "b")}} and owners(same)["kubectl"] == {
        ("data", "a")}
    forced = patches.apply(created, {**CFG, "data": {"a": "2"}}, "kubectl", True, NOW)
    assert _updaters(forced) == {"kubectl-create": {("data", "b")}} and owners(forced)["kubectl"] == {("data", "a")}


def test_an_update_takes_what_it_changed_from_every_other_manager():
    applied = patches.apply(None, CFG, "kubectl", False, NOW)
    edited = patches.record_update(applied, {**applied, "data": {"a": "9", "b": "2"}}, "kubectl-edit", NOW)
    assert _updaters(edited) == {"kubectl-edit": {("data", "a")}} and owners(edited)["kubectl"] == {("data", "b")}
    again = patches.record_update(edited, {**edited, "data": {"b": "2"}}, "kubectl-edit", NOW)   # (a removed)
    assert "kubectl-edit" not in _updaters(again)


def test_an_apply_that_leaves_out_only_server_defaults_in_a_list_is_no_conflict():
    """After kubectl apply (client side) of a Service, the same configuration applied server side
    does not conflict over the ports the server defaulted (protocol, targetPort)."""
    config = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
              "spec": {"ports": [{"name": "http", "port": 80}]}}
    stored = patches.record_update(None, config, "kubectl-client-side-apply", NOW)
    stored["spec"]["ports"] = [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}]   # (defaults)
    out = patches.apply(stored, config, "kubectl", False, NOW)
    assert owners(out) == {"kubectl-client-side-apply": {("spec", "ports")}, "kubectl": {("spec", "ports")}}
    with pytest.raises(status_mod.ApplyConflict):   # (a value that differs still conflicts)
        patches.apply(stored, {**config, "spec": {"ports": [{"name": "http", "port": 81}]}}, "kubectl", False, NOW)
