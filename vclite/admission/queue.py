"""Admission for Queues (scheduling.volcano.sh): Volcano's defaults (weight 1, reclaimable true, legacy
hierarchy annotations rooted) and checks (weight, state, guarantee ≤ deserved ≤ capability, the legacy
hierarchy annotations, parent;
the hierarchy's depth, root protection, and capability/deserved/guarantee against parent and
children: queuetree.py), and the delete guard (`default`/`root`, child queues, PodGroups still in
the queue).

Sources: pkg/webhooks/admission/queues/{mutate,validate} and the Queue CRD (weight 1..65535,
priority ≥ 0). Messages are Volcano's. The PodGroup delete guard is vclite's stand-in for Volcano's
"has allocated Pods" check. Pure functions; reads go through View.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, queuetree
from vclite.api import kinds, meta, scheduling
from vclite.lib import errors, gostrconv

Obj = dict[str, Any]
FieldError = errors.FieldError

HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
_STATES = (scheduling.QueueState.OPEN.value, scheduling.QueueState.CLOSED.value)
_ALL_STATES = tuple(s.value for s in scheduling.QueueState)


def mutate(op: base.Operation, obj: Obj) -> None:
    if op is not base.Operation.CREATE:
        return
    if obj.get("spec") is None:
        obj["spec"] = {}
    spec = obj["spec"]
    if not isinstance(spec, dict):
        return
    if spec.get("reclaimable") is None:
        spec["reclaimable"] = True
    if spec.get("weight") in (None, 0):
        spec["weight"] = 1
    ann = common.dict_at(obj.get("metadata"), "annotations")
    hierarchy, weights = ann.get(HIERARCHY), ann.get(HIERARCHY_WEIGHTS)
    if isinstance(hierarchy, str) and isinstance(weights, str) and hierarchy and weights \
            and not hierarchy.startswith(scheduling.ROOT_QUEUE):
        ann[HIERARCHY] = f"{scheduling.ROOT_QUEUE}/{hierarchy}"
        ann[HIERARCHY_WEIGHTS] = f"1/{weights}"


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    spec = {} if spec is None else spec
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    weight = spec.get("weight")
    if weight is not None and not common.is_int(weight):
        errs.append(FieldError("spec.weight", common.type_error(weight, "integer")))
    elif weight is not None and weight <= 0:
        # (the CRD's minimum: a cluster's schema validation refuses it before the webhook's "positive integer")
        errs.append(FieldError("spec.weight", common.invalid(weight, "should be greater than or equal to 1")))
    elif weight is not None and weight > 65535:
        errs.append(FieldError("spec.weight", common.invalid(weight, "should be less than or equal to 65535")))
    common.check_int(spec, "priority", "spec.priority", errs, minimum=0)
    common.check_type(spec, "reclaimable", "spec.reclaimable", errs, bool, "boolean")
    errs += validate_resources(spec)
    errs += _validate_affinity(spec)
    if op is base.Operation.CREATE:
        # Status is only ever written by the queue controller afterwards (Closing, Unknown…), past
        # this check: a cluster's state loaded for a scheduler dry run may carry any of them (its
        # status is checked as a status write is, against the CRD's enum).
        existing = getattr(view, "existing_state", False)
        for path, holder in (("status.state", new.get("status")), ("spec.state", spec)):
            state = holder.get("state") if isinstance(holder, dict) else None
            if existing and path == "status.state":
                errs += validate_status(holder) if isinstance(holder, dict) else []
                continue
            if state not in (None, "") and state not in _STATES:
                errs.append(FieldError(path, common.invalid(state, f"queue state must be in [{' '.join(_STATES)}]")))
    errs += validate_hierarchy_annotations(new, view)
    old_parent = common.dict_at(old, "spec").get("parent") if old is not None else None
    name = meta.name(new)
    if op is base.Operation.CREATE or spec.get("parent") != old_parent:
        parent_errs = _validate_parent(name, spec.get("parent"), view)
        errs += parent_errs
        if not parent_errs and spec.get("parent") not in (None, "", scheduling.ROOT_QUEUE):
            why = queuetree.check_cycle(name, spec.get("parent"), view) or \
                queuetree.check_depth(name, spec.get("parent"), view, base.webhook_of(view).max_queue_depth) or \
                queuetree.check_parent_without_children_has_no_pods(name, spec.get("parent"), view)
            if why:
                errs.append(FieldError("spec.parent", why))
    if errs:
        return errs
    if name == scheduling.ROOT_QUEUE:
        if op is base.Operation.UPDATE and old is not None:
            why = queuetree.check_root_update(new, old)
            if why:
                errs.append(FieldError("spec", why))
    elif queuetree.resources_changed(new, old if op is base.Operation.UPDATE else None):
        why = queuetree.check_resources(new, view)
        if why:
            errs.append(FieldError("spec", why))
    return errs


def validate_status(status: Obj) -> list[FieldError]:
    """A status write (`/status`, which Volcano's webhook does not see): the Queue CRD's schema takes `state`
    only from its enum, so kube-apiserver refuses another value in its words (`status.state: Unsupported
    value: "Bad": supported values: "Open", "Closed", "Closing", "Unknown"`)."""
    state = status.get("state")
    if state is None:
        return []
    if not isinstance(state, str):
        return [FieldError("status.state", common.type_error(state, "string"))]
    if state not in _ALL_STATES:
        return [FieldError("status.state", common.unsupported(state, _ALL_STATES))]
    return []


GROUP_RULES = ("nodeGroupAffinity", "nodeGroupAntiAffinity")
GROUP_LISTS = ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution")


def _validate_affinity(spec: Obj) -> list[FieldError]:
    """spec.affinity as the Queue CRD's schema types it: objects holding lists of node-group names
    (the nodegroup plugin reads them; a wrong type would silently mean no rule)."""
    errs: list[FieldError] = []
    affinity = common.check_type(spec, "affinity", "spec.affinity", errs, dict, "object")
    for rule in GROUP_RULES if affinity else ():
        groups = common.check_type(affinity, rule, f"spec.affinity.{rule}", errs, dict, "object")
        for key in GROUP_LISTS if groups else ():
            path = f"spec.affinity.{rule}.{key}"
            for i, name in enumerate(common.check_type(groups, key, path, errs, list, "array") or ()):
                if not isinstance(name, str):
                    errs.append(FieldError(f"{path}[{i}]", common.type_error(name, "string")))
    return errs


def validate_resources(spec: Obj) -> list[FieldError]:
    """validate_queue.go validateResourceQuantityOfQueue: quantities parse and are ≥ 0; every guaranteed
    resource is deserved at least as much; deserved ≤ capability where a capability is set."""
    errs: list[FieldError] = []
    capability = common.parse_resource_list(spec.get("capability"), "spec.capability", errs)
    deserved = common.parse_resource_list(spec.get("deserved"), "spec.deserved", errs)
    guarantee_obj = common.dict_at(spec, "guarantee")
    guarantee = common.parse_resource_list(guarantee_obj.get("resource"), "spec.guarantee.resource", errs)
    raw_g = common.dict_at(guarantee_obj, "resource")
    raw_d = common.dict_at(spec, "deserved")
    raw_c = common.dict_at(spec, "capability")
    for r, g in guarantee.items():
        if r not in raw_d:
            errs.append(FieldError(f"spec.deserved.{r}", common.invalid(
                "<nil>", f"deserved[{r}] must be >= guarantee[{r}]={raw_g[r]}")))
        elif r in deserved and deserved[r] < g:
            errs.append(FieldError(f"spec.deserved.{r}", common.invalid(
                str(raw_d[r]), f"deserved[{r}]={raw_d[r]} must be >= guarantee[{r}]={raw_g[r]}")))
    for r, d in deserved.items():
        if r in capability and d > capability[r]:
            errs.append(FieldError(f"spec.deserved.{r}", common.invalid(
                str(raw_d[r]), f"deserved[{r}]={raw_d[r]} must be <= capability[{r}]={raw_c[r]}")))
    return errs


def validate_hierarchy_annotations(queue: Obj, view: base.View) -> list[FieldError]:
    """validate_queue.go validateHierarchicalAttributes, on CREATE and UPDATE: with `volcano.sh/hierarchy`
    or `volcano.sh/hierarchy-weights` set, both have as many `/` parts, each weight is a number above 0
    (Go's ParseFloat; NaN refused too, where Volcano accepts it), and no other queue's hierarchy lies under this
    one's (`root/a` beside `root/a/b`).
    The first problem only, as Volcano."""
    ann = meta.annotations(queue)
    hierarchy, weights = ann.get(HIERARCHY) or "", ann.get(HIERARCHY_WEIGHTS) or ""
    if not isinstance(hierarchy, str) or not isinstance(weights, str) or not (hierarchy or weights):
        return []
    path, weights_path = f"metadata.annotations[{HIERARCHY}]", f"metadata.annotations[{HIERARCHY_WEIGHTS}]"
    if len(hierarchy.split("/")) != len(weights.split("/")):
        return [FieldError(path, common.invalid(hierarchy, f"{HIERARCHY} must have the same length with "
                                                           f"{HIERARCHY_WEIGHTS}"))]
    for weight in weights.split("/"):
        try:
            value = gostrconv.parse_float(weight)
        except gostrconv.NumError as e:
            return [FieldError(weights_path, common.invalid(weights, f"{weight} in the {weights} is invalid number: "
                                                                     f"{e}"))]
        if not value > 0:   # (NaN too, which Volcano lets through: drf's hierarchy then cannot order the queue)
            return [FieldError(weights_path, common.invalid(weights, f"{weight} in the {weights} must be larger "
                                                                     "than 0"))]
    if getattr(view, "existing_state", False):
        return []   # (a cluster's queues, as a dry-run state lists them: each was admitted there already)
    name = meta.name(queue)
    for other in view.list(kinds.QUEUE):
        theirs = meta.annotations(other).get(HIERARCHY)
        if isinstance(theirs, str) and theirs and meta.name(other) != name and theirs.startswith(hierarchy + "/"):
            return [FieldError(path, common.invalid(hierarchy, f"{hierarchy} is not allowed to be in the sub path "
                                                               f"of {theirs} of queue {meta.name(other)}"))]
    return []


def _validate_parent(name: str, parent: Any, view: base.View) -> list[FieldError]:
    if parent in (None, "", scheduling.ROOT_QUEUE):
        return []
    if not isinstance(parent, str):
        return [FieldError("spec.parent", common.type_error(parent, "string"))]
    if parent == name:
        return [FieldError("spec.parent", f"queue {name} cannot use itself as parent")]
    if view.get(kinds.QUEUE, "", parent) is None:
        return [FieldError("spec.parent", f'failed to get parent queue of queue {name}: '
                                          f'{kinds.QUEUE.resource} "{parent}" not found')]
    return []


def check_delete(obj: Obj, view: base.View) -> str | None:
    """Why the queue may not be deleted, or None. `default` and `root` never; with the webhook's
    `--enable-queue-allocated-pods-check`, nor one whose `status.allocated` counts pods; nor a queue that
    still has child queues or PodGroups."""
    name = meta.name(obj)
    if name in (scheduling.DEFAULT_QUEUE, scheduling.ROOT_QUEUE):
        return f"`{name}` queue can not be deleted"
    if base.webhook_of(view).queue_allocated_pods_check:
        pods = queuetree.allocated_pods(obj)
        if pods:
            return f"queue {name} cannot be deleted because it has allocated Pods: {pods}"
    children = [meta.name(q) for q in view.list(kinds.QUEUE) if common.dict_at(q, "spec").get("parent") == name]
    if children:
        return f"queue {name} can not be deleted because it has {len(children)} child queues: {', '.join(children)}"
    groups = [meta.key(pg) for pg in view.list(kinds.PODGROUP) if common.dict_at(pg, "spec").get("queue") == name]
    if groups:
        return f"queue {name} can not be deleted because it has {len(groups)} podgroups: {', '.join(groups)}"
    return None
