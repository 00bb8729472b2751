"""The in-process API: admission composed with the store, behind the Client protocol.

Every write goes through admission (mutate, then validate) before it reaches the store; a
rejected write changes nothing. Input apiVersions accepted as aliases (JobFlow and JobTemplate
under batch.volcano.sh/v1alpha1) are normalised to the served one. A `default` Namespace and the
`root` and `default` Queues exist from the start, as in a Volcano cluster; a namespace named by a
new object is created on demand (embedded mode has no one to create it by hand). Every namespace
has its `default` ServiceAccount from the moment it is created (kube's serviceaccount controller
makes it moments later, and a pod created in between is refused), made again when it is deleted
while its namespace lives.

Reads (get, list) return the caller's own copies. Writes (create, update, update_status, patch)
return the stored object itself, read-only like a watch event's: most callers drop the result, and
a copy of every written object was a tenth of a quick job's cost. Copy a result to change it.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from vclite.admission import admit as admission
from vclite.admission import base, serviceaccount
from vclite.api import core, kinds, meta, storage
from vclite.apiserver import binding
from vclite.apiserver import client as client_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.store import memory
from vclite.store import preconditions as preconditions_mod

Obj = dict[str, Any]
_EVENT_TYPES = {str(t): t for t in client_mod.EventType}   # a dict lookup per delivery, not an enum call


class _View:
    """Read-only access to stored objects for admission."""

    def __init__(self, store: memory.MemoryStore, require_command: bool = True, existing_state: bool = False,
                 webhook: base.WebhookConfig | None = None):
        self._store = store
        self.webhook = webhook or base.WebhookConfig()   # (vc-webhook-manager's flags: `vcctl server` sets them)
        self.require_command = require_command  # pods run as local processes: a container needs a command
        # objects written are a cluster's existing state (scheduler dry-run), already past the cluster's
        # own admission: pods keep the priority they carry
        self.existing_state = existing_state

    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj | None:
        return self._store.peek(kind, namespace, name)

    def list(self, kind: kinds.Kind, namespace: str | None = None) -> list[Obj]:
        return list(self._store.iter(kind, namespace))


def kind_of(obj: Obj) -> kinds.Kind:
    """The served Kind of a manifest, or BadRequest naming what is wrong."""
    if not isinstance(obj, dict):
        raise errors.BadRequest("object must be a mapping")
    api_version, kind_name = obj.get("apiVersion"), obj.get("kind")
    kind = kinds.lookup(str(api_version), str(kind_name))
    if kind is None:
        raise errors.BadRequest(f'no kind "{kind_name}" is registered for version "{api_version}"')
    return kind


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch. The result shares the parts of `target` the patch leaves alone
    (treat it as read-only, or copy it, if `target` must not change)."""
    if not isinstance(patch, dict):
        return memory.clone(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


class InProcessClient:
    """Client protocol over a MemoryStore, with admission on every write."""

    def __init__(self, store: memory.MemoryStore, clock: clock_mod.Clock, require_command: bool = True,
                 existing_state: bool = False, webhook: base.WebhookConfig | None = None):
        self.store, self.clock = store, clock
        self._view = _View(store, require_command, existing_state, webhook)
        # called with (kind, the stored object) after each create (not a dry run): what one mode adds to the API
        # (embedded: standins.make_accounts)
        self.after_create: list[Callable[[kinds.Kind, Obj], None]] = []
        # the last store event delivered and its WatchEvent (frozen): every subscriber of an event gets the same one
        self._converted: tuple[memory.Event | None, client_mod.WatchEvent | None] = (None, None)

    # reads
    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj:
        return self.store.get(kind, namespace, name)

    def list(self, kind: kinds.Kind, namespace: str | None = None, label_selector: str | dict | None = None,
             field_selector: str | None = None) -> list[Obj]:
        return self.store.list(kind, namespace, label_selector, field_selector)

    # writes
    def _admit(self, op: admission.Operation, kind: kinds.Kind, new: Obj | None, old: Obj | None) -> Obj | None:
        return admission.admit(op, kind, new, old, self._view)

    def _ensure_namespace(self, kind: kinds.Kind, obj: Obj) -> None:
        if not kind.namespaced:
            return
        ns = obj.setdefault("metadata", {}).get("namespace") or "default"
        obj["metadata"]["namespace"] = ns
        if self.store.peek(kinds.NAMESPACE, "", ns) is None:
            self.store.create(kinds.NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {
                                                    "name": ns, "labels": {core.NAMESPACE_NAME_LABEL: ns}},
                                                "spec": {"finalizers": [core.NAMESPACE_FINALIZER]},
                                                "status": {"phase": "Active"}})
            ensure_default_account(self.store, ns)

    # Admission returns a fresh deep copy of what it admits (defaults applied): that copy is handed
    # to the store as its own (owned=True), so a write copies the caller's object once.
    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        """`dry_run` (here and in the other writes): admission and the store's checks run, nothing is
        written; the result is the object as it would be (server-side dry run, `dryRun=All`)."""
        kind = kind_of(obj)
        obj = {**obj, "apiVersion": kind.api_version}
        if kind.namespaced:
            md = obj["metadata"] = dict(obj.get("metadata") or {})
            if not md.get("namespace"):
                md["namespace"] = "default"
        md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        prefix = md.get("generateName")
        if not md.get("name") and isinstance(prefix, str) and prefix:   # named before admission, as Kubernetes
            obj["metadata"] = {**md, "name": self.store.generate_name(prefix)}
        admitted = self._admit(admission.Operation.CREATE, kind, obj, None)
        if dry_run:
            return self.store.create(kind, admitted, owned=True, dry_run=True)
        self._ensure_namespace(kind, admitted)
        created = self.store.create(kind, admitted, owned=True, copy_result=False)
        if kind is kinds.NAMESPACE:
            ensure_default_account(self.store, meta.name(created))
        for hook in self.after_create:
            hook(kind, created)
        return created

    def _current(self, kind: kinds.Kind, obj: Obj) -> Obj:
        """The stored object (read only), or NotFound."""
        md = obj.get("metadata") or {}
        ns, name = md.get("namespace") or "default", md.get("name", "")
        current = self.store.peek(kind, ns, name)
        return current if current is not None else self.store.get(kind, ns, name)

    def update(self, obj: Obj, dry_run: bool = False) -> Obj:
        kind = kind_of(obj)
        old = self._current(kind, obj)
        candidate = {**obj, "apiVersion": kind.api_version}
        if kind.has_status:
            if "status" in old:
                candidate["status"] = old["status"]
            else:
                candidate.pop("status", None)
        admitted = self._admit(admission.Operation.UPDATE, kind, candidate, old)
        return self.store.update(kind, admitted, owned=True, copy_result=False, dry_run=dry_run)

    def update_status(self, obj: Obj, dry_run: bool = False) -> Obj:
        kind = kind_of(obj)
        md = obj.get("metadata") or {}
        old = self.store.peek(kind, md.get("namespace") or "default", md.get("name", ""))
        if old is None:
            self._current(kind, obj)  # raises NotFound with the usual message
        candidate = {**old, "status": obj.get("status"),
                     "metadata": {**old["metadata"], "resourceVersion": md.get("resourceVersion") or
                                  old["metadata"]["resourceVersion"]}}
        admitted = self._admit(admission.Operation.UPDATE_STATUS, kind, candidate, old)
        return self.store.update(kind, admitted, subresource="status", owned=True, copy_result=False,
                                 dry_run=dry_run)

    def patch(self, kind: kinds.Kind, namespace: str, name: str, patch: Obj, status: bool = False) -> Obj:
        current = self.store.peek(kind, namespace if kind.namespaced else "", name)
        if current is None:
            current = self.store.get(kind, namespace, name)   # raises NotFound
        patched = meta.without_empty_maps(merge_patch(current, patch))   # (shares what it leaves with the stored)
        problem = meta.name_problem(patched, name)
        if problem:
            raise errors.BadRequest(problem)
        patched["metadata"] = {**patched["metadata"], "resourceVersion": (
            (patch.get("metadata") or {}).get("resourceVersion") or current["metadata"]["resourceVersion"])}
        return self.update_status(patched) if status else self.update(patched)

    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> None:
        """pods/binding (see binding.py): one write, no pod admission."""
        current = self.store.peek(kinds.POD, namespace, name)
        if current is None:
            current = self.store.get(kinds.POD, namespace, name)   # raises NotFound
        new = binding.bound(current, node, clock_mod.format_time(self.clock.now()) or "", annotations)
        self.store.update(kinds.POD, new, subresource="binding", owned=True, copy_result=False)

    def delete(self, kind: kinds.Kind, namespace: str, name: str, propagation: str = "Background",
               dry_run: bool = False, grace_period: int | None = None, preconditions: Obj | None = None) -> Obj | None:
        old = self.store.peek(kind, namespace if kind.namespaced else "", name)   # (admission only reads it)
        if old is None:
            old = self.store.get(kind, namespace, name)   # raises NotFound
        preconditions_mod.check(kind, old, preconditions)   # (before admission, as kube-apiserver's BeforeDelete)
        self._admit(admission.Operation.DELETE, kind, None, old)
        if kind is kinds.NAMESPACE and not dry_run and not (old.get("spec") or {}).get("finalizers"):
            # (a namespace stored before namespaces had their finalizer: it must empty out first too)
            held = {**(old.get("spec") or {}), "finalizers": [core.NAMESPACE_FINALIZER]}
            self.store.update(kind, {**old, "spec": held}, copy_result=False)   # (a copy: `old` is the stored one)
            if preconditions:   # (the resourceVersion was met before this write of our own, which changes it)
                preconditions = {k: v for k, v in preconditions.items() if k != "resourceVersion"}
        gone = self.store.delete(kind, namespace, name, propagation=propagation, dry_run=dry_run,
                                 grace_period=grace_period, preconditions=preconditions)
        if kind is kinds.SERVICEACCOUNT and name == serviceaccount.DEFAULT and not dry_run:
            ensure_default_account(self.store, namespace)   # (the serviceaccount controller makes it again)
        return gone

    def watch(self, kind: kinds.Kind | None, handler: client_mod.WatchHandler,
              resource_version: str | None = None) -> client_mod.Subscription:
        def deliver(ev: memory.Event) -> None:
            converted = self._converted
            if converted[0] is not ev:   # (the first subscriber of this store event)
                converted = self._converted = (ev, client_mod.WatchEvent(_EVENT_TYPES[ev.type], ev.kind, ev.object,
                                                                         ev.old))
            handler(converted[1])
        return self.store.watch(kind, deliver, resource_version)


