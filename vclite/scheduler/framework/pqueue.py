"""A priority queue ordered by a `less(l, r)` function (Volcano's util.PriorityQueue).

Orders are consulted when items are pushed and popped, so an item's rank reflects the state at
that moment (queue shares change as a session allocates); callers pop and push again to re-rank.

Must not: copy or compare items by anything but `less`.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Generic, Iterable, TypeVar

T = TypeVar("T")


class _Entry:
    __slots__ = ("item", "less")

    def __init__(self, item: Any, less: Callable[[Any, Any], bool]):
        self.item, self.less = item, less

    def __lt__(self, other: "_Entry") -> bool:
        return self.less(self.item, other.item)


class PriorityQueue(Generic[T]):
    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()):
        self._less = less
        self._heap = [_Entry(i, less) for i in items]
        heapq.heapify(self._heap)

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, _Entry(item, self._less))

    def pop(self) -> T:
        return heapq.heappop(self._heap).item

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
