"""Pod-spec references (Kubernetes' ValidatePodSpec subset): volumes, volumeMounts and env vars —
each bad one is one error at its path with Kubernetes' message; what Kubernetes accepts passes.
And the defaults a created pod gets: requests from limits, status.qosClass."""
import json

import pytest

from vclite.admission import pod
from vclite.api import kinds, resources
from vclite.apiserver import inprocess
from vclite.lib import clock, errors


def _spec(container_extra=None, volumes=None):
    c = {"name": "main", "command": ["true"], **(container_extra or {})}
    spec = {"containers": [c]}
    if volumes is not None:
        spec["volumes"] = volumes
    return spec


C = "p.containers[0]"


@pytest.mark.parametrize("spec, expected", [
    pytest.param(_spec({"volumeMounts": [{"name": "data", "mountPath": "/data"}]}, [{"name": "data", "emptyDir": {}}]),
                 [], id="mount-of-declared-volume"),
    pytest.param(_spec({"volumeMounts": [{"name": "data", "mountPath": "/data"}]}),
                 [(f"{C}.volumeMounts[0].name", 'Not found: "data"')], id="mount-of-no-volume"),
    pytest.param(_spec({"volumeMounts": [{"name": "data", "mountPath": "/a"}]}, [{"name": "other", "emptyDir": {}}]),
                 [(f"{C}.volumeMounts[0].name", 'Not found: "data"')], id="mount-of-other-volume"),
    pytest.param(_spec({"volumeMounts": [{"name": "d", "mountPath": "/a"}, {"name": "d", "mountPath": "/a"}]},
                       [{"name": "d"}]),
                 [(f"{C}.volumeMounts[1].mountPath", 'Invalid value: "/a": must be unique')], id="mount-path-twice"),
    pytest.param(_spec({"volumeMounts": [{"name": "d"}]}, [{"name": "d"}]),
                 [(f"{C}.volumeMounts[0].mountPath", "Required value")], id="mount-path-missing"),
    pytest.param(_spec({"volumeMounts": [{"name": "d", "mountPath": "/a", "subPath": "../x"}]}, [{"name": "d"}]),
                 [(f"{C}.volumeMounts[0].subPath", "Invalid value: \"../x\": must not contain '..'")],
                 id="subpath-escapes"),
    pytest.param(_spec(volumes=[{"name": "d"}, {"name": "d"}]),
                 [("p.volumes[1].name", 'Duplicate value: "d"')], id="volume-name-twice"),
    pytest.param(_spec(volumes=[{"emptyDir": {}}]), [("p.volumes[0].name", "Required value")], id="volume-unnamed"),
    pytest.param(_spec({"volumeMounts": [{"name": "d", "mountPath": "/a"}]}, "x"),
                 [("p.volumes", 'Invalid value: "x": must be of type array')], id="volumes-mistyped-one-error"),
    pytest.param(_spec({"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                                {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
                                {"name": "D.e-f", "value": "1"}]}),
                 [], id="env-good"),
    pytest.param(_spec({"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nope"}}}]}),
                 [(f"{C}.env[0].valueFrom.fieldRef.fieldPath", 'Unsupported value: "spec.nope": supported values: '
                   + ", ".join(f'"{p}"' for p in pod.ENV_FIELD_PATHS))], id="env-field-path-unsupported"),
    pytest.param(_spec({"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}}]}),
                 [(f"{C}.env[0].valueFrom.fieldRef.fieldPath", 'Unsupported value: "metadata.labels": supported '
                   "values: " + ", ".join(f'"{p}"' for p in pod.ENV_FIELD_PATHS))], id="env-all-labels-volume-only"),
    pytest.param(_spec({"env": [{"name": "A", "valueFrom": {}}]}),
                 [(f"{C}.env[0].valueFrom", 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, '
                   "`configMapKeyRef` or `secretKeyRef`")], id="env-no-source"),
    pytest.param(_spec({"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"},
                                                             "configMapKeyRef": {"name": "c", "key": "k"}}}]}),
                 [(f"{C}.env[0].valueFrom", 'Invalid value: "": may not have more than one field specified at a time')],
                 id="env-two-sources"),
    pytest.param(_spec({"env": [{"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}),
                 [(f"{C}.env[0].valueFrom", 'Invalid value: "": may not be specified when `value` is not empty')],
                 id="env-value-and-source"),
    pytest.param(_spec({"env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "c"}}}]}),
                 [(f"{C}.env[0].valueFrom.configMapKeyRef.key", "Required value")], id="env-configmap-key-missing"),
    pytest.param(_spec({"env": [{"value": "1"}, {"name": "A=B", "value": "1"}]}),
                 [(f"{C}.env[0].name", "Required value"),
                  (f"{C}.env[1].name", 'Invalid value: "A=B": a valid environment variable name must consist only '
                   "of printable ASCII characters other than '='")], id="env-names"),
    pytest.param(_spec({"ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "UDP"}]}), [], id="ports-good"),
    pytest.param(_spec({"ports": [{}, {"containerPort": -1}, {"containerPort": 80, "hostPort": 70000},
                                  {"containerPort": 80, "protocol": "HTTP"}]}),
                 [(f"{C}.ports[0].containerPort", "Required value"),
                  (f"{C}.ports[1].containerPort", "Invalid value: -1: must be between 1 and 65535, inclusive"),
                  (f"{C}.ports[2].hostPort", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
                  (f"{C}.ports[3].protocol", 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"')],
                 id="ports-bad"),
    # a null item of a list: the scheduler read every port of [null] and failed every session
    pytest.param(_spec({"ports": [None], "env": [None]}),
                 [(f"{C}.ports[0]", "Invalid value: null: must be of type object"),
                  (f"{C}.env[0]", "Invalid value: null: must be of type object")], id="null-items"),
    pytest.param({**_spec(), "tolerations": [None], "volumes": [None]},
                 [("p.tolerations[0]", "Invalid value: null: must be of type object"),
                  ("p.volumes[0]", "Invalid value: null: must be of type object")], id="null-pod-spec-items"),
    pytest.param({**_spec(), "activeDeadlineSeconds": 0},
                 [("p.activeDeadlineSeconds", "Invalid value: 0: must be between 1 and 2147483647, inclusive")],
                 id="deadline-zero"),
    pytest.param({**_spec(), "activeDeadlineSeconds": 2**31}, [
        ("p.activeDeadlineSeconds", "Invalid value: 2147483648: must be between 1 and 2147483647, inclusive")],
                 id="deadline-over-int32"),
    pytest.param({**_spec(), "activeDeadlineSeconds": 1, "terminationGracePeriodSeconds": -1}, [], id="seconds-in-range"),
])
def test_pod_references(spec, expected):
    errs = pod.validate_pod_spec(spec, "p", require_command=True)
    assert [(e.path, e.message) for e in errs] == expected


def _res(requests=None, limits=None):
    return _spec({"resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}})


GPU = "nvidia.com/gpu"
R = f"{C}.resources"


@pytest.mark.parametrize("spec, expected", [
    pytest.param(_res(limits={GPU: 2}), [], id="a GPU limit alone"),
    pytest.param(_res({GPU: "2"}, {GPU: 2}), [], id="a GPU request equal to its limit"),
    pytest.param(_res(limits={GPU: "500m"}), [(f"{R}.limits.{GPU}", 'Invalid value: "500m": must be an integer')],
                 id="half a GPU"),
    pytest.param(_res(limits={"volcano.sh/vgpu-memory": 0.5}),
                 [(f"{R}.limits.volcano.sh/vgpu-memory", "Invalid value: 0.5: must be an integer")],
                 id="any extended resource is whole"),
    pytest.param(_res({GPU: 1}), [(f"{R}.limits", "Required value: Limit must be set for non overcommitable "
                                                  "resources")], id="a GPU request without a limit"),
    pytest.param(_res({GPU: 1}, {GPU: 2}), [(f"{R}.requests.{GPU}", "Invalid value: 1: must be equal to "
                                                                      "nvidia.com/gpu limit of 2")],
                 id="a GPU request below its limit"),
    pytest.param(_res({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "4Mi"}),
                 [(f"{R}.requests.hugepages-2Mi", 'Invalid value: "2Mi": must be equal to hugepages-2Mi limit of '
                                                  '4Mi')], id="hugepages are not overcommitted either"),
    pytest.param(_res({"cpu": "500m", "example.kubernetes.io/x": "500m"}), [],
                 id="native resources may be fractions and requested alone"),
    pytest.param(_res({"cpu": "2"}, {"cpu": "1"}), [(f"{R}.requests.cpu", 'Invalid value: "2": must be less than '
                                                                          'or equal to cpu limit of 1')],
                 id="a cpu request over its limit"),
])
def test_extended_resources_are_whole_and_not_overcommitted(spec, expected):
    """(Kubernetes' ValidateResourceRequirements: a device plugin gives whole devices, each to one container)"""
    errs = pod.validate_pod_spec(spec, "p", require_command=True)
    assert [(e.path, e.message) for e in errs] == expected


# ---- defaults at create, through the real admission path (Kubernetes' SetDefaults_Pod, GetPodQOS) ------
def _container(name="main", requests=None, limits=None):
    res = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    return {"name": name, "image": "busybox", "command": ["true"], **({"resources": res} if res else {})}


CPU_MEM = {"cpu": "1", "memory": "1Gi"}


@pytest.mark.parametrize("containers, init, requests, qos", [
    pytest.param([_container(limits=CPU_MEM)], [], [CPU_MEM], "Guaranteed", id="limits only: requested, guaranteed"),
    pytest.param([_container(requests={"cpu": "500m"}, limits=CPU_MEM)], [], [{"cpu": "500m", "memory": "1Gi"}],
                 "Burstable", id="a request below its limit is kept"),
    pytest.param([_container(limits={"cpu": "1"})], [], [{"cpu": "1"}], "Burstable", id="cpu limit only"),
    pytest.param([_container(limits=CPU_MEM), _container("b")], [], [CPU_MEM, None], "Burstable",
                 id="one container without resources"),
    pytest.param([_container(limits=CPU_MEM)], [_container("init", limits={"cpu": "2", "memory": "1Gi"})],
                 [CPU_MEM, {"cpu": "2", "memory": "1Gi"}], "Guaranteed", id="init containers are defaulted too"),
    pytest.param([_container(limits={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})], [],
                 [{"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}], "Guaranteed",
                 id="only cpu and memory decide the class"),
    pytest.param([_container(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1"})], [],
                 [{"nvidia.com/gpu": "1"}], "BestEffort", id="no cpu or memory: best effort"),
    pytest.param([_container()], [], [None], "BestEffort", id="no resources"),
])
def test_created_pod_requests_its_limits_and_has_a_qos_class(containers, init, requests, qos):
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    spec = {"containers": containers, **({"initContainers": init} if init else {})}
    created = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    stored = client.get(kinds.POD, "default", "p")
    assert stored == created
    got = [(c.get("resources") or {}).get("requests") for c in stored["spec"]["containers"]] + \
        [(c.get("resources") or {}).get("requests") for c in stored["spec"].get("initContainers", [])]
    assert got == requests
    assert stored["status"]["qosClass"] == qos
    assert resources.pod_requests(stored) == resources.pod_requests(spec)   # the scheduler counts the same



# ---- Volcano's pod webhook: disruption budget annotations (test/e2e/admission/pod_validation_test.go) --
MIN, MAX = "volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable"


def _volcano_pod(annotations, scheduler="volcano"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                            "annotations": annotations},
            "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "command": ["true"]}]}}


@pytest.mark.parametrize("annotations, scheduler, expected", [
    pytest.param({MIN: "2"}, "volcano", None, id="valid-annotations"),
    pytest.param({MAX: "50%"}, "volcano", None, id="valid-percentage"),
    pytest.param({MIN: "-1"}, "volcano", f'metadata.annotations[{MIN}]: invalid value <"-1"> for {MIN}, it must be '
                 "a positive integer", id="negative"),
    pytest.param({MIN: "0"}, "volcano", f'metadata.annotations[{MIN}]: invalid value <"0"> for {MIN}, it must be a '
                 "positive integer", id="zero"),
    pytest.param({MAX: "0%"}, "volcano", f'metadata.annotations[{MAX}]: invalid value <"0%"> for {MAX}, it must be '
                 "a valid percentage which between 1% ~ 99%", id="percentage-0"),
    pytest.param({MAX: "100%"}, "volcano", f'metadata.annotations[{MAX}]: invalid value <"100%"> for {MAX}, it must '
                 "be a valid percentage which between 1% ~ 99%", id="percentage-100"),
    pytest.param({MIN: "invalid"}, "volcano", f'metadata.annotations[{MIN}]: invalid value strconv.Atoi: parsing '
                 f'"invalid": invalid syntax for {MIN}', id="string"),
    pytest.param({MIN: "2", MAX: "50%"}, "volcano", f"metadata.annotations[{MAX}]: not allow configure multiple "
                 f"annotations <[{MIN} {MAX}]> at same time", id="multiple-conflicting"),
    pytest.param({}, "volcano", None, id="no-annotations"),
    pytest.param({MIN: "-1"}, "default-scheduler", None, id="non-volcano-scheduler-bypasses"),
])
def test_volcano_pod_disruption_budget_annotations(annotations, scheduler, expected):
    client = inprocess.new_client(clock.VirtualClock())
    obj = _volcano_pod(annotations, scheduler)
    if expected is None:
        assert client.create(obj)
        return
    with pytest.raises(errors.Invalid) as info:
        client.create(obj)
    assert [f"{e.path}: {e.message}" for e in info.value.errors] == [expected]


@pytest.mark.parametrize("given, stored", [
    pytest.param(None, "default-scheduler", id="none-given"),
    pytest.param("", "default-scheduler", id="empty"),
    pytest.param("volcano", "volcano", id="volcano-kept"),
    pytest.param("custom-scheduler", "custom-scheduler", id="another-kept"),
])
def test_a_created_pod_without_a_scheduler_name_gets_the_default_scheduler(given, stored):
    """Kubernetes' SetDefaults_PodSpec (Volcano's e2e pod_mutate_test.go reads it back: `default-scheduler`)."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    spec = {"containers": [{"name": "c", "command": ["true"]}], **({} if given is None else {"schedulerName": given})}
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    assert client.get(kinds.POD, "default", "p")["spec"]["schedulerName"] == stored


GATE = "scheduling.volcano.sh/queue-allocation-gate"


@pytest.mark.parametrize("annotation, gates, existing, stored", [
    pytest.param("true", None, False, [GATE], id="opted-in"),
    pytest.param("true", ["example.com/other-gate"], False, ["example.com/other-gate", GATE], id="after-other-gates"),
    pytest.param("true", [GATE], False, [GATE], id="not-twice"),
    pytest.param("false", None, False, None, id="not-true"),
    pytest.param(None, None, False, None, id="no-annotation"),
    pytest.param("true", None, True, None, id="a-clusters-existing-pod"),
])
def test_a_pod_that_opts_in_is_created_with_the_queue_allocation_gate(annotation, gates, existing, stored):
    """Volcano's pod webhook patchSchedulingGates (SchedulingGatesQueueAdmission)."""
    client = inprocess.new_client(clock.VirtualClock(), require_command=False, existing_state=existing)
    md = {"name": "p", **({"annotations": {GATE: annotation}} if annotation is not None else {})}
    spec = {"containers": [{"name": "c", "command": ["true"]}],
            **({"schedulingGates": [{"name": g} for g in gates]} if gates is not None else {})}
    got = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})["spec"]
    assert ([g["name"] for g in got["schedulingGates"]] if "schedulingGates" in got else None) == stored


# ---- Volcano's pod webhook resource groups (pods/mutate/mutate_pod_test.go TestMutatePods) ------------------
LINUX = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}}
ADMISSION_CONF = """\
resourceGroups:
- resourceGroup: management
  object:
    key: namespace
    value:
    - mng-ns-1
    - mng-ns-2
  schedulerName: default-scheduler
  tolerations:
  - key: mng-taint-1
    operator: Exists
    effect: NoSchedule
  affinity: '{affinity}'
  labels:
    volcano.sh/nodetype: management
- resourceGroup: cpu
  object:
    key: annotation
    value:
    - "volcano.sh/resource-group: cpu"
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: cpu
- resourceGroup: gpu
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: gpu
""".replace("{affinity}", json.dumps(LINUX, separators=(",", ":")))


def _admission_configmap(conf: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "volcano-admission-configmap", "namespace": "volcano-system"},
            "data": {"volcano-admission.conf": conf}}


def _client_with_groups(conf: str = ADMISSION_CONF):
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    for ns in ("volcano-system", "mng-ns-1"):
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    client.create(_admission_configmap(conf))
    return client


@pytest.mark.parametrize("namespace, name, annotations, spec, expected", [
    pytest.param("mng-ns-1", "mng-pod", None, {"schedulerName": "default-scheduler"},
                 {"nodeSelector": {"volcano.sh/nodetype": "management"}, "affinity": LINUX,
                  "tolerations": [{"key": "mng-taint-1", "operator": "Exists", "effect": "NoSchedule"}],
                  "schedulerName": "default-scheduler"}, id="test-1 (namespace group)"),
    pytest.param("default", "cpu-pod", {"volcano.sh/resource-group": "cpu"}, {},
                 {"nodeSelector": {"volcano.sh/nodetype": "cpu"}, "affinity": None, "tolerations": None,
                  "schedulerName": "volcano"}, id="test-2 (annotation group)"),
    pytest.param("default", "gpu-pod", {"volcano.sh/resource-group": "gpu"}, {},
                 {"nodeSelector": {"volcano.sh/nodetype": "gpu"}, "affinity": None, "tolerations": None,
                  "schedulerName": "volcano"}, id="test-3 (group without object: by the default annotation)"),
    pytest.param("default", "normal-pod", None, {},
                 {"nodeSelector": None, "affinity": None, "tolerations": None, "schedulerName": "default-scheduler"},
                 id="test-4 (no group)"),
    # (vclite's rows: the pod's own nodeSelector, tolerations and affinity with a group's)
    pytest.param("mng-ns-1", "own", None, {"nodeSelector": {"disk": "ssd", "volcano.sh/nodetype": "x"},
                                          "tolerations": [{"key": "own", "operator": "Exists"}],
                                          "affinity": {"podAffinity": {}}},
                 {"nodeSelector": {"disk": "ssd", "volcano.sh/nodetype": "management"}, "affinity": {"podAffinity": {}},
                  "tolerations": [{"key": "own", "operator": "Exists"},
                                  {"key": "mng-taint-1", "operator": "Exists", "effect": "NoSchedule"}],
                  "schedulerName": "default-scheduler"}, id="the pod's own fields are kept"),
])
def test_resource_groups_patch_created_pods(namespace, name, annotations, spec, expected):
    client = _client_with_groups()
    md = {"name": name, "namespace": namespace, **({"annotations": annotations} if annotations else {})}
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": md,
                   "spec": {"containers": [{"name": "c", "command": ["true"]}], **spec}})
    got = client.get(kinds.POD, namespace, name)["spec"]
    assert {k: got.get(k) for k in expected} == expected


def test_a_pods_update_is_not_patched_by_its_group():
    """The webhook is registered for CREATE only: an update keeps what the pod has."""
    client = _client_with_groups()
    pod = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "command": ["true"]}]}})
    pod["metadata"]["annotations"] = {"volcano.sh/resource-group": "gpu"}
    assert "nodeSelector" not in client.update(pod)["spec"]


@pytest.mark.parametrize("conf, message", [
    pytest.param("resourceGroups: [", "data[volcano-admission.conf]: the admission configuration cannot be read: "
                 "line 1: expected the node content", id="not-yaml"),
    pytest.param("resourceGroups:\n- resourceGroup: g\n  labels: [a]\n",
                 'data[volcano-admission.conf]: resourceGroups[0].labels: Invalid value: ["a"]: must be of type '
                 "map of strings", id="labels-a-list"),
    pytest.param("resourceGroups:\n- resourceGroup: g\n  object: {key: namespace, value: ns1}\n",
                 'data[volcano-admission.conf]: resourceGroups[0].object.value: Invalid value: "ns1": must be of type '
                 "array of strings", id="value-not-a-list"),
    pytest.param("resourceGroups:\n- resourceGroup: g\n  tolerations:\n  - {operator: Sometimes}\n",
                 "data[volcano-admission.conf]: resourceGroups[0].tolerations[0].operator: Invalid value: "
                 '"Sometimes": operator must be Exists when `key` is empty', id="toleration-operator"),
    pytest.param("resourceGroups:\n- resourceGroup: g\n  affinity: linux\n",
                 'data[volcano-admission.conf]: resourceGroups[0].affinity: Invalid value: "linux": must be an '
                 "Affinity written as a JSON object", id="affinity-not-json"),
])
def test_a_bad_admission_configuration_is_refused_with_its_place(conf, message):
    client = inprocess.new_client(clock.VirtualClock(), require_command=False)
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}})
    with pytest.raises(errors.Invalid) as info:
        client.create(_admission_configmap(conf))
    assert any(str(e).startswith(message) for e in info.value.errors), info.value.errors
    with pytest.raises(errors.NotFound):
        client.get(kinds.CONFIGMAP, "volcano-system", "volcano-admission-configmap")
