"""metav1.Time text (format_time), which remembers the last second it formatted."""
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
