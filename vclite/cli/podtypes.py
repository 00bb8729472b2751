"""The k8s.io/api core/v1 types inside a pod template that `describe` (flowtypes.py) orders as Go declares them:
object metadata, volumes (an emptyDir, an ephemeral volume's claim template, downwardAPI items), a
PersistentVolumeClaimSpec (a vcjob's `volumes[].volumeClaim` too), volume mounts, env vars, container ports,
probes, affinity and tolerations, as `gotyped` nodes (field
order, `omitempty` tags). encoding/json writes a struct's fields in that order whatever order they were stored
in (`{"name": "scratch", "emptyDir": {}}`), and a field without `omitempty` even when unset (a resourceFieldRef's
`divisor: "0"`). Fields these do not list are kept after them, as written (a volume's source, an unlisted
handler): a value vclite does not model is never dropped.
"""
from __future__ import annotations

import functools

from vclite.cli.gotyped import BOOL, INT, INT64, QUANTITY, RAW, STR, TIME, Map, Ptr, Slice, Struct, fields

K = functools.partial(Struct, keep_unknown=True)   # (a core/v1 struct listed only as far as it matters here)

OWNER_REFERENCE = Struct(fields("apiVersion! kind! name! uid! controller blockOwnerDeletion",
                                controller=Ptr(BOOL), blockOwnerDeletion=Ptr(BOOL)), go="v1.OwnerReference")
OBJECT_META = Struct(fields(
    "name generateName namespace selfLink uid resourceVersion generation creationTimestamp~ deletionTimestamp "
    "deletionGracePeriodSeconds labels annotations ownerReferences finalizers managedFields",
    generation=INT64, creationTimestamp=TIME, deletionTimestamp=Ptr(TIME), deletionGracePeriodSeconds=Ptr(INT64),
    labels=Map(STR), annotations=Map(STR), ownerReferences=Slice(OWNER_REFERENCE), finalizers=Slice(STR),
    managedFields=RAW), go="v1.ObjectMeta")

VOLUME_MOUNT = K(fields("name! readOnly recursiveReadOnly mountPath! subPath mountPropagation subPathExpr",
                        readOnly=BOOL, recursiveReadOnly=Ptr(STR), mountPropagation=Ptr(STR)), go="v1.VolumeMount")
RESOURCE_FIELD_REF = K(fields("containerName resource! divisor", divisor=QUANTITY), go="v1.ResourceFieldSelector")
_KEY_REF = K(fields("name key! optional", optional=Ptr(BOOL)), go="v1.ConfigMapKeySelector")
ENV_VAR_SOURCE = K(fields("fieldRef resourceFieldRef configMapKeyRef secretKeyRef",
                          fieldRef=Ptr(K(fields("apiVersion fieldPath!"), go="v1.ObjectFieldSelector")),
                          resourceFieldRef=Ptr(RESOURCE_FIELD_REF),
                          configMapKeyRef=Ptr(_KEY_REF), secretKeyRef=Ptr(_KEY_REF)), go="v1.EnvVarSource")
ENV_VAR = K(fields("name! value valueFrom", valueFrom=Ptr(ENV_VAR_SOURCE)), go="v1.EnvVar")
CONTAINER_PORT = K(fields("name hostPort containerPort! protocol hostIP", hostPort=INT, containerPort=INT),
                   go="v1.ContainerPort")
PROBE = K(fields(
    "exec httpGet tcpSocket grpc initialDelaySeconds timeoutSeconds periodSeconds successThreshold "
    "failureThreshold terminationGracePeriodSeconds",
    exec=Ptr(K(fields("command", command=Slice(STR)), go="v1.ExecAction")),
    httpGet=Ptr(K(fields("path port! host scheme httpHeaders", port=RAW,
                         httpHeaders=Slice(K(fields("name! value!"), go="v1.HTTPHeader"))), go="v1.HTTPGetAction")),
    tcpSocket=Ptr(K(fields("port! host", port=RAW), go="v1.TCPSocketAction")),
    grpc=Ptr(K(fields("port! service!", port=INT, service=Ptr(STR)), go="v1.GRPCAction")),
    initialDelaySeconds=INT, timeoutSeconds=INT, periodSeconds=INT, successThreshold=INT, failureThreshold=INT,
    terminationGracePeriodSeconds=Ptr(INT64)), go="v1.Probe")

_REQUIREMENT = K(fields("key! operator! values", values=Slice(STR)), go="v1.NodeSelectorRequirement")
_NODE_TERM = K(fields("matchExpressions matchFields", matchExpressions=Slice(_REQUIREMENT),
                      matchFields=Slice(_REQUIREMENT)), go="v1.NodeSelectorTerm")
_LABEL_SELECTOR = K(fields("matchLabels matchExpressions", matchLabels=Map(STR),
                           matchExpressions=Slice(_REQUIREMENT)), go="v1.LabelSelector")
_POD_TERM = K(fields("labelSelector namespaces topologyKey! namespaceSelector matchLabelKeys mismatchLabelKeys",
                     labelSelector=Ptr(_LABEL_SELECTOR), namespaces=Slice(STR), namespaceSelector=Ptr(_LABEL_SELECTOR),
                     matchLabelKeys=Slice(STR), mismatchLabelKeys=Slice(STR)), go="v1.PodAffinityTerm")
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_POD_AFFINITY = K(fields(f"{_REQUIRED} {_PREFERRED}", **{
    _REQUIRED: Slice(_POD_TERM),
    _PREFERRED: Slice(K(fields("weight! podAffinityTerm!", weight=INT, podAffinityTerm=_POD_TERM),
                        go="v1.WeightedPodAffinityTerm"))}), go="v1.PodAffinity")
