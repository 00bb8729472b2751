"""Resource lists: a pod's effective request (Kubernetes PodRequests + pods: 1), arithmetic with
missing keys as zero, and conversion to and from string ResourceLists."""
from __future__ import annotations

import fractions

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vclite.api import resources

F = fractions.Fraction
GI = 2**30


def c(requests=None, limits=None, restart=None, name="c"):
    """A container with the given requests / limits (and init-container restartPolicy)."""
    out = {"name": name, "image": "busybox"}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        out["resources"] = res
    if restart:
        out["restartPolicy"] = restart
    return out


@pytest.mark.parametrize("container, want", [
    pytest.param(c({"cpu": "500m", "memory": "1Gi"}), {"cpu": F(1, 2), "memory": F(GI)}, id="requests"),
    pytest.param(c(limits={"cpu": "2"}), {"cpu": F(2)}, id="limit-stands-in-for-missing-request"),
    pytest.param(c({"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}), {"cpu": F(1), "memory": F(GI)},
                 id="request-wins-limit-fills-gaps"),
    pytest.param(c(), {}, id="no-resources"),
    pytest.param(c({"cpu": 2, "nvidia.com/gpu": 1}), {"cpu": F(2), "nvidia.com/gpu": F(1)}, id="numbers"),
    pytest.param({"name": "x", "resources": {"requests": None}}, {}, id="null-requests"),
])
def test_container_requests(container, want):
    assert resources.container_requests(container) == want


def test_container_requests_bad_quantity_names_field_and_value():
    with pytest.raises(ValueError, match=r'spec.containers\[1\].resources.requests.cpu: invalid quantity "lots"'):
        resources.pod_requests({"containers": [c({"cpu": "1"}), c({"cpu": "lots"})]})


SPEC = {"containers": [c({"cpu": "500m", "memory": "1Gi"}), c({"cpu": "250m"}, name="d")]}
SUMMED = {"cpu": F(3, 4), "memory": F(GI), "pods": F(1)}


@pytest.mark.parametrize("pod, want", [
    pytest.param({}, {"pods": F(1)}, id="empty-still-one-pod"),
    pytest.param(SPEC, SUMMED, id="podspec-containers-summed"),
    pytest.param({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": SPEC}, SUMMED,
                 id="full-pod"),
    pytest.param({"metadata": {"labels": {"a": "b"}}, "spec": SPEC}, SUMMED, id="pod-template-spec"),
    pytest.param({"containers": [c({"cpu": "1"})], "initContainers": [c({"cpu": "3", "memory": "1Mi"})]},
                 {"cpu": F(3), "memory": F(2**20), "pods": F(1)}, id="init-container-larger"),
    pytest.param({"containers": [c({"cpu": "2", "memory": "1Gi"})],
                  "initContainers": [c({"cpu": "1", "memory": "2Gi"}), c({"cpu": "3"})]},
                 {"cpu": F(3), "memory": F(2 * GI), "pods": F(1)}, id="per-resource-max-over-init"),
    pytest.param({"containers": [c({"cpu": "1"})], "overhead": {"cpu": "100m", "memory": "10Mi"}},
                 {"cpu": F(11, 10), "memory": F(10 * 2**20), "pods": F(1)}, id="overhead-added"),
    pytest.param({"containers": [c({"cpu": "1"})],
                  "initContainers": [c({"cpu": "1"}, restart="Always"), c({"cpu": "3"})]},
                 {"cpu": F(4), "pods": F(1)}, id="sidecar-runs-beside-later-init"),
    pytest.param({"containers": [c({"cpu": "1"})],
                  "initContainers": [c({"cpu": "3"}), c({"cpu": "1"}, restart="Always")]},
                 {"cpu": F(3), "pods": F(1)}, id="sidecar-after-init"),
    pytest.param({"containers": [c({"cpu": "1"})], "initContainers": [c({"cpu": "500m"}, restart="Always")]},
                 {"cpu": F(3, 2), "pods": F(1)}, id="sidecar-adds-to-containers"),
    pytest.param({"containers": [c(limits={"cpu": "2"})]}, {"cpu": F(2), "pods": F(1)}, id="limits-fallback"),
    pytest.param({"containers": [c({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})],
                  "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "2"}}, "overhead": {"cpu": "100m"}},
                 {"cpu": F(41, 10), "memory": F(GI), "nvidia.com/gpu": F(1), "pods": F(1)},
                 id="pod-level-request-replaces-the-containers-sum-of-cpu-memory-only"),
])
def test_pod_requests(pod, want):
    assert resources.pod_requests(pod) == want


def test_pod_requests_does_not_mutate_its_argument():
    spec = {"containers": [c({"cpu": "1"})], "overhead": {"cpu": "1"}}
    before = repr(spec)
    resources.pod_requests(spec)
    assert repr(spec) == before


A = {"cpu": F(2), "memory": F(GI)}
B = {"cpu": F(1, 2), "nvidia.com/gpu": F(1)}


@pytest.mark.parametrize("fn, args, want", [
    pytest.param(resources.add, (A, B), {"cpu": F(5, 2), "memory": F(GI), "nvidia.com/gpu": F(1)}, id="add"),
    pytest.param(resources.sub, (A, B), {"cpu": F(3, 2), "memory": F(GI), "nvidia.com/gpu": F(-1)},
                 id="sub-may-go-negative"),
    pytest.param(resources.floor_zero, ({"cpu": F(-1), "memory": F(1)},), {"cpu": F(0), "memory": F(1)},
                 id="floor-zero"),
    pytest.param(resources.scale, (A, 3), {"cpu": F(6), "memory": F(3 * GI)}, id="scale"),
    pytest.param(resources.scale, (A, F(1, 2)), {"cpu": F(1), "memory": F(GI // 2)}, id="scale-fraction"),
    pytest.param(resources.maximum, (A, B), {"cpu": F(2), "memory": F(GI), "nvidia.com/gpu": F(1)}, id="maximum"),
    pytest.param(resources.minimum, (A, B), {"cpu": F(1, 2), "memory": F(0), "nvidia.com/gpu": F(0)},
                 id="minimum"),
    pytest.param(resources.add, ({}, {}), {}, id="add-empty"),
])
def test_arithmetic(fn, args, want):
    before = [dict(a) if isinstance(a, dict) else a for a in args]
    assert fn(*args) == want
    assert list(args) == before  # arguments untouched


@pytest.mark.parametrize("a, b, kwargs, want", [
    pytest.param({"cpu": F(1)}, {"cpu": F(2)}, {}, True, id="fits"),
    pytest.param({"cpu": F(2)}, {"cpu": F(2)}, {}, True, id="equal-fits"),
    pytest.param({"cpu": F(3)}, {"cpu": F(2)}, {}, False, id="too-big"),
    pytest.param({"cpu": F(1), "nvidia.com/gpu": F(1)}, {"cpu": F(2)}, {}, False, id="missing-in-b-is-zero"),
    pytest.param({"cpu": F(0), "nvidia.com/gpu": F(0)}, {}, {}, True, id="zero-request-fits-nothing"),
    pytest.param({}, {"cpu": F(1)}, {}, True, id="empty-fits"),
    pytest.param({"cpu": F(1), "pods": F(1)}, {"cpu": F(2)}, {}, False, id="pods-counted-by-default"),
    pytest.param({"cpu": F(1), "pods": F(1)}, {"cpu": F(2)}, {"ignore": ("pods",)}, True, id="ignore-pods"),
    pytest.param({"cpu": F(1), "memory": F(9)}, {"cpu": F(2), "memory": F(1)}, {"dims": ["cpu"]}, True,
                 id="dims-only"),
    pytest.param({"cpu": F(-1)}, {}, {}, True, id="negative-fits"),
])
def test_less_equal(a, b, kwargs, want):
    assert resources.less_equal(a, b, **kwargs) is want


@pytest.mark.parametrize("r, want", [
    pytest.param({"pods": F(1)}, True, id="only-pods"),
    pytest.param({}, True, id="empty"),
    pytest.param({"cpu": F(0), "memory": F(0), "pods": F(1)}, True, id="all-zero"),
    pytest.param({"cpu": F(1, 1000), "pods": F(1)}, False, id="some-cpu"),
    pytest.param({"nvidia.com/gpu": F(1)}, False, id="extended"),
])
def test_is_best_effort(r, want):
    assert resources.is_best_effort(r) is want


@pytest.mark.parametrize("r, want", [
    pytest.param({"cpu": F(1, 10), "pods": F(2)},
                 {"cpu": "100m", "requests.cpu": "100m", "pods": "2", "count/pods": "2"}, id="cpu-and-pods"),
    pytest.param({"memory": F(2 * GI)}, {"memory": "2Gi", "requests.memory": "2Gi"}, id="memory"),
    pytest.param({"nvidia.com/gpu": F(4)}, {"nvidia.com/gpu": "4", "requests.nvidia.com/gpu": "4"},
                 id="extended"),
    pytest.param({}, {}, id="empty"),
])
def test_to_quota_list(r, want):
    assert resources.to_quota_list(r) == want


def test_to_quota_list_counts_the_limits_of_cpu_memory_and_ephemeral_storage_only():
    """Kubernetes' PodUsageFunc: limits.cpu, limits.memory, limits.ephemeral-storage; no limits.<extended>."""
    limits = {"cpu": F(2), "memory": F(GI), "ephemeral-storage": F(GI), "nvidia.com/gpu": F(1)}
    assert resources.to_quota_list({"cpu": F(1), "pods": F(1)}, limits) == {
        "cpu": "1", "requests.cpu": "1", "pods": "1", "count/pods": "1",
        "limits.cpu": "2", "limits.memory": "1Gi", "limits.ephemeral-storage": "1Gi"}


@pytest.mark.parametrize("spec, want", [
    pytest.param({"containers": [c({"cpu": "1"}, {"cpu": "2"}), c(limits={"cpu": "1", "memory": "1Gi"})]},
                 {"cpu": F(3), "memory": F(GI)}, id="containers-summed"),
    pytest.param({"containers": [c({"cpu": "1"})]}, {}, id="requests-are-not-limits"),
    pytest.param({"containers": [c(limits={"cpu": "1"})], "initContainers": [c(limits={"cpu": "4"})]},
                 {"cpu": F(4)}, id="init-container-max"),
    pytest.param({"containers": [c(limits={"cpu": "1"})],
                  "initContainers": [c(limits={"cpu": "1"}, restart="Always"), c(limits={"cpu": "2"})]},
                 {"cpu": F(3)}, id="sidecar-added-and-under-later-init"),
    pytest.param({"containers": [c(limits={"cpu": "1"})], "overhead": {"cpu": "100m", "memory": "1Gi"}},
                 {"cpu": F(11, 10)}, id="overhead-only-on-limited"),
    pytest.param({"containers": [c(limits={"cpu": "1"})], "resources": {"limits": {"cpu": "3", "memory": "2Gi"}}},
                 {"cpu": F(3), "memory": F(2 * GI)}, id="pod-level-limits"),
])
def test_pod_limits(spec, want):
    assert resources.pod_limits(spec) == want


@pytest.mark.parametrize("d, want", [
    pytest.param({"cpu": "4", "memory": "8Gi", "pods": "110"},
                 {"cpu": F(4), "memory": F(8 * GI), "pods": F(110)}, id="node-allocatable"),
    pytest.param({"cpu": "100m", "requests.cpu": "100m", "pods": "2", "count/pods": "2"},
                 {"cpu": F(1, 10), "pods": F(2)}, id="quota-duplicates-ignored"),
    pytest.param({"requests.nvidia.com/gpu": "1", "count/pods": "3"}, {"nvidia.com/gpu": F(1), "pods": F(3)},
                 id="quota-name-stands-in-when-plain-missing"),
    pytest.param({"cpu": "1", "limits.cpu": "2", "limits.memory": "1Gi"}, {"cpu": F(1)}, id="limits-ignored"),
    pytest.param({"cpu": 2}, {"cpu": F(2)}, id="number-values"),
    pytest.param(None, {}, id="none"),
    pytest.param({}, {}, id="empty"),
])
def test_from_resource_list(d, want):
    assert resources.from_resource_list(d) == want


def test_from_resource_list_bad_value_names_field():
    with pytest.raises(ValueError, match=r'spec.capability.cpu: invalid quantity "x"'):
        resources.from_resource_list({"cpu": "x"}, "spec.capability")


def test_format_list():
    assert resources.format_list({"cpu": F(3, 2), "memory": F(GI), "pods": F(1)}) == {
        "cpu": "1500m", "memory": "1Gi", "pods": "1"}


_milli = st.integers(min_value=0, max_value=10**7).map(lambda m: F(m, 1000))
_bytes = st.integers(min_value=0, max_value=2**40).map(F)
_res = st.fixed_dictionaries({}, optional={"cpu": _milli, "memory": _bytes, "pods": st.integers(0, 100).map(F),
                                          "nvidia.com/gpu": st.integers(0, 8).map(F)})


@given(_res)
def test_quota_list_round_trips(r):
    assert resources.from_resource_list(resources.to_quota_list(r)) == r


@given(_res, _res)
def test_add_then_sub_restores_and_fits(a, b):
    total = resources.add(a, b)
    assert resources.less_equal(a, total) and resources.less_equal(b, total)
    back = resources.sub(total, b)
    assert all(back.get(k, 0) == a.get(k, 0) for k in set(back) | set(a))
