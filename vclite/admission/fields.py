"""The fields each kind's schema defines, as tables, and a walk that finds the ones it does not.

kubectl's strict field validation refuses a manifest with a field its schema lacks; vclite keeps
fields it does not model (they survive a round trip), so without this a typo — `minAvaliable`,
`dependOn`, `restartPolicy` one level too deep — would be silently ignored. `vcctl validate` and
`vcctl run` report each as a warning with the closest known name; nothing is refused, since a
newer Kubernetes may add pod fields these tables do not list yet.

A schema is a dict (field name -> schema of its value, or None for a value not looked into) or a
one-item list `[schema]` for an array of such values. Pure data and pure functions.
"""
from __future__ import annotations

import difflib
from typing import Any

METADATA = dict.fromkeys((
    "name", "generateName", "namespace", "labels", "annotations", "ownerReferences", "finalizers", "uid",
    "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
    "managedFields", "selfLink"))
_CONTAINER = dict.fromkeys((
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty", "targetContainerName"))
POD_SPEC = {**dict.fromkeys((
    "volumes", "restartPolicy", "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy",
    "nodeSelector", "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName",
    "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets",
    "hostname", "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName",
    "priority", "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy",
    "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
    "resourceClaims", "resources", "hostnameOverride")),
    "containers": [_CONTAINER], "initContainers": [_CONTAINER], "ephemeralContainers": [_CONTAINER]}
POD_TEMPLATE = {"metadata": METADATA, "spec": POD_SPEC}
_POLICY = dict.fromkeys(("event", "events", "action", "exitCode", "timeout"))
_TASK = {**dict.fromkeys(("name", "replicas", "minAvailable", "topologyPolicy", "maxRetry", "dependsOn",
                          "partitionPolicy")),
         "template": POD_TEMPLATE, "policies": [_POLICY]}
JOB_SPEC = {**dict.fromkeys(("schedulerName", "minAvailable", "volumes", "plugins", "runningEstimate", "queue",
                             "maxRetry", "ttlSecondsAfterFinished", "priorityClassName", "minSuccess",
                             "networkTopology")),
            "tasks": [_TASK], "policies": [_POLICY]}
CRONJOB_SPEC = {**dict.fromkeys(("schedule", "timeZone", "startingDeadlineSeconds", "concurrencyPolicy", "suspend",
                                 "successfulJobsHistoryLimit", "failedJobsHistoryLimit")),
                "jobTemplate": {"metadata": None, "spec": JOB_SPEC}}
_HTTP_GET = {**dict.fromkeys(("taskName", "path", "port")), "httpHeader": dict.fromkeys(("name", "value"))}
_PROBE = {"httpGetList": [_HTTP_GET],
          "tcpSocketList": [dict.fromkeys(("taskName", "port"))],
          "taskStatusList": [dict.fromkeys(("taskName", "phase"))]}
_DEPENDS_ON = {**dict.fromkeys(("targets", "strategy", "expression")), "probe": _PROBE}
_FLOW = {**dict.fromkeys(("name", "when", "withItems", "withParam")),
         "dependsOn": _DEPENDS_ON, "patch": {"jobSpec": JOB_SPEC},
         "repeat": dict.fromkeys(("until", "limit")),
         "retry": {"limit": None, "backoff": dict.fromkeys(("duration", "factor", "maxDuration", "cap"))}}
JOBFLOW_SPEC = {**dict.fromkeys(("jobRetainPolicy", "onExit")), "flows": [_FLOW],
                "arguments": {"parameters": [dict.fromkeys(("name", "value"))]}}
QUEUE_SPEC = dict.fromkeys(("weight", "capability", "reclaimable", "guarantee", "deserved", "parent",
                            "extendClusters", "affinity", "type", "priority", "dequeueStrategy"))
PODGROUP_SPEC = dict.fromkeys(("minMember", "minTaskMember", "queue", "priorityClassName", "minResources",
                               "networkTopology", "subGroupPolicy"))
_LABEL_SELECTOR = {"matchLabels": None, "matchExpressions": [dict.fromkeys(("key", "operator", "values"))]}
PVC_SPEC = {**dict.fromkeys(("accessModes", "volumeName", "storageClassName", "volumeMode", "dataSource",
                             "dataSourceRef", "volumeAttributesClassName")),
            "selector": _LABEL_SELECTOR, "resources": dict.fromkeys(("limits", "requests"))}
_NODE_REQUIREMENTS = [dict.fromkeys(("key", "operator", "values"))]
PV_SPEC = {**dict.fromkeys((
    "accessModes", "capacity", "persistentVolumeReclaimPolicy", "storageClassName", "mountOptions", "volumeMode",
    "volumeAttributesClassName", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "rbd",
    "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume", "photonPersistentDisk",
    "portworxVolume", "azureDisk", "scaleIO", "storageos", "csi")),
    "claimRef": dict.fromkeys(("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")),
    "hostPath": dict.fromkeys(("path", "type")), "local": dict.fromkeys(("path", "fsType")),
    "nfs": dict.fromkeys(("server", "path", "readOnly")),
    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": _NODE_REQUIREMENTS,
                                                         "matchFields": _NODE_REQUIREMENTS}]}}}
