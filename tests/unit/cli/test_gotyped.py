"""`vcctl jobflow|jobtemplate describe` print an object as Volcano's vcctl does: decoded into the Go
type, marshalled by encoding/json (MarshalIndent) or sigs.k8s.io/yaml (go-yaml v2). The expected
texts follow the Go tags of volcano.sh/apis flow/v1alpha1 and batch/v1alpha1."""
import json

import pytest

from vclite.cli import client_common as common
from vclite.api import kinds
from vclite.cli import client_jobflow, flowtypes, gotyped

# A JobFlow as vclite stores it while its second flow runs: vclite's additions (`skippedJobs`, a
# condition's `reason`/`message`, a flow's `when`: kept after Volcano's fields), a history and a job
# without an end, a probe without `port`, a field nobody knows (`bogus`: dropped).
RUNNING = {
    "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
    "bogus": 1, "metadata": {"name": "f", "namespace": "default", "uid": "u1", "resourceVersion": "52",
                 "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [{"manager": "kubectl"}]},
    "spec": {"jobRetainPolicy": "retain", "flows": [
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"], "probe": {
            "tcpSocketList": [{"taskName": "t"}], "httpGetList": [{"taskName": "t", "path": "/ok", "port": 8080}]}},
         "when": "a.succeeded"},
    ]},
    "status": {
        "runningJobs": ["f-b"], "completedJobs": ["f-a"], "skippedJobs": ["f-c"],
        "jobStatusList": [
            {"name": "f-a", "state": "Completed", "startTimestamp": "2026-01-01T00:00:01Z",
             "endTimestamp": "2026-01-01T00:00:02Z", "restartCount": 0, "runningHistories": [
                 {"startTimestamp": "2026-01-01T00:00:01Z", "state": "Running", "endTimestamp": "2026-01-01T00:00:02Z"},
                 {"startTimestamp": "2026-01-01T00:00:02Z", "state": "Completed"}]},
            {"name": "f-b", "state": "Running", "startTimestamp": "2026-01-01T00:00:03Z"}],
        "conditions": {"f-b": {"phase": "Running", "createTime": "2026-01-01T00:00:03Z"},
                       "f-a": {"phase": "Completed", "createTime": "2026-01-01T00:00:01Z", "runningDuration": "1s",
                               "taskStatusCount": {"t": {"phase": {"Succeeded": 1}}}},
                       "f-c": {"phase": "Skipped", "reason": "DependencyNeverMet", "message": "never"}},
        "state": {"phase": "Running"}},
}
RUNNING_YAML = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  creationTimestamp: "2026-01-01T00:00:00Z"
  name: f
  namespace: default
  resourceVersion: "52"
  uid: u1
spec:
  flows:
  - name: a
  - dependsOn:
      probe:
        httpGetList:
        - httpHeader:
            name: ""
            value: ""
          path: /ok
          port: 8080
          taskName: t
        tcpSocketList:
        - port: 0
          taskName: t
      targets:
      - a
    name: b
    when: a.succeeded
  jobRetainPolicy: retain
status:
  completedJobs:
  - f-a
  conditions:
    f-a:
      createTime: "2026-01-01T00:00:01Z"
      phase: Completed
      runningDuration: 1s
      taskStatusCount:
        t:
          phase:
            Succeeded: 1
    f-b:
      createTime: "2026-01-01T00:00:03Z"
      phase: Running
    f-c:
      createTime: null
      message: never
      phase: Skipped
      reason: DependencyNeverMet
  jobStatusList:
  - endTimestamp: "2026-01-01T00:00:02Z"
    name: f-a
    runningHistories:
    - endTimestamp: "2026-01-01T00:00:02Z"
      startTimestamp: "2026-01-01T00:00:01Z"
      state: Running
    - endTimestamp: null
      startTimestamp: "2026-01-01T00:00:02Z"
      state: Completed
    startTimestamp: "2026-01-01T00:00:01Z"
    state: Completed
  - endTimestamp: null
    name: f-b
    startTimestamp: "2026-01-01T00:00:03Z"
    state: Running
  runningJobs:
  - f-b
  skippedJobs:
  - f-c
  state:
    phase: Running
