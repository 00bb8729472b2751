"""vcjob <-> JobTemplate conversion: envelope rewritten, spec copied verbatim, server fields dropped."""
from __future__ import annotations

import copy

import pytest

from vclite.api import convert

SPEC = {
    "minAvailable": 1, "schedulerName": "volcano", "queue": "default", "maxRetry": 3,
    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
    "plugins": {"svc": ["--publish-not-ready-addresses"]},
    "tasks": [{
        "name": "worker", "replicas": 2, "minAvailable": 2,
        "template": {"metadata": {"labels": {"app": "w"}},
                     "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "true"],
                                              "resources": {"requests": {"cpu": "500m"}},
                                              "someFieldVcliteDoesNotModel": {"x": [1, 2]}}],
                              "restartPolicy": "OnFailure"}},
    }],
    "futureField": {"kept": True},
}

JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {
        "name": "flow-a", "namespace": "ns1", "uid": "u-1", "resourceVersion": "42", "generation": 3,
        "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [{"manager": "x"}],
        "ownerReferences": [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "flow"}],
        "finalizers": ["f"], "deletionTimestamp": "2026-01-01T00:00:01Z", "deletionGracePeriodSeconds": 0,
        "labels": {"volcano.sh/createdByJobFlow": "ns1.flow", "volcano.sh/createdByJobTemplate": "ns1.a",
                   "team": "ml"},
        "annotations": {"volcano.sh/createdByJobFlow": "ns1.flow", "volcano.sh/createdByJobTemplate": "ns1.a"},
    },
    "spec": SPEC,
    "status": {"state": {"phase": "Completed"}, "retryCount": 1},
}

TEMPLATE = {
    "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
    "metadata": {"name": "a", "namespace": "ns1", "uid": "u-2", "resourceVersion": "7",
                 "creationTimestamp": "2026-01-01T00:00:00Z", "annotations": {"note": "keep me"}},
    "spec": SPEC,
    "status": {"jobDependsOnList": ["flow-a"]},
}


@pytest.mark.parametrize("fn, obj, name, expected", [
    pytest.param(convert.job_to_template, JOB, None, {
        "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
        "metadata": {"name": "flow-a", "namespace": "ns1", "labels": {"team": "ml"}},
        "spec": SPEC}, id="job-to-template-strips-server-and-controller-metadata"),
    pytest.param(convert.job_to_template, JOB, "a", {
        "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
        "metadata": {"name": "a", "namespace": "ns1", "labels": {"team": "ml"}},
        "spec": SPEC}, id="job-to-template-renamed"),
    pytest.param(convert.template_to_job, TEMPLATE, None, {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "metadata": {"name": "a", "namespace": "ns1", "annotations": {"note": "keep me"}},
        "spec": SPEC}, id="template-to-job-keeps-user-annotations"),
    pytest.param(convert.template_to_job, {"kind": "JobTemplate", "metadata": {"name": "t"}}, "j", {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"}, "spec": {}},
        id="template-without-spec"),
    pytest.param(convert.template_to_job,
                 {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t"},
                  "spec": {"queue": "q"}}, None, {
                     "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "t"},
                     "spec": {"queue": "q"}}, id="template-under-legacy-apiversion-accepted"),
])
def test_convert(fn, obj, name, expected):
    before = copy.deepcopy(obj)
    assert fn(obj, name) == expected
    assert obj == before, "the input must not be mutated"


@pytest.mark.parametrize("start, there, back", [
    pytest.param(JOB, convert.job_to_template, convert.template_to_job, id="job-template-job"),
    pytest.param(TEMPLATE, convert.template_to_job, convert.job_to_template, id="template-job-template"),
])
def test_round_trip_is_lossless_on_spec(start, there, back):
    result = back(there(start))
    assert result["spec"] == start["spec"]
    assert result["kind"] == start["kind"] and result["apiVersion"] == start["apiVersion"]


def test_spec_is_a_deep_copy():
    tmpl = convert.job_to_template(JOB)
    tmpl["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] = "changed"
    assert JOB["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "busybox"


@pytest.mark.parametrize("fn, obj, message", [
    pytest.param(convert.job_to_template, TEMPLATE, "expected kind Job, got JobTemplate", id="template-given-as-job"),
    pytest.param(convert.template_to_job, JOB, "expected kind JobTemplate, got Job", id="job-given-as-template"),
    pytest.param(convert.job_to_template, {"apiVersion": "batch/v1", "kind": "Job"},
                 "expected apiVersion batch.volcano.sh/v1alpha1 for kind Job, got batch/v1", id="kubernetes-job"),
    pytest.param(convert.job_to_template, ["not", "a", "dict"], "expected a Job object, got array", id="not-a-dict"),
])
def test_wrong_input_is_rejected(fn, obj, message):
    with pytest.raises(ValueError) as err:
        fn(obj)
    assert str(err.value) == message
