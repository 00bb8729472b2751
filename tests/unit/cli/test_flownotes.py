"""The detail lines of a JobFlow's flows without a terminal (flownotes.py): what the live view's detail column says
of waits on probes, outputs and conditions, failures, retries, skips and the exit handler — once per change."""
from __future__ import annotations

import pytest

from vclite.cli import flownotes

FLOWS = [{"name": "serve"},
         {"name": "client", "dependsOn": {"targets": ["serve"], "probe": {"tcpSocketList": [
             {"taskName": "server", "port": 8080}]}}},
         {"name": "b", "dependsOn": {"targets": ["serve"]}},
         {"name": "c", "dependsOn": {"targets": ["b"]}, "when": "outputs.b > 1"},
         {"name": "sweep", "withItems": [0.1, 0.2]},
         {"name": "notify"}]


def jobflow(conditions, flows=FLOWS):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "f", "namespace": "default"}, "spec": {"flows": flows, "onExit": "notify"},
            "status": {"state": {"phase": "Running"}, "conditions": conditions}}


RAN = {"createTime": "2026-01-01T00:00:00Z", "taskStatusCount": {}}


@pytest.mark.parametrize("key, cond, expected", [
    pytest.param("f-client", {"phase": "Pending", "reason": "WaitingForProbe",
                              "message": "waiting for probe: f-serve: task server accepts TCP :8080"},
                 "JobFlow default/f: flow client: waiting for probe: f-serve: task server accepts TCP :8080",
                 id="waiting-for-a-probe"),
    pytest.param("f-c", {"phase": "Pending", "reason": "WaitingForOutput", "message": "waiting for f-b to finish"},
                 "JobFlow default/f: flow c: waiting for f-b to finish", id="waiting-for-an-output"),
    pytest.param("f-b", {"phase": "Pending", "reason": "WaitingForDependencies",
                         "message": "waiting for f-serve to be Completed"}, "", id="waiting-only-for-targets-no-line"),
    pytest.param("f-c", {"phase": "Pending", "reason": "WaitingForDependencies",
                         "message": "waiting for f-b to be Completed"},
                 "JobFlow default/f: flow c: waiting for f-b to be Completed", id="waiting-with-a-when"),
    pytest.param("f-c", {"phase": "Skipped", "reason": "WhenFalse", "message": "when outputs.b > 1 is false"},
                 "JobFlow default/f: flow c: Skipped: when outputs.b > 1 is false", id="skipped"),
    pytest.param("f-b", {**RAN, "phase": "Failed", "message": "pod f-b-t-0: container main exited with code 3 (Error)"},
                 "vcjob default/f-b: pod f-b-t-0: container main exited with code 3 (Error)", id="failed-why"),
    pytest.param("f-b", {**RAN, "phase": "Failed", "reason": "RetryBackoff",
                         "message": "attempt 1 failed; retry 1 of 3 after a 1s back-off"},
                 "vcjob default/f-b: attempt 1 failed; retry 1 of 3 after a 1s back-off", id="retry"),
    pytest.param("f-b", {**RAN, "phase": "Pending", "reason": "Retrying", "message": "attempt 2"}, "",
                 id="retrying-said-by-its-pending-line"),
    pytest.param("f-notify", {**RAN, "phase": "Running",
                              "message": "exit handler: the JobFlow is Failed once it has run (b failed)"},
                 "vcjob default/f-notify: exit handler: the JobFlow is Failed once it has run (b failed)",
                 id="exit-handler-running"),
    pytest.param("f-notify", {"phase": "Pending", "reason": "WaitingForOtherFlows",
                              "message": "the exit handler runs once every other flow has finished: waiting for f-b"},
                 "JobFlow default/f: flow notify: the exit handler runs once every other flow has finished: "
                 "waiting for f-b", id="exit-handler-waiting"),
    pytest.param("f-b", {**RAN, "phase": "Completed", "output": "0.93\n"}, "vcjob default/f-b: output: 0.93",
                 id="output"),
    pytest.param("f-b", {**RAN, "phase": "Completed"}, "", id="completed-nothing-more"),
    pytest.param("f-b", {**RAN, "phase": "Pending", "message": "queue resource quota insufficient: insufficient cpu; "
                                                               "job needs cpu 1"},
                 "", id="a-pending-vcjobs-wait-for-resources-no-line-each-of-a-wide-fan-would-have-one"),
    pytest.param("f-b", {"phase": "Pending", "reason": "Creating", "message": "dependencies are met"}, "",
                 id="being-created"),
    pytest.param("f-sweep", {"phase": "Running", "reason": "FanOut", "message": "2 items: 2 Running", "items": 2},
                 "", id="a-loops-own-condition-its-count-line-says-it"),
    pytest.param("f-sweep-1", {**RAN, "phase": "Failed", "message": "pod f-sweep-1-t-0: container main exited "
                               "with code 1 (Error)"},
                 "vcjob default/f-sweep-1 (flow sweep, item 1: 0.2): pod f-sweep-1-t-0: container main exited "
                 "with code 1 (Error)", id="a-failed-item-named-as-its-line"),
    pytest.param("f-sweep-1", {**RAN, "phase": "Completed", "output": "7"}, "", id="an-items-output-no-line"),
    pytest.param("f-c", {"phase": "Pending", "reason": "NotCreated", "message": "not created: b failed"},
                 "JobFlow default/f: flow c: not created: b failed", id="not-created"),
])
def test_a_flows_detail_line(key, cond, expected):
    assert flownotes.FlowNotes().lines(jobflow({key: cond})) == ([expected] if expected else [])


def test_a_detail_is_written_once_per_change():
    notes = flownotes.FlowNotes()
    retry = {**RAN, "phase": "Failed", "reason": "RetryBackoff", "message": "attempt 1 failed; retry 1 of 2"}
    waiting = {"phase": "Pending", "reason": "WaitingForProbe", "message": "waiting for probe: f-serve to start"}
    steps = [({"f-client": waiting}, ["JobFlow default/f: flow client: waiting for probe: f-serve to start"]),
             ({"f-client": dict(waiting)}, []),   # (a new version saying the same: no line)
             ({"f-client": {**waiting, "message": "waiting for probe: f-serve: task server accepts TCP :8080"}},
              ["JobFlow default/f: flow client: waiting for probe: f-serve: task server accepts TCP :8080"]),
             ({"f-client": {**RAN, "phase": "Running"}}, []),
             ({"f-client": {**RAN, "phase": "Running"}, "f-b": retry},
              ["vcjob default/f-b: attempt 1 failed; retry 1 of 2"]),
             ({"f-b": dict(retry)}, [])]
    for conditions, expected in steps:
        assert notes.lines(jobflow(conditions)) == expected, conditions


def test_a_deleted_jobflow_is_forgotten():
    notes = flownotes.FlowNotes()
    jf = jobflow({"f-c": {"phase": "Skipped", "reason": "WhenFalse", "message": "when outputs.b > 1 is false"}})
    assert len(notes.lines(jf)) == 1
    notes.forget("default/f")
    assert len(notes.lines(jobflow(dict(jf["status"]["conditions"])))) == 1
