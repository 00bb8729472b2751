"""Dims vectors and the tolerant comparisons (Python-float fast path = numpy's answer)."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from vclite.api import quantity
from vclite.scheduler.framework import dims as dims_mod

INF, NAN = math.inf, math.nan


def _numpy_less_equal(a, b, mask=None):
    ok = a <= b + dims_mod.TOLERANCE
    return bool(ok.all() if mask is None else ok[mask].all())


@pytest.mark.parametrize("a, b, mask, want", [
    pytest.param([1, 2, 3], [1, 2, 3], None, True, id="equal"),
    pytest.param([1.05, 2, 3], [1, 2, 3], None, True, id="within tolerance"),
    pytest.param([1.2, 2, 3], [1, 2, 3], None, False, id="beyond tolerance"),
    pytest.param([5, 2, 3], [1, INF, 3], [False, True, True], True, id="masked out"),
    pytest.param([5, 2, 3], [INF, INF, INF], None, True, id="+inf always fits"),
    pytest.param([NAN, 0, 0], [1, 1, 1], None, False, id="NaN never fits"),
    pytest.param([0, 0, 0], [NAN, 1, 1], None, False, id="NaN bound"),
])
def test_less_equal(a, b, mask, want):
    a, b = np.array(a, dtype=float), np.array(b, dtype=float)
    m = None if mask is None else np.array(mask)
    assert dims_mod.less_equal(a, b, m) is want
    assert _numpy_less_equal(a, b, m) is want


def test_less_equal_matches_numpy_on_random_vectors():
    rng = random.Random(3)
    for _ in range(2000):
        n = rng.randint(1, 6)
        a = np.array([rng.choice([0, 0.05, 1, 2, 1e9, INF]) for _ in range(n)])
        b = np.array([rng.choice([0, 1, 1.05, 2, 1e9, INF]) for _ in range(n)])
        mask = np.array([rng.random() < 0.7 for _ in range(n)])
        assert dims_mod.less_equal(a, b) == _numpy_less_equal(a, b)
        assert dims_mod.less_equal(a, b, mask) == _numpy_less_equal(a, b, mask)


@pytest.mark.parametrize("values, want", [
    pytest.param({"cpu": 0, "memory": 0}, True, id="zero"),
    pytest.param({"cpu": 0, "memory": 0, "pods": 5}, True, id="pods do not count"),
    pytest.param({"cpu": "1m"}, False, id="one millicore"),
    pytest.param({"nvidia.com/gpu": "1"}, False, id="a scalar resource"),
])
def test_is_empty(values, want):
    d = dims_mod.Dims(["nvidia.com/gpu"])
    v = d.vector({k: quantity.parse(x) for k, x in values.items()})
    assert dims_mod.is_empty(v, d) is want
    assert bool((v[d.not_pods] < dims_mod.TOLERANCE).all()) is want


@pytest.mark.parametrize("name, value, want", [
    pytest.param("cpu", "500m", 500, id="millicores"),
    pytest.param("cpu", "0.0001", 1, id="rounded up to a millicore"),
    pytest.param("memory", "1Gi", 2**30, id="bytes"),
    pytest.param("memory", "1.5", 2, id="bytes rounded up"),
    pytest.param("pods", 3, 3, id="an int"),
    pytest.param("example.com/foo", "2", 2000, id="scalar in thousandths"),
])
def test_vector_rounds_up_exactly(name, value, want):
    d = dims_mod.Dims([name])
    assert d.vector({name: quantity.parse(value)})[d.index[name]] == want
