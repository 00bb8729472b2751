"""Fit checks over all nodes at once, and the "why not" histogram (Volcano's FitErrors).

A filter's verdict is a `Failure`: reasons, each with the boolean mask of nodes it applies to.
Resource fit is the action's own check (`req ≤ future_idle`, Volcano's allocate predicate), run
before the plugins' filters. As in kube-scheduler, a node is charged with the reasons of the
FIRST filter that rejects it only, so the counts add up to the number of nodes.

Must not: change node state.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable

import numpy as np

from vclite.scheduler.framework import hooks
from vclite.scheduler.framework import nodes as nodes_mod

@dataclasses.dataclass(frozen=True)
class Failure:
    """One filter's rejections: (reason, mask of nodes rejected for it) pairs.

    `resolvable`: evicting pods from the node could cure it (kube-scheduler's `Unschedulable`,
    e.g. a host port in use); False is `UnschedulableAndUnresolvable` (node selector, taints...),
    and such nodes are not even considered by preempt and reclaim."""
    reasons: tuple[tuple[str, np.ndarray], ...]
    resolvable: bool = False

    def mask(self, n: int) -> np.ndarray:
        out = np.zeros(n, dtype=bool)
        for _, m in self.reasons:
            out |= m
        return out


@dataclasses.dataclass
class FitErrors:
    """Why a task fits no node: reason -> number of nodes, plus an optional plain-language hint."""
    n_nodes: int
    histogram: dict[str, int]
    hint: str = ""
    message: str = ""   # Volcano's FitErrors.SetError: the whole error when no node's reason is recorded

    def error(self) -> str:
        """`0/3 nodes are unavailable: 2 Insufficient cpu, 1 node(s) didn't match node selector.` (Volcano's
        FitErrors.Error; without any node's reason, its `0/0 nodes are unavailable` — no full stop — or the
        message set), then vclite's hint, if any."""
        if self.message and not self.histogram:
            return self.message
        text = f"0/{self.n_nodes} nodes are unavailable"
        if self.histogram:
            text += ": " + ", ".join(sorted(f"{v} {k}" for k, v in self.histogram.items())) + "."
        if self.hint:
            text += " " + self.hint
        return text

    @classmethod
    def everywhere(cls, n_nodes: int, reason: str) -> "FitErrors":
        return cls(n_nodes, {reason: n_nodes} if n_nodes else {})

    @classmethod
    def role_failed(cls, name: str, role: str) -> "FitErrors":
        """A task not tried because a task of its role (its `volcano.sh/task-spec`) already fit nowhere in this
        session: Volcano's allocate records this message for it, in Volcano's words."""
        return cls(0, {}, message=ROLE_FAILED.format(name=name, role=role))


ROLE_FAILED = "Task {name} with role spec {role} has already predicated failed, skip"


def resource_fit(req: np.ndarray, nodes: nodes_mod.NodeState, available: np.ndarray) -> Failure:
    """Nodes where a requested dimension exceeds `available` (rows = nodes), each charged with its
    FIRST short dimension only, as Volcano's allocate predicate (`Insufficient ` + the first name
    LessEqualWithResourcesName returns: cpu, memory, then the scalars, `pods` among them — every
    task requests one pod, so a full node is `Insufficient pods`)."""
    names = nodes.dims.names
    reasons = []
    charged: np.ndarray | None = None
    for j in np.flatnonzero(req > 0):   # (dims order: cpu, memory, pods, then the rest)
        short = req[j] > available[:, j]
        if charged is not None:
            short &= ~charged
        if short.any():
            reasons.append((f"Insufficient {names[j]}", short))
            charged = short if charged is None else charged | short
    return Failure(tuple(reasons))


def fits(req: np.ndarray, available: np.ndarray) -> np.ndarray:
    """Mask of rows of `available` that hold `req` on every requested dimension."""
    cols = req > 0
    return (available[:, cols] >= req[cols]).all(axis=1)


def predicate_caller(flat: list[hooks.Entry]) -> Callable[..., list[Failure]]:
    """The session's Predicate dispatcher: `call(task, nodes, among=None)` -> every function's failures, in
    tier order. `among` is what the caller's own checks left (a mask, or a function making it, called only
    when needed; None: every node). A function registered with among=True is given the nodes still in play
    — `among` less those the functions before it refused — and is asked about those only, as Volcano's
    PredicateFn stops at a node's first failing plugin; without one, this is the plain concatenation."""
    def call(task: Any, nodes: nodes_mod.NodeState, among: Any = None) -> list[Failure]:
        out: list[Failure] = []
        for fn, _, key in flat:
            if key is not hooks.AMONG:
                out.extend(fn(task, nodes))
                continue
            n = len(nodes)
            alive = np.ones(n, dtype=bool) if among is None else \
                np.array(among() if callable(among) else among, dtype=bool)   # (a copy)
            for f in out:
                alive &= ~f.mask(n)
            out.extend(fn(task, nodes, alive))
        return out
    return call


def too_big_hint(req: np.ndarray, nodes: nodes_mod.NodeState, needs: str = "pod needs") -> str:
    """`pod needs cpu 64, but the largest node has 4` when no node could ever hold the request."""
    if len(nodes) == 0:
        return ""
    largest = nodes.allocatable.max(axis=0)
    parts = []
    for j in np.flatnonzero(req > largest):
        name = nodes.dims.names[j]
        parts.append(f"{needs} {name} {nodes.dims.format(name, req[j])}, but the largest node has "
                     f"{nodes.dims.format(name, largest[j])}")
    return "; ".join(parts)


def job_too_big_hint(tasks: Iterable[Any], min_resources: np.ndarray | None, min_available: int,
                     nodes: nodes_mod.NodeState) -> str:
    """`too_big_hint` for a job: its first task no node could ever hold; for a job without pods yet (a
    vcjob's pods are made once its PodGroup is Inqueue), its minResources shared out over minMember pods —
    when that share is above the largest node, so is at least one of those pods."""
    some = False
    for t in tasks:
        some = True
        hint = too_big_hint(t.req, nodes)
        if hint:
            return hint
    if some or min_resources is None or min_available <= 0:   # (pods to go by: their requests say it all)
        return ""
    return too_big_hint(min_resources / min_available, nodes,
                        "pod needs" if min_available == 1 else f"one of its {min_available} pods needs at least")


def feasible(failures: list[Failure], n: int) -> np.ndarray:
    ok = np.ones(n, dtype=bool)
    for f in failures:
        ok &= ~f.mask(n)
    return ok


def fit_errors(failures: list[Failure], n: int, hint: str = "") -> FitErrors:
    """The histogram, charging each node with the reasons of the first filter that rejected it."""
    charged = np.zeros(n, dtype=bool)
    hist: dict[str, int] = {}
    for f in failures:
        fresh = ~charged
        for reason, m in f.reasons:
            count = int((m & fresh).sum())
            if count:
                hist[reason] = hist.get(reason, 0) + count
        charged |= f.mask(n)
    return FitErrors(n, hist, hint)
