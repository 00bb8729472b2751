"""lib/cron.py: robfig/cron v3 ParseStandard's grammar and messages, and next times walked by cronsim."""
from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from vclite.lib import cron

UTC = dt.timezone.utc
T = dt.datetime(2025, 3, 11, 10, 0, 30, 500000, tzinfo=UTC)   # a Tuesday


@pytest.mark.parametrize("spec,after,expected", [
    ("* * * * *", T, "2025-03-11T10:01:00+00:00"),
    ("0 * * * ?", T, "2025-03-11T11:00:00+00:00"),
    ("*/15 * * * *", T, "2025-03-11T10:15:00+00:00"),
    ("5/20 * * * *", T, "2025-03-11T10:05:00+00:00"),          # n/step = n-max/step
    ("0 9 * * mon-fri", T, "2025-03-12T09:00:00+00:00"),
    ("0 9 * * SAT", T, "2025-03-15T09:00:00+00:00"),
    ("0 0 1 jan *", T, "2026-01-01T00:00:00+00:00"),
    ("0 0 13 * 5", T, "2025-03-13T00:00:00+00:00"),            # both restricted: day 13 OR a Friday
    ("0 0 */2 * 5", T, "2025-03-13T00:00:00+00:00"),           # `*/2` carries no star bit: OR
    ("0 0 * * 5", T, "2025-03-14T00:00:00+00:00"),             # `*` day-of-month: AND
    ("0 0 29 2 *", T, "2028-02-29T00:00:00+00:00"),
    ("30 6-16/4 * * 1-5", T, "2025-03-11T10:30:00+00:00"),
    ("@hourly", T, "2025-03-11T11:00:00+00:00"),
    ("@daily", T, "2025-03-12T00:00:00+00:00"),
    ("@midnight", T, "2025-03-12T00:00:00+00:00"),
    ("@weekly", T, "2025-03-16T00:00:00+00:00"),
    ("@monthly", T, "2025-04-01T00:00:00+00:00"),
    ("@yearly", T, "2026-01-01T00:00:00+00:00"),
    ("@annually", T, "2026-01-01T00:00:00+00:00"),
    ("@every 1h", T, "2025-03-11T11:00:30+00:00"),            # t + delay, less t's fraction of a second
    ("@every 1m30s", T, "2025-03-11T10:02:00+00:00"),
    ("@every 1.5s", T, "2025-03-11T10:00:31+00:00"),          # whole seconds
    ("@every 300ms", T, "2025-03-11T10:00:31+00:00"),         # at least one second
    ("TZ=Asia/Tokyo 0 9 * * *", T, "2025-03-12T00:00:00+00:00"),
    ("CRON_TZ=America/New_York 0 9 * * *", T, "2025-03-11T13:00:00+00:00"),
    ("TZ=UTC @daily", T, "2025-03-12T00:00:00+00:00"),
])
def test_next(spec: str, after: dt.datetime, expected: str) -> None:
    got = cron.parse(spec).next(after)
    assert got is not None and got.isoformat() == expected
    assert got.tzinfo == after.tzinfo


@pytest.mark.parametrize("spec,message", [
    ("", "empty spec string"),
    ("error schedule", "expected exactly 5 fields, found 2: ['error', 'schedule']"),
    ("* * * * * *", "expected exactly 5 fields, found 6"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("*/2/3 * * * *", "too many slashes: */2/3"),
    ("0 0 L * *", 'failed to parse int from L'),
    ("0 0 * * 5#3", 'failed to parse int from 5#3'),
    ("@foo", "unrecognized descriptor: @foo"),
    ("@every x", "failed to parse duration @every x"),
    ("TZ=Foo/Bar * * * * *", "provided bad location Foo/Bar"),
])
def test_refused_as_robfig_does(spec: str, message: str) -> None:
    with pytest.raises(cron.CronError) as exc:
        cron.parse(spec)
    assert message in str(exc.value)


def test_a_schedule_that_never_fires_is_parsed() -> None:
    # robfig parses it; its Next returns the zero time (the controller then reports InvalidSchedule)
    assert cron.parse("59 23 31 2 *").next(T) is None


@pytest.mark.parametrize("local,expected", [
    (UTC, "2025-03-12T09:00:00+00:00"),
    (zoneinfo.ZoneInfo("Asia/Tokyo"), "2025-03-12T00:00:00+00:00"),
    (None, "2025-03-12T09:00:00+00:00"),   # the time's own zone (robfig's time.Local with a UTC time)
])
def test_schedule_without_zone_is_read_in_local(local, expected) -> None:
    assert cron.parse("0 9 * * *", local).next(T).isoformat() == expected


@pytest.mark.parametrize("name,ok", [("UTC", True), ("", True), ("Europe/Rome", True), ("Local", True),
                                     ("Amerrica/New_York", False), ("New York", False)])
def test_load_location(name: str, ok: bool) -> None:
    assert (cron.load_location(name) is not None) is ok
