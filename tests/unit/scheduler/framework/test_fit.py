"""Fit checks over node columns and the per-node reason histogram."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import fit, snapshot

from .. import objects


def _nodes():
    snap = snapshot.build(objects.state(nodes=[objects.node("a", cpu="1", mem="4Gi", pods="1"),
                                               objects.node("b", cpu="4", mem="1Gi", pods="10"),
                                               objects.node("c", cpu="8", mem="16Gi", pods="10")]))
    return snap.dims, snap.nodes


@pytest.mark.parametrize("cpu, mem, want_reasons, want_fits", [
    pytest.param(2000, 2**31, {"Insufficient cpu": [True, False, False], "Insufficient memory": [False, True, False]},
                 [False, False, True], id="a short of cpu, b short of memory"),
    pytest.param(500, 2**20, {}, [True, True, True], id="fits everywhere"),
    pytest.param(6000, 2**35, {"Insufficient cpu": [True, True, False], "Insufficient memory": [False, False, True]},
                 [False, False, False], id="each node charged with its first short dimension only"),
])
def test_resource_fit(cpu, mem, want_reasons, want_fits):
    dims, nodes = _nodes()
    req = np.array([cpu, mem, 1.0])
    f = fit.resource_fit(req, nodes, nodes.allocatable)
    assert {r: list(m) for r, m in f.reasons} == want_reasons
    assert list(fit.fits(req, nodes.allocatable)) == want_fits


def test_a_full_node_is_insufficient_pods():
    """Volcano counts `pods` as a scalar resource every task requests one of (pod_info.go)."""
    dims, nodes = _nodes()
    nodes.idle[0, dims.pods] = 0
    f = fit.resource_fit(np.array([1.0, 1.0, 1.0]), nodes, nodes.idle)
    assert [(r, list(m)) for r, m in f.reasons] == [("Insufficient pods", [True, False, False])]


def test_histogram_charges_each_node_to_its_first_failing_filter():
    n = 3
    first = fit.Failure((("Insufficient cpu", np.array([True, True, False])),
                         ("Insufficient memory", np.array([True, False, False]))))
    second = fit.Failure((("node(s) were unschedulable", np.array([True, True, True])),))
    errors = fit.fit_errors([first, second], n)
    assert errors.histogram == {"Insufficient cpu": 2, "Insufficient memory": 1, "node(s) were unschedulable": 1}
    assert errors.error() == ("0/3 nodes are unavailable: 1 Insufficient memory, 1 node(s) were unschedulable, "
                              "2 Insufficient cpu.")
    assert list(fit.feasible([first, second], n)) == [False, False, False]


def test_too_big_hint():
    dims, nodes = _nodes()
    assert fit.too_big_hint(np.array([64000, 2**30, 1]), nodes) == "pod needs cpu 64, but the largest node has 8"
    assert fit.too_big_hint(np.array([1000, 2**36, 1]), nodes) == "pod needs memory 64Gi, but the largest node has 16Gi"
    assert fit.too_big_hint(np.array([1000, 2**30, 1]), nodes) == ""
