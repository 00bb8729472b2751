"""pods/binding: the pure rules (binding.py) and the in-process client's one-write bind."""
import pytest

from vclite.api import kinds
from vclite.apiserver import binding, inprocess
from vclite.lib import clock, errors

NOW = "2026-01-01T00:00:00Z"


def pod(node=None, deleting=False, conditions=None, annotations=None, scheduler=None):
    md = {"name": "p", "namespace": "default", "resourceVersion": "7"}
    if deleting:
        md["deletionTimestamp"] = NOW
    if annotations:
        md["annotations"] = annotations
    spec = {"containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    out = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    if conditions is not None:
        out["status"] = {"phase": "Pending", "conditions": conditions}
    return out


@pytest.mark.parametrize("before, node, annotations, want", [
    pytest.param(pod(), "n1", None,
                 {"node": "n1", "conditions": [("PodScheduled", "True")], "annotations": None}, id="fresh-pod"),
    pytest.param(pod(conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
                                 {"type": "Other", "status": "True"}]), "n2", None,
                 {"node": "n2", "conditions": [("Other", "True"), ("PodScheduled", "True")], "annotations": None},
                 id="replaces-an-unschedulable-condition"),
    pytest.param(pod(annotations={"a": "1"}), "n1", {"b": "2"},
                 {"node": "n1", "conditions": [("PodScheduled", "True")], "annotations": {"a": "1", "b": "2"}},
                 id="binding-annotations-added"),
])
def test_bound(before, node, annotations, want):
    after = binding.bound(before, node, NOW, annotations)
    assert after["spec"]["nodeName"] == want["node"]
    assert [(c["type"], c["status"]) for c in after["status"]["conditions"]] == want["conditions"]
    assert after["status"]["conditions"][-1]["lastTransitionTime"] == NOW
    assert after["metadata"].get("annotations") == (want["annotations"] or before["metadata"].get("annotations"))
    assert "nodeName" not in before["spec"] and before["metadata"].get("annotations") != {"a": "1", "b": "2"}


@pytest.mark.parametrize("before, node, error, message", [
    pytest.param(pod(node="n1"), "n2", errors.Conflict, 'pod p is already assigned to node "n1"', id="bound-elsewhere"),
    pytest.param(pod(node="n1"), "n1", errors.Conflict, "already assigned", id="bound-here-too"),
    pytest.param(pod(deleting=True), "n1", errors.Conflict, "being deleted, cannot be assigned", id="deleting"),
    pytest.param(pod(), "", errors.Invalid, "target.name", id="no-node"),
])
def test_bound_refusals(before, node, error, message):
    with pytest.raises(error, match=message):
        binding.bound(before, node, NOW)


@pytest.mark.parametrize("body, want", [
    pytest.param({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                  "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}, ("n1", {}), id="full"),
    pytest.param({"target": {"name": "n1"}, "metadata": {"annotations": {"x": "y"}}}, ("n1", {"x": "y"}),
                 id="kind-defaults-to-node"),
    pytest.param({"metadata": {"name": "q"}, "target": {"name": "n1"}}, errors.BadRequest, id="other-pod"),
    pytest.param({"target": {"kind": "Pod", "name": "n1"}}, errors.Invalid, id="target-not-a-node"),
    pytest.param({"target": {}}, errors.Invalid, id="no-target-name"),
    pytest.param({"target": {"name": "n1"}, "metadata": {"annotations": {"x": 1}}}, errors.Invalid,
                 id="annotation-not-a-string"),
    pytest.param(["not", "an", "object"], errors.BadRequest, id="not-an-object"),
])
def test_target(body, want):
    if isinstance(want, type):
        with pytest.raises(want):
            binding.target(body, "p")
    else:
        assert binding.target(body, "p") == want


def test_in_process_bind_is_one_write_and_refuses_a_second():
    c = inprocess.new_client(clock.VirtualClock())
    created = c.create({k: v for k, v in pod(scheduler="elsewhere").items()} | {
        "metadata": {"name": "p", "namespace": "default"}})
    events = []
    c.watch(kinds.POD, events.append)
    c.bind("default", "p", "n1")
    got = c.get(kinds.POD, "default", "p")
    assert got["spec"]["nodeName"] == "n1"
    assert [(x["type"], x["status"]) for x in got["status"]["conditions"]] == [("PodScheduled", "True")]
    assert int(got["metadata"]["resourceVersion"]) == int(created["metadata"]["resourceVersion"]) + 1
    assert [(e.type, e.object["spec"].get("nodeName"), e.old["spec"].get("nodeName")) for e in events] == \
        [("MODIFIED", "n1", None)]
    with pytest.raises(errors.Conflict):
        c.bind("default", "p", "n2")
    with pytest.raises(errors.NotFound):
        c.bind("default", "missing", "n1")
    assert c.get(kinds.POD, "default", "p")["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]
