"""controllers/cronjob/schedule.py: Volcano's cronjob_controller_util_test.go, case for case (same inputs,
same expectations), on JSON-shaped CronJobs and vcjobs; and which vcjobs are a CronJob's (handler_test)."""
from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import Any

import pytest

from vclite.controllers.cronjob import controller as cc
from vclite.controllers.cronjob import schedule as sched
from vclite.lib import clock as clock_mod
from vclite.lib import cron

UTC = dt.timezone.utc
TOP = dt.datetime(2025, 3, 11, 10, 0, tzinfo=UTC)   # topOfTheHour(): a Tuesday
H, M, S = dt.timedelta(hours=1), dt.timedelta(minutes=1), dt.timedelta(seconds=1)
DELTA = sched.NEXT_SCHEDULE_DELTA


def at(delta: dt.timedelta = dt.timedelta(0)) -> dt.datetime:
    return TOP + delta


def fmt(t: dt.datetime | None) -> str | None:
    return clock_mod.format_time(t)


def cronjob(schedule: str, created: dt.datetime, last: dt.datetime | None = None, deadline: int | None = None,
            **spec: Any) -> dict:
    cj: dict = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                "metadata": {"name": "mycronjob", "namespace": "default", "uid": "1a2b3c",
                             "creationTimestamp": fmt(created)},
                "spec": {"schedule": schedule, **spec}, "status": {}}
    if last is not None:
        cj["status"]["lastScheduleTime"] = fmt(last)
    if deadline is not None:
        cj["spec"]["startingDeadlineSeconds"] = deadline
    return cj


# TestGetJobFromTemplate
@pytest.mark.parametrize("tz,annotations,expected_time,count", [
    pytest.param("UTC", {"x": "y"}, "2025-03-11T10:00:00Z", 2, id="UTC timezone and one annotation"),
    pytest.param(None, {"x": "y"}, "2025-03-11T10:00:00Z", 2, id="nil timezone and one annotation"),
    pytest.param("Europe/Rome", {"x": "y", "z": "x"}, "2025-03-11T11:00:00+01:00", 3,
                 id="correct timezone and multiple annotation"),
])
def test_job_from_template(tz, annotations, expected_time, count) -> None:
    cj = cronjob("*/5 * * * *", TOP)
    cj["metadata"].update(name="mycronjob-", namespace="snazzycats")
    cj["spec"]["jobTemplate"] = {"metadata": {"labels": {"a": "b"}, "annotations": annotations},
                                 "spec": {"schedulerName": "volcano", "minAvailable": 1, "tasks": [{"name": "task-1"}]}}
    if tz is not None:
        cj["spec"]["timeZone"] = tz
    job = sched.job_from_template(cj, TOP)
    md = job["metadata"]
    assert md["name"] == "mycronjob--29028120" and md["namespace"] == "snazzycats"
    assert md["labels"] == {"a": "b"}
    assert len(md["annotations"]) == count
    assert md["annotations"]["volcano.sh/cronjob-scheduled-timestamp"] == expected_time
    assert md["ownerReferences"] == [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                                      "name": "mycronjob-", "uid": "1a2b3c", "controller": True,
                                      "blockOwnerDeletion": True}]
    assert job["spec"] == cj["spec"]["jobTemplate"]["spec"] and job["spec"] is not cj["spec"]["jobTemplate"]["spec"]


T1, T2 = at(), at(H)   # TestNextScheduleTime: hourly on the hour


# TestNextScheduleTime
@pytest.mark.parametrize("schedule,created,last,deadline,now,expected,error", [
    pytest.param("0 * * * ?", T1 - 10 * M, None, None, T1 - 7 * M, None, False,
                 id="no known start times, and none needed yet"),
    pytest.param("0 * * * ?", T1 - 10 * M, None, None, T1 + 2 * S, T1, False,
                 id="no known start times, and one needed"),
    pytest.param("0 * * * ?", T1 - 10 * M, T1, None, T1 + 2 * M, None, False,
                 id="known LastScheduleTime, no start needed"),
    pytest.param("0 * * * ?", T1 - 10 * M, T1, None, T2 + 5 * M, T2, False,
                 id="known LastScheduleTime, a start needed"),
    pytest.param("0 * * * ?", T1 - 2 * H, T1 - H, None, T2 + 5 * M, T2, False,
                 id="known LastScheduleTime, two starts needed"),
    pytest.param("0 * * * ?", T1 - 2 * H, T1 - H, None, T2 + 240 * H, T2 + 240 * H, False,
                 id="now is way way ahead of last start time, and there is no deadline"),
    pytest.param("0 * * * ?", T1 - 2 * H, T1 - H, 2 * 60 * 60, T2 + 240 * H, T2 + 240 * H, False,
                 id="now is way way ahead of last start time, but there is a short deadline"),
    pytest.param("59 23 31 2 *", T1 + 10 * S, None, None, at(H), None, True,
                 id="the error from mostRecentScheduleTime gets populated up"),
])
def test_next_schedule_time(schedule, created, last, deadline, now, expected, error) -> None:
    events: list[tuple] = []
    cj = cronjob(schedule, created, last, deadline)
    got, err = sched.next_schedule_time(cj, now, cron.parse(schedule, UTC), lambda *a: events.append(a))
    assert got == expected
    assert (err is not None) is error
    many = now - (last or created) > 100 * H and deadline is None
    assert [e[1] for e in events] == (["TooManyMissedTimes"] if many else [])


