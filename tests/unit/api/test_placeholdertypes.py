"""A JobTemplate's integer and boolean fields written as placeholders get the type the vcjob needs once filled in
(api/placeholdertypes)."""
from __future__ import annotations

import copy

import pytest

from vclite.api import flowtemplate, placeholdertypes

VALUES = {"item": "3", "params.n": " 2 ", "params.word": "two", "params.neg": "-1", "params.yes": "true"}


def task(**fields):
    return {"name": "t", "template": {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}},
            **fields}


@pytest.mark.parametrize("spec, want", [
    pytest.param({"tasks": [task(replicas="{{item}}")]}, {"tasks": [task(replicas=3)]}, id="task-replicas"),
    pytest.param({"minAvailable": "{{params.n}}", "maxRetry": "{{params.neg}}", "tasks": [task(replicas=1)]},
                 {"minAvailable": 2, "maxRetry": -1, "tasks": [task(replicas=1)]}, id="job-integers-trimmed"),
    pytest.param({"tasks": [task(replicas=2, partitionPolicy={"totalPartitions": "{{params.n}}",
                                                              "partitionSize": 1})]},
                 {"tasks": [task(replicas=2, partitionPolicy={"totalPartitions": 2, "partitionSize": 1})]},
                 id="nested-object"),
    pytest.param({"tasks": [task(replicas="{{params.word}}")]}, {"tasks": [task(replicas="two")]},
                 id="not-a-number-stays-text-for-admission-to-refuse"),
    pytest.param({"tasks": [task(replicas="{{item}}0")]}, {"tasks": [task(replicas=30)]}, id="placeholder-in-text"),
    pytest.param({"queue": "q{{item}}", "tasks": [task(replicas=1)]}, {"queue": "q3", "tasks": [task(replicas=1)]},
                 id="string-field-stays-a-string"),
    pytest.param({"tasks": [task(replicas=1, template={"spec": {"activeDeadlineSeconds": "{{item}}",
                                                                "hostNetwork": "{{params.yes}}"}})]},
                 {"tasks": [task(replicas=1, template={"spec": {"activeDeadlineSeconds": 3, "hostNetwork": True}})]},
                 id="pod-spec-integer-and-boolean"),
    pytest.param({"tasks": [task(replicas=1, template={"spec": {"containers": [{
                     "name": "c", "ports": [{"containerPort": "80{{item}}", "name": "p{{item}}"}],
                     "readinessProbe": {"periodSeconds": "{{params.n}}", "httpGet": {"port": "{{item}}"}},
                     "securityContext": {"runAsUser": "{{item}}", "privileged": "{{params.yes}}"}}]}})]},
                 {"tasks": [task(replicas=1, template={"spec": {"containers": [{
                     "name": "c", "ports": [{"containerPort": 803, "name": "p3"}],
                     "readinessProbe": {"periodSeconds": 2, "httpGet": {"port": "3"}},
                     "securityContext": {"runAsUser": 3, "privileged": True}}]}})]},
                 id="container-integers-and-booleans-int-or-string-port-left"),
    pytest.param({"tasks": [task(replicas=1, template={"spec": {
                     "topologySpreadConstraints": [{"maxSkew": "{{item}}", "topologyKey": "zone"}],
                     "containers": [{"name": "c", "lifecycle": {"preStop": {"sleep": {"seconds": "{{params.n}}"}}},
                                     "livenessProbe": {"grpc": {"port": "90{{item}}"}}}]}})]},
                 {"tasks": [task(replicas=1, template={"spec": {
                     "topologySpreadConstraints": [{"maxSkew": 3, "topologyKey": "zone"}],
                     "containers": [{"name": "c", "lifecycle": {"preStop": {"sleep": {"seconds": 2}}},
                                     "livenessProbe": {"grpc": {"port": 903}}}]}})]},
                 id="spread-skew-sleep-seconds-grpc-port"),
])
def test_typed(spec, want):
    before = copy.deepcopy(spec)
    assert placeholdertypes.typed(spec, flowtemplate.substitute(spec, VALUES, "spec")) == want
    assert spec == before, "the spec before is not changed"


def test_a_field_written_as_a_string_without_a_placeholder_is_left_for_admission():
    spec = {"tasks": [task(replicas="3")]}
    assert placeholdertypes.typed(spec, copy.deepcopy(spec)) == {"tasks": [task(replicas="3")]}
