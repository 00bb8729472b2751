"""The Go types Volcano's vcctl decodes a JobFlow and a JobTemplate into (volcano.sh/apis flow/v1alpha1,
batch/v1alpha1 JobSpec, k8s.io/api core/v1 PodTemplateSpec, apimachinery ObjectMeta), as `gotyped` nodes:
field order and `omitempty`/`omitzero` tags as declared there. A pod's spec and its containers are listed
by their field order and the fields without `omitempty`, their volumes, env, ports, probes, affinity and
tolerations as podtypes.py lists them, resource quantities as Quantity.String() writes them; other fields are kept
as written.

Fields vclite adds to Volcano's kinds (a JobFlow's `skippedJobs`, a condition's `reason` and `message`, a
flow's `when`, loops, retries) are kept after Volcano's own (`V` below): the words `jobflow describe` shows
about why a flow waits. Volcano never writes them, so for an object Volcano could hold the output is its own.
"""
from __future__ import annotations

import functools

from vclite.cli import podtypes
from vclite.cli.gotyped import INT, QUANTITY, RAW, STR, TIME, Map, Ptr, Scalar, Slice, Struct, fields

V = functools.partial(Struct, keep_unknown=True)   # a Volcano struct vclite adds fields to

OWNER_REFERENCE, OBJECT_META = podtypes.OWNER_REFERENCE, podtypes.OBJECT_META

# ---- core/v1 (only what makes a difference) ----------------------------------------------------------
_CONTAINER_FIELDS = ("name! image command args workingDir ports envFrom env resources! resizePolicy restartPolicy "
                     "restartPolicyRules volumeMounts volumeDevices livenessProbe readinessProbe startupProbe "
                     "lifecycle terminationMessagePath terminationMessagePolicy imagePullPolicy securityContext "
                     "stdin stdinOnce tty")
_RAW_CONTAINER = {w.rstrip("!"): RAW for w in _CONTAINER_FIELDS.split()}
RESOURCE_LIST = Map(QUANTITY)   # (core/v1 ResourceList: quantities as Quantity.String() writes them, keys sorted)
RESOURCES = Struct(fields("limits requests claims", limits=RESOURCE_LIST, requests=RESOURCE_LIST, claims=RAW),
                   go="v1.ResourceRequirements")
CONTAINER = Struct(fields(_CONTAINER_FIELDS, **{**_RAW_CONTAINER, "name": STR, "image": STR,
                                                "resources": RESOURCES, **podtypes.CONTAINER_TYPES}), keep_unknown=True,
                   go="v1.Container")
_POD_SPEC_FIELDS = ("volumes initContainers containers! ephemeralContainers restartPolicy "
                    "terminationGracePeriodSeconds activeDeadlineSeconds dnsPolicy nodeSelector serviceAccountName "
                    "serviceAccount automountServiceAccountToken nodeName hostNetwork hostPID hostIPC "
                    "shareProcessNamespace securityContext imagePullSecrets hostname subdomain affinity schedulerName "
                    "tolerations hostAliases priorityClassName priority dnsConfig readinessGates runtimeClassName "
                    "enableServiceLinks preemptionPolicy overhead topologySpreadConstraints setHostnameAsFQDN os "
                    "hostUsers schedulingGates resourceClaims resources hostnameOverride")
POD_SPEC = Struct(fields(_POD_SPEC_FIELDS, **{**{w.rstrip("!"): RAW for w in _POD_SPEC_FIELDS.split()},
                                              "initContainers": Slice(CONTAINER), "containers": Slice(CONTAINER),
                                              "overhead": RESOURCE_LIST, "resources": Ptr(RESOURCES),
                                              **podtypes.POD_SPEC_TYPES}),
                  keep_unknown=True, go="v1.PodSpec")
POD_TEMPLATE_SPEC = Struct(fields("metadata! spec!", metadata=OBJECT_META, spec=POD_SPEC), go="v1.PodTemplateSpec")

# ---- batch/v1alpha1 JobSpec --------------------------------------------------------------------------
NETWORK_TOPOLOGY = V(fields("mode highestTierAllowed highestTierName", highestTierAllowed=Ptr(INT)),
                     go="v1alpha1.NetworkTopologySpec")
DURATION = Scalar("", "v1.Duration")   # (metav1.Duration reads a string)
LIFECYCLE_POLICY = V(fields("action event events exitCode timeout", events=Slice(STR), exitCode=Ptr(INT),
                            timeout=Ptr(DURATION)), go="v1alpha1.LifecyclePolicy")
