"""runtime.leader: client-go's leader election rules, over a real in-process API (Leases admitted
and stored as on `vcctl server`), with a hand-moved monotonic clock for the terms."""
import asyncio
import threading
import time

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.runtime import leader

NOW = "2026-11-21T10:00:00.000000Z"
LATER = "2026-11-21T10:00:02.000000Z"


@pytest.mark.parametrize("old, identity, expected", [
    # no lease yet: created held, no transition counted
    (None, "a", {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": LATER, "renewTime": LATER,
                 "leaseTransitions": 0}),
    # a renewal keeps the acquisition time and the count
    ({"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": NOW, "renewTime": NOW, "leaseTransitions": 3},
     "a", {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": NOW, "renewTime": LATER,
           "leaseTransitions": 3}),
    # a take-over starts a term and counts one more transition
    ({"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": NOW, "renewTime": NOW, "leaseTransitions": 3},
     "b", {"holderIdentity": "b", "leaseDurationSeconds": 15, "acquireTime": LATER, "renewTime": LATER,
           "leaseTransitions": 4}),
    # a released lease (no holder), written by another tool without a count
    ({"holderIdentity": "", "leaseDurationSeconds": 1}, "b",
     {"holderIdentity": "b", "leaseDurationSeconds": 15, "acquireTime": LATER, "renewTime": LATER,
      "leaseTransitions": 1}),
])
def test_claim(old, identity, expected):
    assert leader.claim(old, identity, LATER, 15.0) == expected


@pytest.mark.parametrize("spec, observed_at, now, held", [
    ({"holderIdentity": "other", "leaseDurationSeconds": 15}, 100.0, 114.9, True),
    ({"holderIdentity": "other", "leaseDurationSeconds": 15}, 100.0, 115.0, False),   # the term has run out
    ({"holderIdentity": "me", "leaseDurationSeconds": 15}, 100.0, 101.0, False),      # ours
    ({"holderIdentity": "", "leaseDurationSeconds": 1}, 100.0, 100.1, False),         # released
    ({"leaseDurationSeconds": 15}, 100.0, 100.1, False),                              # never held
])
def test_held_elsewhere(spec, observed_at, now, held):
    assert leader.held_elsewhere(spec, "me", observed_at, now) is held


@pytest.mark.parametrize("changes, problem", [
    ({}, None),
    ({"lease_duration": 10.0}, "greater than the renew deadline"),
    ({"renew_deadline": 2.4}, "greater than 1.2 × the retry period"),
    ({"retry_period": 0.0}, "above 0"),
    ({"lease_duration": 0.5, "renew_deadline": 0.2, "retry_period": 0.1}, "at least 1s"),
    ({"identity": ""}, "identity"),
])
def test_settings_problem(changes, problem):
    settings = leader.Settings(**{"identity": "me", **changes})
    found = leader.settings_problem(settings)
    assert (found is None) if problem is None else (problem in found)


class Ticker:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def api():
    return inprocess.new_client(clock_mod.RealClock())


def elector(api, identity, ticker, **settings):
    return leader.Elector(api, leader.Settings(identity=identity, **settings), monotonic=ticker)


def stored(api):
    return api.get(kinds.LEASE, "volcano-system", "vclite-controller")["spec"]


def test_first_candidate_creates_the_lease_the_second_waits_out_the_term_then_takes_over(api):
    ticker = Ticker()
    a, b = elector(api, "a", ticker), elector(api, "b", ticker)
    assert a.try_acquire_or_renew() and a.is_leader()
    assert stored(api)["holderIdentity"] == "a" and stored(api)["leaseTransitions"] == 0
    assert not b.try_acquire_or_renew() and b.holder == "a" and b.last_error == ""
    ticker.now += 14
    assert not b.try_acquire_or_renew()           # 14 s since b first saw this version: the term runs
    ticker.now += 5
    assert a.try_acquire_or_renew()                # a renews: a new version ...
    assert not b.try_acquire_or_renew()            # ... which b counts its wait from
    ticker.now += 16                               # a stops renewing
    assert b.try_acquire_or_renew() and b.is_leader()
    spec = stored(api)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert not a.try_acquire_or_renew() and not a.is_leader()   # a sees it lost the lease


