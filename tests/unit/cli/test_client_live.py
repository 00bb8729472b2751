"""`vcctl jobflow get -w`'s pure parts: what it lists and watches, and when its last frame may be drawn (the
vcjobs the finished JobFlow's status says ended are ended in the cache too)."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.cli import client_live, view
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
