"""Kubernetes' Priority admission plugin for Pods: a new pod's `spec.priority` (and
`preemptionPolicy`) come from its PriorityClass.

On CREATE: a pod naming `priorityClassName` gets that class's `value` (the system classes
`system-cluster-critical` and `system-node-critical` are known without an object); a class that does
not exist refuses the pod (403 `no PriorityClass with name X was found`). A pod naming none gets the
global default class (the lowest value if several claim it), its name written in, or priority 0.
A `priority` or `preemptionPolicy` the pod sets itself must equal the computed one. On UPDATE, values
the update leaves out are kept from the stored pod. Reads PriorityClasses through the View only;
a View with `existing_state` (a cluster's state loaded for a scheduler dry-run) turns it off.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base
from vclite.api import kinds, meta
from vclite.lib import errors

Obj = dict[str, Any]

SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
NO_CLASS_PRIORITY = 0   # Kubernetes' DefaultPriorityWhenNoDefaultClassExists


def resolve(op: base.Operation, pod: Obj, old: Obj | None, view: base.View) -> None:
    """Fill in the pod's priority (see the module docstring); raises errors.Forbidden."""
    spec = pod.get("spec")
    if not isinstance(spec, dict) or getattr(view, "existing_state", False):
        return   # (the shape check reports it; a cluster's existing pods were resolved there)
    if op is base.Operation.UPDATE:
        before = (old or {}).get("spec") or {}
        for field in ("priority", "preemptionPolicy"):
            if spec.get(field) is None and before.get(field) is not None:
                spec[field] = before[field]
        return
    if op is not base.Operation.CREATE:
        return
    name = spec.get("priorityClassName")
    if name:
        value, policy = _of_class(str(name), view, meta.name(pod))
    else:
        default = default_class(view)
        if default is None:
            value, policy = NO_CLASS_PRIORITY, PREEMPT_LOWER_PRIORITY
        else:
            spec["priorityClassName"] = meta.name(default)
            value, policy = int(default.get("value") or 0), default.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
    given = spec.get("priority")
    if given is not None and given != value:
        raise errors.Forbidden(_refusal(pod, f"the integer value of priority ({given}) must not be provided in pod "
                                             f"spec; priority admission controller computed {value} from the given "
                                             "PriorityClass name"))
    given = spec.get("preemptionPolicy")
    if given is not None and given != policy:   # (an empty one is a value too, as for Kubernetes)
        raise errors.Forbidden(_refusal(pod, f"the string value of PreemptionPolicy ({given}) must not be provided "
                                             f"in pod spec; priority admission controller computed {policy} from the "
                                             "given PriorityClass name"))
    spec["priority"], spec["preemptionPolicy"] = value, policy


def _of_class(name: str, view: base.View, pod_name: str) -> tuple[int, str]:
    if name in SYSTEM_CLASSES:
        return SYSTEM_CLASSES[name], PREEMPT_LOWER_PRIORITY
    pc = view.get(kinds.PRIORITYCLASS, "", name)
    if pc is None:
        raise errors.Forbidden(f'pods "{pod_name}" is forbidden: no PriorityClass with name {name} was found')
    return int(pc.get("value") or 0), pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY


def default_class(view: base.View) -> Obj | None:
    """The global default PriorityClass (the lowest value if several say so), or None."""
    defaults = [pc for pc in view.list(kinds.PRIORITYCLASS) if pc.get("globalDefault") is True]
    return min(defaults, key=lambda pc: int(pc.get("value") or 0), default=None)


def known(name: str, defined: set[str]) -> bool:
    """Whether pods naming PriorityClass `name` can be created when `defined` are the classes."""
    return name in SYSTEM_CLASSES or name in defined


def _refusal(pod: Obj, why: str) -> str:
    return f'pods "{meta.name(pod)}" is forbidden: {why}'