"""


def test_jobflow_yaml_is_the_go_struct_marshalled():
    assert common.describe_text(client_jobflow.describe_shape(client_jobflow.JOBFLOW, RUNNING), "yaml") == RUNNING_YAML


def test_jobflow_json_follows_struct_order_and_sorts_map_keys():
    text = common.describe_text(client_jobflow.describe_shape(client_jobflow.JOBFLOW, RUNNING), "json")
    doc = json.loads(text)
    assert list(doc) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(doc["metadata"]) == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"]
    assert doc["spec"]["flows"][1] == {"name": "b", "dependsOn": {"targets": ["a"], "probe": {
        "httpGetList": [{"taskName": "t", "path": "/ok", "port": 8080, "httpHeader": {"name": "", "value": ""}}],
        "tcpSocketList": [{"taskName": "t", "port": 0}]}}, "when": "a.succeeded"}
    assert list(doc["spec"]["flows"][1]) == ["name", "dependsOn", "when"]
    assert list(doc["status"]) == ["runningJobs", "completedJobs", "jobStatusList", "conditions", "state",
                                   "skippedJobs"]
    assert list(doc["status"]["conditions"]["f-c"]) == ["phase", "createTime", "reason", "message"]
    assert list(doc["status"]["conditions"]) == ["f-a", "f-b", "f-c"]
    assert list(doc["status"]["conditions"]["f-a"]) == ["phase", "createTime", "runningDuration", "taskStatusCount"]
    assert doc["status"]["jobStatusList"][0]["runningHistories"][1] == {
        "startTimestamp": "2026-01-01T00:00:02Z", "endTimestamp": None, "state": "Completed"}
    assert list(doc["status"]["jobStatusList"][1]) == ["name", "state", "startTimestamp", "endTimestamp"]
    assert '"endTimestamp": null' in text


TEMPLATE = {
    "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
    "metadata": {"name": "a", "namespace": "default", "labels": {"z": "1", "a": "y"}},
    "spec": {"queue": "default", "maxRetry": 3, "minAvailable": 0, "tasks": [
        {"name": "t", "replicas": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"image": "busybox", "name": "c", "command": ["true"]}]}}}]},
    "status": {"jobDependsOnList": []},
}
TEMPLATE_JSON = """{
  "kind": "JobTemplate",
  "apiVersion": "flow.volcano.sh/v1alpha1",
  "metadata": {
    "name": "a",
    "namespace": "default",
    "labels": {
      "a": "y",
      "z": "1"
    }
  },
  "spec": {
    "tasks": [
      {
        "name": "t",
        "replicas": 1,
        "template": {
          "metadata": {},
          "spec": {
            "containers": [
              {
                "name": "c",
                "image": "busybox",
                "command": [
                  "true"
                ],
                "resources": {}
              }
            ],
            "restartPolicy": "Never"
          }
        }
      }
    ],
    "queue": "default",
    "maxRetry": 3
  },
  "status": {}
}
"""
TEMPLATE_YAML = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  labels:
    a: "y"
    z: "1"
  name: a
  namespace: default
spec:
  maxRetry: 3
  queue: default
  tasks:
  - name: t
    replicas: 1
    template:
      metadata: {}
      spec:
        containers:
        - command:
          - "true"
          image: busybox
          name: c
          resources: {}
        restartPolicy: Never
status: {}
"""


@pytest.mark.parametrize("fmt, want", [pytest.param("json", TEMPLATE_JSON, id="json"),
                                       pytest.param("yaml", TEMPLATE_YAML, id="yaml")])
def test_jobtemplate_pod_template_as_go_writes_it(fmt, want):
    assert common.describe_text(client_jobflow.describe_shape(client_jobflow.JOBTEMPLATE, TEMPLATE), fmt) == want


