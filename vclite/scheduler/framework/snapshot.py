"""The session's view of the cluster, built from plain API objects (Volcano's cache Snapshot).

`ClusterState` is what the shell lists from the API (Nodes, Queues, PodGroups, Pods,
PriorityClasses, Namespaces, HyperNodes, ResourceQuotas). `build` turns it into columns and infos:
- only Ready nodes (a node without a Ready condition counts as Ready), sorted by name;
- every pod bound to one of those nodes and not finished occupies it, whoever scheduled it;
- a job per PodGroup whose queue exists; a pod is one of its tasks when its schedulerName is
  ours and its `scheduling.k8s.io/group-name` annotation names that PodGroup;
- job priority = the PodGroup's priorityClassName value, else the global default class, else 0;
  task priority = spec.priority, else its priorityClassName's value, else 1, overridden by the
  `volcano.sh/task-priority` annotation.

Speed: quantities are parsed once per distinct resource list (pods of one job, nodes of one
shape and PodGroups of one size share theirs), each distinct list becomes one read-only vector
shared by its tasks, timestamps are parsed once per distinct text, and node occupancy is added
in bulk; a PodGroup version seen by an earlier session is not read again (only its JobInfo is made
afresh). Building is linear in the objects with a small constant.

Must not: mutate the input objects (infos keep references for reading only).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Mapping

import numpy as np

from vclite.api import batch, meta, resources, scheduling
from vclite.lib import clock
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import jobs as jobs_mod
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.framework import waiting as waiting_mod

Obj = dict[str, Any]
DEFAULT_SCHEDULER_NAME = batch.DEFAULT_SCHEDULER
FINISHED = ("Succeeded", "Failed")
_EMPTY: dict = {}


@dataclasses.dataclass
class ClusterState:
    nodes: list[Obj] = dataclasses.field(default_factory=list)
    queues: list[Obj] = dataclasses.field(default_factory=list)
    podgroups: list[Obj] = dataclasses.field(default_factory=list)
    pods: list[Obj] = dataclasses.field(default_factory=list)
    priority_classes: list[Obj] = dataclasses.field(default_factory=list)
    namespaces: list[Obj] = dataclasses.field(default_factory=list)   # (their labels: namespaceSelector)
    hypernodes: list[Obj] = dataclasses.field(default_factory=list)   # (network topology: framework/hypernodes)
    numatopologies: list[Obj] = dataclasses.field(default_factory=list)   # (the numa-aware plugin)
    pdbs: list[Obj] = dataclasses.field(default_factory=list)   # PodDisruptionBudgets (the pdb plugin)
    resource_quotas: list[Obj] = dataclasses.field(default_factory=list)   # (their status: plugins/resourcequota)
    # PersistentVolumeClaims (the predicates plugin's VolumeBinding PreFilter); None: not known (a dry run over
    # manifests, where no volume controller binds them), and a pod's claims are not looked at
    claims: list[Obj] | None = None
    # Optional memo of pod requests keyed by (uid, resourceVersion), kept by the caller across
    # sessions (parsing quantities is the costliest part of a snapshot); pruned to live pods.
    # `build` also keeps its memos of parsed resource lists and times there, under SHARED_MEMO, and
    # what each PodGroup version gives its JobInfo (by object identity, pruned to the listed ones).
    request_cache: dict | None = None
    # PodGroups enqueue rejected before, kept by the caller across sessions (`podgroups` then
    # holds the others); without one, `build` sorts them out of `podgroups` itself.
    waiting: waiting_mod.Pool | None = None
    # What Volcano's plugins keep for the life of the scheduler process (tdm's last eviction time),
    # kept by the caller across sessions; a session without one starts afresh (a dry run). A
    # scheduler process puts its start time there, under STARTED_AT (rescheduling's first interval).
    memory: dict | None = None
    # Node name -> nodemetrics.NodeUsage read from the configured metrics source (Volcano's
    # NodeInfo.ResourceUsage); a node not in it has none (the usage and rescheduling plugins)
    node_usage: Mapping[str, Any] | None = None


STARTED_AT = "scheduler.startedAt"   # ClusterState.memory: when the scheduler process started (a datetime)


@dataclasses.dataclass
class Snapshot:
    dims: dims_mod.Dims
    nodes: nodes_mod.NodeState
    jobs: dict[str, jobs_mod.JobInfo]
    queues: dict[str, jobs_mod.QueueInfo]
    total: np.ndarray
    pods: list[Obj] = dataclasses.field(default_factory=list)  # every listed pod, read-only (plugins/podindex)
    priority_classes: list[Obj] = dataclasses.field(default_factory=list)  # read-only (preemptionPolicy)
    namespaces: list[Obj] = dataclasses.field(default_factory=list)  # read-only (pod affinity's namespaceSelector)
    hypernodes: list[Obj] = dataclasses.field(default_factory=list)   # read-only (framework/hypernodes, lazily)
    numatopologies: list[Obj] = dataclasses.field(default_factory=list)   # read-only (the numa-aware plugin)
    pdbs: list[Obj] = dataclasses.field(default_factory=list)   # read-only PodDisruptionBudgets (the pdb plugin)
    resource_quotas: list[Obj] = dataclasses.field(default_factory=list)   # read-only (plugins/resourcequota)
    claims: list[Obj] | None = None   # read-only PersistentVolumeClaims (ClusterState.claims)
    # PodGroups waiting for room, by queue, without JobInfos (waiting.py): with `lazy_waiting` only
    waiting: dict[str, list[waiting_mod.WaitingClass]] = dataclasses.field(default_factory=dict)
    memory: dict = dataclasses.field(default_factory=dict)   # ClusterState.memory (plugins' process-long state)
    node_usage: Mapping[str, Any] = dataclasses.field(default_factory=dict)   # ClusterState.node_usage


def _pod_requests(pod: Obj) -> dict[str, dims_mod.Fraction] | None:
    try:
        return resources.pod_requests(pod)
    except ValueError:
        return None  # admission rejects such pods; one that slipped through is not scheduled


def finished(pod: Obj) -> bool:
    """Succeeded or Failed: the pod uses no node resources any more."""
    return (pod.get("status") or _EMPTY).get("phase") in FINISHED


def _relevant(pod: Obj, groups: set[str]) -> bool:
    """A finished pod uses no node resources; it matters only to its gang."""
    if not finished(pod):
        return True
    group = meta.annotations(pod).get(batch.GROUP_NAME)
    return bool(group) and f"{meta.namespace(pod)}/{group}" in groups


def _request_signature(pod: Obj) -> tuple | None:
    """Everything of the pod its effective request depends on (None: not a plain pod shape)."""
    spec = pod.get("spec")
    if spec is None or "containers" in pod:
        return None
    if not isinstance(spec, dict):
        return None
    sig: list[Any] = [repr(c.get("resources")) if isinstance(c, dict) else repr(c)
                      for c in spec.get("containers") or ()]
    inits = spec.get("initContainers")
    if inits:
        sig.append(("init", repr([(c.get("resources"), c.get("restartPolicy")) if isinstance(c, dict) else c
                                  for c in inits])))
    overhead = spec.get("overhead")
    if overhead:
        sig.append(("overhead", repr(overhead)))
    own = spec.get("resources")
    if own:
        sig.append(("resources", repr(own)))
    return tuple(sig)


SHARED_MEMO = "vclite.snapshot/parsed"   # request_cache key of the memos kept across sessions
SHARED_LIMIT = 10_000                      # entries per shared memo before it is emptied


class _Memo:
    """One build's memos: parsed lists by content, vectors by parsed list, times by text. With a
    request_cache, the memos by content are kept there across sessions (values are read-only)."""

    def __init__(self, request_cache: dict | None):
        self.request_cache = request_cache
        shared: dict[str, dict] = {}
        if request_cache is not None:
            shared = request_cache.setdefault(SHARED_MEMO, {})
            for name, memo in shared.items():
                if len(memo) > SHARED_LIMIT and name != "podgroups":   # (that one is pruned to the live)
                    memo.clear()
        self.requests: dict[tuple, dict | None] = shared.setdefault("requests", {})
        self.lists: dict[str, dict] = shared.setdefault("lists", {})
        self.times: dict[Any, Any] = shared.setdefault("times", {})
        self.empty: dict = self.lists.setdefault("", {})   # (no list's repr is "")
        # keyed by id(); each entry keeps its key object alive, so an id cannot be reused meanwhile
        self.vectors: dict[tuple[int, tuple], tuple[dict, np.ndarray]] = shared.setdefault("vectors", {})
        self.best_effort: dict[int, tuple[np.ndarray, bool]] = shared.setdefault("best_effort", {})
        self.podgroups: dict[int, _PodGroupEntry] = shared.setdefault("podgroups", {})   # by id(PodGroup)
        self.queues: dict[int, tuple[Obj, dims_mod.Dims, jobs_mod.QueueInfo]] = shared.setdefault("queues", {})
        self.queue_names: dict[int, tuple[Obj, frozenset[str]]] = shared.setdefault("queue_names", {})   # by id(Queue)
        self._dims: dict[frozenset, dims_mod.Dims] = shared.setdefault("dims", {})

    def dims(self, names: set[str]) -> dims_mod.Dims:
        """The session's Dims, one object per distinct set of names (read-only)."""
        key = frozenset(names)
        hit = self._dims.get(key)
        if hit is None:
            hit = self._dims[key] = dims_mod.Dims(key)
        return hit

    def pod_request(self, pod: Obj) -> dict | None:
        cache = self.request_cache
        if cache is not None:
            key = (meta.uid(pod), pod["metadata"].get("resourceVersion"))
            if key in cache:
                return cache[key]
        sig = _request_signature(pod)
        if sig is None:
            req = _pod_requests(pod)
        elif sig in self.requests:
            req = self.requests[sig]
        else:
            req = self.requests[sig] = _pod_requests(pod)
        if cache is not None:
            cache[key] = req
        return req

    def queue_resource_names(self, q: Obj) -> frozenset[str]:
        """The resources a Queue's spec names (capability, guarantee, capacity's deserved): read once per
        stored version (a new version is a new object)."""
        hit = self.queue_names.get(id(q))
        if hit is not None and hit[0] is q:
            return hit[1]
        names = {*_spec_list(q, "spec", "capability"), *_spec_list(q, "spec", "guarantee", "resource")}
        if (q.get("spec") or _EMPTY).get("deserved"):   # (the capacity plugin's)
            names.update(_spec_list(q, "spec", "deserved"))
        out = frozenset(names)
        self.queue_names[id(q)] = (q, out)
        return out

    def resource_list(self, raw: Any) -> dict:
        """`resources.from_resource_list(raw)`, {} if invalid; shared by equal lists (read-only)."""
        if not raw:
            return self.empty
        key = repr(raw)
        out = self.lists.get(key)
        if out is None:
            try:
                out = resources.from_resource_list(raw)
            except ValueError:
                out = {}
            self.lists[key] = out
        return out

    def vector(self, dims: dims_mod.Dims, parsed: dict) -> np.ndarray:
        """dims.vector(parsed), one read-only array per distinct parsed list."""
        key = (id(parsed), dims.names)
        hit = self.vectors.get(key)
        if hit is not None:
            return hit[1]
        v = dims.vector(parsed)
        v.flags.writeable = False
        self.vectors[key] = (parsed, v)
        return v

    def is_best_effort(self, dims: dims_mod.Dims, vec: np.ndarray) -> bool:
        hit = self.best_effort.get(id(vec))
        if hit is not None:
            return hit[1]
        b = bool((vec[dims.not_pods] <= 0).all())
        self.best_effort[id(vec)] = (vec, b)
        return b

    def created(self, obj: Obj) -> Any:
        text = (obj.get("metadata") or _EMPTY).get("creationTimestamp")
        t = self.times.get(text)
        if t is None:
            t = self.times[text] = clock.parse_time(text) or tasks_mod.EPOCH
        return t


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
    """Job and task priorities from the PriorityClasses. A pod without `spec.priority` (a dry run's state written
    by hand: on a cluster, the Priority admission plugin fills it in) has its class's value, else the global
    default class's (the lowest if several claim it, as the admission plugin picks), else Volcano's 1 for a pod
    whose priority is unset."""

    def __init__(self, classes: list[Obj]):
        self.values = {meta.name(c): _int(c.get("value"), 0) for c in classes}
        defaults = [c for c in classes if c.get("globalDefault")]
        self.default = _int(defaults[0].get("value"), 0) if defaults else None
        pod_defaults = [_int(c.get("value"), 0) for c in defaults]
        self.pod_default = min(pod_defaults, default=tasks_mod.DEFAULT_TASK_PRIORITY)

    def job(self, pg: Obj) -> int:
        name = (pg.get("spec") or {}).get("priorityClassName")
        if name in self.values:
            return self.values[name]
        return self.default if self.default is not None else 0

    def task(self, pod: Obj) -> int:
        spec = pod.get("spec") or {}
        prio = spec.get("priority")
        if prio is None:
            name = spec.get("priorityClassName")
            prio = self.values.get(name, tasks_mod.DEFAULT_TASK_PRIORITY) if name else self.pod_default
        annotated = meta.annotations(pod).get(batch.TASK_PRIORITY)
        if annotated is None:
            return _int(prio, tasks_mod.DEFAULT_TASK_PRIORITY)
        return _int(annotated, _int(prio, tasks_mod.DEFAULT_TASK_PRIORITY))


