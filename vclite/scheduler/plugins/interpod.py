"""Scores that look at the pods already on nodes: kube-scheduler's InterPodAffinity and
PodTopologySpread scoring, as Volcano's nodeorder plugin runs them (used by nodeorder.py).

InterPodAffinity: for every pod on a node (with labels), each topology key/value of that node
gains: + weight of each preferred affinity term of the incoming pod the existing pod matches,
− weight of each preferred anti-affinity term it matches, + 1 (hardPodAffinityWeight) for each
required affinity term of the existing pod the incoming pod matches, ± weight of its preferred
affinity / anti-affinity terms the incoming pod matches. A node scores the sum over topology
keys of its values' totals; scores are min-max normalized over the candidate nodes to 0..100
(all 0 when there is nothing to count).
A term matches a pod when the pod's namespace is one of the term's `namespaces` (when neither
`namespaces` nor a `namespaceSelector` is given: the term owner's namespace) or the term's
`namespaceSelector` selects the labels of the pod's Namespace ({} = every namespace; a namespace
the session does not know has no labels), and its labelSelector (plus `matchLabelKeys` values, and
`mismatchLabelKeys` as NotIn) selects the pod's labels — kube-scheduler's AffinityTerm.Matches.

PodTopologySpread (ScheduleAnyway constraints only): candidate nodes lacking a constraint's
topology key score 0; for the others, per constraint, count = matching pods (same namespace,
not terminating) in the node's topology domain, over nodes that satisfy the pod's required node
affinity and have every key (per node for `kubernetes.io/hostname`); score = round(Σ count ×
ln(#domains among candidates + 2) + maxSkew − 1); normalized as upstream
(100 × (max + min − s) / max, 100 for all when max = 0).

Must not: change node state; the pod scans here run only for pods that have such terms.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from vclite.api import meta
from vclite.scheduler.plugins import nodematch, podindex

if TYPE_CHECKING:
    from vclite.scheduler.framework import nodes as nodes_mod

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
HARD_POD_AFFINITY_WEIGHT = 1
MAX_NODE_SCORE = 100
_NO_LABELS: Obj = {}


def _affinity(pod: Obj) -> Obj:
    return ((pod.get("spec") or {}).get("affinity") or {})


def has_pod_affinity(pod: Obj) -> bool:
    aff = _affinity(pod)
    return bool(aff.get("podAffinity") or aff.get("podAntiAffinity"))


def _terms(pod: Obj, kind: str, when: str) -> list[tuple[int, Obj]]:
    """(weight, PodAffinityTerm) of the pod's `kind` (podAffinity|podAntiAffinity) `when` terms."""
    block = _affinity(pod).get(kind) or {}
    if when == "required":
        required = block.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
        return [(HARD_POD_AFFINITY_WEIGHT, t) for t in required]
    out = []
    for w in block.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
        weight = int(w.get("weight") or 0)
        if weight:
            out.append((weight, w.get("podAffinityTerm") or {}))
    return out


def term_matches(term: Obj, owner: Obj, pod: Obj, namespace_labels: Mapping[str, Obj] | None = None) -> bool:
    """Does `term` (declared by `owner`) select `pod`? `namespace_labels`: each Namespace's labels by name."""
    namespaces = term.get("namespaces") or []
    ns_selector = term.get("namespaceSelector")
    ns = meta.namespace(pod)
    if not namespaces and ns_selector is None:
        namespaces = [meta.namespace(owner)]
    if ns not in namespaces and (ns_selector is None or not podindex.selector_matches(
            ns_selector, (namespace_labels or _NO_LABELS).get(ns) or _NO_LABELS)):
        return False
    selector = term.get("labelSelector")
    keys, mismatch = term.get("matchLabelKeys") or (), term.get("mismatchLabelKeys") or ()
    if selector is not None and (keys or mismatch):
        owner_labels = meta.labels(owner)
        extra = {k: owner_labels[k] for k in keys if k in owner_labels}
        differ = [{"key": k, "operator": "NotIn", "values": [owner_labels[k]]} for k in mismatch if k in owner_labels]
        selector = dict(selector, matchLabels={**(selector.get("matchLabels") or {}), **extra},
                        matchExpressions=[*(selector.get("matchExpressions") or []), *differ])
    return podindex.selector_matches(selector, meta.labels(pod))


