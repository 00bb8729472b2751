"""The OpenAPI v3 schema of JobFlow, with a description of every field: what `kubectl explain jobflow.spec.flows`
shows (served by `vcctl server` under /openapi/v3, and carried by the CRD `vcctl controller --print-crds`
writes for a real cluster).

Structural, as CRDs require: every node has a type, except values that take several (a duration as
`"10s"` or a number of seconds: `x-kubernetes-preserve-unknown-fields`, any JSON), and integers also
written as strings (`x-kubernetes-int-or-string`). Objects keep fields the schema does not name
(`x-kubernetes-preserve-unknown-fields`), so a cluster prunes nothing vclite reads: admission
(admission/jobflow.py) is the validator, and warns about unknown fields. Types here are never
stricter than admission. Pure data.
"""
from __future__ import annotations

from typing import Any

from vclite.api.schemabuild import STRINGS as _STRINGS
from vclite.api.schemabuild import any_value as _any
from vclite.api.schemabuild import array as _list
from vclite.api.schemabuild import integer as _int
from vclite.api.schemabuild import obj as _obj
from vclite.api.schemabuild import string as _str
from vclite.lib import jsoncopy

Obj = dict[str, Any]

_DURATION = "a duration (`10s`, `2m`, `1h`) or a number of seconds"

PROBE = _obj("Volcano's probes: the flow waits until these hold on its targets' vcjobs (re-checked with back-off). "
             "A target that finishes before they hold makes the flow Skipped.", {
                 "taskStatusList": _list("every replica of a task of a target is in a pod phase", _obj(
                     "a task and a phase", {"taskName": _str("a task of the target's vcjob"),
                                            "phase": _str("a pod phase: Pending, Running, Succeeded, Failed")})),
                 "httpGetList": _list("a task's pod answers an HTTP GET with a 2xx or 3xx status", _obj(
                     "an HTTP check", {"taskName": _str("a task of the target's vcjob"),
                                       "port": _int("the port (1..65535)"),
                                       "path": _str("the path, starting with / (default /)"),
                                       "httpHeader": _obj("a header to send", {"name": _str("header name"),
                                                                               "value": _str("header value")})})),
                 "tcpSocketList": _list("a task's pod accepts a TCP connection", _obj(
                     "a TCP check", {"taskName": _str("a task of the target's vcjob"),
                                     "port": _int("the port (1..65535)")})),
             })

DEPENDS_ON = _obj("When the flow may start (none: at once).", {
    "targets": _list("flows that must be Completed first (Volcano)", _STRINGS),
    "strategy": _str("over targets: `all` (default) — every target Completed; `any` — one is enough (vclite)"),
    "expression": _str("instead of targets, a condition over other flows' outcomes, as Argo's `depends` "
                       "(vclite): `train.Completed && (eval.Failed || eval.Skipped)`; outcomes Completed (or Argo's "
                       "Succeeded), Failed, Terminated, Skipped, Finished (any end), and over loop flows "
                       "AnyCompleted, AllCompleted, AnyFailed, AllFailed; operators ! && || and parentheses"),
    "probe": PROBE,
})

RETRY = _obj("Re-run the flow's vcjob when it ends Failed or Terminated, as Argo's retryStrategy (vclite): the "
             "failed vcjob is deleted and created again under the same name after the back-off.", {
                 "limit": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
                           "description": "how many times to re-run it (0..20; digits in a string too)"},
                 "backoff": _obj("how long to wait before each retry", {
                     "duration": _any(f"the first wait: {_DURATION}"),
                     "factor": _any("each wait is the previous one times this (>= 1; default 1; may be a string)"),
                     "cap": _any(f"the longest wait: {_DURATION}"),
                     "maxDuration": _any(f"the time allowed for all attempts together, from the first one's start: "
                                         f"{_DURATION}; no retry starts, or would end its back-off, after it"),
                 }),
             }, ["limit"])

