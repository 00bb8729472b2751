"""Label and field selectors, parsed once into predicates over objects (plain dicts).

Label selector grammar as kubectl's: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
comma-separated (all must hold); or a dict `{"a": "b"}`; or a LabelSelector object
(`matchLabels` / `matchExpressions`). Field selectors: `path=value`, `path==value`, `path!=value`
where path is a dotted field path (`metadata.name`, `status.phase`, `spec.nodeName`).
"""
from __future__ import annotations

import re
from typing import Any, Callable

from vclite.lib import errors

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

_SET_RE = re.compile(r"^\s*(!?)([A-Za-z0-9./_-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")


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
        labels = obj.get("metadata", {}).get("labels") or {}
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


def field_predicate(selector: str | None) -> Predicate:
    if not selector:
        return lambda obj: True
    reqs: list[tuple[str, bool, str]] = []
    for term in _split_top(selector):
        m = _EQ_RE.match(term)
        if not m:
            raise errors.BadRequest(f"invalid field selector: {term.strip()!r}")
        path, op, value = m.groups()
        reqs.append((path, op != "!=", value))
    return lambda obj: all((field_value(obj, p) == v) == eq for p, eq, v in reqs)