TASK_SPEC = V(fields(
    "name replicas minAvailable template! policies topologyPolicy maxRetry dependsOn partitionPolicy",
    replicas=INT, minAvailable=Ptr(INT), template=POD_TEMPLATE_SPEC, policies=Slice(LIFECYCLE_POLICY),
    maxRetry=INT, dependsOn=Ptr(V(fields("name iteration", name=Slice(STR)), go="v1alpha1.DependsOn")),
    partitionPolicy=Ptr(V(fields("totalPartitions! partitionSize! networkTopology minPartitions",
                                 totalPartitions=INT, partitionSize=INT, networkTopology=Ptr(NETWORK_TOPOLOGY),
                                 minPartitions=INT), go="v1alpha1.PartitionPolicySpec"))), go="v1alpha1.TaskSpec")
VOLUME_SPEC = V(fields("mountPath! volumeClaimName volumeClaim", volumeClaim=Ptr(podtypes.PVC_SPEC)),
                go="v1alpha1.VolumeSpec")
JOB_SPEC = V(fields(
    "schedulerName minAvailable volumes tasks policies plugins runningEstimate queue maxRetry "
    "ttlSecondsAfterFinished priorityClassName minSuccess networkTopology",
    minAvailable=INT, volumes=Slice(VOLUME_SPEC), tasks=Slice(TASK_SPEC), policies=Slice(LIFECYCLE_POLICY),
    plugins=Map(Slice(STR)), runningEstimate=Ptr(DURATION), maxRetry=INT, ttlSecondsAfterFinished=Ptr(INT),
    minSuccess=Ptr(INT), networkTopology=Ptr(NETWORK_TOPOLOGY)), go="v1alpha1.JobSpec")

# ---- flow/v1alpha1 -----------------------------------------------------------------------------------
PROBE = V(fields(
    "httpGetList tcpSocketList taskStatusList",
    httpGetList=Slice(V(fields("taskName path port httpHeader!", port=INT,
                               httpHeader=V(fields("name! value!"), go="v1.HTTPHeader")), go="v1alpha1.HttpGet")),
    tcpSocketList=Slice(V(fields("taskName port!", port=INT), go="v1alpha1.TcpSocket")),
    taskStatusList=Slice(V(fields("taskName phase"), go="v1alpha1.TaskStatus"))), go="v1alpha1.Probe")
FLOW = V(fields("name! dependsOn patch",
                dependsOn=Ptr(V(fields("targets probe", targets=Slice(STR), probe=Ptr(PROBE)),
                                go="v1alpha1.DependsOn")),
                patch=Ptr(V(fields("jobSpec!", jobSpec=JOB_SPEC), go="v1alpha1.Patch"))), go="v1alpha1.Flow")
TASK_STATE = V(fields("phase", phase=Map(INT)), go="v1alpha1.TaskState")
CONDITION = V(fields("phase createTime runningDuration taskStatusCount", createTime=TIME,
                     runningDuration=Ptr(DURATION), taskStatusCount=Map(TASK_STATE)), go="v1alpha1.Condition")
RUNNING_HISTORY = V(fields("startTimestamp endTimestamp state", startTimestamp=TIME, endTimestamp=TIME),
                    go="v1alpha1.JobRunningHistory")
JOB_STATUS = V(fields("name state startTimestamp endTimestamp restartCount runningHistories",
                      startTimestamp=TIME, endTimestamp=TIME, restartCount=INT,
                      runningHistories=Slice(RUNNING_HISTORY)), go="v1alpha1.JobStatus")
_JOBS = ("pendingJobs", "runningJobs", "failedJobs", "completedJobs", "terminatedJobs", "unKnowJobs")
JOBFLOW_STATUS = V(fields(" ".join(_JOBS) + " jobStatusList conditions state",
                          **{k: Slice(STR) for k in _JOBS}, jobStatusList=Slice(JOB_STATUS),
                          conditions=Map(CONDITION),
                          state=V(fields("phase", phase=Scalar("", "v1alpha1.Phase")), go="v1alpha1.State")),
                   go="v1alpha1.JobFlowStatus")
JOBFLOW_SPEC = V(fields("flows jobRetainPolicy", flows=Slice(FLOW)), go="v1alpha1.JobFlowSpec")


def _object(spec: Struct, status: Struct, go: str) -> Struct:
    return Struct(fields("kind apiVersion metadata! spec! status!", metadata=OBJECT_META, spec=spec, status=status),
                  go=go)


JOBFLOW = _object(JOBFLOW_SPEC, JOBFLOW_STATUS, "v1alpha1.JobFlow")
JOBTEMPLATE = _object(JOB_SPEC, Struct(fields("jobDependsOnList", jobDependsOnList=Slice(STR)),
                                       go="v1alpha1.JobTemplateStatus"), "v1alpha1.JobTemplate")
