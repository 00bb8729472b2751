"""The in-memory object store: Kubernetes storage semantics without admission.

- Every write gets a new cluster-wide resourceVersion (a decimal string, strictly increasing).
- create sets uid, creationTimestamp and — for Volcano's kinds (custom resources on a cluster, whose
  generation kube-apiserver tracks), PodDisruptionBudgets and Pods (`Kind.tracks_generation`; it tracks none
  for the other built-in kinds served here: ConfigMap, Service, …) — generation 1, which a spec change bumps
  (not a pod's binding, which kube writes past the pod strategy). An object's first deletionTimestamp bumps
  it too, as kube-apiserver's BeforeDelete and markAsDeleting do for every object with a generation.
- A write that names a stale resourceVersion raises Conflict.
- Status is written only through `update(..., subresource="status")`; a main-resource update keeps
  the stored status.
- delete of an object with finalizers (a Namespace's spec.finalizers too) only sets
  deletionTimestamp (a Namespace turns Terminating); the update that removes the last finalizer
  completes the deletion. So does the delete of a Pod a node runs (core.deletion_grace): it gets
  deletionTimestamp = now + its grace period and deletionGracePeriodSeconds, and is removed by the
  delete with grace period 0 its kubelet (the executor) sends once its containers have stopped; a
  later delete may only shorten the grace period. When an object is removed, dependents whose
  ownerReferences all point at removed owners are deleted too (background cascading deletion);
  `propagation="Orphan"` removes the reference instead (and an emptied ownerReferences list).
  `propagation="Foreground"` on an object with dependents gives it deletionTimestamp and the
  `foregroundDeletion` finalizer, deletes (in the foreground too) the dependents no other live
  owner keeps (and drops its reference from the others), and removes the finalizer — the object
  with it — once the last dependent is gone (a Pod once its kubelet has stopped it), as
  Kubernetes' garbage collector does.
- watch delivers (ADDED|MODIFIED|DELETED, new, old) to handlers synchronously after each write,
  and can resume from a resourceVersion still in the retained history (else Gone).

Objects returned by get/list are copies, and so are those returned by create/update unless the
caller asks for the stored object (`copy_result=False`: the in-process client, whose callers rarely
keep a write's result). Objects in watch events are the store's own (never modified after they are
written, since every write replaces the object): handlers must treat them as read-only. That
saves a deep copy per event per subscriber. mutations.py checks the read-only contract in tests.
The store does not know what a kind means beyond its scope, whether it has a status subresource, and
the two deletion rules of Namespaces (spec.finalizers) and Pods (graceful).
"""
from __future__ import annotations

import collections
import datetime
import itertools
import os
from typing import Any, Callable, Iterable

from vclite.api import core, kinds
from vclite.lib import clock as clock_mod
from vclite.lib import errors, jsoncopy
from vclite.store import mutations
from vclite.store import preconditions as preconditions_mod
from vclite.store import selectors

Obj = dict[str, Any]
ObjKey = tuple[str, str, str]  # (kind, namespace, name)


def clone(value: Any) -> Any:
    """Deep copy of JSON-shaped data."""
    return jsoncopy.deep_copy(value)


# Kubernetes' generated-name alphabet (k8s.io/apimachinery/pkg/util/rand: no vowels, no 0, 1, 3, so no words and
# nothing that reads as another character)
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIXES = len(NAME_ALPHABET) ** 5
_SPREAD = 10_000_019   # (not a multiple of 3: n -> n * _SPREAD mod 27^5 visits every suffix once)


