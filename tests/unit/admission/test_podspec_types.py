"""A pod spec's typed fields with a value of the wrong JSON type — a boolean in a probe's `exec.command`, a
number as an env value, a string as a port — refused at admission with the field's path, wherever a pod spec
is written: a bare Pod, a vcjob's task, a JobTemplate, a CronJob's job template (kube-apiserver refuses a Pod's at
decode: `json: cannot unmarshal bool into Go struct field ExecAction…exec.command of type string`; a CRD's in its
schema validation's words, naming the item: `…command[0] in body must be of type string: "boolean"`). Nothing is
stored."""
from __future__ import annotations

import copy

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock, errors

CONTAINER = {"name": "c", "image": "busybox", "command": ["true"]}
POD_SPEC = {"restartPolicy": "Never", "containers": [CONTAINER]}


def _pod(spec):
    return kinds.POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
                       "spec": spec}, "spec"


def _job_spec(spec):
    return {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{"name": "t", "replicas": 1,
                                                                      "template": {"spec": spec}}]}


def _vcjob(spec):
    return kinds.JOB, {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                       "metadata": {"name": "x", "namespace": "default"}, "spec": _job_spec(spec)}, \
        "spec.tasks[0].template.spec"


def _jobtemplate(spec):
    return kinds.JOBTEMPLATE, {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                               "metadata": {"name": "x", "namespace": "default"}, "spec": _job_spec(spec)}, \
        "spec.tasks[0].template.spec"


def _cronjob(spec):
    return kinds.CRONJOB, {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                           "metadata": {"name": "x", "namespace": "default"},
                           "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": _job_spec(spec)}}}, \
        "spec.jobTemplate.spec.tasks[0].template.spec"


WRITERS = {"pod": _pod, "vcjob": _vcjob, "jobtemplate": _jobtemplate, "cronjob": _cronjob}

