"""CronJob admission: Volcano's admit_cronjob_test.go (same inputs, same messages), the CRD's schema and
defaults, and the job template checked as a vcjob made from it would be."""
from __future__ import annotations

from typing import Any

import pytest

from vclite.admission import admit
from vclite.admission import cronjob as cronjob_admission
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]
VIEW = views.default_view()


def job_spec() -> Obj:
    """Volcano's test jobSpec: one busybox task (with the command vclite's local pods need)."""
    return {"minAvailable": 1, "queue": "default", "tasks": [{"name": "task-1", "replicas": 1, "template": {
        "metadata": {"labels": {"name": "test"}},
        "spec": {"containers": [{"name": "fake-name", "image": "busybox:1.24", "command": ["true"]}]}}}]}


def cronjob(name: str = "cronvcjob", **spec: Any) -> Obj:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Allow", "jobTemplate": {"spec": job_spec()},
                     **spec}}


def refusal(obj: Obj, op: Op = Op.CREATE, old: Obj | None = None) -> list[str]:
    try:
        admit.admit(op, kinds.CRONJOB, obj, old, VIEW)
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


# TestValidateCronJobSpec: each case, on CREATE and on UPDATE (Volcano's webhook runs the same rules)
@pytest.mark.parametrize("schedule,tz,expected", [
    pytest.param("* * * * *", None, [], id="validate valid-cronjob"),
    pytest.param("@every 1m", None, [], id="validate non-standard scheduled"),
    pytest.param("*/5 * * * *", "Pacific/Honolulu", [], id="validate correct timeZone"),
    pytest.param("TZ=UTC 0 20 * * *", "Pacific/Honolulu",
                 ["spec.schedule: schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone "
                  "field"], id="validate contain TZ schedule"),
    pytest.param("error schedule", "Pacific/Honolulu", ["spec.schedule: schedule is not a valid cron expression"],
                 id="validate error schedule"),
    pytest.param("", "Pacific/Honolulu", ["spec.schedule: schedule is required, but got empty"],
                 id="validate empty schedule"),
    pytest.param("*/5 * * * *", "Asia/./Shanghai",
                 ["spec.timeZone: unknown timeZone", "spec.timeZone: invalid timeZone"],
                 id="validate unknown . timezone"),
    pytest.param("*/5 * * * *", "America/-NewYork",
                 ["spec.timeZone: unknown timeZone", "spec.timeZone: invalid timeZone"],
                 id="validate unknown _ timezone"),
    pytest.param("*/5 * * * *", "New York", ["spec.timeZone: unknown timeZone", "spec.timeZone: invalid timeZone"],
                 id="validate unknown space timezone"),
    pytest.param("*/5 * * * *", "UTC!", ["spec.timeZone: unknown timeZone", "spec.timeZone: invalid timeZone"],
                 id="validate unknown ! timezone"),
    pytest.param("*/5 * * * *", "Local",
                 ["spec.timeZone: timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"],
                 id="validate Local timezone"),
    pytest.param("", "", ["spec.schedule: schedule is required, but got empty",
                          "spec.timeZone: timeZone must be nil or non-empty string, got empty string"],
                 id="validate empty timezone"),
    pytest.param("", "Amerrica/New_York", ["spec.schedule: schedule is required, but got empty",
                                           "spec.timeZone: invalid timeZone"], id="validate error timezone"),
])
@pytest.mark.parametrize("op", [Op.CREATE, Op.UPDATE])
def test_webhook_spec_rules(schedule: str, tz: str | None, expected: list[str], op: Op) -> None:
    obj = cronjob(schedule=schedule) if tz is None else cronjob(schedule=schedule, timeZone=tz)
    assert refusal(obj, op, cronjob() if op is Op.UPDATE else None) == expected


