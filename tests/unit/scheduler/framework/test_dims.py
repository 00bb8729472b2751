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


# ---- Python-float forms of the per-task quota checks and shares = their numpy formulations ----------------
_VALUES = [0.0, 0.05, 0.1, 1.0, 500.0, 999.95, 1000.0, 2.0**30, INF, -INF, NAN, -0.0, 1e-300]


def _vectors(rng, n=3):
    return np.array([rng.choice(_VALUES) for _ in range(n)], dtype=np.float64)


@pytest.mark.parametrize("seed", range(40))
def test_python_float_forms_answer_as_numpy(seed):
    """within / exceeds (proportion's Allocatable and JobEnqueueable, overcommit's) and the shares of proportion
    and drf, on values with tolerances, infinities, NaNs and signed zeros: the numpy formulation's answers."""
    from vclite.scheduler.plugins import drf, proportion
    rng = random.Random(seed)
    d = dims_mod.Dims()
    with np.errstate(all="ignore"):
        for _ in range(200):
            base, extra, limit = _vectors(rng), _vectors(rng), _vectors(rng)
            cols = (extra > 0) & d.not_pods
            assert dims_mod.within(base.tolist(), extra.tolist(), limit.tolist(), d.pods) == \
                _numpy_less_equal(base + extra, limit, cols)
            assert dims_mod.exceeds(base.tolist(), extra.tolist(), limit.tolist(), d.pods) == \
                bool((cols & (base + extra > limit + dims_mod.TOLERANCE)).any())
            keep = limit >= dims_mod.TOLERANCE
            want = float((base[keep] / limit[keep]).max()) if keep.any() else 0.0
            got = proportion.share(base, limit)
            assert got == want or (got != got and want != want)
            want = max(float((base * limit).max(initial=0.0)), 0.0)
            got = drf._share(base, limit)
            assert got == want or (got != got and want != want)