def _queue_info(q: Obj, dims: dims_mod.Dims, memo: "_Memo") -> jobs_mod.QueueInfo:
    """The queue's info; its vectors are read-only and shared by the sessions that see the same
    stored version of the queue with the same dimensions."""
    hit = memo.queues.get(id(q))
    if hit is not None and hit[0] is q and hit[1] is dims:
        return hit[2]
    spec = q.get("spec") or {}
    cap_list = _spec_list(q, "spec", "capability")
    capability = dims.vector(cap_list, missing=np.inf)
    for name in (dims_mod.CPU, dims_mod.MEMORY):  # Volcano: cpu/memory capability ≤ 0 means unlimited
        i = dims.index[name]
        if capability[i] <= 0:
            capability[i] = np.inf
    guarantee = dims.vector(_spec_list(q, "spec", "guarantee", "resource"))
    capability.flags.writeable = guarantee.flags.writeable = False
    name = meta.name(q)
    parent = spec.get("parent") or ("" if name == scheduling.ROOT_QUEUE else scheduling.ROOT_QUEUE)
    info = jobs_mod.QueueInfo(
        name=name, weight=max(_int(spec.get("weight"), 1), 1) if spec.get("weight") is not None else 1,
        priority=_int(spec.get("priority"), 0), state=meta.phase(q), created=tasks_mod.created(q),
        capability=capability, guarantee=guarantee, parent=parent, obj=q)
    memo.queues[id(q)] = (q, dims, info)
    return info


