"""The JSON types of the pod-spec fields vclite reads, as tables, and one checker over them.

Kubernetes rejects a wrongly typed field when it decodes the object; vclite's objects are plain
dicts, so without this a `nodeSelector: [a]` or an `env: {A: "1"}` would be admitted and break the
scheduler or the executor later. A shape is STR, INT, BOOL, ANY, STR_MAP (an object of strings),
a one-item list `[shape]` (an array of that shape) or a dict (an object whose named fields have
those shapes; other fields are not checked). Pure data and one pure function.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import common
from vclite.lib import errors

FieldError = errors.FieldError
STR, INT, BOOL, ANY, STR_MAP = "string", "integer", "boolean", "any", "map of strings"
INT_OR_STR = "integer or string"   # intstr.IntOrString: a probe's or a lifecycle handler's port

_REQUIREMENT = {"key": STR, "operator": STR, "values": [STR]}
_NODE_SELECTOR_TERM = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
_LABEL_SELECTOR = {"matchLabels": STR_MAP, "matchExpressions": [_REQUIREMENT]}
_POD_AFFINITY_TERM = {"labelSelector": _LABEL_SELECTOR, "namespaceSelector": _LABEL_SELECTOR,
                      "namespaces": [STR], "topologyKey": STR}
_POD_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": [_POD_AFFINITY_TERM],
                 "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": INT,
                                                                      "podAffinityTerm": _POD_AFFINITY_TERM}]}
AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_NODE_SELECTOR_TERM]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": INT, "preference": _NODE_SELECTOR_TERM}]},
    "podAffinity": _POD_AFFINITY,
    "podAntiAffinity": _POD_AFFINITY,
}
_KEY_REF = {"name": STR, "key": STR, "optional": BOOL}
ENV_VAR = {"name": STR, "value": STR, "valueFrom": {
    "fieldRef": {"fieldPath": STR, "apiVersion": STR}, "configMapKeyRef": _KEY_REF, "secretKeyRef": _KEY_REF,
    "resourceFieldRef": {"resource": STR, "containerName": STR, "divisor": ANY}}}
ENV_FROM = {"prefix": STR, "configMapRef": {"name": STR, "optional": BOOL}, "secretRef": {"name": STR, "optional": BOOL}}
PORT = {"name": STR, "containerPort": INT, "hostPort": INT, "protocol": STR, "hostIP": STR}
VOLUME_MOUNT = {"name": STR, "mountPath": STR, "subPath": STR, "readOnly": BOOL, "subPathExpr": STR,
                "mountPropagation": STR, "recursiveReadOnly": STR}
_HTTP_GET = {"path": STR, "port": INT_OR_STR, "host": STR, "scheme": STR,
             "httpHeaders": [{"name": STR, "value": STR}]}
_TCP_SOCKET = {"port": INT_OR_STR, "host": STR}
_EXEC = {"command": [STR]}
PROBE = {"exec": _EXEC, "httpGet": _HTTP_GET, "tcpSocket": _TCP_SOCKET, "grpc": {"port": INT, "service": STR},
         **{key: INT for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                                 "failureThreshold", "terminationGracePeriodSeconds")}}
_HANDLER = {"exec": _EXEC, "httpGet": _HTTP_GET, "tcpSocket": _TCP_SOCKET, "sleep": {"seconds": INT}}
LIFECYCLE = {"postStart": _HANDLER, "preStop": _HANDLER, "stopSignal": STR}
_SE_LINUX = {key: STR for key in ("user", "role", "type", "level")}
_PROFILE = {"type": STR, "localhostProfile": STR}
_WINDOWS = {"gmsaCredentialSpecName": STR, "gmsaCredentialSpec": STR, "runAsUserName": STR, "hostProcess": BOOL}
SECURITY_CONTEXT = {"capabilities": {"add": [STR], "drop": [STR]}, "privileged": BOOL, "seLinuxOptions": _SE_LINUX,
                    "windowsOptions": _WINDOWS, "runAsUser": INT, "runAsGroup": INT, "runAsNonRoot": BOOL,
                    "readOnlyRootFilesystem": BOOL, "allowPrivilegeEscalation": BOOL, "procMount": STR,
                    "seccompProfile": _PROFILE, "appArmorProfile": _PROFILE}
POD_SECURITY_CONTEXT = {"seLinuxOptions": _SE_LINUX, "windowsOptions": _WINDOWS, "runAsUser": INT, "runAsGroup": INT,
                        "runAsNonRoot": BOOL, "supplementalGroups": [INT], "supplementalGroupsPolicy": STR,
                        "fsGroup": INT, "sysctls": [{"name": STR, "value": STR}], "fsGroupChangePolicy": STR,
                        "seccompProfile": _PROFILE, "appArmorProfile": _PROFILE, "seLinuxChangePolicy": STR}
# (name, command, args and resources have their own checks in pod.py)
CONTAINER = {"image": STR, "imagePullPolicy": STR, "workingDir": STR, "env": [ENV_VAR], "envFrom": [ENV_FROM],
             "ports": [PORT], "volumeMounts": [VOLUME_MOUNT], "terminationMessagePath": STR,
             "terminationMessagePolicy": STR, "livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE,
             "lifecycle": LIFECYCLE, "securityContext": SECURITY_CONTEXT, "stdin": BOOL, "stdinOnce": BOOL,
             "tty": BOOL, "restartPolicy": STR, "resizePolicy": [{"resourceName": STR, "restartPolicy": STR}],
             "volumeDevices": [{"name": STR, "devicePath": STR}]}
VOLUME = {"name": STR, "configMap": {"name": STR, "optional": BOOL, "defaultMode": INT,
                                     "items": [{"key": STR, "path": STR, "mode": INT}]},
          "hostPath": {"path": STR, "type": STR}, "emptyDir": {"medium": STR, "sizeLimit": ANY}}
TOLERATION = {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": INT}
# (containers and initContainers are checked one by one in pod.py)
POD_SPEC = {"nodeSelector": STR_MAP, "affinity": AFFINITY, "tolerations": [TOLERATION], "volumes": [VOLUME],
            "nodeName": STR, "schedulerName": STR, "priorityClassName": STR, "priority": INT, "hostNetwork": BOOL,
            "hostname": STR, "subdomain": STR, "dnsPolicy": STR, "serviceAccountName": STR,
            "terminationGracePeriodSeconds": INT, "activeDeadlineSeconds": INT, "schedulingGates": [{"name": STR}],
            "securityContext": POD_SECURITY_CONTEXT, "imagePullSecrets": [{"name": STR}], "hostPID": BOOL,
            "hostIPC": BOOL, "shareProcessNamespace": BOOL, "automountServiceAccountToken": BOOL,
            "enableServiceLinks": BOOL, "setHostnameAsFQDN": BOOL, "hostUsers": BOOL, "serviceAccount": STR,
            "preemptionPolicy": STR, "runtimeClassName": STR, "readinessGates": [{"conditionType": STR}],
            "dnsConfig": {"nameservers": [STR], "searches": [STR], "options": [{"name": STR, "value": STR}]},
            "hostAliases": [{"ip": STR, "hostnames": [STR]}], "os": {"name": STR},
            "topologySpreadConstraints": [{"maxSkew": INT, "topologyKey": STR, "whenUnsatisfiable": STR,
                                           "labelSelector": _LABEL_SELECTOR, "minDomains": INT,
                                           "nodeAffinityPolicy": STR, "nodeTaintsPolicy": STR,
                                           "matchLabelKeys": [STR]}]}
# the whole pod spec as a Pod's decoder reads it (null_items_zeroed), its containers included
_DECODED_CONTAINER = {**CONTAINER, "name": STR, "command": [STR], "args": [STR]}
POD_SPEC_DECODED = {**POD_SPEC, "containers": [_DECODED_CONTAINER], "initContainers": [_DECODED_CONTAINER]}
TEMPLATE_METADATA = {"name": STR, "namespace": STR, "labels": STR_MAP, "annotations": STR_MAP}
TAINT = {"key": STR, "value": STR, "effect": STR, "timeAdded": STR}
CONDITION = {"type": STR, "status": STR, "reason": STR, "message": STR, "lastTransitionTime": STR,
             "lastHeartbeatTime": STR, "lastProbeTime": STR}
_NODE_INFO = {f: STR for f in ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                               "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion", "operatingSystem",
                               "architecture")}
# (capacity and allocatable quantities are checked by statuswrites.py, or parsed by whoever reads them)
NODE_STATUS = {"capacity": {}, "allocatable": {}, "conditions": [CONDITION], "phase": STR,
               "addresses": [{"type": STR, "address": STR}], "nodeInfo": _NODE_INFO,
               "daemonEndpoints": {"kubeletEndpoint": {"Port": INT}}, "images": [{"names": [STR], "sizeBytes": INT}],
               "volumesInUse": [STR]}
NODE = {"metadata": TEMPLATE_METADATA, "spec": {"unschedulable": BOOL, "taints": [TAINT], "podCIDR": STR,
                                                "podCIDRs": [STR], "providerID": STR},
        "status": NODE_STATUS}
_CONTAINER_STATE = {"waiting": {"reason": STR, "message": STR}, "running": {"startedAt": STR},
                    "terminated": {"exitCode": INT, "signal": INT, "reason": STR, "message": STR, "startedAt": STR,
                                   "finishedAt": STR, "containerID": STR}}
_CONTAINER_STATUS = {"name": STR, "state": _CONTAINER_STATE, "lastState": _CONTAINER_STATE, "ready": BOOL,
                     "restartCount": INT, "image": STR, "imageID": STR, "containerID": STR, "started": BOOL}
SERVICE_STATUS = {"conditions": [{**CONDITION, "observedGeneration": INT}], "loadBalancer": {"ingress": [{
    "ip": STR, "hostname": STR, "ipMode": STR, "ports": [{"port": INT, "protocol": STR, "error": STR}]}]}}
# (phase, podIPs, hostIPs and nominatedNodeName have their own checks in statuswrites.py)
POD_STATUS = {"conditions": [{**CONDITION, "observedGeneration": INT}], "observedGeneration": INT,
              "message": STR, "reason": STR, "hostIP": STR, "podIP": STR,
              "startTime": STR, "qosClass": STR, "initContainerStatuses": [_CONTAINER_STATUS],
              "containerStatuses": [_CONTAINER_STATUS], "ephemeralContainerStatuses": [_CONTAINER_STATUS]}
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def map_of(shape: Any) -> tuple[str, Any]:
    """An object whose every value has `shape` (its keys are free: task names, vcjob names, …)."""
    return ("map", shape)


# The statuses of Volcano's kinds, as their CRDs type them (the fields vclite's controllers and vcctl
# read): a client's status write of another type is refused (a cluster's schema validation refuses it too)
# instead of failing the controllers' syncs and vcctl's tables. vclite's own extra fields are not listed.
_TASK_STATUS = map_of({"phase": map_of(INT)})
JOB_STATUS = {"state": {"phase": STR, "reason": STR, "message": STR, "lastTransitionTime": STR},
              "minAvailable": INT, "taskStatusCount": _TASK_STATUS, "pending": INT, "running": INT,
              "succeeded": INT, "failed": INT, "terminating": INT, "unknown": INT, "version": INT,
              "retryCount": INT, "runningDuration": STR, "controlledResources": STR_MAP,
              "conditions": [{"status": STR, "lastTransitionTime": STR}]}
_HISTORY = {"startTimestamp": STR, "endTimestamp": STR, "state": STR}
JOBFLOW_STATUS = {**{key: [STR] for key in ("pendingJobs", "runningJobs", "failedJobs", "completedJobs",
                                            "terminatedJobs", "unKnowJobs")},
                  "jobStatusList": [{"name": STR, "state": STR, "startTimestamp": STR, "endTimestamp": STR,
                                     "restartCount": INT, "runningHistories": [_HISTORY]}],
                  "conditions": map_of({"phase": STR, "createTime": STR, "runningDuration": STR,
                                        "taskStatusCount": _TASK_STATUS}),
                  "state": {"phase": STR}}
PODGROUP_STATUS = {"phase": STR, "conditions": [{**CONDITION, "transitionID": STR}], "running": INT,
                   "succeeded": INT, "failed": INT}
QUEUE_STATUS = {"state": STR, "unknown": INT, "pending": INT, "running": INT, "inqueue": INT, "completed": INT}
_REFERENCE = {key: STR for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")}
CRONJOB_STATUS = {"active": [_REFERENCE], "lastScheduleTime": STR, "lastSuccessfulTime": STR}
HYPERNODE_STATUS = {"conditions": [{**CONDITION, "observedGeneration": INT}], "nodeCount": INT}
STATUS = {"Job": JOB_STATUS, "JobFlow": JOBFLOW_STATUS, "PodGroup": PODGROUP_STATUS, "Queue": QUEUE_STATUS,
          "CronJob": CRONJOB_STATUS, "HyperNode": HYPERNODE_STATUS, "JobTemplate": {"jobDependsOnList": [STR]}}

_SCALARS = {STR: (str,), BOOL: (bool,)}


def _name(shape: Any) -> str:
    """A shape's JSON type, as a field error names it."""
    return "array" if isinstance(shape, list) else "object" if isinstance(shape, (dict, tuple)) or shape == STR_MAP \
        else shape