@pytest.mark.parametrize("value, typ, want", [
    pytest.param(None, gotyped.TIME, None, id="time-unset-is-null"),
    pytest.param(None, gotyped.Slice(gotyped.STR), None, id="nil-slice-is-null"),
    pytest.param({}, gotyped.Struct(gotyped.fields("a b! c~", c=gotyped.TIME)), {"b": ""}, id="struct-tags"),
    pytest.param({"a": 0, "b": 0}, gotyped.Struct(gotyped.fields("a b", a=gotyped.INT, b=gotyped.Ptr(gotyped.INT))),
                 {"b": 0}, id="zero-int-omitted-pointer-kept"),
    pytest.param({"m": {}}, gotyped.Struct(gotyped.fields("m", m=gotyped.Map(gotyped.STR))), {}, id="empty-map"),
    pytest.param({"k10": 1, "k9": 2, "K": 3}, gotyped.Map(gotyped.INT), {"K": 3, "k10": 1, "k9": 2},
                 id="map-keys-bytewise"),
])
def test_marshal(value, typ, want):
    out = gotyped.marshal(value, typ)
    assert out == want and (not isinstance(out, dict) or list(out) == list(want))


@pytest.mark.parametrize("value, want", [
    pytest.param("plain", "v: plain\n", id="plain"),
    pytest.param("52", 'v: "52"\n', id="number-double-quoted"),
    pytest.param("", 'v: ""\n', id="empty"),
    pytest.param("y", 'v: "y"\n', id="go-yaml-bool"),
    pytest.param("null", 'v: "null"\n', id="null"),
    pytest.param("2026-01-01T00:00:00Z", 'v: "2026-01-01T00:00:00Z"\n', id="timestamp"),
    pytest.param("a: b", "v: 'a: b'\n", id="not-plain-single-quoted"),
    pytest.param("one\ntwo\n", "v: |\n  one\n  two\n", id="literal-block"),
    pytest.param("one\ntwo", "v: |-\n  one\n  two\n", id="literal-block-strip"),
])
def test_go_yaml_scalars(value, want):
    assert gotyped.go_yaml({"v": value}) == want


def test_go_yaml_key_order():
    keys = ["f-x-10", "f-x-2", "f-x-1", "aB", "a_b", "b"]
    assert gotyped.go_sorted(keys) == ["a_b", "aB", "b", "f-x-1", "f-x-2", "f-x-10"]
    assert gotyped.go_yaml(dict.fromkeys(keys, 1)).splitlines()[-3:] == ["f-x-1: 1", "f-x-2: 1", "f-x-10: 1"]


# A container's resources (and the pod's overhead and resources) are core/v1 ResourceLists: maps of
# resource.Quantity, which Go decodes from a string or a number and writes as Quantity.String() (canonical),
# keys sorted — `cpu: 1` (as kubectl stores it) reads `cpu: "1"`, `1024Mi` reads `1Gi`, `1.5` reads `1500m`.
QUANTITIES = {
    "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "q"},
    "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
        "overhead": {"memory": "2048Ki", "cpu": 0.25},
        "initContainers": [{"name": "i", "image": "busybox", "resources": {"requests": {"cpu": "1000m"}}}],
        "containers": [{"name": "c", "image": "busybox", "resources": {
            "requests": {"memory": "1024Mi", "cpu": 1}, "limits": {"cpu": 1.5, "nvidia.com/gpu": "1"}}}]}}}]},
}


@pytest.mark.parametrize("fmt, want", [
    pytest.param("yaml", ["overhead:\n          cpu: 250m\n          memory: 2Mi",
                          "resources:\n            requests:\n              cpu: \"1\"\n",
                          "resources:\n            limits:\n              cpu: 1500m\n"
                          "              nvidia.com/gpu: \"1\"\n"
                          "            requests:\n              cpu: \"1\"\n              memory: 1Gi\n"], id="yaml"),
    pytest.param("json", ['"overhead": {\n              "cpu": "250m",\n              "memory": "2Mi"\n',
                          '"limits": {\n                    "cpu": "1500m",\n'
                          '                    "nvidia.com/gpu": "1"\n',
                          '"requests": {\n                    "cpu": "1",\n                    "memory": "1Gi"\n'],
                 id="json"),
])
def test_resource_quantities_as_go_writes_them(fmt, want):
    out = common.describe_text(client_jobflow.describe_shape(client_jobflow.JOBTEMPLATE, QUANTITIES), fmt)
    for part in want:
        assert part in out, out


