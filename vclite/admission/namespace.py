"""Namespace admission: Kubernetes' namespace strategy and its NamespaceLifecycle admission plugin.

- Every Namespace carries the label `kubernetes.io/metadata.name` with its name, set on create and
  update whatever was given (the strategy's Canonicalize), so selectors can name a namespace.
- A new Namespace gets `spec.finalizers: [kubernetes]` and `status.phase: Active`. Deleting it sets
  its deletionTimestamp and turns it Terminating (the store); the namespace controller then deletes
  everything inside and empties spec.finalizers, which removes it.
- `default`, `kube-system` and `kube-public` may not be deleted (`kube-node-lease` may).
- Nothing new (but Events, which record the deletion itself) may be created in a namespace that is
  being deleted.
- `spec` and `status` have the types kube-apiserver decodes (`spec: 5` was stored, and its delete was a 500).

Pure functions over the object and the read-only View.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, shapes
from vclite.api import core, kinds, meta
from vclite.lib import errors

Obj = dict[str, Any]
FINALIZER = core.NAMESPACE_FINALIZER
SHAPES = {"spec": {"finalizers": [shapes.STR]}, "status": {"phase": shapes.STR, "conditions": [shapes.CONDITION]}}


def name_labelled(obj: Obj) -> Obj:
    """`obj` (a Namespace) with its metadata.labels carrying the name label (a new metadata dict)."""
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    labels = md.get("labels") if isinstance(md.get("labels"), dict) else {}
    name = md.get("name")
    if not isinstance(name, str) or labels.get(core.NAMESPACE_NAME_LABEL) == name:
        return obj
    return {**obj, "metadata": {**md, "labels": {**labels, core.NAMESPACE_NAME_LABEL: name}}}


def mutate(op: base.Operation, obj: Obj) -> None:
    if op in (base.Operation.CREATE, base.Operation.UPDATE):
        labelled = name_labelled(obj)
        if labelled is not obj:
            obj["metadata"] = labelled["metadata"]
    if op is not base.Operation.CREATE:
        return
    spec = obj.setdefault("spec", {}) if isinstance(obj.get("spec", {}), dict) else None
    held = spec.get("finalizers") if spec is not None else None
    if spec is not None and (not isinstance(held, list) or FINALIZER not in held):
        spec["finalizers"] = [*(held if isinstance(held, list) else []), FINALIZER]
    status = obj.get("status")
    obj["status"] = {**(status if isinstance(status, dict) else {}), "phase": "Active"}


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[errors.FieldError]:
    return [e for key, shape in SHAPES.items() for e in shapes.check(new.get(key), shape, key)]


def check_delete(obj: Obj, view: base.View) -> str | None:
    name = meta.name(obj)
    if name in core.IMMORTAL_NAMESPACES:
        return f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    return None


def lifecycle_refusal(kind: kinds.Kind, namespace: str, view: base.View) -> str | None:
    """Why an object of `kind` may not be created in `namespace` now (it is being deleted), or None."""
    if not kind.namespaced or kind.kind == kinds.EVENT.kind or not namespace:
        return None
    ns = view.get(kinds.NAMESPACE, "", namespace)
    if ns is not None and (ns.get("metadata") or {}).get("deletionTimestamp"):
        return f"unable to create new content in namespace {namespace} because it is being terminated"
    return None
