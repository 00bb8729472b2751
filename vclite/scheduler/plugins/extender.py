"""extender: scheduling decisions delegated to an HTTP service (Volcano's plugins/extender).

Arguments name the service (`extender.urlPrefix`, e.g. `http://127.0.0.1:8713`), the time a call may
take (`extender.httpTimeout`, a Go duration, 1s by default) and a verb per extension point; a point
whose verb is unset is not registered. Each call POSTs JSON to `<urlPrefix>/<verb>` (extender_http.py)
with the shapes Volcano sends (extender_json.py):

| verb argument | request | answer | hook |
|---|---|---|---|
| onSessionOpenVerb | `{Jobs, Nodes, Queues, NamespaceInfo, RevocableNodes, NodeList}` | ignored | session open |
| onSessionCloseVerb | `{}` | ignored | session close |
| predicateVerb | `{task, node}`, once per node | `{status, code}`: a message refuses the node | Predicate |
| prioritizeVerb | `{task, nodes}` (the candidates) | `{nodeScore: {node: score}, errorMessage}` | NodeOrder |
| preemptableVerb, reclaimableVerb | `{evictor, evictees}` | `{status, victims}`: 0 abstains | Preempt-, Reclaimable |
| jobEnqueueableVerb | `{job}` | `{status}`: -1 Reject, 0 Abstain, 1 Permit | JobEnqueueable |
| jobEnqueuedVerb | `{job}` | ignored | JobEnqueued |
| queueOverusedVerb | `{queue}` | `{overused}` | Overused |
| jobReadyVerb | `{job}` | `{status}` (a boolean) | JobReady |

A predicate answer's `code` is Volcano's status code (1 Error, 2 Unschedulable — evicting pods could
cure it —, 3 UnschedulableAndUnresolvable; 0 with a message counts as 1). `extender.managedResources`
(a list of resource names): the extender is asked only about pods that request or limit one of them
(predicate, prioritize, preemptable and reclaimable; other pods pass, get no score, abstain).

A call that gets no answer (unreachable, timed out, status not 200, bad JSON) is logged, and then, with
`extender.ignorable: true`, the extender has no say: the node passes, no score, no say on victims, Permit to
enqueue, not overused, ready. Without it the call fails closed: the node is refused with the error as reason,
no victims, Reject, overused, not ready. A session-open call without an answer (not ignorable) makes every
hook of the session fail so, without calling.
Differences from upstream (docs/differences.md): a bad `urlPrefix` or `httpTimeout` is refused at load; a
failed session open (not ignorable) is a failure of the session's hooks, where upstream silently drops the
extender for the session; a failed jobReady call is not-ready unless ignorable (upstream has the two
inverted); a failed prioritize call gives no scores (upstream leaves the task unplaced this time);
allocateFuncVerb / deallocateFuncVerb are refused (vclite's statements cannot roll an allocation back on a
handler's error). Calls run in the session, on the scheduler's thread — with `vcctl server` the API's too —,
so they share a budget: all of a session's calls together may take `extender.sessionTimeout` (vclite's
argument, a Go duration; ten httpTimeouts when unset, so a healthy extender asked many times in a session is
not cut short), each at most httpTimeout; once it is spent, calls fail at once without being made (so a slow
or hung extender holds a session for one budget, not one timeout per call). The predicate asks about the
nodes 16 calls at a time (upstream's predicate helper runs 16 workers), one call per node as upstream, and
only about the nodes still in play, as upstream: allocate's resource check and the Predicate functions of
the plugins before it in the configuration have passed them (hooks: registered with among=True). A failed
preemptable/reclaimable call abstains when ignorable (upstream returns Permit with no victims, which its tier loop reads as an
undecided tier, as it does the Reject it returns when not ignorable: vclite's answer then). A refusal (a
node refused, Reject, overused, not ready) asks for another session a second later, as Volcano's periodic
session would ask again.

Must not: keep state between sessions.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as _dt
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.lib import clock
from vclite.scheduler.framework import fit, hooks, plugin, status
from vclite.scheduler.plugins import extender_http, extender_json

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import nodes as nodes_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

log = logging.getLogger(__name__)
NAME = "extender"
AGAIN = _dt.timedelta(seconds=1)   # Volcano's default schedule period: when a refusal is looked at again
P = "extender."
# Volcano's status codes (api/types.go)
SUCCESS, ERROR, UNSCHEDULABLE, UNRESOLVABLE = 0, 1, 2, 3
UNSUPPORTED = ("extender.allocateFuncVerb", "extender.deallocateFuncVerb")
_OWNER = f'plugin "{NAME}"'
DEFAULT_BUDGET_TIMEOUTS = 10   # httpTimeouts a session's calls may take together when sessionTimeout is unset
PARALLEL = 16   # predicate calls at a time (upstream's predicate helper: workqueue.ParallelizeUntil, 16)


def _timeout(value: Any, where: str) -> float:
    """A Go duration string, positive (Go's 0 would mean no deadline: a hung extender stops scheduling)."""
    if not isinstance(value, str):
        raise ValueError(f'{where}: expected a Go duration string such as "100ms" or "2s", got {value!r}; '
                         "Volcano ignores it and waits 1s")
    try:
        seconds = clock.parse_duration(value)
    except ValueError:
        raise ValueError(f'{where}: invalid duration {value!r} (Go durations: "100ms", "2s", "1m"); '
                         "Volcano ignores it and waits 1s") from None
    if seconds <= 0:
        raise ValueError(f"{where}: must be positive, got {value!r}")
    return seconds


def _url(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a URL string such as http://127.0.0.1:8713, got {value!r}")
    why = extender_http.check_url(value)
    if why:
        raise ValueError(f"{where}: {value!r} {why}")
    return value


def _resources(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: expected a list of resource names such as [nvidia.com/gpu], got {value!r}")
    return tuple(value)


def _unsupported(value: Any, where: str) -> str:
    if value in ("", None):
        return ""
    raise ValueError(f"{where}: not supported by vclite yet (an allocation cannot be rolled back by an event "
                     "handler's error); remove it")


@dataclasses.dataclass(frozen=True)
class Arguments:
    url_prefix: str = plugin.arg(P + "urlPrefix", "", _url)
    http_timeout: float = plugin.arg(P + "httpTimeout", 1.0, _timeout)
    on_session_open: str = plugin.arg(P + "onSessionOpenVerb", "")
    on_session_close: str = plugin.arg(P + "onSessionCloseVerb", "")
    predicate: str = plugin.arg(P + "predicateVerb", "")
    prioritize: str = plugin.arg(P + "prioritizeVerb", "")
    preemptable: str = plugin.arg(P + "preemptableVerb", "")
    reclaimable: str = plugin.arg(P + "reclaimableVerb", "")
    queue_overused: str = plugin.arg(P + "queueOverusedVerb", "")
    job_enqueueable: str = plugin.arg(P + "jobEnqueueableVerb", "")
    job_enqueued: str = plugin.arg(P + "jobEnqueuedVerb", "")
    job_ready: str = plugin.arg(P + "jobReadyVerb", "")
    allocate_func: str = plugin.arg(UNSUPPORTED[0], "", _unsupported)
    deallocate_func: str = plugin.arg(UNSUPPORTED[1], "", _unsupported)
    ignorable: bool = plugin.arg(P + "ignorable", False)
    managed_resources: tuple[str, ...] = plugin.arg(P + "managedResources", (), _resources)
    # vclite's: what all of a session's calls may take together (0: DEFAULT_BUDGET_TIMEOUTS httpTimeouts)
    session_timeout: float = plugin.arg(P + "sessionTimeout", 0.0, _timeout)

    @property
    def budget(self) -> float:
        """Seconds a session's calls may take together: sessionTimeout, else ten httpTimeouts."""
        return self.session_timeout or DEFAULT_BUDGET_TIMEOUTS * self.http_timeout

    def check_together(self) -> None:
        """A verb without a urlPrefix (configuration load calls it on the whole set)."""
        verbs = [f.metadata["key"] for f in dataclasses.fields(self)
                 if f.metadata["key"].endswith("Verb") and getattr(self, f.name)]
        if verbs and not self.url_prefix:
            raise ValueError(f"{_OWNER}: {verbs[0]} is set but extender.urlPrefix is not: "
                             "where is the extender? (e.g. extender.urlPrefix: http://127.0.0.1:8713)")


def interested(managed: frozenset[str], pod: dict) -> bool:
    """Upstream's IsInterested: no managed resources, or a container or init container that requests or
    limits one of them."""
    if not managed:
        return True
    spec = pod.get("spec") or {}
    for c in (*(spec.get("containers") or ()), *(spec.get("initContainers") or ())):
        res = c.get("resources") or {}
        if managed.intersection(res.get("requests") or ()) or managed.intersection(res.get("limits") or ()):
            return True
    return False


def _vote(value: Any) -> hooks.Vote:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return hooks.Vote.ABSTAIN
    return hooks.Vote.PERMIT if value > 0 else hooks.Vote.REJECT if value < 0 else hooks.Vote.ABSTAIN


def _field(answer: Any, key: str, default: Any) -> Any:
    return answer.get(key, default) if isinstance(answer, dict) else default


_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    """The threads predicate calls run on (made on first use, kept for the process)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(PARALLEL, thread_name_prefix="vclite-extender")
        return _pool


class Extender:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.args = arguments
        self.managed = frozenset(arguments.managed_resources)
        self.broken: str | None = None   # why the session-open call failed (not ignorable)
        self.deadline = time.monotonic() + arguments.budget   # (set again at session open)
        self._logged: set[str] = set()   # verbs whose failure this session already logged

    def call(self, verb: str, body: Any, always: bool = False) -> Any:
        """The extender's answer, or ExtenderError (logged once per verb and session). After a failed
        session open (not ignorable) only an `always` call is made; the others fail at once. A call may
        take what is left of the session's budget (`deadline`), at most httpTimeout; once it is spent,
        calls fail at once: a slow or hung extender holds the session (and `vcctl server`'s API, which
        shares its thread) for at most the budget."""
        if self.broken is not None and not always:
            raise extender_http.ExtenderError(self.broken)
        try:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise extender_http.ExtenderError(
                    f"not asked: this session's calls already took extender.{self._budget_key()} "
                    f"({extender_http.seconds(self.args.budget)})")
            if left >= self.args.http_timeout:
                return extender_http.post(self.args.url_prefix, verb, body, self.args.http_timeout)
            return extender_http.post(self.args.url_prefix, verb, body, left, f"what was left of this session's "
                                      f"extender.{self._budget_key()} ({extender_http.seconds(self.args.budget)})")
        except extender_http.ExtenderError as e:
            if verb not in self._logged:   # (a dead extender would otherwise log once per node)
                self._logged.add(verb)
                log.warning("extender %s failed: %s", verb, e)
            raise

    def _budget_key(self) -> str:
        return "sessionTimeout" if self.args.session_timeout else \
            f"sessionTimeout (unset: {DEFAULT_BUDGET_TIMEOUTS} × httpTimeout)"

    # ---- session ----------------------------------------------------------------------------------
    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        a = self.args
        self.ssn = ssn
        self.deadline = time.monotonic() + a.budget
        self.enc = extender_json.Encoder(ssn)
        if a.on_session_open:
            try:
                self.call(a.on_session_open, self.enc.session_open())
            except extender_http.ExtenderError as e:
                if not a.ignorable:
                    self.broken = f"session open failed: {e}"
        for verb, point, fn in ((a.predicate, hooks.Point.PREDICATE, self.predicate),
                                (a.prioritize, hooks.Point.NODE_ORDER, self.prioritize),
                                (a.preemptable, hooks.Point.PREEMPTABLE, self.preemptable),
                                (a.reclaimable, hooks.Point.RECLAIMABLE, self.reclaimable),
                                (a.job_enqueueable, hooks.Point.JOB_ENQUEUEABLE, self.job_enqueueable),
                                (a.job_enqueued, hooks.Point.JOB_ENQUEUED, self.job_enqueued),
                                (a.queue_overused, hooks.Point.OVERUSED, self.overused),
                                (a.job_ready, hooks.Point.JOB_READY, self.job_ready)):
            if verb:
                reg.add(point, fn, among=point == hooks.Point.PREDICATE)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        if self.args.on_session_close:
            try:
                self.call(self.args.on_session_close, {}, always=True)
            except extender_http.ExtenderError:
                pass

    def again(self) -> None:
        """The extender kept something from happening: its answer may change with nothing else changing, so
        the next session runs within Volcano's schedule period (vclite's sessions otherwise run on events)."""
        self.ssn.recheck_by(self.ssn.now + AGAIN)

    # ---- hooks ------------------------------------------------------------------------------------
    def predicate(self, task: "tasks_mod.TaskInfo", nodes: "nodes_mod.NodeState",
                  among: np.ndarray | None) -> list[fit.Failure]:
        """Asks about the nodes in play (`among`: those the resource check and the plugins before this one
        left; None: every node), one call per node, in node order."""
        if not interested(self.managed, task.pod):
            return []
        n = len(nodes)
        rows = range(n) if among is None else np.flatnonzero(among).tolist()
        if not rows:
            return []
        refused: dict[tuple[str, bool], np.ndarray] = {}
        body_task = self.enc.task(task)
        bodies = [{"task": body_task, "node": self.enc.node(row)} for row in rows]   # (encoded here)
        for row, why in zip(rows, self._verdicts(bodies)):
            if why is not None:
                mask = refused.get(why)
                if mask is None:
                    mask = refused[why] = np.zeros(n, dtype=bool)
                mask[row] = True
        if refused:
            self.again()
        out = []
        for resolvable in (False, True):
            reasons = tuple((why, m) for (why, r), m in refused.items() if r == resolvable)
            if reasons:
                out.append(fit.Failure(reasons, resolvable=resolvable))
        return out

    def _verdicts(self, bodies: list[dict]) -> list[tuple[str, bool] | None]:
        """Each node's verdict, asked PARALLEL nodes at a time as upstream's predicate helper does. A call
        without an answer: the node passes when ignorable, else is refused with the error."""
        def one(body: dict) -> tuple[str, bool] | None:
            try:
                return self._node_verdict(body)
            except extender_http.ExtenderError as e:
                return None if self.args.ignorable else (f"extender: {e}", False)
        if len(bodies) <= 1:
            return [one(b) for b in bodies]
        return list(_executor().map(one, bodies))

    def _node_verdict(self, body: dict) -> tuple[str, bool] | None:
        """(reason, resolvable) when the extender refuses the node; None when it passes; ExtenderError."""
        answer = self.call(self.args.predicate, body)
        message = _field(answer, "status", "")
        if not message:
            return None
        code = _field(answer, "code", ERROR)
        return str(message), code == UNSCHEDULABLE

    def prioritize(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows))
        if not interested(self.managed, task.pod):
            return out
        try:
            answer = self.call(self.args.prioritize, {"task": self.enc.task(task), "nodes": self.enc.nodes(rows)})
        except extender_http.ExtenderError:
            return out
        scores, message = _field(answer, "nodeScore", None), _field(answer, "errorMessage", "")
        if message or not isinstance(scores, dict):
            log.warning("extender %s: %s", self.args.prioritize, message or "no nodeScore in the answer")
            return out
        names = self.ssn.nodes.names
        for i, row in enumerate(rows.tolist()):
            score = scores.get(names[row])
            if isinstance(score, (int, float)) and not isinstance(score, bool):
                out[i] = score
        return out

    def _victims(self, verb: str, evictor: "tasks_mod.TaskInfo", candidates: list) -> list | None:
        if not interested(self.managed, evictor.pod):
            return None
        try:
            answer = self.call(verb, {"evictor": self.enc.task(evictor), "evictees": self.enc.tasks(candidates)})
        except extender_http.ExtenderError:
            # ignorable: no say (the tier's other plugins decide); else an empty list, which leaves the tier
            # undecided, as upstream's Reject with no victims (its Permit with none, when ignorable, too)
            return None if self.args.ignorable else []
        if _vote(_field(answer, "status", 0)) == hooks.Vote.ABSTAIN:
            return None
        victims = _field(answer, "victims", None)
        by_uid = {t.uid: t for t in candidates}
        picked = []
        for v in victims if isinstance(victims, list) else ():   # (anything else: no victims)
            uid = _field(v, "UID", None)
            t = by_uid.pop(uid, None) if isinstance(uid, str) else None
            if t is not None:
                picked.append(t)
        return picked

    def preemptable(self, preemptor: "tasks_mod.TaskInfo", candidates: list) -> list | None:
        return self._victims(self.args.preemptable, preemptor, candidates)

    def reclaimable(self, reclaimer: "tasks_mod.TaskInfo", candidates: list) -> list | None:
        return self._victims(self.args.reclaimable, reclaimer, candidates)

    def job_enqueueable(self, job: "jobs_mod.JobInfo") -> hooks.Vote:
        try:
            answer = self.call(self.args.job_enqueueable, {"job": self.enc.job(job)})
        except extender_http.ExtenderError as e:
            if self.args.ignorable:
                return hooks.Vote.PERMIT
            self.again()
            self.ssn.note_enqueue_rejection(job, status.Reason.NOT_ENQUEUEABLE, f"extender: {e}")
            return hooks.Vote.REJECT
        vote = _vote(_field(answer, "status", 0))
        if vote == hooks.Vote.REJECT:
            self.again()
            self.ssn.note_enqueue_rejection(job, status.Reason.NOT_ENQUEUEABLE, "the extender rejected the job")
        return vote

    def job_enqueued(self, job: "jobs_mod.JobInfo") -> None:
        try:
            self.call(self.args.job_enqueued, {"job": self.enc.job(job)})
        except extender_http.ExtenderError:
            pass

    def overused(self, queue: "jobs_mod.QueueInfo") -> bool:
        try:
            answer = self.call(self.args.queue_overused, {"queue": self.enc.queue(queue)})
        except extender_http.ExtenderError:
            overused = not self.args.ignorable
        else:
            overused = _field(answer, "overused", False) is True
        if overused:
            self.again()
        return overused

    def job_ready(self, job: "jobs_mod.JobInfo") -> bool:
        try:
            answer = self.call(self.args.job_ready, {"job": self.enc.job(job)})
        except extender_http.ExtenderError:
            ready = self.args.ignorable
        else:
            ready = _field(answer, "status", False) is True
        if not ready:
            self.again()
        return ready
