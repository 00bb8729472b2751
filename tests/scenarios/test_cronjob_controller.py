"""The CronJob controller against the real in-process API on a virtual clock: Volcano's
cronjob_controller_test.go TestSyncCronJob table (same names, inputs and expectations: requeue delay,
status written or not, lastScheduleTime, lastSuccessfulTime, active count, Events, vcjobs created and
deleted), then whole runs through the work queue's timers, deletion and the handlers.

Volcano's table feeds fake clients that can disagree with its informer ("in lister" / "in client"); here
a vcjob is in the store or not, so a vcjob only "in client" is stored and not handed to the sync, as
Volcano's lister would not. Two Volcano rows (a failing GET, a terminating namespace) test its fakes'
errors and are not ported; where Volcano returns an error for a schedule or time zone it cannot use,
vclite records the same Events and waits instead of retrying (column `error`: no requeue).
"""
from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.controllers.cronjob import controller as cc
from vclite.controllers.cronjob import schedule as sched
from vclite.lib import clock as clock_mod

UTC = dt.timezone.utc
TEN = dt.datetime(2025, 3, 11, 10, 0, tzinfo=UTC)
M, H = dt.timedelta(minutes=1), dt.timedelta(hours=1)
TOMORROW = TEN + 24 * H
D = sched.NEXT_SCHEDULE_DELTA
SIXTY, THREE_MIN, LONG = 60, 180, 60060


def job_spec() -> dict:
    return {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
        {"name": "c", "image": "busybox", "command": ["true"]}]}}}]}


class Cluster:
    def __init__(self, start: dt.datetime = TEN):
        self.clock = clock_mod.VirtualClock(start)
        self.client = inprocess.new_client(self.clock)
        self.events: list[tuple[str, str, str]] = []
        self.ctrl = cc.CronJobController(self.client, self.clock, local_zone=UTC, recorder=self._note)
        self.ctrl.start()

    def _note(self, obj: dict, event_type: str, reason: str, message: str, component: str) -> None:
        self.events.append((event_type, reason, message))

    def create_cronjob(self, name: str = "vccronjob", **spec: Any) -> dict:
        body = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow", "jobTemplate": {
                    "metadata": {"labels": {"volcano": "yes"}, "annotations": {"cronjob": "yes"}},
                    "spec": job_spec()}, **spec}}
        return self.client.create(body)

    def store_job(self, cj: dict, phase: str, at: dt.datetime, owned: bool = True) -> dict:
        job = sched.job_from_template(cj, at)
        if not owned:
            del job["metadata"]["ownerReferences"]
        job = self.client.create(job)
        state = {"phase": phase, "lastTransitionTime": clock_mod.format_time(at + M)}
        return self.client.update_status({**job, "status": {"state": state}})

    def drain(self) -> None:
        while (k := self.ctrl.queue.get()) is not None:
            self.ctrl.sync(k)

    def advance(self) -> None:
        """To the next timer (the next scheduled time), then run what is due."""
        due = self.ctrl.queue.next_ready_at()
        assert due is not None, "nothing is scheduled"
        self.clock.jump_to(due)
        self.drain()

    def jobs(self) -> list[dict]:
        return sorted(self.client.list(kinds.JOB, "default"), key=lambda j: j["metadata"]["name"])

    def cronjob(self, name: str = "vccronjob") -> dict:
        return self.client.get(kinds.CRONJOB, "default", name)

    def reasons(self) -> list[str]:
        return [r for _, r, _ in self.events]


def J(phase, at, lister=True, client=False, active=False, owned=True):  # noqa: N802 (Volcano's jobSpec)
    return dict(phase=phase, at=at, lister=lister, client=client, active=active, owned=owned)


def E(requeue=None, update=False, last=None, success=None, active=0, events=0, created=0, deleted=0):  # noqa: N802
    return dict(requeue=requeue, update=update, last=last, success=success, active=active, events=events,
                created=created, deleted=deleted)


