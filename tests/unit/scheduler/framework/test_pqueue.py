"""PriorityQueue: a sorted run of the initial items plus a heap of later pushes pops exactly as a heap."""
from __future__ import annotations

import heapq
import random

import pytest

from vclite.scheduler.framework import pqueue


class _HeapRef:
    """The reference: a plain heap (what the queue replaced)."""

    def __init__(self, items):
        self.h = []
        for i in items:
            self.push(i)

    def push(self, item):
        heapq.heappush(self.h, _Key(item))

    def pop(self):
        return heapq.heappop(self.h).item


class _Key:
    def __init__(self, item):
        self.item = item

    def __lt__(self, other):
        return self.item < other.item


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed {s}") for s in range(20)])
@pytest.mark.parametrize("presort", [pytest.param(None, id="no presort"), pytest.param(lambda x: -x, id="reversed hint")])
def test_pops_like_a_heap_with_pushes_interleaved(seed, presort):
    rng = random.Random(seed)
    initial = rng.sample(range(1000), rng.randint(0, 30))
    q = pqueue.PriorityQueue(lambda a, b: a < b, initial, presort=presort)
    ref = _HeapRef(initial)
    size = len(initial)
    for _ in range(60):
        if size and rng.random() < 0.6:
            assert q.pop() == ref.pop()
            size -= 1
        else:
            x = rng.randrange(1000, 2000) if rng.random() < 0.5 else rng.randrange(1000)
            q.push(x)
            ref.push(x)
            size += 1
        assert len(q) == size and bool(q) == (size > 0)
    while size:
        assert q.pop() == ref.pop()
        size -= 1


def test_order_is_asked_when_items_are_popped():
    """An item re-ranked while out of the queue is placed by its new rank when pushed back."""
    rank = {"a": 1, "b": 2, "c": 3}
    q = pqueue.PriorityQueue(lambda l, r: rank[l] < rank[r], ["a", "b", "c"])
    assert q.pop() == "a"
    rank["a"] = 10
    q.push("a")
    assert [q.pop(), q.pop(), q.pop()] == ["b", "c", "a"]


def test_pop_from_empty_raises():
    with pytest.raises(IndexError):
        pqueue.PriorityQueue(lambda a, b: a < b).pop()