FLOW = _obj("One step of the DAG: a vcjob made from the JobTemplate named `name`.", {
    "name": _str("the JobTemplate to run, in the JobFlow's namespace; its vcjob is `<jobflow>-<name>` "
                 "(`<jobflow>-<name>-<n>` for an item or iteration)"),
    "dependsOn": DEPENDS_ON,
    "when": _str("run the flow only if this holds, else it is Skipped (vclite; if-then-else, switch-case): a "
                 "condition over `params.<name>`, `outputs.<flow>` (a Completed flow's termination message; "
                 "`outputs.<flow>.<key>` inside JSON), literals, == != < <= > >= ! && ||, len(), contains() "
                 "and json(), e.g. `outputs.check == 'big'`"),
    "withItems": _list("fan-out (vclite): one vcjob per item, `{{item}}` (or `{{item.<key>}}`) substituted in the "
                       "template and patch; dependents wait for all of them (or one, with strategy any)",
                       _any("an item: a string, number, boolean or object")),
    "withParam": _str("fan-out over a JSON list that another flow's output holds (vclite): `{{outputs.<flow>}}`, "
                      "or a list inside its JSON: `{{outputs.<flow>.<field>}}` (fields, list indexes); "
                      "in the exit handler also `{{workflow.failures}}`: one item per failed flow, "
                      "`{{item.name}}`, `{{item.outcome}}`, `{{item.message}}`, `{{item.handled}}`"),
    "repeat": _obj("run the flow again until a condition holds (vclite; loop executing); iteration n is "
                   "`<jobflow>-<flow>-<n>`, `{{iteration}}` in the patch", {
                       "until": _str("a condition, usually over the flow's own output: `outputs.train >= 0.9`"),
                       "limit": _int("at most this many iterations (1..100); reaching it without `until` holding "
                                     "fails the flow"),
                   }, ["until", "limit"]),
    "retry": RETRY,
    "patch": _obj("changes to the template for this flow (Volcano's API, implemented by vclite)", {
        "jobSpec": _obj("a vcjob spec merged onto the template's: job fields replace, tasks merge by name, "
                        "volumes by mountPath, plugin arguments append; `{{params.<name>}}`, `{{item}}`, "
                        "`{{iteration}}` and `{{outputs.<flow>}}` are filled in"),
    }),
}, ["name"])

SPEC = _obj("The flows and how the JobFlow runs them.", {
    "flows": _list("the steps; each runs the JobTemplate of its name once its dependency holds", FLOW),
    "jobRetainPolicy": _str("`retain` (default) keeps the vcjobs once the JobFlow has succeeded; `delete` "
                            "deletes them"),
    "arguments": _obj("parameters of the run (vclite), read as `{{params.<name>}}` in templates and patches and "
                      "as `params.<name>` in conditions", {
                          "parameters": _list("name and value of each parameter", _obj(
                              "a parameter", {"name": _str("[A-Za-z0-9_][A-Za-z0-9_-]*, unique"),
                                              "value": _str("its value (a string)")}, ["name"])),
                      }),
    "onExit": _str("the exit handler (vclite): a flow, without dependsOn, that runs once every other flow has "
                   "finished, whatever the outcome (after an unhandled failure, once no job runs); it alone reads "
                   "their outcomes: `outcomes.<flow>` in its when, `{{outcomes.<flow>}}` in its patch or template, "
                   "and the JobFlow's, as Argo's: `workflow.status` (Succeeded or Failed), `workflow.failures`"),
})

