"""The API as the control plane's components read it: only objects a typed client could decode.

The API serves a stored object as it is (kube-apiserver serves what etcd holds), even one whose `spec` or
`status` is not a JSON object — which admission refuses, so only a store written by hand or by another tool
holds one. Volcano's controllers and scheduler read through typed Go clients, which cannot decode such an
object: client-go's informer keeps what it had and the component goes on. So is a vcjob whose status holds a
field of the wrong type (`taskStatusCount` counting in words: jobstatus.py), as the components read those
fields (the JobFlow controller would copy it into the JobFlow's own status). `DecodingClient` gives vclite's
components the same view: such objects are left out of lists and their watch events are not handed on (a
warning names each, once per version), so one bad object never stops the control plane at its start or
later; a change from such a version to a sound one is handed on as the object's ADDED, and its deletion as a
DELETED without the parts that do not decode (a component may hold an earlier, sound version). Writes, gets and
everything else go to the client as they are.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from vclite.api import kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import jobstatus

Obj = dict[str, Any]

log = logging.getLogger(__name__)

_DELETED = client_mod.EventType.DELETED
_ADDED = client_mod.EventType.ADDED
_WARNED_MAX = 1000   # versions warned about, remembered (each is warned once per client)


# kinds whose status is looked into, field by field: (status, a previous status found to decode or None) -> where
_STATUS_CHECKS = {kinds.JOB.kind: jobstatus.mismatch}


def mistyped_part(obj: Obj) -> str | None:
    """The first of `spec`, `status` that is present and not an object (null stands for none), else None."""
    spec, status = obj.get("spec"), obj.get("status")
    if spec is not None and type(spec) is not dict:
        return "spec"
    if status is not None and type(status) is not dict:
        return "status"
    return None


class DecodingClient:
    """A client (see the module docstring) over `inner`: lists and watches leave out undecodable objects."""

    def __init__(self, inner: Any):
        self._inner = inner
        self._warned: dict[tuple[str, str], None] = {}
        # statuses found not to decode, by identity (kept, so that an id is not reused): a watch event's `old`
        # is looked up here, not checked again
        self._bad_statuses: dict[int, Obj] = {}
        self._last_sound: Any = None   # the last status found to decode: each watch of the kind meets it in turn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _status_mismatch(self, kind_name: str, status: Any, old: Obj | None = None) -> jobstatus.Mismatch | None:
        """Where a status of a kind in _STATUS_CHECKS does not decode (remembered), else None; `old`: the previous
        version (what its status shares with a sound one is not looked at again)."""
        check = _STATUS_CHECKS.get(kind_name)
        if check is None or status is None or status is self._last_sound:
            return None
        before = old.get("status") if old is not None else None
        if type(before) is not dict or self._bad_statuses.get(id(before)) is before:
            before = None
        found = check(status, before)
        if found is None:
            self._last_sound = status
        else:
            self._bad_statuses[id(status)] = status
            if len(self._bad_statuses) > _WARNED_MAX:
                del self._bad_statuses[next(iter(self._bad_statuses))]
        return found

    def _was_bad(self, obj: Obj) -> bool:
        """Whether an event's `old` version was left out (its status found not to decode when it was new)."""
        status = obj.get("status")
        return status is not None and self._bad_statuses.get(id(status)) is status

    def _sound(self, kind_name: str, obj: Obj) -> bool:
        part = mistyped_part(obj)
        found = self._status_mismatch(kind_name, obj.get("status")) if part is None else None
        if part is None and found is None:
            return True
        version = (meta.key(obj), str((obj.get("metadata") or {}).get("resourceVersion")))
        if (kind_name, *version) not in self._warned:
            self._warned[(kind_name, *version)] = None
            if len(self._warned) > _WARNED_MAX:
                del self._warned[next(iter(self._warned))]
            if found is None:
                log.warning("%s %s has a %s that is not an object (written past admission): the controllers and the "
                            "scheduler leave it out until it is written again", kind_name, version[0], part)
            else:
                log.warning("%s %s has a %s of the wrong type (%r, where Go's decoder wants %s; written past "
                            "admission): the controllers and the scheduler leave it out until it is written again",
                            kind_name, version[0], found[0], found[1], found[2])
        return False

    def list(self, kind: kinds.Kind, *args: Any, **kwargs: Any) -> list[Obj]:
        return [obj for obj in self._inner.list(kind, *args, **kwargs) if self._sound(kind.kind, obj)]

    def watch(self, kind: kinds.Kind | None, handler: Callable[[client_mod.WatchEvent], None],
              *args: Any) -> client_mod.Subscription:
        def deliver(ev: client_mod.WatchEvent) -> None:
            obj = ev.object
            spec, status = obj.get("spec"), obj.get("status")
            if (spec is None or type(spec) is dict) and (status is None or type(status) is dict) and (
                    ev.kind.kind not in _STATUS_CHECKS or self._status_mismatch(ev.kind.kind, status, ev.old) is None):
                old = ev.old
                if old is None or (mistyped_part(old) is None and not self._was_bad(old)):
                    handler(ev)   # (the usual case: no copy, no new event)
                elif ev.type is not _DELETED:   # (from a version the handler never saw)
                    handler(client_mod.WatchEvent(_ADDED, ev.kind, obj, None))
                return
            self._sound(ev.kind.kind, obj)   # (warns)
            if ev.type is _DELETED:   # (its last sound version may be cached: the delete is handed on, without
                # the parts that do not decode)
                handler(client_mod.WatchEvent(_DELETED, ev.kind, {k: v for k, v in obj.items()
                                                                  if k not in ("spec", "status")}, None))
        return self._inner.watch(kind, deliver, *args)
