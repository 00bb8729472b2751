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
    pytest.param({"tasks": [task(replicas=1, template={"spec": {
                     "securityContext": {"supplementalGroups": ["{{item}}", 5, "{{params.neg}}"],
                                         "windowsOptions": {"hostProcess": "{{params.yes}}"}},
                     "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": "{{params.n}}"}],
                     "containers": [{"name": "c", "securityContext": {
                         "windowsOptions": {"hostProcess": "{{params.yes}}", "runAsUserName": "{{item}}"}}}]}})]},
                 {"tasks": [task(replicas=1, template={"spec": {
                     "securityContext": {"supplementalGroups": [3, 5, -1], "windowsOptions": {"hostProcess": True}},
                     "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 2}],
                     "containers": [{"name": "c", "securityContext": {
                         "windowsOptions": {"hostProcess": True, "runAsUserName": "3"}}}]}})]},
                 id="supplemental-groups-host-process-toleration-seconds"),
    pytest.param({"tasks": [task(replicas=1, template={"spec": {
                     "volumes": [{"name": "v", "configMap": {"name": "cm", "defaultMode": "{{params.n}}",
                                                             "optional": "{{params.yes}}",
                                                             "items": [{"key": "k", "path": "p",
                                                                       "mode": "{{item}}"}]}}],
                     "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": "{{item}}", "podAffinityTerm": {"topologyKey": "zone"}}]}},
                     "containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v",
                                                                    "readOnly": "{{params.yes}}"}],
                                     "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {
                                         "name": "cm", "key": "k", "optional": "{{params.yes}}"}}}],
                                     "envFrom": [{"secretRef": {"name": "s", "optional": "{{params.yes}}"}}]}]}})]},
                 {"tasks": [task(replicas=1, template={"spec": {
                     "volumes": [{"name": "v", "configMap": {"name": "cm", "defaultMode": 2, "optional": True,
                                                             "items": [{"key": "k", "path": "p", "mode": 3}]}}],
                     "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 3, "podAffinityTerm": {"topologyKey": "zone"}}]}},
                     "containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}],
                                     "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {
                                         "name": "cm", "key": "k", "optional": True}}}],
                                     "envFrom": [{"secretRef": {"name": "s", "optional": True}}]}]}})]},
                 id="volume-modes-affinity-weights-mounts-optional-refs"),
])
def test_typed(spec, want):
    before = copy.deepcopy(spec)
    assert placeholdertypes.typed(spec, flowtemplate.substitute(spec, VALUES, "spec")) == want
    assert spec == before, "the spec before is not changed"


def test_a_field_written_as_a_string_without_a_placeholder_is_left_for_admission():
    spec = {"tasks": [task(replicas="3")]}
    assert placeholdertypes.typed(spec, copy.deepcopy(spec)) == {"tasks": [task(replicas="3")]}


@pytest.mark.parametrize("where, written, admitted", [
    pytest.param("securityContext", {"supplementalGroups": ["{{item}}"]}, True, id="supplementalGroups"),
    pytest.param("securityContext", {"supplementalGroups": ["{{params.word}}"]}, False,
                 id="supplementalGroups-not-a-number"),
    pytest.param("securityContext", {"windowsOptions": {"hostProcess": "{{params.yes}}"}}, True, id="hostProcess"),
    pytest.param("securityContext", {"windowsOptions": {"hostProcess": "{{params.word}}"}}, False,
                 id="hostProcess-not-a-boolean"),
    pytest.param("tolerations", [{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": "{{item}}"}],
                 True, id="tolerationSeconds"),
])
def test_the_vcjob_a_flow_makes_is_admitted_once_typed(where, written, admitted):
    """The JobTemplate with the placeholder is admitted (its value is known only in the flow's vcjob); that vcjob,
    typed after the substitution, is admitted — or refused naming the field when the value reads as no number or
    boolean (before, a number's text was left a string, and every such vcjob refused)."""
    from vclite.api import kinds
    from vclite.apiserver import inprocess
    from vclite.lib import clock, errors
    client = inprocess.new_client(clock.VirtualClock())
    spec = {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{"name": "t", "replicas": 1, "template": {
        "spec": {"restartPolicy": "Never", where: written,
                 "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}
    client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                   "metadata": {"name": "tpl", "namespace": "default"}, "spec": copy.deepcopy(spec)})
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "f-a", "namespace": "default"},
           "spec": placeholdertypes.typed(spec, flowtemplate.substitute(spec, VALUES, "spec"))}
    if admitted:
        client.create(job)
        return
    with pytest.raises(errors.Invalid) as err:
        client.create(job)
    assert f"spec.tasks[0].template.spec.{where}" in str(err.value), err.value
