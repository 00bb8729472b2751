"""Volcano's Numatopology (nodeinfo.volcano.sh/v1alpha1): one per node, named after it, written by Volcano's
resource-exporter; field names and cpuset strings (pure).

`spec.policies` maps `CPUManagerPolicy` and `TopologyManagerPolicy` to the kubelet's policies (`static`,
`none`, `best-effort`, `restricted`, `single-numa-node`); `spec.numares.<resource>` holds `allocatable` (a
cpuset string such as `0-3,8`: the CPUs the kubelet can still give exclusively) and `capacity`;
`spec.cpuDetail.<cpu id>` the CPU's `numa`, `socket` and `core` (core ids are unique per socket only);
`spec.resReserved.<resource>` a quantity (the kubelet's reservation); `spec.podAllocations` the pods the
kubelet has pinned (uid, name, namespace, per-container allocations).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"
_ITEM = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")


def parse_cpuset(text: str) -> frozenset[int]:
    """A Linux cpuset list (`0-3,8`; `` is empty), as k8s.io/utils/cpuset.Parse reads it, or ValueError."""
    if text == "":
        return frozenset()
    out: set[int] = set()
    for part in text.split(","):
        m = _ITEM.match(part)
        if m is None:
            raise ValueError(f"invalid cpuset item {part!r} (expected N or N-M, comma-separated: `0-3,8`)")
        start = int(m.group(1))
        end = int(m.group(2)) if m.group(2) is not None else start
        if start > end:
            raise ValueError(f"invalid range {part!r} ({start} > {end})")
        out.update(range(start, end + 1))
    return frozenset(out)


def cpu_id(key: Any) -> int | None:
    """A `spec.cpuDetail` key as the CPU id it names (ASCII digits only, as Go's strconv.Atoi), or None."""
    text = str(key)
    return int(text) if re.fullmatch(r"[0-9]+", text) else None


def format_cpuset(cpus: Iterable[int]) -> str:
    """The cpuset list of `cpus` (`0-3,8`), ranges merged as cpuset.String writes them."""
    ids = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)


def spec(obj: Any) -> dict:
    value = obj.get("spec") if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}