def test_renewal_keeps_acquire_time(api):
    a = elector(api, "a", Ticker())
    assert a.try_acquire_or_renew()
    first = stored(api)
    assert a.try_acquire_or_renew()
    second = stored(api)
    assert second["acquireTime"] == first["acquireTime"] and second["renewTime"] >= first["renewTime"]
    assert second["leaseTransitions"] == 0


def test_two_candidates_racing_on_one_version_only_one_wins(api):
    ticker = Ticker()
    a, b, c = (elector(api, name, ticker) for name in "abc")
    assert a.try_acquire_or_renew()
    ticker.now += 20                                     # a's term ran out for everyone who saw it
    b._observe(api.get(kinds.LEASE, "volcano-system", "vclite-controller"))
    c._observe(api.get(kinds.LEASE, "volcano-system", "vclite-controller"))
    b._observed_at = c._observed_at = ticker.now - 20
    stale = api.get(kinds.LEASE, "volcano-system", "vclite-controller")
    assert b.try_acquire_or_renew()
    with pytest.raises(errors.Conflict):                 # the update c would send, at the version both read
        api.update({**stale, "spec": leader.claim(stale["spec"], "c", NOW, 15)})
    assert not c.try_acquire_or_renew() and c.holder == "b"


def test_release_lets_a_standby_take_over_without_waiting_out_the_term(api):
    ticker = Ticker()
    a, b = elector(api, "a", ticker), elector(api, "b", ticker)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release() and not a.is_leader()
    assert stored(api)["holderIdentity"] == "" and stored(api)["leaseDurationSeconds"] == 1
    assert b.try_acquire_or_renew()
    assert stored(api)["leaseTransitions"] == 1
    assert b.release() and a.release()   # (a holds nothing: nothing to release)


def test_api_errors_are_failed_attempts_that_say_why(api):
    ticker = Ticker()
    a = elector(api, "a", ticker, namespace="Not_A_Namespace")
    assert not a.try_acquire_or_renew()
    assert "cannot create Lease Not_A_Namespace/vclite-controller" in a.last_error


def test_the_lease_is_validated_as_kubernetes_does(api):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
             "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1, "renewTime": "soon", "holderIdentity": 7}}
    with pytest.raises(errors.Invalid) as e:
        api.create(lease)
    for field in ("leaseDurationSeconds", "leaseTransitions", "renewTime", "holderIdentity"):
        assert f"spec.{field}" in str(e.value)
    with pytest.raises(errors.Invalid, match="preferredHolder"):
        api.create({**lease, "spec": {"preferredHolder": "x"}})
    with pytest.raises(errors.NotFound):
        api.get(kinds.LEASE, "default", "l")


FAST = dict(lease_duration=1.0, renew_deadline=0.5, retry_period=0.05)


def test_acquire_waits_while_another_holds_and_stops_when_asked(api):
    async def go():
        holder = leader.Elector(api, leader.Settings(identity="holder", **FAST))
        assert holder.try_acquire_or_renew()
        stop = asyncio.Event()
        waiting = leader.Elector(api, leader.Settings(identity="standby", **FAST))
        task = asyncio.get_running_loop().create_task(leader.acquire(waiting, stop))
        for _ in range(4):   # the holder renews for a while: the standby keeps waiting
            await asyncio.sleep(0.2)
            assert holder.try_acquire_or_renew() and not task.done()
        # the holder is gone: its term runs out, the standby leads (waited for, not timed: a loaded machine)
        await asyncio.wait_for(asyncio.shield(task), timeout=15)
        assert task.result() is True and waiting.is_leader()
        again = asyncio.get_running_loop().create_task(leader.acquire(holder, stop))
        await asyncio.sleep(0.2)
        stop.set()
        assert await again is False
    asyncio.run(go())


def _until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.02)


