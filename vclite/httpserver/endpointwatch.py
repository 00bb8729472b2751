"""Watches of the computed Endpoints and EndpointSlices (endpoints.py): `kubectl get endpoints -w`,
informers on either kind.

Neither kind is stored, so a feed follows what they are computed from: it keeps its own view of the
Services and Pods of the watched namespace (the store's shared objects, never copied), updated by
each Service or Pod watch event, and recomputes only the Services an event concerns — the Service
itself, or those of the pod's namespace whose selector matches the pod before or after the change.
It also keeps each Service's members (the pods its selector matches, updated by the same events), so
a recompute reads those pods only, not every pod of the namespace (with the selector parsed once per
Service version, not at each recompute), and the Services by each label their selector names, so a pod
event looks only at the Services that name one of the pod's labels (before or after the change), not at
every Service of the namespace (docs/performance.md).
What changed is sent as ADDED, MODIFIED or DELETED (a Service that gains its first ready or
unready address, a pod that turns Ready, a Service deleted…), label and field selectors applied to
the computed objects as on a list. Each sent object carries the resourceVersion of the event that
changed it, so a client resuming from it (`resourceVersion=<rv>`) gets the state at that version
(undone from the watch history, as a list with resourceVersionMatch=Exact reads it) and then the
changes after it; a version older than the history is 410 Expired, as for stored kinds. Otherwise
it starts like watch.Feed: the current objects first (no resourceVersion, or sendInitialEvents),
then the changes. The stream side (app.py) drains it as it drains a watch.Feed.
"""
from __future__ import annotations

import collections
import datetime
from typing import Any, Callable, Iterable

from vclite.api import kinds, meta
from vclite.httpserver import absent, endpoints, tables, watch
from vclite.store import selectors

Obj = dict[str, Any]
Key = tuple[str, str]   # (namespace, name)
WATCHED = (kinds.SERVICE.kind, kinds.POD.kind)
COMPUTED = ("Endpoints", "EndpointSlice")


def _key(obj: Obj) -> Key:
    md = obj.get("metadata") or {}
    return str(md.get("namespace") or ""), str(md.get("name") or "")


def _without_version(obj: Obj) -> Obj:
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}}


