"""Kinds served as views of a stored kind (kinds.VIEWS: events.k8s.io/v1 Events over core/v1 Events).

`ViewClient` wraps the in-process Client so that every resource request (resources.py), watch
(watch.py) and Table works on a view kind unchanged: a read of the view kind reads the stored
kind and converts (api/eventsv1.py), a write converts the object back first — after the
view's own create checks (an Event written through events.k8s.io/v1 must have its eventTime,
reportingController, …) — and answers the stored result converted; a watch's events are
converted as they pass. Requests for stored kinds go through untouched.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable

from vclite.api import eventsv1, kinds
from vclite.lib import errors

Obj = dict[str, Any]
TO_VIEW: dict[kinds.Kind, Callable[[Obj], Obj]] = {kinds.EVENT_V1: eventsv1.to_v1}
TO_STORED: dict[kinds.Kind, Callable[[Obj], Obj]] = {kinds.EVENT_V1: eventsv1.to_core}
CREATE_CHECKS: dict[kinds.Kind, Callable[[Obj], list[errors.FieldError]]] = {kinds.EVENT_V1: eventsv1.validate_create}


def view_of(obj: Obj) -> kinds.Kind | None:
    """The view kind an object written to the API names by its apiVersion and kind, if any."""
    return kinds.lookup_view(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))


def shown(kind: kinds.Kind, objs: Iterable[Obj]) -> Iterable[Obj]:
    """Stored objects as `kind` shows them (as they are when `kind` is not a view)."""
    convert = TO_VIEW.get(kind)
    return objs if convert is None else (convert(o) for o in objs)


def _view_event(ev: Any, kind: kinds.Kind, convert: Callable[[Obj], Obj]) -> Any:
    """A watch event of the stored kind, seen as the view kind."""
    return dataclasses.replace(ev, kind=kind, object=convert(ev.object),
                               old=convert(ev.old) if ev.old is not None else None)


class ViewClient:
    """The Client protocol over `inner`, with the view kinds converted (see the module docstring)."""

    def __init__(self, inner: Any):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, kind: kinds.Kind, namespace: str, name: str) -> Obj:
        if kind not in kinds.VIEWS:
            return self.inner.get(kind, namespace, name)
        return TO_VIEW[kind](self.inner.get(kinds.VIEWS[kind], namespace, name))

    def list(self, kind: kinds.Kind, namespace: str | None = None, *args: Any, **kwargs: Any) -> list[Obj]:
        if kind not in kinds.VIEWS:
            return self.inner.list(kind, namespace, *args, **kwargs)
        return list(shown(kind, self.inner.list(kinds.VIEWS[kind], namespace, *args, **kwargs)))

    def create(self, obj: Obj, **kwargs: Any) -> Obj:
        kind = view_of(obj)
        if kind is None:
            return self.inner.create(obj, **kwargs)
        problems = CREATE_CHECKS[kind](obj)
        if problems:
            raise errors.Invalid(kind.kind, str((obj.get("metadata") or {}).get("name") or ""), problems)
        return TO_VIEW[kind](self.inner.create(TO_STORED[kind](obj), **kwargs))

    def update(self, obj: Obj, **kwargs: Any) -> Obj:
        kind = view_of(obj)
        if kind is None:
            return self.inner.update(obj, **kwargs)
        return TO_VIEW[kind](self.inner.update(TO_STORED[kind](obj), **kwargs))

    def update_status(self, obj: Obj, **kwargs: Any) -> Obj:
        kind = view_of(obj)
        if kind is None:
            return self.inner.update_status(obj, **kwargs)
        raise errors.NotFound(f"{kind.resource} has no status subresource")

    def delete(self, kind: kinds.Kind, namespace: str, name: str, **kwargs: Any) -> Obj | None:
        if kind not in kinds.VIEWS:
            return self.inner.delete(kind, namespace, name, **kwargs)
        gone = self.inner.delete(kinds.VIEWS[kind], namespace, name, **kwargs)
        return None if gone is None else TO_VIEW[kind](gone)

    def watch(self, kind: kinds.Kind | None, handler: Callable[[Any], None], *args: Any) -> Any:
        if kind not in kinds.VIEWS:
            return self.inner.watch(kind, handler, *args)
        convert = TO_VIEW[kind]
        return self.inner.watch(kinds.VIEWS[kind], lambda ev: handler(_view_event(ev, kind, convert)), *args)