# (where in the pod spec, the value written there, the path of the error below the pod spec, the type wanted)
CASES = [
    ("containers[0].livenessProbe.exec.command", [True], "containers[0].livenessProbe.exec.command[0]", "string"),
    ("containers[0].readinessProbe.exec.command", ["cat", 1], "containers[0].readinessProbe.exec.command[1]",
     "string"),
    ("containers[0].startupProbe.httpGet.port", True, "containers[0].startupProbe.httpGet.port",
     "integer or string"),
    ("containers[0].livenessProbe.periodSeconds", "10", "containers[0].livenessProbe.periodSeconds", "integer"),
    ("containers[0].livenessProbe.tcpSocket.port", [80], "containers[0].livenessProbe.tcpSocket.port",
     "integer or string"),
    ("containers[0].readinessProbe.httpGet.httpHeaders", [{"name": "X", "value": 1}],
     "containers[0].readinessProbe.httpGet.httpHeaders[0].value", "string"),
    ("containers[0].lifecycle.preStop.exec.command", [False], "containers[0].lifecycle.preStop.exec.command[0]",
     "string"),
    ("containers[0].lifecycle.postStart.sleep.seconds", "5", "containers[0].lifecycle.postStart.sleep.seconds",
     "integer"),
    ("containers[0].securityContext.runAsUser", "1000", "containers[0].securityContext.runAsUser", "integer"),
    ("containers[0].securityContext.privileged", "yes", "containers[0].securityContext.privileged", "boolean"),
    ("containers[0].securityContext.capabilities.add", [1], "containers[0].securityContext.capabilities.add[0]",
     "string"),
    ("containers[0].args", [True], "containers[0].args", "array of strings"),
    ("containers[0].env", [{"name": "A", "value": 1}], "containers[0].env[0].value", "string"),
    ("containers[0].ports", [{"containerPort": "80"}], "containers[0].ports[0].containerPort", "integer"),
    ("containers[0].tty", "true", "containers[0].tty", "boolean"),
    ("containers[0].stdin", 1, "containers[0].stdin", "boolean"),
    ("containers[0].terminationMessagePolicy", 1, "containers[0].terminationMessagePolicy", "string"),
    ("securityContext.fsGroup", "2000", "securityContext.fsGroup", "integer"),
    ("securityContext.supplementalGroups", ["1"], "securityContext.supplementalGroups[0]", "integer"),
    ("hostPID", "true", "hostPID", "boolean"),
    ("automountServiceAccountToken", "false", "automountServiceAccountToken", "boolean"),
    ("imagePullSecrets", [{"name": 1}], "imagePullSecrets[0].name", "string"),
    ("dnsConfig.nameservers", [1], "dnsConfig.nameservers[0]", "string"),
    ("topologySpreadConstraints", [{"maxSkew": "1", "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
     "topologySpreadConstraints[0].maxSkew", "integer"),
]


def _set(spec, dotted, value):
    """`spec` with `value` at `dotted` (`a.b[0].c`), objects made on the way."""
    out = copy.deepcopy(spec)
    node = out
    parts = dotted.replace("]", "").replace("[", ".").split(".")
    for part, nxt in zip(parts, parts[1:] + [None]):
        key = int(part) if part.isdigit() else part
        if nxt is None:
            node[key] = value
        else:
            if isinstance(key, str) and key not in node:
                node[key] = {}
            node = node[key]
    return out


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("where, value, path, wanted", CASES, ids=[c[0] for c in CASES])
def test_a_wrongly_typed_pod_spec_field_is_refused_naming_it(writer, where, value, path, wanted):
    client = inprocess.new_client(clock.VirtualClock())
    kind, obj, base = WRITERS[writer](_set(POD_SPEC, where, value))
    with pytest.raises(errors.Invalid) as err:
        client.create(obj)
    problems = [(e.path, e.message) for e in err.value.errors]
    if writer != "pod" and wanted == "array of strings":   # (a CRD's schema names the item)
        path, wanted = f"{path}[0]", "string"
    assert [p for p, m in problems if f"must be of type {wanted}" in m] == [f"{base}.{path}"], problems
    if writer != "pod" and wanted != "integer or string":   # (an IntOrString's schema is not one type)
        assert [m for p, m in problems if f"{base}.{path} in body must be of type {wanted}: " in m], problems
    assert client.list(kind, "default") == []


@pytest.mark.parametrize("writer", list(WRITERS))
def test_the_right_types_pass(writer):
    spec = _set(POD_SPEC, "containers[0].livenessProbe", {
        "exec": {"command": ["cat", "/tmp/ok"]}, "periodSeconds": 5, "failureThreshold": 3})
    spec = _set(spec, "containers[0].readinessProbe", {"httpGet": {"port": "http", "path": "/"}})
    spec = _set(spec, "containers[0].startupProbe", {"tcpSocket": {"port": 8080}})
    spec = _set(spec, "containers[0].lifecycle", {"preStop": {"exec": {"command": ["sleep", "1"]}}})
    spec = _set(spec, "containers[0].securityContext", {"runAsUser": 1000, "privileged": False,
                                                         "capabilities": {"add": ["NET_ADMIN"]}})
    spec = _set(spec, "securityContext", {"fsGroup": 2000, "supplementalGroups": [1, 2]})
    client = inprocess.new_client(clock.VirtualClock())
    kind, obj, _ = WRITERS[writer](spec)
    client.create(obj)
    assert len(client.list(kind, "default")) == 1


# (where in the pod spec, the value written there, what a Pod stores there, else the error below the pod spec)
NULL_ITEMS = [
    ("containers[0].command", [None], [""], None),
    ("containers[0].args", ["a", None], ["a", ""], None),
    ("containers[0].livenessProbe.exec.command", ["cat", None], ["cat", ""], None),
    ("containers[0].securityContext.capabilities.drop", [None], [""], None),
    ("securityContext.supplementalGroups", [1, None], [1, 0], None),
    ("dnsConfig.searches", [None], [""], None),
    ("nodeSelector", {"zone": None}, {"zone": ""}, None),
    ("containers[0].env", [None], [{}], "containers[0].env[0].name: Required value"),
    ("volumes", [None], [{}], "volumes[0].name: Required value"),
]


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("where, value, stored, problem", NULL_ITEMS, ids=[c[0] for c in NULL_ITEMS])
def test_a_null_item_is_read_as_a_pod_decodes_it_and_refused_by_a_crd(writer, where, value, stored, problem):
    """kube-apiserver decodes a Pod into its Go types: a null item of a typed array (or value of a string map) is
    left its zero value — `""`, `0`, an empty struct, which validation then may refuse (a nameless env var). A
    vcjob, JobTemplate or CronJob is a CRD: its structural schema refuses a null where it types a string,
    integer or object (`must be of type string: "null"`)."""
    client = inprocess.new_client(clock.VirtualClock())
    kind, obj, base = WRITERS[writer](_set(POD_SPEC, where, value))
    if writer == "pod" and problem is None:
        created = client.create(obj)
        node = created["spec"]
        for part in where.replace("]", "").replace("[", ".").split("."):
            node = node[int(part) if part.isdigit() else part]
        assert node == stored
        return
    with pytest.raises(errors.Invalid) as err:
        client.create(obj)
    if writer == "pod":
        assert problem in str(err.value), err.value
    else:
        assert any(e.path.startswith(f"{base}.{where.split('.')[0]}") for e in err.value.errors), err.value
    assert client.list(kind, "default") == []
