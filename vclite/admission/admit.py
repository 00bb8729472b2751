"""The admission entry point the apiserver calls: one table of kind -> (mutate, validate, delete
guard), generic metadata checks for every kind, and the error raised when an object is refused.

`admit` never changes its arguments: it returns a defaulted deep copy of `new` (CREATE, UPDATE,
UPDATE_STATUS) or None (DELETE), or raises errors.Invalid listing every problem found /
errors.Forbidden for a refused delete or a create a ResourceQuota of its namespace refuses
(resourcequota.py; not for a cluster's existing state, a view with `existing_state`). Status writes
are not admitted (as in Kubernetes, where webhooks on a resource do not see its /status subresource),
except that the built-in kinds whose status others read (PodDisruptionBudget, ResourceQuota) have it
checked as their registry strategy checks a status update (`Rules.status`, `status_errors`), and a
Queue's `status.state` as its CRD's schema checks it.
No I/O beyond the View.
"""
from __future__ import annotations

import dataclasses
import types
from typing import Any, Callable

from vclite.admission import base, common, jobflow, jobtemplate, pod, podgroup, priorityclass, queue
from vclite.admission import (command, configmap, cronjob, event, hypernode, lease, namespace, numatopology, pdb,
                              persistentvolume, persistentvolumeclaim, resourcequota, secret, service, serviceaccount,
                              serviceips, statuswrites, storageclass, vcjob)
from vclite.api import kinds, meta
from vclite.lib import errors
from vclite.lib import jsoncopy

Operation = base.Operation
View = base.View
Options = base.Options
Obj = dict[str, Any]

Mutate = Callable[[base.Operation, Obj], None]
Validate = Callable[[base.Operation, Obj, "Obj | None", base.View, base.Options], list[errors.FieldError]]
DeleteGuard = Callable[[Obj, base.View], "str | None"]
# Kubernetes' in-tree mutating admission plugins that read the cluster (e.g. Priority): they may set
# fields after the defaults and before validation, and raise errors.Forbidden
Resolve = Callable[[base.Operation, Obj, "Obj | None", base.View], None]
# A built-in kind's status update validation (kube's registry strategy, not a webhook): the status's problems
StatusCheck = Callable[[Any], list[errors.FieldError]]
# A status write's validation that reads the whole object and the version before it (ValidatePodStatusUpdate, …)
StatusUpdateCheck = Callable[[Obj, "Obj | None"], list[errors.FieldError]]


@dataclasses.dataclass(frozen=True)
class Rules:
    mutate: Mutate | None = None
    validate: Validate | None = None
    delete: DeleteGuard | None = None
    resolve: Resolve | None = None
    status: StatusCheck | None = None
    status_update: StatusUpdateCheck | None = None
    status_default: Callable[[Any, "Obj | None"], None] | None = None   # (status (a copy), old): a write's defaults


# Kinds whose CRD has a status subresource: Kubernetes drops the status a create carries (the
# custom-resource strategy's PrepareForCreate); only the controllers write it afterwards.
STATUS_DROPPED_ON_CREATE = frozenset({kinds.JOB.kind, kinds.JOBTEMPLATE.kind, kinds.JOBFLOW.kind, kinds.CRONJOB.kind,
                                      kinds.HYPERNODE.kind, kinds.RESOURCEQUOTA.kind})

NO_RULES = Rules()
RULES: types.MappingProxyType[str, Rules] = types.MappingProxyType({
    kinds.JOB.kind: Rules(vcjob.mutate, vcjob.validate),
    kinds.JOBTEMPLATE.kind: Rules(jobtemplate.mutate, jobtemplate.validate),
    kinds.CRONJOB.kind: Rules(cronjob.mutate, cronjob.validate),
    kinds.JOBFLOW.kind: Rules(jobflow.mutate, jobflow.validate),
    kinds.QUEUE.kind: Rules(queue.mutate, queue.validate, queue.check_delete, status=queue.validate_status),
    kinds.PODGROUP.kind: Rules(podgroup.mutate, podgroup.validate, resolve=podgroup.resolve),
    kinds.HYPERNODE.kind: Rules(validate=hypernode.validate),
    kinds.NUMATOPOLOGY.kind: Rules(validate=numatopology.validate),
    kinds.POD.kind: Rules(pod.mutate, pod.validate, resolve=pod.resolve, status_update=statuswrites.pod_update,
                          status_default=statuswrites.pod_status_defaults),
    kinds.PRIORITYCLASS.kind: Rules(priorityclass.mutate, priorityclass.validate),
    kinds.NAMESPACE.kind: Rules(namespace.mutate, namespace.validate, namespace.check_delete),
    kinds.COMMAND.kind: Rules(validate=command.validate),
    kinds.SECRET.kind: Rules(secret.mutate, secret.validate),
    kinds.CONFIGMAP.kind: Rules(validate=configmap.validate),
    kinds.EVENT.kind: Rules(validate=event.validate),
    kinds.LEASE.kind: Rules(validate=lease.validate),
    kinds.PODDISRUPTIONBUDGET.kind: Rules(pdb.mutate, pdb.validate, status=pdb.validate_status),
    kinds.RESOURCEQUOTA.kind: Rules(resourcequota.mutate, resourcequota.validate,
                                    status=resourcequota.validate_status),
    kinds.SERVICE.kind: Rules(service.mutate, service.validate, resolve=serviceips.resolve,
                              status_update=statuswrites.service_update, status_default=statuswrites.default_ingress),
    kinds.SERVICEACCOUNT.kind: Rules(validate=serviceaccount.validate),
    kinds.NODE.kind: Rules(validate=statuswrites.node_validate, status=statuswrites.node_status),
    kinds.PERSISTENTVOLUMECLAIM.kind: Rules(persistentvolumeclaim.mutate, persistentvolumeclaim.validate,
                                            resolve=persistentvolumeclaim.resolve),
    kinds.PERSISTENTVOLUME.kind: Rules(persistentvolume.mutate, persistentvolume.validate,
                                       resolve=persistentvolume.resolve),
    kinds.STORAGECLASS.kind: Rules(storageclass.mutate, storageclass.validate),
})


