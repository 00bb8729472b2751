"""bus.volcano.sh/v1alpha1 Commands: a request to a controller to run an action on one object, once.

Volcano's vcctl creates one (`vcctl job suspend`, `vcctl queue operate -a close`); the controller
whose kind the `target` names (the vcjob controller for Jobs, the queue controller for Queues)
deletes it and runs the action. Pure helpers shared by the clients and the controllers.
"""
from __future__ import annotations

from typing import Any

from vclite.api import kinds, meta

Obj = dict[str, Any]


def target_name(command: Obj, kind: kinds.Kind) -> str | None:
    """The name of the object of `kind` a Command targets, or None when it targets something else
    (Volcano's IsJobReference / IsQueueReference filters: apiVersion and kind must both match)."""
    target = command.get("target")
    if not isinstance(target, dict) or target.get("apiVersion") != kind.api_version or target.get("kind") != kind.kind:
        return None
    name = target.get("name")
    return name if isinstance(name, str) and name else None


def action(command: Obj) -> str:
    value = command.get("action")
    return value if isinstance(value, str) else ""


def command_for(target: Obj, kind: kinds.Kind, action_name: str) -> Obj:
    """The Command Volcano's vcctl creates to run `action_name` on `target` (namespaced targets: in
    their namespace; cluster-scoped ones: in `default`, where the client posts it). It is owned by
    its target, so it goes with it."""
    ref = {"apiVersion": kind.api_version, "kind": kind.kind, "name": meta.name(target),
           "uid": meta.uid(target), "controller": True, "blockOwnerDeletion": True}
    md: Obj = {"generateName": f"{meta.name(target)}-{action_name.lower()}-", "ownerReferences": [ref]}
    if kind.namespaced:
        md["namespace"] = meta.namespace(target)
    return {"apiVersion": kinds.COMMAND.api_version, "kind": kinds.COMMAND.kind, "metadata": md,
            "target": ref, "action": action_name}