# core/v1 structs inside a pod template, stored with their keys in another order (as kubectl sends them: sorted):
# encoding/json writes them in their Go declaration order, and a field without omitempty when unset
POD_PARTS = {
    "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "p"},
    "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
        "volumes": [{"emptyDir": {"sizeLimit": "1024Mi"}, "name": "scratch"},
                    {"hostPath": {"path": "/x"}, "name": "h"}],
        "tolerations": [{"effect": "NoSchedule", "key": "k", "operator": "Exists"}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"a": "b"}}}, "weight": 5}]},
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"operator": "In", "values": ["n1"], "key": "kubernetes.io/hostname"}]}]}}},
        "containers": [{"image": "busybox", "name": "c",
                        "env": [{"valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}, "name": "CPU"},
                                {"value": "1", "name": "ONE"}],
                        "ports": [{"protocol": "TCP", "containerPort": 80, "name": "http"}],
                        "volumeMounts": [{"mountPath": "/s", "name": "scratch"}],
                        "livenessProbe": {"periodSeconds": 3, "httpGet": {"port": "http", "path": "/"}},
                        "startupProbe": {"grpc": {"port": 9}}}]}}}]},
}


def test_pod_template_structs_in_go_field_order():
    spec = client_jobflow.describe_shape(client_jobflow.JOBTEMPLATE, POD_PARTS)["spec"]["tasks"][0]["template"]["spec"]
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
                               {"name": "h", "hostPath": {"path": "/x"}}]
    assert [list(v) for v in spec["volumes"]] == [["name", "emptyDir"], ["name", "hostPath"]]
    assert list(spec["tolerations"][0]) == ["key", "operator", "effect"]
    assert list(spec["affinity"]) == ["nodeAffinity", "podAntiAffinity"]
    [req] = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"]
    assert list(req) == ["key", "operator", "values"]
    [pref] = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert list(pref) == ["weight", "podAffinityTerm"]
    assert list(pref["podAffinityTerm"]) == ["labelSelector", "topologyKey"]
    [c] = spec["containers"]
    assert list(c) == ["name", "image", "ports", "env", "resources", "volumeMounts", "livenessProbe", "startupProbe"]
    assert c["env"] == [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}},
                        {"name": "ONE", "value": "1"}]
    assert [list(e) for e in c["env"]] == [["name", "valueFrom"], ["name", "value"]]
    assert list(c["ports"][0]) == ["name", "containerPort", "protocol"]
    assert list(c["volumeMounts"][0]) == ["name", "mountPath"]
    assert list(c["livenessProbe"]) == ["httpGet", "periodSeconds"] and list(c["livenessProbe"]["httpGet"]) == [
        "path", "port"]
    assert c["startupProbe"] == {"grpc": {"port": 9, "service": None}}


# ---- mismatch: where the Go decoder refuses a stored value ---------------------------------------------------
_T = gotyped
_STATUS = _T.Struct(_T.fields("state running conditions", state=_T.Struct(_T.fields("phase"), go="v1alpha1.JobState"),
                              running=_T.INT, conditions=_T.Slice(_T.Struct(_T.fields("status"), go="v1.Cond"))),
                    go="v1alpha1.JobStatus")
_OBJ = _T.Struct(_T.fields("metadata spec status", metadata=_T.Struct(_T.fields(
    "name creationTimestamp", creationTimestamp=_T.TIME), go="v1.ObjectMeta"), spec=_T.Struct(_T.fields(
        "tasks limits", tasks=_T.Slice(_T.Struct(_T.fields("replicas", replicas=_T.INT), go="v1alpha1.TaskSpec")),
        limits=_T.Map(_T.QUANTITY)), go="v1alpha1.JobSpec"), status=_STATUS), go="v1alpha1.Job")


