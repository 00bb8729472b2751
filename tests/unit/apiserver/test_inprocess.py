"""The in-process Client's merge patch: what it stores when a patch removes the last label or annotation."""
import pytest

from vclite.api import batch, kinds
from vclite.apiserver import inprocess
from vclite.controllers.job import commands

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