# TestByJobCreationTimestamp
def _job(name: str, created: dt.datetime | None) -> dict:
    md: dict = {"name": name}
    if created is not None:
        md["creationTimestamp"] = fmt(created)
    return {"metadata": md}


NOW, LATER = dt.datetime(2018, 1, 1, 2, 3, 4, tzinfo=UTC), dt.datetime(2019, 1, 1, 2, 3, 4, tzinfo=UTC)
A_NIL, B_NIL, A_SET, B_SET, A_LATER = (_job("a", None), _job("b", None), _job("a", NOW), _job("b", NOW),
                                       _job("a", LATER))


@pytest.mark.parametrize("jobs,expected", [
    pytest.param([B_NIL, A_NIL], [A_NIL, B_NIL], id="both have nil creation times"),
    pytest.param([A_NIL, B_SET], [B_SET, A_NIL], id="only the first has a nil creation time"),
    pytest.param([A_SET, B_NIL], [A_SET, B_NIL], id="only the second has a nil creation time"),
    pytest.param([B_SET, A_SET], [A_SET, B_SET], id="both have non-nil, equal creation time"),
    pytest.param([A_LATER, B_SET, A_NIL], [B_SET, A_LATER, A_NIL], id="both have non-nil, different creation time"),
])
def test_by_creation(jobs, expected) -> None:
    assert sched.by_creation(jobs) == expected


# TestMostRecentScheduleTime
@pytest.mark.parametrize("schedule,created,last,deadline,include,now,earliest,recent,missed,error", [
    pytest.param("0 * * * *", at(), None, None, False, at(30 * S), at(), None, sched.Missed.NONE, False,
                 id="now before next schedule"),
    pytest.param("0 * * * *", at(), None, None, False, at(61 * M), at(), at(60 * M), sched.Missed.NONE, False,
                 id="now just after next schedule"),
    pytest.param("0 * * * *", at(10 * S), None, None, False, at(301 * M), at(10 * S), at(300 * M),
                 sched.Missed.FEW, False, id="missed 5 schedules"),
    pytest.param("30 6-16/4 * * 1-5", at(), at(30 * M), None, False, at(24 * H + 31 * M), at(30 * M),
                 at(24 * H + 30 * M), sched.Missed.FEW, False, id="complex schedule"),
    pytest.param("30 10,11,12 * * 1-5", at(), at(30 * M), None, False, at(30 * H + 30 * M), at(30 * M), None,
                 sched.Missed.FEW, False, id="another complex schedule"),
    pytest.param("30 6-16/4 * * 1-5", at(), at(30 * M), None, False, at(96 * H + 31 * M), at(30 * M),
                 at(76 * H + 30 * M), sched.Missed.FEW, False,
                 id="complex schedule with longer diff between executions"),
    pytest.param("30 6-16/4 * * 1-5", at(), None, None, False, at(24 * H + 31 * M), at(), at(24 * H + 30 * M),
                 sched.Missed.FEW, False, id="complex schedule with shorter diff between executions"),
    pytest.param("@every 1h", at(-59 * M), at(M), 10, False, at(7 * 24 * H), at(M), at(6 * 24 * H + 23 * H + M),
                 sched.Missed.MANY, False, id="@every schedule"),
    pytest.param("59 23 31 2 *", at(10 * S), None, None, False, at(H), None, None, sched.Missed.NONE, True,
                 id="rogue cronjob"),
    pytest.param("0 * * * *", at(), at(), None, False, at(30 * S), at(), None, sched.Missed.NONE, False,
                 id="earliestTime being CreationTimestamp and LastScheduleTime"),
    pytest.param("*/5 * * * *", at(), at(30 * M), None, False, at(31 * M), at(30 * M), None, sched.Missed.NONE,
                 False, id="earliestTime being LastScheduleTime"),
    pytest.param("*/5 * * * *", at(), at(30 * M), 60, False, at(31 * M), at(30 * M), None, sched.Missed.NONE,
                 False, id="earliestTime being LastScheduleTime (within StartingDeadlineSeconds)"),
    pytest.param("*/5 * * * *", at(), at(30 * M), 60, True, at(32 * M), at(31 * M), None, sched.Missed.NONE,
                 False, id="earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)"),
])
def test_most_recent_schedule_time(schedule, created, last, deadline, include, now, earliest, recent, missed,
                                   error) -> None:
    got = sched.most_recent_schedule_time(cronjob(schedule, created, last, deadline), now,
                                          cron.parse(schedule, UTC), include)
    if error:
        assert got.error is not None and got.recent is None
        return
    assert got.error is None
    assert (got.earliest, got.recent, got.missed) == (earliest, recent, missed)


