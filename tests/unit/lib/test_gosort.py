"""lib/gosort.py: Go's sort.Slice step for step — any true order sorted, and a comparator that is not an order
left as Go's pattern-defeating quicksort leaves it (insertion sort up to 12 items only)."""
from __future__ import annotations

import random

import pytest

from vclite.lib import gosort
from vclite.lib.gosort import go_sort


def insertion(items, less):
    out = list(items)
    for i in range(1, len(out)):
        j = i
        while j > 0 and less(out[j], out[j - 1]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


@pytest.mark.parametrize("shape", ["random", "few values", "sorted", "reversed", "sorted but one"])
@pytest.mark.parametrize("n", [0, 1, 12, 13, 49, 50, 51, 200])
def test_a_true_order_is_sorted(shape, n):
    """Every path: insertion, pivots by median and ninther, the partial insertion sort of a sorted run (shifting
    from 50 items), equal elements, a reversed run, pattern breaking after unbalanced partitions."""
    rng = random.Random(n * 7 + len(shape))
    for _ in range(20):
        xs = [rng.randrange(3 if shape == "few values" else 1000) for _ in range(n)]
        if shape in ("sorted", "sorted but one"):
            xs.sort()
        if shape == "reversed":
            xs.sort(reverse=True)
        if shape == "sorted but one" and n:
            xs[rng.randrange(n)] = rng.randrange(1000)
        assert go_sort(xs, lambda a, b: a < b) == sorted(xs)


def test_up_to_12_items_it_is_an_insertion_sort_even_without_an_order():
    rng = random.Random(5)
    less = lambda a, b: a % 7 < b % 7 or a < b   # (not an order: both ways true for 3 and 8)
    for n in range(13):
        xs = [rng.randrange(50) for _ in range(n)]
        assert go_sort(xs, less) == insertion(xs, less)
    assert go_sort([1, 2, 3], lambda a, b: a != b) == [3, 2, 1]


# free CPUs per core and the cores' sockets of a 2-socket, 8-core, 2-thread node with 6 CPUs taken (core 3 gone)
FREE = {c: 1 if c in (1, 10, 11, 14) else 2 for c in range(16) if c != 3}


def _numa_less(i, j):
    """numa-aware's freeCPUs comparator with equal socket scores: not an order (i < j alone says less)."""
    return FREE[i] < FREE[j] or i // 8 < j // 8 or i < j


def test_fifteen_items_go_through_pdqsort_as_traced_by_hand():
    """15 cores: choosePivot's median of d[3], d[6], d[9] (two swaps: unknown hint) picks core 4; the partition
    around it leaves [10 1 2 0 14 11] | 4 | [8 9 7 6 12 13 5 15]; each side is insertion sorted. An insertion
    sort of the whole would put core 1 first (its comparisons differ)."""
    cores = sorted(FREE)
    assert go_sort(cores, _numa_less) == [0, 1, 2, 10, 11, 14, 4, 5, 6, 7, 8, 9, 12, 13, 15]
    assert insertion(cores, _numa_less)[0] == 1


def test_pattern_breaking_uses_go_1_24_xorshift():
    """Go 1.24 on (Volcano builds with 1.26) shifts 13, 7, 17 (golang/go#70144; 1.19-1.23: 13, 17, 5). Seeded by
    a length of 16, the first state is 131088 -> 132112 -> 17316316176 (by hand); its low 5 bits pick 16 - 16 = 0,
    then 24 - 16 = 8, then 0: positions 7, 8 and 9 swapped with 0, 8 and 0."""
    assert gosort.xorshift_next(16) == 17316316176
    sorter = gosort._Sorter(list(range(16)), lambda a, b: a < b)
    sorter.break_patterns(0, 16)
    assert sorter.d == [9, 1, 2, 3, 4, 5, 6, 0, 8, 7, 10, 11, 12, 13, 14, 15]
