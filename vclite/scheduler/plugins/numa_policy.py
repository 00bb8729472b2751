"""numa-aware's topology policies: the kubelet topology manager's hint merging, as Volcano's copy of it
decides (plugins/numaaware/policy).

A hint is a set of NUMA nodes (a bitmask int; None: any NUMA node) and whether it is preferred. Each hint
provider (only the CPU one: numa_cpus.py) gives, per resource, the hints that can hold a container; the
policy merges one hint of each resource at a time (bitwise AND; preferred if all are) and keeps the best:
preferred over not, then the narrower (fewer NUMA nodes, then the lower mask). Admission by policy:
- `none`: nothing is merged; admitted, with no NUMA affinity;
- `best-effort`: admitted with the best hint, even one not preferred;
- `restricted`: admitted only when the best hint is preferred;
- `single-numa-node`: only preferred hints of one NUMA node (or of no preference) are merged; admitted
  only when the best is preferred.
A resource whose provider has no preference counts as one preferred any-NUMA hint; one with no possible
hint as one not-preferred any-NUMA hint. Pure functions.
"""
from __future__ import annotations

import itertools
from typing import Iterable, Mapping, NamedTuple

NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE = "none", "best-effort", "restricted", "single-numa-node"


class Hint(NamedTuple):
    affinity: int | None   # bitmask of NUMA node ids; None: no NUMA affinity
    preferred: bool


def mask(ids: Iterable[int]) -> int:
    out = 0
    for i in ids:
        out |= 1 << i
    return out


def bits(m: int) -> list[int]:
    """The NUMA node ids of a mask, ascending."""
    return [i for i in range(m.bit_length()) if m >> i & 1]


def count(m: int | None) -> int:
    return 0 if m is None else bin(m).count("1")


def narrower(a: int, b: int) -> bool:
    """bitmask.IsNarrowerThan: fewer NUMA nodes, or as many and the lower mask."""
    ca, cb = count(a), count(b)
    return a < b if ca == cb else ca < cb


# Per provider: resource -> its hints; a provider's None or {} means it has no preference at all, a
# resource's None that it has no preference for that resource, [] that nothing can hold it.
ProviderHints = Mapping[str, "list[Hint] | None"] | None


def filter_providers_hints(providers: list[ProviderHints]) -> list[list[Hint]]:
    out: list[list[Hint]] = []
    for hints in providers:
        if not hints:
            out.append([Hint(None, True)])
            continue
        for resource in hints:
            h = hints[resource]
            if h is None:
                out.append([Hint(None, True)])
            elif not h:
                out.append([Hint(None, False)])
            else:
                out.append(list(h))
    return out


def merge_permutation(numa_nodes: list[int], permutation: tuple[Hint, ...]) -> Hint:
    default = mask(numa_nodes)
    merged = default
    for hint in permutation:
        merged &= default if hint.affinity is None else hint.affinity
    return Hint(merged, all(h.preferred for h in permutation))


def merge_filtered_hints(numa_nodes: list[int], filtered: list[list[Hint]]) -> Hint:
    """The best merge of one hint per resource; {all NUMA nodes, not preferred} when none is better."""
    best = Hint(mask(numa_nodes), False)
    for permutation in itertools.product(*filtered):
        merged = merge_permutation(numa_nodes, permutation)
        if count(merged.affinity) == 0:
            continue
        if merged.preferred and not best.preferred:
            best = merged
            continue
        if not merged.preferred and best.preferred:
            continue
        assert merged.affinity is not None and best.affinity is not None
        if narrower(merged.affinity, best.affinity):
            best = merged
    return best


def _single_numa(filtered: list[list[Hint]]) -> list[list[Hint]]:
    return [[h for h in hints if h.preferred and (h.affinity is None or count(h.affinity) == 1)]
            for hints in filtered]


def predicate(policy: str, numa_nodes: list[int], providers: list[ProviderHints]) -> tuple[Hint, bool]:
    """(best hint, admitted) of the node's topology manager policy (an unknown policy acts as `none`)."""
    if policy == BEST_EFFORT:
        return merge_filtered_hints(numa_nodes, filter_providers_hints(providers)), True
    if policy == RESTRICTED:
        best = merge_filtered_hints(numa_nodes, filter_providers_hints(providers))
        return best, best.preferred
    if policy == SINGLE_NUMA_NODE:
        best = merge_filtered_hints(numa_nodes, _single_numa(filter_providers_hints(providers)))
        return best, best.preferred
    return Hint(None, False), True