STORAGECLASS = {**dict.fromkeys(("apiVersion", "kind", "provisioner", "parameters", "reclaimPolicy", "mountOptions",
                                 "allowVolumeExpansion", "volumeBindingMode", "allowedTopologies")),
                "metadata": METADATA}


def _object(spec: Any) -> dict:
    return {"apiVersion": None, "kind": None, "metadata": METADATA, "spec": spec, "status": None}


# by kind (apiVersion is checked by admission); kinds not listed are not looked into
BY_KIND = {
    "Job": _object(JOB_SPEC),
    "CronJob": _object(CRONJOB_SPEC),
    "JobTemplate": _object(JOB_SPEC),
    "JobFlow": _object(JOBFLOW_SPEC),
    "Queue": _object(QUEUE_SPEC),
    "PodGroup": _object(PODGROUP_SPEC),
    "Pod": _object(POD_SPEC),
    "PersistentVolumeClaim": _object(PVC_SPEC),
    "PersistentVolume": _object(PV_SPEC),
    "StorageClass": STORAGECLASS,
}


# a field other texts spell differently -> what to write: (the parent field, the name written)
RENAMED = {("patch", "spec"): ('"jobSpec"', "Volcano's API names it so; its design document, "
                                            "job-template-parameter-overriding.md, writes spec")}


def _hint(parent: str, key: str, schema: dict) -> str:
    """` (did you mean "x"?…)` for `key` under `parent`: a known other spelling, else the closest known name."""
    renamed = RENAMED.get((parent, key))
    if renamed is not None:
        return f" (did you mean {renamed[0]}? {renamed[1]})"
    close = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.75)
    return f' (did you mean "{close[0]}"?)' if close else ""


def unknown(value: Any, schema: Any, path: str = "") -> list[tuple[str, str]]:
    """(field path, message) for each field of `value` that `schema` does not define, with the
    closest known name when there is one (`unknown field "minAvaliable" (did you mean "minAvailable"?)`)."""
    if schema is None:
        return []
    if isinstance(schema, list):
        if not isinstance(value, list):
            return []
        return [u for i, item in enumerate(value) for u in unknown(item, schema[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return []
    out = []
    for key, item in value.items():
        if isinstance(key, str) and key.startswith("$"):
            continue   # a strategic-merge-patch directive ($patch, $setElementOrder/…, $retainKeys)
        where = f"{path}.{key}" if path else str(key)
        if key in schema:
            out.extend(unknown(item, schema[key], where))
            continue
        hint = _hint(path.rsplit(".", 1)[-1].split("[", 1)[0], str(key), schema)
        out.append((where, f'unknown field "{key}"{hint}: it is ignored'))
    return out


def unknown_in(obj: Any) -> list[tuple[str, str]]:
    """`unknown` for an API object of a kind in BY_KIND; [] for any other."""
    schema = BY_KIND.get(obj.get("kind")) if isinstance(obj, dict) else None
    return unknown(obj, schema) if schema is not None else []
