"""Kubernetes node matching as boolean masks over the session's nodes (rows of NodeState).

- `NodeLabels`: label requirements (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`), the
  `metadata.name` field requirement, nodeSelector maps, NodeSelectorTerms (expressions ANDed,
  terms ORed) — each a vector over all nodes, cached per session by its content. Each label key
  becomes one integer column (value codes, -1 = absent), built once per key.
- `NodeTaints`: nodes grouped by their taint list; for a pod's tolerations, the nodes it cannot
  go to (with kube-scheduler's reason, "node(s) had untolerated taint(s)") and the per-node count
  of untolerated `PreferNoSchedule` taints.
Semantics follow k8s.io/component-helpers nodeaffinity and core/v1 helper: an empty term
matches nothing; a term with an invalid requirement (wrong number of values, non-integer `Gt`,
unknown operator, a field other than `metadata.name`) is dropped, i.e. matches nothing.

Must not: change node state or know any plugin.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from vclite.scheduler.framework import nodes as nodes_mod

Obj = dict[str, Any]
NAME_FIELD = "metadata.name"
NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "PreferNoSchedule", "NoExecute"
FILTER_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


def _freeze(value: Any) -> Any:
    """A hashable copy of a JSON-shaped value (cache keys)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _int(value: Any) -> int | None:
    try:
        return int(str(value), 10)
    except ValueError:
        return None


