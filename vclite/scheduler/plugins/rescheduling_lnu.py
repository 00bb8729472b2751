"""The rescheduling plugin's `lowNodeUtilization` strategy (plugins/rescheduling/low_node_utilization.go,
node_utilization_util.go): which running pods to evict from busy nodes so that idle ones take them.

`victims(nodes, thresholds, target)` over each node's measured use (percent of cpu and memory):
- low nodes: schedulable, every measured use below its `thresholds` entry; high nodes: the others with
  a use above its `targetThresholds` entry. No low node, every node low, or no high node: no victims.
- The room the low nodes offer: Σ (target% − use%) of their allocatable (else capacity), per resource,
  in millicores and bytes (each term truncated as Go's int64 conversion).
- High nodes from the busiest (cpu% + memory%) down; on each, its running pods by priority (none first,
  then lowest) and QoS (BestEffort, Burstable, Guaranteed): before each pod, stop with this node when
  none of its uses is at or above its target any more, or when a resource's room is exactly 0 (Volcano's
  test: a room gone below 0 does not stop it); else the pod is a victim, its requests leave the room
  and, as a percentage of the node's capacity, its use.
Ties (equal busyness, equal priority and QoS) go by name where Volcano's sort is unstable; a pod is found
among the offered tasks by namespace and name on its own node (upstream compares the pod name only).

Must not: know the session (rescheduling.py gathers the nodes).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

CPU, MEMORY = "cpu", "memory"
RESOURCES = (CPU, MEMORY)
_QOS_RANK = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}


@dataclasses.dataclass
class NodeLoad:
    """One node as the strategy sees it; `use` (percent) and the room change as victims are chosen."""
    name: str
    unschedulable: bool
    use: dict[str, float]              # cpu, memory: percent
    capacity: dict[str, float]         # status.capacity: cpu cores, memory bytes (the percentages' base)
    allocatable: dict[str, int]        # allocatable (else capacity): millicores, bytes (the room's base)
    pods: list[Any]                    # (task, priority or None, QoS class, cpu millicores, memory bytes)


def _go_int(x: float) -> int:
    """Go's int64(float64): toward zero (NaN and infinities are not expected here)."""
    return int(x) if math.isfinite(x) else 0


def _percent(amount: float, capacity: float) -> float:
    """amount·100 / capacity with Go's float division (x/0 is ±Inf, 0/0 NaN)."""
    if capacity == 0:
        return math.nan if amount == 0 else math.copysign(math.inf, amount)
    return amount * 100 / capacity


def is_low(node: NodeLoad, thresholds: Mapping[str, float]) -> bool:
    if node.unschedulable:
        return False
    return all(not (r in thresholds and node.use[r] >= thresholds[r]) for r in RESOURCES)


def is_high(node: NodeLoad, target: Mapping[str, float]) -> bool:
    return any(r in target and node.use[r] > target[r] for r in RESOURCES)


def _go_on(node: NodeLoad, room: Mapping[str, int], target: Mapping[str, float]) -> bool:
    if not any(r in target and node.use[r] >= target[r] for r in RESOURCES):
        return False
    return all(room[r] != 0 for r in RESOURCES)


def _pod_order(pod: tuple) -> tuple:
    task, priority, qos = pod[0], pod[1], pod[2]
    return (priority is not None, priority or 0, _QOS_RANK.get(qos, 1), task.key)


def victims(nodes: list[NodeLoad], thresholds: Mapping[str, float], target: Mapping[str, float]) -> list[Any]:
    low = [n for n in nodes if is_low(n, thresholds)]
    low_ids = {id(n) for n in low}
    high = [n for n in nodes if id(n) not in low_ids and is_high(n, target)]
    if not low or len(low) == len(nodes) or not high:
        return []
    room = {r: 0 for r in RESOURCES}
    for n in low:
        for r in RESOURCES:
            base = n.allocatable[r]
            room[r] += _go_int(target.get(r, 0.0) * base * 0.01) - _go_int(n.use[r] * base * 0.01)
    out = []
    for node in sorted(high, key=lambda n: (-(n.use[CPU] + n.use[MEMORY]), n.name)):
        for task, _, _, cpu, mem in sorted(node.pods, key=_pod_order):
            if not _go_on(node, room, target):
                break
            room[CPU] -= cpu
            room[MEMORY] -= mem
            node.use[CPU] -= _percent(cpu / 1000, node.capacity[CPU])
            node.use[MEMORY] -= _percent(mem, node.capacity[MEMORY])
            out.append(task)
    return out
