"""Admission for PodGroups (scheduling.volcano.sh), light: the CRD default queue, and the fields the
scheduler reads must have the right shape (minMember ≥ 0, minTaskMember integers, minResources
quantities that parse, networkTopology — the PodGroup's and each subGroupPolicy's — not both tier
fields). On CREATE, a PodGroup of the `default` queue takes the queue its namespace's annotation
`scheduling.volcano.sh/queue-name` names (Volcano's mutating webhook; `resolve`, as it reads the namespace).

Volcano's PodGroup webhook (validate_podgroup.go) also refuses, on CREATE, a PodGroup whose queue is
missing or not Open. vclite does so for a PodGroup a user writes (one without ownerReferences); one a
controller makes for its vcjob or pod is left to the scheduler, which holds it and says why, rather than
refused and retried for ever (a vcjob's queue was checked when the job was admitted). A cluster state
loaded for a scheduler dry-run (`existing_state`) was admitted there: its queues are not looked at.
Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import kinds, meta, scheduling
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError


def mutate(op: base.Operation, obj: Obj) -> None:
    spec = obj.get("spec")
    if op is base.Operation.CREATE and isinstance(spec, dict) and spec.get("queue") in (None, ""):
        spec["queue"] = scheduling.DEFAULT_QUEUE


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    spec = {} if spec is None else spec
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    common.check_int(spec, "minMember", "spec.minMember", errs, minimum=0)
    common.check_type(spec, "queue", "spec.queue", errs, str, "string")
    members = common.check_type(spec, "minTaskMember", "spec.minTaskMember", errs, dict, "object") or {}
    for task in members:
        common.check_int(members, task, f"spec.minTaskMember.{task}", errs, minimum=0)
    common.parse_resource_list(spec.get("minResources"), "spec.minResources", errs)
    errs += common.network_topology(spec.get("networkTopology"), "spec.networkTopology")
    errs += _sub_group_policies(spec.get("subGroupPolicy"))
    queue = spec.get("queue")
    if (op is base.Operation.CREATE and isinstance(queue, str) and queue and not meta.owner_references(new)
            and not getattr(view, "existing_state", False)):
        errs += _queue_open(namespace_queue(new, view) or queue, view)
    return errs


def namespace_queue(pg: Obj, view: base.View) -> str | None:
    """mutate_podgroup.go: a PodGroup of the `default` queue goes to the queue its namespace names in
    its annotation `scheduling.volcano.sh/queue-name`, if any."""
    if common.dict_at(pg, "spec").get("queue") != scheduling.DEFAULT_QUEUE:
        return None
    ns = view.get(kinds.NAMESPACE, "", str(meta.namespace(pg) or ""))
    value = meta.annotations(ns).get(scheduling.QUEUE_NAME_ANNOTATION) if ns is not None else None
    return value if isinstance(value, str) and value else None


def resolve(op: base.Operation, pg: Obj, old: Obj | None, view: base.View) -> None:
    """On CREATE, the namespace's queue (namespace_queue) for a PodGroup of the `default` queue."""
    if op is base.Operation.CREATE and not getattr(view, "existing_state", False):
        queue = namespace_queue(pg, view)
        if queue:
            pg["spec"]["queue"] = queue


def _sub_group_policies(policies: Any) -> list[FieldError]:
    """Each subGroupPolicy's networkTopology, named as Volcano names it (`in subGroupPolicy '<name>': …`)."""
    errs: list[FieldError] = []
    for path, policy in common.objects_in(policies, "spec.subGroupPolicy", errs):
        for e in common.network_topology(policy.get("networkTopology"), f"{path}.networkTopology"):
            prefix = f"in subGroupPolicy '{policy.get('name', '')}': " if e.message.startswith("must not") else ""
            errs.append(FieldError(e.path, prefix + e.message))
    return errs


def _queue_open(name: str, view: base.View) -> list[FieldError]:
    """validate_podgroup.go checkQueueState: the queue exists and is Open (no state yet counts as Open)."""
    q = view.get(kinds.QUEUE, "", name)
    if q is None:
        return [FieldError("spec.queue", f'unable to find queue: {kinds.QUEUE.resource} "{name}" not found')]
    state = common.dict_at(q, "status").get("state") or scheduling.QueueState.OPEN
    if state != scheduling.QueueState.OPEN:
        return [FieldError("spec.queue", f"can only submit PodGroup to queue with state `Open`, queue `{name}` "
                                         f"status is `{state}`.")]
    return []