_PHASES = {str(p): p for p in scheduling.PodGroupPhase}


def _min_resources(pg: Obj, memo: _Memo) -> dict | None:
    """The PodGroup's minResources parsed (None if absent; {} if invalid)."""
    min_res = (pg.get("spec") or _EMPTY).get("minResources")
    if min_res is None:
        return None
    return memo.resource_list(min_res) if isinstance(min_res, dict) else _spec_list(pg, "spec", "minResources")


class _PodGroupEntry:
    """What a PodGroup object gives its JobInfo, whatever the session: derived once per stored
    version (stored objects are never modified; a new version is a new object) and kept across
    sessions in the shared memo, so a PodGroup that waits through many sessions is read once."""

    __slots__ = ("pg", "key", "min_list", "fields", "conditions")

    def __init__(self, pg: Obj, memo: "_Memo"):
        spec = pg.get("spec") or _EMPTY
        status = pg.get("status") or _EMPTY
        raw_phase = status.get("phase") or scheduling.PodGroupPhase.PENDING
        # a phase the scheduler does not know (another tool's) is not Pending: Volcano's JobInfo.IsPending is
        # Pending or "" only, so enqueue leaves it and allocate takes it, as a PodGroup in phase Unknown
        phase = _PHASES.get(raw_phase, scheduling.PodGroupPhase.UNKNOWN) if isinstance(raw_phase, str) else \
            scheduling.PodGroupPhase.UNKNOWN
        md = pg.get("metadata") or _EMPTY
        ns, name = md.get("namespace", "") or "", md.get("name", "")
        mtm = spec.get("minTaskMember")
        self.pg = pg
        self.key = meta.key(pg)
        self.min_list = _min_resources(pg, memo)
        self.conditions = status.get("conditions") or None
        self.fields = dict(   # JobInfo's fields that depend on the PodGroup alone (read-only values)
            uid=f"{ns}/{name}" if ns else name, name=name, namespace=ns,
            queue=spec.get("queue") or scheduling.DEFAULT_QUEUE, podgroup=pg,
            min_available=_int(spec.get("minMember"), 0),
            min_task_member={str(k): _int(v, 0) for k, v in mtm.items()} if mtm else {},
            created=memo.created(pg), phase=phase)