@pytest.mark.parametrize("obj, path, go_type, words", [
    pytest.param({"status": "weird"}, ("status",), "v1alpha1.JobStatus", "", id="status-a-string"),
    pytest.param({"status": ["x"]}, ("status",), "v1alpha1.JobStatus", "", id="status-a-list"),
    pytest.param({"metadata": 5}, ("metadata",), "v1.ObjectMeta", "", id="metadata-a-number"),
    pytest.param({"spec": {"tasks": {"a": 1}}}, ("spec", "tasks"), "[]v1alpha1.TaskSpec", "", id="list-an-object"),
    pytest.param({"spec": {"tasks": ["t"]}}, ("spec", "tasks"), "v1alpha1.TaskSpec", "", id="item-a-string"),
    pytest.param({"spec": {"tasks": [{"replicas": 1}, {"replicas": "2"}]}}, ("spec", "tasks", "replicas"), "int32", "",
                 id="second-item-field"),
    pytest.param({"spec": {"tasks": [{"replicas": 2.5}]}}, ("spec", "tasks", "replicas"), "int32", "", id="fraction"),
    pytest.param({"spec": {"tasks": [{"replicas": 1 << 31}]}}, ("spec", "tasks", "replicas"), "int32", "",
                 id="past-int32"),
    pytest.param({"spec": {"tasks": [{"replicas": True}]}}, ("spec", "tasks", "replicas"), "int32", "", id="bool"),
    pytest.param({"spec": {"limits": ["1"]}}, ("spec", "limits"), "map[string]resource.Quantity", "", id="map-a-list"),
    pytest.param({"spec": {"limits": {"cpu": "lots"}}}, ("spec", "limits"), "resource.Quantity",
                 _T.QUANTITY_WORDS, id="no-quantity"),
    pytest.param({"status": {"state": {"phase": 5}}}, ("status", "state", "phase"), "string", "", id="nested-scalar"),
    pytest.param({"status": {"conditions": [{"status": {}}]}}, ("status", "conditions", "status"), "string", "",
                 id="in-a-list"),
    pytest.param({"metadata": {"creationTimestamp": 7}}, ("metadata", "creationTimestamp"), "v1.Time", "",
                 id="time-a-number"),
    pytest.param({"metadata": {"creationTimestamp": "soon"}}, ("metadata", "creationTimestamp"), "v1.Time",
                 'parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as a time', id="no-time"),
    pytest.param({"status": "x", "spec": {"tasks": "y"}}, ("status",), "v1alpha1.JobStatus", "",
                 id="the-first-in-the-json-order"),
])
def test_mismatch_names_the_first_field_the_go_decoder_refuses(obj, path, go_type, words):
    found = gotyped.mismatch(obj, _OBJ)
    assert (found.path, found.go_type, found.words) == (path, go_type, words), found


@pytest.mark.parametrize("obj", [
    pytest.param({}, id="empty"),
    pytest.param({"status": None, "spec": {"tasks": None, "limits": None}}, id="nulls"),
    pytest.param({"spec": {"tasks": [{"replicas": 2.0}], "limits": {"cpu": 1.5, "memory": "1Gi"}}}, id="numbers"),
    pytest.param({"metadata": {"creationTimestamp": "2026-01-02T03:04:05Z", "uid": 5}, "extra": [1]},
                 id="unknown-fields-skipped"),
    pytest.param({"status": {"state": {"phase": "Running"}, "running": 3, "conditions": [{"status": "Running"}]}},
                 id="well-formed"),
])
def test_mismatch_finds_nothing_in_what_go_decodes(obj):
    assert gotyped.mismatch(obj, _OBJ) is None


def _template(**container):
    return {"spec": {"tasks": [{"name": "t", "template": {"spec": {"containers": [
        {"name": "c", "image": "x", **container}]}}}]}}


_TASK_POD = ("spec", "tasks", "template", "spec")


