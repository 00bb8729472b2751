"""Admission for Pods, and the pod-spec checks vcjob task templates share: what vclite needs to run a
pod — named containers, parseable resource quantities, a restart policy it knows, and (for local
processes) a command.

Light by design: this is not Kubernetes' full ValidatePod; images may be absent, volumes and
probes are not checked. Pure functions; nothing here reads the store.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, shapes
from vclite.api import core
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

_RESTART_POLICIES = tuple(p.value for p in core.RestartPolicy)


def no_command_message(name: str, has_args: bool = False) -> str:
    what = "has args but no command" if has_args else "has no command"
    return (f'container "{name}" {what}: vclite runs pods as local processes and cannot run an '
            "image's default entrypoint")


def validate_pod_spec(spec: Any, path: str, *, require_command: bool) -> list[FieldError]:
    """Check a PodSpec at `path` (e.g. `spec.tasks[0].template.spec`)."""
    if not isinstance(spec, dict):
        return [FieldError(path, common.REQUIRED if spec is None else common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        errs.append(FieldError(f"{path}.containers", common.REQUIRED))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        items = spec.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            errs.append(FieldError(f"{path}.{key}", common.type_error(items, "array")))
            continue
        for j, c in enumerate(items):
            errs += _validate_container(c, f"{path}.{key}[{j}]", seen, require_command)
    policy = spec.get("restartPolicy")
    if policy not in (None, "") and policy not in _RESTART_POLICIES:
        errs.append(FieldError(f"{path}.restartPolicy", common.unsupported(policy, _RESTART_POLICIES)))
    common.parse_resource_list(spec.get("overhead"), f"{path}.overhead", errs)
    return errs + shapes.check(spec, shapes.POD_SPEC, path)


def _validate_container(c: Any, path: str, seen: set[str], require_command: bool) -> list[FieldError]:
    if not isinstance(c, dict):
        return [FieldError(path, common.type_error(c, "object"))]
    errs: list[FieldError] = []
    name = c.get("name")
    if name in (None, ""):
        errs.append(FieldError(f"{path}.name", common.REQUIRED))
    elif not isinstance(name, str):
        errs.append(FieldError(f"{path}.name", common.type_error(name, "string")))
    else:
        errs += [FieldError(f"{path}.name", common.invalid(name, m)) for m in common.dns1123_label(name)]
        if name in seen:
            errs.append(FieldError(f"{path}.name", common.duplicate(name)))
        seen.add(name)
    for key in ("command", "args"):
        value = c.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(a, str) for a in value)):
            errs.append(FieldError(f"{path}.{key}", common.type_error(value, "array of strings")))
    if require_command and not c.get("command"):   # args alone would go to the image's entrypoint
        errs.append(FieldError(f"{path}.command", no_command_message(name if isinstance(name, str) else "",
                                                                     bool(c.get("args")))))
    errs += validate_resources(c.get("resources"), f"{path}.resources")
    return errs + shapes.check(c, shapes.CONTAINER, path)


def validate_resources(res: Any, path: str) -> list[FieldError]:
    """ResourceRequirements: quantities parse and are ≥ 0; a request is at most its limit."""
    if res is None:
        return []
    if not isinstance(res, dict):
        return [FieldError(path, common.type_error(res, "object"))]
    errs: list[FieldError] = []
    limits = common.parse_resource_list(res.get("limits"), f"{path}.limits", errs)
    requests = common.parse_resource_list(res.get("requests"), f"{path}.requests", errs)
    for name, req in requests.items():
        if name in limits and req > limits[name]:
            errs.append(FieldError(f"{path}.requests.{name}", common.invalid(
                res["requests"][name], f"must be less than or equal to {name} limit of {res['limits'][name]}")))
    return errs


def mutate(op: base.Operation, obj: Obj) -> None:
    """Pods get no defaults from admission."""


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    # Pods made by the vcjob controller come from templates already checked (with the command rule);
    # plain pods are kept light: the command rule is the executor's to report.
    return validate_pod_spec(new.get("spec"), "spec", require_command=False)