# TestNextScheduleTimeDuration
@pytest.mark.parametrize("schedule,last,now,expected", [
    pytest.param("30 6-16/4 * * 1-5", at(30 * M), at(24 * H + 31 * M), 3 * H + 59 * M,
                 id="complex schedule skipping weekend"),
    pytest.param("30 10,11,12 * * 1-5", at(30 * M), at(30 * H + 30 * M), 18 * H,
                 id="another complex schedule skipping weekend"),
    pytest.param("0 12 * * 2", at(2 * H), at(19 * 24 * H + H + 30 * M), 48 * H + 30 * M,
                 id="once a week cronjob, missed two runs"),
    pytest.param("0 12 * * 3", None, at(6 * H), 20 * H, id="no previous run of a cronjob"),
])
def test_next_schedule_delay(schedule, last, now, expected) -> None:
    got = sched.next_schedule_delay(cronjob(schedule, at(), last), now, cron.parse(schedule, UTC))
    assert got == pytest.approx(expected.total_seconds() + DELTA)


# formatSchedule (exercised by the controller tests' time-zone cases)
@pytest.mark.parametrize("schedule,tz,expected,warned", [
    ("0 10 * * *", None, "0 10 * * *", False),
    ("0 10 * * *", "Pacific/Honolulu", "TZ=Pacific/Honolulu 0 10 * * *", False),
    ("0 10 * * *", "Nowhere/Else", "0 10 * * *", False),
    ("TZ=UTC 0 10 * * *", "Pacific/Honolulu", "TZ=UTC 0 10 * * *", True),
])
def test_format_schedule(schedule, tz, expected, warned) -> None:
    events: list[tuple] = []
    cj = cronjob(schedule, at(), timeZone=tz) if tz else cronjob(schedule, at())
    assert sched.format_schedule(cj, lambda *a: events.append(a)) == expected
    assert [e[1] for e in events] == (["UnsupportedSchedule"] if warned else [])


def test_rfc3339_in_zone() -> None:
    assert sched.rfc3339(TOP.astimezone(zoneinfo.ZoneInfo("Pacific/Honolulu"))) == "2025-03-11T00:00:00-10:00"


# ---- which vcjobs are the CronJob's (cronjob_controller_handler_test.go TestGetJobsByCronJob) --------------
def _vcjob(namespace: str = "default", **ref: Any) -> dict:
    owner = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "name": "mycronjob", "uid": "1a2b3c",
             "controller": True, **ref}
    return {"metadata": {"name": "j", "namespace": namespace, "ownerReferences": [owner] if ref.get("kind") != "-"
                         else []}}


@pytest.mark.parametrize("job, owner_key, mine", [
    pytest.param(_vcjob(), "default/mycronjob", True, id="matching controller"),
    pytest.param(_vcjob(kind="Deployment", apiVersion="apps/v1"), None, False, id="non-matching controller kind"),
    pytest.param(_vcjob("other"), "other/mycronjob", True, id="different namespace job"),   # (keyed apart)
    pytest.param(_vcjob(kind="-"), None, False, id="job without controller reference"),
    pytest.param(_vcjob(controller=False), None, False, id="owner that is not the controller"),
    pytest.param(_vcjob(uid="other-uid"), "default/mycronjob", False, id="jobs with mismatched UIDs"),
])
def test_jobs_of_a_cronjob(job: dict, owner_key: str | None, mine: bool) -> None:
    assert cc._owner_key(job) == owner_key   # the key the vcjob is indexed and queued under
    assert sched.controlled_by(job, cronjob("* * * * *", TOP)) is mine
