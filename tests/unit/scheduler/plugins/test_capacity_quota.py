"""capacity's queue share (capacity_test.go Test_updateQueueAttrShare): allocated over deserved on the
dimensions deserved names, the largest; a queue without deserved (best-effort) always 1.

Vectors are (cpu millicores, memory bytes, pods)."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.plugins import capacity_quota

DIMS = dims_mod.Dims()
GI = 2**30


def v(cpu=0.0, mem=0.0):
    return np.array([cpu, mem, 0.0], dtype=np.float64)


@pytest.mark.parametrize("deserved, allocated, want", [
    pytest.param(v(), v(1000, GI), 1.0, id="best-effort queue with allocated resources"),
    pytest.param(v(), v(), 1.0, id="best-effort queue completely idle"),
    pytest.param(v(2000, 2 * GI), v(), 0.0, id="queue with deserved but no allocated"),
    pytest.param(v(2000, 2 * GI), v(1000, GI), 0.5, id="allocated < deserved (CPU dimension)"),
    pytest.param(v(2000, 2 * GI), v(2000, 2 * GI), 1.0, id="allocated = deserved"),
    pytest.param(v(2000, 2 * GI), v(3000, 2 * GI), 1.5, id="allocated > deserved (CPU dimension)"),
    pytest.param(v(2000, 4 * GI), v(1000, 3 * GI), 0.75, id="memory is dominant resource"),
    pytest.param(v(2000, 4 * GI), v(1500, 2 * GI), 0.75, id="CPU is dominant resource"),
    pytest.param(v(2000, 2 * GI), v(3000, 3 * GI), 1.5, id="allocated exceeds on both dimensions"),
    pytest.param(v(0, 0), v(1000, GI), 1.0, id="queue with deserved but zero values"),
    pytest.param(v(2000, 2 * GI), v(0, 0), 0.0, id="queue with deserved, allocated is zero"),
    pytest.param(v(), v(1000, 0), 1.0, id="best-effort queue with only CPU allocated"),
    pytest.param(v(), v(0, GI), 1.0, id="best-effort queue with only memory allocated"),
])
def test_share(deserved, allocated, want):
    # the upstream rows with a pending `request` are the same rows: the request never enters the share
    assert capacity_quota.share(allocated, deserved, DIMS) == want
