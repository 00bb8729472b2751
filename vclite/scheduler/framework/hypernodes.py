"""The session's network topology: HyperNodes as a tree over the node rows (Volcano's HyperNodesInfo).

`build(hypernodes, nodes)` resolves each HyperNode's members to leaf nodes, as Volcano's scheduler
cache does (api/hyper_node_info.go BuildHyperNodeCache, util/hypernode GetMembers):
- a `Node` member: exactMatch names one node; regexMatch takes every node whose name the pattern
  matches somewhere (Go's MatchString is a search); labelMatch every node its label selector
  selects (an empty selector selects none); a member naming a node that does not exist adds none;
- a `HyperNode` member (exactMatch only; a regex or label selector there is ignored, as upstream)
  becomes a child: the parent holds the child's nodes too. A child claimed twice keeps its first
  parent by name; a cycle is cut where it closes.
Like Volcano's session (framework/session.go addClusterTopHyperNode), a virtual top HyperNode
TOP holds every node and is the parent of every HyperNode without one, one tier above the
highest (tier 1 when there are no HyperNodes). Each HyperNode's nodes are a boolean mask over the
NodeState rows, so "the gang stays within it" is a vector test.

Must not: read the API or know any job; the allocate action and network-topology-aware use it.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from vclite.api import meta, topology
from vclite.scheduler.framework import nodes as nodes_mod

Obj = dict[str, Any]
TOP = "<cluster-top-hypernode>"   # Volcano's framework.ClusterTopHyperNode (a name no object can have)


@dataclasses.dataclass
class Tree:
    tier: dict[str, int]                # HyperNode -> tier (TOP included)
    parent: dict[str, str]              # HyperNode -> parent ("" for TOP)
    children: dict[str, list[str]]      # HyperNode -> children, by name
    leaves: dict[str, np.ndarray]       # HyperNode -> mask over node rows
    tier_names: dict[str, int]          # tierName -> tier (the last by name wins on a conflict, as upstream)

    @property
    def top_tier(self) -> int:
        return self.tier[TOP]

    @property
    def tiers(self) -> list[int]:
        """The tiers of the real HyperNodes and TOP, ascending."""
        return sorted(set(self.tier.values()))

    def ancestors(self, name: str) -> list[str]:
        """`name` and its ancestors, lowest first (up to TOP)."""
        out = []
        while name and name not in out:
            out.append(name)
            name = self.parent.get(name, "")
        return out

    def lca(self, a: str, b: str) -> str:
        if not a:
            return b
        if not b:
            return a
        mine = set(self.ancestors(a))
        return next((x for x in self.ancestors(b) if x in mine), TOP)

    def lowest_holding(self, rows: np.ndarray) -> str:
        """The lowest-tier HyperNode whose nodes include every row (ties: by name; TOP at worst)."""
        best = TOP
        for name in sorted(self.tier):
            if self.leaves[name][rows].all() and self.tier[name] < self.tier[best]:
                best = name
        return best


_selects = topology.selects
selects = _selects   # the partitions' labelSelector (actions/topology.py)


def _node_members(selector: Obj, nodes: nodes_mod.NodeState) -> np.ndarray:
    mask = np.zeros(len(nodes), dtype=bool)
    exact = selector.get("exactMatch")
    if isinstance(exact, dict) and exact.get("name") in nodes.index:
        mask[nodes.index[exact["name"]]] = True
    regex = selector.get("regexMatch")
    if isinstance(regex, dict) and isinstance(regex.get("pattern"), str):
        try:
            pattern = re.compile(regex["pattern"])
        except re.error:
            pattern = None
        if pattern is not None:
            mask |= np.fromiter((pattern.search(n) is not None for n in nodes.names), dtype=bool, count=len(nodes))
    label = selector.get("labelMatch")
    if label is not None:
        mask |= np.fromiter((_selects(label, meta.labels(o)) for o in nodes.objects), dtype=bool, count=len(nodes))
    return mask


def build(hypernodes: list[Obj], nodes: nodes_mod.NodeState) -> Tree:
    specs = {meta.name(h): (h.get("spec") or {}) for h in sorted(hypernodes, key=meta.name)}
    tier = {name: int(spec.get("tier") or 0) for name, spec in specs.items()}
    tier_names = {}
    for name, spec in specs.items():
        if spec.get("tierName"):
            tier_names[str(spec["tierName"])] = tier[name]
    own: dict[str, np.ndarray] = {}
    parent: dict[str, str] = {}
    children: dict[str, list[str]] = {name: [] for name in specs}
    for name, spec in specs.items():
        own[name] = np.zeros(len(nodes), dtype=bool)
        for m in spec.get("members") or ():
            selector = m.get("selector") or {} if isinstance(m, dict) else {}
            if m.get("type") == "Node":
                own[name] |= _node_members(selector, nodes)
            elif m.get("type") == "HyperNode":
                child = (selector.get("exactMatch") or {}).get("name")
                if child in specs and child != name and child not in parent:
                    parent[child] = name
                    children[name].append(child)
    for child, p in list(parent.items()):   # cut cycles where they close
        seen, x = {child}, p
        while x in parent:
            if x in seen:
                del parent[child]
                children[p].remove(child)
                break
            seen.add(x)
            x = parent[x]
    leaves: dict[str, np.ndarray] = {}

    def resolve(name: str) -> np.ndarray:
        if name not in leaves:
            mask = own[name].copy()
            for c in children[name]:
                mask |= resolve(c)
            leaves[name] = mask
        return leaves[name]
    for name in specs:
        resolve(name)
    top = max(tier.values(), default=0) + 1
    tier[TOP] = max(top, 1)
    roots = [name for name in specs if name not in parent]
    for name in roots:
        parent[name] = TOP
    parent[TOP] = ""
    children[TOP] = roots
    leaves[TOP] = np.ones(len(nodes), dtype=bool)
    return Tree(tier, parent, children, leaves, tier_names)