class NodeLabels:
    """Label and field matching over the session's nodes, cached by content."""

    def __init__(self, nodes: nodes_mod.NodeState):
        self.nodes = nodes
        self.n = len(nodes)
        self._columns: dict[str, tuple[np.ndarray, dict[str, int]]] = {}
        self._numbers: dict[str, np.ndarray] = {}
        self._cache: dict[Any, np.ndarray | None] = {}

    def none(self) -> np.ndarray:
        return np.zeros(self.n, dtype=bool)

    def all(self) -> np.ndarray:
        return np.ones(self.n, dtype=bool)

    # ---- columns ---------------------------------------------------------------------------------
    def column(self, key: str) -> tuple[np.ndarray, dict[str, int]]:
        """Value codes of label `key` per node (-1 = no such label) and the code of each value."""
        col = self._columns.get(key)
        if col is None:
            vocab: dict[str, int] = {}
            codes = np.fromiter((vocab.setdefault(str(lbl[key]), len(vocab)) if key in lbl else -1
                                 for lbl in self.nodes.labels), dtype=np.int64, count=self.n)
            col = self._columns[key] = (codes, vocab)
        return col

    def values(self, key: str) -> list[str | None]:
        """Label `key` per node (None = absent), for grouping nodes by topology value."""
        codes, vocab = self.column(key)
        names = list(vocab)
        return [names[c] if c >= 0 else None for c in codes]

    def _number(self, key: str) -> np.ndarray:
        num = self._numbers.get(key)
        if num is None:
            codes, vocab = self.column(key)
            table = np.array([_nan_int(v) for v in vocab] + [np.nan], dtype=np.float64)  # code -1 -> nan
            num = self._numbers[key] = table[codes]
        return num

    # ---- requirements ----------------------------------------------------------------------------
    def requirement(self, req: Obj) -> np.ndarray | None:
        """One matchExpressions entry as a mask, or None if it is invalid."""
        key, op, values = str(req.get("key") or ""), req.get("operator"), [str(v) for v in req.get("values") or ()]
        cache_key = ("expr", key, op, tuple(values))
        if cache_key not in self._cache:
            self._cache[cache_key] = self._requirement(key, op, values)
        return self._cache[cache_key]

    def _requirement(self, key: str, op: Any, values: list[str]) -> np.ndarray | None:
        if not key:
            return None
        codes, vocab = self.column(key)
        if op in ("In", "NotIn"):
            if not values:
                return None
            wanted = [vocab[v] for v in values if v in vocab]
            hit = np.isin(codes, wanted) if wanted else self.none()
            return hit if op == "In" else ~hit
        if op in ("Exists", "DoesNotExist"):
            if values:
                return None
            return codes >= 0 if op == "Exists" else codes < 0
        if op in ("Gt", "Lt"):
            bound = _int(values[0]) if len(values) == 1 else None
            if bound is None:
                return None
            num = self._number(key)
            with np.errstate(invalid="ignore"):
                return (num > bound) if op == "Gt" else (num < bound)
        return None

    def field_requirement(self, req: Obj) -> np.ndarray | None:
        """One matchFields entry (only `metadata.name`, `In`/`NotIn` with one value), or None if invalid."""
        values = req.get("values") or ()
        if req.get("key") != NAME_FIELD or req.get("operator") not in ("In", "NotIn") or len(values) != 1:
            return None
        hit = self.none()
        row = self.nodes.index.get(str(values[0]))
        if row is not None:
            hit[row] = True
        return hit if req["operator"] == "In" else ~hit

    def selector(self, labels: Obj) -> np.ndarray:
        """A nodeSelector map: every label equal."""
        cache_key = ("selector", _freeze(labels))
        mask = self._cache.get(cache_key)
        if mask is None:
            mask = self.all()
            for key, value in labels.items():
                codes, vocab = self.column(str(key))
                code = vocab.get(str(value))
                mask &= (codes == code) if code is not None else False
            self._cache[cache_key] = mask
        return mask

    def term(self, term: Obj | None) -> np.ndarray:
        """A NodeSelectorTerm: all its expressions and fields match (empty or invalid -> no node)."""
        cache_key = ("term", _freeze(term or {}))
        mask = self._cache.get(cache_key)
        if mask is None:
            mask = self._term(term or {})
            self._cache[cache_key] = mask
        return mask

    def _term(self, term: Obj) -> np.ndarray:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            return self.none()
        mask = self.all()
        for req, fn in [(e, self.requirement) for e in exprs] + [(f, self.field_requirement) for f in fields]:
            m = fn(req if isinstance(req, dict) else {})
            if m is None:
                return self.none()
            mask = mask & m
        return mask

    def terms(self, terms: Iterable[Obj]) -> np.ndarray:
        """NodeSelectorTerms: any term matches."""
        mask = self.none()
        for t in terms:
            mask = mask | self.term(t)
        return mask

    def required(self, pod: Obj) -> np.ndarray | None:
        """Nodes matching the pod's nodeSelector and required node affinity (None = no constraint)."""
        spec = pod.get("spec") or {}
        selector = spec.get("nodeSelector") or {}
        required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution"))
        if not selector and required is None:
            return None
        mask = self.selector(selector) if selector else self.all()
        if required is not None:
            mask = mask & self.terms(required.get("nodeSelectorTerms") or [])
        return mask

    def preferred_score(self, pod: Obj) -> np.ndarray | None:
        """Σ weights of the pod's preferred node-affinity terms each node matches (None = no terms)."""
        prefs = ((((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                 .get("preferredDuringSchedulingIgnoredDuringExecution") or [])
        score = None
        for p in prefs:
            weight = _int(p.get("weight", 0)) or 0
            if weight == 0:
                continue
            term = self.term(p.get("preference"))
            score = (score if score is not None else np.zeros(self.n)) + weight * term
        return score


def _nan_int(value: str) -> float:
    v = _int(value)
    return float(v) if v is not None else np.nan


# ---- taints and tolerations -------------------------------------------------------------------------
def tolerates(toleration: Obj, key: str, effect: str, value: str = "") -> bool:
    """Kubernetes' Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != effect:
        return False
    if toleration.get("key") and toleration["key"] != key:
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == value
    return op == "Exists"


def tolerated(tolerations: Iterable[Obj], taint: tuple[str, str, str]) -> bool:
    key, value, effect = taint
    return any(tolerates(t, key, effect, value) for t in tolerations)


UNTOLERATED = "node(s) had untolerated taint(s)"   # kube-scheduler's TaintToleration (no key or value since 1.29)


class NodeTaints:
    """Nodes grouped by their taint list (key, value, effect), so each check runs once per group."""

    def __init__(self, nodes: nodes_mod.NodeState):
        self.n = len(nodes)
        groups: dict[tuple, list[int]] = {}
        for i, node in enumerate(nodes.objects):
            taints = (node.get("spec") or {}).get("taints")
            if taints:
                key = tuple((str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
                            for t in taints if isinstance(t, dict))
                groups.setdefault(key, []).append(i)
        self.groups: list[tuple[tuple, np.ndarray]] = []
        for taints, rows in groups.items():
            mask = np.zeros(self.n, dtype=bool)
            mask[rows] = True
            self.groups.append((taints, mask))
        self.any_filter = any(t[2] in FILTER_EFFECTS for taints, _ in self.groups for t in taints)
        self.any_prefer = any(t[2] == PREFER_NO_SCHEDULE for taints, _ in self.groups for t in taints)
        self._cache: dict[tuple, Any] = {}

    def untolerated(self, tolerations: list[Obj]) -> tuple[tuple[str, np.ndarray], ...]:
        """(reason, nodes) pairs: the nodes with a NoSchedule/NoExecute taint the pod does not tolerate."""
        cache_key = ("filter", _freeze(tolerations))
        out = self._cache.get(cache_key)
        if out is None:
            by_reason: dict[str, np.ndarray] = {}
            for taints, mask in self.groups:
                for taint in taints:
                    if taint[2] in FILTER_EFFECTS and not tolerated(tolerations, taint):
                        reason = UNTOLERATED
                        by_reason[reason] = by_reason[reason] | mask if reason in by_reason else mask
                        break
            out = self._cache[cache_key] = tuple(by_reason.items())
        return out

    def prefer_counts(self, tolerations: list[Obj]) -> np.ndarray:
        """Per node, how many PreferNoSchedule taints the pod does not tolerate."""
        cache_key = ("prefer", _freeze(tolerations))
        out = self._cache.get(cache_key)
        if out is None:
            out = np.zeros(self.n, dtype=np.int64)
            for taints, mask in self.groups:
                count = sum(1 for t in taints if t[2] == PREFER_NO_SCHEDULE and not tolerated(tolerations, t))
                if count:
                    out[mask] = count
            self._cache[cache_key] = out
        return out