def test_keeper_renews_from_its_own_thread_even_while_the_caller_is_busy(api):
    me = leader.Elector(api, leader.Settings(identity="me", **FAST))
    assert me.try_acquire_or_renew()
    lost = []
    keeper = leader.Keeper(me, lost.append)
    keeper.start()
    try:
        before = stored(api)["renewTime"]
        time.sleep(1.2)   # this thread (the controllers' loop, in vcctl controller) is busy past the term
        assert stored(api)["renewTime"] > before and me.is_leader() and lost == []
    finally:
        keeper.stop()
    stopped_at = stored(api)["renewTime"]
    time.sleep(0.3)
    assert stored(api)["renewTime"] == stopped_at   # stopped: no more renewals


def test_keeper_reports_a_lease_taken_by_another(api):
    # (a renew deadline a loaded machine keeps: with FAST's 0.5 s a slow API call read as "no answer"; the
    # thief's term outlasts it, so the lease is still the thief's when the keeper gives up)
    me = leader.Elector(api, leader.Settings(identity="me", lease_duration=3.0, renew_deadline=2.5,
                                             retry_period=0.05))
    assert me.try_acquire_or_renew()
    lease = api.get(kinds.LEASE, "volcano-system", "vclite-controller")
    api.update({**lease, "spec": leader.claim(lease["spec"], "thief", NOW, 30.0)})   # (as after a long pause of ours)
    lost = []
    keeper = leader.Keeper(me, lost.append)
    keeper.start()
    try:
        _until(lambda: lost)
    finally:
        keeper.stop()
    assert lost == ["Lease volcano-system/vclite-controller is held by thief"]


def test_keeper_gives_up_on_a_hanging_api_at_the_deadline():
    release = threading.Event()

    class Hanging:   # an API server that stopped answering (a dead connection)
        def get(self, *a):
            release.wait(10)
            raise errors.NotFound("gone")

    me = leader.Elector(Hanging(), leader.Settings(identity="me", **FAST))
    lost = []
    keeper = leader.Keeper(me, lost.append)
    started = time.monotonic()
    keeper.start()
    try:
        _until(lambda: lost, timeout=5)
    finally:
        release.set()
        keeper.stop()
    assert lost == ["no answer from the API server within 0.5s"] and time.monotonic() - started < 5


def test_a_hung_api_call_counts_as_a_failed_attempt(api):
    release = threading.Event()

    class Hanging:
        def get(self, *a):
            release.wait(5)
            raise errors.NotFound("gone")

    async def go():
        me = leader.Elector(Hanging(), leader.Settings(identity="me", **FAST))
        ok = await leader._attempt(me, 0.1)
        release.set()
        return ok, me.last_error
    ok, why = asyncio.run(go())
    assert not ok and "no answer from the API server within 0.1s" in why


@pytest.mark.parametrize("spec, observed_at, now, blindly", [
    ({"holderIdentity": "me", "leaseDurationSeconds": 15}, 100.0, 114.9, True),    # ours, its term runs
    ({"holderIdentity": "me", "leaseDurationSeconds": 15}, 100.0, 115.0, False),   # ours, run out: read first
    ({"holderIdentity": "other", "leaseDurationSeconds": 15}, 100.0, 101.0, False),
    ({"holderIdentity": "", "leaseDurationSeconds": 1}, 100.0, 100.1, False),      # released
    ({"holderIdentity": "me"}, 100.0, 100.1, False),                               # no term
])
def test_renews_blindly(spec, observed_at, now, blindly):
    assert leader.renews_blindly(spec, "me", observed_at, now) is blindly


@pytest.mark.parametrize("renewed_at, now, may", [
    (100.0, 100.0, True),
    (100.0, 109.9, True),
    (100.0, 110.0, False),     # the renew deadline has passed since the renewal was sent (a pause)
    (100.0, 500.0, False),
    (None, 100.0, False),      # never renewed
])
def test_leading(renewed_at, now, may):
    assert leader.leading(renewed_at, now, 10.0) is may


class Counting:
    """The real in-process API, counting the requests made through it."""

    def __init__(self, api):
        self.api, self.calls = api, []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(self.api, name)


