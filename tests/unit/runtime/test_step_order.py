"""Runtime.step: components in priority order, background components after all the others (but
never starved), `step(background=False)` leaving them for later; run_until's wake-up."""
import asyncio

import pytest

from vclite.lib import clock, workqueue
from vclite.runtime import loop
from vclite.runtime import runtime


class Recording:
    """A component that logs its syncs; `then` adds keys (to itself or others) from a sync."""

    def __init__(self, name, clk, log, background=False, then=None):
        self.name, self.log, self.then = name, log, then or {}
        self.background = background
        self.queue = workqueue.WorkQueue(clk)

    def start(self):
        pass

    def sync(self, key):
        self.log.append(f"{self.name}:{key}")
        for target, new_key in self.then.get(key, ()):
            target.queue.add(new_key)


@pytest.fixture
def rt():
    r = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    r.start()
    yield r
    r.close()


def install(rt, *components):
    rt.components = list(components)   # the runtime's own stay out of the way
    for c in components:
        c.queue.on_add = rt._on_add


def test_background_work_waits_for_the_foreground(rt):
    log = []
    bg = Recording("bg", rt.clock, log, background=True)
    second = Recording("second", rt.clock, log)
    first = Recording("first", rt.clock, log, then={"a": [(bg, "x"), (second, "b")]})
    install(rt, first, bg, second)
    first.queue.add("a")
    assert rt.step() == 3
    assert log == ["first:a", "second:b", "bg:x"]


def test_step_without_background_leaves_it_ready(rt):
    log = []
    bg = Recording("bg", rt.clock, log, background=True)
    fg = Recording("fg", rt.clock, log, then={"a": [(bg, "x")]})
    install(rt, fg, bg)
    fg.queue.add("a")
    assert rt.step(background=False) == 1 and rt.has_ready_work()
    assert rt.step() == 1 and log == ["fg:a", "bg:x"]


def test_background_is_not_starved_by_a_long_foreground_burst(rt):
    log = []
    bg = Recording("bg", rt.clock, log, background=True)
    n = loop.FOREGROUND_STREAK * 2 + 5
    chain = {i: [] for i in range(n)}
    fg = Recording("fg", rt.clock, log, then=chain)
    for i in range(n - 1):
        chain[i].append((fg, i + 1))   # each foreground sync adds the next: always ready
    chain[0].append((bg, "x"))
    chain[loop.FOREGROUND_STREAK + 1].append((bg, "y"))
    install(rt, fg, bg)
    fg.queue.add(0)
    rt.step()
    bg_at = [i for i, entry in enumerate(log) if entry.startswith("bg:")]
    assert bg_at == [loop.FOREGROUND_STREAK, 2 * loop.FOREGROUND_STREAK + 1], log
    assert len(log) == n + 2


def test_run_until_wakes_when_work_is_added_from_the_loop():
    async def scenario():
        r = runtime.Runtime(clock.RealClock(), nodes=[], run_pods=False)
        try:
            log = []
            c = Recording("c", r.clock, log)
            install(r, c)
            loop = asyncio.get_running_loop()
            loop.call_later(0.01, c.queue.add, "late")     # e.g. a process exit seen by the loop
            c.queue.add_after("timer", 0.02)
            done = await r.run_until(lambda: len(log) == 2, timeout=10)
            return done, log
        finally:
            r.close()
    done, log = asyncio.run(scenario())
    assert done and log == ["c:late", "c:timer"]


class Later(Recording):
    """Adds the keys of `then_later` to its own queue's second lane."""

    def __init__(self, *args, then_later=None, **kw):
        super().__init__(*args, **kw)
        self.then_later = then_later or {}

    def sync(self, key):
        super().sync(key)
        for new_key in self.then_later.get(key, ()):
            self.queue.add(new_key, later=True)


def test_keys_queued_later_are_background_work(rt):
    log = []
    bg = Recording("bg", rt.clock, log, background=True)
    last = Recording("last", rt.clock, log)
    first = Later("first", rt.clock, log, then={"a": [(last, "c")]}, then_later={"a": ["cleanup"]})
    install(rt, first, last, bg)
    first.queue.add("a")
    bg.queue.add("x")
    assert rt.step(background=False) == 2 and rt.has_ready_work()   # the second lane waits with bg
    assert log == ["first:a", "last:c"]
    assert rt.step() == 2 and log[2:] == ["bg:x", "first:cleanup"]


def test_a_key_queued_later_still_gets_its_turn_in_a_long_burst(rt):
    log = []
    n = loop.FOREGROUND_STREAK + 3
    fg = Recording("fg", rt.clock, log, then={i: [] for i in range(n)})
    for i in range(n - 1):
        fg.then[i].append((fg, i + 1))
    early = Later("early", rt.clock, log, then_later={"a": ["cleanup"]})
    install(rt, early, fg)
    early.queue.add("a")
    fg.queue.add(0)
    rt.step()
    assert log.index("early:cleanup") == loop.FOREGROUND_STREAK, log   # (after early:a and 63 of fg)


def test_a_step_with_a_budget_returns_with_work_left(rt):
    log = []
    c = Recording("c", rt.clock, log)
    install(rt, c)
    for key in "abc":
        c.queue.add(key)
    assert rt.step(budget=0) == 1 and rt.has_ready_work()
    assert rt.step() == 2 and log == ["c:a", "c:b", "c:c"]


