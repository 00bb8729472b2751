"""Go's sort.Slice, step for step: pattern-defeating quicksort (insertion sort up to 12 items, pivots by median of
three or Tukey's ninther, a partial insertion sort on runs that look sorted, pattern breaking with Go's xorshift
seeded by the length — Go 1.24's shifts —, heapsort after too many bad pivots).

Only needed where the result depends on the algorithm, not on the order alone: a `less` that is not a strict
weak order (Volcano's numa-aware CPU walk, as the kubelet's copy it was taken from). With a true order any sort
gives the same result; with such a comparator only the same comparisons in the same sequence do, so this follows
Go's sort package (1.24 and later) exactly and is deterministic.

Pure.
"""
from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")
_MAX_INSERTION = 12
_NINTHER = 50          # from this length the pivot is Tukey's ninther
_MAX_SWAPS = 4 * 3     # choosePivot's swaps when the sample is strictly decreasing
_SHIFT_STEPS, _SHORTEST_SHIFTING = 5, 50
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2
_U64 = (1 << 64) - 1


def xorshift_next(state: int) -> int:
    """Go's xorshift.Next (sort.go) on a uint64 state: shifts 13, 7, 17 since Go 1.24 (golang/go#70144;
    Go 1.19 to 1.23 shifted 13, 17, 5, a 32-bit generator's). Volcano is built with a newer Go (go.mod: 1.26)."""
    state ^= (state << 13) & _U64
    state ^= state >> 7
    return state ^ ((state << 17) & _U64)


def go_sort(items: list[T], less: Callable[[T, T], bool]) -> list[T]:
    """A copy of `items` as Go's sort.Slice(items, less) leaves them."""
    return _Sorter(list(items), less).run()


class _Sorter:
    def __init__(self, data: list, less: Callable) -> None:
        self.d, self._less = data, less

    def less(self, i: int, j: int) -> bool:
        return self._less(self.d[i], self.d[j])

    def swap(self, i: int, j: int) -> None:
        d = self.d
        d[i], d[j] = d[j], d[i]

    def run(self) -> list:
        n = len(self.d)
        if n > 1:
            self.pdqsort(0, n, n.bit_length())
        return self.d

    def insertion(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        hi = b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, a)
        for i in range(hi - 1, -1, -1):
            self.swap(a, a + i)
            self.sift_down(0, i, a)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        balanced = partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if balanced and partitioned and hint == _INCREASING and self.partial_insertion(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(_SHIFT_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:   # (the smaller one to the left; Go walks down to index 1, not to a)
                j = i - 1
                while j >= 1 and self.less(j, j - 1):
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:   # (the greater one to the right)
                j = i + 1
                while j < b and self.less(j, j - 1):
                    self.swap(j, j - 1)
                    j += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            state = xorshift_next(state)
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        n = b - a
        swaps = [0]
        i, j, k = a + n // 4, a + n // 4 * 2, a + n // 4 * 3
        if n >= 8:
            if n >= _NINTHER:
                i, j, k = (self.median(x - 1, x, x + 1, swaps) for x in (i, j, k))
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        return j, _DECREASING if swaps[0] == _MAX_SWAPS else _UNKNOWN

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
