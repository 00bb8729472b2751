"""The lines of a run without a terminal (a CI log): a loop's items counted in one line per loop flow, each failed
item named as the live view names its row; every other object a line per phase change, as before."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.cli import run, runlines

ITEMS = [0.001, 0.002, 0.013, 0.004]


def jobflow(flows, conditions):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "sweep", "namespace": "default"}, "spec": {"flows": flows},
            "status": {"state": {"phase": "Running"}, "conditions": conditions}}


def vcjob(name, phase, item=None):
    annotations = {"flow.volcano.sh/item": item} if item is not None else {}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations,
                         "labels": {"volcano.sh/createdByJobFlow": "default.sweep"}},
            "spec": {"tasks": []}, "status": {"state": {"phase": phase}}}


SWEEP = jobflow([{"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}, "withItems": ITEMS}],
                {"sweep-train": {"phase": "Running", "reason": "FanOut", "items": 4}})
PARAM = jobflow([{"name": "train", "withParam": "{{outputs.pick}}"}],
                {"sweep-train": {"phase": "Running", "reason": "FanOut", "items": 2}})
REPEAT = jobflow([{"name": "train", "repeat": {"until": "false", "limit": 3}}],
                 {"sweep-train": {"phase": "Running", "reason": "Repeat", "iterations": 2}})


@pytest.mark.parametrize("jf, jobs, earlier, expected", [
    pytest.param(SWEEP, [vcjob("sweep-prep", "Completed")], {}, ["vcjob default/sweep-prep: Completed"],
                 id="a-flows-own-vcjob-a-line-as-before"),
    pytest.param(SWEEP, [vcjob(f"sweep-train-{i}", "Pending") for i in range(4)], {},
                 ["JobFlow default/sweep: flow train: 4 items: 4 Pending"], id="four-items-one-line"),
    pytest.param(SWEEP, [vcjob("sweep-train-0", "Running"), vcjob("sweep-train-2", "Failed")],
                 {"vcjob default/sweep-train-1": "Completed"},
                 ["JobFlow default/sweep: flow train: 4 items: 1 Failed, 1 Running, 1 not created, 1 Completed",
                  "vcjob default/sweep-train-2 (flow train, item 2: 0.013): Failed"],
                 id="counts-of-every-item-and-the-failed-one-named"),
    pytest.param(PARAM, [vcjob("sweep-train-1", "Failed", "resnet50")], {"vcjob default/sweep-train-0": "Running"},
                 ["JobFlow default/sweep: flow train: 2 items: 1 Failed, 1 Running",
                  "vcjob default/sweep-train-1 (flow train, item 1: resnet50): Failed"],
                 id="withParam-the-value-from-its-vcjob"),
    pytest.param(REPEAT, [vcjob("sweep-train-1", "Running")], {"vcjob default/sweep-train-0": "Completed"},
                 ["JobFlow default/sweep: flow train: 2 iterations: 1 Running, 1 Completed"], id="repeat-iterations"),
    pytest.param(jobflow([{"name": "train", "withItems": [1, 2]}], {}), [vcjob("sweep-train-1", "Pending")], {},
                 ["JobFlow default/sweep: flow train: 2 items: 1 Pending, 1 not created"],
                 id="no-status-yet-the-items-made-so-far"),
])
def test_change_lines(jf, jobs, earlier, expected):
    changed = {f"vcjob default/{j['metadata']['name']}": j for j in jobs}
    phases = {**earlier, **{what: j["status"]["state"]["phase"] for what, j in changed.items()}}
    assert runlines.change_lines(list(changed), phases, {"default/sweep": jf}, changed) == expected


def test_a_runs_lines_count_a_loops_items():
    """Through run.Progress as the watch feeds it: the JobFlow, then its items' vcjobs."""
    progress = run.Progress()

    def seen(kind, obj):
        progress.observe(client_mod.WatchEvent(client_mod.EventType.MODIFIED, kind, obj, None))
    seen(kinds.JOBFLOW, SWEEP)
    for i in range(4):
        seen(kinds.JOB, vcjob(f"sweep-train-{i}", "Running"))
    assert progress.changes() == ["JobFlow default/sweep: Running",
                                  "JobFlow default/sweep: flow train: 4 items: 4 Running"]
    seen(kinds.JOB, vcjob("sweep-train-2", "Failed"))
    seen(kinds.JOB, vcjob("sweep-train-3", "Completed"))
    assert progress.changes() == ["JobFlow default/sweep: flow train: 4 items: 1 Failed, 2 Running, 1 Completed",
                                  "vcjob default/sweep-train-2 (flow train, item 2: 0.013): Failed"]