@pytest.mark.parametrize("obj, path, go_type", [
    pytest.param(_template(command="sleep 1"), _TASK_POD + ("containers", "command"), "[]string", id="command"),
    pytest.param(_template(tty="yes"), _TASK_POD + ("containers", "tty"), "bool", id="tty"),
    pytest.param(_template(resources={"limits": "2"}), _TASK_POD + ("containers", "resources", "limits"),
                 "map[string]resource.Quantity", id="limits"),
    pytest.param({"spec": {"tasks": [{"template": {"spec": {"nodeSelector": ["a"]}}}]}}, _TASK_POD + ("nodeSelector",),
                 "map[string]string", id="nodeSelector"),
    pytest.param({"spec": {"tasks": [{"template": {"spec": {"hostNetwork": "true"}}}]}}, _TASK_POD + ("hostNetwork",),
                 "bool", id="hostNetwork"),
    pytest.param({"spec": {"volumes": {"mountPath": "/d"}}}, ("spec", "volumes"), "[]v1alpha1.VolumeSpec",
                 id="volumes"),
    pytest.param({"status": {"jobDependsOnList": "f"}}, ("status", "jobDependsOnList"), "[]string", id="status-list"),
])
def test_a_jobtemplate_mistyped_where_describe_reads_it(obj, path, go_type):
    found = gotyped.mismatch(obj, flowtypes.JOBTEMPLATE)
    assert (found.path, found.go_type) == (path, go_type), found


