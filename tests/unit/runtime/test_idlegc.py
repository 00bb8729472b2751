"""Idle-time garbage collection: which generation is collected at an idle moment."""
import gc

import pytest

from vclite.runtime import idlegc

DEFAULT = (700, 10, 10)


@pytest.mark.parametrize("counts, thresholds, want", [
    pytest.param((0, 0, 0), DEFAULT, None, id="nothing-allocated"),
    pytest.param((idlegc.IDLE_MIN_YOUNG - 1, 9, 9), DEFAULT, None, id="too-few-to-bother"),
    pytest.param((idlegc.IDLE_MIN_YOUNG, 0, 0), DEFAULT, 0, id="young"),
    pytest.param((5000, 8, 9), DEFAULT, 0, id="young-many-allocations"),
    pytest.param((300, 9, 0), DEFAULT, 0, id="ninth-young"),
    pytest.param((300, 10, 0), DEFAULT, 1, id="middle-due"),
    pytest.param((300, 10, 50), DEFAULT, 1, id="oldest-left-to-cpython"),
    pytest.param((50, 0, 0), (50, 10, 10), 0, id="host-threshold-below-the-minimum"),
    pytest.param((10**6, 0, 0), (0, 10, 10), None, id="collections-disabled-by-host"),
])
def test_owed_generation(counts, thresholds, want):
    assert idlegc.owed_generation(counts, thresholds) == want


def test_collect_when_idle_empties_the_young_generation():
    saved = gc.get_threshold()
    gc.collect(0)
    gc.set_threshold(100_000, saved[1], saved[2])   # (no automatic collection in between)
    try:
        junk = [[i] for i in range(idlegc.IDLE_MIN_YOUNG * 2)]
        assert gc.get_count()[0] >= idlegc.IDLE_MIN_YOUNG
        assert idlegc.collect_when_idle() is not None and gc.get_count()[0] < idlegc.IDLE_MIN_YOUNG
        del junk
    finally:
        gc.set_threshold(*saved)


def test_nothing_is_collected_while_collections_are_disabled():
    gc.disable()
    try:
        junk = [[i] for i in range(idlegc.IDLE_MIN_YOUNG * 2)]
        assert idlegc.collect_when_idle() is None
        del junk
    finally:
        gc.enable()
