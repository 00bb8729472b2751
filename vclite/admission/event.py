"""core/v1 Event admission: the field types kube-apiserver's decoding insists on, and legacyValidateEvent's
rule that an Event lives in the namespace of the object it is about.

Without it an Event with `involvedObject: 5` or `count: "x"` was stored, and every later list of the
namespace's Events (`kubectl get events`, `describe`, the Python client) failed with a 500. A wrongly
typed field is a 422 naming it (kube-apiserver: 400, it cannot decode the body), as for other kinds.
Namespace rule (kube's, for an Event without `eventTime`, which client-go's legacy recorder writes):
`involvedObject.namespace` equals the Event's namespace, or is empty when the Event is in `default`;
with `eventTime` an empty one is allowed in `default` and `kube-system` only. Pure.
"""
from __future__ import annotations

from typing import Any

from vclite.admission import base, common, shapes
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError
STR, INT = shapes.STR, shapes.INT

OBJECT_REFERENCE = {key: STR for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                                         "fieldPath")}
EVENT = {"involvedObject": OBJECT_REFERENCE, "related": OBJECT_REFERENCE, "reason": STR, "message": STR,
         "type": STR, "source": {"component": STR, "host": STR}, "firstTimestamp": STR, "lastTimestamp": STR,
         "eventTime": STR, "count": INT, "series": {"count": INT, "lastObservedTime": STR}, "action": STR,
         "reportingComponent": STR, "reportingInstance": STR}
MISMATCH = "does not match event.namespace"


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    errs = [e for key, shape in EVENT.items() for e in shapes.check(new.get(key), shape, key)]
    if errs:
        return errs
    namespace = str((new.get("metadata") or {}).get("namespace") or "")
    involved = str((new.get("involvedObject") or {}).get("namespace") or "")
    if new.get("eventTime"):
        allowed = involved or namespace in ("default", "kube-system")
    else:
        allowed = involved == namespace if involved else namespace in ("", "default")
    if not allowed:
        errs.append(FieldError("involvedObject.namespace", common.invalid(involved, MISMATCH)))
    return errs