def test_run_until_lets_the_event_loop_in_during_an_endless_burst():
    """A component that always has more work (a big flow's burst) does not starve the event loop: a
    server's request, a process exit, a timer are served between budgets."""
    class Endless(Recording):
        def sync(self, key):
            super().sync(key)
            self.queue.add(key + 1)

    async def scenario():
        r = runtime.Runtime(clock.RealClock(), nodes=[], run_pods=False)
        try:
            c = Endless("c", r.clock, [])
            install(r, c)
            c.queue.add(0)
            served = []
            asyncio.get_running_loop().call_soon(served.append, "request")
            return await r.run_until(lambda: bool(served), timeout=30), c.log
        finally:
            r.close()
    done, log = asyncio.run(scenario())
    assert done and log, "the loop served the callback while the burst went on"


class Ticking(Recording):
    """A component that always has more work and whose every sync takes `cost` seconds of a fake timer."""

    def __init__(self, name, clk, log, timer, cost):
        super().__init__(name, clk, log)
        self.timer, self.cost, self.syncs = timer, cost, 0

    def sync(self, key):
        super().sync(key)
        self.syncs += 1
        self.timer[0] += self.cost
        self.queue.add(key + 1)


@pytest.mark.parametrize("cost, budget, syncs", [
    pytest.param(0.004, 0.010, 3, id="three-syncs-spend-it"),
    pytest.param(0.010, 0.010, 1, id="one-sync-spends-it"),
    pytest.param(0.025, 0.010, 1, id="a-long-sync-is-not-cut"),
    pytest.param(0.001, 0.0095, 10, id="ten-short-ones"),
])
def test_a_step_runs_syncs_until_its_budget_is_spent_on_its_timer(rt, cost, budget, syncs):
    fake = [0.0]
    rt.timer = lambda: fake[0]
    c = Ticking("c", rt.clock, [], fake, cost)
    install(rt, c)
    c.queue.add(0)
    assert rt.step(budget=budget) == syncs and rt.budget_spent


def test_a_step_that_runs_out_of_work_has_not_spent_its_budget(rt):
    fake = [0.0]
    rt.timer = lambda: fake[0]
    c = Recording("c", rt.clock, [])
    install(rt, c)
    c.queue.add("a")
    assert rt.step(budget=0) == 1 and not rt.budget_spent


def test_a_request_that_comes_during_a_burst_is_answered_before_the_next_burst():
    """The yielding rule, by order only: syncs of a fake timer's cost (STEP_BUDGET / 3 each: three per burst), a
    request sent over a real socket during a sync (as a server's: seen by the event loop's select, its handler
    a task woken by the reader, as aiohttp's) is answered before the burst after the one it came in runs. One
    bare turn between bursts (the loop's yield before) answered some requests two bursts later."""
    async def scenario():
        import socket
        r = runtime.Runtime(clock.RealClock(), nodes=[], run_pods=False)
        ev_loop = asyncio.get_running_loop()
        theirs, ours = socket.socketpair()
        ours.setblocking(False)
        fake = [0.0]
        r.timer = lambda: fake[0]
        c = Ticking("c", r.clock, [], fake, loop.STEP_BUDGET / 3 + 1e-9)
        sent_at: list[int] = []
        answered_at: list[int] = []

        async def handler():   # (aiohttp's request handler: a task the reader's data_received wakes)
            while len(answered_at) < 12:
                arrived = ev_loop.create_future()
                ev_loop.add_reader(ours, lambda: arrived.done() or arrived.set_result(ours.recv(1)))
                await arrived
                ev_loop.remove_reader(ours)
                answered_at.append(c.syncs)

        def sync(key, plain=c.sync):   # one request sent during every fifth sync, once the last was answered
            plain(key)
            if c.syncs % 5 == 0 and len(sent_at) == len(answered_at):
                sent_at.append(c.syncs)
                theirs.send(b"x")
        c.sync = sync
        try:
            install(r, c)
            c.queue.add(0)
            task = ev_loop.create_task(handler())
            await r.run_until(task.done, timeout=60)
            return sent_at, answered_at
        finally:
            theirs.close()
            ours.close()
            r.close()
    sent, answered = asyncio.run(scenario())
    assert len(answered) == 12
    # answered once the burst it came in ends: at most two more syncs of that burst (three syncs a burst)
    assert all(a - s <= 2 for s, a in zip(sent, answered)), list(zip(sent, answered))


def test_run_until_lets_the_process_starts_waiting_for_their_turn_go_before_more_work():
    """Pods just bound start their processes before the work that waits (a few a turn: the executor's
    SpawnTurns; here three turns of them), then the background work runs."""
    async def scenario():
        r = runtime.Runtime(clock.RealClock(), nodes=[], run_pods=False)
        try:
            log, left = [], [0]
            bg = Recording("bg", r.clock, log, background=True)

            class Binds(Recording):
                def sync(self, key):
                    super().sync(key)
                    left[0] = 3   # (three turns of process starts wait)
                    bg.queue.add("b")
            install(r, Binds("fg", r.clock, log), bg)
            r.components[0].queue.add("a")

            def starting():
                if left[0]:
                    left[0] -= 1
                    log.append("start")
                    return True
                return False
            r.starting = starting
            await r.run_until(lambda: "bg:b" in log, timeout=30)
            return log
        finally:
            r.close()
    assert asyncio.run(scenario()) == ["fg:a", "start", "start", "start", "bg:b"]
