"""nodegroup: a queue's pods go to the node groups it names (plugins/nodegroup/nodegroup.go).

A node's group is its label `volcano.sh/nodegroup-name`. A Queue's `spec.affinity`:
`nodeGroupAffinity` / `nodeGroupAntiAffinity`, each with `requiredDuringSchedulingIgnoredDuringExecution`
and `preferredDuringSchedulingIgnoredDuringExecution` (lists of group names). With the plugin's
`enableHierarchy`, a queue without affinity takes its nearest ancestor's (parent, else `root`).

Predicate, per node, the first that applies (Volcano's reasons, unresolvable by eviction):
- the queue's annotation `volcano.sh/nodegroup-resource-limits` does not parse (JSON: group ->
  resource list) -> "node group resource limit annotation invalid" on every node;
- the node has no group label: fits only with `strict: false` (default true) and a queue without
  affinity rules, else "node group label not found";
- the queue has no affinity rules -> "node group affinity not specified";
- the group is neither required nor preferred, or is anti-required and not anti-preferred (anti
  wins over affinity; anti-preferred lets the node in) -> "node does not satisfy the node group
  affinity";
- the queue's pods on the group's nodes (placed and placed this session) plus this pod would exceed
  the group's limit in the annotation, on a limited resource, by at least Volcano's minimum
  resource -> "node group resource limit exceeded".
NodeOrder (only nodes with a group, for a queue with affinity): required +100; preferred +50, or,
with `enablePreferredOrder`, 50 × (n − i) / n for the i-th of n preferred groups; anti-preferred
makes it −1.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import meta, resources
from vclite.lib import errors
from vclite.scheduler.framework import fit, hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import nodes as nodes_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

GROUP_LABEL = "volcano.sh/nodegroup-name"
LIMITS_ANNOTATION = "volcano.sh/nodegroup-resource-limits"
ROOT = "root"
BASE_SCORE = 100.0
MIN_RESOURCE = 0.1          # Volcano's api.GetMinResource (milli-units, bytes)
NOT_SPECIFIED = "node group affinity not specified"
LABEL_NOT_FOUND = "node group label not found"
UNSATISFIED = "node does not satisfy the node group affinity"
LIMIT_INVALID = "node group resource limit annotation invalid"
LIMIT_EXCEEDED = "node group resource limit exceeded"


@dataclasses.dataclass(frozen=True)
class Arguments:
    strict: bool = plugin.arg("strict", True)
    preferred_order: bool = plugin.arg("enablePreferredOrder", False)


@dataclasses.dataclass(frozen=True)
class Affinity:
    required: frozenset
    preferred: tuple
    anti_required: frozenset
    anti_preferred: frozenset

    @property
    def empty(self) -> bool:
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def allows(self, group: str) -> bool:
        ok = group in self.required or group in self.preferred
        if group in self.anti_required:
            ok = False
        return ok or group in self.anti_preferred

    def score(self, group: str, preferred_order: bool) -> float:
        score = BASE_SCORE if group in self.required else 0.0
        if group in self.preferred:
            if preferred_order:
                n, i = len(self.preferred), self.preferred.index(group)
                score += 0.5 * BASE_SCORE * (n - i) / n
            else:
                score += 0.5 * BASE_SCORE
        return -1.0 if group in self.anti_preferred else score


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def affinity_of(queue: dict) -> Affinity | None:
    """The queue's node-group affinity (None when it has no `spec.affinity`)."""
    spec = (queue.get("spec") or {}).get("affinity")
    if not isinstance(spec, dict):
        return None
    pro, anti = spec.get("nodeGroupAffinity") or {}, spec.get("nodeGroupAntiAffinity") or {}
    preferred = tuple(dict.fromkeys(_names(pro.get("preferredDuringSchedulingIgnoredDuringExecution"))))
    return Affinity(frozenset(_names(pro.get("requiredDuringSchedulingIgnoredDuringExecution"))), preferred,
                    frozenset(_names(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))),
                    frozenset(_names(anti.get("preferredDuringSchedulingIgnoredDuringExecution"))))


def limits_of(queue: dict, dims: Any) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], bool]:
    """group -> (limit vector, mask of limited dimensions) from the queue's annotation; and whether
    the annotation is valid."""
    raw = meta.annotations(queue).get(LIMITS_ANNOTATION)
    if not raw:
        return {}, True
    try:
        doc = json.loads(raw)
        if doc is None:   # JSON null: Go decodes a nil map, without error (no limits)
            return {}, True
        if not isinstance(doc, dict):
            raise ValueError("not an object")
        out = {}
        for group, lst in doc.items():
            parsed = resources.from_resource_list(lst, f"{LIMITS_ANNOTATION}[{group}]")
            limited = np.zeros(len(dims), dtype=bool)
            for name in parsed:
                if name in dims.index:
                    limited[dims.index[name]] = True
            out[str(group)] = (dims.vector(parsed), limited)
        return out, True
    except (ValueError, TypeError, errors.ApiError):
        return {}, False