class InterPod:
    def __init__(self, labels: nodematch.NodeLabels, pods: podindex.PodIndex, nodes: "nodes_mod.NodeState"):
        self.labels, self.pods, self.nodes = labels, pods, nodes

    # ---- InterPodAffinity ------------------------------------------------------------------------
    def affinity_scores(self, pod: Obj, rows: np.ndarray) -> np.ndarray | None:
        mine = [(w, t) for w, t in _terms(pod, "podAffinity", "preferred")]
        mine += [(-w, t) for w, t in _terms(pod, "podAntiAffinity", "preferred")]
        topo: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        node_labels = self.nodes.labels
        for row, existing in self.pods.pods():
            lbl = node_labels[row]
            if not lbl:
                continue
            pairs = [(w, t, existing, pod) for w, t in mine]   # (weight, term, target, owner): incoming's terms
            if has_pod_affinity(existing):
                theirs = _terms(existing, "podAffinity", "required") + _terms(existing, "podAffinity", "preferred")
                theirs += [(-w, t) for w, t in _terms(existing, "podAntiAffinity", "preferred")]
                pairs += [(w, t, pod, existing) for w, t in theirs]   # existing's terms select incoming
            for w, t, target, owner in pairs:
                key = t.get("topologyKey") or ""
                if key in lbl and term_matches(t, owner, target, self.pods.namespace_labels):
                    topo[key][lbl[key]] += w
        if not topo:
            return None
        score = np.zeros(len(rows))
        for key, by_value in topo.items():
            codes, vocab = self.labels.column(key)
            table = np.zeros(len(vocab) + 1)
            for value, s in by_value.items():
                table[vocab[value]] = s
            score += table[codes[rows]]          # code -1 (no such label) reads the trailing 0
        lo, hi = score.min(), score.max()
        if hi - lo <= 0:
            return np.zeros(len(rows))
        return np.trunc(MAX_NODE_SCORE * ((score - lo) / (hi - lo)))

    # ---- PodTopologySpread -----------------------------------------------------------------------
    def spread_scores(self, pod: Obj, rows: np.ndarray) -> np.ndarray | None:
        constraints = [c for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or ()
                       if c.get("whenUnsatisfiable") == "ScheduleAnyway" and c.get("topologyKey")]
        if not constraints:
            return None
        has_all = self.labels.all()
        for c in constraints:
            has_all &= self.labels.column(c["topologyKey"])[0] >= 0
        ok = has_all[rows]
        if not ok.any():
            return np.zeros(len(rows))
        required = self.labels.required(pod)
        eligible = has_all if required is None else has_all & required
        considered = rows[ok]
        score = np.zeros(len(rows))
        for c in constraints:
            key = c["topologyKey"]
            per_node = self._matching_pods_per_node(pod, c)
            codes, vocab = self.labels.column(key)
            if key == HOSTNAME:
                size, counts = len(considered), per_node[rows]
            else:
                size = len(np.unique(codes[considered]))
                domains = np.bincount(codes[eligible], weights=per_node[eligible], minlength=len(vocab))
                counts = domains[np.maximum(codes[rows], 0)]     # rows without the key are not `ok`
            max_skew = int(c.get("maxSkew") or 1)
            score += counts * math.log(size + 2) + (max_skew - 1)
        score = np.floor(score + 0.5)
        lo, hi = score[ok].min(), score[ok].max()
        if hi == 0:
            return np.where(ok, float(MAX_NODE_SCORE), 0.0)
        return np.where(ok, (MAX_NODE_SCORE * (hi + lo - score)) // hi, 0.0)

    def _matching_pods_per_node(self, pod: Obj, constraint: Obj) -> np.ndarray:
        selector = constraint.get("labelSelector")
        keys = constraint.get("matchLabelKeys") or ()
        if selector is not None and keys:
            own = meta.labels(pod)
            selector = dict(selector, matchLabels={**(selector.get("matchLabels") or {}),
                                                   **{k: own[k] for k in keys if k in own}})
        ns = meta.namespace(pod)
        out = np.zeros(len(self.nodes))
        for row, existing in self.pods.pods():
            if (meta.namespace(existing) == ns and not meta.is_deleting(existing)
                    and podindex.selector_matches(selector, meta.labels(existing))):
                out[row] += 1
        return out