# resource.Quantity fields outside a container's resources: a vcjob's PVC template (`volumes[].volumeClaim`, a
# core/v1 PersistentVolumeClaimSpec), an ephemeral volume's claim template, a downwardAPI item's divisor — each
# written as Quantity.String() writes it; a claim's `resources` struct is never omitted (encoding/json's omitempty)
def _claim_template(volumes=None, pod_volumes=None):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "v"},
            "spec": {"volumes": volumes or [], "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                "volumes": pod_volumes or [], "containers": [{"name": "c", "image": "busybox"}]}}}]}}


@pytest.mark.parametrize("obj, want", [
    pytest.param(_claim_template([{"mountPath": "/d", "volumeClaim": {
        "resources": {"requests": {"storage": "1024Mi"}, "limits": {"storage": 2000000000}}}}]),
        {"volumeClaim": {"resources": {"limits": {"storage": "2G"}, "requests": {"storage": "1Gi"}}}},
        id="vcjob-volume-claim"),
    pytest.param(_claim_template([{"mountPath": "/d", "volumeClaim": {"storageClassName": "fast",
                                                                      "accessModes": ["ReadWriteOnce"]}}]),
                 {"volumeClaim": {"accessModes": ["ReadWriteOnce"], "resources": {}, "storageClassName": "fast"}},
                 id="claim-resources-never-omitted"),
    pytest.param(_claim_template(pod_volumes=[{"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "resources": {"requests": {"storage": "0.5Gi"}}}}}}]),
        {"volumeClaimTemplate": {"metadata": {}, "spec": {"resources": {"requests": {"storage": "512Mi"}}}}},
        id="ephemeral-claim-template"),
    pytest.param(_claim_template(pod_volumes=[{"name": "d", "downwardAPI": {"items": [
        {"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}]}}]),
        {"resourceFieldRef": {"divisor": "1", "resource": "limits.cpu"}}, id="downward-api-divisor"),
    pytest.param(_claim_template(pod_volumes=[{"name": "p", "projected": {"sources": [
        {"configMap": {"name": "cm"}},
        {"downwardAPI": {"items": [{"path": "mem", "resourceFieldRef": {"resource": "limits.memory",
                                                                        "divisor": "1024Ki"}}]}}]}}]),
        {"resourceFieldRef": {"divisor": "1Mi", "resource": "limits.memory"}}, id="projected-downward-api-divisor"),
    pytest.param(_claim_template(pod_volumes=[{"name": "p", "projected": {"defaultMode": 420, "sources": [
        {"downwardAPI": {"items": [{"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu"}}]}}]}}]),
        {"resourceFieldRef": {"divisor": "0", "resource": "limits.cpu"}}, id="projected-divisor-never-omitted"),
])
def test_volume_quantities_as_go_writes_them(obj, want):
    out = json.loads(common.describe_text(client_jobflow.describe_shape(client_jobflow.JOBTEMPLATE, obj), "json"))
    spec = out["spec"]
    found = {"vcjob": spec["volumes"][0] if spec.get("volumes") else None,
             "pod": (spec["tasks"][0]["template"]["spec"].get("volumes") or [None])[0]}

    def has(where, part):   # `part`'s keys and values somewhere inside `where`
        if isinstance(where, dict):
            if all(k in where and where[k] == v for k, v in part.items()):
                return True
            return any(has(v, part) for v in where.values())
        return isinstance(where, list) and any(has(v, part) for v in where)
    assert has(found, want), out


def test_a_claims_quantity_that_is_none_fails_in_the_go_decoders_words():
    obj = _claim_template([{"mountPath": "/d", "volumeClaim": {"resources": {"requests": {"storage": "big"}}}}])
    found = gotyped.mismatch(obj, flowtypes.JOBTEMPLATE)
    assert (found.path, found.words) == (("spec", "volumes", "volumeClaim", "resources", "requests"),
                                         gotyped.QUANTITY_WORDS), found


class _Stored:
    """A client that serves one stored object (TypedClient reads through it)."""

    def __init__(self, obj):
        self.obj = obj

    def get(self, kind, namespace, name):
        return self.obj

    def list(self, kind, *args, **kwargs):
        return [self.obj]


_PLACEHOLDER_FLOW = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
                     "spec": {"flows": [{"name": "a", "patch": {"jobSpec": {"tasks": [
                         {"name": "t", "replicas": "{{item}}"}]}}}]}}


@pytest.mark.parametrize("kind, obj", [
    pytest.param(kinds.JOBTEMPLATE, {**_template(readinessProbe={"periodSeconds": "{{params.p}}"}, stdin="{{ item }}",
                                                 resources={"requests": {"cpu": "{{params.cpu}}"}}),
                                     "kind": "JobTemplate", "metadata": {"name": "t", "namespace": "default"}},
                 id="jobtemplate-probe-bool-quantity"),
    pytest.param(kinds.JOBTEMPLATE, {"kind": "JobTemplate", "metadata": {"name": "t"},
                                     "spec": {"minAvailable": "{{params.n}}", "tasks": [
                                         {"name": "t", "replicas": "{{params.n}}"}]}}, id="jobtemplate-counts"),
    pytest.param(kinds.JOBFLOW, _PLACEHOLDER_FLOW, id="jobflow-patch"),
])
def test_typed_reads_take_a_flow_placeholder_where_a_number_goes(kind, obj):
    """JobTemplates and flow patches may hold `{{params.n}}` where a vcjob has a number (admitted; vclite's CRDs
    type those fields int-or-string): `vcctl jobtemplate get` / `jobflow get` read them (they failed: int32)."""
    client = common.TypedClient(_Stored(obj))
    assert client.get(kind, "default", "t") is obj
    assert client.list(kind, "default") == [obj]


@pytest.mark.parametrize("kind, obj, words", [
    pytest.param(kinds.JOBTEMPLATE, {"kind": "JobTemplate", "metadata": {"name": "t"},
                                     "spec": {"minAvailable": "three"}}, "JobTemplate.spec.minAvailable of type int32",
                 id="jobtemplate-word"),
    pytest.param(kinds.JOB, {"kind": "Job", "metadata": {"name": "j"}, "spec": {"minAvailable": "{{params.n}}"}},
                 "Job.spec.minAvailable of type int32", id="vcjob-placeholder"),
])
def test_typed_reads_refuse_other_strings_where_a_number_goes(kind, obj, words):
    with pytest.raises(common.CommandError, match=words):
        common.TypedClient(_Stored(obj)).get(kind, "default", "t")
