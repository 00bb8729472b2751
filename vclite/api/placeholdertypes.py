"""A JobTemplate's integer and boolean fields written as flow placeholders, typed once filled in.

A JobTemplate may hold a placeholder where a vcjob has a number: `replicas: "{{item}}"`,
`minAvailable: "{{params.n}}"` (JobTemplate admission leaves such a field to the vcjob a flow makes,
and `vcctl controller --print-crds` makes those fields int-or-string). Placeholders fill in text, so the
vcjob would get the string "3" and be refused (`must be of type integer`): `typed` gives each such
field of the vcjob's spec — by kindschemas.JOB_SPEC, Volcano's JobSpec: the job's and its tasks'
integers, their partitionPolicy and networkTopology — and each task's pod template's (POD_TEMPLATE: the pod's and
its containers' integer and boolean fields, as core/v1 types them: `activeDeadlineSeconds`, `containerPort`,
probes' periods, `runAsUser`, `hostNetwork`, each item of `supplementalGroups`, `windowsOptions.hostProcess`, a
toleration's `tolerationSeconds`…) the integer or boolean its text reads as (`3`, `-1`, `true`); a text
that reads as neither stays a string, which admission then refuses, naming the field. Fields written as they should
be, and int-or-string fields (a probe's `port`, quantities), are left alone. Pure.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.api import flowtemplate, kindschemas
from vclite.api.schemabuild import BOOL, INT, LIST, OBJ, Field

_INTEGER = re.compile(r"[+-]?[0-9]+")
_BOOLEANS = {"true": True, "false": False}
INTS = "[]integer"   # (a list of integers, each item of which may be a placeholder: supplementalGroups)
_WINDOWS = Field("windowsOptions", OBJ, "", (Field("hostProcess", BOOL, ""),))


_PROBE = (*(Field(n, INT, "") for n in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                                         "successThreshold", "failureThreshold", "terminationGracePeriodSeconds")),
          Field("grpc", OBJ, "", (Field("port", INT, ""),)))
_HANDLER = (Field("sleep", OBJ, "", (Field("seconds", INT, ""),)),)
_SECURITY = (*(Field(n, INT, "") for n in ("runAsUser", "runAsGroup")),
             *(Field(n, BOOL, "") for n in ("runAsNonRoot", "privileged", "readOnlyRootFilesystem",
                                            "allowPrivilegeEscalation")), _WINDOWS)
_OPTIONAL = (Field("optional", BOOL, ""),)
_CONTAINER = (
    Field("ports", LIST, "", (Field("containerPort", INT, ""), Field("hostPort", INT, ""))),
    Field("volumeMounts", LIST, "", (Field("readOnly", BOOL, ""),)),
    Field("env", LIST, "", (Field("valueFrom", OBJ, "", (Field("configMapKeyRef", OBJ, "", _OPTIONAL),
                                                         Field("secretKeyRef", OBJ, "", _OPTIONAL))),)),
    Field("envFrom", LIST, "", (Field("configMapRef", OBJ, "", _OPTIONAL), Field("secretRef", OBJ, "", _OPTIONAL))),
    *(Field(n, OBJ, "", _PROBE) for n in ("livenessProbe", "readinessProbe", "startupProbe")),
    Field("lifecycle", OBJ, "", tuple(Field(n, OBJ, "", _HANDLER) for n in ("postStart", "preStop"))),
    Field("securityContext", OBJ, "", _SECURITY),
    *(Field(n, BOOL, "") for n in ("stdin", "stdinOnce", "tty")),
)
_POD_SPEC = (
    *(Field(n, INT, "") for n in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "priority")),
    *(Field(n, BOOL, "") for n in ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
                                   "automountServiceAccountToken", "enableServiceLinks", "setHostnameAsFQDN",
                                   "hostUsers")),
    Field("topologySpreadConstraints", LIST, "", (Field("maxSkew", INT, ""), Field("minDomains", INT, ""))),
    Field("securityContext", OBJ, "", (*(Field(n, INT, "") for n in ("runAsUser", "runAsGroup", "fsGroup")),
                                       Field("runAsNonRoot", BOOL, ""), Field("supplementalGroups", INTS, ""),
                                       _WINDOWS)),
    Field("tolerations", LIST, "", (Field("tolerationSeconds", INT, ""),)),
    Field("volumes", LIST, "", (Field("configMap", OBJ, "", (Field("defaultMode", INT, ""), Field("optional", BOOL, ""),
                                                             Field("items", LIST, "", (Field("mode", INT, ""),)))),)),
    Field("affinity", OBJ, "", (
        Field("nodeAffinity", OBJ, "", (Field("preferredDuringSchedulingIgnoredDuringExecution", LIST, "",
                                              (Field("weight", INT, ""),)),)),
        *(Field(n, OBJ, "", (Field("preferredDuringSchedulingIgnoredDuringExecution", LIST, "",
                                   (Field("weight", INT, ""),)),)) for n in ("podAffinity", "podAntiAffinity")))),
    *(Field(n, LIST, "", _CONTAINER) for n in ("containers", "initContainers")),
)
POD_TEMPLATE = (Field("spec", OBJ, "", _POD_SPEC),)   # (a task's `template`: core/v1's integers and booleans)


def typed(before: Any, after: Any) -> Any:
    """`after`, a JobSpec with its placeholders filled in (flowtemplate.substitute: a fresh copy, changed here),
    with each integer or boolean field that held a placeholder in `before` (the same spec before) typed."""
    _walk(before, after, kindschemas.JOB_SPEC)
    tasks_before, tasks_after = (spec.get("tasks") if isinstance(spec, dict) else None for spec in (before, after))
    if isinstance(tasks_before, list) and isinstance(tasks_after, list):
        for task_before, task_after in zip(tasks_before, tasks_after):
            if isinstance(task_before, dict) and isinstance(task_after, dict):
                _walk(task_before.get("template"), task_after.get("template"), POD_TEMPLATE)
    return after


def _walk(before: Any, after: Any, fields: tuple[Field, ...]) -> Any:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return after
    for f in fields:
        old, new = before.get(f.name), after.get(f.name)
        if f.shape in (INT, BOOL):
            if isinstance(old, str) and isinstance(new, str) and flowtemplate.PLACEHOLDER.search(old):
                after[f.name] = _scalar(new, f.shape)
        elif f.shape == OBJ and f.fields:
            _walk(old, new, f.fields)
        elif f.shape == LIST and f.fields and isinstance(old, list) and isinstance(new, list):
            for x, y in zip(old, new):
                _walk(x, y, f.fields)
        elif f.shape == INTS and isinstance(old, list) and isinstance(new, list):
            for i, (x, y) in enumerate(zip(old, new)):
                if isinstance(x, str) and isinstance(y, str) and flowtemplate.PLACEHOLDER.search(x):
                    new[i] = _scalar(y, INT)
    return after


def _scalar(text: str, shape: str) -> Any:
    """The integer or boolean `text` reads as; `text` itself when it reads as none."""
    word = text.strip()
    if shape == INT and _INTEGER.fullmatch(word):
        return int(word)
    if shape == BOOL and word in _BOOLEANS:
        return _BOOLEANS[word]
    return text