DEFAULT_OBJECTS: tuple[Obj, ...] = (
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default",
                                                           "labels": {core.NAMESPACE_NAME_LABEL: "default"}},
     "spec": {"finalizers": [core.NAMESPACE_FINALIZER]}, "status": {"phase": "Active"}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "root"},
     "spec": {"weight": 1, "reclaimable": False}, "status": {"state": "Open"}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
     "spec": {"weight": 1, "reclaimable": True, "parent": "root"}, "status": {"state": "Open"}},
    # kube-apiserver's bootstrap-system-priority-classes (pkg/apis/scheduling SystemPriorityClasses)
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-node-critical"},
     "value": 2_000_001_000, "preemptionPolicy": "PreemptLowerPriority",
     "description": "Used for system critical pods that must not be moved from their current node."},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-cluster-critical"},
     "value": 2_000_000_000, "preemptionPolicy": "PreemptLowerPriority",
     "description": "Used for system critical pods that must run in the cluster, but can be moved to another node "
                    "if necessary."},
)


def ensure_default_account(store: memory.MemoryStore, namespace: str) -> None:
    """Create the `default` ServiceAccount of `namespace` if it has none and is not being deleted."""
    ns = store.peek(kinds.NAMESPACE, "", namespace)
    if ns is None or (ns.get("metadata") or {}).get("deletionTimestamp"):
        return
    if store.peek(kinds.SERVICEACCOUNT, namespace, serviceaccount.DEFAULT) is None:
        store.create(kinds.SERVICEACCOUNT, serviceaccount.new_default(namespace))


