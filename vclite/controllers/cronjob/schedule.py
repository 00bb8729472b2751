"""The CronJob controller's decisions, pure: which scheduled time is due, when to look again, the
vcjob made for a scheduled time, and the bookkeeping of `status.active` — Volcano's
pkg/controllers/cronjob/cronjob_controller_util.go, function for function, on JSON-shaped dicts.

Times are timezone-aware datetimes; `schedule` is a `lib.cron.Schedule`. The missed-schedule rule is
Volcano's (and Kubernetes'): the number of missed start times is estimated from the gap between two
consecutive ones; more than 100 is "many" (the TooManyMissedTimes Event), and only the most recent
missed time is run.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
from typing import Any, Callable

from vclite.api import batch, kinds, meta
from vclite.lib import clock as clock_mod
from vclite.lib import cron, jsoncopy

Obj = dict[str, Any]
NEXT_SCHEDULE_DELTA = 0.1   # seconds added to a requeue (NTP skew), as Volcano's nextScheduleDelta
MANY_MISSED = 100
Record = Callable[[str, str, str], None]   # (event type, reason, message) about the CronJob


class Missed(enum.Enum):
    NONE = "none"
    FEW = "few"
    MANY = "many"


@dataclasses.dataclass(frozen=True)
class MostRecent:
    earliest: _dt.datetime
    recent: _dt.datetime | None
    missed: Missed = Missed.NONE
    error: str | None = None


def spec(cj: Obj) -> Obj:
    s = cj.get("spec")
    return s if isinstance(s, dict) else {}


def status(cj: Obj) -> Obj:
    s = cj.get("status")
    return s if isinstance(s, dict) else {}


def format_schedule(cj: Obj, record: Record | None = None) -> str:
    """The schedule with the timeZone as a `TZ=` prefix (Volcano's formatSchedule): a schedule that
    already names a zone keeps it (with the UnsupportedSchedule warning), an unknown zone is left out."""
    schedule, tz = str(spec(cj).get("schedule") or ""), spec(cj).get("timeZone")
    if "TZ" in schedule:
        if record is not None:
            record("Warning", "UnsupportedSchedule", f'CRON_TZ or TZ in the schedule "{schedule}" is not officially '
                   "supported. If set, the TimeZone field will be ignored during execution.")
        return schedule
    if tz is not None:
        if cron.load_location(str(tz)) is None:
            return schedule
        return f"TZ={tz} {schedule}"
    return schedule


def most_recent_schedule_time(cj: Obj, now: _dt.datetime, schedule: cron.Schedule,
                              include_starting_deadline: bool) -> MostRecent:
    """Volcano's mostRecentScheduleTime: the time counted from (last schedule or creation, or the
    starting deadline), the most recent time a vcjob should have been made (None if none is due),
    how many were missed, and an error for a schedule that does not make sense."""
    earliest = clock_mod.parse_time(status(cj).get("lastScheduleTime")) or \
        clock_mod.parse_time((cj.get("metadata") or {}).get("creationTimestamp")) or _dt.datetime.min.replace(
            tzinfo=_dt.timezone.utc)
    deadline = spec(cj).get("startingDeadlineSeconds")
    if include_starting_deadline and deadline is not None:
        scheduling_deadline = now - _dt.timedelta(seconds=int(deadline))
        if scheduling_deadline > earliest:
            earliest = scheduling_deadline
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return MostRecent(earliest, None)
    if t1 is not None and t2 is not None and now < t2:
        return MostRecent(earliest, t1)
    between = round((t2 - t1).total_seconds()) if t1 is not None and t2 is not None else 0
    if between < 1:   # e.g. `59 23 31 2 *`: parsed, but never fires
        return MostRecent(earliest, None, error="time difference between two schedules is less than 1 second")
    assert t1 is not None
    elapsed = int((now - t1).total_seconds())
    missed_count = elapsed // between + 1
    potential_earliest = t1 + _dt.timedelta(seconds=(missed_count - 2) * between)
    recent = None
    t = schedule.next(potential_earliest)
    while t is not None and t <= now:
        recent = t
        t = schedule.next(t)
    missed = Missed.MANY if missed_count > MANY_MISSED else Missed.FEW if missed_count > 0 else Missed.NONE
    return MostRecent(earliest, recent, missed)


def next_schedule_delay(cj: Obj, now: _dt.datetime, schedule: cron.Schedule) -> float:
    """Volcano's nextScheduleTimeDuration: seconds until the next schedule (plus NEXT_SCHEDULE_DELTA)."""
    mr = most_recent_schedule_time(cj, now, schedule, False)
    if mr.error is not None:
        base = now
    elif mr.recent is None:
        base = mr.earliest if mr.missed is Missed.NONE else now
    else:
        base = mr.recent
    nxt = schedule.next(base)
    if nxt is None:   # (Go: the zero time, a negative duration: requeued at once)
        return 0.0
    return (nxt - now).total_seconds() + NEXT_SCHEDULE_DELTA


