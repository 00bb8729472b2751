"""tdm: time-division multiplexing — nodes of a revocable zone lend themselves to preemptable work during
their zone's hours only (plugins/tdm/tdm.go).

A node labelled `volcano.sh/revocable-zone: <zone>` belongs to that zone; the plugin's arguments
`tdm.revocable-zone.<zone>: "HH:MM-HH:MM"` give each zone's daily window in the scheduler's local time
(an end not after the start runs to the next day) and `tdm.evict.period` (a Go duration, 1m; a bad one
keeps 1m) how often the zone's leftovers may be evicted.
- Predicate: a node of a zone that is not configured or outside its window, "current time beyond
  revocable zone <zone>:<window>" (or "revocable zone <zone> not support"); a pod that may not use
  revocable nodes (its annotation `volcano.sh/revocable-zone` is not `*`, and it is not annotated
  `volcano.sh/preemptable: "true"`), "not allow to dispatch to revocable node".
- NodeOrder: 100 for a pod that may, on a node of an open zone.
- Preemptable: a preemptable preemptor, or one that may use revocable nodes, evicts nobody; others
  evict running preemptable pods on ordinary nodes, per job at most what its disruption budget
  allows (PodGroup annotation `volcano.sh/jdb-max-unavailable`, else `volcano.sh/jdb-min-available`,
  an integer or a percentage of its pods; else 1).
- VictimTasks (the `shuffle` action): once per evict period, the running preemptable pods on nodes
  of closed zones, per job within its budget.
- JobOrder: jobs not preemptable (PodGroup `volcano.sh/preemptable`, false by default) first;
  JobPipelined: Permit when waiting + ready + pending best-effort pods reach minAvailable, else
  Reject; JobStarving: a job not preemptable with pending pods.
Differences: upstream computes a window from today's start only, so an overnight window
(`22:00-06:00`) is closed after midnight; here it is open from 22:00 to 06:00. Sessions run on
events here: the plugin asks for a session at the next opening or closing of a zone in use.
The last eviction time is kept for the life of the scheduler (Session.memory), as upstream's global.

Must not: keep state between sessions other than Session.memory.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import meta
from vclite.lib import clock
from vclite.scheduler.framework import fit, hooks, plugin
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import nodes as nodes_mod
    from vclite.scheduler.framework import session as session_mod

ZONE_PREFIX = "tdm.revocable-zone."
EVICT_PERIOD = "tdm.evict.period"
ZONE_LABEL = "volcano.sh/revocable-zone"
PREEMPTABLE = "volcano.sh/preemptable"
JDB_MIN, JDB_MAX = "volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable"
LAST_EVICT = "tdm.lastEvictAt"
NOT_ALLOWED = "not allow to dispatch to revocable node"
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")


def parse_window(text: str) -> tuple[_dt.time, _dt.time]:
    """`HH:MM-HH:MM` (Go's "15:04": one or two hour digits, two minute digits), or ValueError."""
    parts = text.strip().split("-")
    if len(parts) != 2:
        raise ValueError(f"revocable zone {text} format error")
    out = []
    for part in parts:
        m = _CLOCK.match(part)
        if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
            raise ValueError(f'parsing time "{part}" as "15:04": cannot parse')
        out.append(_dt.time(int(m.group(1)), int(m.group(2))))
    return out[0], out[1]


def window_around(now: _dt.datetime, start: _dt.time, end: _dt.time) -> tuple[_dt.datetime, _dt.datetime]:
    """The window (start, end) that holds `now` or, if none does, the next one (local times)."""
    day = now.date()
    for offset in (-1, 0, 1):
        d = day + _dt.timedelta(days=offset)
        s = _dt.datetime.combine(d, start, now.tzinfo)
        e = _dt.datetime.combine(d + _dt.timedelta(days=1) if end <= start else d, end, now.tzinfo)
        if now <= e:
            return s, e
    raise AssertionError("unreachable")


def _int_or_percent(text: str, total: int) -> int:
    text = text.strip()
    if text.endswith("%"):
        try:
            return math.ceil(int(text[:-1]) * total / 100)
        except ValueError:
            return 0
    try:
        return int(text)
    except ValueError:
        return 0


def max_evict(job: "jobs_mod.JobInfo") -> int:
    """Upstream's getMaxPodEvictNum: how many of the job's pods its disruption budget lets go now."""
    notes = meta.annotations(job.podgroup) if isinstance(job.podgroup, dict) else {}
    running = len(job.index.get(tasks_mod.TaskStatus.RUNNING) or {})
    total = len(job.tasks)
    if JDB_MIN in notes:
        wanted = _int_or_percent(notes[JDB_MIN], total)
        return running - wanted if running >= wanted else 1
    if JDB_MAX in notes:
        allowed = _int_or_percent(notes[JDB_MAX], total)
        done = sum(len(job.index.get(s) or {}) for s in (tasks_mod.TaskStatus.SUCCEEDED, tasks_mod.TaskStatus.FAILED))
        unavailable = total - done - running
        return 0 if unavailable >= allowed else allowed - unavailable
    return 1


def may_use_revocable(task: "tasks_mod.TaskInfo") -> bool:
    """Upstream's GetPodRevocableZone: the annotation `*`, else a `volcano.sh/preemptable` annotation that is true."""
    notes = meta.annotations(task.pod)
    if ZONE_LABEL in notes:
        return notes[ZONE_LABEL] == "*"
    return notes.get(PREEMPTABLE) in _TRUE


def _preemptable(obj: dict, default: bool) -> bool:
    for where in (meta.annotations(obj), meta.labels(obj)):
        if PREEMPTABLE in where:
            return where[PREEMPTABLE] in _TRUE
    return default


@dataclasses.dataclass(frozen=True)
class Arguments:
    evict_period: str = plugin.arg(EVICT_PERIOD, "1m")
    extra: Any = None   # tdm.revocable-zone.<zone>: "HH:MM-HH:MM"

    def __post_init__(self) -> None:
        for key, value in (self.extra or {}).items():
            if not isinstance(value, str):
                raise ValueError(f'plugin "tdm": argument {key!r}: expected a string such as "10:00-21:00", '
                                 f"got {value!r}")

    def zones(self) -> dict[str, str]:
        return {k[len(ZONE_PREFIX):]: v for k, v in (self.extra or {}).items()}

    def period(self) -> _dt.timedelta:
        try:
            return _dt.timedelta(seconds=clock.parse_duration(self.evict_period))
        except ValueError:
            return _dt.timedelta(minutes=1)


class Tdm:
    name = "tdm"
    Arguments = Arguments
    argument_prefixes = (ZONE_PREFIX,)

    def __init__(self, arguments: Arguments):
        self.arguments = arguments
        self.zones = arguments.zones()

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.local_now = ssn.now.astimezone()   # the scheduler's local time, as upstream's time.Now()
        self.node_zone = [meta.labels(n).get(ZONE_LABEL, "") for n in ssn.nodes.objects]
        self._why: dict[str, str | None] = {}
        for zone in sorted(set(self.node_zone) - {""}):   # the next change of a zone in use
            self._closed(zone)
        reg.add(hooks.Point.PREDICATE, self.predicate)
        reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)
        reg.add(hooks.Point.PREEMPTABLE, self.preemptable)
        reg.add(hooks.Point.VICTIM_TASKS, self.victim_tasks)
        reg.add(hooks.Point.JOB_ORDER, self.job_order)
        reg.add(hooks.Point.JOB_PIPELINED, self.job_pipelined)
        reg.add(hooks.Point.JOB_STARVING, self.job_starving)

    def _closed(self, zone: str) -> str | None:
        """Why `zone` is not open now (None: open)."""
        if zone not in self._why:
            why = None
            raw = self.zones.get(zone)
            if raw is None:
                why = f"revocable zone {zone} not support"
            else:
                try:
                    start, end = parse_window(raw)
                except ValueError as e:
                    why = str(e)
                else:
                    s, e = window_around(self.local_now, start, end)
                    if self.local_now < s:
                        why = f"current time beyond revocable zone {zone}:{raw}"
                        self.ssn.recheck_by(s)
                    else:
                        self.ssn.recheck_by(e + _dt.timedelta(seconds=1))
            self._why[zone] = why
        return self._why[zone]

    def predicate(self, task: "tasks_mod.TaskInfo", nodes: "nodes_mod.NodeState") -> list[fit.Failure]:
        allowed = may_use_revocable(task)
        reasons: dict[str, list[int]] = {}
        for row, zone in enumerate(self.node_zone):
            if not zone:
                continue
            why = self._closed(zone) or (None if allowed else NOT_ALLOWED)
            if why:
                reasons.setdefault(why, []).append(row)
        out = []
        for why, rows in reasons.items():
            mask = np.zeros(len(nodes), dtype=bool)
            mask[rows] = True
            out.append((why, mask))
        return [fit.Failure(tuple(out))] if out else []

    def key(self, task: "tasks_mod.TaskInfo") -> Any:
        return ("tdm", may_use_revocable(task))

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows))
        if not may_use_revocable(task):
            return out
        for i, row in enumerate(rows.tolist()):
            zone = self.node_zone[row]
            if zone and self._closed(zone) is None:
                out[i] = 100.0
        return out

    def _per_job(self, tasks: list) -> list:
        by_job: dict[str, list] = {}
        for t in tasks:
            by_job.setdefault(t.job, []).append(t)
        out = []
        for uid in sorted(by_job):
            job = self.ssn.jobs.get(uid)
            if job is not None:
                out += by_job[uid][:max(0, min(max_evict(job), len(by_job[uid])))]
        return out

    def preemptable(self, preemptor: "tasks_mod.TaskInfo", candidates: list) -> list:
        if _preemptable(preemptor.pod, True) or may_use_revocable(preemptor):
            return []
        rows = self.ssn.nodes.index
        picked = [t for t in candidates if _preemptable(t.pod, True) and t.status == tasks_mod.TaskStatus.RUNNING
                  and t.node in rows and not self.node_zone[rows[t.node]]]
        return self._per_job(picked)

    def victim_tasks(self, tasks: list) -> list:
        memory = self.ssn.memory
        last = memory.get(LAST_EVICT)
        if last is not None and last + self.arguments.period() > self.ssn.now:
            return []
        rows = self.ssn.nodes.index
        picked = []
        for zone in sorted(self.zones):
            if self._closed(zone) is None:
                continue
            for job in self.ssn.jobs.values():
                for t in job.tasks.values():
                    if (t.status == tasks_mod.TaskStatus.RUNNING and t.node in rows
                            and self.node_zone[rows[t.node]] == zone and _preemptable(t.pod, True)):
                        picked.append(t)
        memory[LAST_EVICT] = self.ssn.now
        return self._per_job(sorted(picked, key=lambda t: t.key))

    def job_order(self, l: "jobs_mod.JobInfo", r: "jobs_mod.JobInfo") -> int:
        lp, rp = _preemptable(l.podgroup, False), _preemptable(r.podgroup, False)
        return 0 if lp == rp else (1 if lp else -1)

    @staticmethod
    def job_pipelined(job: "jobs_mod.JobInfo") -> hooks.Vote:
        occupied = job.waiting_task_num() + job.ready_task_num() + job.n_pending_best_effort
        return hooks.Vote.PERMIT if occupied >= job.min_available else hooks.Vote.REJECT

    @staticmethod
    def job_starving(job: "jobs_mod.JobInfo") -> bool:
        if _preemptable(job.podgroup, False):
            return False
        return bool(job.index.get(tasks_mod.TaskStatus.PENDING))

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
