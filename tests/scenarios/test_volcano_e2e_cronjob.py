"""Volcano's CronJob e2e cases (test/e2e/cronjob/cronjob_basic.go) on the embedded control plane on a virtual
clock, with the test kubelet of test_volcano_e2e_jobs.py: the CronJob controller, the vcjob controller and the
scheduler run for real; the test starts the bound pods and ends them as upstream's commands would (`sleep`
keeps running, the normal command succeeds, the failing one exits 1).

Upstream waits minutes of real time for `* * * * *`; here the clock moves one minute (and a half second, so
a scheduled time is behind it) at a time, through the timers due within that minute only — a plain settle()
would run the CronJob's timers for ever. tests/scenarios/test_cronjob_controller.py and tests/e2e/test_cronjob.py
cover the controller and `vcctl run` in more depth.
"""
from __future__ import annotations

import datetime as dt

import pytest

from tests.scenarios.test_volcano_e2e_jobs import Cluster, node
from vclite.api import kinds, meta

SCHEDULED = "volcano.sh/cronjob-scheduled-timestamp"
FINISHED = ("Completed", "Failed", "Terminated")


class CronCluster(Cluster):
    def __init__(self):
        super().__init__([node("n1", "8")])
        self.horizon = self.rt.clock.monotonic()
        self.rt.settle = self._settle_within_the_minute   # (what Cluster.kubelet calls)

    def _settle_within_the_minute(self) -> None:
        while True:
            self.rt.step()
            t = self.rt.next_timer()
            if t is None or t > self.horizon:
                break
            self.rt.clock.jump_to(t)
        if self.rt.clock.monotonic() < self.horizon:
            self.rt.clock.jump_to(self.horizon)

    def minute(self, ends: str | None = None) -> None:
        """One more minute: its scheduled vcjob is made, its pod starts; `ends`: running pods then end so."""
        self.horizon += 60.5
        self.kubelet()
        self.kubelet()   # (the pod of the vcjob made in the first one)
        if ends:
            for name, phase in self.pods().items():
                if phase == "Running":
                    self.set_pod(name, ends, exit_code=0 if ends == "Succeeded" else 1)
            self.rt.settle()

    def cronjob(self, name: str) -> dict:
        return self.client.get(kinds.CRONJOB, "default", name)

    def jobs(self) -> list[dict]:
        """getJobList: the vcjobs the CronJob owns."""
        return [j for j in self.client.list(kinds.JOB, "default")
                if any(o.get("kind") == "CronJob" for o in j["metadata"].get("ownerReferences") or [])]

    def job_phases(self) -> list[str]:
        return [meta.phase(j) for j in self.jobs()]

    def active(self, name: str) -> list[str]:
        """getActiveNum's list: status.active."""
        return [ref["name"] for ref in (self.cronjob(name).get("status") or {}).get("active") or []]


def cronjob(name: str, policy: str = "Allow", command: tuple[str, ...] = ("sh", "-c", "date"), **spec) -> dict:
    """createTestCronjob: every minute, one task of one busybox pod."""
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": policy, **spec, "jobTemplate": {"spec": {
                "minAvailable": 1, "tasks": [{"name": "test-task", "replicas": 1, "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "test-container", "image": "busybox", "command": list(command)}]}}}]}}}}


SLEEP = ("sleep", "3600")


def test_create_and_schedule_basic_cronjob():
    c = CronCluster()
    assert meta.name(c.client.create(cronjob("test-cronjob"))) == "test-cronjob"
    for _ in range(2):
        c.minute(ends="Succeeded")
    assert c.cronjob("test-cronjob")["status"]["lastScheduleTime"]
    assert len(c.jobs()) >= 2
    for job in c.jobs():   # (the CronJobsScheduledAnnotation parses as RFC 3339)
        dt.datetime.fromisoformat(job["metadata"]["annotations"][SCHEDULED].replace("Z", "+00:00"))
    c.client.delete(kinds.CRONJOB, "default", "test-cronjob")
    c.rt.settle()


def test_cronjob_with_suspend_functionality():
    c = CronCluster()
    c.create(cronjob("suspended-cronjob", suspend=True))
    for _ in range(3):
        c.minute()
        assert c.jobs() == []


def test_cronjob_with_allow_concurrency():
    c = CronCluster()
    c.create(cronjob("allow-cronjob", command=SLEEP))
    for _ in range(3):
        c.minute()
    assert len(c.active("allow-cronjob")) >= 2
    assert sum(phase not in FINISHED for phase in c.job_phases()) >= 2


@pytest.mark.parametrize("policy", ["Forbid", "Replace"])
def test_cronjob_with_forbid_or_replace_concurrency_keeps_one_job_active(policy):
    """`CronJob with forbid concurrency`, `CronJob with replace concurrency`: while the first vcjob runs, Forbid
    makes no other; Replace deletes it for the next one (gone, or terminating: upstream accepts either)."""
    c = CronCluster()
    name = f"{policy.lower()}-cronjob"
    c.create(cronjob(name, policy, command=SLEEP))
    c.minute()
    (first,) = [meta.name(j) for j in c.jobs()]
    for _ in range(4):
        c.minute()
        assert len(c.active(name)) == 1
        assert sum(phase not in FINISHED for phase in c.job_phases()) == 1
    names = [meta.name(j) for j in c.jobs()]
    if policy == "Forbid":
        assert names == [first]
    else:
        assert first not in names and len(names) == 1


def test_many_miss_schedule():
    """Upstream sets the CronJob's creationTimestamp two hours back; the API server sets its own, so the
    CronJob is scheduled from now on."""
    c = CronCluster()
    obj = cronjob("many-miss-cronjob")
    obj["metadata"]["creationTimestamp"] = "2025-12-31T22:00:00Z"
    assert c.client.create(obj)["metadata"]["creationTimestamp"] != "2025-12-31T22:00:00Z"
    c.minute(ends="Succeeded")
    assert c.cronjob("many-miss-cronjob")["status"]["lastScheduleTime"]
    assert len(c.jobs()) == 1   # (upstream: at least one; no missed schedule is made up for)


def test_remove_finished_job_from_cronjob_active():
    c = CronCluster()
    c.create(cronjob("process-finished-job-cronjob"))
    c.minute(ends="Succeeded")
    finished = [j["metadata"]["uid"] for j in c.jobs() if meta.phase(j) in FINISHED]
    assert finished
    refs = (c.cronjob("process-finished-job-cronjob").get("status") or {}).get("active") or []
    assert not {ref["uid"] for ref in refs} & set(finished)


@pytest.mark.parametrize("limit, ends, phase", [
    pytest.param("successfulJobsHistoryLimit", "Succeeded", "Completed", id="delete finished and suc jobs with limit"),
    pytest.param("failedJobsHistoryLimit", "Failed", "Failed", id="delete finished and fail jobs with limit"),
])
def test_finished_jobs_beyond_the_history_limit_are_deleted(limit, ends, phase):
    c = CronCluster()
    c.create(cronjob("limit-cronjob", command=("sh", "-c", "exit 1") if ends == "Failed" else ("sh", "-c", "date"),
                     **{limit: 1}))
    c.minute(ends=ends)
    (first,) = [meta.name(j) for j in c.jobs() if meta.phase(j) == phase]
    for _ in range(3):
        c.minute(ends=ends)
        assert c.job_phases().count(phase) == 1
    assert first not in [meta.name(j) for j in c.jobs()]
