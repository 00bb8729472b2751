"""The work queue: de-duplication, delayed adds (progress and chores), coalescing, back-off."""
import pytest

from vclite.lib import clock, workqueue


def drain(q):
    keys = []
    while (k := q.get()) is not None:
        keys.append(k)
    return keys


@pytest.fixture
def vclock():
    return clock.VirtualClock()


def test_a_key_added_twice_is_queued_once(vclock):
    q = workqueue.WorkQueue(vclock)
    for k in ("a", "b", "a"):
        q.add(k)
    assert drain(q) == ["a", "b"]


# (adds as (key, delay, chore)) -> (next_ready_at, next_progress_at, keys ready at 10 s)
TIMER_CASES = [
    pytest.param([], (None, None, []), id="nothing"),
    pytest.param([("a", 5, False)], (5, 5, ["a"]), id="progress"),
    pytest.param([("a", 5, True)], (5, None, ["a"]), id="chore-fires-but-is-not-progress"),
    pytest.param([("a", 5, True), ("b", 8, False)], (5, 8, ["a", "b"]), id="chore-first"),
    pytest.param([("a", 8, True), ("b", 5, False)], (5, 5, ["b", "a"]), id="progress-first"),
    pytest.param([("a", 5, False), ("a", 3, False)], (3, 3, ["a"]), id="earlier-add-wins"),
    pytest.param([("a", 3, False), ("a", 5, False)], (3, 3, ["a"]), id="later-add-coalesced"),
    # a key's chore does not swallow its progress timer (or the run would think itself stuck)
    pytest.param([("a", 3, True), ("a", 5, False)], (3, 5, ["a"]), id="chore-then-progress-same-key"),
    pytest.param([("a", 12, False)], (12, 12, []), id="not-yet"),
    pytest.param([("a", 0, True)], (None, None, ["a"]), id="no-delay-is-ready-now"),
]


@pytest.mark.parametrize("adds, want", TIMER_CASES)
def test_delayed_adds(vclock, adds, want):
    q = workqueue.WorkQueue(vclock)
    for key, delay, chore in adds:
        q.add_after(key, delay, chore=chore)
    ready_at, progress_at, keys = want
    assert (q.next_ready_at(), q.next_progress_at()) == (ready_at, progress_at)
    vclock.advance(10)
    assert drain(q) == keys


def test_a_fired_key_can_be_delayed_again(vclock):
    q = workqueue.WorkQueue(vclock)
    q.add_after("a", 1, chore=True)
    vclock.advance(1)
    assert drain(q) == ["a"] and q.next_ready_at() is None and len(q) == 0
    q.add_after("a", 2, chore=True)
    assert q.next_ready_at() == 3 and len(q) == 1


def test_rate_limited_adds_back_off_exponentially(vclock):
    q = workqueue.WorkQueue(vclock, base_delay=0.5, max_delay=3)
    seen = []
    for _ in range(5):
        q.add_rate_limited("k")
        seen.append(q.next_progress_at() - vclock.monotonic())
        vclock.jump_to(q.next_ready_at())
        assert drain(q) == ["k"]
    assert seen == [0.5, 1, 2, 3, 3] and q.num_requeues("k") == 5
    q.forget("k")
    assert q.num_requeues("k") == 0


@pytest.mark.parametrize("failures", [63, 1023, 1024, 1100, 5000])
def test_a_key_retried_for_ever_keeps_the_capped_back_off(vclock, failures):
    """A component that retries for ever (the scheduler every second, the executor every 10 s) fails a key more
    than a thousand times: its back-off stays at the cap (2 ** 1024 as a float overflowed: the loop stopped)."""
    q = workqueue.WorkQueue(vclock, base_delay=0.005, max_delay=10)
    for _ in range(failures):
        q.add_rate_limited("k")
        vclock.jump_to(q.next_ready_at())
        assert drain(q) == ["k"]
    q.add_rate_limited("k")
    assert q.next_ready_at() - vclock.monotonic() == 10 and q.num_requeues("k") == failures + 1


# adds as (key, later) -> (keys get() serves without later, then all keys in the order get() serves them)
LANE_CASES = [
    pytest.param([("a", True)], ([], ["a"]), id="later-only"),
    pytest.param([("a", True), ("b", False)], (["b"], ["b", "a"]), id="first-lane-first"),
    pytest.param([("a", True), ("a", False)], (["a"], ["a"]), id="added-again-now-moves-up"),
    pytest.param([("a", False), ("a", True)], (["a"], ["a"]), id="already-ready-stays-in-the-first-lane"),
    pytest.param([("a", True), ("b", True), ("a", True)], ([], ["a", "b"]), id="later-deduplicated-fifo"),
]


def test_discard_takes_a_key_out_of_both_lanes_but_not_its_timers(vclock):
    q = workqueue.WorkQueue(vclock)
    q.add("a")
    q.add("b", later=True)
    q.add_after("a", 5)
    q.discard("a")
    q.discard("b")
    q.discard("never-added")
    assert q.get() is None and not q.has_ready()
    vclock.advance(5)
    assert q.get() == "a"


@pytest.mark.parametrize("adds, want", LANE_CASES)
def test_the_second_lane(vclock, adds, want):
    first_lane, all_keys = want
    for only_first in (True, False):
        q = workqueue.WorkQueue(vclock)
        woken = []
        q.on_add = lambda: woken.append(1)
        for key, later in adds:
            q.add(key, later=later)
        assert woken and q.has_ready() and len(q) == len(set(all_keys))
        if only_first:
            got = []
            while (k := q.get(later=False)) is not None:
                got.append(k)
            assert got == first_lane and len(q) == len(all_keys) - len(first_lane)
            rest = []
            while (k := q.get_later()) is not None:
                rest.append(k)
            assert got + rest == all_keys
        else:
            assert drain(q) == all_keys
        assert not q.has_ready() and len(q) == 0
