"""The session's view of the cluster, built from plain API objects (Volcano's cache Snapshot).

`ClusterState` is what the shell lists from the API (Nodes, Queues, PodGroups, Pods,
PriorityClasses). `build` turns it into columns and infos:
- only Ready nodes (a node without a Ready condition counts as Ready), sorted by name;
- every pod bound to one of those nodes and not finished occupies it, whoever scheduled it;
- a job per PodGroup whose queue exists; a pod is one of its tasks when its schedulerName is
  ours and its `scheduling.k8s.io/group-name` annotation names that PodGroup;
- job priority = the PodGroup's priorityClassName value, else the global default class, else 0;
  task priority = spec.priority, else its priorityClassName's value, else 1, overridden by the
  `volcano.sh/task-priority` annotation.

Must not: mutate the input objects (infos keep references for reading only).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from vclite.api import batch, meta, resources, scheduling
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import jobs as jobs_mod
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.framework import tasks as tasks_mod

Obj = dict[str, Any]
DEFAULT_SCHEDULER_NAME = batch.DEFAULT_SCHEDULER


@dataclasses.dataclass
class ClusterState:
    nodes: list[Obj] = dataclasses.field(default_factory=list)
    queues: list[Obj] = dataclasses.field(default_factory=list)
    podgroups: list[Obj] = dataclasses.field(default_factory=list)
    pods: list[Obj] = dataclasses.field(default_factory=list)
    priority_classes: list[Obj] = dataclasses.field(default_factory=list)
    # Optional memo of pod requests keyed by (uid, resourceVersion), kept by the caller across
    # sessions (parsing quantities is the costliest part of a snapshot); pruned to live pods.
    request_cache: dict | None = None


@dataclasses.dataclass
class Snapshot:
    dims: dims_mod.Dims
    nodes: nodes_mod.NodeState
    jobs: dict[str, jobs_mod.JobInfo]
    queues: dict[str, jobs_mod.QueueInfo]
    total: np.ndarray


def _pod_requests(pod: Obj) -> dict[str, dims_mod.Fraction] | None:
    try:
        return resources.pod_requests(pod)
    except ValueError:
        return None  # admission rejects such pods; one that slipped through is not scheduled


def _relevant(pod: Obj, groups: set[str]) -> bool:
    """A finished pod (Succeeded/Failed) uses no node resources; it matters only to its gang."""
    if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
        return True
    group = meta.annotations(pod).get(batch.GROUP_NAME)
    return bool(group) and f"{meta.namespace(pod)}/{group}" in groups


def _cached_requests(pod: Obj, cache: dict | None) -> dict[str, dims_mod.Fraction] | None:
    if cache is None:
        return _pod_requests(pod)
    key = (meta.uid(pod), pod["metadata"].get("resourceVersion"))
    if key not in cache:
        cache[key] = _pod_requests(pod)
    return cache[key]


def _spec_list(obj: Obj, *path: str) -> dict[str, dims_mod.Fraction]:
    cur: Any = obj
    for p in path:
        cur = (cur or {}).get(p) if isinstance(cur, dict) else None
    try:
        return resources.from_resource_list(cur)
    except ValueError:
        return {}


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class _Priorities:
    def __init__(self, classes: list[Obj]):
        self.values = {meta.name(c): _int(c.get("value"), 0) for c in classes}
        defaults = [c for c in classes if c.get("globalDefault")]
        self.default = _int(defaults[0].get("value"), 0) if defaults else None

    def job(self, pg: Obj) -> int:
        name = (pg.get("spec") or {}).get("priorityClassName")
        if name in self.values:
            return self.values[name]
        return self.default if self.default is not None else 0

    def task(self, pod: Obj) -> int:
        spec = pod.get("spec") or {}
        prio = spec.get("priority")
        if prio is None:
            prio = self.values.get(spec.get("priorityClassName"), tasks_mod.DEFAULT_TASK_PRIORITY)
        return _int(meta.annotations(pod).get(batch.TASK_PRIORITY), _int(prio, tasks_mod.DEFAULT_TASK_PRIORITY))


def _queue_info(q: Obj, dims: dims_mod.Dims) -> jobs_mod.QueueInfo:
    spec = q.get("spec") or {}
    cap_list = _spec_list(q, "spec", "capability")
    capability = dims.vector(cap_list, missing=np.inf)
    for name in (dims_mod.CPU, dims_mod.MEMORY):  # Volcano: cpu/memory capability ≤ 0 means unlimited
        i = dims.index[name]
        if capability[i] <= 0:
            capability[i] = np.inf
    name = meta.name(q)
    parent = spec.get("parent") or ("" if name == scheduling.ROOT_QUEUE else scheduling.ROOT_QUEUE)
    return jobs_mod.QueueInfo(
        name=name, weight=max(_int(spec.get("weight"), 1), 1) if spec.get("weight") is not None else 1,
        priority=_int(spec.get("priority"), 0), state=meta.phase(q), created=tasks_mod.created(q),
        capability=capability, guarantee=dims.vector(_spec_list(q, "spec", "guarantee", "resource")),
        parent=parent, obj=q)


def _job_info(pg: Obj, dims: dims_mod.Dims, prio: _Priorities) -> jobs_mod.JobInfo:
    spec = pg.get("spec") or {}
    status = pg.get("status") or {}
    min_res = spec.get("minResources")
    phase = status.get("phase") or scheduling.PodGroupPhase.PENDING
    try:
        phase = scheduling.PodGroupPhase(phase)
    except ValueError:
        phase = scheduling.PodGroupPhase.PENDING
    return jobs_mod.JobInfo(
        uid=meta.key(pg), name=meta.name(pg), namespace=meta.namespace(pg),
        queue=spec.get("queue") or scheduling.DEFAULT_QUEUE, podgroup=pg,
        min_available=_int(spec.get("minMember"), 0),
        min_task_member={str(k): _int(v, 0) for k, v in (spec.get("minTaskMember") or {}).items()},
        priority=prio.job(pg), created=tasks_mod.created(pg), phase=phase,
        min_resources=dims.vector(_spec_list(pg, "spec", "minResources")) if min_res is not None else None,
        allocated=dims.zeros(), conditions=[dict(c) for c in status.get("conditions") or []])


def build(state: ClusterState, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Snapshot:
    ready = [n for n in state.nodes if nodes_mod.is_ready(n)]
    groups = {meta.key(pg) for pg in state.podgroups}
    pod_reqs = [(p, _cached_requests(p, state.request_cache)) for p in sorted(state.pods, key=meta.key)
                if _relevant(p, groups)]
    if state.request_cache is not None:
        live = {(meta.uid(p), p["metadata"].get("resourceVersion")) for p, _ in pod_reqs}
        for k in [k for k in state.request_cache if k not in live]:
            del state.request_cache[k]
    allocs = {meta.name(n): nodes_mod.allocatable_list(n) for n in ready}
    names: set[str] = set()
    for a in allocs.values():
        names.update(a)
    for _, r in pod_reqs:
        names.update(r or ())
    for q in state.queues:
        names.update(_spec_list(q, "spec", "capability"), _spec_list(q, "spec", "guarantee", "resource"))
    for pg in state.podgroups:
        names.update(_spec_list(pg, "spec", "minResources"))
    dims = dims_mod.Dims(names)
    nodes = nodes_mod.NodeState(dims, ready, allocs)
    prio = _Priorities(state.priority_classes)
    queues = {q.name: q for q in (_queue_info(o, dims) for o in state.queues)}
    jobs: dict[str, jobs_mod.JobInfo] = {}
    for pg in sorted(state.podgroups, key=meta.key):
        job = _job_info(pg, dims, prio)
        if job.queue in queues:
            jobs[job.uid] = job
    for pod, req in pod_reqs:
        if req is None:
            continue
        _add_pod(pod, dims.vector(req), dims, nodes, jobs, prio, scheduler_name)
    return Snapshot(dims, nodes, jobs, queues, nodes.allocatable.sum(axis=0))


def _add_pod(pod: Obj, req: np.ndarray, dims: dims_mod.Dims, nodes: nodes_mod.NodeState,
             jobs: dict[str, jobs_mod.JobInfo], prio: _Priorities, scheduler_name: str) -> None:
    status = tasks_mod.pod_status(pod)
    node = tasks_mod.node_name(pod)
    row = nodes.index.get(node) if node else None
    if row is not None and status in tasks_mod.OCCUPYING_STATUS:
        nodes.add_task(row, req, status)
    spec = pod.get("spec") or {}
    group = meta.annotations(pod).get(batch.GROUP_NAME)
    if (spec.get("schedulerName") or "default-scheduler") != scheduler_name or not group:
        return
    job = jobs.get(f"{meta.namespace(pod)}/{group}")
    if job is None:
        return
    job.add_task(tasks_mod.TaskInfo(
        uid=meta.uid(pod) or meta.key(pod), key=meta.key(pod), name=meta.name(pod), namespace=meta.namespace(pod),
        job=job.uid, role=tasks_mod.role(pod), status=status, req=req,
        best_effort=bool((req[dims.not_pods] <= 0).all()), priority=prio.task(pod),
        created=tasks_mod.created(pod), pod=pod, node=node))
