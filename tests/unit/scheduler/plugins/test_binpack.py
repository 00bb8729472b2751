"""binpack: arguments as Volcano reads them, the per-node score (Volcano's loop) in worked examples,
and the vector form giving the same floats."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.scheduler import conf
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.plugins import binpack

from .. import objects


@pytest.mark.parametrize("arguments, want", [
    pytest.param({}, {"cpu": 1, "memory": 1}, id="defaults"),
    pytest.param({"binpack.cpu": 5, "binpack.memory": -2}, {"cpu": 5, "memory": 1}, id="negative weight becomes 1"),
    pytest.param({"binpack.resources": "nvidia.com/gpu, example.com/foo", "binpack.resources.nvidia.com/gpu": 7},
                 {"nvidia.com/gpu": 7, "example.com/foo": 1, "cpu": 1, "memory": 1},
                 id="listed resources: given weight or 1"),
    pytest.param({"binpack.weight": 10, "binpack.cpu": 5, "binpack.memory": 2,
                  "binpack.resources": "nvidia.com/gpu, example.com/foo", "binpack.resources.nvidia.com/gpu": 7,
                  "binpack.resources.example.com/foo": -3},
                 {"cpu": 5, "memory": 2, "nvidia.com/gpu": 7, "example.com/foo": 1},
                 id="binpack_test.go TestArguments: a negative resource weight becomes 1"),
    pytest.param({"binpack.resources.example.com/bar": 9}, {"cpu": 1, "memory": 1},
                 id="a weight for an unlisted resource is ignored, as in Volcano"),
])
def test_resource_weights(arguments, want):
    got = conf.build("allocate", [[conf.plugin("binpack", arguments)]]).tiers[0][0].args.resource_weights()
    assert got == want


@pytest.mark.parametrize("arguments, message", [
    pytest.param({"binpack.resources.nvidia.com/gpu": "seven"}, "binpack.resources.nvidia.com/gpu"),
    pytest.param({"binpack.weight": 1.5}, "binpack.weight"),
    pytest.param({"binpack.cpus": 1}, 'unknown argument "binpack.cpus"'),
])
def test_bad_arguments_fail_at_load(arguments, message):
    with pytest.raises(ValueError, match=None) as e:
        conf.build("allocate", [[conf.plugin("binpack", arguments)]])
    assert message in str(e.value)


DIMS = dims_mod.Dims(["nvidia.com/gpu"])          # cpu, memory, pods, nvidia.com/gpu
W, HAS = binpack.weight_vector(DIMS, {"cpu": 2, "memory": 3, "nvidia.com/gpu": 7, "pods": 9})


def v(cpu=0, mem=0, pods=0, gpu=0):
    return np.array([cpu, mem, pods, gpu], dtype=np.float64)


def key(req):
    return tuple((int(c), float(req[c])) for c in np.flatnonzero((req > 0) & HAS))


@pytest.mark.parametrize("req, alloc, used, want", [
    pytest.param(v(1000, 2**30, 1), v(2000, 4 * 2**30, 10), v(1000, 2**30), 700,
                 id="BINPACK-01 p1 on n1: (2·2/2 + 2·3/4) / 5 × 100 × 10"),
    pytest.param(v(1500, 0, 1), v(4000, 16 * 2**30, 10), v(), 375, id="memory not requested: not weighed"),
    pytest.param(v(2000, 10 * 2**30, 1, 2000), v(4000, 16 * 2**30, 10, 4000), v(), 531.25, id="with a gpu"),
    pytest.param(v(1000, 0, 1, 1000), v(4000, 16 * 2**30, 10, 0), v(), 2 * 250 / 9, id="gpu absent: weight counted"),
    pytest.param(v(1000, 2**30, 1), v(2000, 4 * 2**30, 10), v(1500), 0, id="one resource overflows: node scores 0"),
])
def test_row_score(req, alloc, used, want):
    assert binpack.row_score(key(req), alloc, used, W, 10) == pytest.approx(want)


def test_pods_never_weighed():
    assert not HAS[DIMS.pods]


sizes = st.integers(0, 16_000)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(sizes, sizes, sizes, sizes, sizes, sizes), min_size=1, max_size=6), sizes, sizes, sizes)
def test_vector_score_equals_row_score(nodes, cpu, mem, gpu):
    alloc = np.array([[c, m, 10, g] for c, m, g, _, _, _ in nodes], dtype=np.float64)
    used = np.array([[c, m, 0, g] for _, _, _, c, m, g in nodes], dtype=np.float64)
    k = key(v(cpu, mem, 1, gpu))
    if not k:
        return
    vec = binpack.score(k, alloc, used, slice(None), W, 3)
    assert list(vec) == [binpack.row_score(k, alloc[i], used[i], W, 3) for i in range(len(nodes))]


def test_weight_zero_registers_no_node_order():
    c = conf.build("allocate", [[conf.plugin("binpack", {"binpack.weight": 0}, enableNodeOrder=True)]])
    ssn = session.open_session(objects.state(nodes=[objects.node("n1")]), c, objects.NOW)
    assert ssn.hooks.registered(hooks.Point.NODE_ORDER) == []
