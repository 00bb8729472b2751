"""The Go type each kind is decoded into by Volcano's vcctl (its typed clientsets), as `gotyped` nodes: what
`client_common.TypedClient` checks every object a client command reads against, so an object stored with a
field of the wrong type (a `status` that is a string, `tasks` that is an object) fails the command in the Go
decoder's words, as on Volcano, before anything is printed.

The JobFlow and JobTemplate types are flowtypes.py's (describe marshals with them); the others list the fields
as far as their types matter to a decoder: a struct, a list, a map, a number, a string, a quantity.
"""
from __future__ import annotations

import functools

from vclite.api import flowtemplate, kinds
from vclite.cli import flowtypes
from vclite.cli.gotyped import BOOL, INT, QUANTITY, STR, TIME, GoType, Map, Ptr, Scalar, Slice, Struct, fields

K = functools.partial(Struct, keep_unknown=True)
RESOURCE_LIST = Map(QUANTITY)


def _object(spec: Struct, status: Struct, go: str) -> Struct:
    return Struct(fields("kind apiVersion metadata spec status", metadata=flowtypes.OBJECT_META, spec=spec,
                         status=status), go=go)


# ---- batch.volcano.sh/v1alpha1 Job -------------------------------------------------------------------------
_JOB_PHASE = Scalar("", "v1alpha1.JobPhase")
JOB_STATE = K(fields("phase reason message lastTransitionTime", phase=_JOB_PHASE, lastTransitionTime=TIME),
              go="v1alpha1.JobState")
JOB_STATUS = K(fields(
    "state minAvailable taskStatusCount pending running succeeded failed terminating unknown version retryCount "
    "runningDuration controlledResources conditions",
    state=JOB_STATE, minAvailable=INT, pending=INT, running=INT, succeeded=INT, failed=INT, terminating=INT,
    unknown=INT, version=INT, retryCount=INT, runningDuration=Ptr(flowtypes.DURATION),
    taskStatusCount=Map(K(fields("phase", phase=Map(INT)), go="v1alpha1.TaskState")),
    controlledResources=Map(STR),
    conditions=Slice(K(fields("status lastTransitionTime", status=_JOB_PHASE, lastTransitionTime=Ptr(TIME)),
                       go="v1alpha1.JobCondition"))), go="v1alpha1.JobStatus")
JOB = _object(flowtypes.JOB_SPEC, JOB_STATUS, "v1alpha1.Job")

# ---- scheduling.volcano.sh/v1beta1 Queue and PodGroup ------------------------------------------------------
_NODE_GROUPS = fields("requiredDuringSchedulingIgnoredDuringExecution preferredDuringSchedulingIgnoredDuringExecution",
                      requiredDuringSchedulingIgnoredDuringExecution=Slice(STR),
                      preferredDuringSchedulingIgnoredDuringExecution=Slice(STR))
QUEUE_SPEC = K(fields(
    "weight capability reclaimable extendClusters guarantee affinity type parent deserved priority dequeueStrategy",
    weight=INT, capability=RESOURCE_LIST, reclaimable=Ptr(BOOL), deserved=RESOURCE_LIST, priority=INT,
    extendClusters=Slice(K(fields("name weight capacity", weight=INT, capacity=RESOURCE_LIST), go="v1beta1.Cluster")),
    guarantee=K(fields("resource", resource=RESOURCE_LIST), go="v1beta1.Guarantee"),
    affinity=Ptr(K(fields("nodeGroupAffinity nodeGroupAntiAffinity",
                          nodeGroupAffinity=Ptr(K(_NODE_GROUPS, go="v1beta1.NodeGroupAffinity")),
                          nodeGroupAntiAffinity=Ptr(K(_NODE_GROUPS, go="v1beta1.NodeGroupAntiAffinity"))),
                   go="v1beta1.Affinity")),
    dequeueStrategy=Scalar("", "v1beta1.DequeueStrategy")), go="v1beta1.QueueSpec")
QUEUE_STATUS = K(fields(
    "state unknown pending running inqueue completed reservation allocated",
    state=Scalar("", "v1beta1.QueueState"), unknown=INT, pending=INT, running=INT, inqueue=INT, completed=INT,
    reservation=K(fields("nodes resource", nodes=Slice(STR), resource=RESOURCE_LIST), go="v1beta1.Reservation"),
    allocated=RESOURCE_LIST), go="v1beta1.QueueStatus")
