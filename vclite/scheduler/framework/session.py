"""The scheduling session: open (plugins register hooks), run the actions, close (write statuses).

`run_session(state, conf, now)` is the pure entry point: cluster objects and a configuration in,
a SessionResult out (binds, evictions, pipelined reservations, PodGroup and Queue status updates
that differ from the stored ones). `open_session` / `close_session` expose the halves for tests.
The session UID (conditions' transitionID) is derived from `now`, so a session is reproducible.

Must not: perform I/O, read the clock, or know a particular plugin or action. (A plugin may do I/O: the
`extender` asks an HTTP service, within its timeout; the session is then only as pure as its answers.)
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import gc
import uuid
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import scheduling
from vclite.lib import clock
from vclite.scheduler.framework import fit, fitcache, hooks, pqueue, snapshot, statement
from vclite.scheduler.framework import hypernodes as hypernodes_mod
from vclite.scheduler.framework import jobs as jobs_mod
from vclite.scheduler.framework import status as status_mod
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.framework import waiting as waiting_mod

if TYPE_CHECKING:
    from vclite.scheduler import conf as conf_mod

Obj = dict[str, Any]
JobInfo = jobs_mod.JobInfo
QueueInfo = jobs_mod.QueueInfo
TaskInfo = tasks_mod.TaskInfo
CondType = scheduling.PodGroupConditionType
Point = hooks.Point
_NAMESPACE = uuid.UUID("6f1c2d0e-6a49-4c57-9a54-7c1f3f1a5e10")


@dataclasses.dataclass(eq=False)
class SessionResult:
    binds: dict[str, str] = dataclasses.field(default_factory=dict)          # pod key -> node
    # pod key -> annotations its binding carries (deviceshare's device ids), for binds that have some
    bind_annotations: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    evictions: list[str] = dataclasses.field(default_factory=list)           # pod keys
    pipelined: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # podgroup key -> nodes
    podgroup_status: dict[str, Obj] = dataclasses.field(default_factory=dict)  # podgroup key -> status
    # pod key -> (reason, message, nominated node or "") of a PodScheduled=False condition that changed
    pod_conditions: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    # queues whose status.allocated no longer says what they hold: name -> (queue, allocated vector, dims)
    queue_allocated: dict[str, tuple[QueueInfo, np.ndarray, Any]] = dataclasses.field(default_factory=dict,
                                                                                       repr=False)
    # when a decision may change by time alone (a plugin's deadline): the next session should run then
    recheck_at: _dt.datetime | None = None
    # pods whose queue has room for them: their only scheduling gate, Volcano's queue-allocation gate, goes
    ungate: list[str] = dataclasses.field(default_factory=list)
    # podgroup key -> the Unschedulable Event's message (status.unschedulable_event), for the jobs left waiting
    # whose status changed: the shell records it when the condition is new or says something new
    unschedulable_events: dict[str, str] = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def queue_status(self) -> dict[str, Obj]:
        """Queue name -> status patch of `allocated`, formatted on first use: formatting quantities
        costs more than the rest of a small session, and the shell writes queues only now and then."""
        out = {}
        for name, (queue, allocated, dims) in self.queue_allocated.items():
            patch = status_mod.queue_status_update(queue, status_mod.allocated_list(allocated, dims))
            if patch is not None:
                out[name] = patch
        return out

    def _compared(self) -> tuple:
        return (self.binds, self.bind_annotations, self.evictions, self.pipelined, self.podgroup_status,
                self.queue_status,
                self.pod_conditions, self.ungate)

    def __eq__(self, other: object) -> bool:
        return self._compared() == other._compared() if isinstance(other, SessionResult) else NotImplemented


def _created_uid(item: JobInfo) -> tuple:
    return (item.created, item.uid)


def _task_hint(t: TaskInfo) -> tuple:
    """Nearly compare_tasks' order, as a key (a hint for the sort; `task_less` decides)."""
    i = t.index_in_name()
    return (-1 if i is None else i, t.created, t.uid)


class _Caller:
    """A Session attribute: the dispatcher of one extension point (Hooks.caller), made on first read
    and then kept as the instance's own attribute."""

    def __init__(self, point: Point):
        self.point = point

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, ssn: "Session | None", owner: type) -> Any:
        if ssn is None:
            return self
        caller = ssn.__dict__[self.name] = ssn.hooks.caller(self.point)
        return caller