# TestValidateCronJobName
@pytest.mark.parametrize("name,expected", [
    pytest.param("my-cronjob", "", id="valid name"),
    pytest.param("a" * 52, "", id="exactly max length"),
    pytest.param("a" * 65, "must be no more than 52 characters", id="too long name"),
    pytest.param("-UPPERCASE", "invalid cronJob name", id="invalid chars"),
])
def test_name_rule(name: str, expected: str) -> None:
    msg = cronjob_admission.validate_name(name)
    assert (msg == "") if not expected else (expected in msg)


def test_several_failures_are_each_reported() -> None:
    # TestValidateCronJobCombinedErrors: Volcano joins them with "; ", as an Invalid error's message does
    with pytest.raises(errors.Invalid) as exc:
        admit.admit(Op.CREATE, kinds.CRONJOB, cronjob("a" * 53, schedule="error schedule"), None, VIEW)
    for want in ("schedule is not a valid cron expression", "; ", "must be no more than 52 characters"):
        assert want in exc.value.message


def test_a_single_failure_has_no_separator() -> None:
    # TestValidateCronJobSingleError
    assert refusal(cronjob("valid-cronjob", schedule="")) == ["spec.schedule: schedule is required, but got empty"]


def test_crd_defaults() -> None:
    obj = cronjob()
    del obj["spec"]["concurrencyPolicy"]
    del obj["spec"]["jobTemplate"]["spec"]["queue"]
    out = admit.admit(Op.CREATE, kinds.CRONJOB, obj, None, VIEW)
    assert {k: out["spec"][k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                        "failedJobsHistoryLimit")} == {
        "concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}
    assert out["spec"]["jobTemplate"]["spec"]["queue"] == "default"
    assert out["spec"]["jobTemplate"]["spec"]["maxRetry"] == 3
    assert "minAvailable" not in out["spec"]["jobTemplate"]["spec"]["tasks"][0]   # vcjob defaults: at each run
    assert obj["spec"].get("suspend") is None   # the argument is not changed


def test_status_is_dropped_on_create() -> None:
    out = admit.admit(Op.CREATE, kinds.CRONJOB, {**cronjob(), "status": {"active": [{"name": "x"}]}}, None, VIEW)
    assert "status" not in out


@pytest.mark.parametrize("spec,expected", [
    pytest.param({"concurrencyPolicy": "Sometimes"}, ['spec.concurrencyPolicy: Unsupported value: "Sometimes": '
                                                      'supported values: "Allow", "Forbid", "Replace"'], id="policy"),
    pytest.param({"successfulJobsHistoryLimit": -1}, ["spec.successfulJobsHistoryLimit: Invalid value: -1: should be "
                                                      "greater than or equal to 0"], id="history"),
    pytest.param({"failedJobsHistoryLimit": "1"}, ['spec.failedJobsHistoryLimit: Invalid value: "1": must be of '
                                                   "type integer"], id="history type"),
    pytest.param({"startingDeadlineSeconds": -5}, ["spec.startingDeadlineSeconds: Invalid value: -5: should be "
                                                   "greater than or equal to 0"], id="deadline"),
    pytest.param({"suspend": "yes"}, ['spec.suspend: Invalid value: "yes": must be of type boolean'], id="suspend"),
    pytest.param({"jobTemplate": None}, ["spec.jobTemplate: Required value"], id="no template"),
    pytest.param({"jobTemplate": {"spec": {"tasks": []}}}, ["spec.jobTemplate.spec.tasks: No task specified in job "
                                                            "spec"], id="template as a vcjob"),
    pytest.param({"jobTemplate": {"spec": job_spec() | {"runningEstimate": "xyz"}}},
                 ['spec.jobTemplate.spec.runningEstimate: Invalid value: "xyz": time: invalid duration "xyz": must be '
                  'a duration such as "90s", "30m" or "1h30m"'], id="template running estimate"),
])
def test_schema_and_template(spec: Obj, expected: list[str]) -> None:
    assert refusal(cronjob(**spec)) == expected