def next_schedule_time(cj: Obj, now: _dt.datetime, schedule: cron.Schedule,
                       record: Record) -> tuple[_dt.datetime | None, str | None]:
    """Volcano's nextScheduleTime: the scheduled time to run now (None: nothing due) and an error."""
    mr = most_recent_schedule_time(cj, now, schedule, True)
    if mr.recent is None or mr.recent > now:
        return None, mr.error
    if mr.missed is Missed.MANY:
        record("Warning", "TooManyMissedTimes",
               "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
    return mr.recent, mr.error


# ---- status.active ---------------------------------------------------------------------------------

def active(cj: Obj) -> list[Obj]:
    return [r for r in status(cj).get("active") or [] if isinstance(r, dict)]


def in_active_list(cj: Obj | None, uid: str) -> bool:
    return bool(cj and uid) and any(r.get("uid") == uid for r in active(cj))   # type: ignore[arg-type]


def in_active_list_by_name(cj: Obj | None, namespace: str, name: str) -> bool:
    return bool(cj) and any(r.get("name") == name and r.get("namespace") == namespace
                            for r in active(cj))   # type: ignore[arg-type]


def delete_from_active_list(cj: Obj, uid: str) -> None:
    """Drop the reference with this uid from `cj`'s status.active (cj is the controller's own copy)."""
    if not uid or not active(cj):
        return
    cj.setdefault("status", {})["active"] = [r for r in active(cj) if r.get("uid") != uid]


def object_reference(job: Obj) -> Obj:
    """The v1.ObjectReference of a vcjob, as client-go's reference.GetReference writes it."""
    md = job.get("metadata") or {}
    ref = {"kind": kinds.JOB.kind, "namespace": md.get("namespace"), "name": md.get("name"),
           "uid": md.get("uid"), "apiVersion": kinds.JOB.api_version, "resourceVersion": md.get("resourceVersion")}
    return {k: v for k, v in ref.items() if v}


# ---- vcjobs -----------------------------------------------------------------------------------------

def job_name(cj: Obj, scheduled: _dt.datetime) -> str:
    """`<cronjob>-<scheduled time in Unix minutes>` (Volcano's getJobName)."""
    return f"{meta.name(cj)}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cj: Obj, scheduled: _dt.datetime) -> Obj:
    """Volcano's getJobFromTemplate: the template's labels and annotations, the scheduled time as
    the `volcano.sh/cronjob-scheduled-timestamp` annotation (RFC 3339 in the CronJob's time zone),
    the name from the scheduled time, the CronJob as controller owner, the template's spec.
    ValueError for an unknown time zone."""
    template = spec(cj).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    zone = cron.load_location(str(spec(cj).get("timeZone") or ""))
    if zone is None:
        raise ValueError(f"unknown time zone {spec(cj).get('timeZone')}")
    annotations = dict(tmeta.get("annotations") or {})
    annotations[batch.CRONJOB_SCHEDULED_TIMESTAMP] = rfc3339(scheduled.astimezone(zone))
    md: Obj = {"name": job_name(cj, scheduled), "namespace": meta.namespace(cj), "annotations": annotations,
               "ownerReferences": [{**meta.owner_ref(cj), "apiVersion": kinds.CRONJOB.api_version,
                                    "kind": kinds.CRONJOB.kind}]}
    if tmeta.get("labels"):
        md["labels"] = dict(tmeta["labels"])
    return {"apiVersion": kinds.JOB.api_version, "kind": kinds.JOB.kind, "metadata": md,
            "spec": jsoncopy.deep_copy(template.get("spec") or {})}


def rfc3339(t: _dt.datetime) -> str:
    """Go's time.RFC3339 layout: `Z` for UTC, else the numeric offset."""
    text = t.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if t.utcoffset() == _dt.timedelta(0) else text


def is_finished(job: Obj) -> tuple[bool, str]:
    """Volcano's isJobFinished: Completed, Failed or Terminated (not Aborted: it can be resumed)."""
    phase = meta.phase(job)
    return (True, phase) if phase in batch.TERMINAL_PHASES else (False, "")


def by_creation(jobs: list[Obj]) -> list[Obj]:
    """Oldest first, by creation time then name; jobs without a creation time last (byJobCreationTimestamp)."""
    def key(job: Obj) -> tuple:
        created = clock_mod.parse_time((job.get("metadata") or {}).get("creationTimestamp"))
        return (created is None, created or _dt.datetime.min.replace(tzinfo=_dt.timezone.utc), meta.name(job))
    return sorted(jobs, key=key)


def controlled_by(job: Obj, cj: Obj) -> bool:
    """Volcano's getJobsByCronJob filter: the vcjob's controller is this CronJob (kind, name, uid)."""
    ref = meta.controller_ref(job)
    return ref is not None and ref.get("kind") == kinds.CRONJOB.kind and ref.get("name") == meta.name(cj) \
        and ref.get("uid") == meta.uid(cj)