CASES = [
    ("Abnormal situation, error schedule", dict(schedule="wrong shcedlue"), TEN, [], None, E()),
    ("Abnormal situation, error TimeZone", dict(timeZone="error TZ"), TEN, [], None, E(events=1)),
    ("Abnormal situation, suspend", dict(suspend=True), TEN, [], None, E()),
    ("First run, is not time, Allow", {}, TEN + 3 * M, [], None, E(2 * M)),
    ("First run, is not time, Forbid", dict(concurrencyPolicy="Forbid"), TEN + 3 * M, [], None, E(2 * M)),
    ("First run, is not time, Replace", dict(concurrencyPolicy="Replace"), TEN + 3 * M, [], None, E(2 * M)),
    ("First run, is not time in TZ", dict(schedule="0 10 * * *", timeZone="Pacific/Honolulu"), TEN, [], None,
     E(10 * H)),
    ("First run, is time, Allow", {}, TEN + 5 * M, [], None,
     E(5 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    ("First run, is time, Forbid", dict(concurrencyPolicy="Forbid"), TEN + 5 * M, [], None,
     E(5 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    ("First run, is time, has startingDeadlineSeconds, Allow", dict(startingDeadlineSeconds=SIXTY), TEN + 5 * M, [],
     None, E(5 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    ("First run, is time in TZ, Allow", dict(schedule="0 10 * * *", timeZone="Pacific/Honolulu"), TEN + 10 * H, [],
     None, E(24 * H, True, TEN + 10 * H, active=1, events=1, created=1)),
    ("First run, is time, uses schedule's TZ despite conflict with TimeZone setting",
     dict(schedule="TZ=UTC 0 20 * * *", timeZone="Pacific/Honolulu"), TEN + 10 * H, [], None,
     E(24 * H, True, TEN + 10 * H, active=1, events=2, created=1)),
    ("First run, miss Time, no startingDeadlineSeconds, Allow", {}, TEN + 7 * M, [], None,
     E(3 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    ("First run, miss Time, no miss deadline, Allow", dict(startingDeadlineSeconds=THREE_MIN), TEN + 7 * M, [], None,
     E(3 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    ("First run, miss deadline, Allow", dict(startingDeadlineSeconds=SIXTY), TEN + 7 * M, [], None, E(3 * M)),
    ("First run, manymiss, no startingDeadlineSeconds, Allow", {}, TEN + 10 * H, [], None,
     E(5 * M, True, TEN + 10 * H, active=1, events=2, created=1)),
    ("First run, manymiss, has startingDeadlineSeconds, Allow",
     dict(schedule="* * * * *", startingDeadlineSeconds=LONG), TOMORROW, [], None,
     E(M, True, TOMORROW, active=1, events=2, created=1)),
    ("First run, is time, job exist and done, Allow", {}, TEN + 5 * M,
     [J("Completed", TEN + 5 * M, lister=False, client=True)], None, E(5 * M)),
    ("First run, is time, job exist but not owned by this CronJob, Allow", {}, TEN + 5 * M,
     [J("Running", TEN + 5 * M, lister=False, client=True, owned=False)], None, E(5 * M, events=1)),
    ("First run, is time, job in active but not in lister, Allow", {}, TEN + 5 * M,
     [J("Completed", TEN + 5 * M, lister=False, active=True)], None,
     E(5 * M, True, TEN + 5 * M, active=1, events=2, created=1)),
    ("First run, @every schedule, not time, Allow", dict(schedule="@every 1h"), TEN + 5 * M, [], None, E(55 * M)),
    ("First run, @every schedule, is time, Allow", dict(schedule="@every 1h"), TEN + H, [], None,
     E(H, True, TEN + H, active=1, events=1, created=1)),
    ("First run, @every schedule, is time, miss deadline, Allow", dict(schedule="@every 1h",
                                                                       startingDeadlineSeconds=SIXTY),
     TEN + H + 30 * M, [], None, E(30 * M)),
    ("First run, @every schedule, is time, no miss deadline, Allow", dict(schedule="@every 1h",
                                                                          startingDeadlineSeconds=LONG),
     TEN + H + 30 * M, [], None, E(30 * M, True, TEN + H, active=1, events=1, created=1)),
    ("not first run, @every schedule, pre all done, is not time, Allow",
     dict(schedule="@every 1h", startingDeadlineSeconds=LONG), TEN + 30 * M, [J("Completed", TEN)], None,
     E(30 * M, True, success=TEN + M)),
    ("not first run, @every schedule, pre all done, is time, Allow",
     dict(schedule="@every 1h", startingDeadlineSeconds=LONG), TEN + H, [J("Completed", TEN)], None,
     E(H, True, TEN + H, TEN + M, active=1, events=1, created=1)),
    ("not first run, @every schedule, pre active, is not time, Allow",
     dict(schedule="@every 1h", startingDeadlineSeconds=LONG), TEN + 30 * M,
     [J("Running", TEN, client=True, active=True)], None, E(30 * M, active=1)),
    ("not first run, @every schedule, pre activee all done, is time, Allow",
     dict(schedule="@every 1h", startingDeadlineSeconds=LONG), TEN + H,
     [J("Running", TEN, client=True, active=True)], None, E(H, True, TEN + H, active=2, events=1, created=1)),
    ("noy first run, successfulJobHistoryLimit is 0", dict(successfulJobsHistoryLimit=0), TEN + 7 * M,
     [J("Completed", TEN + 5 * M)], TEN + 5 * M, E(3 * M, True, TEN + 5 * M, TEN + 6 * M, events=1, deleted=1)),
    ("noy first run, successfulJobHistoryLimit is 5", dict(successfulJobsHistoryLimit=5), TEN + 22 * M,
     [J("Completed", TEN + 5 * M), J("Completed", TEN + 10 * M), J("Completed", TEN + 15 * M),
      J("Completed", TEN + 20 * M)], TEN + 20 * M, E(3 * M, True, TEN + 20 * M, TEN + 21 * M)),
    ("not first run, pre all done, is not time, Replace (failed)", dict(concurrencyPolicy="Replace",
                                                                        startingDeadlineSeconds=LONG),
     TEN + 3 * M, [J("Failed", TEN)], None, E(2 * M)),
    ("not first run, pre all done, one suc and one fail, is not time, Allow", {}, TEN + 7 * M,
     [J("Completed", TEN), J("Failed", TEN + 5 * M)], TEN + 5 * M, E(3 * M, True, TEN + 5 * M, TEN + M)),
    ("not first run, pre all done but in active, is not time, Forbid", dict(concurrencyPolicy="Forbid"),
     TEN + 3 * M, [J("Completed", TEN, active=True)], None, E(2 * M, True, success=TEN + M, events=1)),
    ("not first run, pre all done, is time, suspend", dict(suspend=True), TEN + 5 * M, [J("Completed", TEN)], None,
     E(None, True, success=TEN + M)),
    ("not first run, pre all done fail, is time, Allow", {}, TEN + 5 * M, [J("Failed", TEN)], None,
     E(5 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    ("not first run, pre all done, one suc and one fail, is time, Allow", {}, TEN + 15 * M,
     [J("Completed", TEN), J("Failed", TEN + 5 * M)], None, E(5 * M, True, TEN + 15 * M, TEN + M, active=1, events=1,
                                                              created=1)),
    ("not first run, pre all done but in active, is time, Replace", dict(concurrencyPolicy="Replace"), TEN + 5 * M,
     [J("Completed", TEN, active=True)], None, E(5 * M, True, TEN + 5 * M, TEN + M, active=1, events=2, created=1)),
    ("not first run, pre all done, miss deadline, Allow", dict(startingDeadlineSeconds=SIXTY), TEN + 7 * M,
     [J("Completed", TEN)], None, E(3 * M, True, success=TEN + M)),
    ("not first run, pre all done, no miss deadline, Allow", dict(startingDeadlineSeconds=THREE_MIN), TEN + 7 * M,
     [J("Completed", TEN)], None, E(3 * M, True, TEN + 5 * M, TEN + M, active=1, events=1, created=1)),
    ("not first run, pre active, not time, Forbid", dict(concurrencyPolicy="Forbid"), TEN + 7 * M,
     [J("Running", TEN + 5 * M, active=True)], TEN + 5 * M, E(3 * M, last=TEN + 5 * M, active=1)),
    ("not first run, pre active, is time, Allow", {}, TEN + 10 * M,
     [J("Running", TEN + 5 * M, client=True, active=True)], TEN + 5 * M,
     E(5 * M, True, TEN + 10 * M, active=2, events=1, created=1)),
    ("not first run, pre active, is time, Forbid", dict(concurrencyPolicy="Forbid"), TEN + 10 * M,
     [J("Running", TEN + 5 * M, client=True, active=True)], TEN + 5 * M,
     E(5 * M, last=TEN + 5 * M, active=1, events=1)),
    ("not first run, pre active, is time, Replace", dict(concurrencyPolicy="Replace"), TEN + 10 * M,
     [J("Running", TEN + 5 * M, client=True, active=True)], TEN + 5 * M,
     E(5 * M, True, TEN + 10 * M, active=1, events=3, created=1, deleted=1)),
    ("not first run, pre active, is time, suspend", dict(suspend=True), TEN + 10 * M,
     [J("Running", TEN + 5 * M, client=True, active=True)], TEN + 5 * M, E(last=TEN + 5 * M, active=1)),
    ("not first run, pre all done, manymiss, has startingDeadlineSeconds, Allow",
     dict(schedule="* * * * *", startingDeadlineSeconds=LONG), TOMORROW, [J("Completed", TEN + 5 * M)], None,
     E(M, True, TOMORROW, TEN + 6 * M, active=1, events=2, created=1)),
    # (Volcano's row of this name sets Forbid: on a first run the policies act alike)
    ("First run, is time, Replace", dict(concurrencyPolicy="Replace"), TEN + 5 * M, [], None,
     E(5 * M, True, TEN + 5 * M, active=1, events=1, created=1)),
    *[(f"not first run, pre all done, is not time, {policy}", dict(concurrencyPolicy=policy,
                                                                    startingDeadlineSeconds=LONG),
       TEN + 3 * M, [J("Completed", TEN)], None, E(2 * M, True, success=TEN + M))
      for policy in ("Allow", "Forbid", "Replace")],
    *[(f"not first run, pre all done but in active, is not time, {policy}", dict(concurrencyPolicy=policy),
       TEN + 3 * M, [J("Completed", TEN, active=True)], None, E(2 * M, True, success=TEN + M, events=1))
      for policy in ("Allow", "Replace")],
    *[(f"not first run, pre all done, is time, {policy}", dict(concurrencyPolicy=policy), TEN + 5 * M,
       [J("Completed", TEN)], None, E(5 * M, True, TEN + 5 * M, TEN + M, active=1, events=1, created=1))
      for policy in ("Allow", "Forbid", "Replace")],
    *[(f"not first run, pre all done but in active, is time, {policy}", dict(concurrencyPolicy=policy),
       TEN + 5 * M, [J("Completed", TEN, active=True)], None,
       E(5 * M, True, TEN + 5 * M, TEN + M, active=1, events=2, created=1))
      for policy in ("Allow", "Forbid")],
    ("not first run, pre all done, job exist and in active, is time, Allow", {}, TEN + 5 * M,
     [J("Running", TEN + 5 * M, client=True, active=True), J("Completed", TEN)], None,
     E(5 * M, True, success=TEN + M, active=1)),
    *[(f"not first run, pre active, not time, {policy}", dict(concurrencyPolicy=policy), TEN + 7 * M,
       [J("Running", TEN + 5 * M, active=True)], TEN + 5 * M, E(3 * M, last=TEN + 5 * M, active=1))
      for policy in ("Allow", "Replace")],
    # (Volcano's row of this name does not set suspend; suspended, the CronJob waits for no time)
    ("not first run, pre active, not time, suspend", dict(suspend=True), TEN + 7 * M,
     [J("Running", TEN + 5 * M, active=True)], TEN + 5 * M, E(last=TEN + 5 * M, active=1)),
    ("not first run, pre active, is time, miss deadline", dict(startingDeadlineSeconds=SIXTY), TEN + 12 * M,
     [J("Running", TEN + 5 * M, client=True, active=True)], TEN + 5 * M, E(3 * M, last=TEN + 5 * M, active=1)),
    ("not first run, pre active, is time, no miss deadline", dict(startingDeadlineSeconds=THREE_MIN), TEN + 12 * M,
     [J("Running", TEN + 5 * M, client=True, active=True)], TEN + 5 * M,
     E(3 * M, True, TEN + 10 * M, active=2, events=1, created=1)),
    ("not first run, pre all done, manymiss, Allow", {}, TEN + 10 * H, [J("Completed", TEN + 5 * M)], None,
     E(5 * M, True, TEN + 10 * H, TEN + 6 * M, active=1, events=2, created=1)),
]


@pytest.mark.parametrize("spec,now,jobs,last,expect", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_sync_cronjob(spec: dict, now: dt.datetime, jobs: list[dict], last: dt.datetime | None, expect: dict) -> None:
    c = Cluster()
    stored = c.create_cronjob(**{k: v for k, v in spec.items() if k not in ("schedule", "timeZone")}) \
        if "wrong" not in spec.get("schedule", "") and "error" not in spec.get("timeZone", "") else None
    cj = stored or {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                    "metadata": {"name": "vccronjob", "namespace": "default", "uid": "test-uid-123",
                                 "creationTimestamp": clock_mod.format_time(TEN)}, "spec": {}}
    cj = {**cj, "spec": {**cj.get("spec", {}), **spec}, "status": {}}   # (schedules admission would refuse too)
    listed, active = [], []
    for j in sorted(jobs, key=lambda j: j["at"]):
        stored_job = c.store_job(cj, j["phase"], j["at"], j["owned"]) if j["lister"] or j["client"] else None
        if j["lister"]:
            listed.append(stored_job)
        if j["active"]:
            ref = sched.object_reference(stored_job) if stored_job else {
                "kind": "Job", "namespace": "default", "name": sched.job_name(cj, j["at"]), "uid": "gone"}
            active.append(ref)
    cj["status"] = {k: v for k, v in (("active", active), ("lastScheduleTime", clock_mod.format_time(last))) if v}
    if stored is not None:
        c.client.update_status({**c.cronjob(), "status": copy.deepcopy(cj["status"])})
        cj["metadata"] = c.cronjob()["metadata"]
    c.clock.jump_to((now - TEN).total_seconds())
    before = {j["metadata"]["name"] for j in c.jobs()}
    c.events.clear()

    requeue, update = c.ctrl._sync_cronjob(cj, listed)

    after = {j["metadata"]["name"] for j in c.jobs()}
    want_requeue = None if expect["requeue"] is None else expect["requeue"].total_seconds() + D
    assert requeue == (pytest.approx(want_requeue) if want_requeue is not None else None)
    assert update is expect["update"]
    assert cj["status"].get("lastScheduleTime") == clock_mod.format_time(expect["last"])
    assert cj["status"].get("lastSuccessfulTime") == clock_mod.format_time(expect["success"])
    assert len(cj["status"].get("active") or []) == expect["active"]
    assert len(c.events) == expect["events"], c.events
    assert len(after - before) == expect["created"]
    assert len(before - after) == expect["deleted"]
    for name in after - before:
        ref = c.client.get(kinds.JOB, "default", name)["metadata"]["ownerReferences"][0]
        assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            "batch.volcano.sh/v1alpha1", "CronJob", "vccronjob", cj["metadata"]["uid"], True)


# ---- whole runs: the work queue's timers, the watch handlers, deletion -----------------------------

def test_runs_at_each_scheduled_time_and_follows_its_vcjobs() -> None:
    c = Cluster()
    c.create_cronjob()
    c.drain()
    assert c.jobs() == [] and c.ctrl.queue.next_ready_at() == pytest.approx(5 * 60 + D)
    c.advance()
    c.advance()
    names = [j["metadata"]["name"] for j in c.jobs()]
    assert names == ["vccronjob-29028125", "vccronjob-29028130"]
    first = c.jobs()[0]
    assert first["metadata"]["annotations"] == {"cronjob": "yes",
                                                "volcano.sh/cronjob-scheduled-timestamp": "2025-03-11T10:05:00Z"}
    assert first["metadata"]["labels"] == {"volcano": "yes"}
    assert [r["name"] for r in c.cronjob()["status"]["active"]] == names
    c.client.update_status({**first, "status": {"state": {"phase": "Completed", "lastTransitionTime":
                                                          "2025-03-11T10:06:00Z"}}})
    c.drain()   # (the vcjob's watch event queues its CronJob)
    status = c.cronjob()["status"]
    assert [r["name"] for r in status["active"]] == names[1:]
    assert status["lastSuccessfulTime"] == "2025-03-11T10:06:00Z"
    assert status["lastScheduleTime"] == "2025-03-11T10:10:00Z"
    assert c.reasons() == ["SuccessfulCreate", "SuccessfulCreate", "SawCompletedJob"]
    assert c.events[0][2] == "Created job vccronjob-29028125 for CronJob default/vccronjob"


def test_deleting_the_cronjob_deletes_its_vcjobs() -> None:
    c = Cluster()
    c.create_cronjob(schedule="@every 1m")
    c.drain()
    c.advance()
    c.advance()
    other = c.create_cronjob(name="other")
    c.drain()
    assert len(c.jobs()) == 2 and other
    c.client.delete(kinds.CRONJOB, "default", "vccronjob")
    c.drain()
    assert c.jobs() == []


def test_suspend_and_resume() -> None:
    c = Cluster()
    c.create_cronjob(schedule="* * * * *")
    c.drain()
    c.advance()
    assert len(c.jobs()) == 1
    c.client.patch(kinds.CRONJOB, "default", "vccronjob", {"spec": {"suspend": True}})
    c.drain()
    c.clock.advance(10 * 60)
    c.drain()
    assert len(c.jobs()) == 1   # suspended: the timer found nothing to do, and set no other
    assert c.ctrl.queue.next_ready_at() is None
    c.client.patch(kinds.CRONJOB, "default", "vccronjob", {"spec": {"suspend": False}})
    c.drain()   # resumed: the most recent missed time runs (no startingDeadlineSeconds)
    assert [j["metadata"]["name"] for j in c.jobs()][-1] == f"vccronjob-{int((TEN + 11 * M).timestamp()) // 60}"


def test_a_new_schedule_is_synced_at_its_next_time() -> None:
    c = Cluster()
    c.create_cronjob(schedule="0 0 * * *")
    c.drain()
    c.client.patch(kinds.CRONJOB, "default", "vccronjob", {"spec": {"schedule": "30 10 * * *"}})
    assert len(c.ctrl.queue) == 0 or c.ctrl.queue.get() is None   # (handler: requeued after, not now)
    c.advance()
    assert c.clock.now() == TEN + 30 * M + dt.timedelta(seconds=D)
    assert [j["metadata"]["name"] for j in c.jobs()] == [f"vccronjob-{int((TEN + 30 * M).timestamp()) // 60}"]


def test_history_limits_delete_the_oldest_finished() -> None:
    c = Cluster()
    c.create_cronjob(schedule="@every 1m", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0)
    c.drain()
    for phase in ("Completed", "Failed", "Completed", "Completed"):
        c.advance()
        newest = c.jobs()[-1]
        state = {"phase": phase, "lastTransitionTime": clock_mod.format_time(c.clock.now())}
        c.client.update_status({**newest, "status": {"state": state}})
        c.drain()
    assert [j["metadata"]["name"] for j in c.jobs()] == [f"vccronjob-{int((TEN + 4 * M).timestamp()) // 60}"]
    assert c.reasons().count("SuccessfulDelete") == 3
    assert 'Deleted job "vccronjob-' in next(m for _, r, m in c.events if r == "SuccessfulDelete")


def test_vcjobs_are_followed_only_once_a_cronjob_exists():
    """A flow's vcjobs cost the controller nothing until a CronJob appears; then the vcjobs already
    there are known too (a CronJob's own vcjob made before a restart is seen)."""
    c = Cluster()
    c.client.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                     "metadata": {"name": "plain", "namespace": "default"}, "spec": job_spec()})
    assert list(c.ctrl.jobs.items()) == []
    c.create_cronjob()
    assert [j["metadata"]["name"] for j in c.ctrl.jobs.items()] == ["plain"]
    restarted = cc.CronJobController(c.client, c.clock, local_zone=UTC)
    restarted.start()
    assert [j["metadata"]["name"] for j in restarted.jobs.items()] == ["plain"]


@pytest.mark.parametrize("old, new, delay", [
    pytest.param(dict(schedule="0 * * * *"), dict(schedule="*/1 * * * *"), M, id="spec.schedule changed"),
    pytest.param(dict(schedule="@every 1m"), dict(schedule="@every 3m"), 3 * M,
                 id="spec.schedule with @every changed - cadence decrease"),
    pytest.param(dict(schedule="@every 3m"), dict(schedule="@every 1m"), M,
                 id="spec.schedule with @every changed - cadence increase"),
    pytest.param(dict(schedule="0 * * * *"), dict(schedule="0 * * * *", timeZone="Pacific/Honolulu"), H,
                 id="spec.timeZone changed"),
    pytest.param(dict(timeZone="Pacific/Honolulu"),
                 dict(timeZone="Pacific/Honolulu", jobTemplate={"metadata": {"labels": {"a": "foo"}}}), None,
                 id="spec.timeZone not changed"),
])
def test_update_cronjob(old: dict, new: dict, delay: dt.timedelta | None) -> None:
    """Volcano's TestUpdateCronJob: a changed schedule or time zone is synced at its next time (from the
    last scheduled one), any other change at once."""
    c = Cluster()
    c.create_cronjob(**old)
    c.client.update_status({**c.cronjob(), "status": {"lastScheduleTime": clock_mod.format_time(TEN)}})
    c.drain()
    c.ctrl.queue = type(c.ctrl.queue)(c.clock)   # (forget the timer the first sync set)
    c.client.patch(kinds.CRONJOB, "default", "vccronjob", {"spec": new})
    if delay is None:
        assert c.ctrl.queue.get() is not None
    else:
        assert c.ctrl.queue.get() is None
        assert c.ctrl.queue.next_ready_at() == pytest.approx(c.clock.monotonic() + delay.total_seconds() + D)
