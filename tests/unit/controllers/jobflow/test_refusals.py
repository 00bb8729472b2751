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


@pytest.mark.parametrize("waited, tries", [
    pytest.param(0, 1, id="at-once"),
    pytest.param(0.004, 1, id="before-the-first-back-off-ends"),
    pytest.param(0.005, 2, id="the-first-back-off-ends"),
    pytest.param(0.015, 3, id="two-back-offs"),
    pytest.param(10.235, 12, id="the-last-doubling"),
    pytest.param(20.235, 13, id="then-every-ten-seconds"),
])
def test_tries_by_counts_the_back_off_schedule(waited, tries):
    assert refusals.tries_by(waited) == tries


SINCE = "2026-01-01T00:00:00.500000Z"


@pytest.mark.parametrize("cond, want", [
    pytest.param({"phase": "Pending", "reason": "CreateRefused", "message": "m", "refusedSince": SINCE},
                 refusals.Refusal(at(0.5), 13), id="taken-up"),
    pytest.param({"phase": "Pending", "reason": "CreateRefused", "message": "m"}, None, id="no-time"),
    pytest.param({"phase": "Pending", "reason": "Creating", "refusedSince": SINCE}, None, id="not-refused-now"),
    pytest.param({"reason": "CreateRefused", "refusedSince": "yesterday"}, None, id="unreadable-time"),
    pytest.param({"reason": "CreateRefused", "refusedSince": "2026-01-02T00:00:00Z"}, None, id="in-the-future"),
    pytest.param(None, None, id="no-condition"),
])
def test_a_stored_condition_gives_the_refusal_a_restarted_controller_takes_up(cond, want):
    assert refusals.from_condition(cond, at(21)) == want


def test_a_stored_refusal_is_taken_up_only_by_a_controller_without_its_own():
    r = refusals.Refusals()
    stored = refusals.Refusal(at(-100), 14)
    assert r.refused("ns/f", "f-a", T0, stored) == refusals.Refusal(at(-100), 15)
    assert r.refused("ns/f", "f-a", at(1), refusals.Refusal(at(0), 1)) == refusals.Refusal(at(-100), 16)
