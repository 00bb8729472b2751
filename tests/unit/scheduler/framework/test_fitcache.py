"""Session memos over node rows: after any sequence of placements and removals they give what a
full recomputation gives (fit masks, row-local scores, the best idle-fitting node)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import fit, fitcache, nodes as nodes_mod
from vclite.scheduler.framework import tasks as tasks_mod

S = tasks_mod.TaskStatus


def _nodes(n, rng):
    objs = [{"metadata": {"name": f"n{i:03d}"}, "status": {"allocatable": {
        "cpu": str(rng.choice([2, 4, 8])), "memory": f"{rng.choice([4, 8, 16])}Gi", "pods": "10"}}} for i in range(n)]
    return nodes_mod.NodeState(dims_mod.Dims(), objs)


def _reqs(rng, k):
    return [np.array([rng.choice([0, 500, 1000, 2000]), rng.choice([0, 2**30, 2**31]), 1.0]) for _ in range(k)]


def _mutate(nodes, rng, placed, steps):
    """Random add_task / remove_task (all statuses, pipelines and releases included)."""
    for _ in range(steps):
        if placed and rng.random() < 0.4:
            row, req, status = placed.pop(rng.randrange(len(placed)))
            nodes.remove_task(row, req, status)
        else:
            row, req = rng.randrange(len(nodes)), np.array([rng.choice([250, 1000]), rng.choice([2**28, 2**30]), 1.0])
            status = rng.choice([S.ALLOCATED, S.PIPELINED, S.RELEASING, S.RUNNING])
            nodes.add_task(row, req, status)
            placed.append((row, req, status))


def _score(nodes):
    def fn(task, rows):   # row-local: a function of each row's own books and the request
        return (nodes.idle[rows, 0] - task[0]) * 3 + nodes.used[rows, 1] / 2**20 - nodes.pipelined[rows, 0]
    return fn


@pytest.mark.parametrize("n, steps", [
    pytest.param(40, 1, id="one change between looks (Python rows)"),
    pytest.param(40, 7, id="a few changes"),
    pytest.param(40, 30, id="many changes (full recomputation)"),
    pytest.param(1, 3, id="a single node"),
])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_memos_equal_recomputation(n, steps, seed):
    rng = random.Random(seed)
    nodes = _nodes(n, rng)
    fits, rows, best = fitcache.FitCache(nodes), fitcache.RowCache(nodes, _score(nodes)), \
        fitcache.BestCache(nodes, _score(nodes))
    reqs = _reqs(rng, 4)
    placed: list = []
    for _ in range(25):
        _mutate(nodes, rng, placed, steps)
        for req in rng.sample(reqs, 3):
            future_ok, idle_ok = fits.masks(req)
            np.testing.assert_array_equal(future_ok, fit.fits(req, nodes.future_idle()))
            np.testing.assert_array_equal(idle_ok, fit.fits(req, nodes.idle))
            everything = np.arange(len(nodes))
            want = _score(nodes)(req, everything)
            np.testing.assert_array_equal(rows.get(req.tobytes(), req), want)
            ok = idle_ok & future_ok
            expected = int(np.flatnonzero(ok)[np.argmax(want[ok])]) if ok.any() else None
            assert best.best(req, "k", req) == expected


def test_repeated_rows_in_the_change_log_are_harmless():
    rng = random.Random(7)
    nodes = _nodes(8, rng)
    cache = fitcache.FitCache(nodes)
    req = np.array([1000.0, 2.0**30, 1.0])
    cache.masks(req)
    for _ in range(3):
        nodes.add_task(2, req, S.ALLOCATED)
    nodes.remove_task(2, req, S.ALLOCATED)
    np.testing.assert_array_equal(cache.masks(req)[0], fit.fits(req, nodes.future_idle()))


def test_a_volatile_key_is_recomputed_in_full_when_its_version_moves():
    """Within one version a Volatile key's memo is patched on the changed rows only; a new version
    recomputes every row (the values also depend on something outside the row) and keeps one entry."""
    rng = random.Random(3)
    nodes = _nodes(40, rng)
    outside = [0.0]
    asked: list[int] = []

    def fn(task, rows):
        asked.append(len(rows))
        return nodes.idle[rows, 0] + outside[0]

    cache = fitcache.RowCache(nodes, fn)
    req = np.array([1000.0, 2.0**30, 1.0])
    cache.get(fitcache.Volatile("k", 0), req)
    nodes.add_task(5, req, S.ALLOCATED)
    np.testing.assert_array_equal(cache.get(fitcache.Volatile("k", 0), req), nodes.idle[:, 0])
    assert asked == [40, 1]
    outside[0] = 7.0
    np.testing.assert_array_equal(cache.get(fitcache.Volatile("k", 1), req), nodes.idle[:, 0] + 7.0)
    assert asked == [40, 1, 40] and len(cache._entries) == 1


@pytest.mark.parametrize("steps", [1, 7, 30])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_with_a_scalar_form_equals_recomputation(steps, seed):
    """BestCache given the function's scalar form (`row_of`) patches a few changed rows with it and picks
    what a full recomputation picks; a key without a scalar form (None) takes the array path."""
    rng = random.Random(seed)
    nodes = _nodes(40, rng)
    asked: list = []

    def row_of(key):
        asked.append(key)
        if key[0] == 0:
            return None   # (no scalar form for this key)
        return lambda r: (nodes.idle.item(r, 0) - key[0]) * 3 + nodes.used.item(r, 1) / 2**20 - \
            nodes.pipelined.item(r, 0)

    best = fitcache.BestCache(nodes, _score(nodes), row_of)
    reqs = _reqs(rng, 4)
    placed: list = []
    for _ in range(25):
        _mutate(nodes, rng, placed, steps)
        for req in rng.sample(reqs, 3):
            ok = fit.fits(req, nodes.idle) & fit.fits(req, nodes.future_idle())
            want = _score(nodes)(req, np.arange(len(nodes)))
            expected = int(np.flatnonzero(ok)[np.argmax(want[ok])]) if ok.any() else None
            assert best.best(req, tuple(req.tolist()), req) == expected
    assert sorted(set(asked)) == sorted(asked)   # (asked once per entry)


def test_a_scalar_form_is_only_for_keyed_node_order_functions():
    from vclite.scheduler.framework import hooks
    reg = hooks.Registrar(hooks.Hooks(1), 0, "p", lambda flag: True)
    with pytest.raises(ValueError, match="row= is only for"):
        reg.add(hooks.Point.NODE_ORDER, lambda t, rows: 0.0, row=lambda key: None)
    with pytest.raises(ValueError, match="row= is only for"):
        reg.add(hooks.Point.PREDICATE, lambda t, nodes: [], row=lambda key: None)
    fn, form = (lambda t, rows: 0.0), (lambda key: None)
    assert reg.add(hooks.Point.NODE_ORDER, fn, key=lambda t: 1, row=form)
    assert reg._hooks.row_form(fn) is form and reg._hooks.row_form(lambda t, rows: 0.0) is None
