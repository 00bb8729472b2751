"""metav1.Time text (format_time), which remembers the last second it formatted, and Go durations (parse_duration)."""
import datetime as dt

import pytest

from vclite.lib import clock

UTC = dt.timezone.utc
T = dt.datetime(2026, 11, 21, 10, 24, 22, tzinfo=UTC)

# each row formats after the one before it: the remembered second must never leak into the next
SEQUENCE = [
    (T, "2026-11-21T10:24:22Z"),
    (T + dt.timedelta(microseconds=999_999), "2026-11-21T10:24:22Z"),
    (T + dt.timedelta(seconds=1), "2026-11-21T10:24:23Z"),
    (T - dt.timedelta(days=365), "2025-11-21T10:24:22Z"),
    (T.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30))), "2026-11-21T10:24:22Z"),
    (T - dt.timedelta(microseconds=1), "2026-11-21T10:24:21Z"),
    (dt.datetime(1960, 1, 1, 0, 0, 0, 500_000, tzinfo=UTC), "1960-01-01T00:00:00Z"),
    (dt.datetime(1959, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC), "1959-12-31T23:59:59Z"),
    (None, None),
]


def test_format_time_in_sequence():
    assert [clock.format_time(t) for t, _ in SEQUENCE] == [want for _, want in SEQUENCE]


@pytest.mark.parametrize("t, want", [row for row in SEQUENCE if row[0] is not None])
def test_format_time_alone(t, want):
    assert clock.format_time(t) == want
    assert clock.format_time(t) == want   # the remembered second gives the same text


@pytest.mark.parametrize("text, seconds", [
    pytest.param("1h30m", 5400.0, id="hours-minutes"),
    pytest.param("90s", 90.0, id="seconds"),
    pytest.param("1.5h", 5400.0, id="fraction"),
    pytest.param("-2m", -120.0, id="negative"),
    pytest.param("+3s", 3.0, id="plus-sign"),
    pytest.param("0", 0.0, id="bare-zero"),
    pytest.param("-0", 0.0, id="signed-bare-zero"),
    pytest.param(".5s", 0.5, id="leading-dot"),
    pytest.param("1.s", 1.0, id="trailing-dot"),
    pytest.param("250ms", 0.25, id="milliseconds"),
    pytest.param("3us", 3e-6, id="us"),
    pytest.param("3\u00b5s", 3e-6, id="micro-sign"),
    pytest.param("3\u03bcs", 3e-6, id="greek-mu"),
    pytest.param("7ns", 7e-9, id="nanoseconds"),
    pytest.param("2562047h", 2562047 * 3600.0, id="about-the-longest"),
])
def test_parse_duration_reads_what_go_reads(text, seconds):
    assert clock.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", [
    pytest.param("xyz", id="word"),
    pytest.param("5", id="bare-number"),
    pytest.param("", id="empty"),
    pytest.param("1h 30m", id="space"),
    pytest.param("1d", id="days"),
    pytest.param("s", id="unit-only"),
    pytest.param(".s", id="dot-only"),
    pytest.param("--1s", id="two-signs"),
    pytest.param("\u0661s", id="non-ascii-digit"),
    pytest.param("2562048h", id="longer-than-go-can-hold"),
])
def test_parse_duration_refuses_what_go_refuses(text):
    with pytest.raises(ValueError, match="invalid duration"):
        clock.parse_duration(text)