def _podgroup_entries(podgroups: list[Obj], memo: "_Memo") -> list[_PodGroupEntry]:
    """One entry per PodGroup, sorted by key; entries of PodGroups seen before are reused."""
    known = memo.podgroups
    entries = []
    for pg in podgroups:
        entry = known.get(id(pg))
        if entry is None or entry.pg is not pg:
            entry = _PodGroupEntry(pg, memo)
        entries.append(entry)
    if memo.request_cache is not None:   # keep the live ones only (an entry keeps its object alive)
        memo.podgroups = memo.request_cache[SHARED_MEMO]["podgroups"] = {id(e.pg): e for e in entries}
    entries.sort(key=operator.attrgetter("key"))
    return entries


def _job_info(entry: _PodGroupEntry, dims: dims_mod.Dims, prio: _Priorities, memo: _Memo) -> jobs_mod.JobInfo:
    return jobs_mod.JobInfo(
        **entry.fields, priority=prio.job(entry.pg),
        min_resources=memo.vector(dims, entry.min_list) if entry.min_list is not None else None,
        allocated=dims.zeros(), conditions=list(entry.conditions) if entry.conditions else [])


def build(state: ClusterState, scheduler_name: str = DEFAULT_SCHEDULER_NAME, lazy_waiting: bool = False) -> Snapshot:
    """`lazy_waiting`: PodGroups enqueue rejected before and without pods get no JobInfo; they are
    the snapshot's `waiting` classes instead (waiting.enabled says when that is exact)."""
    memo = _Memo(state.request_cache)
    ready = [n for n in state.nodes if nodes_mod.is_ready(n)]
    pool, podgroups = state.waiting, state.podgroups
    if lazy_waiting and pool is None:
        pool, podgroups = waiting_mod.Pool.of(podgroups)
    elif not lazy_waiting and pool is not None:
        podgroups = [*podgroups, *(m[2] for _, members in pool.classes() for m in members)]
        pool = None
    entries = _podgroup_entries(podgroups, memo)
    groups = {e.key for e in entries}
    keyed = sorted(((meta.key(p), p) for p in state.pods), key=operator.itemgetter(0))
    pod_reqs = [(k, p, memo.pod_request(p)) for k, p in keyed if _relevant(p, groups)]
    promoted = _waiting_with_pods(pool, pod_reqs) if pool else []
    if promoted:   # waiting PodGroups that have pods are jobs (their pods count)
        entries = sorted([*entries, *(_entry(pool.get(k)[1], memo) for k in promoted)], key=operator.attrgetter("key"))
    if state.request_cache is not None:
        live = {(meta.uid(p), p["metadata"].get("resourceVersion")) for _, p, _ in pod_reqs}
        for k in [k for k in state.request_cache if k not in live and k != SHARED_MEMO]:
            del state.request_cache[k]
    allocs = {}
    for n in ready:
        status = n.get("status") or _EMPTY
        raw = status.get("allocatable") or status.get("capacity") or {}
        parsed = memo.lists.get("node:" + repr(raw))
        if parsed is None:
            parsed = memo.lists["node:" + repr(raw)] = nodes_mod.allocatable_list(n)
        allocs[meta.name(n)] = parsed
    names: set[str] = set()
    for a in {id(a): a for a in allocs.values()}.values():
        names.update(a)
    for r in {id(r): r for _, _, r in pod_reqs if r}.values():
        names.update(r)
    for q in state.queues:
        names.update(memo.queue_resource_names(q))
    for m in {id(e.min_list): e.min_list for e in entries if e.min_list}.values():
        names.update(m)
    for _, members in pool.classes() if pool else ():   # (equal minResources within a class)
        names.update(_min_resources(members[0][2], memo) or ())
    dims = memo.dims(names)
    nodes = nodes_mod.NodeState(dims, ready, allocs, vectors={k: memo.vector(dims, a) for k, a in allocs.items()})
    prio = _Priorities(state.priority_classes)
    queues = {q.name: q for q in (_queue_info(o, dims, memo) for o in state.queues)}
    if len(memo.queues) > len(queues) or len(memo.queue_names) > len(queues):   # keep the live versions only
        live = {id(q.obj) for q in queues.values()}
        for kept in (memo.queues, memo.queue_names):
            for k in [k for k in kept if k not in live]:
                del kept[k]
    jobs: dict[str, jobs_mod.JobInfo] = {}
    for entry in entries:
        if entry.fields["queue"] in queues:
            job = _job_info(entry, dims, prio, memo)
            jobs[job.uid] = job
    _add_pods(pod_reqs, dims, nodes, jobs, prio, scheduler_name, memo)
    return Snapshot(dims, nodes, jobs, queues, nodes.allocatable.sum(axis=0), pods=state.pods,
                    memory=state.memory if state.memory is not None else {},
                    node_usage=state.node_usage if state.node_usage is not None else {},
                    priority_classes=state.priority_classes, namespaces=state.namespaces,
                    resource_quotas=state.resource_quotas, claims=state.claims,
                    hypernodes=state.hypernodes, numatopologies=state.numatopologies, pdbs=state.pdbs,
                    waiting=waiting_mod.session_classes(
                        pool, queues, lambda pg: _job_info(_entry(pg, memo), dims, prio, memo), promoted)
                    if pool else {})