class Session:
    def __init__(self, snap: snapshot.Snapshot, conf: "conf_mod.SchedulerConf", now: _dt.datetime):
        self.now = now
        self.conf = conf
        self.dims = snap.dims
        self.nodes = snap.nodes
        self.jobs: dict[str, JobInfo] = snap.jobs
        self.waiting = snap.waiting   # PodGroups waiting for room, taken lazily by enqueue (waiting.py)
        self.queues: dict[str, QueueInfo] = snap.queues
        self.total: np.ndarray = snap.total
        self.pods: list[Obj] = snap.pods   # every listed pod, read-only (pods on nodes: plugins/podindex)
        self.priority_classes: list[Obj] = snap.priority_classes   # read-only (preempt: preemptionPolicy)
        self.namespaces: list[Obj] = snap.namespaces   # read-only (pod affinity's namespaceSelector)
        self.hypernode_objects: list[Obj] = snap.hypernodes   # read-only (`topology`, built on first use)
        self.numatopologies: list[Obj] = snap.numatopologies   # read-only (the numa-aware plugin)
        self.pdbs: list[Obj] = snap.pdbs   # read-only PodDisruptionBudgets (the pdb plugin)
        self.resource_quotas: list[Obj] = snap.resource_quotas   # read-only (plugins/resourcequota)
        self.claims: list[Obj] | None = snap.claims   # read-only PersistentVolumeClaims (plugins/predicates)
        self.memory: dict = snap.memory   # plugins' state for the life of the scheduler (ClusterState.memory)
        self.node_usage = snap.node_usage   # node name -> nodemetrics.NodeUsage (ClusterState.node_usage)
        self.hooks = hooks.Hooks(len(conf.tiers))
        self.plugins: list[Any] = []
        self.binds: dict[str, str] = {}
        self.bind_annotations: dict[str, dict[str, str]] = {}   # pod key -> its binding's annotations
        self.evictions: list[str] = []
        self.ungate: list[str] = []   # pod keys (SchGateManager.Enqueue: allocate asks, the shell removes the gate)
        self.unschedulable_now: set[str] = set()   # jobs given Unschedulable=True this session
        self.explained: set[str] = set()           # jobs whose Unschedulable reason is already written
        self.enqueue_notes: dict[str, tuple[str, str]] = {}
        self.task_notes: dict[str, str] = {}       # why a plugin refused a task (Allocatable), by uid
        # tasks whose allocation a handler refused (statement.Refused): job uid -> task uids
        self.refused: dict[str, set[str]] = {}
        self.fit_cache = fitcache.FitCache(self.nodes)
        self._sum_cache: tuple[int, fitcache.RowCache, fitcache.BestCache] | None = None
        self._fn_caches: dict[int, fitcache.RowCache] = {}   # each keyed NodeOrder function's memo, by id
        self._now_text = ""
        self.recheck_at: _dt.datetime | None = None

    def recheck_by(self, when: _dt.datetime) -> None:
        """A plugin's verdict will change at `when` with nothing else happening (e.g. a deadline):
        the scheduler runs a session then, as Volcano's periodic sessions would notice."""
        if self.recheck_at is None or when < self.recheck_at:
            self.recheck_at = when

    @functools.cached_property
    def topology(self) -> hypernodes_mod.Tree:
        """The HyperNode tree over the nodes, built on first use: only jobs with networkTopology and
        the network-topology-aware plugin (when HyperNodes exist) ask for it."""
        return hypernodes_mod.build(self.hypernode_objects, self.nodes)

    @functools.cached_property
    def uid(self) -> str:
        """The session's id (Volcano's transitionID of the conditions it writes)."""
        return str(uuid.uuid5(_NAMESPACE, self.now.isoformat()))

    # ---- ordering (plugins first, then Volcano's fallbacks) ---------------------------------------
    # Each extension point's dispatcher, made on first use (a session asks for about half of them).
    _job_order = _Caller(Point.JOB_ORDER)
    _task_order = _Caller(Point.TASK_ORDER)
    _queue_order = _Caller(Point.QUEUE_ORDER)
    job_valid = _Caller(Point.JOB_VALID)
    job_ready = _Caller(Point.JOB_READY)
    job_pipelined = _Caller(Point.JOB_PIPELINED)
    job_starving = _Caller(Point.JOB_STARVING)
    job_enqueueable = _Caller(Point.JOB_ENQUEUEABLE)
    job_enqueued = _Caller(Point.JOB_ENQUEUED)
    overused = _Caller(Point.OVERUSED)
    allocatable = _Caller(Point.ALLOCATABLE)
    preemptive = _Caller(Point.PREEMPTIVE)
    pre_predicate = _Caller(Point.PRE_PREDICATE)
    # ssn.predicate(task, nodes, among=None): see fit.predicate_caller
    best_node = _Caller(Point.BEST_NODE)
    hypernode_order = _Caller(Point.HYPERNODE_ORDER)
    victim_tasks = _Caller(Point.VICTIM_TASKS)
    victim_filter = _Caller(Point.VICTIM_FILTER)

    @functools.cached_property
    def predicate(self) -> Any:
        """`predicate(task, nodes, among=None)`: every Predicate function's failures (fit.predicate_caller);
        `among`: the nodes the caller's own checks left, a mask or a function making it (None: all)."""
        return fit.predicate_caller(self.hooks.flat(Point.PREDICATE))

    @functools.cached_property
    def node_order(self) -> Any:
        return self._node_order_caller()

    def _node_order_caller(self) -> Any:
        """The NodeOrder weighted sum; functions registered with `key=` are served from RowCaches."""
        flat = self.hooks.flat(Point.NODE_ORDER)
        caches = self._fn_caches
        nodes = self.nodes

        def node_order(task: TaskInfo, rows: Any) -> Any:
            total: Any = 0
            for fn, weight, key in flat:
                if key is not None:
                    k = key(task)
                    if k is not None:
                        cache = caches.get(id(fn))
                        if cache is None:
                            cache = caches[id(fn)] = fitcache.RowCache(nodes, fn)
                        total = total + weight * cache.get(k, task)[rows]
                        continue
                total = total + weight * fn(task, rows)
            return total
        return node_order

    def _score_keys(self, task: TaskInfo) -> tuple | None:
        """The keys of every NodeOrder function for this task, when scoring all nodes at once is the
        same as scoring candidates: every function is keyed (row-local) and has a key for this task,
        and no BestNode function wants the candidate list. Else None."""
        if self.hooks.flat(Point.BEST_NODE):
            return None
        keys = []
        for _, _, key in self.hooks.flat(Point.NODE_ORDER):
            k = key(task) if key is not None else None
            if k is None:
                return None
            keys.append(k)
        return tuple(keys)

    def _row_local(self) -> tuple[fitcache.RowCache, fitcache.BestCache]:
        """The memos of the NodeOrder weighted sum (rebuilt if a function was registered since)."""
        flat = self.hooks.flat(Point.NODE_ORDER)
        if self._sum_cache is None or self._sum_cache[0] != len(flat):
            fns = list(flat)

            def weighted_sum(t: TaskInfo, rows: np.ndarray) -> Any:
                total: Any = 0
                for fn, weight, _ in fns:
                    total = total + weight * fn(t, rows)
                return total
            if len(fns) == 1 and fns[0][1] == 1:
                weighted_sum = fns[0][0]   # 0 + 1·x is x (but for the sign of a zero, which ties alike)
            self._sum_cache = (len(flat), fitcache.RowCache(self.nodes, weighted_sum),
                               fitcache.BestCache(self.nodes, weighted_sum, self._row_of(fns)))
        return self._sum_cache[1], self._sum_cache[2]

    def _row_of(self, fns: list) -> Any:
        """For the sum's memo: the keys -> one row's weighted sum with the functions' scalar forms (hooks: `row=`),
        the same float steps as `weighted_sum` on arrays; None when a function has none."""
        forms = [self.hooks.row_form(fn) for fn, _, _ in fns]
        if not fns or None in forms:
            return None
        if len(fns) == 1 and fns[0][1] == 1:
            only = forms[0]
            return lambda keys: only(keys[0])   # (as weighted_sum: the function itself)
        weights = [w for _, w, _ in fns]

        def row_of(keys: tuple) -> Any:
            rows = [form(k) for form, k in zip(forms, keys)]
            if None in rows:
                return None

            def row(r: int) -> float:
                total: Any = 0
                for one, weight in zip(rows, weights):
                    total = total + weight * one(r)
                return total
            return row
        return row_of

    def _summed(self, task: TaskInfo, keys: tuple) -> np.ndarray:
        """The NodeOrder weighted sum over every node from each function's own memo, in registration
        order (the same float operations as the sum's memo): used when a key is Volatile."""
        flat = self.hooks.flat(Point.NODE_ORDER)
        caches = self._fn_caches
        total: Any = 0
        for (fn, weight, _), k in zip(flat, keys):
            cache = caches.get(id(fn))
            if cache is None:
                cache = caches[id(fn)] = fitcache.RowCache(self.nodes, fn)
            if len(flat) == 1 and weight == 1:
                return cache.get(k, task)   # as the sum's memo: 0 + 1·x is x
            total = total + weight * cache.get(k, task)
        if not isinstance(total, np.ndarray):
            total = np.zeros(len(self.nodes))
        return total

    @staticmethod
    def _volatile(keys: tuple) -> bool:
        return any(type(k) is fitcache.Volatile for k in keys)

    def node_scores(self, task: TaskInfo) -> np.ndarray | None:
        """The NodeOrder sum for every node at once (read-only), when that is the same as scoring
        candidates (see `_score_keys`); else None (score the candidates)."""
        keys = self._score_keys(task)
        if keys is None:
            return None
        if self._volatile(keys):
            return self._summed(task, keys)
        return self._row_local()[0].get(keys, task)

    def best_idle_node(self, task: TaskInfo) -> int | None:
        """The hot path of allocate, for a task no predicate plugin rejects anywhere: the first
        best-scored node whose idle resources hold it now (what `allocate.choose_node` picks).
        None when there is none, or when scores are not row-local: take the general path then.
        With a Volatile key (HyperNode usage moves at every placement) the sum is rebuilt from the
        functions' own memos, so only the volatile function is recomputed on every node."""
        keys = self._score_keys(task)
        if keys is None:
            return None
        if fitcache.Volatile not in map(type, keys):   # (as `_volatile`, without a generator)
            return self._row_local()[1].best(task.req, keys, task)
        future_ok, idle_ok = self.fit_cache.masks(task.req)
        scores = np.where(future_ok & idle_ok, self._summed(task, keys), -np.inf)
        if not scores.size:
            return None
        row = int(scores.argmax())
        v = scores.item(row)
        return row if v > -np.inf or v != v else None   # as BestCache.best

    def job_less(self, l: JobInfo, r: JobInfo) -> bool:
        v = self._job_order(l, r)
        if v:
            return v < 0
        return (l.created, l.uid) < (r.created, r.uid)

    def queue_less(self, l: QueueInfo, r: QueueInfo) -> bool:
        v = self._queue_order(l, r)
        if v:
            return v < 0
        return (l.created, l.uid) < (r.created, r.uid)

    def task_less(self, l: TaskInfo, r: TaskInfo) -> bool:
        v = self._task_order(l, r)
        if v:
            return v < 0
        return tasks_mod.compare_tasks(l, r) < 0

    def queue_pq(self, items=()) -> pqueue.GoHeap:
        """The queue of queues: Go's heap steps, `items` pushed in their order (the session's jobs' order), so a
        queue whose rank changed while it waits (hierarchical drf) is popped where Volcano's heap pops it."""
        return pqueue.GoHeap(self.queue_less, items)

    def job_pq(self, items=()) -> pqueue.PriorityQueue:
        return pqueue.PriorityQueue(self.job_less, items, presort=_created_uid)

    def task_pq(self, items=()) -> pqueue.PriorityQueue:
        return pqueue.PriorityQueue(self.task_less, items, presort=_task_hint)

    # ---- operations ------------------------------------------------------------------------------
    def statement(self) -> statement.Statement:
        return statement.Statement(self)

    def record(self, decisions: list[statement.Decision]) -> None:
        """Collect a committed statement's decisions for the result."""
        for d in decisions:
            if d.op == statement.Op.ALLOCATE:
                self.binds[d.task] = d.node
            elif d.op == statement.Op.EVICT:
                self.evictions.append(d.task)

    def predicate_nodes(self, task: TaskInfo) -> tuple[np.ndarray, fit.FitErrors | None]:
        """Nodes the task may go to: resources fit `future_idle` (the action's own check, first),
        then every predicate plugin. With no feasible node, also why (per-node reasons)."""
        return self.feasible_nodes(task, copy=True)

    def feasible_nodes(self, task: TaskInfo, copy: bool = False, failures: list[fit.Failure] | None = None,
                       cached: fit.Failure | None = None) -> tuple[np.ndarray, fit.FitErrors | None]:
        """`predicate_nodes`, but unless `copy` the mask may be a cache's own array: read it only.
        `failures`: the Predicate hook's verdicts, if the caller already asked for them; `cached`: nodes refused
        without a check (allocate's predicate error cache), charged with their reasons before any other."""
        n = len(self.nodes)
        ok = self.fit_cache.masks(task.req)[0]
        plugin_failures = self.predicate(task, self.nodes, ok) if failures is None else failures
        if cached is not None:
            plugin_failures = [cached, *plugin_failures]
        if plugin_failures:
            ok = ok.copy()
            for f in plugin_failures:
                ok &= ~f.mask(n)
        elif copy:
            ok = ok.copy()
        if ok.any():
            return ok, None
        failures = [fit.resource_fit(task.req, self.nodes, self.nodes.future_idle()), *plugin_failures]
        if cached is not None:
            failures = [cached, *failures[:1], *failures[2:]]
        return ok, fit.fit_errors(failures, n, fit.too_big_hint(task.req, self.nodes))

    def idle_fit(self, task: TaskInfo) -> np.ndarray:
        """Nodes whose idle resources hold the task now (read-only: do not modify)."""
        return self.fit_cache.masks(task.req)[1]

    def now_text(self) -> str:
        """`now` as conditions write it (RFC 3339), formatted once per session."""
        if not self._now_text:
            self._now_text = clock.format_time(self.now)
        return self._now_text

    # ---- conditions ------------------------------------------------------------------------------
    def set_condition(self, job: JobInfo, ctype: CondType, true: bool, reason: str, message: str) -> None:
        status = "True" if true else "False"
        for c in job.conditions:   # the same condition again (the common case): nothing to build
            if c.get("type") == ctype:
                if c.get("status") == status and (c.get("reason") or "") == reason and \
                        (c.get("message") or "") == message:
                    if ctype == CondType.UNSCHEDULABLE:
                        (self.unschedulable_now.add if true else self.unschedulable_now.discard)(job.uid)
                    return
                break
        status_mod.upsert(job.conditions, {
            "type": str(ctype), "status": "True" if true else "False", "transitionID": self.uid,
            "lastTransitionTime": self.now_text(), "reason": str(reason), "message": message})
        if ctype == CondType.UNSCHEDULABLE:
            (self.unschedulable_now.add if true else self.unschedulable_now.discard)(job.uid)

    def clear_condition(self, job: JobInfo, ctype: CondType) -> None:
        """Turn a True condition of this type False (reason and message kept)."""
        for c in job.conditions:
            if c.get("type") == ctype and c.get("status") == "True":
                self.set_condition(job, ctype, False, c.get("reason") or "", c.get("message") or "")

    def explain_unschedulable(self, job: JobInfo, reason: str, message: str) -> None:
        """Record why a job waits, before the gang plugin would write its generic message; the message is also the
        job's JobFitErrors (its FitError's origin reason, what its pods without a reason of their own are told)."""
        self.set_condition(job, CondType.UNSCHEDULABLE, True, reason, message)
        job.origin_reason = message
        self.explained.add(job.uid)

    def note_task_rejection(self, task: TaskInfo, message: str) -> None:
        """A plugin says why it refuses a task (e.g. Allocatable); the action reports it."""
        self.task_notes.setdefault(task.uid, message)

    def take_waiting(self, waiting: waiting_mod.WaitingClass) -> JobInfo | None:
        """The next member of a waiting class, now one of the session's jobs (None: none left)."""
        job = waiting.take()
        if job is not None:
            self.jobs[job.uid] = job
        return job

    def note_enqueue_rejection(self, job: JobInfo, reason: str, message: str) -> None:
        """A plugin says why it rejects a job at enqueue (the enqueue action writes it)."""
        self.enqueue_notes.setdefault(job.uid, (reason, message))


