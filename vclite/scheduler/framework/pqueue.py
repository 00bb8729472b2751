"""A priority queue ordered by a `less(l, r)` function (Volcano's util.PriorityQueue).

Orders are consulted when items are pushed and popped, so an item's rank reflects the state at
that moment (queue shares change as a session allocates); callers pop and push again to re-rank.

The items given at construction are sorted once (Python's sort: about n comparisons when they
arrive nearly in order, as jobs by creation time do) and popped from that run; items pushed later
go to a heap, and `pop` returns the lesser of the two heads. An item's rank may change only while
it is out of the queue (as with a heap), so with a strict order (the session's orders end in a
unique tie-break) the pop order is the same as a heap's at a fraction of the comparisons.
`presort`, a cheap key that `less` itself falls back to (creation time, uid), puts the initial
items nearly in order first, so the sort by `less` makes about one comparison per item when the
plugins' orders tie.

`GoHeap` is Go's container/heap itself (the same sift steps, items pushed one by one): the session's queue of
queues, whose items' ranks can change while they wait (hierarchical drf: a queue's allocation changes its
siblings' shares). Volcano's heap then pops by ranks as they were when last compared, in an order that depends
on its layout; the same steps over the same pushes give the same order.

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
    __slots__ = ("_less", "_run", "_heap")

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = (),
                 presort: Callable[[T], Any] | None = None):
        self._less = less
        items = list(items)
        if len(items) > 1:
            if presort is not None:
                items.sort(key=presort)
            run = [_Entry(i, less) for i in items]
            run.sort()
            run.reverse()   # best last: popped from the end
        else:
            run = [_Entry(i, less) for i in items]
        self._run: list[_Entry] = run
        self._heap: list[_Entry] = []

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, _Entry(item, self._less))

    def pop(self) -> T:
        run, heap = self._run, self._heap
        if not heap:
            return run.pop().item
        if run and not self._less(heap[0].item, run[-1].item):
            return run.pop().item
        return heapq.heappop(heap).item

    def __len__(self) -> int:
        return len(self._run) + len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._run) or bool(self._heap)


class GoHeap(Generic[T]):
    """A binary heap with Go's container/heap steps (Push: append, up; Pop: swap the root with the last, down,
    take the last), over `less`; `items` pushed one by one in their order, as Volcano's NewPriorityQueue and
    Push build its queue of queues. An item whose rank changed while it waits is popped where Go's would be."""
    __slots__ = ("_less", "_items")

    def __init__(self, less: Callable[[T, T], bool], items: Iterable[T] = ()):
        self._less = less
        self._items: list[T] = []
        for item in items:
            self.push(item)

    def push(self, item: T) -> None:
        items, less = self._items, self._less
        items.append(item)
        j = len(items) - 1
        while j > 0:
            i = (j - 1) // 2
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            j = i

    def pop(self) -> T:
        items, less = self._items, self._less
        n = len(items) - 1
        items[0], items[n] = items[n], items[0]
        i = 0
        while (j := 2 * i + 1) < n:
            if j + 1 < n and less(items[j + 1], items[j]):
                j += 1
            if not less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            i = j
        return items.pop()

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)
