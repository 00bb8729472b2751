"""The injected clock. Nothing in vclite reads wall time directly: it asks a Clock.

RealClock is wall time (for `vcctl run` and the server). VirtualClock starts at a fixed instant
and only moves when told to (`advance`, `jump_to`); the runtime jumps it to the next timer when
everything is idle, so a day of cluster time is simulated in milliseconds, deterministically.
Times are timezone-aware UTC datetimes; `monotonic()` is seconds as a float for durations.
"""
from __future__ import annotations

import datetime as _dt
import time as _time
from typing import Protocol

UTC = _dt.timezone.utc


class Clock(Protocol):
    def now(self) -> _dt.datetime: ...

    def monotonic(self) -> float: ...


class RealClock:
    """Wall time."""

    virtual = False

    def now(self) -> _dt.datetime:
        return _dt.datetime.now(UTC)

    def monotonic(self) -> float:
        return _time.monotonic()


class VirtualClock:
    """A clock that moves only when told to. `monotonic()` counts seconds since the start."""

    virtual = True

    def __init__(self, start: _dt.datetime | None = None):
        self._start = start or _dt.datetime(2026, 1, 1, tzinfo=UTC)
        self._offset = 0.0

    def now(self) -> _dt.datetime:
        return self._start + _dt.timedelta(seconds=self._offset)

    def monotonic(self) -> float:
        return self._offset

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self._offset += seconds

    def jump_to(self, monotonic: float) -> None:
        if monotonic > self._offset:
            self._offset = monotonic


_last_formatted: tuple[float, str] = (float("nan"), "")   # (whole second, its text): one strftime a second


def format_time(t: _dt.datetime | None) -> str | None:
    """RFC 3339 with second precision and a `Z`, as Kubernetes writes metav1.Time."""
    global _last_formatted
    if t is None:
        return None
    second = t.timestamp() // 1
    if _last_formatted[0] != second:
        _last_formatted = (second, t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return _last_formatted[1]


def format_micro_time(t: _dt.datetime) -> str:
    """RFC 3339 with microseconds (metav1.MicroTime), used where ordering within a second matters."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s: str | None) -> _dt.datetime | None:
    """Parse an RFC 3339 timestamp written by format_time / format_micro_time (or by Kubernetes)."""
    if not s:
        return None
    return _dt.datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


MAX_DURATION_SECONDS = 9_223_372_036.854775807   # Go's longest time.Duration (2^63-1 ns, about 292 years)


def parse_duration(s: str) -> float:
    """Parse a Go duration (`1h2m3.5s`, `500ms`, `10s`, `-2m`, `0`) into seconds, as Go's time.ParseDuration
    does: units ns, us, µs (either micro sign), ms, s, m, h; a bare number other than 0 and a duration longer
    than Go's longest are refused. ValueError if malformed."""
    import re

    if not isinstance(s, str) or not s:
        raise ValueError(f"invalid duration {s!r}")
    units = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    body = s[1:] if s[0] in "+-" else s
    if body == "0":
        return 0.0
    parts = re.findall(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)", body)
    if not parts or "".join(n + u for n, u in parts) != body:
        raise ValueError(f"invalid duration {s!r}")
    total = sum(float(n) * units[u] for n, u in parts)
    if total > MAX_DURATION_SECONDS:
        raise ValueError(f"invalid duration {s!r}")
    return -total if s[0] == "-" else total


def format_duration(seconds: float) -> str:
    """Format seconds as a Go duration string (`1m30s`, `2.5s`, `0s`)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    out = ""
    if h:
        out += f"{int(h)}h"
    if h or m:
        out += f"{int(m)}m"
    s_txt = f"{s:.9f}".rstrip("0").rstrip(".")
    out += f"{s_txt}s"
    return sign + out


def human_duration(seconds: float, zero_days: bool = False) -> str:
    """k8s.io/apimachinery duration.HumanDuration (what Volcano's jobflow list prints as Age);
    `zero_days` = Volcano's own util.HumanDuration, which prints `2y0d` where the former says `2y`."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        return f"{minutes}m" if secs % 60 == 0 else f"{minutes}m{secs % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 and not zero_days else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"
