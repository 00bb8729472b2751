"""The namespace controller: a deleted Namespace takes everything inside it along, as Kubernetes'.

Deleting a Namespace only marks it (deletionTimestamp, phase Terminating; admission/namespace.py
gives every namespace the `kubernetes` finalizer, and refuses new content in a terminating one).
This controller then deletes every object of every namespaced kind in it — JobFlows (whose own
controller removes their vcjobs first), vcjobs, PodGroups, pods (the executor stops their
processes), templates, events… — and, once nothing is left, empties the namespace's
spec.finalizers, which removes it. Objects that take a while to go (a JobFlow's finalizer) are
looked at again shortly.

Talks to the cluster only through the Client protocol; the watch handler only enqueues names.
"""
from __future__ import annotations

from typing import Any, Hashable

from vclite.api import core, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
RECHECK = 0.2   # seconds before looking again at a namespace whose content is still going


class NamespaceController:
    name = "namespace-controller"
    retries_forever = True   # (kube-controller-manager's: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock, max_delay=60.0)
        self.namespaces = informer_mod.Informer(client, kinds.NAMESPACE, self._on_namespace)

    def start(self) -> None:
        self.namespaces.start()
        for ns in self.namespaces.items():
            if (ns.get("metadata") or {}).get("deletionTimestamp"):
                self.queue.add(meta.name(ns))

    def stop(self) -> None:
        self.namespaces.stop()

    def _on_namespace(self, ev: client_mod.WatchEvent) -> None:
        if ev.type != client_mod.EventType.DELETED and (ev.object.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.add(meta.name(ev.object))

    def sync(self, key: Hashable) -> None:
        name = str(key)
        ns = self.namespaces.get("", name)
        if ns is None or not (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        if self._delete_content(name):
            self.queue.add_after(name, RECHECK)
            return
        finalizers = [f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != core.NAMESPACE_FINALIZER]
        try:
            self.client.update({**ns, "spec": {**(ns.get("spec") or {}), "finalizers": finalizers}})
        except (errors.NotFound, errors.Conflict):
            pass   # gone already, or changed meanwhile (its watch event brings it back)

    def _delete_content(self, namespace: str) -> bool:
        """Delete what is left in `namespace`; True if anything is still there."""
        left = False
        for kind in kinds.ALL:
            if not kind.namespaced:
                continue
            for obj in self.client.list(kind, namespace):
                left = True
                if (obj.get("metadata") or {}).get("deletionTimestamp"):
                    continue   # going: its finalizer's owner is at work
                try:
                    self.client.delete(kind, namespace, meta.name(obj))
                except errors.NotFound:
                    pass   # collected with its owner meanwhile
        return left