def _fits(value: Any, shape: Any) -> bool:
    """Whether `value` is a scalar of scalar `shape` (or null, or anything for ANY) — what `check` would accept
    without looking further; False also for the shapes it has to look into (objects, arrays, string maps)."""
    if value is None or shape == ANY:
        return True
    if shape == STR:
        return isinstance(value, str)
    if shape == INT:
        return common.is_int(value)
    if shape == INT_OR_STR:
        return common.is_int(value) or isinstance(value, str)
    return shape == BOOL and isinstance(value, bool)


def check(value: Any, shape: Any, path: str, crd: bool = False) -> list[FieldError]:
    """Every place in `value` (absent or null: fine — but not a null item of an array: the scheduler
    and the executor read every item) that does not have `shape`, as field errors; `crd`: in the words of a CRD's
    schema validation (a vcjob's pod template: `… in body must be of type string: "null"`).
    (A field's path is made only for the fields looked into: most are scalars of their shape.)"""
    if value is None or shape == ANY:
        return []
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [_type_error(path, value, "array", crd)]
        item_shape = shape[0]
        return [e for i, item in enumerate(value) for e in (
            [_type_error(f"{path}[{i}]", None, _name(item_shape), crd)]
            if item is None and item_shape != ANY
            else () if _fits(item, item_shape) else check(item, item_shape, f"{path}[{i}]", crd))]
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return [_type_error(path, value, "object", crd)]
        errs: list[FieldError] = []
        for key, item in value.items():   # (in the document's order; _fits written out: most fields are scalars)
            sub = shape.get(key)
            if sub is None or item is None or sub == ANY or (sub == STR and isinstance(item, str)) \
                    or (sub == INT and common.is_int(item)) or (sub == BOOL and isinstance(item, bool)):
                continue
            errs += check(item, sub, f"{path}.{key}", crd)
        return errs
    if isinstance(shape, tuple):   # map_of
        if not isinstance(value, dict):
            return [_type_error(path, value, "object", crd)]
        return [e for key, item in value.items() for e in check(item, shape[1], f"{path}.{key}", crd)]
    if shape == STR_MAP:
        if not isinstance(value, dict):
            return [_type_error(path, value, "object", crd)]
        return [_type_error(f"{path}.{k}", v, "string", crd) for k, v in value.items() if not isinstance(v, str)]
    if shape == INT:
        return [] if common.is_int(value) else [_type_error(path, value, "integer", crd)]
    if shape == INT_OR_STR:
        return [] if _fits(value, shape) else [FieldError(path, common.type_error(value, shape))]
    return [] if isinstance(value, _SCALARS[shape]) else [_type_error(path, value, shape, crd)]


