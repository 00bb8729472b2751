"""`vcctl jobflow get -w`'s pure parts: what it lists and watches, and when its last frame may be drawn (the
vcjobs the finished JobFlow's status says ended are ended in the cache too)."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.cli import client_live, view, viewdraw
from vclite.store import selectors


def jobflow(conditions):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "jf", "namespace": "default"},
            "spec": {"flows": [{"name": n} for n in ("a", "b")]},
            "status": {"state": {"phase": "Succeed"}, "conditions": conditions}}


def job(name, phase):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"}, "status": {"state": {"phase": phase}}}


@pytest.mark.parametrize("conditions, jobs, expected", [
    pytest.param({"jf-a": {"phase": "Completed"}, "jf-b": {"phase": "Completed"}},
                 [job("jf-a", "Completed"), job("jf-b", "Running")], ["jf-b"], id="a-completion-not-seen-yet"),
    pytest.param({"jf-a": {"phase": "Completed"}, "jf-b": {"phase": "Failed", "createTime": "t"}},
                 [job("jf-a", "Completed"), job("jf-b", "Failed")], [], id="caught-up"),
    pytest.param({"jf-a": {"phase": "Completed"}}, [], [], id="a-vcjob-not-seen-at-all-is-drawn-from-its-condition"),
    pytest.param({"jf-a": {"phase": "Running"}}, [job("jf-a", "Completed")], [], id="the-cache-ahead-of-the-status"),
    pytest.param({"jf-a": {"phase": "Pending", "reason": "WaitingForDependencies"}}, [job("jf-a", "Pending")], [],
                 id="not-ended-in-the-status"),
])
def test_the_vcjobs_behind_the_jobflow_status(conditions, jobs, expected):
    assert client_live.behind(view.Snapshot([jobflow(conditions)], jobs, [], [])) == expected


@pytest.mark.parametrize("phase, listed", [("Pending", True), ("Running", True), ("Failed", True),
                                           ("Succeeded", False)])
def test_pods_that_succeeded_are_not_listed(phase, listed):
    """The view reads pods only to say why a job waits or failed."""
    field_selector = dict(client_live.selectors("default", "jf"))[kinds.POD]["field_selector"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "status": {"phase": phase}}
    assert selectors.field_predicate(field_selector, "Pod")(pod) is listed


def test_the_last_frame_written_to_a_file_has_each_row_on_one_line_without_padding():
    """Written to a file or a pipe, rich drew 80 columns: a row's detail wrapped over many lines of a log."""
    import datetime as dt
    detail = "attempt 2 failed; no retries left (limit 1) " * 3
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "jf", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
          "status": {"state": {"phase": "Failed"}, "conditions": {
              "jf-a": {"phase": "Failed", "reason": "RetriesExhausted", "message": detail.strip()},
              "jf-b": {"phase": "Skipped", "reason": "DependencyNeverMet",
                       "message": "dependsOn target a was Failed"}}}}
    text = client_live.unwrapped(viewdraw.render(view.Snapshot([jf], [], [], []),
                                             dt.datetime(2026, 1, 1, 0, 1, tzinfo=dt.timezone.utc)))
    lines = text.splitlines()
    assert any(line.startswith("a ") and line.endswith(detail.strip()) for line in lines), text
    assert any(line.startswith("b ") and line.endswith("dependsOn target a was Failed") for line in lines), text
    assert all(line == line.rstrip() for line in lines) and len(lines) == 5, text
