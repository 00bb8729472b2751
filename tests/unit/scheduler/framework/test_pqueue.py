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


@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed {s}") for s in range(10)])
def test_go_heap_pops_in_order_while_ranks_hold(seed):
    rng = random.Random(seed)
    q = pqueue.GoHeap(lambda a, b: a < b, rng.sample(range(1000), rng.randint(0, 30)))
    ref = sorted(q._items)
    for _ in range(40):
        if ref and rng.random() < 0.6:
            assert q.pop() == ref.pop(0)
        else:
            x = rng.randrange(1000)
            q.push(x)
            ref = sorted(ref + [x])
        assert len(q) == len(ref) and bool(q) == bool(ref)


def test_go_heap_pops_a_rank_changed_while_waiting_where_gos_container_heap_does():
    """Traced by hand through Go's container/heap (Push: append, up; Pop: swap root and last, down among the
    rest): pushed a1 b2 c3 d4 -> [a b c d]; c drops to 0 while it waits; pop swaps a to the end and sifts d down
    past c -> [c b d], a popped; a (now 5) pushed -> [c b d a]; b drops to -1, d to -2; pop sifts a down past d
    -> c popped although b and d rank lower (their heap places are stale), then d, b, a."""
    rank = {"a": 1, "b": 2, "c": 3, "d": 4}
    q = pqueue.GoHeap(lambda l, r: rank[l] < rank[r], "abcd")
    rank["c"] = 0
    popped = [q.pop()]
    rank["a"] = 5
    q.push("a")
    rank["b"], rank["d"] = -1, -2
    popped += [q.pop() for _ in range(len(q))]
    assert popped == ["a", "c", "d", "b", "a"]
