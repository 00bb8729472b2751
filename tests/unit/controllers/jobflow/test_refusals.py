"""When a vcjob the API refused for now (a ResourceQuota) is tried again, and when its flow gives up."""
from __future__ import annotations

import datetime as dt

import pytest

from vclite.controllers.jobflow import refusals

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def at(seconds):
    return T0 + dt.timedelta(seconds=seconds)


@pytest.mark.parametrize("attempts, now, want", [
    pytest.param(1, 0, (False, 0.005), id="first-refusal-5ms"),
    pytest.param(2, 0.005, (False, 0.01), id="doubling"),
    pytest.param(8, 1.0, (False, 0.64), id="eighth"),
    pytest.param(13, 40, (False, refusals.RETRY_MAX), id="capped"),
    pytest.param(40, refusals.GIVE_UP - 3, (False, pytest.approx(3)), id="last-try-falls-on-the-limit"),
    pytest.param(41, refusals.GIVE_UP, (True, 0.0), id="limit-reached"),
    pytest.param(41, refusals.GIVE_UP - 1e-9, (True, 0.0), id="a-timer-a-rounding-error-early"),
    pytest.param(3, 500, (True, 0.0), id="long-past"),
])
def test_verdict(attempts, now, want):
    assert refusals.verdict(refusals.Refusal(T0, attempts), at(now)) == want


def test_the_limit_is_volcanos_fifteen_requeues():
    assert refusals.GIVE_UP == pytest.approx(163.835)


def test_bookkeeping_per_jobflow():
    r = refusals.Refusals()
    assert r.next_try("ns/f", T0) is None and not r
    assert r.refused("ns/f", "f-a", T0).attempts == 1
    assert r.refused("ns/f", "f-a", at(1)) == refusals.Refusal(T0, 2)   # (since the first refusal)
    r.refused("ns/f", "f-b", at(1))
    r.refused("other/g", "g-a", at(1))
    assert r.in_namespace("ns") == ["ns/f"]
    assert r.next_try("ns/f", at(1)) == 0.005   # f-b's first back-off
    r.created("ns/f", "f-b")
    assert r.next_try("ns/f", at(1)) == 0.01
    r.forget("other/g")
    assert r.in_namespace("other") == []


def test_a_refusal_whose_time_is_up_and_that_was_not_tried_again_is_dropped():
    r = refusals.Refusals()
    r.refused("ns/f", "f-a", T0)
    assert r.next_try("ns/f", at(refusals.GIVE_UP)) is None
    assert r.in_namespace("ns") == []


def test_give_up_message_keeps_the_quota_message():
    msg = refusals.give_up_message('jobs.batch.volcano.sh "f-a" is forbidden: exceeded quota: q',
                                   refusals.Refusal(T0, 28))
    assert msg == 'jobs.batch.volcano.sh "f-a" is forbidden: exceeded quota: q (refused 28 times over 163.8s: ' \
                  'not tried again)'


SINCE = "2026-01-01T00:00:00.500000Z"


@pytest.mark.parametrize("cond, want", [
    pytest.param({"phase": "Pending", "reason": "CreateRefused", "message": "m", "refusedSince": SINCE},
                 at(0.5), id="kept"),
    pytest.param({"phase": "Pending", "reason": "CreateRefused", "message": "m"}, None, id="no-time"),
    pytest.param({"phase": "Pending", "reason": "Creating", "refusedSince": SINCE}, None, id="not-refused-now"),
    pytest.param({"reason": "CreateRefused", "refusedSince": "yesterday"}, None, id="unreadable-time"),
    pytest.param({"reason": "CreateRefused", "refusedSince": "2026-01-02T00:00:00Z"}, None, id="in-the-future"),
    pytest.param(None, None, id="no-condition"),
])
def test_a_stored_condition_says_when_the_vcjob_was_first_refused(cond, want):
    assert refusals.stored_since(cond, at(21)) == want


def test_a_restarted_controller_starts_a_new_window_and_keeps_the_first_refusals_time():
    """The stored first refusal (a stop of any length ago) neither shortens the window nor the back-off: the
    window counts only time this controller ran (the old rule failed such a flow on its first try)."""
    r = refusals.Refusals()
    stored = at(-1000)   # refused, then the server stopped for 1000 s
    got = r.refused("ns/f", "f-a", T0, stored)
    assert got == refusals.Refusal(T0, 1, stored) and got.first_refused == stored
    assert refusals.verdict(got, T0) == (False, refusals.RETRY_BASE)
    assert r.refused("ns/f", "f-a", at(1), at(0)) == refusals.Refusal(T0, 2, stored)   # (its own from then on)
    assert refusals.verdict(got, at(refusals.GIVE_UP))[0]


def test_without_a_stored_refusal_the_first_refusal_is_the_windows_start():
    got = refusals.Refusals().refused("ns/f", "f-a", T0)
    assert (got.since, got.first_refused) == (T0, T0)
