"""The described OpenAPI v3 schemas of Volcano's kinds — Job (vcjob), CronJob, JobTemplate, Queue, PodGroup,
HyperNode and Numatopology as tables of fields, and JobFlow from api/flowschema — for `kubectl explain
vcjob.spec.tasks` and the like
on `vcctl server` (/openapi/v3).

The fields and their types are Volcano's (volcano.sh/apis: batch/v1alpha1 job.go, flow/v1alpha1
jobtemplate_types.go, scheduling/v1beta1 types.go, and the CRDs built from them); a note says where
vclite acts differently. A task's pod template stays an open object described as a Kubernetes
PodTemplateSpec. These schemas only describe: admission is the validator (kubectl sends
`fieldValidation` to the server, so it never checks a manifest against them), every object keeps
fields it does not name, and a JobTemplate field may hold a flow placeholder (`replicas: "{{item}}"`)
where the type says integer — which is why the JobTemplate CRD of api/crds keeps its spec open.
Pure data.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from vclite.api import batch, flowschema, kinds
from vclite.api.schemabuild import (ARGS_MAP, BOOL, INT, INT_MAP, LIST, MAP, OBJ, QUANTITIES, STR, STR_MAP, STRS,
                                    Field, obj, properties, string)
from vclite.lib import jsoncopy

Obj = dict[str, Any]

_EVENTS = ", ".join(e.value for e in batch.Event if e in batch.POLICY_EVENTS)
_ACTIONS = ", ".join(a.value for a in batch.Action if a in batch.POLICY_ACTIONS)
_PLUGINS = ", ".join(sorted(batch.KNOWN_PLUGINS))
_DURATION = "a duration such as `30s`, `5m` or `1h30m`"
_TIME = "an RFC 3339 time"
_PER_RESOURCE = "as resource name: quantity (`cpu: 4`, `memory: 8Gi`)"

# ---- shared parts ------------------------------------------------------------------------------

NETWORK_TOPOLOGY = Field("networkTopology", OBJ, (
    "keep the pods within part of the network (HyperNode tiers), for Volcano's network-topology-aware "
    "scheduling: the job's gang is placed within one HyperNode of the tier allowed. vclite's scheduler reads "
    "the job's (PodGroup's) field; a partition's (subGroupPolicy) is copied and not placed by"), (
    Field("mode", STR, "`hard` (default): the pods must stay within the highest tier allowed; `soft`: the "
                       "scheduler tries to, and may go beyond it"),
    Field("highestTierAllowed", INT, "the highest HyperNode tier the pods may span (0 or more); not together "
                                     "with highestTierName"),
    Field("highestTierName", STR, "the name of the highest HyperNode tier the pods may span; not together with "
                                  "highestTierAllowed"),
))

POLICY = (
    Field("event", STR, f"the event that triggers the action: {_EVENTS}; `*` is any event, and then no other "
                        "event may appear in the list; PodPending acts only with a timeout"),
    Field("events", STRS, "several events for the same action (with `event`, each event in one policy of the "
                          "list only)"),
    Field("exitCode", INT, "instead of events: the exit code of a failed container (not 0) that triggers the "
                           "action; each code in one policy of the list only"),
    Field("action", STR, f"what to do: {_ACTIONS}"),
    Field("timeout", STR, f"wait this long before acting ({_DURATION}); a later event of the same pod may "
                          "cancel the wait"),
)

_LABEL_SELECTOR = Field("labelSelector", OBJ, "a Kubernetes label selector (matchLabels, matchExpressions): "
                                              "the pods it selects are grouped")

# ---- Job and JobTemplate ----------------------------------------------------------------------

TASK = (
    Field("name", STR, "the task's name, a DNS label unique in the job (default `default<index>`); its pods are "
                       "`<job>-<task>-<index>`"),
    Field("replicas", INT, "how many pods the task runs"),
    Field("minAvailable", INT, "how many of the task's pods belong to the job's gang (default: replicas, or "
                               "minPartitions × partitionSize when a partitionPolicy sets minPartitions)"),
    Field("template", OBJ, "the pods' template, a Kubernetes PodTemplateSpec: metadata (labels, annotations) and "
                           "spec (containers, restartPolicy, volumes…). In vclite each container runs as a local "
                           "process and needs a command"),
    Field("policies", LIST, "the task's lifecycle policies, tried before the job's on an event of one of its pods",
          POLICY),
    Field("topologyPolicy", STR, "NUMA placement of the pods (Volcano's numa-aware plugin): none, best-effort, "
                                 "restricted or single-numa-node; other than none, every container must request "
                                 "whole CPUs. The scheduler places by the nodes' Numatopologies; nothing pins CPUs"),
    Field("maxRetry", INT, "how many container restarts the task's Running and Pending pods may have in all before "
                           "the TaskFailed event (default 3)"),
    Field("dependsOn", OBJ, "tasks whose pods must be ready before this task's pods are created", (
        Field("name", STRS, "the tasks it waits for; a task is ready once its minAvailable pods are Running and "
                            "Ready, or Succeeded"),
        Field("iteration", STR, "`all` (default): every task named must be ready; `any`: one is enough"),
    )),
    Field("partitionPolicy", OBJ, "split the task's pods into partitions scheduled as units (PodGroup "
                                  "subGroupPolicy); pods get the label `volcano.sh/partition-id`", (
        Field("totalPartitions", INT, "how many partitions (1 or more); totalPartitions × partitionSize must equal "
                                      "replicas", required=True),
        Field("partitionSize", INT, "pods per partition (1 or more)", required=True),
        Field("minPartitions", INT, "how many whole partitions must fit before the task is scheduled (default 0: "
                                    "the task's minAvailable decides)"),
        NETWORK_TOPOLOGY,
    )),
)

JOB_SPEC = (
    Field("schedulerName", STR, "the scheduler of pods whose template names none (default `volcano`)"),
    Field("minAvailable", INT, "the gang: how many pods must be placed together before any starts (default: the "
                               "sum of the tasks' minAvailable); the job is Running once this many have started"),
    Field("volumes", LIST, "PersistentVolumeClaims mounted into every container of the job", (
        Field("mountPath", STR, "where the volume is mounted in each container (no `:`; unique in the job)",
              required=True),
        Field("volumeClaimName", STR, "an existing PersistentVolumeClaim to mount"),
        Field("volumeClaim", OBJ, "instead of volumeClaimName, the spec of a claim Volcano creates for the job "
                                  "(vclite creates none, and mounts nothing for it)"),
    )),
    Field("tasks", LIST, "the job's tasks, at least one: each is a set of identical pods", TASK),
    Field("policies", LIST, "the job's lifecycle policies: what to do when an event happens to one of its pods or "
                            "to the job (a task's own policies are tried first)", POLICY),
    Field("plugins", ARGS_MAP, f"job plugins by name, each with its arguments (flags): {_PLUGINS}; a framework "
                               "plugin (pytorch, tensorflow, mpi, ray) adds svc, and mpi adds ssh"),
    Field("runningEstimate", STR, f"how long the job is expected to run ({_DURATION}); vclite does not read it"),
    Field("queue", STR, "the Queue the job runs in (default `default`); it must exist, be Open and have no child "
                        "queues"),
    Field("maxRetry", INT, "how many times the job may be restarted (by a policy's or a command's RestartJob, "
                           "RestartTask…, or ResumeJob) before it is Failed (default 3)"),
    Field("ttlSecondsAfterFinished", INT, "delete the job this many seconds after it is Completed, Failed or "
                                          "Terminated (0: at once; unset: keep it)"),
    Field("priorityClassName", STR, "the job's PriorityClass (also of pods whose template names none): higher "
                                    "jobs are scheduled first and may preempt lower ones"),
    Field("minSuccess", INT, "the job is Completed as soon as this many of its pods have Succeeded, and Failed if "
                             "all have finished with fewer (1 or more)"),
    NETWORK_TOPOLOGY,
)

_PHASES = "Pending, Running, Restarting, Completing, Completed, Aborting, Aborted, Terminating, Terminated or Failed"
JOB_STATUS = (
    Field("state", OBJ, "the job's phase and its last change", (
        Field("phase", STR, f"{_PHASES}; Completed, Failed and Terminated are final, and an Aborted job moves "
                            "again only on ResumeJob"),
        Field("reason", STR, "one word: why it last changed phase"),
        Field("message", STR, "the reason in words"),
        Field("lastTransitionTime", STR, f"when it last changed phase ({_TIME})"),
    )),
    Field("minAvailable", INT, "spec.minAvailable as the controller last recorded it (at the start, and when it "
                               "kills pods); a Restarting job is Pending again once its replicas not being deleted "
                               "reach it"),
    Field("taskStatusCount", MAP, "per task: how many of its pods are in each pod phase", (
        Field("phase", INT_MAP, "pod phase -> number of pods (`{Running: 2, Succeeded: 1}`)"),
    )),
    Field("pending", INT, "pods Pending"),
    Field("running", INT, "pods Running"),
    Field("succeeded", INT, "pods Succeeded"),
    Field("failed", INT, "pods Failed"),
    Field("terminating", INT, "pods being deleted"),
    Field("unknown", INT, "pods in phase Unknown"),
    Field("version", INT, "raised each time all the job's pods are killed (restart, abort…); policies ignore "
                          "events of pods of an older version"),
    Field("retryCount", INT, "how many times the job has been restarted; it is Failed once this reaches maxRetry"),
    Field("runningDuration", STR, "time from the job's creation to its last phase change (a Go duration)"),
    Field("controlledResources", STR_MAP, "the plugins that have set the job up (`plugin-svc: svc`) and the "
                                          "claims it mounts (`volume-pvc-<name>: <name>`)"),
    Field("conditions", LIST, "the phases the job has been in, each once (the last entered last)", (
        Field("status", STR, "the phase entered", required=True),
        Field("lastTransitionTime", STR, f"when ({_TIME})"),
    )),
)

JOBTEMPLATE_STATUS = (
    Field("jobDependsOnList", STRS, "the vcjobs JobFlows have made from this template, oldest first (vclite "
                                    "keeps it in step as they come and go)"),
)

# ---- CronJob ----------------------------------------------------------------------------------

CRONJOB_SPEC = (
    Field("schedule", STR, "when to make a vcjob: a cron expression (`*/5 * * * *`: minute, hour, day of month, month, "
                           "day of week), a descriptor (`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`) or "
                           "`@every <duration>` (robfig/cron's standard parser)", required=True),
    Field("timeZone", STR, "the IANA time zone the schedule is read in (`Europe/Berlin`); the controller's local "
                           "zone if unset. A `TZ=`/`CRON_TZ=` prefix in the schedule is refused when it is set"),
    Field("startingDeadlineSeconds", INT, "a scheduled time missed by more than this many seconds is skipped "
                                          "(MissSchedule); unset: no deadline"),
    Field("concurrencyPolicy", STR, "when the previous vcjob still runs: `Allow` (default) another one, `Forbid` "
                                    "skip this time, `Replace` delete the running one and make the new one"),
    Field("suspend", BOOL, "true: make no new vcjob (the running ones go on)"),
    Field("jobTemplate", OBJ, "the vcjob made at each scheduled time, named `<cronjob>-<Unix minutes>`", (
        Field("metadata", OBJ, "labels and annotations copied onto each vcjob", (
            Field("labels", STR_MAP, "labels of each vcjob"),
            Field("annotations", STR_MAP, "annotations of each vcjob"),
            Field("name", STR, "not used: a vcjob is named `<cronjob>-<Unix minutes>`"),
            Field("namespace", STR, "not used: the vcjobs are made in the CronJob's namespace"),
            Field("finalizers", STRS, "not used: the vcjobs get no finalizers from it"),
        )),
        Field("spec", OBJ, "a vcjob spec, as `kubectl explain vcjob.spec` shows it", JOB_SPEC),
    ), required=True),
    Field("successfulJobsHistoryLimit", INT, "how many Completed vcjobs to keep (default 3; older ones are deleted)"),
    Field("failedJobsHistoryLimit", INT, "how many Failed vcjobs to keep (default 1)"),
)

CRONJOB_STATUS = (
    Field("active", LIST, "references to the vcjobs of this CronJob that run now", (
        Field("kind", STR, "the vcjob's kind, `Job`"), Field("namespace", STR, "the vcjob's namespace"),
        Field("name", STR, "the vcjob's name"), Field("uid", STR, "the vcjob's uid"),
        Field("apiVersion", STR, "`batch.volcano.sh/v1alpha1`"),
        Field("resourceVersion", STR, "the vcjob's version seen"), Field("fieldPath", STR, "not used by CronJobs"),
    )),
    Field("lastScheduleTime", STR, f"the last time a vcjob was made ({_TIME})"),
    Field("lastSuccessfulTime", STR, f"the last time a vcjob of it completed ({_TIME})"),
)

# ---- Queue -------------------------------------------------------------------------------------

_NODE_GROUPS = (
    Field("requiredDuringSchedulingIgnoredDuringExecution", STRS, "node groups that must (for anti-affinity: must "
                                                                  "not) hold the pods"),
    Field("preferredDuringSchedulingIgnoredDuringExecution", STRS, "node groups that should (for anti-affinity: "
                                                                   "should not) hold the pods"),
)

QUEUE_SPEC = (
    Field("weight", INT, "the queue's share of the cluster relative to other queues' weights (1..65535, default "
                         "1), for the proportion plugin"),
    Field("capability", QUANTITIES, f"the most the queue's pods may use together, {_PER_RESOURCE}; no limit on a "
                                    "resource not named"),
    Field("reclaimable", BOOL, "whether other queues may reclaim (evict) what this queue uses beyond its share "
                               "(default true)"),
    Field("extendClusters", LIST, "other clusters the queue's jobs may be dispatched to (Volcano's multi-cluster "
                                  "forwarding; vclite ignores it)", (
        Field("name", STR, "the cluster's name"),
        Field("weight", INT, "its weight among the clusters"),
        Field("capacity", QUANTITIES, f"its capacity, {_PER_RESOURCE}"),
    )),
    Field("guarantee", OBJ, "resources kept for this queue whatever the other queues use", (
        Field("resource", QUANTITIES, f"the amount, {_PER_RESOURCE}; no more than deserved"),
    )),
    Field("affinity", OBJ, "node groups (nodes labelled `volcano.sh/nodegroup-name`) for the queue's pods, for "
                           "Volcano's nodegroup plugin, which vclite's scheduler does not have", (
        Field("nodeGroupAffinity", OBJ, "node groups to place the pods in", _NODE_GROUPS),
        Field("nodeGroupAntiAffinity", OBJ, "node groups to keep the pods out of", _NODE_GROUPS),
    )),
    Field("type", STR, "a type name for the queue (up to 253 characters); no scheduler reads it"),
    Field("parent", STR, "the parent queue in a hierarchy (default `root`); jobs go only to queues without "
                         "children"),
    Field("deserved", QUANTITIES, f"what the queue should get when the cluster is contended, {_PER_RESOURCE} (the "
                                  "capacity plugin; at least guarantee, at most capability); vclite's proportion "
                                  "plugin computes its own from the weights"),
    Field("priority", INT, "queues of higher priority are served first and reclaimed from last (0 or more)"),
    Field("dequeueStrategy", STR, "`traverse` (default): when the first job waiting in the queue cannot be "
                                  "admitted, try the next; `fifo`: wait for it. vclite does not read it"),
)

QUEUE_STATUS = (
    Field("state", STR, "Open (takes new jobs), Closing (closed, PodGroups still in it), Closed or Unknown; "
                        "changed by Open and Close commands (`vcctl queue operate`)"),
    Field("unknown", INT, "PodGroups of the queue in phase Unknown"),
    Field("pending", INT, "PodGroups of the queue in phase Pending"),
    Field("running", INT, "PodGroups of the queue in phase Running"),
    Field("inqueue", INT, "PodGroups of the queue in phase Inqueue"),
    Field("completed", INT, "PodGroups of the queue in phase Completed"),
    Field("reservation", OBJ, "nodes locked for the queue and their idle resources (Volcano's reservation; vclite "
                              "writes none)", (
        Field("nodes", STRS, "the locked nodes"),
        Field("resource", QUANTITIES, f"their idle resources in all, {_PER_RESOURCE}"),
    )),
    Field("allocated", QUANTITIES, f"what the queue's placed pods request in all, {_PER_RESOURCE} (written by the "
                                   "scheduler)"),
)

# ---- PodGroup ----------------------------------------------------------------------------------

PODGROUP_SPEC = (
    Field("minMember", INT, "the gang: how many of the group's pods must be placed together before any is"),
    Field("minTaskMember", INT_MAP, "per task name: how many of that task's pods the gang must include"),
    Field("queue", STR, "the Queue whose resources the group uses (default `default`)"),
    Field("priorityClassName", STR, "the PriorityClass that orders the group among others (and for preemption)"),
    Field("minResources", QUANTITIES, f"what the gang needs in all, {_PER_RESOURCE}: the group is admitted "
                                      "(Inqueue) only when its queue and the cluster can hold it"),
    NETWORK_TOPOLOGY,
    Field("subGroupPolicy", LIST, "subgroups of the group's pods that are scheduled as units (a vcjob task's "
                                  "partitions)", (
        Field("name", STR, "the subgroup policy's name"),
        NETWORK_TOPOLOGY,
        Field("subGroupSize", INT, "pods per subgroup (default 1)"),
        Field("minSubGroups", INT, "how many subgroups must fit before the group is scheduled (default 0)"),
        _LABEL_SELECTOR,
        Field("matchLabelKeys", STRS, "label keys: selected pods with the same values of these labels form one "
                                      "subgroup"),
    )),
)

PODGROUP_STATUS = (
    Field("phase", STR, "Pending (waiting to be admitted), Inqueue (admitted: its pods may be created), Running "
                        "(minMember placed), Unknown (some placed, the rest cannot be) or Completed (the placed "
                        "pods have all finished)"),
    Field("conditions", LIST, "what the scheduler last found: Scheduled, or Unschedulable and why", (
        Field("type", STR, "Unschedulable or Scheduled"),
        Field("status", STR, "True, False or Unknown"),
        Field("transitionID", STR, "the scheduling session that wrote it"),
        Field("lastTransitionTime", STR, f"when ({_TIME})"),
        Field("reason", STR, "one word: NotEnoughResources, NotEnoughTasks, NotEnoughPodsOfTask, PodFailed, "
                             "PodDeleted…"),
        Field("message", STR, "the reason in words (vclite names what is short, e.g. `queue resource quota "
                              "insufficient: …`)"),
    )),
    Field("running", INT, "pods of the group Running"),
    Field("succeeded", INT, "pods of the group Succeeded"),
    Field("failed", INT, "pods of the group Failed"),
)

# ---- HyperNode ---------------------------------------------------------------------------------

HYPERNODE_SPEC = (
    Field("tier", INT, "the HyperNode's level in the network (0 or more; lower tiers are closer): a job's "
                       "networkTopology.highestTierAllowed names the highest tier its pods may span", required=True),
    Field("tierName", STR, "a name for the tier (up to 253 characters), for networkTopology.highestTierName"),
    Field("members", LIST, "the nodes or HyperNodes it groups (at least one)", (
        Field("type", STR, "`Node` (the selector picks nodes) or `HyperNode` (exactMatch names a lower HyperNode)",
              required=True),
        Field("selector", OBJ, "which members: exactly one of exactMatch, regexMatch, labelMatch", (
            Field("exactMatch", OBJ, "one member by name", (
                Field("name", STR, "the node's or HyperNode's name", required=True),)),
            Field("regexMatch", OBJ, "the nodes whose names match (type Node only)", (
                Field("pattern", STR, "a regular expression searched in each node's name", required=True),)),
            Field("labelMatch", OBJ, "the nodes a Kubernetes label selector picks (matchLabels, matchExpressions; "
                                     "type Node only)"),
        )),
    )),
)

HYPERNODE_STATUS = (
    Field("conditions", LIST, "what the HyperNode controller reports (vclite runs none and writes no status)"),
    Field("nodeCount", INT, "how many nodes it holds in all"),
)

# ---- Numatopology ------------------------------------------------------------------------------

NUMATOPOLOGY_SPEC = (
    Field("policies", STR_MAP, "the kubelet's policies: `CPUManagerPolicy` (numa-aware needs `static`) and "
                               "`TopologyManagerPolicy` (none, best-effort, restricted, single-numa-node)"),
    Field("resReserved", STR_MAP, "what the kubelet reserves, as resource name: quantity (cpu, memory, "
                                  "ephemeral-storage); reserved CPUs are never given to a pod"),
    Field("numares", MAP, "per resource (`cpu`): what the node's NUMA nodes hold", (
        Field("allocatable", STR, "the CPUs the kubelet can still give exclusively, a cpuset list (`0-3,8`)"),
        Field("capacity", INT, "how many there are in all"),
    )),
    Field("cpuDetail", MAP, "per CPU id: where the CPU sits", (
        Field("numa", INT, "its NUMA node"),
        Field("socket", INT, "its socket"),
        Field("core", INT, "its core (unique within the socket only)"),
    )),
    Field("podAllocations", LIST, "the pods the kubelet has pinned; the scheduler keeps its own CPU choice for "
                                  "a pod it placed until the pod is listed here", (
        Field("uid", STR, "the pod's uid"),
        Field("name", STR, "the pod's name"),
        Field("namespace", STR, "the pod's namespace"),
        Field("containerAllocations", LIST, "per container: name, and allocations (resource: cpuset or quantity)"),
    )),
)

# ---- kinds -------------------------------------------------------------------------------------

class KindDoc(NamedTuple):
    """What `kubectl explain <kind>` shows of a kind, its spec and its status (none: a kind without status)."""
    description: str
    spec_description: str
    spec: tuple[Field, ...]
    status_description: str
    status: tuple[Field, ...]


KINDS: dict[str, KindDoc] = {
    "Job": KindDoc(
        "A Volcano job (vcjob): tasks of pods that the Volcano scheduler places together as one gang, with "
        "lifecycle policies that restart, abort or complete it on pod events.",
        "the tasks, their gang and policies, and where the job runs", JOB_SPEC,
        "what the vcjob controller reports: the phase, pod counts, restarts", JOB_STATUS),
    "JobTemplate": KindDoc(
        "A vcjob spec kept for JobFlows (flow.volcano.sh): a flow of that name makes a vcjob from it. In vclite "
        "a field may also hold a flow placeholder (`{{item}}`, `{{params.<name>}}`…), filled in when the vcjob "
        "is made.", "a vcjob spec, as `kubectl explain vcjob.spec` shows it", JOB_SPEC,
        "what the JobTemplate controller reports", JOBTEMPLATE_STATUS),
    "CronJob": KindDoc(
        "A Volcano CronJob: a vcjob made from its jobTemplate at each time of its schedule, with a policy for "
        "overlapping runs and a history of finished vcjobs kept.", "the schedule and the vcjob to make",
        CRONJOB_SPEC, "what the CronJob controller reports: the vcjobs running and the last times", CRONJOB_STATUS),
    "Queue": KindDoc(
        "A Volcano queue (cluster-wide): PodGroups are admitted and share the cluster by queue — weight, "
        "capability, guarantee, priority, hierarchy; a closed queue takes no new jobs.",
        "the queue's share of the cluster and its place in the hierarchy", QUEUE_SPEC,
        "the queue's state, PodGroup counts and allocation", QUEUE_STATUS),
    "HyperNode": KindDoc(
        "A Volcano HyperNode (cluster-wide): a group of nodes, or of lower HyperNodes, that share a network "
        "level (a rack, a spine…), of one tier; jobs with networkTopology are kept within one of them.",
        "the tier and the members", HYPERNODE_SPEC, "the HyperNode's node count and conditions", HYPERNODE_STATUS),
    "Numatopology": KindDoc(
        "Volcano's NUMA report of one node (cluster-wide, named after the node), written by Volcano's "
        "resource-exporter (in vclite: by you): the kubelet's CPU and topology manager policies, the CPU topology "
        "and the CPUs still free; the numa-aware scheduler plugin places pods with a topologyPolicy by it.",
        "the node's policies, CPU topology, free CPUs and reservation", NUMATOPOLOGY_SPEC, "", ()),
    "PodGroup": KindDoc(
        "A gang of pods: the Volcano scheduler places none of them until minMember can be placed together. The "
        "vcjob controller makes one per vcjob (`<job>-<uid>`); a pod for the volcano scheduler without one gets "
        "its own (`podgroup-<uid>`).", "the gang and the queue it waits in", PODGROUP_SPEC,
        "what the scheduler reports: the phase, conditions and pod counts", PODGROUP_STATUS),
}

TOP_LEVEL: Obj = {
    "apiVersion": string("the group and version of the object's schema (`<group>/<version>`)"),
    "kind": string("the kind of the object, in CamelCase"),
    "metadata": obj("standard object metadata: name, namespace, labels, annotations, ownerReferences…"),
}


def _build() -> dict[str, tuple[str, Obj]]:
    out = {kind: (d.description, {"spec": obj(d.spec_description, properties(d.spec)),
                                  **({"status": obj(d.status_description, properties(d.status))}
                                     if d.status else {})})
           for kind, d in KINDS.items()}
    out["JobFlow"] = (flowschema.DESCRIPTION, flowschema.jobflow_properties())
    return out


_DESCRIBED = _build()


def described(kind: kinds.Kind) -> tuple[str, Obj] | None:
    """The kind's description and described top-level properties (apiVersion, kind, metadata, spec,
    status; fresh dictionaries), or None for a kind served with an open schema."""
    found = _DESCRIBED.get(kind.kind) if kind.crd else None
    if found is None:
        return None
    description, props = found
    return description, {**jsoncopy.deep_copy(TOP_LEVEL), **jsoncopy.deep_copy(props)}