def test_a_renewal_within_the_term_is_one_update_a_conflict_falls_back_to_reading(api):
    ticker = Ticker()
    counting = Counting(api)
    me = elector(counting, "me", ticker)
    assert me.try_acquire_or_renew() and counting.calls == ["get", "create"]
    counting.calls.clear()
    ticker.now += 5
    assert me.try_acquire_or_renew() and counting.calls == ["update"]      # client-go's fast path
    lease = api.get(kinds.LEASE, "volcano-system", "vclite-controller")
    api.update({**lease, "spec": leader.claim(lease["spec"], "me", LATER, 15)})   # written meanwhile (another tool)
    counting.calls.clear()
    assert me.try_acquire_or_renew() and counting.calls == ["update", "get", "update"]   # conflict: read, renew
    counting.calls.clear()
    ticker.now += 16                                                          # the term ran out: read first
    assert me.try_acquire_or_renew() and counting.calls == ["get", "update"]


def test_writes_are_allowed_within_the_renew_deadline_of_the_last_renewal_and_while_held(api):
    ticker = Ticker()
    a, b = elector(api, "a", ticker), elector(api, "b", ticker)
    assert not a.may_write()                      # not acquired yet
    assert a.try_acquire_or_renew() and a.may_write()
    ticker.now += 9.9
    assert a.may_write()
    ticker.now += 0.1                             # 10 s (the renew deadline) since the renewal was sent
    assert not a.may_write()
    assert a.try_acquire_or_renew() and a.may_write()
    assert not b.try_acquire_or_renew()
    ticker.now += 16
    assert b.try_acquire_or_renew() and b.may_write()
    a.renewed_at = ticker.now                     # (even just renewed as a believes:)
    assert not a.try_acquire_or_renew() and not a.may_write()   # it has seen b hold the lease


def _paused_and_resumed(api, taken_meanwhile):
    """A leader (with its keeper and its fenced client) whose monotonic clock jumps past its term, as a
    process's does across a SIGSTOP: the keeper's next renewal re-checks the lease."""
    ticker = Ticker()
    me = elector(api, "me", ticker, **FAST)
    assert me.try_acquire_or_renew()
    if taken_meanwhile:   # another replica waited out the term and took the lease
        lease = api.get(kinds.LEASE, "volcano-system", "vclite-controller")
        api.update({**lease, "spec": leader.claim(lease["spec"], "other", LATER, 30)})
    lost = []
    keeper = leader.Keeper(me, lost.append)
    ticker.now += 60
    return me, keeper, leader.Fenced(api, keeper), lost


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "written", "namespace": "default"}}


def test_a_leader_resumed_after_its_lease_was_taken_writes_nothing(api):
    me, keeper, fenced, lost = _paused_and_resumed(api, taken_meanwhile=True)
    assert not me.may_write()
    keeper.start()
    try:
        with pytest.raises(leader.LeaseLost, match="held by other"):
            fenced.create(CONFIGMAP)
    finally:
        keeper.stop()
    assert lost == ["Lease volcano-system/vclite-controller is held by other"]
    with pytest.raises(errors.NotFound):
        api.get(kinds.CONFIGMAP, "default", "written")


def test_a_leader_resumed_with_its_lease_still_its_own_renews_it_before_it_writes(api):
    counting = Counting(api)
    me, keeper, fenced, lost = _paused_and_resumed(counting, taken_meanwhile=False)
    counting.calls.clear()
    keeper.start()
    try:
        fenced.create(CONFIGMAP)
    finally:
        keeper.stop()
    assert lost == [] and "create" in counting.calls
    assert counting.calls[:2] == ["get", "update"]        # the re-check (the term ran out: read, then renew) ...
    assert counting.calls.index("create") > 1             # ... before the write went out
    assert api.get(kinds.CONFIGMAP, "default", "written")["metadata"]["name"] == "written"
    with pytest.raises(leader.LeaseLost):                 # a stopped keeper renews no more: no more writes
        fenced.delete(kinds.CONFIGMAP, "default", "written")
