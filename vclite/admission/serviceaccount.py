"""ServiceAccounts (v1): their validation, and kube-apiserver's ServiceAccount admission of pods.

- A ServiceAccount's `secrets` are object references (`name` strings), its `imagePullSecrets` local
  ones, `automountServiceAccountToken` a boolean (ValidateServiceAccount; the name a DNS subdomain,
  checked with every kind's metadata).
- A pod created without `spec.serviceAccountName` gets `default` (from the deprecated
  `spec.serviceAccount` when only that is given); both fields then name it, as kube-apiserver stores
  them. A created pod naming a ServiceAccount its namespace does not have is refused with 403, as the
  ServiceAccount admission plugin refuses it (`error looking up service account default/ci:
  serviceaccount "ci" not found`) — but not a cluster's existing pods (a scheduler dry-run's state),
  nor a pod naming `default` in a namespace made on demand for it (embedded mode), which comes with it.
  vclite mounts no token into the pod (its containers are local processes; see docs/differences.md).
Every namespace has its `default` ServiceAccount from its creation on (apiserver/inprocess.py).
Pure, but for the View's reads.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common
from vclite.api import kinds, meta
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
DEFAULT = "default"


def new_default(namespace: str) -> Obj:
    """The `default` ServiceAccount of `namespace`, as the serviceaccount controller creates it."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": namespace}}


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, fields in (("secrets", ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                                     "fieldPath")), ("imagePullSecrets", ("name",))):
        refs = common.check_type(new, key, key, errs, list, "array") or []
        for i, ref in enumerate(refs):
            if not isinstance(ref, dict):
                errs.append(FieldError(f"{key}[{i}]", common.type_error(ref, "object")))
                continue
            for field in fields:
                common.check_type(ref, field, f"{key}[{i}].{field}", errs, str, "string")
    common.check_type(new, "automountServiceAccountToken", "automountServiceAccountToken", errs, bool, "boolean")
    return errs


def pod_errors(spec: Any, path: str = "spec") -> list[FieldError]:
    """A PodSpec's (at `path`: a pod's, a vcjob task template's) `serviceAccountName` (and the deprecated
    `serviceAccount`): a DNS subdomain, as ValidatePodSpec checks it — so Volcano's webhook refuses a vcjob whose
    template names an account no pod could use, before any pod of it is tried."""
    if not isinstance(spec, dict):
        return []
    errs: list[FieldError] = []
    for key in ("serviceAccountName", "serviceAccount"):
        name = common.check_type(spec, key, f"{path}.{key}", errs, str, "string")
        if name:
            errs += [FieldError(f"{path}.{key}", common.invalid(name, m)) for m in common.dns1123_subdomain(name)]
    return errs


def resolve_pod(op: base.Operation, obj: Obj, view: base.View) -> None:
    """At a pod's create: default its ServiceAccount, and refuse it (Forbidden) when that account is missing."""
    spec = obj.get("spec")
    if op is not base.Operation.CREATE or not isinstance(spec, dict):
        return
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
    spec["serviceAccountName"] = spec["serviceAccount"] = name
    if getattr(view, "existing_state", False):
        return
    namespace = str(meta.namespace(obj) or "default")
    if name == DEFAULT and view.get(kinds.NAMESPACE, "", namespace) is None:
        return   # (a namespace made on demand for this pod: it comes with its `default` account)
    if view.get(kinds.SERVICEACCOUNT, namespace, name) is None:
        raise errors.Forbidden(f'pods "{meta.name(obj)}" is forbidden: error looking up service account '
                               f'{namespace}/{name}: serviceaccount "{name}" not found')
