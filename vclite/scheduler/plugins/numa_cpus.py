"""numa-aware's CPU hint provider: which NUMA nodes can hold a container's whole CPUs, and which CPUs it
gets (plugins/numaaware/provider/cpumanager, Volcano's copy of the kubelet's static CPU manager).

`CPUs` maps a CPU id to its (numa, socket, core) as a Numatopology's `spec.cpuDetail` gives it (core
ids are unique per socket only, and upstream's arithmetic keeps that). A container counts only when
its cpu request is a whole number (`guaranteed_cpus`); the kubelet's reserved CPUs (`resReserved.cpu`,
rounded up) are taken first, by the same topology walk, and never offered.
- `hints`: every set of NUMA nodes whose free CPUs hold the request, smallest sets first; preferred
  when its size is the smallest whose CPUs (free or not) could ever hold it.
- `allocate`: the CPUs of the best hint's NUMA nodes first, then any; `take_by_topology` walks whole
  sockets, then whole cores, then single CPUs, as upstream's copy does — including its quirks: a
  "free socket" is a socket id that is also a free CPU id (and a "free core" likewise), a socket or
  core taken whole can give more CPUs than asked, and its sorts use comparators that are not orders
  (lib/gosort.py replays Go's sort.Slice step for step: insertion sort up to 12 items, its
  pattern-defeating quicksort beyond, which orders such comparators otherwise). A CPU id a set names
  but cpuDetail lacks is on NUMA node 0, as Go's zero value.
Pure functions.
"""
from __future__ import annotations

import itertools
import math
from typing import Iterable, Mapping, NamedTuple

from vclite.api import quantity, resources
from vclite.lib.gosort import go_sort
from vclite.scheduler.plugins import numa_policy

CPU = "cpu"


class CPUInfo(NamedTuple):
    numa: int
    socket: int
    core: int


CPUs = Mapping[int, CPUInfo]
_ZERO = CPUInfo(0, 0, 0)


class NoCPUs(Exception):
    """take_by_topology could not find the CPUs asked for."""


def _in_sockets(details: CPUs, socket: int) -> set[int]:
    return {c for c, d in details.items() if d.socket == socket}


def _in_cores(details: CPUs, core: int) -> set[int]:
    return {c for c, d in details.items() if d.core == core}


def take_by_topology(topo: CPUs, available: Iterable[int], n: int) -> frozenset[int]:
    """`n` CPUs of `available`, sockets then cores then threads (see the module docstring), or NoCPUs."""
    n_cpus = len(topo)
    n_cores = len({(d.socket, d.core) for d in topo.values()})
    n_sockets = len({d.socket for d in topo.values()})
    per_core = n_cpus // n_cores if n_cores else 0
    per_socket = n_cpus // n_sockets if n_sockets else 0
    avail = set(available)
    details = {c: d for c, d in topo.items() if c in avail}
    result: set[int] = set()
    needed = n

    def take(cpus: set[int]) -> None:
        nonlocal details, needed
        result.update(cpus)
        details = {c: d for c, d in details.items() if c not in result}
        needed -= len(cpus)

    if needed < 1:
        return frozenset(result)
    if needed > len(details):
        raise NoCPUs("not enough cpus available to satisfy request")
    if needed >= per_socket:
        for s in sorted({d.socket for d in details.values()} & set(details)):
            take(_in_sockets(details, s))
            if needed < 1:
                return frozenset(result)
            if needed < per_socket:
                break
    if needed >= per_core:
        for c in _free_cores(details):
            take(_in_cores(details, c))
            if needed < 1:
                return frozenset(result)
            if needed < per_core:
                break
    for c in _free_cpus(topo, details, result):
        if needed >= 1:
            take({c})
        if needed < 1:
            return frozenset(result)
    raise NoCPUs("failed to allocate cpus")


