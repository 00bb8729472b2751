"""A delete's preconditions (DeleteOptions.preconditions: `uid`, `resourceVersion`), checked as kube-apiserver's
BeforeDelete checks them: against the stored object, before anything else (admission included), on a dry run
too; a mismatch is a 409 Conflict in Kubernetes' words. A field left out (or null) is not checked; an empty
string is, as a Go pointer to "" is.
"""
from __future__ import annotations

from typing import Any

from vclite.api import kinds
from vclite.lib import errors

Obj = dict[str, Any]

_WHY = {"uid": ("UID", "The object might have been deleted and then recreated"),
        "resourceVersion": ("ResourceVersion", "The object might have been modified")}


def parse(value: Any) -> Obj:
    """The preconditions of a DeleteOptions (None: none); BadRequest naming the field when malformed."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise errors.BadRequest(f"DeleteOptions.preconditions: expected an object, got {value!r}")
    for field, got in value.items():
        if field not in _WHY:
            raise errors.BadRequest(f'DeleteOptions.preconditions: unknown field "{field}" (want uid, resourceVersion)')
        if got is not None and not isinstance(got, str):
            raise errors.BadRequest(f"DeleteOptions.preconditions.{field}: expected a string, got {got!r}")
    return {k: v for k, v in value.items() if v is not None}


def check(kind: kinds.Kind, obj: Obj, preconditions: Obj | None) -> None:
    """Conflict when `obj` (as stored) does not meet `preconditions` (uid first, then resourceVersion)."""
    if not preconditions:
        return
    md = obj.get("metadata") or {}
    for field, (title, hint) in _WHY.items():
        want = preconditions.get(field)
        if want is not None and want != (md.get(field) or ""):
            resource = f"{kind.kind}.{kind.group}" if kind.group else kind.kind
            err = errors.Conflict(
                f'Operation cannot be fulfilled on {resource} "{md.get("name", "")}": the {title} in the precondition '
                f"({want}) does not match the {title} in record ({md.get(field) or ''}). {hint}")
            # (NewConflict(GroupResource{Group, Resource: Kind}): the Status' details name the stored type's group
            # and Kind too — `Event`, whichever group the request used)
            err.details_as = {  # type: ignore[attr-defined]
                "name": md.get("name", ""), "group": kind.group, "kind": kind.kind}
            raise err
