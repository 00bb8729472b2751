"""A CRD's (vcjob, JobTemplate, CronJob, JobFlow) field of the wrong JSON type, an array's item above all, is
refused in the words of kube-apiserver's structural schema validation, naming the item:
`<path>[1]: Invalid value: "null": <path>[1] in body must be of type string: "null"`. A Pod's (a built-in kind,
decoded, not schema-validated) keeps vclite's words. Nothing is stored."""
from __future__ import annotations

import copy

import pytest

from vclite.admission import common
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock, errors

C = "spec.tasks[0].template.spec.containers[0]"


def _vcjob(**over):
    task = {"name": "t", "replicas": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "c", "image": "busybox", "command": ["true"]}]}}}
    spec = {"minAvailable": 1, "tasks": [task]}
    for dotted, value in over.items():
        node, *keys = [spec] + dotted.split(".")
        for k in keys[:-1]:
            node = node[int(k)] if k.isdigit() else node.setdefault(k, {})
        node[keys[-1]] = value
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
            "spec": spec}


def _words(path, found, want):
    return f'{path}: Invalid value: "{found}": {path} in body must be of type {want}: "{found}"'


@pytest.mark.parametrize("over, problems", [
    ({"tasks.0.template.spec.containers.0.command": ["a", None]}, [_words(f"{C}.command[1]", "null", "string")]),
    ({"tasks.0.template.spec.containers.0.args": ["x", 3, True]},
     [_words(f"{C}.args[1]", "integer", "string"), _words(f"{C}.args[2]", "boolean", "string")]),
    ({"tasks.0.template.spec.containers.0.args": [["x"], 1.5]},
     [_words(f"{C}.args[0]", "array", "string"), _words(f"{C}.args[1]", "number", "string")]),
    ({"tasks.0.template.spec.containers.0.args": "x y"}, [_words(f"{C}.args", "string", "array")]),
    ({"tasks.0.template.spec.containers.0.env": [None]}, [_words(f"{C}.env[0]", "null", "object")]),
    ({"tasks.0.template.spec.containers.0.ports": [{"containerPort": "80"}]},
     [_words(f"{C}.ports[0].containerPort", "string", "integer")]),
    ({"tasks.0.template.spec.nodeSelector": {"zone": None}},
     [_words("spec.tasks[0].template.spec.nodeSelector.zone", "null", "string")]),
    ({"tasks.0.dependsOn": {"name": [1]}}, [_words("spec.tasks[0].dependsOn.name[0]", "integer", "string")]),
    ({"plugins": {"svc": [None]}}, [_words("spec.plugins.svc[0]", "null", "string")]),
])
def test_a_vcjobs_mistyped_item_is_named_in_the_crd_schemas_words(over, problems):
    client = inprocess.new_client(clock.VirtualClock())
    with pytest.raises(errors.Invalid) as err:
        client.create(_vcjob(**over))
    assert [str(e) for e in err.value.errors] == problems
    assert client.list(kinds.JOB, "default") == []


def test_a_cronjobs_job_template_names_its_own_path_twice():
    job = _vcjob(**{"tasks.0.template.spec.containers.0.command": ["a", None]})
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
            "metadata": {"name": "cj", "namespace": "default"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": copy.deepcopy(job["spec"])}}}
    with pytest.raises(errors.Invalid) as err:
        inprocess.new_client(clock.VirtualClock()).create(cron)
    at = "spec.jobTemplate.spec.tasks[0].template.spec.containers[0].command[1]"
    assert [str(e) for e in err.value.errors] == [_words(at, "null", "string")]


def test_a_pods_mistyped_command_keeps_vclites_words():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["a", 3]}]}}
    with pytest.raises(errors.Invalid) as err:
        inprocess.new_client(clock.VirtualClock()).create(pod)
    assert [str(e) for e in err.value.errors] == [
        'spec.containers[0].command: Invalid value: ["a", 3]: must be of type array of strings']


@pytest.mark.parametrize("value, named", [
    (None, "null"), (True, "boolean"), (3, "integer"), (3.0, "integer"), (1.5, "number"), ("x", "string"),
    ([], "array"), ({}, "object"),
])
def test_json_type(value, named):
    assert common.json_type(value) == named
