"""numa-aware's pure parts: the node score's normalisation (design doc numa-aware.md's example) and how a
Numatopology is read."""
from __future__ import annotations

import pytest

from vclite.scheduler.plugins import numa_aware, numa_cpus


@pytest.mark.parametrize("counts, scores", [
    pytest.param([1, 2, 4], [75, 50, 0], id="design-doc-example"),   # × weight 10: 750, 500, 0
    pytest.param([1, 1], [0, 0], id="all-alike"),
    pytest.param([0, 0], [100, 100], id="no-cpus-chosen"),
    pytest.param([1, 3], [67, 0], id="integer-division"),
])
def test_normalize_reversed(counts, scores):
    assert numa_aware.normalize_reversed(counts) == scores


def test_a_numatopology_is_read_as_volcanos_cache_reads_it():
    info = numa_aware.node_numa({"metadata": {"name": "n"}, "spec": {
        "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "restricted"},
        "numares": {"cpu": {"allocatable": "0-2,5", "capacity": 8}},
        "cpuDetail": {"0": {"numa": 0}, "5": {"numa": 1, "socket": 1, "core": 3}},
        "resReserved": {"cpu": "500m"},
        "podAllocations": [{"uid": "u"}]}})
    assert info.free == {"cpu": frozenset({0, 1, 2, 5})}
    assert info.cpus == {0: numa_cpus.CPUInfo(0, 0, 0), 5: numa_cpus.CPUInfo(1, 1, 3)}
    assert info.numa_nodes == [0, 1] and info.reserved == {0}
    assert numa_aware._listed(info.allocated_pods, "u", "ns", "p")
    assert not numa_aware._listed(info.allocated_pods, "v", "ns", "p")


def test_a_cpu_id_of_non_ascii_digits_is_skipped_not_a_traceback():
    """A Numatopology the scheduler is handed unadmitted (a watch of a real cluster) may hold any key: one
    that str.isdigit() accepts but int() does not ("²") raised out of the session."""
    info = numa_aware.node_numa({"metadata": {"name": "n"}, "spec": {
        "cpuDetail": {"0": {"numa": 0}, "\u00b2": {"numa": 1}, "\u0663": {"numa": 1}}}})
    assert info.cpus == {0: numa_cpus.CPUInfo(0, 0, 0)}