@dataclasses.dataclass
class _QueueAttr:
    affinity: Affinity | None
    limits: dict
    limits_valid: bool
    allocated: dict = dataclasses.field(default_factory=dict)   # group -> vector


class NodeGroup:
    name = "nodegroup"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.groups = [meta.labels(n).get(GROUP_LABEL) for n in ssn.nodes.objects]
        self.group_names = sorted({g for g in self.groups if g is not None})
        code = {g: i for i, g in enumerate(self.group_names)}
        self.codes = np.array([code.get(g, -1) if g is not None else -1 for g in self.groups], dtype=np.intp)
        self._allowed: dict[int, np.ndarray] = {}   # id(affinity) -> per group code: allowed
        self.attrs = {name: _QueueAttr(affinity_of(q.obj), *limits_of(q.obj, ssn.dims))
                      for name, q in ssn.queues.items()}
        if any(o.name == self.name and o.enabled("enableHierarchy") for t in ssn.conf.tiers for o in t):
            self._inherit()
        for job in ssn.jobs.values():
            for status in (s for s in job.index if s in _allocated_status()):
                for task in job.index[status].values():
                    self._count(job.queue, task, 1)
        reg.add(hooks.Point.PREDICATE, self.predicate)
        reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)
        reg.add(hooks.Point.ALLOCATE_EVENT, lambda task: self._count(self._queue(task), task, 1))
        reg.add(hooks.Point.DEALLOCATE_EVENT, lambda task: self._count(self._queue(task), task, -1))

    def _inherit(self) -> None:
        queues = self.ssn.queues
        for name, attr in self.attrs.items():
            seen, cur = {name}, name
            while attr.affinity is None and cur != ROOT:
                cur = (queues[cur].parent or ROOT) if cur in queues else ROOT
                if cur in seen or cur not in self.attrs:
                    break
                seen.add(cur)
                attr.affinity = self.attrs[cur].affinity

    def _queue(self, task: "tasks_mod.TaskInfo") -> str | None:
        job = self.ssn.jobs.get(task.job)
        return job.queue if job is not None else None

    def _count(self, queue: str | None, task: "tasks_mod.TaskInfo", sign: int) -> None:
        attr = self.attrs.get(queue) if queue else None
        row = self.ssn.nodes.index.get(task.node) if task.node else None
        group = self.groups[row] if row is not None else None
        if attr is None or group is None:
            return
        have = attr.allocated.get(group)
        attr.allocated[group] = (have if have is not None else 0.0) + sign * task.req

    def predicate(self, task: "tasks_mod.TaskInfo", nodes: "nodes_mod.NodeState") -> list[fit.Failure]:
        """Vectorized over the nodes: each node's first reason (module docstring), by group code."""
        job = self.ssn.jobs.get(task.job)
        attr = self.attrs.get(job.queue) if job is not None else None
        n = len(nodes)
        if attr is not None and not attr.limits_valid:
            return [fit.Failure(((LIMIT_INVALID, np.ones(n, dtype=bool)),))]
        unset = attr is None or attr.affinity is None or attr.affinity.empty
        unlabelled = self.codes < 0
        reasons: list[tuple[str, np.ndarray]] = []
        if self.arguments.strict or not unset:
            reasons.append((LABEL_NOT_FOUND, unlabelled))
        if unset:
            reasons.append((NOT_SPECIFIED, ~unlabelled))
        else:
            affinity = attr.affinity
            allowed = self._allowed.get(id(affinity))
            if allowed is None:
                allowed = self._allowed[id(affinity)] = np.array(
                    [affinity.allows(g) for g in self.group_names] + [False], dtype=bool)
            over = np.array([self._over_limit(attr, g, task) for g in self.group_names] + [False], dtype=bool)
            ok = allowed[self.codes] & ~unlabelled   # (code -1 reads the trailing False)
            reasons.append((UNSATISFIED, ~unlabelled & ~ok))
            reasons.append((LIMIT_EXCEEDED, ok & over[self.codes]))
        reasons = [(why, mask) for why, mask in reasons if mask.any()]
        reasons.sort(key=lambda r: int(r[1].argmax()))   # in the order of each reason's first node
        return [fit.Failure(tuple(reasons))] if reasons else []

    @staticmethod
    def _over_limit(attr: _QueueAttr, group: str, task: "tasks_mod.TaskInfo") -> bool:
        limit = attr.limits.get(group)
        if limit is None:
            return False
        vector, limited = limit
        used = attr.allocated.get(group, 0.0) + task.req
        return bool(((used > vector) & (used - vector >= MIN_RESOURCE) & limited).any())

    def key(self, task: "tasks_mod.TaskInfo") -> Any:
        return ("nodegroup", self._queue(task))

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        attr = self.attrs.get(self._queue(task))
        out = np.zeros(len(rows))
        if attr is None or attr.affinity is None:
            return out
        for i, row in enumerate(rows.tolist()):
            group = self.groups[row]
            if group is not None:
                out[i] = attr.affinity.score(group, self.arguments.preferred_order)
        return out

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None


def _allocated_status() -> frozenset:
    from vclite.scheduler.framework import tasks as tasks_mod
    return tasks_mod.ALLOCATED_STATUS
