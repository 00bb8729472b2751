"""What the extender plugin sends: the scheduler's infos in the JSON shapes Volcano's Go structs marshal to.

Volcano's `api.TaskInfo`, `api.NodeInfo`, `api.JobInfo` and `api.QueueInfo` have no json tags, so an
extender reads Go's field names (`UID`, `Resreq`, `MilliCPU`…); the request wrappers do have tags
(`{"task": …, "node": …}`, see plugins/extender/argument.go). Values as Volcano holds them: cpu in
millicores, memory in bytes, other resources in thousandths (MilliValue) but `pods` as a count;
a task status and a node phase are Go's bit constants (Pending 1, Allocated 2, … Running 32).
Fields vclite does not keep are sent empty (null, 0, false, ""): NUMA, DRA, image states, a node's
usage and generations, a job's sub-jobs and fit errors; docs/differences.md lists them. The session open's
`NamespaceInfo` holds the ResourceQuotas' status, as Volcano's cache keeps it.

Must not: change the infos (the JSON is built from them, never the reverse).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import batch, meta
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

Obj = dict[str, Any]
TaskStatus = tasks_mod.TaskStatus
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")
STATUS_CODE = {s: 1 << i for i, s in enumerate(
    (TaskStatus.PENDING, TaskStatus.ALLOCATED, TaskStatus.PIPELINED, TaskStatus.BINDING, TaskStatus.BOUND,
     TaskStatus.RUNNING, TaskStatus.RELEASING, TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.UNKNOWN))}
NODE_READY, NODE_NOT_READY = 1, 2


def namespace_info(quotas: list[Obj]) -> Obj:
    """Volcano's `NamespaceInfo` by namespace: `{Name, QuotaStatus}`, each ResourceQuota's status (`hard`,
    `used`: v1.ResourceQuotaStatus's json) by name, for the namespaces that have quotas (its cache's)."""
    out: Obj = {}
    for q in sorted(quotas, key=meta.key):
        ns = meta.namespace(q)
        status = q.get("status") or {}
        info = out.setdefault(ns, {"Name": ns, "QuotaStatus": {}})
        info["QuotaStatus"][meta.name(q)] = {k: status[k] for k in ("hard", "used") if status.get(k)}
    return out


def resource(v: np.ndarray | None, dims: dims_mod.Dims) -> Obj | None:
    """Volcano's `Resource` of a vector: MilliCPU, Memory, ScalarResources (thousandths; pods a count)."""
    if v is None:
        return None
    scalars: dict[str, float] = {}
    for i, name in enumerate(dims.names):
        if name in (dims_mod.CPU, dims_mod.MEMORY) or v[i] == 0:
            continue
        value = float(v[i])
        scalars[name] = value if name == dims_mod.PODS else value * 1000 / dims_mod.unit(name)
    return {"MilliCPU": float(v[dims.index[dims_mod.CPU]]), "Memory": float(v[dims.index[dims_mod.MEMORY]]),
            "ScalarResources": scalars or None, "MaxTaskNum": int(v[dims.pods])}


def _parse_bool(value: str) -> bool | None:
    return True if value in _TRUE else False if value in _FALSE else None


def preemptable(obj: Obj) -> bool:
    """Volcano's GetPodPreemptable (and a job's, from its PodGroup): the annotation `volcano.sh/preemptable`,
    else the label; false."""
    for where in (meta.annotations(obj), meta.labels(obj)):
        if batch.PREEMPTABLE in where:
            return bool(_parse_bool(where[batch.PREEMPTABLE]))
    return False


def revocable_zone(obj: Obj) -> str:
    """Volcano's GetPodRevocableZone (a pod's or a PodGroup's): `*` for an annotation `*` or a true
    `volcano.sh/preemptable`; else ""."""
    notes = meta.annotations(obj)
    if batch.REVOCABLE_ZONE in notes:
        return "*" if notes[batch.REVOCABLE_ZONE] == "*" else ""
    return "*" if _parse_bool(notes.get(batch.PREEMPTABLE, "")) else ""


def _restartable_init(pod: Obj) -> bool:
    return any(c.get("restartPolicy") == "Always" for c in (pod.get("spec") or {}).get("initContainers") or ())


def task(t: tasks_mod.TaskInfo, dims: dims_mod.Dims) -> Obj:
    """A `TaskInfo` (TransactionContext's fields inlined, as Go embeds it)."""
    last = None
    if t.last_transaction is not None:
        status, node, evicted = t.last_transaction
        last = {"NodeName": node, "EvictionOccurred": evicted, "JobAllocatedHyperNode": "",
                "Status": STATUS_CODE[status]}
    req = resource(t.req, dims)
    return {
        "UID": t.uid, "Job": t.job, "Name": t.name, "Namespace": t.namespace,
        "TaskRole": t.role, "Resreq": req, "InitResreq": req, "DRAResreq": None, "ResourceClaimKeys": None,
        "ResourceClaimDRAResreq": None,
        "NodeName": t.node, "EvictionOccurred": t.evicted_for, "JobAllocatedHyperNode": "",
        "Status": STATUS_CODE[t.status], "LastTransaction": last,
        "Priority": t.priority, "VolumeReady": False, "Preemptable": preemptable(t.pod),
        "BestEffort": t.best_effort, "HasRestartableInitContainer": _restartable_init(t.pod),
        "SchGated": t.scheduling_gated, "RevocableZone": revocable_zone(t.pod), "NumaInfo": None,
        "Pod": t.pod, "PodAnnotations": dict(meta.annotations(t.pod)), "CustomBindErrHandlerSucceeded": False,
    }