def _free_cores(details: CPUs) -> list[int]:
    cpu_ids = set(details)

    def cores_of(s: int) -> set[int]:
        return {d.core for d in details.values() if d.socket == s} & cpu_ids

    sockets = go_sort(sorted({d.socket for d in details.values()}),   # (Go: map order)
                      lambda i, j: len(cores_of(i)) < len(cores_of(j)) or i < j)
    return [c for s in sockets for c in sorted(cores_of(s))]


def _free_cpus(topo: CPUs, details: CPUs, result: set[int]) -> list[int]:
    def facts(core: int) -> tuple[int, int, int, int]:
        socket = topo[min(_in_cores(topo, core))].socket
        return (len(_in_sockets(topo, socket) & result), len(_in_sockets(details, socket)),
                len(_in_cores(details, core)), socket)

    def less(i: int, j: int) -> bool:
        (i_colo, i_free, i_core_free, i_socket), (j_colo, j_free, j_core_free, j_socket) = facts(i), facts(j)
        return (i_colo > j_colo or i_free < j_free or i_core_free < j_core_free or i_socket < j_socket
                or i < j)

    cores = go_sort(sorted({d.core for d in details.values()}), less)
    return [c for core in cores for c in sorted(_in_cores(details, core))]


def guaranteed_cpus(container: Mapping) -> int | None:
    """The container's cpu request if it is a whole number; 0 if not; None without a cpu request."""
    try:
        requests = resources.container_requests(container)
    except ValueError:
        return 0
    q = requests.get(CPU)
    if q is None:
        return None
    return int(q) if q.denominator == 1 else 0


def reserved_cpus(topo: CPUs, reserved: quantity.Fraction | None) -> frozenset[int]:
    """The CPUs the kubelet keeps for itself: the reservation rounded up, taken by topology."""
    if reserved is None:
        return frozenset()
    n = math.ceil(math.ceil(reserved * 1000) / 1000)
    try:
        return take_by_topology(topo, topo.keys(), n)
    except NoCPUs:
        return frozenset()


def cpu_hints(available: frozenset[int], topo: CPUs, request: int) -> list[numa_policy.Hint]:
    """generateCPUTopologyHints: the NUMA node sets whose free CPUs hold `request`."""
    numa_ids = sorted({d.numa for d in topo.values()})
    min_size = len(numa_ids)
    found: list[int] = []
    for size in range(1, len(numa_ids) + 1):
        for combo in itertools.combinations(numa_ids, size):
            members = set(combo)
            if sum(1 for d in topo.values() if d.numa in members) >= request and size < min_size:
                min_size = size
            if sum(1 for c in available if topo.get(c, _ZERO).numa in members) >= request:
                found.append(numa_policy.mask(combo))
    return [numa_policy.Hint(m, numa_policy.count(m) == min_size) for m in found]


def hints(container: Mapping, topo: CPUs, reserved: frozenset[int],
          free: Mapping[str, frozenset[int]]) -> dict[str, list[numa_policy.Hint]] | None:
    """The provider's hints for one container (None: no preference)."""
    request = guaranteed_cpus(container)
    if not request or CPU not in free:
        return None
    return {CPU: cpu_hints(free[CPU] - reserved, topo, request)}


def allocate(container: Mapping, best: numa_policy.Hint, topo: CPUs, reserved: frozenset[int],
             free: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """The container's CPUs: of the best hint's NUMA nodes first, then any; none when they do not suffice."""
    request = guaranteed_cpus(container) or 0
    available = free.get(CPU, frozenset()) - reserved
    result: frozenset[int] = frozenset()
    try:
        if best.affinity is not None:
            nodes = set(numa_policy.bits(best.affinity))
            aligned = {c for c in available if c in topo and topo[c].numa in nodes}
            result = take_by_topology(topo, aligned, min(request, len(aligned)))
        result = result | take_by_topology(topo, available - result, request - len(result))
    except NoCPUs:
        return {CPU: frozenset()}
    return {CPU: result}