AFFINITY = K(fields("nodeAffinity podAffinity podAntiAffinity", podAffinity=Ptr(_POD_AFFINITY),
                    podAntiAffinity=Ptr(_POD_AFFINITY), nodeAffinity=Ptr(K(fields(f"{_REQUIRED} {_PREFERRED}", **{
                        _REQUIRED: Ptr(K(fields("nodeSelectorTerms!", nodeSelectorTerms=Slice(_NODE_TERM)),
                                         go="v1.NodeSelector")),
                        _PREFERRED: Slice(K(fields("weight! preference!", weight=INT, preference=_NODE_TERM),
                                            go="v1.PreferredSchedulingTerm"))}), go="v1.NodeAffinity"))),
             go="v1.Affinity")
PVC_SPEC = K(fields(
    "accessModes selector resources volumeName storageClassName volumeMode dataSource dataSourceRef "
    "volumeAttributesClassName",
    accessModes=Slice(STR), selector=Ptr(_LABEL_SELECTOR), storageClassName=Ptr(STR), volumeMode=Ptr(STR),
    resources=K(fields("limits requests", limits=Map(QUANTITY), requests=Map(QUANTITY)),
                go="v1.VolumeResourceRequirements"),
    dataSource=Ptr(RAW), dataSourceRef=Ptr(RAW), volumeAttributesClassName=Ptr(STR)), go="v1.PersistentVolumeClaimSpec")
EMPTY_DIR = K(fields("medium sizeLimit", sizeLimit=Ptr(QUANTITY)), go="v1.EmptyDirVolumeSource")
EPHEMERAL = K(fields("volumeClaimTemplate", volumeClaimTemplate=Ptr(K(
    fields("metadata spec!", metadata=OBJECT_META, spec=PVC_SPEC), go="v1.PersistentVolumeClaimTemplate"))),
    go="v1.EphemeralVolumeSource")
DOWNWARD_API_FILES = Slice(K(
    fields("path! fieldRef resourceFieldRef mode", fieldRef=Ptr(K(fields("apiVersion fieldPath!"),
                                                                 go="v1.ObjectFieldSelector")),
           resourceFieldRef=Ptr(RESOURCE_FIELD_REF), mode=Ptr(INT)), go="v1.DownwardAPIVolumeFile"))
DOWNWARD_API = K(fields("items defaultMode", defaultMode=Ptr(INT), items=DOWNWARD_API_FILES),
                 go="v1.DownwardAPIVolumeSource")
# a projected volume: its downwardAPI items' divisors are quantities (the other sources kept as written, in
# VolumeProjection's order)
PROJECTED = K(fields("sources defaultMode", defaultMode=Ptr(INT), sources=Slice(K(fields(
    "secret downwardAPI configMap serviceAccountToken clusterTrustBundle podCertificate",
    secret=Ptr(RAW), configMap=Ptr(RAW), serviceAccountToken=Ptr(RAW), clusterTrustBundle=Ptr(RAW),
    podCertificate=Ptr(RAW), downwardAPI=Ptr(K(fields("items", items=DOWNWARD_API_FILES),
                                               go="v1.DownwardAPIProjection"))), go="v1.VolumeProjection"))),
    go="v1.ProjectedVolumeSource")
# (the sources with quantities: the others kept as written)
VOLUME = K(fields("name! emptyDir downwardAPI projected ephemeral", emptyDir=Ptr(EMPTY_DIR),
                  downwardAPI=Ptr(DOWNWARD_API), projected=Ptr(PROJECTED), ephemeral=Ptr(EPHEMERAL)), go="v1.Volume")
TOLERATION = K(fields("key operator value effect tolerationSeconds", tolerationSeconds=Ptr(INT64)), go="v1.Toleration")

CONTAINER_TYPES = {"ports": Slice(CONTAINER_PORT), "env": Slice(ENV_VAR), "volumeMounts": Slice(VOLUME_MOUNT),
                   "livenessProbe": Ptr(PROBE), "readinessProbe": Ptr(PROBE), "startupProbe": Ptr(PROBE),
                   # (scalars and lists of them: typed so that a mistyped one fails as the decoder fails)
                   "command": Slice(STR), "args": Slice(STR), "workingDir": STR, "restartPolicy": Ptr(STR),
                   "terminationMessagePath": STR, "terminationMessagePolicy": STR, "imagePullPolicy": STR,
                   "stdin": BOOL, "stdinOnce": BOOL, "tty": BOOL}
POD_SPEC_TYPES = {"volumes": Slice(VOLUME), "affinity": Ptr(AFFINITY), "tolerations": Slice(TOLERATION),
                  "restartPolicy": STR, "terminationGracePeriodSeconds": Ptr(INT64),
                  "activeDeadlineSeconds": Ptr(INT64), "dnsPolicy": STR, "nodeSelector": Map(STR),
                  "serviceAccountName": STR, "serviceAccount": STR, "automountServiceAccountToken": Ptr(BOOL),
                  "nodeName": STR, "hostNetwork": BOOL, "hostPID": BOOL, "hostIPC": BOOL,
                  "shareProcessNamespace": Ptr(BOOL), "hostname": STR, "subdomain": STR, "schedulerName": STR,
                  "imagePullSecrets": Slice(K(fields("name"), go="v1.LocalObjectReference")),
                  "priorityClassName": STR, "priority": Ptr(INT), "runtimeClassName": Ptr(STR),
                  "enableServiceLinks": Ptr(BOOL), "preemptionPolicy": Ptr(STR), "setHostnameAsFQDN": Ptr(BOOL),
                  "hostUsers": Ptr(BOOL), "hostnameOverride": Ptr(STR)}