class Encoder:
    """The JSON of one session's infos; a node's `Tasks` index is rebuilt when any node changed."""

    def __init__(self, ssn: "session_mod.Session"):
        self.ssn = ssn
        self.dims = ssn.dims
        self._by_node: dict[str, list[tasks_mod.TaskInfo]] | None = None
        self._seen_changes = -1

    def task(self, t: tasks_mod.TaskInfo) -> Obj:
        return task(t, self.dims)

    def tasks(self, ts: list[tasks_mod.TaskInfo]) -> list[Obj]:
        return [self.task(t) for t in ts]

    def _node_tasks(self, name: str) -> list[tasks_mod.TaskInfo]:
        changes = len(self.ssn.nodes.changes)
        if self._by_node is None or changes != self._seen_changes:
            by_node: dict[str, list[tasks_mod.TaskInfo]] = {}
            for job in self.ssn.jobs.values():
                for t in job.tasks.values():
                    if t.node and t.status in tasks_mod.OCCUPYING_STATUS:
                        by_node.setdefault(t.node, []).append(t)
            self._by_node, self._seen_changes = by_node, changes
        return self._by_node.get(name, [])

    def node(self, row: int) -> Obj:
        """A `NodeInfo`: the Node object, its phase and the session's books of it."""
        nodes, dims = self.ssn.nodes, self.dims
        obj = nodes.objects[row]
        name = nodes.names[row]
        status = obj.get("status") or {}
        capacity = status.get("capacity")
        cap = (dims.vector(nodes_mod.allocatable_list({"status": {"allocatable": capacity}}))
               if capacity else nodes.allocatable[row])
        ready = nodes_mod.is_ready(obj)
        return {
            "Name": name, "Node": obj,
            "State": {"Phase": NODE_READY if ready else NODE_NOT_READY, "Reason": "" if ready else "NotReady"},
            "Releasing": resource(nodes.releasing[row], dims), "Pipelined": resource(nodes.pipelined[row], dims),
            "Idle": resource(nodes.idle[row], dims), "Used": resource(nodes.used[row], dims),
            "Allocatable": resource(nodes.allocatable[row], dims), "Capacity": resource(cap, dims),
            "ResourceUsage": None,
            "Tasks": {t.uid: self.task(t) for t in self._node_tasks(name)},
            "NumaInfo": None, "UnassignedNumaPods": None, "NumaSchedulerInfo": None,
            "RevocableZone": meta.labels(obj).get(batch.REVOCABLE_ZONE, ""), "Others": None,
            "OversubscriptionNode": False, "OfflineJobEvicting": False, "OversubscriptionResource": None,
            "ImageStates": None, "Generation": 0, "BindGeneration": 0,
        }

    def nodes(self, rows: Any) -> list[Obj]:
        return [self.node(int(r)) for r in rows]

    def job(self, job: "jobs_mod.JobInfo") -> Obj:
        """A `JobInfo`: its PodGroup (Go's PodGroup embeds the object, plus `Version`) and tasks."""
        dims = self.dims
        index = {str(STATUS_CODE[s]): {uid: self.task(t) for uid, t in bucket.items()}
                 for s, bucket in job.index.items() if bucket}
        total = dims.zeros()
        for t in job.tasks.values():
            total = total + t.req
        pg = dict(job.podgroup) if isinstance(job.podgroup, dict) else {}
        pg["Version"] = "v1beta1"
        created = (job.podgroup.get("metadata") or {}).get("creationTimestamp") if pg else None
        return {
            "UID": job.uid, "PgUID": meta.uid(job.podgroup) if isinstance(job.podgroup, dict) else "",
            "Name": job.name, "Namespace": job.namespace, "Queue": job.queue, "Priority": job.priority,
            "MinAvailable": job.min_available, "WaitingTime": None, "JobFitErrors": "", "NodesFitErrors": None,
            "AllocatedHyperNode": "", "NetworkTopology": (pg.get("spec") or {}).get("networkTopology"),
            "SubJobs": None, "TaskToSubJob": None, "MinSubJobs": None,
            "TaskStatusIndex": index, "Tasks": {uid: self.task(t) for uid, t in job.tasks.items()},
            "TaskMinAvailable": dict(job.min_task_member), "TaskMinAvailableTotal": sum(job.min_task_member.values()),
            "Allocated": resource(job.allocated, dims), "TotalRequest": resource(total, dims),
            "CreationTimestamp": created, "PodGroup": pg, "ScheduleStartTimestamp": None,
            "Preemptable": preemptable(pg), "RevocableZone": revocable_zone(pg), "Budget": None,
        }

    @staticmethod
    def queue(q: "jobs_mod.QueueInfo") -> Obj:
        """A `QueueInfo` (Weights and Hierarchy are hierarchical drf's annotations)."""
        notes = meta.annotations(q.obj)
        return {"UID": q.uid, "Name": q.name, "Weight": q.weight,
                "Weights": notes.get("volcano.sh/hierarchy-weights", ""),
                "Hierarchy": notes.get("volcano.sh/hierarchy", ""), "Queue": q.obj}

    def session_open(self) -> Obj:
        """OnSessionOpenRequest (no json tags: Go's field names)."""
        ssn = self.ssn
        nodes = {name: self.node(row) for row, name in enumerate(ssn.nodes.names)}
        return {"Jobs": {uid: self.job(j) for uid, j in ssn.jobs.items()}, "Nodes": nodes,
                "Queues": {uid: self.queue(q) for uid, q in ssn.queues.items()},
                "NamespaceInfo": namespace_info(ssn.resource_quotas),
                "RevocableNodes": {name: n for name, n in nodes.items() if n["RevocableZone"]},
                "NodeList": None}