def admit(op: Operation, kind: kinds.Kind, new: Obj | None, old: Obj | None, view: View, *,
          require_command: bool | None = None) -> Obj | None:
    """Default and validate `new` for `op`. `require_command=False` (server mode in front of a real
    container runtime) lets vcjob/JobTemplate containers rely on the image's entrypoint; when not
    given, the view's optional `require_command` attribute decides (default True)."""
    if require_command is None:
        require_command = bool(getattr(view, "require_command", True))
    rules = RULES.get(kind.kind, NO_RULES)
    if op is Operation.DELETE:
        target = old if old is not None else new
        if rules.delete is not None and isinstance(target, dict):
            refusal = rules.delete(target, view)
            if refusal:
                raise errors.Forbidden(refusal)
        return None
    if not isinstance(new, dict):
        raise errors.Invalid(kind.kind, "", [errors.FieldError("", common.type_error(new, "object"))])
    if op is Operation.UPDATE_STATUS:
        if rules.status_default is not None and isinstance(new.get("status"), dict):
            new = {**new, "status": jsoncopy.deep_copy(new["status"])}
            rules.status_default(new["status"], old)
        errs = status_errors(kind, new)
        if rules.status_update is not None and not errs:
            errs = rules.status_update(new, old)
        if errs:
            raise errors.Invalid(kind.kind, str(meta.name(new)), errs)
        return new  # status writes are not admitted (as Kubernetes webhooks do not see /status)
    if op is Operation.CREATE:
        refusal = namespace.lifecycle_refusal(kind, str(meta.namespace(new) or ""), view)
        if refusal:
            raise errors.Forbidden(refusal)
    obj = jsoncopy.deep_copy(new)
    errs = common.validate_metadata(kind, obj)
    if not isinstance(obj.get("metadata"), dict):
        raise errors.Invalid(kind.kind, "", errs)
    errs += _status(op, kind, obj)
    if rules.mutate is not None:
        rules.mutate(op, obj)
    if rules.validate is not None:
        errs += rules.validate(op, obj, old, view, Options(require_command=require_command))
    if errs:
        raise errors.Invalid(kind.kind, str(meta.name(obj)), errs)
    if rules.resolve is not None:   # (a field of the wrong type is refused above, as decoding refuses it)
        rules.resolve(op, obj, old, view)
    if op is Operation.CREATE and not getattr(view, "existing_state", False):
        resourcequota.check_create(kind, obj, view)   # (kube's ResourceQuota plugin: the last one)
    return obj


def status_errors(kind: kinds.Kind, obj: Obj) -> list[errors.FieldError]:
    """The problems of `obj`'s status that its kind's status update validation finds (none for most kinds)."""
    check = RULES.get(kind.kind, NO_RULES).status
    status = obj.get("status")
    if check is None or status is None:
        return []
    if not isinstance(status, dict):
        return [errors.FieldError("status", common.type_error(status, "object"))]
    return check(status)


def _status(op: Operation, kind: kinds.Kind, obj: Obj) -> list[errors.FieldError]:
    """A `status` that is not an object is refused (as decoding refuses it); a create's status is
    dropped for the kinds whose status only their controller writes."""
    status = obj.get("status")
    if status is not None and not isinstance(status, dict):
        return [errors.FieldError("status", common.type_error(status, "object"))]
    if op is Operation.CREATE and kind.kind in STATUS_DROPPED_ON_CREATE:
        obj.pop("status", None)
    return []
