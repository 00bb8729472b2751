"""Warnings for manifests that are valid but most likely not what their author meant.

Nothing here refuses anything (Volcano and Kubernetes accept these manifests, and vclite runs
them the same way); `vcctl validate` and `vcctl run` print each as a warning:

- a vcjob / JobTemplate task whose pod template has no `restartPolicy`: Kubernetes defaults it to
  `Always`, so the task's containers are restarted whenever they exit — even with code 0 — and the
  vcjob never completes. Right for a server task (a parameter server ended by a policy); a batch
  task wants `Never` or `OnFailure`. (An explicit `Always` is taken as meant.)

Pure functions over plain dicts.
"""
from __future__ import annotations

from typing import Any

RESTART_POLICY_UNSET = ("not set, so Kubernetes' default Always applies: this task's containers restart whenever "
                        "they exit (even with code 0) and the vcjob never completes; set Never or OnFailure for a "
                        "task that should end")
_KINDS = ("Job", "JobTemplate")


def advice_in(obj: Any) -> list[tuple[str, str]]:
    """(field path, warning) for each likely mistake in one API object."""
    if not isinstance(obj, dict) or obj.get("kind") not in _KINDS or not isinstance(obj.get("spec"), dict):
        return []
    tasks = obj["spec"].get("tasks")
    out = []
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        template = task.get("template") if isinstance(task, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if isinstance(pod_spec, dict) and pod_spec.get("restartPolicy") in (None, ""):
            out.append((f"spec.tasks[{i}].template.spec.restartPolicy", RESTART_POLICY_UNSET))
    return out