def open_session(state: snapshot.ClusterState, conf: "conf_mod.SchedulerConf", now: _dt.datetime,
                 scheduler_name: str = snapshot.DEFAULT_SCHEDULER_NAME) -> Session:
    ssn = Session(snapshot.build(state, scheduler_name, lazy_waiting=waiting_mod.enabled(conf)), conf, now)
    for t, tier in enumerate(conf.tiers):
        for option in tier:
            plugin = option.instantiate()
            plugin.on_session_open(ssn, hooks.Registrar(ssn.hooks, t, option.name, option.enabled))
            ssn.plugins.append(plugin)
    return ssn


def run_actions(ssn: Session) -> None:
    for action in ssn.conf.instantiate_actions():
        action.execute(ssn)


_PENDING = str(scheduling.PodGroupPhase.PENDING)


def _was_not_pending(job: JobInfo) -> bool:
    """Whether the PodGroup's stored phase is one Volcano's IsPending is false for (not Pending, not empty)."""
    phase = (job.podgroup.get("status") or {}).get("phase")
    return bool(phase) and phase != _PENDING


def close_session(ssn: Session, binding_scheduled: bool = False) -> SessionResult:
    for plugin in ssn.plugins:
        plugin.on_session_close(ssn)
    result = SessionResult(binds=dict(ssn.binds), bind_annotations=dict(ssn.bind_annotations),
                           evictions=list(ssn.evictions), recheck_at=ssn.recheck_at,
                           ungate=list(dict.fromkeys(ssn.ungate)))
    for job in ssn.jobs.values():
        pipelined = job.index.get(tasks_mod.TaskStatus.PIPELINED)
        if pipelined:
            result.pipelined[job.uid] = [t.node for t in sorted(pipelined.values(), key=lambda t: t.key)]
        new = status_mod.podgroup_status_update(job, job.uid in ssn.unschedulable_now, binding_scheduled)
        if new is not None:
            result.podgroup_status[job.uid] = new
            if job.uid in ssn.unschedulable_now:
                result.unschedulable_events[job.uid] = status_mod.unschedulable_event(job)
            if new["phase"] == _PENDING and _was_not_pending(job) and ssn.conf.has_action("enqueue"):
                # (a phase enqueue leaves — Unknown, another tool's — made Pending: enqueue takes it in the next
                # session, as in Volcano's next period; nothing else would wake the scheduler)
                result.recheck_at = ssn.now if result.recheck_at is None else min(result.recheck_at, ssn.now)
        if job.uid in ssn.unschedulable_now:
            _tell_waiting_pods(job, result.pod_conditions)
        elif job.uid in ssn.refused or job.nodes_fit_errors or job.task_notes:   # (only the jobs these touched)
            _tell_refused_pods(job, result.pod_conditions, ssn.refused.get(job.uid, ()))
    allocated = status_mod.queue_allocated(ssn.jobs, ssn.queues, ssn.dims)
    for name, queue in ssn.queues.items():
        if not status_mod.queue_allocated_unchanged(queue, allocated[name], ssn.dims):
            result.queue_allocated[name] = (queue, allocated[name], ssn.dims)
    return result


