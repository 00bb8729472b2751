"""The one-task Volcano job many end-to-end tests run, as the YAML text a user writes (a file for `vcctl run`)."""
from __future__ import annotations

import yaml


def vcjob(name: str, command: list[str], *, cpu: str | None = None, replicas: int = 1,
          grace: int | None = None, kind: str = "Job") -> str:
    """A vcjob `name` of one task `t` (`replicas` pods, gang of all of them, restartPolicy Never) whose container
    runs `command`; `cpu`: its cpu request; `grace`: terminationGracePeriodSeconds; `kind="JobTemplate"`: the
    same as a JobFlow's template (flow.volcano.sh/v1alpha1)."""
    container: dict = {"name": "main", "image": "busybox", "command": command}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict = {"restartPolicy": "Never", "containers": [container]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    api = "flow.volcano.sh/v1alpha1" if kind == "JobTemplate" else "batch.volcano.sh/v1alpha1"
    return yaml.safe_dump({"apiVersion": api, "kind": kind, "metadata": {"name": name},
                           "spec": {"minAvailable": replicas, "schedulerName": "volcano",
                                    "tasks": [{"name": "t", "replicas": replicas, "template": {"spec": spec}}]}},
                          sort_keys=False)


def template(name: str, command: list[str]) -> str:
    """`vcjob(...)` as a JobTemplate a JobFlow's flow `name` uses."""
    return vcjob(name, command, kind="JobTemplate")
