"""Label and field selectors, parsed once into predicates over objects (plain dicts).

Label selector grammar as kubectl's: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
`a>3`, `a<3` (integer label values), comma-separated (all must hold); or a dict `{"a": "b"}`; or a
LabelSelector object (`matchLabels` / `matchExpressions`). Field selectors: `path=value`,
`path==value`, `path!=value` where path is a dotted field path (`metadata.name`, `status.phase`)
and the value anything (a backslash escapes `,` `=` `!`, as apimachinery's fields.ParseSelector); given
the kind, a path the Kubernetes API does not select on is refused (`field label not supported`).
"""
from __future__ import annotations

import re
from typing import Any, Callable

from vclite.lib import errors

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

_SET_RE = re.compile(r"^\s*(!?)([A-Za-z0-9./_-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")


_ORDER_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(>|<)\s*(-?[0-9]+)\s*$")


def _int_label(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _split_top(selector: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p for p in parts if p.strip()]


def _requirement(term: str) -> Callable[[dict[str, str]], bool]:
    m = _EQ_RE.match(term)
    if m:
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    m = _ORDER_RE.match(term)
    if m:
        key, op, bound = m.group(1), m.group(2), int(m.group(3))
        return lambda labels: _int_label(labels.get(key)) is not None and (
            _int_label(labels.get(key)) > bound if op == ">" else _int_label(labels.get(key)) < bound)
    m = _SET_RE.match(term)
    if m:
        neg, key, op, values = m.groups()
        if op:
            allowed = {v.strip() for v in values.split(",") if v.strip()}
            if op == "in":
                return lambda labels: labels.get(key) in allowed
            return lambda labels: labels.get(key) not in allowed
        if neg:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise errors.BadRequest(f"unable to parse requirement: {term.strip()!r}")


def label_predicate(selector: str | dict | None) -> Predicate:
    """A predicate over objects for a label selector in any of the accepted forms."""
    if not selector:
        return lambda obj: True
    if isinstance(selector, dict):
        if "matchLabels" in selector or "matchExpressions" in selector:
            terms = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
            for expr in selector.get("matchExpressions") or []:
                op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
                if op in ("In", "NotIn"):
                    terms.append(f"{key} {op.lower()} ({','.join(values)})")
                elif op == "Exists":
                    terms.append(key)
                elif op == "DoesNotExist":
                    terms.append(f"!{key}")
                else:
                    raise errors.BadRequest(f"unknown label selector operator {op!r}")
            reqs = [_requirement(t) for t in terms]
        else:
            reqs = [_requirement(f"{k}={v}") for k, v in selector.items()]
    else:
        reqs = [_requirement(t) for t in _split_top(selector)]

    def match(obj: Obj) -> bool:
        md = obj.get("metadata")
        labels = md.get("labels") if isinstance(md, dict) else None
        if not isinstance(labels, dict):   # (none, or malformed in the store: matches as no labels)
            labels = {}
        return all(r(labels) for r in reqs)

    return match


def field_value(obj: Obj, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


# The field labels the Kubernetes API selects on, per kind (every kind: metadata.name and
# metadata.namespace; custom resources — Volcano's kinds — nothing else).
_COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
FIELD_LABELS: dict[str, frozenset[str]] = {
    "Pod": _COMMON_FIELDS | {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                             "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
                             "status.nominatedNodeName"},
    "Event": _COMMON_FIELDS | {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                               "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                               "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
    # events.k8s.io/v1 Events (a view of the core ones): kube-apiserver's names for the same fields
    "events.k8s.io/Event": _COMMON_FIELDS | {"regarding.kind", "regarding.namespace", "regarding.name",
                                             "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion",
                                             "regarding.fieldPath", "reason", "reportingController", "type"},
    "Namespace": _COMMON_FIELDS | {"status.phase"},
    "Node": _COMMON_FIELDS | {"spec.unschedulable"},
}


def _field_terms(selector: str) -> list[tuple[str, str, str]]:
    """(path, operator, value) per comma-separated term; a backslash escapes `,`, `=`, `!` and itself."""
    terms, cur, i = [], "", 0
    while i <= len(selector):
        ch = selector[i] if i < len(selector) else ","
        if ch == "\\" and i + 1 < len(selector):
            cur += selector[i:i + 2]
            i += 2
            continue
        if ch == ",":
            if cur.strip():
                terms.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    out = []
    for term in terms:
        m = re.match(r"^\s*([A-Za-z0-9._-]+)\s*(!=|==|=)(.*)$", term)
        if not m:
            raise errors.BadRequest(f"invalid field selector: {term.strip()!r}")
        path, op, raw = m.groups()
        value = re.sub(r"\\(.)", r"\1", raw.strip())
        out.append((path, op, value))
    return out


def field_predicate(selector: str | None, kind: str | None = None) -> Predicate:
    """`kind` (e.g. "Pod"): refuse paths the Kubernetes API does not select on for it."""
    if not selector:
        return lambda obj: True
    reqs: list[tuple[str, bool, str]] = []
    for path, op, value in _field_terms(selector):
        if kind is not None and path not in FIELD_LABELS.get(kind, _COMMON_FIELDS):
            raise errors.BadRequest(f'field label not supported: {path}')
        reqs.append((path, op != "!=", value))
    return lambda obj: all((field_value(obj, p) == v) == eq for p, eq, v in reqs)
