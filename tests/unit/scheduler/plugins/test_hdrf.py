"""hdrf: the queue tree of hierarchical DRF — weights as Volcano reads them, saturation, the rescaling of
children to the least dominant share, and the queue comparison (plugins/drf/drf.go, docs/design/hdrf.md)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from vclite.scheduler.plugins import hdrf

TOTAL = np.array([10.0, 10.0])   # two resources: "cpu" and "gpu" of the design's examples
BIG = np.array([100.0, 100.0])


def v(cpu, gpu):
    return np.array([cpu, gpu], dtype=float)


@pytest.mark.parametrize("text, want", [
    ("8", 8.0), ("2.5", 2.5), ("0.5", 1.0), ("0", 1.0), ("-3", 1.0), ("1e2", 100.0), ("0x10p0", 16.0),
    ("x", 1.0), ("", 1.0), ("1_0", 1.0),
])
def test_weight_as_volcano_reads_it(text, want):
    assert hdrf.weight_of(text) == want


def test_nan_weight_stays_nan():
    assert math.isnan(hdrf.weight_of("NaN"))


@pytest.mark.parametrize("annotations, parts, weights", [
    ({}, [], []),
    ({hdrf.HIERARCHY: "root/eng/prod", hdrf.HIERARCHY_WEIGHTS: "1/2/8"}, ["eng", "prod"], [2.0, 8.0]),
    ({hdrf.HIERARCHY: "top/eng", hdrf.HIERARCHY_WEIGHTS: "1/3"}, ["eng"], [3.0]),
    ({hdrf.HIERARCHY: "root/eng/prod", hdrf.HIERARCHY_WEIGHTS: "1/2"}, ["eng", "prod"], [2.0, 1.0]),
    ({hdrf.HIERARCHY_WEIGHTS: "1/2"}, [], []),
])
def test_paths_of_a_queue(annotations, parts, weights):
    assert hdrf.paths_of(annotations) == (parts, weights)


def tree(jobs, total=TOTAL, allocated_in_all=None):
    """jobs: (uid, path, weights, allocated, request)."""
    t = hdrf.Tree(total)
    for uid, path, weights, alloc, req in jobs:
        t.add_job(uid, path, weights, alloc, req)
    t.refresh(sum((j[3] for j in jobs), np.zeros(2)) if allocated_in_all is None else allocated_in_all)
    return t


@pytest.mark.parametrize("alloc, req, in_all, want", [
    pytest.param(v(0, 0), v(5, 5), v(10, 10), False, id="nothing allocated: never saturated"),
    pytest.param(v(2, 0), v(5, 0), v(2, 0), False, id="part of its request"),
    pytest.param(v(5, 1), v(5, 3), v(5, 1), True, id="one resource fully given"),
    pytest.param(v(2, 0), v(5, 0), v(10, 0), True, id="a resource it requests is all allocated"),
    pytest.param(v(2, 0), v(5, 1), v(2, 10), False, id="requests gpu, all allocated, but holds none: not counted"),
    pytest.param(v(2, 0), v(5, 0), v(2, 10), False, id="a resource it does not request is all allocated"),
])
def test_leaf_saturation(alloc, req, in_all, want):
    t = tree([("j", ["a"], [1.0], alloc, req)], allocated_in_all=in_all)
    assert t.leaves["j"].saturated is want
    assert t.root.children["a"].saturated is want and t.root.saturated is want


def test_children_rescaled_to_the_least_share():
    """Design's first example: n2's children (4 cpu) and (2 gpu) count as (2,0)+(0,2): n2's share is 0.2, below
    n1's 0.3, so n2 goes first (a plain sum (4,2) would give 0.4 and starve n2's gpu job)."""
    t = tree([("n1j", ["n1"], [1.0], v(0, 3), BIG), ("n21j", ["n2", "n21"], [1.0, 1.0], v(4, 0), BIG),
              ("n22j", ["n2", "n22"], [1.0, 1.0], v(0, 2), BIG)])
    n2 = t.root.children["n2"]
    assert n2.allocated.tolist() == [2.0, 2.0] and n2.share == pytest.approx(0.2)
    assert t.compare(["n2", "n21"], ["n1"]) < 0 and t.compare(["n1"], ["n2", "n22"]) > 0


def test_saturated_children_are_not_rescaled_nor_set_the_least_share():
    t = tree([("x", ["p", "x"], [1.0, 1.0], v(5, 0), v(5, 0)), ("y", ["p", "y"], [1.0, 1.0], v(0, 2), BIG),
              ("z", ["p", "z"], [1.0, 1.0], v(0, 0), BIG)])
    p = t.root.children["p"]
    assert p.allocated.tolist() == [5.0, 2.0] and p.share == pytest.approx(0.5) and not p.saturated


@pytest.mark.parametrize("jobs, left, right, sign", [
    pytest.param([("a", ["a"], [1.0], v(4, 0)), ("b", ["b"], [4.0], v(8, 0))], ["a"], ["b"], 1,
                 id="share over weight: 0.4/1 after 0.8/4"),
    pytest.param([("a", ["a"], [1.0], v(4, 0)), ("b", ["b"], [1.0], v(4, 0))], ["a"], ["b"], 0, id="equal"),
    pytest.param([("a", ["x", "a"], [1.0, 1.0], v(1, 0)), ("b", ["x", "b"], [1.0, 1.0], v(3, 0))],
                 ["x", "a"], ["x", "b"], -1, id="same parent: the children decide"),
    pytest.param([("a", ["x", "a"], [1.0, 9.0], v(1, 0)), ("b", ["y", "b"], [1.0, 1.0], v(1, 0))],
                 ["x", "a"], ["y", "b"], -1, id="equal parents: their children on the paths decide (0.1/9, 0.1)"),
    pytest.param([("a", ["x", "a"], [1.0, 9.0], v(1, 0)), ("b", ["y", "b"], [1.0, 1.0], v(1, 0)),
                  ("c", ["x", "c"], [1.0, 1.0], v(1, 0))], ["x", "a"], ["y", "b"], 1,
                 id="parents differ (x 0.2, y 0.1): the children are not looked at"),
    pytest.param([("a", ["x"], [1.0], v(1, 0)), ("b", ["x", "b"], [1.0, 1.0], v(3, 0))], ["x"], ["x", "b"], 0,
                 id="the shorter path ends: undecided"),
    pytest.param([("a", ["a"], [1.0], v(9, 0), v(9, 0)), ("b", ["b"], [1.0], v(1, 0))], ["b"], ["a"], -1,
                 id="unsaturated before saturated"),
    pytest.param([("a", ["a"], [1.0], v(1, 0), v(1, 0)), ("b", ["b"], [1.0], v(0, 9))], ["b"], ["a"], -1,
                 id="saturated last even with a lower share"),
    pytest.param([("a", ["a"], [1.0], v(1, 0)), ("b", ["b"], [float("nan")], v(9, 0))], ["a"], ["b"], 0,
                 id="a NaN weight compares as undecided"),
    pytest.param([("a", ["a"], [1.0], v(1, 0))], ["a"], ["gone"], 0, id="a path no job built: undecided"),
])
def test_compare(jobs, left, right, sign):
    t = tree([(j[0], j[1], j[2], j[3], j[4] if len(j) > 4 else BIG) for j in jobs])
    assert np.sign(t.compare(left, right)) == sign
    assert np.sign(t.compare(right, left)) == -sign


def test_first_queue_naming_a_node_gives_its_weight():
    t = hdrf.Tree(TOTAL)
    t.add_job("a", ["eng", "a"], [2.0, 1.0], v(0, 0), BIG)
    t.add_job("b", ["eng", "b"], [7.0, 1.0], v(0, 0), BIG)
    assert t.root.children["eng"].weight == 2.0


def test_set_allocated_then_refresh_follows_the_job():
    t = tree([("a", ["a"], [1.0], v(1, 0), BIG), ("b", ["b"], [1.0], v(2, 0), BIG)])
    assert t.compare(["a"], ["b"]) < 0
    t.set_allocated("a", v(3, 0))
    t.refresh(v(5, 0))
    assert t.compare(["a"], ["b"]) > 0


def _states(t):
    out, stack = {}, [("", t.root)]
    while stack:
        path, n = stack.pop()
        out[path] = (n.allocated.tolist() if n.allocated is not None else None, n.share, n.saturated)
        stack.extend((f"{path}/{k}", c) for k, c in (n.children or {}).items())
    return out


@pytest.mark.parametrize("seed", range(8))
def test_refreshing_the_changed_paths_equals_refreshing_the_whole_tree(seed):
    """After any sequence of changes, a tree refreshed only along the changed leaves' paths holds the very
    numbers of a tree built with the final allocations and refreshed whole."""
    rng = np.random.default_rng(seed)
    total = v(40, 60)   # about what is allocated in all: resources turn demanding and back
    jobs = [(f"j{i}", [f"g{i % 3}", f"q{i % 5}"], [float(1 + i % 3), float(1 + i % 2)],
             v(*rng.integers(0, 4, 2)), v(*rng.integers(1, 8, 2))) for i in range(12)]
    live = hdrf.Tree(total)
    for uid, path, weights, alloc, req in jobs:
        live.add_job(uid, path, weights, alloc, req)
    allocs = {j[0]: j[3] for j in jobs}
    live.refresh(sum(allocs.values()))
    for _ in range(30):
        for uid in rng.choice(list(allocs), size=int(rng.integers(1, 4)), replace=False):
            allocs[uid] = v(*rng.integers(0, 8, 2))
            live.set_allocated(uid, allocs[uid])
        live.refresh(sum(allocs.values()))
        fresh = hdrf.Tree(total)
        for uid, path, weights, _, req in jobs:
            fresh.add_job(uid, path, weights, allocs[uid], req)
        fresh.refresh(sum(allocs.values()))
        assert _states(live) == _states(fresh)