def new_client(clock: clock_mod.Clock | None = None, require_command: bool = True,
               store: memory.MemoryStore | None = None, existing_state: bool = False,
               webhook: base.WebhookConfig | None = None) -> InProcessClient:
    """A control plane API over `store` (default: a fresh in-memory one) with the default namespace,
    queues, the two system PriorityClasses and the default StorageClass `standard` (storage.default_class:
    vclite's provisioner, as kind's cluster starts with its local-path class), each created only if missing
    (a durable store reopened keeps its own; a class the user deleted comes back at the next start only).
    `existing_state`: what is written is a cluster's state, already admitted there (see _View); its classes
    are the ones it declares (no default class is added).
    `webhook`: Volcano's admission webhook flags (default: its defaults)."""
    clock = clock or clock_mod.RealClock()
    store = store if store is not None else memory.MemoryStore(clock)
    for obj in DEFAULT_OBJECTS if existing_state else (*DEFAULT_OBJECTS, storage.default_class()):
        kind = kind_of(obj)
        if store.peek(kind, "", obj["metadata"]["name"]) is None:
            store.create(kind, json.loads(json.dumps(obj)))
    for ns in list(store.iter(kinds.NAMESPACE)):   # (a durable store from before ServiceAccounts included)
        ensure_default_account(store, meta.name(ns))
    return InProcessClient(store, clock, require_command=require_command, existing_state=existing_state,
                           webhook=webhook)
