"""Which flows of a JobFlow may have their vcjob created now: one pure decision over a table.

Input: `spec.flows` and what is observed — flow name -> the phase of that flow's vcjob
(`<jobflow>-<flow>`; a flow with no vcjob is absent from the mapping, a vcjob whose controller has
not written a phase yet maps to ""). Output: one Verdict per distinct flow name, in spec order.

Volcano's contract, kept: a flow is ready when every `dependsOn.targets` flow's vcjob is in phase
`Completed` exactly (`Completing` is not enough); no `dependsOn`, or `targets: []`, is ready at once;
`dependsOn.probe` is accepted and not evaluated (Volcano declares it and never reads it).

Dependencies are a table of kinds (`DEPENDENCY_KINDS`): each row says when it applies to a flow and
which of its requirements are still unmet. A flow is ready when no applicable row has an unmet
requirement (strategy "all", the only one Volcano has). Probes, strategies and expressions are new
rows here, not new branches in the controller.

Beyond Volcano (which simply never creates such flows, silently): a target that names no flow, or
a flow on a dependency cycle, is BLOCKED with the offending names, so the status can say why.
Admission rejects both, but a JobFlow may reach a real cluster where the webhook is off.
Duplicate flow names (rejected at admission) are treated as one flow: the first entry counts.

Pure: no I/O, no clock, no knowledge of the API beyond the shape of `spec.flows`.
"""
from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vclite.api import batch
from vclite.lib import dag

Obj = dict[str, Any]
Observed = Mapping[str, str]


class State(enum.StrEnum):
    CREATED = "Created"    # the flow's vcjob exists
    READY = "Ready"        # every dependency is met: create the vcjob now
    WAITING = "Waiting"    # some dependency is not met yet
    BLOCKED = "Blocked"    # a dependency can never be met (undefined target, cycle)


@dataclasses.dataclass(frozen=True)
class Verdict:
    flow: str
    state: State
    waiting_for: tuple[str, ...] = ()   # WAITING: flow names whose requirement is unmet, spec order
    undefined: tuple[str, ...] = ()     # BLOCKED: targets that name no flow
    cycle: tuple[str, ...] = ()         # BLOCKED: the cycle this flow is on, as a path


@dataclasses.dataclass(frozen=True)
class DependencyKind:
    """One kind of dependency: `applies(flow)` says whether the flow declares it; `unmet(flow,
    observed)` lists the flow names whose requirement is not met yet."""

    name: str
    applies: Callable[[Obj], bool]
    unmet: Callable[[Obj, Observed], list[str]]


def targets(flow: Obj) -> list[str]:
    return list(((flow.get("dependsOn") or {}).get("targets")) or [])


def _targets_unmet(flow: Obj, observed: Observed) -> list[str]:
    return [t for t in dict.fromkeys(targets(flow)) if observed.get(t) != batch.JobPhase.COMPLETED]


DEPENDENCY_KINDS: tuple[DependencyKind, ...] = (
    DependencyKind("targets", lambda f: bool(targets(f)), _targets_unmet),
    # Volcano accepts probe (httpGet/tcpSocket/taskStatus) and never evaluates it: neither do we yet.
    DependencyKind("probe", lambda f: bool((f.get("dependsOn") or {}).get("probe")), lambda f, o: []),
)


def distinct_flows(flows: Sequence[Obj]) -> dict[str, Obj]:
    """Flow name -> its first entry, in spec order."""
    out: dict[str, Obj] = {}
    for f in flows or []:
        out.setdefault(f.get("name", ""), f)
    return out


def graph(flows: Sequence[Obj]) -> dict[str, list[str]]:
    return {name: targets(f) for name, f in distinct_flows(flows).items()}


def _verdict(name: str, flow: Obj, observed: Observed, undefined_targets: set[str],
             cycle: tuple[str, ...]) -> Verdict:
    if name in observed:
        return Verdict(name, State.CREATED)
    undefined = tuple(t for t in dict.fromkeys(targets(flow)) if t in undefined_targets)
    if undefined:
        return Verdict(name, State.BLOCKED, undefined=undefined)
    if name in cycle:
        return Verdict(name, State.BLOCKED, cycle=cycle)
    unmet: dict[str, None] = {}
    for kind in DEPENDENCY_KINDS:
        if kind.applies(flow):
            unmet.update(dict.fromkeys(kind.unmet(flow, observed)))
    if unmet:
        return Verdict(name, State.WAITING, waiting_for=tuple(unmet))
    return Verdict(name, State.READY)


def evaluate(flows: Sequence[Obj], observed: Observed) -> list[Verdict]:
    """One verdict per distinct flow name, in spec order."""
    g = graph(flows)
    undefined = set(dag.undefined_vertices(g))
    cycle = tuple(dag.find_cycle(g) or ())
    return [_verdict(name, f, observed, undefined, cycle) for name, f in distinct_flows(flows).items()]


def flows_to_create(flows: Sequence[Obj], observed: Observed) -> list[str]:
    """The flows whose vcjob should be created now, in spec order."""
    return [v.flow for v in evaluate(flows, observed) if v.state is State.READY]