def new_uid() -> str:
    """A random (version 4) UUID's text, as `str(uuid.uuid4())` makes it — from the same 16 random bytes with the same
    version and variant bits, without building a UUID object (an object's uid is made on every create)."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40   # version 4
    raw[8] = raw[8] & 0x3F | 0x80   # the RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Event:
    __slots__ = ("rv", "type", "kind", "object", "old")

    def __init__(self, rv: int, type_: str, kind: kinds.Kind, obj: Obj, old: Obj | None):
        self.rv, self.type, self.kind, self.object, self.old = rv, type_, kind, obj, old


Handler = Callable[[Event], None]


class _Subscription:
    def __init__(self, store: "MemoryStore", kind: str | None, handler: Handler):
        self._store, self.kind, self.handler, self.active = store, kind, handler, True

    def cancel(self) -> None:
        self.active = False
        if self in self._store._subscribers:
            self._store._subscribers.remove(self)
            self._store._by_kind.clear()


# Watch events kept for resuming (the apiserver's watch cache keeps far fewer): each holds whole object
# versions, so this bounds memory on long runs; a watcher further behind gets Gone and re-lists.
DEFAULT_HISTORY = 10_000
FOREGROUND = "foregroundDeletion"   # the finalizer of an object deleted in the foreground


def finalizers(kind: kinds.Kind, obj: Obj) -> list:
    """What holds the deletion of `obj`: its metadata.finalizers, and a Namespace's spec.finalizers
    (`kubernetes`: the namespace controller empties it once nothing is left inside)."""
    held = list(obj["metadata"].get("finalizers") or [])
    if kind.kind == "Namespace":
        held += (obj.get("spec") or {}).get("finalizers") or []
    return held



def _bump_for_deletion(md: Obj) -> None:
    """An object given its first deletionTimestamp: generation + 1 if it has one (kube-apiserver's BeforeDelete
    for a pod's graceful deletion, markAsDeleting for an object its finalizers hold: a vcjob, a JobFlow, a
    PodGroup, a Queue, a PodDisruptionBudget, …). An object removed at once (no finalizer, no grace period)
    never gets a deletionTimestamp, and its DELETED event carries the generation it had."""
    if not md.get("deletionTimestamp") and int(md.get("generation") or 0) > 0:
        md["generation"] = int(md["generation"]) + 1


def deliver(subscribers: Iterable[Any], ev: Event) -> None:
    """Hand `ev` to every active subscriber, even when one of them raises: the write is stored, so the
    others' caches must see it too (else they stay wrong for good). The first exception is raised again
    once all have had it — a failing handler is a bug, and its writer hears of it."""
    first: BaseException | None = None
    for sub in subscribers:
        if sub.active:
            try:
                sub.handler(ev)
            except Exception as exc:  # noqa: BLE001 - re-raised below, after the others
                if first is None:
                    first = exc
    if first is not None:
        raise first

class MemoryStore:
    def __init__(self, clock: clock_mod.Clock, history: int = DEFAULT_HISTORY,
                 uid_factory: Callable[[], str] | None = None):
        self._clock = clock
        self._rv = 0
        self._objects: dict[str, dict[tuple[str, str], Obj]] = collections.defaultdict(dict)
        self._dependents: dict[str, set[ObjKey]] = collections.defaultdict(set)
        self._uids: set[str] = set()
        self._history: collections.deque[Event] = collections.deque(maxlen=history)
        self._subscribers: list[_Subscription] = []
        # kind -> its subscribers and the global ones, in subscription order (rebuilt after a change;
        # a list being delivered to is never modified, so handlers may subscribe and cancel)
        self._by_kind: dict[str, list[_Subscription]] = {}
        counter = itertools.count(1)
        self._uid = uid_factory or new_uid
        self._seq = counter
        self._detector = mutations.Detector() if mutations.enabled() else None

    # ---- reads -------------------------------------------------------------------------------
    @property
    def resource_version(self) -> str:
        return str(self._rv)

    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj:
        obj = self._objects[kind.kind].get((namespace if kind.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(f'{kind.resource} "{name}" not found')
        if self._detector:
            self._detector.check((kind.kind, namespace if kind.namespaced else "", name))
        return clone(obj)

    def peek(self, kind: kinds.Kind, namespace: str, name: str) -> Obj | None:
        """The stored object itself (not a copy) for read-only use by admission, or None."""
        return self._objects[kind.kind].get((namespace if kind.namespaced else "", name))

    def iter(self, kind: kinds.Kind, namespace: str | None = None) -> Iterable[Obj]:
        """Stored objects (not copies), for read-only use inside the apiserver."""
        for (ns, _), obj in self._objects[kind.kind].items():
            if namespace is None or not kind.namespaced or ns == namespace:
                yield obj

    def list(self, kind: kinds.Kind, namespace: str | None = None, label_selector: str | dict | None = None,
             field_selector: str | None = None) -> list[Obj]:
        lp, fp = selectors.label_predicate(label_selector), selectors.field_predicate(field_selector)
        return [clone(o) for o in self.iter(kind, namespace) if lp(o) and fp(o)]

    # ---- writes ------------------------------------------------------------------------------
    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _emit(self, type_: str, kind: kinds.Kind, obj: Obj, old: Obj | None) -> None:
        ev = Event(self._rv, type_, kind, obj, old)
        self._history.append(ev)
        key = (kind.kind, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]) if self._detector else None
        deliver(self.subscribers_of(kind.kind), ev)
        if self._detector and type_ != "DELETED":
            self._detector.check(key)

    def _put(self, kind: kinds.Kind, ns: str, name: str, obj: Obj) -> None:
        """Make `obj` the stored version (sealed for the mutation detector)."""
        key = (ns, name)
        if self._detector:
            self._detector.forget((kind.kind, *key))
            self._detector.seal((kind.kind, *key), obj)
        self._objects[kind.kind][key] = obj

    def _result(self, obj: Obj, copy: bool) -> Obj:
        return clone(obj) if copy else obj

    def generate_name(self, prefix: str) -> str:
        """A name from a metadata.generateName, as Kubernetes makes it: the prefix cut to 58 characters and 5
        characters of its alphabet. Kubernetes draws them at random and tries again on a clash; here the store's
        counter is spread over the 27^5 suffixes (so they look as drawn, and none repeats before 14 million)."""
        n, suffix = next(self._seq) * _SPREAD % _SUFFIXES, ""
        for _ in range(5):
            n, digit = divmod(n, len(NAME_ALPHABET))
            suffix += NAME_ALPHABET[digit]
        return prefix[:58] + suffix

    def create(self, kind: kinds.Kind, obj: Obj, owned: bool = False, copy_result: bool = True,
               dry_run: bool = False) -> Obj:
        """Store a copy of `obj` (`owned`: the caller hands over `obj` itself, sharing nothing).
        Returns a copy of what is stored, or (`copy_result=False`) the stored object, read-only.
        `dry_run`: every check, nothing stored; the object as it would be, without a resourceVersion."""
        if not owned:
            obj = clone(obj)
        md = obj.setdefault("metadata", {})
        name = md.get("name")
        if not name and md.get("generateName"):
            name = md["name"] = self.generate_name(md["generateName"])
        if not name:
            raise errors.BadRequest("metadata.name: Required value: name or generateName is required")
        ns = (md.get("namespace") or "default") if kind.namespaced else ""
        if kind.namespaced:
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        bucket = self._objects[kind.kind]
        if (ns, name) in bucket:
            raise errors.AlreadyExists(f'{kind.resource} "{name}" already exists')
        md.pop("deletionTimestamp", None)
        md["uid"] = self._uid()
        if kind.tracks_generation:
            md["generation"] = 1
        else:
            md.pop("generation", None)
        md["creationTimestamp"] = clock_mod.format_time(self._clock.now())
        if dry_run:
            md.pop("resourceVersion", None)
            obj["apiVersion"], obj["kind"] = kind.api_version, kind.kind
            return obj
        md["resourceVersion"] = str(self._next_rv())
        obj["apiVersion"], obj["kind"] = kind.api_version, kind.kind
        self._put(kind, ns, name, obj)
        self._uids.add(md["uid"])
        for ref in md.get("ownerReferences") or []:
            if ref.get("uid"):
                self._dependents[ref["uid"]].add((kind.kind, ns, name))
        self._emit("ADDED", kind, obj, None)
        return self._result(obj, copy_result)

    def update(self, kind: kinds.Kind, obj: Obj, subresource: str | None = None, owned: bool = False,
               copy_result: bool = True, dry_run: bool = False) -> Obj:
        """Store a copy of `obj` as the new version (`owned`: the caller hands over `obj` itself — for
        the status subresource, its status — and never modifies it again; it may share parts with
        stored objects, which nobody modifies either).
        Returns a copy of what is stored, or (`copy_result=False`) the stored object, read-only.
        `subresource`: "status" writes only the status; "binding" writes spec and status as given
        (a pod's binding, one write); None keeps the stored status. `dry_run`: every check, nothing
        stored; the new version as it would be, with the current resourceVersion."""
        md = obj.get("metadata") or {}
        ns = (md.get("namespace") or "default") if kind.namespaced else ""
        name = md.get("name", "")
        bucket = self._objects[kind.kind]
        old = bucket.get((ns, name))
        if old is None:
            raise errors.NotFound(f'{kind.resource} "{name}" not found')
        rv = md.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.Conflict(f'Operation cannot be fulfilled on {kind.resource} "{name}": the object has been '
                                  "modified; please apply your changes to the latest version and try again")
        if subresource == "status":
            # Structural sharing: stored objects are never modified in place, so the new version
            # can share everything but status (copied from the caller) with the old one.
            new = {**old, "metadata": dict(old["metadata"])}
            if obj.get("status") is not None:
                new["status"] = obj["status"] if owned else clone(obj["status"])
            else:
                new.pop("status", None)
        else:
            new = obj if owned else clone(obj)
            if kind.has_status and subresource != "binding":
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            nmd = new.setdefault("metadata", {})
            for field in ("uid", "creationTimestamp", "namespace", "deletionTimestamp", "deletionGracePeriodSeconds",
                          "generation"):
                if field in old["metadata"]:
                    nmd[field] = old["metadata"][field]
                else:
                    nmd.pop(field, None)
            if {k: v for k, v in new.items() if k not in ("metadata", "status")} != \
                    {k: v for k, v in old.items() if k not in ("metadata", "status")}:
                if kind.tracks_generation and subresource != "binding":
                    nmd["generation"] = old["metadata"].get("generation", 1) + 1
        new["apiVersion"], new["kind"] = kind.api_version, kind.kind
        if new == old:
            return self._result(old, copy_result)  # no-op writes do not bump resourceVersion (as the apiserver)
        if dry_run:
            new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            return clone(new)
        new["metadata"]["resourceVersion"] = str(self._next_rv())
        old_refs, new_refs = old["metadata"].get("ownerReferences"), new["metadata"].get("ownerReferences")
        dropped: set = set()
        if old_refs != new_refs:   # (most updates keep them: nothing to reindex or release)
            self._reindex_owners(kind, ns, name, old, new)
            dropped = {r.get("uid") for r in old_refs or []} - {r.get("uid") for r in new_refs or []}
        self._put(kind, ns, name, new)
        if new["metadata"].get("deletionTimestamp") and not finalizers(kind, new) \
                and not new["metadata"].get("deletionGracePeriodSeconds"):
            gone = self._remove(kind, ns, name, old_for_event=old)
            self._owners_released(old, ns, dropped)
            return self._result(gone, copy_result)
        self._emit("MODIFIED", kind, new, old)
        self._owners_released(old, ns, dropped)   # (an owner deleted in the foreground may have waited for it)
        return self._result(new, copy_result)

    def _reindex_owners(self, kind: kinds.Kind, ns: str, name: str, old: Obj, new: Obj) -> None:
        before = {r.get("uid") for r in old["metadata"].get("ownerReferences") or []}
        after = {r.get("uid") for r in new["metadata"].get("ownerReferences") or []}
        for uid in before - after:
            self._dependents.get(uid, set()).discard((kind.kind, ns, name))
        for uid in after - before:
            if uid:
                self._dependents[uid].add((kind.kind, ns, name))

    def delete(self, kind: kinds.Kind, namespace: str, name: str, propagation: str = "Background",
               dry_run: bool = False, grace_period: int | None = None, preconditions: Obj | None = None) -> Obj | None:
        """`dry_run`: every check, nothing deleted (dependents neither); the object as it is.
        `grace_period`: DeleteOptions.gracePeriodSeconds (a pod only, see the module docstring).
        `preconditions`: DeleteOptions.preconditions (`uid`, `resourceVersion`): Conflict unless they hold."""
        ns = namespace if kind.namespaced else ""
        obj = self._objects[kind.kind].get((ns, name))
        if obj is None:
            raise errors.NotFound(f'{kind.resource} "{name}" not found')
        preconditions_mod.check(kind, obj, preconditions)
        if dry_run:
            return clone(obj)
        if propagation == "Orphan":
            self._orphan_dependents(obj["metadata"]["uid"])
        elif propagation == "Foreground" and self._dependents.get(obj["metadata"]["uid"]):
            return self._delete_foreground(kind, ns, name, obj)
        grace = core.deletion_grace(obj, grace_period) if kind.kind == "Pod" else 0
        if grace or finalizers(kind, obj):
            return self._mark_deleting(kind, ns, name, obj, grace)
        return clone(self._remove(kind, ns, name, old_for_event=None))

    def _mark_deleting(self, kind: kinds.Kind, ns: str, name: str, obj: Obj, grace: int) -> Obj:
        """Set deletionTimestamp (now + `grace`) and deletionGracePeriodSeconds; a second deletion may
        only shorten the grace period."""
        md = obj["metadata"]
        if md.get("deletionTimestamp") and (md.get("deletionGracePeriodSeconds") or 0) <= grace:
            return clone(obj)
        new = clone(obj)
        if kind.kind == "Namespace":
            new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
        when = self._clock.now() + datetime.timedelta(seconds=grace)
        _bump_for_deletion(new["metadata"])
        new["metadata"]["deletionTimestamp"] = clock_mod.format_time(when)
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        new["metadata"]["resourceVersion"] = str(self._next_rv())
        self._put(kind, ns, name, new)
        self._emit("MODIFIED", kind, new, obj)
        return clone(new)

    def _delete_foreground(self, kind: kinds.Kind, ns: str, name: str, obj: Obj) -> Obj:
        """Foreground deletion (see the module docstring): the owner waits for its dependents."""
        md = obj["metadata"]
        if FOREGROUND not in (md.get("finalizers") or []):
            new = clone(obj)
            nmd = new["metadata"]
            nmd["finalizers"] = [*(nmd.get("finalizers") or []), FOREGROUND]
            if not nmd.get("deletionTimestamp"):
                _bump_for_deletion(nmd)
                nmd["deletionTimestamp"] = clock_mod.format_time(self._clock.now())
                nmd["deletionGracePeriodSeconds"] = 0
            nmd["resourceVersion"] = str(self._next_rv())
            self._put(kind, ns, name, new)
            self._emit("MODIFIED", kind, new, obj)
        uid = md["uid"]
        for kind_name, dns, dname in sorted(self._dependents.get(uid, set())):
            k = kinds.by_kind(kind_name)
            dep = self._objects[kind_name].get((dns, dname))
            if k is None or dep is None:
                continue
            refs = dep["metadata"].get("ownerReferences") or []
            if any(r.get("uid") != uid and self._uid_exists(r.get("uid")) for r in refs):
                rest = [r for r in refs if r.get("uid") != uid]   # (another owner keeps it: no longer ours)
                self.update(k, {**dep, "metadata": {**dep["metadata"], "ownerReferences": rest}})
                continue
            try:
                self.delete(k, dns, dname, propagation="Foreground")
            except errors.NotFound:
                pass
        self._release_foreground(kind, ns, name, uid)
        current = self._objects[kind.kind].get((ns, name))
        return clone(current if current is not None else obj)

    def _release_foreground(self, kind: kinds.Kind | None, ns: str, name: str, uid: str | None) -> None:
        """Remove the foregroundDeletion finalizer of the owner `uid` (kind/ns/name) once no dependent
        is left (the update that removes the last finalizer removes the object)."""
        if kind is None or not uid or self._dependents.get(uid):
            return
        owner = self._objects[kind.kind].get((ns if kind.namespaced else "", name))
        if owner is None or owner["metadata"].get("uid") != uid \
                or FOREGROUND not in (owner["metadata"].get("finalizers") or []):
            return
        held = [f for f in owner["metadata"]["finalizers"] if f != FOREGROUND]
        md = {**owner["metadata"], "finalizers": held}
        if not held:
            md.pop("finalizers")
        self.update(kind, {**owner, "metadata": md})

    def _owners_released(self, dependent: Obj, ns: str, uids: Iterable[str]) -> None:
        """A dependent left (or dropped its references to) the owners `uids`: those deleted in the
        foreground that waited for it only may go now."""
        if not uids:
            return
        for ref in dependent["metadata"].get("ownerReferences") or []:
            if ref.get("uid") in uids:
                self._release_foreground(kinds.by_kind(str(ref.get("kind"))), ns, str(ref.get("name")), ref["uid"])

    def _orphan_dependents(self, owner_uid: str) -> None:
        for kind_name, ns, name in sorted(self._dependents.pop(owner_uid, set())):
            k = kinds.by_kind(kind_name)
            dep = self._objects[kind_name].get((ns, name))
            if k is None or dep is None:
                continue
            new = clone(dep)
            refs = [r for r in new["metadata"].get("ownerReferences") or [] if r.get("uid") != owner_uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:   # (as kube-apiserver stores it: an empty list is omitted)
                new["metadata"].pop("ownerReferences", None)
            self.update(k, new)

    def _remove(self, kind: kinds.Kind, ns: str, name: str, old_for_event: Obj | None) -> Obj:
        if self._detector:
            self._detector.forget((kind.kind, ns, name))
        obj = self._objects[kind.kind].pop((ns, name))
        self._uids.discard(obj["metadata"]["uid"])
        for ref in obj["metadata"].get("ownerReferences") or []:
            self._dependents.get(ref.get("uid"), set()).discard((kind.kind, ns, name))
        self._next_rv()
        gone = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self._rv)}}  # shares the rest
        self._emit("DELETED", kind, gone, old_for_event or obj)
        self._collect_dependents(obj["metadata"]["uid"])
        self._owners_released(obj, ns, {r.get("uid") for r in obj["metadata"].get("ownerReferences") or []})
        return gone

    def _collect_dependents(self, owner_uid: str) -> None:
        """Background garbage collection: delete dependents left with no live owner."""
        for kind_name, ns, name in sorted(self._dependents.pop(owner_uid, set())):
            k = kinds.by_kind(kind_name)
            dep = self._objects[kind_name].get((ns, name))
            if k is None or dep is None:
                continue
            live = [r for r in dep["metadata"].get("ownerReferences") or []
                    if r.get("uid") != owner_uid and self._uid_exists(r.get("uid"))]
            if not live:
                try:
                    self.delete(k, ns, name)
                except errors.NotFound:
                    pass

    def _uid_exists(self, uid: str | None) -> bool:
        return bool(uid) and uid in self._uids

    # ---- watch -------------------------------------------------------------------------------
    def watch(self, kind: kinds.Kind | None, handler: Handler, resource_version: str | None = None) -> _Subscription:
        """Subscribe; with `resource_version`, first replay retained events newer than it."""
        if resource_version not in (None, "", "0"):
            since = int(resource_version)
            oldest = self._history[0].rv if self._history else self._rv + 1
            if since < oldest - 1 and since < self._rv:
                raise errors.Gone(f"too old resource version: {since} ({oldest - 1})")
            for ev in list(self._history):
                if ev.rv > since and (kind is None or ev.kind.kind == kind.kind):
                    handler(ev)
        sub = _Subscription(self, kind.kind if kind else None, handler)
        self._subscribers.append(sub)
        self._by_kind.clear()
        return sub

    def snapshot(self, kind: kinds.Kind, resource_version: int) -> list[Obj]:
        """The objects of `kind` as they were at `resource_version` (stored objects, read-only): the
        current ones with every retained event after it undone, newest first (a list with
        resourceVersionMatch=Exact). Gone when the history no longer reaches back to it."""
        oldest = self._history[0].rv if self._history else self._rv + 1
        if resource_version < oldest - 1 and resource_version < self._rv:
            raise errors.Gone("The resourceVersion for the provided list is too old.")
        state = dict(self._objects[kind.kind])
        for ev in reversed(self._history):
            if ev.rv <= resource_version:
                break
            if ev.kind.kind != kind.kind:
                continue
            md = ev.object["metadata"]
            key = (md.get("namespace", "") if kind.namespaced else "", md["name"])
            if ev.type == "ADDED":
                state.pop(key, None)
            elif ev.old is not None:   # (MODIFIED, DELETED: the version before)
                state[key] = ev.old
        return list(state.values())

    def subscribers_of(self, kind: str) -> list[_Subscription]:
        """The subscriptions an event of `kind` goes to, in subscription order (do not modify)."""
        subs = self._by_kind.get(kind)
        if subs is None:
            subs = self._by_kind[kind] = [s for s in self._subscribers if s.kind is None or s.kind == kind]
        return subs