QUEUE = _object(QUEUE_SPEC, QUEUE_STATUS, "v1beta1.Queue")

PODGROUP_SPEC = K(fields("minMember minTaskMember queue priorityClassName minResources",
                         minMember=INT, minTaskMember=Map(INT), minResources=Ptr(RESOURCE_LIST)),
                  go="v1beta1.PodGroupSpec")
PODGROUP_STATUS = K(fields(
    "phase conditions running succeeded failed", phase=Scalar("", "v1beta1.PodGroupPhase"),
    running=INT, succeeded=INT, failed=INT,
    conditions=Slice(K(fields("type status transitionID lastTransitionTime reason message",
                              type=Scalar("", "v1beta1.PodGroupConditionType"), status=Scalar("", "v1.ConditionStatus"),
                              lastTransitionTime=TIME), go="v1beta1.PodGroupCondition"))),
    go="v1beta1.PodGroupStatus")
PODGROUP = _object(PODGROUP_SPEC, PODGROUP_STATUS, "v1beta1.PodGroup")

# ---- core/v1 Pod and Event ------------------------------------------------------------------------------
_CONTAINER_STATE = K(fields(
    "waiting running terminated",
    waiting=Ptr(K(fields("reason message"), go="v1.ContainerStateWaiting")),
    running=Ptr(K(fields("startedAt", startedAt=TIME), go="v1.ContainerStateRunning")),
    terminated=Ptr(K(fields("exitCode signal reason message startedAt finishedAt containerID", exitCode=INT,
                            signal=INT, startedAt=TIME, finishedAt=TIME), go="v1.ContainerStateTerminated"))),
    go="v1.ContainerState")
_CONTAINER_STATUS = K(fields("name state lastState ready restartCount image imageID containerID started",
                             state=_CONTAINER_STATE, lastState=_CONTAINER_STATE, ready=BOOL, restartCount=INT,
                             started=Ptr(BOOL)), go="v1.ContainerStatus")
POD_STATUS = K(fields(
    "phase conditions message reason nominatedNodeName hostIP podIP startTime initContainerStatuses "
    "containerStatuses",
    phase=Scalar("", "v1.PodPhase"), startTime=Ptr(TIME),
    conditions=Slice(K(fields("type status lastProbeTime lastTransitionTime reason message", lastProbeTime=TIME,
                              lastTransitionTime=TIME, type=Scalar("", "v1.PodConditionType"),
                              status=Scalar("", "v1.ConditionStatus")), go="v1.PodCondition")),
    initContainerStatuses=Slice(_CONTAINER_STATUS), containerStatuses=Slice(_CONTAINER_STATUS)), go="v1.PodStatus")
POD = _object(flowtypes.POD_SPEC, POD_STATUS, "v1.Pod")

EVENT = Struct(fields(
    "kind apiVersion metadata involvedObject reason message source firstTimestamp lastTimestamp count type",
    metadata=flowtypes.OBJECT_META, firstTimestamp=TIME, lastTimestamp=TIME, count=INT,
    involvedObject=K(fields("kind namespace name uid apiVersion resourceVersion fieldPath"), go="v1.ObjectReference"),
    source=K(fields("component host"), go="v1.EventSource")), go="v1.Event")

BY_KIND: dict[kinds.Kind, GoType] = {kinds.JOB: JOB, kinds.JOBFLOW: flowtypes.JOBFLOW,
                                     kinds.JOBTEMPLATE: flowtypes.JOBTEMPLATE, kinds.QUEUE: QUEUE,
                                     kinds.PODGROUP: PODGROUP, kinds.POD: POD, kinds.EVENT: EVENT}
# kinds whose numbers, booleans and quantities may be flow placeholders (`replicas: "{{params.n}}"`, admitted and
# typed int-or-string by vclite's CRDs: filled in when a flow makes the vcjob), with the pattern of one
PLACEHOLDERS = {kinds.JOBFLOW: flowtemplate.PLACEHOLDER, kinds.JOBTEMPLATE: flowtemplate.PLACEHOLDER}
