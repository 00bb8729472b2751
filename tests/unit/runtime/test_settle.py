"""Loop.settle (virtual clock): it ends once nothing is left but the retries of keys a component that never
gives up keeps failing — each jump to such a retry was one more failure, and settle() spun through its million
iterations (a billion seconds of virtual time) — while the timers that may still do something fire as before."""
import pytest

from vclite.api import kinds
from vclite.lib import clock, workqueue
from vclite.runtime import runtime

NS = "default"


class Flaky:
    """A component whose `fails` keys fail their first `fails[key]` syncs (None: every one); `timers` are
    delayed adds (key, delay, chore) made when it starts."""

    def __init__(self, name, clk, log, fails, forever, timers=()):
        self.name, self.log, self.fails, self.timers = name, log, dict(fails), timers
        self.retries_forever = forever
        self.queue = workqueue.WorkQueue(clk, max_delay=workqueue.CONTROLLER_MAX_DELAY)

    def start(self):
        for key, delay, chore in self.timers:
            self.queue.add_after(key, delay, chore=chore)

    def sync(self, key):
        self.log.append(key)
        left = self.fails.get(key, 0)
        if left is None or left > 0:
            if left is not None:
                self.fails[key] = left - 1
            raise RuntimeError(f"{key} failed")


@pytest.fixture
def rt():
    r = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    r.settle()
    yield r
    r.close()


# (fails, retries for ever, timers) -> (syncs of "k", other keys synced, "k" dropped as a failure, k's retry left)
CASES = [
    pytest.param({"k": None}, True, (), (16, [], False, True), id="fails-for-ever: 16 tries, then settle ends"),
    pytest.param({"k": None}, False, (), (16, [], True, False), id="gives-up: dropped after 15 retries"),
    pytest.param({"k": 20}, True, (), (16, [], False, True), id="would-succeed-later: the next settle tries once"),
    pytest.param({"k": 5}, True, (), (6, [], False, False), id="succeeds-before-the-limit"),
    # (k: 16 tries by 164 s, then one a 1000 s back-off until the last timer, at 9000 s: 26)
    pytest.param({"k": None}, True, [("ttl", 7200, True), ("probe", 9000, False)],
                 (26, ["ttl", "probe"], False, True), id="the-other-timers-still-fire"),
]


@pytest.mark.parametrize("fails, forever, timers, want", CASES)
def test_settle_ends_when_only_failing_retries_are_left(rt, fails, forever, timers, want):
    log = []
    c = Flaky("flaky", rt.clock, log, fails, forever, timers)
    rt.components = [c]
    c.queue.on_add = rt._on_add
    c.start()
    c.queue.add("k")
    start = rt.clock.monotonic()
    rt.settle(max_iterations=10_000)
    syncs, others, dropped, retry_left = want
    assert log.count("k") == syncs and [k for k in log if k != "k"] == others
    assert bool(rt.failures) is dropped and ("k" in c.queue.timer_keys()) is retry_left
    assert rt.clock.monotonic() - start <= max([500] + [d for _, d, _ in timers])   # (not 10,000 jumps)


def test_the_next_settle_retries_once_more():
    """A key that failed past the limit is retried once by each later settle(): a test that changes what made
    it fail (a quota raised) sees it succeed."""
    r = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        log = []
        c = Flaky("flaky", r.clock, log, {"k": 20}, True)
        r.components = [c]
        c.queue.on_add = r._on_add
        c.queue.add("k")
        for want in (16, 17, 18, 19, 20, 21, 21):
            r.settle(max_iterations=10_000)
            assert log.count("k") == want
        assert not c.queue.timer_keys()
    finally:
        r.close()


def test_a_bare_pod_a_quota_refuses_lets_settle_end():
    """The real case: the PodGroup controller (which retries for ever) cannot make a bare pod's PodGroup; settle()
    ends after its 16 tries with the retry pending, and once the quota has room the next settle() makes it."""
    r = runtime.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    try:
        rq = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
              "spec": {"hard": {"count/podgroups.scheduling.volcano.sh": "0"}}}
        r.client.create(rq)
        r.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                         "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                                  "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}})
        start = r.clock.monotonic()
        r.settle(max_iterations=10_000)
        assert r.clock.monotonic() - start < 1000 and r.podgroup_controller.queue.num_requeues(f"{NS}/p") == 16
        assert r.client.list(kinds.PODGROUP, NS) == [] and not r.failures
        old = r.client.get(kinds.RESOURCEQUOTA, NS, "q")
        r.client.update({**old, "spec": {"hard": {"count/podgroups.scheduling.volcano.sh": "1"}}})
        r.settle(max_iterations=10_000)
        assert len(r.client.list(kinds.PODGROUP, NS)) == 1
    finally:
        r.close()
