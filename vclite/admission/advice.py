"""Warnings for manifests that are valid but most likely not what their author meant.

Nothing here refuses anything (Volcano and Kubernetes accept these manifests, and vclite runs
them the same way); `vcctl validate` and `vcctl run` print each as a warning:

- a vcjob / JobTemplate task whose pod template has no `restartPolicy`: Kubernetes defaults it to
  `Always`, so the task's containers are restarted whenever they exit — even with code 0 — and the
  vcjob never completes. Right for a server task (a parameter server ended by a policy); a batch
  task wants `Never` or `OnFailure`. (An explicit `Always` is taken as meant.)
- a container with a terminationMessagePath other than Kubernetes' default: the local executor
  gives every container its own message file, `$TERMINATION_MESSAGE_PATH`, so a script that writes
  to the written path itself produces no output (a JobFlow reads it) when run locally.

Pure functions over plain dicts.
"""
from __future__ import annotations

from typing import Any

RESTART_POLICY_UNSET = ("not set, so Kubernetes' default Always applies: this task's containers restart whenever "
                        "they exit (even with code 0) and the vcjob never completes; set Never or OnFailure for a "
                        "task that should end")
_KINDS = ("Job", "JobTemplate")
DEFAULT_TERMINATION_PATH = "/dev/termination-log"


def custom_termination_path(path: str) -> str:
    return (f'"{path}" is used on a cluster; run locally, each container writes its termination message (a '
            f'JobFlow output) to the file $TERMINATION_MESSAGE_PATH names, not to "{path}": write to '
            f'"${{TERMINATION_MESSAGE_PATH:-{path}}}" to work in both')


def advice_in(obj: Any) -> list[tuple[str, str]]:
    """(field path, warning) for each likely mistake in one API object."""
    if not isinstance(obj, dict) or obj.get("kind") not in _KINDS or not isinstance(obj.get("spec"), dict):
        return []
    tasks = obj["spec"].get("tasks")
    out = []
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        template = task.get("template") if isinstance(task, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if not isinstance(pod_spec, dict):
            continue
        if pod_spec.get("restartPolicy") in (None, ""):
            out.append((f"spec.tasks[{i}].template.spec.restartPolicy", RESTART_POLICY_UNSET))
        containers = pod_spec.get("containers")
        for j, c in enumerate(containers if isinstance(containers, list) else []):
            path = c.get("terminationMessagePath") if isinstance(c, dict) else None
            if isinstance(path, str) and path not in ("", DEFAULT_TERMINATION_PATH):
                out.append((f"spec.tasks[{i}].template.spec.containers[{j}].terminationMessagePath",
                            custom_termination_path(path)))
    return out
