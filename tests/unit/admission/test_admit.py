"""The admission entry point: dispatch, generic metadata checks for kinds without rules, and the light
Pod / PodGroup / PriorityClass rules."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]


def obj(kind: kinds.Kind, name: Any = "x", namespace: str | None = None, **fields: Any) -> Obj:
    md: Obj = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": md, **fields}


def pod_spec(*containers: Obj) -> Obj:
    return {"containers": list(containers) or [{"name": "c", "image": "busybox"}]}


def refusal(kind: kinds.Kind, new: Any, op: Op = Op.CREATE, old: Obj | None = None) -> list[str]:
    try:
        admit.admit(op, kind, new, old, views.default_view())
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


ACCEPT_CASES = [
    pytest.param(kinds.NODE, obj(kinds.NODE, "node-1.example"), id="node-subdomain-name"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "n", metadata={"name": "n", "annotations": {
                     "a": "x" * (256 * 1024 - 4), "b": "é"}}), id="annotations-of-the-largest-size"),
    pytest.param(kinds.CONFIGMAP, obj(kinds.CONFIGMAP, "job-svc", "default", data={"a": "b"}), id="configmap"),
    pytest.param(kinds.NAMESPACE, obj(kinds.NAMESPACE, "team-a"), id="namespace"),
    pytest.param(kinds.SERVICE, obj(kinds.SERVICE, "job", "default", spec={"clusterIP": "None"}), id="service"),
    pytest.param(kinds.EVENT, obj(kinds.EVENT, "job.17f3a", "default", reason="Created"), id="event"),
    pytest.param(kinds.POD, obj(kinds.POD, "p", "default", spec=pod_spec()), id="pod-without-command"),
    pytest.param(kinds.POD, obj(kinds.POD, "p", "default", metadata={"name": "p", "labels": {
        "volcano.sh/job-name": "job", "app": ""}}, spec=pod_spec()), id="pod-with-labels"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={
        "minMember": 2, "minTaskMember": {"t": 2}, "minResources": {"cpu": "200m", "pods": 2}}), id="podgroup"),
    pytest.param(kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "high", value=1000), id="priorityclass"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "", metadata={"generateName": "node-"}), id="generate-name-instead"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "", metadata={"generateName": "n" * 70}), id="generate-name-cut-to-58"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "n-1", metadata={"name": "n-1", "generateName": "n-"}),
                 id="generate-name-and-name"),
    pytest.param(kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "system-node-critical", value=2000001000),
                 id="priorityclass-system"),
]


@pytest.mark.parametrize("kind, new", ACCEPT_CASES)
def test_accepts(kind: kinds.Kind, new: Obj) -> None:
    assert refusal(kind, new) == []


REJECT_CASES = [
    pytest.param(kinds.NODE, obj(kinds.NODE, ""), ["metadata.name: Required value: name or generateName is required"],
                 id="name-required"),
    pytest.param(kinds.NODE, {"kind": "Node"}, ["metadata: Required value"], id="metadata-required"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "", metadata={"generateName": "Node_"}),
                 ["metadata.generateName: Invalid value: \"Node_\": a lowercase RFC 1123 subdomain must consist of lower "
                  "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                  "(e.g. 'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
                 id="generate-name-invalid-one-message"),
    pytest.param(kinds.NODE, obj(kinds.NODE, 7), ["metadata.name: Invalid value: 7: must be of type string"],
                 id="name-not-string"),
    pytest.param(kinds.NAMESPACE, obj(kinds.NAMESPACE, "a.b"),
                 ["metadata.name: Invalid value: \"a.b\": a lowercase RFC 1123 label must consist of lower case "
                  "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
                  "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
                 id="namespace-name-is-a-label"),
    pytest.param(kinds.SERVICE, obj(kinds.SERVICE, "1job", "default", spec={"clusterIP": "None"}),
                 ["metadata.name: Invalid value: \"1job\": a DNS-1035 label must consist of lower case alphanumeric "
                  "characters or '-', start with an alphabetic character, and end with an alphanumeric character "
                  "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"],
                 id="service-name-is-dns1035"),
    pytest.param(kinds.CONFIGMAP, obj(kinds.CONFIGMAP, "cm", "Team_A"),
                 ["metadata.namespace: Invalid value: \"Team_A\": a lowercase RFC 1123 label must consist of lower "
                  "case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
                  "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
                 id="namespace-invalid"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "n", metadata={"name": "n", "labels": {"zone": "x" * 64}}),
                 ['metadata.labels: Invalid value: "' + "x" * 64 + '": must be no more than 63 characters'],
                 id="label-value-too-long"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "n", metadata={"name": "n", "labels": {"zone": 3}}),
                 ["metadata.labels.zone: Invalid value: 3: must be of type string"], id="label-value-not-string"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "n", metadata={"name": "n", "annotations": {"-bad": "v"}}),
                 ["metadata.annotations: Invalid value: \"-bad\": name part must consist of alphanumeric characters, "
                  "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                  "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
                 id="annotation-key-invalid"),
    pytest.param(kinds.NODE, obj(kinds.NODE, "n", metadata={"name": "n", "annotations": {
                     "a": "x" * (256 * 1024 - 3), "b": "é"}}),   # é is 2 bytes in UTF-8: one byte over
                 ["metadata.annotations: Too long: may not be more than 262144 bytes"], id="annotations-too-big"),
    pytest.param(kinds.NODE, ["not", "an", "object"], ['Invalid value: ["not", "an", "object"]: must be of type object'],
                 id="not-an-object"),
    pytest.param(kinds.POD, obj(kinds.POD, "p", "default", spec=pod_spec({"image": "busybox"})),
                 ["spec.containers[0].name: Required value"], id="pod-container-name"),
    pytest.param(kinds.POD, obj(kinds.POD, "p", "default", spec={"containers": []}),
                 ["spec.containers: Required value"], id="pod-containers-required"),
    pytest.param(kinds.POD, obj(kinds.POD, "p", "default",
                                spec=pod_spec({"name": "c", "resources": {"requests": {"memory": "1 Gi"}}})),
                 ['spec.containers[0].resources.requests.memory: invalid quantity "1 Gi": quantities must match the '
                  "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"], id="pod-bad-quantity"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={"minMember": -1}),
                 ["spec.minMember: Invalid value: -1: should be greater than or equal to 0"], id="podgroup-minmember"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={"minTaskMember": {"t": "2"}}),
                 ['spec.minTaskMember.t: Invalid value: "2": must be of type integer'], id="podgroup-mintaskmember"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={"minResources": {"cpu": "1x"}}),
                 ['spec.minResources.cpu: invalid quantity "1x": quantities must match the regular expression '
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"], id="podgroup-minresources"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={"networkTopology": "x"}),
                 ['spec.networkTopology: Invalid value: "x": must be of type object'], id="podgroup-topology-type"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={"networkTopology": {"mode": "x"}}),
                 ['spec.networkTopology.mode: Unsupported value: "x": supported values: "hard", "soft"'],
                 id="podgroup-topology-mode"),
    pytest.param(kinds.PODGROUP, obj(kinds.PODGROUP, "pg", "default", spec={}, status="x"),
                 ['status: Invalid value: "x": must be of type object'], id="status-not-object"),
    pytest.param(kinds.JOBFLOW, obj(kinds.JOBFLOW, "f", "default", spec={"flows": []}, status=[1]),
                 ['status: Invalid value: [1]: must be of type object'], id="jobflow-status-not-object"),
    pytest.param(kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "p"), ["value: Required value"], id="pc-value-required"),
    pytest.param(kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "p", value="100"),
                 ['value: Invalid value: "100": must be of type integer'], id="pc-value-not-integer"),
    pytest.param(kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "p", value=2000000000),
                 ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
                 id="pc-value-too-high"),
    pytest.param(kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "p", value=1, preemptionPolicy="Always"),
                 ['preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"'],
                 id="pc-preemption-policy"),
]


@pytest.mark.parametrize("kind, new, expected", REJECT_CASES)
def test_rejects(kind: kinds.Kind, new: Any, expected: list[str]) -> None:
    assert refusal(kind, new) == expected


def test_invalid_error_names_kind_and_object() -> None:
    with pytest.raises(errors.Invalid) as info:
        admit.admit(Op.CREATE, kinds.PRIORITYCLASS, obj(kinds.PRIORITYCLASS, "p"), None, views.default_view())
    assert (info.value.kind, info.value.name, info.value.code) == ("PriorityClass", "p", 422)
    assert str(info.value) == 'PriorityClass "p" is invalid: value: Required value'


def test_podgroup_gets_default_queue_on_create_only() -> None:
    pg = obj(kinds.PODGROUP, "pg", "default", spec={"minMember": 1})
    assert admit.admit(Op.CREATE, kinds.PODGROUP, pg, None, views.default_view())["spec"]["queue"] == "default"
    assert "queue" not in admit.admit(Op.UPDATE, kinds.PODGROUP, pg, pg, views.default_view())["spec"]


@pytest.mark.parametrize("kind", [pytest.param(k, id=k.kind) for k in kinds.ALL if k is not kinds.QUEUE])
def test_delete_is_allowed_and_returns_none(kind: kinds.Kind) -> None:
    stored = obj(kind, "x", "default" if kind.namespaced else None)
    assert admit.admit(Op.DELETE, kind, None, stored, views.default_view()) is None


def test_result_is_a_copy() -> None:
    new = obj(kinds.CONFIGMAP, "cm", "default", data={"k": "v"})
    out = admit.admit(Op.CREATE, kinds.CONFIGMAP, new, None, views.default_view())
    assert out == new and out is not new
    out["data"]["k"] = "changed"
    assert new["data"]["k"] == "v"
    # Status writes are not admitted (Kubernetes webhooks do not see /status): returned as given,
    # uncopied — the store copies what it keeps.
    status = admit.admit(Op.UPDATE_STATUS, kinds.CONFIGMAP, new, copy.deepcopy(new), views.default_view())
    assert status is new


class _NoCommandView(views.DictView):
    require_command = False


@pytest.mark.parametrize("view, kwargs, admitted", [
    pytest.param(views.default_view(), {}, False, id="default-on"),
    pytest.param(_NoCommandView(views.queue("default")), {}, True, id="view-attribute-off"),
    pytest.param(views.default_view(), {"require_command": False}, True, id="argument-off"),
    pytest.param(_NoCommandView(views.queue("default")), {"require_command": True}, False, id="argument-wins"),
])
def test_require_command_switch(view: views.DictView, kwargs: dict[str, Any], admitted: bool) -> None:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "spec": {"tasks": [{"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}]}}
    try:
        admit.admit(Op.CREATE, kinds.JOB, job, None, view, **kwargs)
    except errors.Invalid as e:
        assert not admitted and "has no command" in str(e)
    else:
        assert admitted


@pytest.mark.parametrize("kind, spec, kept", [
    pytest.param(kinds.JOBFLOW, {"flows": []}, False, id="jobflow"),
    pytest.param(kinds.JOBTEMPLATE, {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": pod_spec(
        {"name": "c", "command": ["true"]})}}]}, False, id="jobtemplate"),
    pytest.param(kinds.JOB, {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": pod_spec(
        {"name": "c", "command": ["true"]})}}]}, False, id="vcjob"),
    pytest.param(kinds.PODGROUP, {"minMember": 1}, True, id="podgroup-no-status-subresource"),
])
def test_create_drops_status_of_kinds_with_a_status_subresource(kind, spec, kept):
    """As Kubernetes' custom-resource strategy: a create's status is dropped where the CRD has a
    status subresource (only the controller writes it); kept elsewhere."""
    status = {"state": {"phase": "Succeed"}, "phase": "Running"}
    out = admit.admit(Op.CREATE, kind, obj(kind, "x", "default", spec=spec, status=status), None, views.default_view())
    assert ("status" in out) is kept


@pytest.mark.parametrize("fields, path, message", [
    pytest.param({"spec": 5}, "spec", "Invalid value: 5: must be of type object", id="spec a number"),
    pytest.param({"spec": {"finalizers": [3]}}, "spec.finalizers[0]", "must be of type string", id="finalizer"),
    pytest.param({"status": {"conditions": 5}}, "status.conditions", "must be of type array", id="conditions"),
])
def test_a_namespace_of_the_wrong_shape_is_refused_naming_the_field(fields, path, message) -> None:
    for op in (Op.CREATE, Op.UPDATE):
        with pytest.raises(errors.Invalid) as info:
            admit.admit(op, kinds.NAMESPACE, obj(kinds.NAMESPACE, **fields), obj(kinds.NAMESPACE), views.default_view())
        assert [(e.path, message in e.message) for e in info.value.errors] == [(path, True)]


# (operation, labels given) -> labels admitted: Kubernetes' namespace strategy (Canonicalize)
NAMESPACE_LABEL_CASES = [
    pytest.param(Op.CREATE, None, {"kubernetes.io/metadata.name": "x"}, id="create-without-labels"),
    pytest.param(Op.CREATE, {"team": "a"}, {"team": "a", "kubernetes.io/metadata.name": "x"}, id="create-with-labels"),
    pytest.param(Op.UPDATE, {"kubernetes.io/metadata.name": "other"}, {"kubernetes.io/metadata.name": "x"},
                 id="update-cannot-change-it"),
    pytest.param(Op.UPDATE, {"team": "b"}, {"team": "b", "kubernetes.io/metadata.name": "x"},
                 id="update-cannot-remove-it"),
]


@pytest.mark.parametrize("op, labels, want", NAMESPACE_LABEL_CASES)
def test_a_namespace_carries_its_name_as_a_label(op, labels, want) -> None:
    new = obj(kinds.NAMESPACE)
    if labels is not None:
        new["metadata"]["labels"] = labels
    old = obj(kinds.NAMESPACE) if op is Op.UPDATE else None
    before = copy.deepcopy(new)
    admitted = admit.admit(op, kinds.NAMESPACE, new, old, views.default_view())
    assert admitted["metadata"]["labels"] == want and new == before
