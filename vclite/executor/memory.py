"""A container's memory limit on the local executor: what its processes use, and when it is over.

On a node, the kernel's cgroup kills a container that uses more memory than `resources.limits.memory`
and the kubelet reports it `OOMKilled` (exit code 137). Here a container is the process group its
process leads (runner.py), so the executor adds up the resident memory of the group's processes —
read from /proc (usage.py), one pass over it for every limited container — at its half-second look at running
containers (logtimes.SAMPLE_INTERVAL), and kills a group that is over its limit (runner.PodRunner.oom_kill).
A peak shorter than that interval goes unseen; containers without a limit cost nothing.

Pure functions but `resident_by_group`, which reads /proc. Must not: know pods.
"""
from __future__ import annotations

import math
from typing import Any, Collection, Iterable, Mapping

from vclite.api import quantity
from vclite.executor import usage

PAGE_SIZE = usage.PAGE_SIZE


def limit_of(container: Mapping[str, Any]) -> int | None:
    """`resources.limits.memory` in bytes (rounded up), or None without one (or one admission let by
    that is not a quantity)."""
    value = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    if value is None:
        return None
    try:
        return math.ceil(quantity.parse(value))
    except (ValueError, TypeError):
        return None


def resident_by_group(groups: Iterable[int], proc: str = "/proc", wrapped: Collection[int] = ()) -> dict[int, int]:
    """Resident bytes of every process in each of `groups` (process group ids), summed per group; the leader of a
    group in `wrapped`, the exit journal's wrapper shell, left out (usage.add)."""
    return {g: u.resident for g, u in usage.by_group(groups, proc, wrapped).items()}


def over_limit(used: Mapping[int, int], limits: Mapping[int, int]) -> list[int]:
    """The groups whose resident memory is above their limit."""
    return sorted(g for g, limit in limits.items() if used.get(g, 0) > limit)


def message(limit: int) -> str:
    """What the container's terminated state says (the kubelet says nothing; the limit helps)."""
    return f"the container's processes used more than its memory limit ({quantity.format(limit, 'memory')})"
