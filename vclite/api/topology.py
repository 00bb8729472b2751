"""HyperNode helpers shared by the scheduler's topology tree and the HyperNode controller (pure).

`selects` is how a HyperNode member's `labelMatch` (a metav1.LabelSelector) picks Nodes in Volcano
(util/hypernode GetMembers): matchLabels and matchExpressions ANDed, and a selector with no
requirement selects nothing (unlike a LabelSelector elsewhere, where {} selects everything).
"""
from __future__ import annotations

from typing import Any, Mapping

SOURCE_LABEL = "volcano.sh/network-topology-source"   # which discovery source made a HyperNode


def selects(selector: Any, labels: Mapping[str, str]) -> bool:
    """A label selector with at least one requirement selects these labels."""
    if not isinstance(selector, dict):
        return False
    match, exprs = selector.get("matchLabels") or {}, selector.get("matchExpressions") or []
    if not match and not exprs:
        return False
    if any(labels.get(k) != v for k, v in match.items()):
        return False
    for e in exprs:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or ()
        ok = {"In": key in labels and labels.get(key) in values,
              "NotIn": key not in labels or labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}.get(op, False)
        if not ok:
            return False
    return True
