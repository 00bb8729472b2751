"""events.k8s.io/v1 Events as views of the core/v1 Events that are stored, as kube-apiserver serves them.

kube-apiserver stores one Event and converts it to the version a client asks for; the fields map
one to one (k8s.io/api/events/v1, see the table below). An events.k8s.io Event always has
`eventTime`: kube-apiserver writes null for a core Event without one (every Event client-go's
legacy recorder writes, so every Event of Volcano and the kubelet), which the official Python
client refuses to read (its `eventTime` is required); here such an Event shows its
`firstTimestamp` (else its creation time) there:
  core/v1 involvedObject   <-> regarding            message        <-> note
          reportingComponent <-> reportingController  source         <-> deprecatedSource
          firstTimestamp     <-> deprecatedFirstTimestamp              lastTimestamp <-> deprecatedLastTimestamp
          count              <-> deprecatedCount
and eventTime, series, action, reason, related, reportingInstance, type keep their names.
`validate_create` is kube-apiserver's check of an Event written through
events.k8s.io/v1 (the new API's required fields, the deprecated ones left unset). Pure.
"""
from __future__ import annotations

from typing import Any

from vclite.lib import errors

Obj = dict[str, Any]
API_VERSION, CORE_API_VERSION = "events.k8s.io/v1", "v1"
RENAMED = (("involvedObject", "regarding"), ("message", "note"), ("reportingComponent", "reportingController"),
           ("source", "deprecatedSource"), ("firstTimestamp", "deprecatedFirstTimestamp"),
           ("lastTimestamp", "deprecatedLastTimestamp"), ("count", "deprecatedCount"))
KEPT = ("eventTime", "series", "action", "reason", "related", "reportingInstance", "type")
TYPES = ("Normal", "Warning")
NOTE_LIMIT = 1024          # bytes (kube-apiserver's NoteLengthLimit)
FIELD_LIMIT = 128          # action, reason, reportingInstance


def to_v1(core: Obj) -> Obj:
    """The events.k8s.io/v1 form of a stored core/v1 Event (a new object; nested values shared)."""
    out: Obj = {"apiVersion": API_VERSION, "kind": "Event", "metadata": core.get("metadata") or {},
                "eventTime": core.get("eventTime") or _micro(core.get("firstTimestamp")
                                                            or (core.get("metadata") or {}).get("creationTimestamp"))}
    for old, new in RENAMED:
        if core.get(old) not in (None, "", {}, 0):
            out[new] = core[old]
    for key in KEPT:
        if core.get(key) not in (None, ""):
            out[key] = core[key]
    return out


def _micro(time: Any) -> str | None:
    """A metav1.Time (`…:05Z`) as a MicroTime (`…:05.000000Z`); None stays None."""
    if not isinstance(time, str) or not time.endswith("Z"):
        return None
    return time if "." in time else f"{time[:-1]}.000000Z"


def to_core(event: Obj) -> Obj:
    """The core/v1 Event an events.k8s.io/v1 one is stored as (a new object; nested values shared)."""
    out: Obj = {"apiVersion": CORE_API_VERSION, "kind": "Event"}
    if "metadata" in event:
        out["metadata"] = event["metadata"]
    for old, new in RENAMED:
        if event.get(new) is not None:
            out[old] = event[new]
    for key in KEPT:
        if event.get(key) is not None:
            out[key] = event[key]
    return out


def _required(event: Obj, key: str, errs: list[errors.FieldError], limit: int) -> None:
    value = event.get(key)
    if not value:
        errs.append(errors.FieldError(key, "Required value"))
    elif not isinstance(value, str):
        errs.append(errors.FieldError(key, f"Invalid value: {value!r}: must be a string"))
    elif len(value) > limit:
        errs.append(errors.FieldError(key, f"Too long: may not be more than {limit} bytes"))


def validate_create(event: Obj) -> list[errors.FieldError]:
    """What kube-apiserver refuses in an Event created through events.k8s.io/v1."""
    errs: list[errors.FieldError] = []
    if not event.get("eventTime"):
        errs.append(errors.FieldError("eventTime", "Required value"))
    if event.get("type") not in TYPES:
        errs.append(errors.FieldError("type", f'Invalid value: "": has invalid value: {event.get("type") or ""}'))
    _required(event, "reportingController", errs, 316)
    _required(event, "reportingInstance", errs, FIELD_LIMIT)
    _required(event, "action", errs, FIELD_LIMIT)
    _required(event, "reason", errs, FIELD_LIMIT)
    note = event.get("note")
    if isinstance(note, str) and len(note.encode()) > NOTE_LIMIT:
        errs.append(errors.FieldError("note", f"Too long: may not be more than {NOTE_LIMIT} bytes"))
    for key in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount", "deprecatedSource"):
        if event.get(key) not in (None, 0, "", {}):
            errs.append(errors.FieldError(key, 'Invalid value: "": needs to be unset'))
    series = event.get("series")
    if isinstance(series, dict):
        count = series.get("count")
        if not isinstance(count, int) or count < 2:
            errs.append(errors.FieldError("series.count", f"Invalid value: {count!r}: should be at least 2"))
        if not series.get("lastObservedTime"):
            errs.append(errors.FieldError("series.lastObservedTime", "Required value"))
    return errs
