"""numa-aware's policy decisions (numa_policy.py) and CPU provider (numa_cpus.py), table-driven; the CPU
cases are upstream's cpu_mng_test.go (8 CPUs: NUMA node 0 = CPUs 0-3 on socket 0, cores 0-1; NUMA node 1 =
CPUs 4-7 on socket 1, cores 2-3)."""
from __future__ import annotations

import pytest

from vclite.scheduler.plugins import numa_cpus, numa_policy
from vclite.scheduler.plugins.numa_policy import Hint

N0, N1, BOTH = 0b01, 0b10, 0b11
TOPO = {c: numa_cpus.CPUInfo(c // 4, c // 4, c // 2) for c in range(8)}


def cpu(*hints: Hint) -> dict:
    return {"cpu": list(hints)}


@pytest.mark.parametrize("policy, providers, best, admit", [
    # single-numa-node: only preferred hints of one NUMA node count
    pytest.param("single-numa-node", [cpu(Hint(N0, True), Hint(N1, True), Hint(BOTH, False))], Hint(N0, True), True,
                 id="single-fits-on-node-0"),
    pytest.param("single-numa-node", [cpu(Hint(N1, True), Hint(BOTH, False))], Hint(N1, True), True,
                 id="single-fits-on-node-1-only"),
    pytest.param("single-numa-node", [cpu(Hint(BOTH, True))], Hint(BOTH, False), False,
                 id="single-needs-two-numa-nodes"),
    pytest.param("single-numa-node", [cpu(Hint(N0, False), Hint(BOTH, False))], Hint(BOTH, False), False,
                 id="single-not-preferred"),
    pytest.param("single-numa-node", [cpu()], Hint(BOTH, False), False, id="single-nothing-holds-it"),
    pytest.param("single-numa-node", [None], Hint(BOTH, True), True, id="single-no-preference"),
    pytest.param("single-numa-node", [cpu(Hint(N0, True), Hint(N1, True)), {"gpu": [Hint(N1, True)]}],
                 Hint(N1, True), True, id="single-two-resources-agree-on-node-1"),
    pytest.param("single-numa-node", [cpu(Hint(N0, True)), {"gpu": [Hint(N1, True)]}], Hint(BOTH, False), False,
                 id="single-two-resources-disagree"),
    # restricted: the best merge must be preferred
    pytest.param("restricted", [cpu(Hint(N1, True), Hint(BOTH, False))], Hint(N1, True), True,
                 id="restricted-preferred"),
    pytest.param("restricted", [cpu(Hint(BOTH, True))], Hint(BOTH, True), True, id="restricted-two-nodes-needed"),
    pytest.param("restricted", [cpu(Hint(BOTH, False))], Hint(BOTH, False), False,
                 id="restricted-only-a-wider-set-is-free"),
    pytest.param("restricted", [cpu()], Hint(BOTH, False), False, id="restricted-nothing-holds-it"),
    # best-effort: always admitted, with the best hint found
    pytest.param("best-effort", [cpu(Hint(BOTH, False))], Hint(BOTH, False), True, id="best-effort-not-preferred"),
    pytest.param("best-effort", [cpu()], Hint(BOTH, False), True, id="best-effort-nothing-holds-it"),
    pytest.param("best-effort", [cpu(Hint(N1, True), Hint(N0, True))], Hint(N0, True), True,
                 id="best-effort-tie-lower-mask"),
    # none (and a policy the plugin does not know): admitted without affinity
    pytest.param("none", [cpu()], Hint(None, False), True, id="none"),
    pytest.param("whatever", [cpu()], Hint(None, False), True, id="unknown-policy-acts-as-none"),
])
def test_policy_predicate(policy, providers, best, admit):
    assert numa_policy.predicate(policy, [0, 1], providers) == (best, admit)


def test_narrower_prefers_fewer_nodes_then_the_lower_mask():
    assert numa_policy.narrower(N1, BOTH) and not numa_policy.narrower(BOTH, N0)
    assert numa_policy.narrower(N0, N1) and not numa_policy.narrower(N1, N0)


@pytest.mark.parametrize("request_cpus, free, expected", [
    pytest.param(4, range(8), [Hint(N0, True), Hint(N1, True), Hint(BOTH, False)], id="test-1"),
    pytest.param(4, range(1, 8), [Hint(N1, True), Hint(BOTH, False)], id="test-2"),
    pytest.param(5, range(8), [Hint(BOTH, True)], id="test-3"),
    pytest.param(8, range(8), [Hint(BOTH, True)], id="test-4"),
    pytest.param(9, range(8), [], id="test-5"),
    pytest.param(4, range(2, 6), [Hint(BOTH, False)], id="test-6"),
])
def test_cpu_hints(request_cpus, free, expected):
    assert numa_cpus.cpu_hints(frozenset(free), TOPO, request_cpus) == expected


@pytest.mark.parametrize("request_cpus, free, best, expected", [
    pytest.param(4, range(8), Hint(N0, True), {0, 1, 2, 3}, id="test-1"),
    pytest.param(4, range(1, 8), Hint(N1, True), {4, 5, 6, 7}, id="test-2"),
    pytest.param(5, range(8), Hint(BOTH, True), {0, 1, 2, 3, 4}, id="test-3"),
    pytest.param(5, range(1, 8), Hint(BOTH, True), {1, 4, 5, 6, 7}, id="test-4"),
    pytest.param(8, range(1, 8), Hint(BOTH, True), set(), id="test-5-too-few"),
    pytest.param(3, range(8), Hint(None, False), {0, 1, 2}, id="no-affinity"),
])
def test_allocate(request_cpus, free, best, expected):
    container = {"name": "c", "resources": {"requests": {"cpu": str(request_cpus)}}}
    got = numa_cpus.allocate(container, best, TOPO, frozenset(), {"cpu": frozenset(free)})
    assert got == {"cpu": frozenset(expected)}


@pytest.mark.parametrize("resources, expected", [
    pytest.param({"requests": {"cpu": "4"}}, 4, id="whole"),
    pytest.param({"limits": {"cpu": "2"}}, 2, id="limit-only"),
    pytest.param({"requests": {"cpu": "1500m"}}, 0, id="fraction"),
    pytest.param({"requests": {"cpu": "2000m"}}, 2, id="whole-in-millis"),
    pytest.param({"requests": {"memory": "1Gi"}}, None, id="no-cpu"),
])
def test_guaranteed_cpus(resources, expected):
    assert numa_cpus.guaranteed_cpus({"resources": resources}) == expected


def test_reserved_cpus_are_never_offered():
    reserved = numa_cpus.reserved_cpus(TOPO, numa_cpus.quantity.parse("1500m"))   # rounded up: 2 CPUs
    assert reserved == {0, 1}
    hints = numa_cpus.hints({"resources": {"requests": {"cpu": "4"}}}, TOPO, reserved, {"cpu": frozenset(range(8))})
    assert hints == {"cpu": [Hint(N1, True), Hint(BOTH, False)]}


def test_a_cpu_walk_over_more_than_12_cores_sorts_as_gos_pdqsort():
    """2 sockets x 8 cores x 2 threads (CPU = thread*16 + core), 6 CPUs taken, 1 CPU asked: freeCPUs sorts the 15
    cores left with its comparator (not an order), which Go's sort.Slice puts through pdqsort beyond 12 items:
    core 0 first (lib/gosort.py's test traces it), so CPU 0 — an insertion sort put core 1 first (CPU 17)."""
    topo = {t * 16 + c: numa_cpus.CPUInfo(c // 8, c // 8, c) for t in range(2) for c in range(16)}
    taken = {1, 3, 19, 26, 27, 30}
    assert numa_cpus.take_by_topology(topo, [c for c in topo if c not in taken], 1) == {0}
