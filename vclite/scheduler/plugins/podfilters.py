"""Filters that look at the pods already on nodes: kube-scheduler's InterPodAffinity and
PodTopologySpread Filter plugins, as Volcano's predicates plugin runs them (used by predicates.py).

"On a node" means the session's PodIndex: pods bound to a session node and not finished, plus the
tasks allocated or pipelined earlier in the session, minus those evicted or discarded — Volcano's
predicates plugin adds each allocation to its node infos, and its PrePredicate recomputes the
counts below for every task.

InterPodAffinity (`predicate.PodAffinityEnable`), per node, the first rule it breaks:
1. the pod's required podAffinity terms: the node must have every term's topologyKey, and for each
   term some pod matching ALL the terms must sit in the node's domain of that key; unless no pod
   anywhere matches them and the pod matches its own terms (the first of a group that wants to be
   together) -> "node(s) didn't match pod affinity rules" (not curable by evictions);
2. the pod's required podAntiAffinity terms: no pod matching a term in the node's domain of its key
   -> "node(s) didn't match pod anti-affinity rules";
3. the required podAntiAffinity terms of the pods already placed: none may select the incoming pod
   within its domain -> "node(s) didn't satisfy existing pods anti-affinity rules".
(2 and 3 are cured by evicting the pods concerned: preempt and reclaim may try those nodes.)

PodTopologySpread (`predicate.PodTopologySpreadEnable`), the pod's `DoNotSchedule` constraints in
order: a node without the constraint's topologyKey -> "node(s) didn't match pod topology spread
constraints (missing required label)" (not curable); otherwise skew = pods matching the selector
in the node's domain + 1 if the pod matches its own selector − the smallest count over the
domains (0 when fewer than `minDomains` domains exist) must not exceed `maxSkew` -> "node(s)
didn't match pod topology spread constraints". Domains and counts come from the nodes that carry
every constraint's key and pass `nodeAffinityPolicy` (Honor, the default: the pod's nodeSelector
and required node affinity) and `nodeTaintsPolicy` (Ignore by default; Honor: taints the pod
tolerates); counted pods are in the pod's namespace and not terminating (an empty labelSelector
counts none, though the pod matches it itself). `matchLabelKeys` adds the pod's own values to the
selector.

Pod affinity terms select pods as in interpod.py (`term_matches`): namespaces default to the
owner's; a namespaceSelector selects Namespaces by their labels ({} is every namespace).

Must not: change node state.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np

from vclite.api import meta
from vclite.scheduler.framework import fit
from vclite.scheduler.plugins import interpod, nodematch, podindex

if TYPE_CHECKING:
    from vclite.scheduler.framework import nodes as nodes_mod

Obj = dict[str, Any]
Pair = tuple[str, str]   # (topology key, value)

AFFINITY_MISMATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_MISMATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD_MISMATCH = "node(s) didn't match pod topology spread constraints"
SPREAD_MISSING_LABEL = SPREAD_MISMATCH + " (missing required label)"
DO_NOT_SCHEDULE = "DoNotSchedule"


def required_terms(pod: Obj, kind: str) -> list[Obj]:
    """The pod's required `kind` (podAffinity | podAntiAffinity) terms."""
    block = (((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {})
    return [t for t in block.get("requiredDuringSchedulingIgnoredDuringExecution") or () if isinstance(t, dict)]


def has_required_anti_affinity(pod: Obj) -> bool:
    return bool(required_terms(pod, "podAntiAffinity"))


def spread_constraints(pod: Obj) -> list[Obj]:
    """The pod's DoNotSchedule topology spread constraints (those that filter)."""
    return [c for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or ()
            if isinstance(c, dict) and c.get("whenUnsatisfiable") == DO_NOT_SCHEDULE and c.get("topologyKey")]


def _matches_all(terms: list[Obj], owner: Obj, pod: Obj, namespace_labels: Mapping[str, Obj]) -> bool:
    return bool(terms) and all(interpod.term_matches(t, owner, pod, namespace_labels) for t in terms)


class PodFilters:
    """The two filters over one session's nodes and pods."""

    def __init__(self, labels: nodematch.NodeLabels, taints: nodematch.NodeTaints, pods: podindex.PodIndex,
                 nodes: "nodes_mod.NodeState"):
        self.labels, self.taints, self.pods, self.nodes = labels, taints, pods, nodes

    # ---- InterPodAffinity ------------------------------------------------------------------------
    def inter_pod_affinity(self, pod: Obj, existing_anti: bool = True) -> list[fit.Failure]:
        """Failures for the pod's required (anti-)affinity and, when `existing_anti` (some placed pod
        has required anti-affinity), the placed pods' anti-affinity towards it."""
        affinity, anti = required_terms(pod, "podAffinity"), required_terms(pod, "podAntiAffinity")
        if not (affinity or anti or existing_anti):
            return []
        affinity_counts: dict[Pair, int] = {}
        anti_counts: dict[Pair, int] = {}
        existing_counts: dict[Pair, int] = {}
        node_labels, ns_labels = self.nodes.labels, self.pods.namespace_labels
        for row, other in self.pods.pods():
            lbl = node_labels[row]
            if not lbl:
                continue
            if affinity and _matches_all(affinity, pod, other, ns_labels):
                _count(affinity_counts, affinity, lbl)
            if anti:
                _count(anti_counts, [t for t in anti if interpod.term_matches(t, pod, other, ns_labels)], lbl)
            if existing_anti:
                theirs = required_terms(other, "podAntiAffinity")
                if theirs:
                    _count(existing_counts, [t for t in theirs if interpod.term_matches(t, other, pod, ns_labels)],
                           lbl)
        out = []
        decided = np.zeros(len(self.nodes), dtype=bool)
        if affinity:
            has_keys = np.ones(len(self.nodes), dtype=bool)
            exists = np.ones(len(self.nodes), dtype=bool)
            for t in affinity:
                codes, per_node = self._per_node(affinity_counts, t.get("topologyKey") or "")
                has_keys &= codes >= 0
                exists &= per_node > 0
            if not affinity_counts and _matches_all(affinity, pod, pod, ns_labels):
                exists[:] = True   # the first pod of a group that wants to be together
            decided = ~(has_keys & exists)
            if decided.any():
                out.append(fit.Failure(((AFFINITY_MISMATCH, decided),)))
        anti_keys = [t.get("topologyKey") or "" for t in anti]
        existing_keys = sorted({k for k, _ in existing_counts})
        for reason, counts, keys in ((ANTI_AFFINITY_MISMATCH, anti_counts, anti_keys),
                                     (EXISTING_ANTI_AFFINITY, existing_counts, existing_keys)):
            if not counts:
                continue
            hit = np.zeros(len(self.nodes), dtype=bool)
            for key in keys:
                codes, per_node = self._per_node(counts, key)
                hit |= (codes >= 0) & (per_node > 0)
            hit &= ~decided
            if hit.any():
                out.append(fit.Failure(((reason, hit),), resolvable=True))
                decided = decided | hit
        return out

    def _per_node(self, counts: dict[Pair, int], key: str) -> tuple[np.ndarray, np.ndarray]:
        """(label codes of `key` per node, the count of the node's (key, value) pair)."""
        codes, vocab = self.labels.column(key)
        table = np.zeros(len(vocab) + 1)
        for (k, value), n in counts.items():
            if k == key and value in vocab:
                table[vocab[value]] = n
        return codes, table[codes]           # code -1 (no such label) reads the trailing 0

    # ---- PodTopologySpread -----------------------------------------------------------------------
    def topology_spread(self, pod: Obj, tolerations: list[Obj]) -> list[fit.Failure]:
        constraints = spread_constraints(pod)
        if not constraints:
            return []
        n = len(self.nodes)
        has_all = np.ones(n, dtype=bool)
        for c in constraints:
            has_all &= self.labels.column(c["topologyKey"])[0] >= 0
        required = self.labels.required(pod)
        untolerated = np.zeros(n, dtype=bool)
        for _, m in self.taints.untolerated(tolerations):
            untolerated |= m
        own_labels = meta.labels(pod)
        missing = np.zeros(n, dtype=bool)
        skewed = np.zeros(n, dtype=bool)
        for c in constraints:
            codes, vocab = self.labels.column(c["topologyKey"])
            eligible = has_all.copy()
            if c.get("nodeAffinityPolicy", "Honor") != "Ignore" and required is not None:
                eligible &= required
            if c.get("nodeTaintsPolicy") == "Honor":
                eligible &= ~untolerated
            selector = _with_label_keys(c.get("labelSelector"), c.get("matchLabelKeys"), own_labels)
            per_node = self._matching_per_node(meta.namespace(pod), selector)
            rows = codes[eligible]
            size = max(len(vocab), 1)        # (no node has the key: every node misses it)
            counts = np.bincount(rows, weights=per_node[eligible], minlength=size)
            present = np.bincount(rows, minlength=size) > 0
            if present.any():
                lowest = counts[present].min()
                min_domains = nodematch._int(c.get("minDomains"))
                if min_domains is not None and int(present.sum()) < min_domains:
                    lowest = 0
            else:
                lowest = np.inf   # no domain to compare with: nothing is skewed
            has_key = codes >= 0
            own = 1 if podindex.selector_matches(selector, own_labels) else 0
            skew = counts[np.maximum(codes, 0)] + own - lowest
            max_skew = nodematch._int(c.get("maxSkew")) or 1
            undecided = ~(missing | skewed)
            missing |= ~has_key & undecided
            skewed |= has_key & (skew > max_skew) & undecided
        out = []
        if missing.any():
            out.append(fit.Failure(((SPREAD_MISSING_LABEL, missing),)))
        if skewed.any():
            out.append(fit.Failure(((SPREAD_MISMATCH, skewed),), resolvable=True))
        return out

    def _matching_per_node(self, namespace: str, selector: Obj | None) -> np.ndarray:
        out = np.zeros(len(self.nodes))
        if selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions"):
            return out   # an empty selector counts no pod (countPodsMatchSelector), yet matches the pod itself
        for row, other in self.pods.pods():
            if (meta.namespace(other) == namespace and not meta.is_deleting(other)
                    and podindex.selector_matches(selector, meta.labels(other))):
                out[row] += 1
        return out


def _count(counts: dict[Pair, int], terms: Iterable[Obj], node_labels: Obj) -> None:
    for t in terms:
        key = t.get("topologyKey") or ""
        if key in node_labels:
            pair = (key, str(node_labels[key]))
            counts[pair] = counts.get(pair, 0) + 1


def _with_label_keys(selector: Obj | None, keys: Any, own_labels: Obj) -> Obj | None:
    """The selector plus `key In (pod's value)` for each matchLabelKeys key the pod has."""
    if selector is None or not keys:
        return selector
    extra = [{"key": k, "operator": "In", "values": [own_labels[k]]} for k in keys if k in own_labels]
    return dict(selector, matchExpressions=[*(selector.get("matchExpressions") or []), *extra])