def _version(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def _with_version(obj: Obj, rv: str) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": rv}}


def _selector(svc: Obj | None) -> dict | None:
    """A Service's selector when it selects pods (a non-empty map), else None."""
    selector = ((svc or {}).get("spec") or {}).get("selector")
    return selector if isinstance(selector, dict) and selector else None


def _pairs(selector: dict | None) -> list[tuple[str, str]]:
    """A selector's (label, value) pairs that a pod's labels can have (string values)."""
    return [(k, v) for k, v in (selector or {}).items() if isinstance(v, str)]


def _matches(selector: dict, pod: Obj) -> bool:
    labels = meta.labels(pod)
    return all(labels.get(k) == v for k, v in selector.items())


class EndpointsFeed(watch.Buffered):
    """One watch of Endpoints or EndpointSlices (`kind`), in `namespace` (None: all)."""

    def __init__(self, client: Any, select: Callable[..., list[Obj]], kind: absent.AbsentKind,
                 namespace: str | None, label_selector: str | None, field_selector: str | None,
                 apiserver: endpoints.Address | None = None, max_buffer: int = watch.MAX_BUFFER):
        super().__init__(kind, max_buffer)
        self.client, self.select, self.namespace = client, select, namespace
        self.apiserver = apiserver
        self._labels = selectors.label_predicate(label_selector)
        self._fields = selectors.field_predicate(field_selector, kind.kind)
        self.services: dict[str, dict[str, Obj]] = collections.defaultdict(dict)   # namespace -> name -> Service
        self.pods: dict[str, dict[str, Obj]] = collections.defaultdict(dict)
        self.members: dict[Key, dict[str, Obj]] = {}   # Service -> the pods its selector matches, by name
        self.selectors: dict[Key, dict] = {}   # Service -> its selector, as indexed in by_label
        self.matchers: dict[Key, endpoints.Matcher] = {}   # Service -> its selector parsed, once per version
        # namespace -> (label, value) -> the names of the Services whose selector has that pair
        self.by_label: dict[str, dict[tuple[str, str], set[str]]] = collections.defaultdict(dict)
        self.sent: dict[Key, dict[Key, Obj]] = {}   # Service -> the computed objects it shows (no version)

    # ---- the computed objects ------------------------------------------------------------------
    def _compute(self, namespace: str, name: str) -> dict[Key, Obj]:
        svc = self.services[namespace].get(name)
        if svc is None:
            return {}
        pods = self.members.get((namespace, name), {}).values()
        matches = self.matchers.get((namespace, name))
        found = [e for e in [endpoints.of_service(svc, pods, self.apiserver, matches)] if e is not None] \
            if self.kind.kind == "Endpoints" else endpoints.slices_of(svc, pods, self.apiserver, matches)
        return {_key(o): _without_version(o) for o in found if self._labels(o) and self._fields(o)}

    def _refresh(self, service: Key, rv: str, emit: bool = True) -> None:
        before = self.sent.get(service, {})
        now = self._compute(*service)
        if now:
            self.sent[service] = now
        else:
            self.sent.pop(service, None)
        if not emit:
            return
        for key, obj in now.items():
            if key not in before:
                self._push("ADDED", _with_version(obj, rv))
            elif before[key] != obj:
                self._push("MODIFIED", _with_version(obj, rv))
        for key, obj in before.items():
            if key not in now:
                self._push("DELETED", _with_version(obj, rv))

    def _load(self, services: Iterable[Obj], pods: Iterable[Obj]) -> None:
        for pod in pods:
            ns, name = _key(pod)
            self.pods[ns][name] = pod
        for svc in services:
            ns, name = _key(svc)
            self.services[ns][name] = svc
            self._enroll((ns, name))

    def _enroll(self, service: Key) -> None:
        """The members of `service` from every pod of its namespace, its selector's place in by_label and
        its selector parsed (the Service is new, changed or gone)."""
        ns, name = service
        index = self.by_label[ns]
        for pair in _pairs(self.selectors.pop(service, None)):
            names = index.get(pair)
            if names is not None:
                names.discard(name)
                if not names:
                    del index[pair]
        self.matchers.pop(service, None)
        svc = self.services[ns].get(name)
        selector = _selector(svc)
        if selector is None:
            self.members.pop(service, None)
            return
        self.selectors[service] = selector
        matcher = endpoints.selector_matcher(svc or {})
        if matcher is not None:
            self.matchers[service] = matcher
        for pair in _pairs(selector):
            index.setdefault(pair, set()).add(name)
        self.members[service] = {n: pod for n, pod in self.pods[ns].items() if _matches(selector, pod)}

    # ---- the feed ------------------------------------------------------------------------------
    def open(self, resource_version: str | None, send_initial_events: bool | None = None,
             initial_bookmark: bool = False, current_rv: str = "") -> None:
        """As watch.Feed.open; a resourceVersion older than the history raises errors.Gone."""
        legacy_state = resource_version in (None, "", "0")
        at = None if legacy_state or send_initial_events else int(resource_version or 0)
        self._load(self.select(kinds.SERVICE, self.namespace, at=at), self.select(kinds.POD, self.namespace, at=at))
        initial = bool(send_initial_events or (send_initial_events is None and legacy_state))
        for ns in sorted(self.services):
            for name in sorted(self.services[ns]):
                self._refresh((ns, name), "", emit=False)
        if initial:   # (each with its Service's version, as a list shows them)
            for ns, name in sorted(self.sent):
                objs = self.sent[(ns, name)]
                for key in sorted(objs):
                    self._push("ADDED", _with_version(objs[key], _version(self.services[ns].get(name))))
            if send_initial_events and initial_bookmark:
                self._push("BOOKMARK", self.bookmark(current_rv, initial_end=True))
        since = resource_version if at is not None else None
        self._sub = self.client.watch(None, self._on_event, since)
        if self.buffer:
            self.wakeup.set()

    def _on_event(self, ev: Any) -> None:
        if self.overflowed or ev.kind.kind not in WATCHED:
            return
        obj = ev.object
        ns, name = _key(obj)
        if self.namespace is not None and ns != self.namespace:
            return
        rv = _version(obj)
        gone = str(ev.type) == "DELETED"
        if ev.kind.kind == kinds.SERVICE.kind:
            if gone:
                self.services[ns].pop(name, None)
            else:
                self.services[ns][name] = obj
            self._enroll((ns, name))
            self._refresh((ns, name), rv)
            return
        before = self.pods[ns].pop(name, None) if gone else self.pods[ns].get(name)
        if not gone:
            self.pods[ns][name] = obj
        index = self.by_label[ns]
        concerned = {svc for o in (before, None if gone else obj) if o is not None
                     for pair in meta.labels(o).items() for svc in index.get(pair, ())}
        for svc_name in sorted(concerned):
            selector = self.selectors[(ns, svc_name)]
            members = self.members.setdefault((ns, svc_name), {})
            was = members.pop(name, None) is not None   # (it matched before the change)
            if not gone and _matches(selector, obj):
                members[name] = obj
            elif not was:
                continue   # (matched neither before nor after)
            self._refresh((ns, svc_name), rv)

    def frame(self, etype: str, obj: Obj, as_table: bool, now: datetime.datetime, include_object: str) -> Obj:
        """One watch line's object; with Table output a one-row Table (endpoints.table)."""
        if as_table and etype in ("ADDED", "MODIFIED", "DELETED"):
            table = endpoints.table(self.kind.kind, [obj], now, _version(obj), tables.AGE.cell, "v1")
            return {"type": etype, "object": table}
        return {"type": etype, "object": obj}


def watched(kind: str, method: str, watch_param: str | None) -> bool:
    """Whether a request of an absent kind is a watch this module serves (a GET with watch=true/1)."""
    return kind in COMPUTED and method == "GET" and (watch_param or "").lower() in ("true", "1")
