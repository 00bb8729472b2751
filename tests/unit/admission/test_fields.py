"""Unknown-field warnings (admission/fields.py): a typo is named with the closest known field; every
field the schemas define, and every kind they do not cover, passes silently."""
from __future__ import annotations

import pathlib

import pytest

from vclite.admission import fields
from vclite.api import yamlio

ROOT = pathlib.Path(__file__).resolve().parents[3]


def job(spec):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"}, "spec": spec}


def flow(spec):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"}, "spec": spec}


POD = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "command": ["true"]}]}}


@pytest.mark.parametrize("obj, want", [
    pytest.param(job({"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1, "template": POD}]}), [],
                 id="known-fields"),
    pytest.param(job({"minAvaliable": 1}),
                 [("spec.minAvaliable", 'unknown field "minAvaliable" (did you mean "minAvailable"?): it is ignored')],
                 id="job-typo"),
    pytest.param(job({"tasks": [{"name": "t", "restartPolicy": "Never"}]}),
                 [("spec.tasks[0].restartPolicy", 'unknown field "restartPolicy": it is ignored')],
                 id="pod-field-at-task-level"),
    pytest.param(job({"tasks": [{"template": {"spec": {"containers": [{"name": "c", "comand": ["x"]}]}}}]}),
                 [("spec.tasks[0].template.spec.containers[0].comand",
                   'unknown field "comand" (did you mean "command"?): it is ignored')], id="container-typo"),
    pytest.param(job({"policies": [{"event": "PodFailed", "acton": "RestartJob"}]}),
                 [("spec.policies[0].acton", 'unknown field "acton" (did you mean "action"?): it is ignored')],
                 id="policy-typo"),
    pytest.param(flow({"flows": [{"name": "b", "dependOn": {"targets": ["a"]}}]}),
                 [("spec.flows[0].dependOn", 'unknown field "dependOn" (did you mean "dependsOn"?): it is ignored')],
                 id="flow-typo"),
    pytest.param(flow({"flows": [{"name": "b", "dependsOn": {"target": ["a"]}}]}),
                 [("spec.flows[0].dependsOn.target",
                   'unknown field "target" (did you mean "targets"?): it is ignored')], id="depends-on-typo"),
    pytest.param(flow({"flows": [{"name": "b", "patch": {"jobSpec": {"minAvaliable": 1}}}]}),
                 [("spec.flows[0].patch.jobSpec.minAvaliable",
                   'unknown field "minAvaliable" (did you mean "minAvailable"?): it is ignored')], id="patch-typo"),
    pytest.param(flow({"flows": [{"name": "b", "patch": {"spec": {"queue": "q"}}}]}),
                 [("spec.flows[0].patch.spec", 'unknown field "spec" (did you mean "jobSpec"? Volcano\'s API names it '
                   "so; its design document, job-template-parameter-overriding.md, writes spec): it is ignored")],
                 id="patch-spec-as-the-design-document-writes-it"),
    pytest.param(flow({"flows": [{"name": "b", "patch": {"jobSpec": {"tasks": [{"name": "t", "$patch": "delete"}]}}}]}),
                 [], id="patch-directive"),
    pytest.param(flow({"arguments": {"parameter": []}, "flows": [
        {"name": "b", "retry": {"limit": 1, "limits": 2, "backoff": {"duration": "1s", "facter": 2}},
         "repeat": {"untill": "x"}, "dependsOn": {"probe": {"taskStatusLst": [], "taskStatusList": [
             {"taskName": "t", "phse": "Running"}], "httpGetList": [{"port": 1, "httpHeader": {"nam": "x"}}]}}}]}),
                 [("spec.arguments.parameter", 'unknown field "parameter" (did you mean "parameters"?): it is ignored'),
                  ("spec.flows[0].retry.limits", 'unknown field "limits" (did you mean "limit"?): it is ignored'),
                  ("spec.flows[0].retry.backoff.facter",
                   'unknown field "facter" (did you mean "factor"?): it is ignored'),
                  ("spec.flows[0].repeat.untill", 'unknown field "untill" (did you mean "until"?): it is ignored'),
                  ("spec.flows[0].dependsOn.probe.taskStatusLst",
                   'unknown field "taskStatusLst" (did you mean "taskStatusList"?): it is ignored'),
                  ("spec.flows[0].dependsOn.probe.taskStatusList[0].phse",
                   'unknown field "phse" (did you mean "phase"?): it is ignored'),
                  ("spec.flows[0].dependsOn.probe.httpGetList[0].httpHeader.nam",
                   'unknown field "nam" (did you mean "name"?): it is ignored')],
                 id="typos-inside-the-jobflow-fields"),
    pytest.param({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "y"},
                  "whatever": 1}, [], id="kinds-not-covered"),
    pytest.param(job({"tasks": "not a list"}), [], id="wrong-types-left-to-admission"),
])
def test_unknown_fields(obj, want):
    assert fields.unknown_in(obj) == want


def test_no_example_has_an_unknown_field():
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        docs, _ = yamlio.parse_string(path.read_text(), str(path))
        assert [u for d in docs for u in fields.unknown_in(d.obj)] == [], path