def _type_error(path: str, value: Any, type_name: str, crd: bool) -> FieldError:
    return FieldError(path, common.crd_type_error(path, value, type_name) if crd else
                      common.type_error(value, type_name))


_ZERO = {STR: "", INT: 0, BOOL: False, INT_OR_STR: 0}


def _zero(shape: Any) -> Any:
    """What Go's JSON decoder leaves in an item that was null: the zero value of its type (an object's: `{}`);
    None where the zero is itself null (a slice, a map) or the type is not known."""
    return {} if isinstance(shape, dict) else _ZERO.get(shape) if isinstance(shape, str) else None


def null_items_zeroed(value: Any, shape: Any) -> None:
    """Read `value` as kube-apiserver decodes a built-in kind (a Pod): a null item of an array, or value of a
    string map, becomes its type's zero value (`command: ["a", null]` is stored `["a", ""]`; `containers: [null]`
    a container `{}` validation then finds nameless), in place. Only the fields of `shape` are looked into; a
    null field of an object stays (it is the field left unset). CRDs (vcjobs, JobTemplates) are not decoded so:
    their schema refuses such an item."""
    if isinstance(shape, list) and isinstance(value, list):
        for i, item in enumerate(value):
            if item is None:
                zero = _zero(shape[0])
                if zero is not None:
                    value[i] = zero
            else:
                null_items_zeroed(item, shape[0])
    elif isinstance(shape, dict) and isinstance(value, dict):
        for key, item in value.items():
            sub = shape.get(key)
            if sub is not None and isinstance(item, (list, dict)):
                null_items_zeroed(item, sub)
    elif isinstance(shape, tuple) and isinstance(value, dict):   # map_of
        for item in value.values():
            null_items_zeroed(item, shape[1])
    elif shape == STR_MAP and isinstance(value, dict):
        for key, item in value.items():
            if item is None:
                value[key] = ""