def _tell_waiting_pods(job: JobInfo, out: dict[str, tuple[str, str, str]]) -> None:
    """Why each pod of a waiting job is not placed, where its PodScheduled condition does not say it yet."""
    base = status_mod.base_error_message(job)
    for status in status_mod.WAITING_TASKS:
        for task in (job.index.get(status) or {}).values():
            _tell(job, task, base, out)


def _tell_refused_pods(job: JobInfo, out: dict[str, tuple[str, str, str]], refused: Collection[str]) -> None:
    """A job whose gang is not waiting as a whole still tells each pod still Pending why it waits when its
    allocation a handler refused (statement.Refused) or allocate could not place it this session (its fit errors,
    or a plugin's note: the queue cannot take it — a pod beyond a placed gang, as Volcano's cache tells every
    waiting task of every job, RecordJobStatusEvent; without it a run stopped on a Running vcjob with no reason):
    those pods only, in the job's order of its Pending tasks (the order _tell_waiting_pods tells them in)."""
    pending = job.index.get(tasks_mod.TaskStatus.PENDING) or {}
    told = [task for task in pending.values()
            if task.uid in refused or task.uid in job.nodes_fit_errors or task.uid in job.task_notes]
    if told:
        base = status_mod.base_error_message(job)
        for task in told:
            _tell(job, task, base, out)


def _tell(job: JobInfo, task: TaskInfo, base: str, out: dict[str, tuple[str, str, str]]) -> None:
    why = status_mod.task_scheduling_reason(job, task, base)
    if status_mod.pod_scheduled_differs(task.pod, *why):
        out[task.key] = why


def run_session(state: snapshot.ClusterState, conf: "conf_mod.SchedulerConf", now: _dt.datetime,
                scheduler_name: str = snapshot.DEFAULT_SCHEDULER_NAME, binding_scheduled: bool = False) -> SessionResult:
    """One session. `binding_scheduled`: the caller binds the result's pods right away, so the
    PodGroup phases written count them as scheduled (status.phase)."""
    # Python's cyclic garbage collector is paused for the session: a session allocates infos by
    # the hundred thousand, few of them cyclic, and full collections triggered meanwhile would
    # scan them again and again (a third of a large session's time). Reference counting still
    # frees everything; cycles are collected afterwards, as usual.
    was = gc.isenabled()
    gc.disable()
    try:
        ssn = open_session(state, conf, now, scheduler_name)
        run_actions(ssn)
        return close_session(ssn, binding_scheduled)
    finally:
        if was:
            gc.enable()
