"""Admission for Volcano's CronJob (batch.volcano.sh/v1alpha1): the CRD's schema and defaults, then
the webhook's rules (pkg/webhooks/admission/cronjobs/validate/admit_cronjob.go) with its messages,
on CREATE and UPDATE alike, each message on the field it is about.

Webhook rules: `schedule` required, without `TZ`/`CRON_TZ` (the zone belongs in `timeZone`), and
a valid robfig/cron standard schedule (`lib/cron.py`); `timeZone`, when set, non-empty, each `/`
part matching `[A-Za-z.\\-_0-9+]{1,14}` (not `.`, `..`, nor starting with `-`), not `Local`, and a
zone Go's time.LoadLocation knows; the name at most 52 characters (the vcjobs add an 11-character
`-<minutes>` suffix) and a qualified name.

Beyond Volcano (which leaves it to the vcjob webhook, at each run): the job template's spec is
checked as a vcjob made from it would be (the vcjob CREATE rules on the defaulted spec, errors
under `spec.jobTemplate.spec`), but not against the live queue — a CronJob may be applied before its
queue; each vcjob is admitted when it is created. Pure functions.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.admission import base, common, vcjob
from vclite.api import batch, meta
from vclite.lib import cron, errors, jsoncopy

Obj = dict[str, Any]
FieldError = errors.FieldError

MAX_NAME = 52   # 63 less the 11 characters of the `-<Unix minutes>` suffix
_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
SAMPLE_MINUTES = "29000000"   # a scheduled time's Unix minutes (8 digits until 2160), for the vcjob name checks
TEMPLATE_SPEC = "spec.jobTemplate.spec"


def mutate(op: base.Operation, obj: Obj) -> None:
    """The CRD's defaults, for fields absent (concurrencyPolicy Allow, suspend false, history limits
    3 and 1; the job template's queue `default` and maxRetry 3)."""
    spec = obj.get("spec")
    if op not in (base.Operation.CREATE, base.Operation.UPDATE) or not isinstance(spec, dict):
        return
    for key, value in batch.CRONJOB_DEFAULTS.items():
        spec.setdefault(key, value)
    template = spec.get("jobTemplate")
    job_spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(job_spec, dict):
        job_spec.setdefault("queue", batch.DEFAULT_QUEUE)
        job_spec.setdefault("maxRetry", batch.DEFAULT_MAX_RETRY)


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if not isinstance(spec, dict):
        return [FieldError("spec", common.REQUIRED if spec is None else common.type_error(spec, "object"))]
    errs = _schema(spec)
    errs += validate_schedule(spec.get("schedule"))
    errs += validate_time_zone(spec.get("timeZone"))
    name_msg = validate_name(meta.name(new))
    if name_msg:
        errs.append(FieldError("metadata.name", name_msg))
    errs += _job_template(spec.get("jobTemplate"), meta.name(new), view, options)
    return errs


def validate_schedule(schedule: Any) -> list[FieldError]:
    """The webhook's schedule rule (validateCronjobSpec's first half)."""
    path = "spec.schedule"
    if schedule is not None and not isinstance(schedule, str):
        return [FieldError(path, common.type_error(schedule, "string"))]
    if not schedule:
        return [FieldError(path, "schedule is required, but got empty")]
    if "TZ" in schedule:
        return [FieldError(path, "schedule should not contain TZ or CRON_TZ, TZ should only be set in the "
                                 "timeZone field")]
    try:
        cron.parse(schedule)
    except cron.CronError:
        return [FieldError(path, "schedule is not a valid cron expression")]
    return []


def validate_time_zone(tz: Any) -> list[FieldError]:
    """The webhook's timeZone rule (validateCronjobSpec's second half); each message once."""
    path = "spec.timeZone"
    if tz is None:
        return []
    if not isinstance(tz, str):
        return [FieldError(path, common.type_error(tz, "string"))]
    if tz == "":
        return [FieldError(path, "timeZone must be nil or non-empty string, got empty string")]
    msgs: list[str] = []
    if any(p in (".", "..") or p.startswith("-") or not _TZ_PART.fullmatch(p) for p in tz.split("/")):
        msgs.append("unknown timeZone")
    if tz.lower() == "local":
        msgs.append("timeZone can't be Local, and must be defined in https://www.iana.org/time-zones")
    elif cron.load_location(tz) is None:
        msgs.append("invalid timeZone")
    return [FieldError(path, m) for m in msgs]


def validate_name(name: str) -> str:
    """The webhook's validateCronJobName: "" when the name is good."""
    if len(name) > MAX_NAME:
        return (f"cronJob name must be no more than {MAX_NAME} characters to accommodate job name suffix "
                f"(max 63 total)")
    msgs = common.qualified_name(name)
    if msgs:
        return f'invalid cronJob name "{name}": {"; ".join(msgs)}'
    return ""


def _schema(spec: Obj) -> list[FieldError]:
    """The CRD's structural checks on the CronJob's own fields."""
    errs: list[FieldError] = []
    policy = spec.get("concurrencyPolicy")
    allowed = [p.value for p in batch.ConcurrencyPolicy]
    if policy is not None and policy not in allowed:
        errs.append(FieldError("spec.concurrencyPolicy", common.unsupported(policy, allowed)))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        common.check_int(spec, key, f"spec.{key}", errs, minimum=0)
    deadline = spec.get("startingDeadlineSeconds")
    if deadline is not None and not common.is_int(deadline):
        errs.append(FieldError("spec.startingDeadlineSeconds", common.type_error(deadline, "integer")))
    elif deadline is not None and deadline < 0:
        errs.append(FieldError("spec.startingDeadlineSeconds",
                               common.invalid(deadline, "should be greater than or equal to 0")))
    common.check_type(spec, "suspend", "spec.suspend", errs, bool, "boolean")
    return errs


def _job_template(template: Any, name: str, view: base.View, options: base.Options) -> list[FieldError]:
    path = "spec.jobTemplate"
    if not isinstance(template, dict):
        return [FieldError(path, common.REQUIRED if template is None else common.type_error(template, "object"))]
    job_spec = template.get("spec")
    if not isinstance(job_spec, dict):
        return [FieldError(f"{path}.spec", common.REQUIRED if job_spec is None else
                           common.type_error(job_spec, "object"))]
    as_job = jsoncopy.deep_copy(job_spec)
    vcjob.set_spec_defaults(as_job)   # (what a vcjob made from it will be)
    out = []
    for e in vcjob.validate_spec(as_job, f"{name}-{SAMPLE_MINUTES}", view, options, live_queue=False):
        if e.path == "metadata.name":
            continue   # (the vcjob's name is the CronJob's and a suffix: validate_name covers it)
        moved = TEMPLATE_SPEC + e.path.removeprefix("spec") if e.path.startswith("spec") else e.path
        message = e.message.replace(f": {e.path} in body must be of type ", f": {moved} in body must be of type ", 1)
        out.append(FieldError(moved, message, e.offset))   # (a CRD schema's words name the path twice)
    return out
