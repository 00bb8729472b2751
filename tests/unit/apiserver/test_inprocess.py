"""The in-process Client's merge patch: what it stores when a patch removes the last label or annotation."""
import pytest

from vclite.api import batch, kinds, meta
from vclite.apiserver import inprocess
from vclite.controllers.job import commands
from vclite.lib import errors

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}


@pytest.mark.parametrize("metadata, patch, want", [
    pytest.param({}, commands.set_patch(batch.Action.ABORT_JOB), {"annotations": {
        commands.ANNOTATION: "AbortJob"}}, id="a-command-issued"),
    pytest.param({"annotations": {commands.ANNOTATION: "AbortJob"}}, commands.removal_patch(), {},
                 id="the-command-consumed"),
    pytest.param({"labels": {"l": "1"}, "annotations": {"a": "1"}}, {"metadata": {"labels": {"l": None}}},
                 {"annotations": {"a": "1"}}, id="the-last-label"),
    pytest.param({"labels": {"l": "1", "m": "2"}}, {"metadata": {"labels": {"l": None}}}, {"labels": {"m": "2"}},
                 id="not-the-last-label"),
])
def test_a_patch_removing_the_last_label_or_annotation_stores_no_empty_map(metadata, patch, want):
    client = inprocess.new_client()
    client.create({**CM, "metadata": {**CM["metadata"], **metadata}})
    out = client.patch(kinds.CONFIGMAP, "default", "c", patch)
    for obj in (out, client.get(kinds.CONFIGMAP, "default", "c")):
        assert {k: v for k, v in obj["metadata"].items() if k in ("labels", "annotations")} == want


@pytest.mark.parametrize("patch, words", [
    pytest.param({"metadata": None}, r"name of the object \(c based on URL\) was undeterminable", id="metadata-null"),
    pytest.param({"metadata": {"name": None}}, "was undeterminable", id="name-null"),
    pytest.param({"metadata": {"name": "d"}}, r"name of the object \(d\) does not match the name on the URL \(c\)",
                 id="rename"),
])
def test_a_patch_that_loses_or_changes_the_name_is_refused_and_changes_nothing(patch, words):
    client = inprocess.new_client()
    client.create({**CM, "metadata": {**CM["metadata"], "labels": {"l": "1"}}})
    before = client.get(kinds.CONFIGMAP, "default", "c")
    with pytest.raises(errors.BadRequest, match=words):
        client.patch(kinds.CONFIGMAP, "default", "c", patch)
    assert client.get(kinds.CONFIGMAP, "default", "c") == before
    assert [meta.name(o) for o in client.list(kinds.CONFIGMAP, "default")] == ["c"]


def test_every_watcher_of_a_write_gets_the_same_frozen_event_and_the_next_write_a_new_one():
    client = inprocess.new_client()
    seen: list[tuple[str, object]] = []
    client.watch(kinds.CONFIGMAP, lambda ev: seen.append(("cm", ev)))
    client.watch(None, lambda ev: seen.append(("all", ev)) if ev.kind is kinds.CONFIGMAP else None)
    client.create(CM)
    client.patch(kinds.CONFIGMAP, "default", "c", {"data": {"k": "v"}})
    assert [who for who, _ in seen] == ["cm", "all", "cm", "all"]
    (_, added), (_, added_too), (_, modified), (_, modified_too) = seen
    assert added is added_too and modified is modified_too and added is not modified
    assert (added.type, modified.type) == ("ADDED", "MODIFIED")
    assert modified.old is added.object and modified.object["data"] == {"k": "v"}