def _entry(pg: Obj, memo: _Memo) -> _PodGroupEntry:
    entry = memo.podgroups.get(id(pg))
    return entry if entry is not None and entry.pg is pg else _PodGroupEntry(pg, memo)


def _waiting_with_pods(pool: waiting_mod.Pool, pod_reqs: list) -> list[str]:
    """Keys of the waiting PodGroups some listed pod names (whatever its scheduler)."""
    out = set()
    for _, pod, _ in pod_reqs:
        group = meta.annotations(pod).get(batch.GROUP_NAME)
        if group:
            key = f"{meta.namespace(pod)}/{group}"
            if key in pool:
                out.add(key)
    return sorted(out)


def _add_pods(pod_reqs: list, dims: dims_mod.Dims, nodes: nodes_mod.NodeState, jobs: dict[str, jobs_mod.JobInfo],
              prio: _Priorities, scheduler_name: str, memo: _Memo) -> None:
    index = nodes.index
    occupying = tasks_mod.OCCUPYING_STATUS
    releasing = tasks_mod.TaskStatus.RELEASING
    rows: list[int] = []
    reqs: list[np.ndarray] = []
    released: list[bool] = []
    for key, pod, parsed in pod_reqs:
        if parsed is None:
            continue
        req = memo.vector(dims, parsed)
        status = tasks_mod.pod_status(pod)
        spec = pod.get("spec") or _EMPTY
        node = spec.get("nodeName") or ""
        row = index.get(node) if node else None
        if row is not None and status in occupying:
            rows.append(row)
            reqs.append(req)
            released.append(status == releasing)
        group = meta.annotations(pod).get(batch.GROUP_NAME)
        if (spec.get("schedulerName") or "default-scheduler") != scheduler_name or not group:
            continue
        md = pod["metadata"]
        ns = md.get("namespace", "") or ""
        job = jobs.get(f"{ns}/{group}")
        if job is None:
            continue
        job.add_task(tasks_mod.TaskInfo(
            uid=md.get("uid", "") or key, key=key, name=md.get("name", ""), namespace=ns,
            job=job.uid, role=tasks_mod.role(pod), status=status, req=req,
            best_effort=memo.is_best_effort(dims, req), priority=prio.task(pod),
            created=memo.created(pod), pod=pod, node=node))
    if rows:
        nodes.occupy(np.array(rows, dtype=np.intp), np.array(reqs, dtype=np.float64).reshape(len(rows), len(dims)),
                     np.array(released, dtype=bool))
