"""The pods/binding subresource: how a scheduler assigns a pod to a node (Kubernetes' BindingREST).

`bound(pod, node, now, annotations)` is the pod after a binding, as the apiserver writes it in one
update: spec.nodeName set, a PodScheduled=True condition, the binding's annotations added. It
refuses, with the apiserver's Conflict messages, a pod already assigned to a node (the same node
included) or being deleted. `target(binding)` reads a Binding body (v1 Binding, target a Node).
Pod validation does not run on a binding (nothing else of the pod changes), which is also what
makes a bind one cheap write instead of a spec patch and a status patch.

Must not: read or write the store; the client does.
"""
from __future__ import annotations

from typing import Any

from vclite.lib import errors

Obj = dict[str, Any]


def _conflict(pod_name: str, why: str) -> errors.Conflict:
    return errors.Conflict(f'Operation cannot be fulfilled on pods/binding "{pod_name}": {why}')


def bound(pod: Obj, node: str, now: str, annotations: dict[str, str] | None = None) -> Obj:
    """A new pod object (sharing the unchanged parts of `pod`) bound to `node`."""
    md, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    name = md.get("name", "")
    if md.get("deletionTimestamp"):
        raise _conflict(name, f"pod {name} is being deleted, cannot be assigned to a host")
    if spec.get("nodeName"):
        raise _conflict(name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
    if not node:
        raise errors.Invalid("Binding", name, [errors.FieldError("target.name", "Required value")])
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": now})
    new_md = dict(md)
    if annotations:
        new_md["annotations"] = {**(md.get("annotations") or {}), **annotations}
    return {**pod, "metadata": new_md, "spec": {**spec, "nodeName": node}, "status": {**status, "conditions": conditions}}


def target(binding: Any, pod_name: str) -> tuple[str, dict[str, str]]:
    """(node name, annotations) of a v1 Binding body for pod `pod_name`, or Invalid/BadRequest."""
    if not isinstance(binding, dict):
        raise errors.BadRequest("Binding must be an object")
    md = binding.get("metadata") or {}
    if md.get("name") and md["name"] != pod_name:
        raise errors.BadRequest(f'Binding name "{md["name"]}" does not match the pod "{pod_name}"')
    tgt = binding.get("target") or {}
    if not isinstance(tgt, dict) or (tgt.get("kind") or "Node") != "Node":
        raise errors.Invalid("Binding", pod_name, [errors.FieldError("target.kind", 'Unsupported value: must be "Node"')])
    node = tgt.get("name") or ""
    if not isinstance(node, str) or not node:
        raise errors.Invalid("Binding", pod_name, [errors.FieldError("target.name", "Required value")])
    annotations = md.get("annotations") or {}
    if not isinstance(annotations, dict) or not all(isinstance(v, str) for v in annotations.values()):
        raise errors.Invalid("Binding", pod_name, [errors.FieldError("metadata.annotations", "must be a map of strings")])
    return node, dict(annotations)
