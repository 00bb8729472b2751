"""The command annotation contract."""
from __future__ import annotations

import pytest

from vclite.api import batch
from vclite.controllers.job import commands


@pytest.mark.parametrize("value,action", [
    pytest.param("AbortJob", batch.Action.ABORT_JOB, id="abort"),
    pytest.param(" ResumeJob ", batch.Action.RESUME_JOB, id="resume-trimmed"),
    pytest.param("SyncJob", batch.Action.SYNC_JOB, id="sync"),
    pytest.param("OpenQueue", None, id="queue-action-refused"),
    pytest.param("abortjob", None, id="case-sensitive"),
    pytest.param("", None, id="empty"),
])
def test_parse(value, action):
    assert commands.parse(value) == action


def test_patches_round_trip():
    job = {"metadata": {"annotations": {"x": "1"}}}
    job["metadata"]["annotations"].update(commands.set_patch(batch.Action.ABORT_JOB)["metadata"]["annotations"])
    assert commands.requested(job) == "AbortJob"
    assert commands.removal_patch() == {"metadata": {"annotations": {commands.ANNOTATION: None}}}
    assert commands.requested({"metadata": {}}) is None