_JOB_LIST = "vcjob names (`<jobflow>-<flow>`), in the order they got there"
_TIME = "an RFC 3339 time"
_CONDITION = _obj("one vcjob's (or, for a flow without one yet, the flow's) condition", {
    "phase": _str("the vcjob's phase (Pending, Running, Completed, Failed…), or Skipped"),
    "createTime": _str("when the vcjob was created (" + _TIME + ")"),
    "runningDuration": _str("how long it has run (a Go duration)"),
    "taskStatusCount": _any("per task: how many pods are in each phase (`{phase: {Running: 2}}`)"),
    "reason": _str("(vclite) why it waits, was skipped, or retries: WaitingForDependencies, DependencyNeverMet, "
                   "WhenFalse, RetryBackoff, RetriesExhausted…"),
    "message": _str("(vclite) the reason in words; for a Failed or Terminated vcjob, why: its first failed pod's "
                    "container, exit code, reason and termination message"),
    "retries": _int("(vclite) attempts made again by `retry`"),
    "firstCreateTime": _str("(vclite) when the first attempt was created (" + _TIME + ")"),
    "retryAt": _str("(vclite) while a failed attempt waits for its retry: when the next attempt is due ("
                    + _TIME + ", rounded up to the second)"),
    "refusedSince": _str("(vclite) while the vcjob's create is refused for now (CreateRefused: a ResourceQuota): "
                         "when it was first refused (" + _TIME + ", microseconds; the window after which the flow "
                         "fails restarts with the controller)"),
    "output": _str("(vclite) the vcjob's output: its designated pod's termination message"),
    "podFailureRatio": _str("(vclite) failed pods / pods, when some failed"),
})
_JOB_STATUS = _obj("one vcjob's history", {
    "name": _str("the vcjob's name"),
    "state": _str("its phase (the last one seen)"),
    "startTimestamp": _str("its creation (" + _TIME + ")"),
    "endTimestamp": _str("when it finished (" + _TIME + ")"),
    "restartCount": _int("its status.retryCount"),
    "runningHistories": _list("the phases it went through (the last 10): state, startTimestamp, endTimestamp",
                              _obj("one phase", {"state": _str("the phase it was in"),
                                                 "startTimestamp": _str("when it began (" + _TIME + ")"),
                                                 "endTimestamp": _str("when it ended (" + _TIME + ")")})),
})
STATUS = _obj("What the JobFlow controller reports (Volcano's fields, and vclite's: Skipped flows, conditions "
              "for flows without a vcjob, next flows).", {
                  "pendingJobs": _list(_JOB_LIST + ": Pending, or waiting to be created", _STRINGS),
                  "runningJobs": _list(_JOB_LIST + ": Running or Completing", _STRINGS),
                  "completedJobs": _list(_JOB_LIST + ": Completed", _STRINGS),
                  "failedJobs": _list(_JOB_LIST + ": Failed", _STRINGS),
                  "terminatedJobs": _list(_JOB_LIST + ": Terminating or Terminated", _STRINGS),
                  "unKnowJobs": _list(_JOB_LIST + ": Aborting, Aborted, Restarting (Volcano's spelling)", _STRINGS),
                  "skippedJobs": _list("flows that will never run (vclite): a false `when`, or a dependency "
                                       "that can never hold", _STRINGS),
                  "nextFlows": _list("flows that start next: waiting only on flows that have started; while "
                                     "suspended also those the resume starts (vclite)",
                                     _STRINGS),
                  "conditions": {"type": "object", "description": "per vcjob name, from the start: phase, "
                                 "createTime, runningDuration, taskStatusCount; and (vclite) reason and message "
                                 "(what a flow waits on, why it was skipped, retries), retries, firstCreateTime, "
                                 "retryAt, refusedSince, output, podFailureRatio",
                                 "additionalProperties": _CONDITION},
                  "jobStatusList": _list("per vcjob: state, times, restartCount and runningHistories (the last 10 "
                                         "phases)", _JOB_STATUS),
                  "state": _obj("the JobFlow's phase", {
                      "phase": _str("Pending, Running, Succeed, Failed or Terminating")}),
              })

DESCRIPTION = ("A DAG of Volcano jobs (flow.volcano.sh): each flow makes a vcjob from the JobTemplate of its name "
               "once its dependency holds. vclite adds expressions over outcomes, conditions, loops, parameters, "
               "retries and an exit handler (docs/jobflow-primitives.md).")


def jobflow_properties() -> Obj:
    """`spec` and `status` of JobFlow (fresh dictionaries)."""
    return {"spec": jsoncopy.deep_copy(SPEC), "status": jsoncopy.deep_copy(STATUS)}
