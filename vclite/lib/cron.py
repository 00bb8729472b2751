"""Cron schedules as Volcano reads them: robfig/cron v3's `ParseStandard` (what the CronJob webhook
and controller call), with the `cronsim` library finding the next matching time.

Accepted: five fields (minute hour day-of-month month day-of-week: numbers, `*`, `?`, ranges
`a-b`, steps `/n`, lists `a,b`, month and weekday names in any case); the descriptors `@yearly`,
`@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`; `@every <Go duration>`
(whole seconds, at least one: robfig's ConstantDelaySchedule); a `TZ=<zone> ` or `CRON_TZ=<zone> `
prefix. Anything else is refused with robfig's message (no `L`, `W`, `#`, six fields, weekday 7).

robfig's day rule is kept exactly: the day-of-month and day-of-week fields are ANDed when either
is a bare `*`/`?` (a `*/2` is not), ORed otherwise. A field is handed to cronsim as the explicit
list of values robfig's parser computed (or `*`), so cronsim only walks the calendar. A schedule
that can never fire (`59 23 31 2 *`: robfig parses it, its Next returns the zero time) has
`next() -> None`. A schedule without a zone is read in `local` (robfig: the controller's time.Local).
Pure: no clock, no I/O.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import zoneinfo

import cronsim

from vclite.lib import clock as clock_mod

UTC = _dt.timezone.utc
DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
EVERY = "@every "
_MONTHS = {n: i + 1 for i, n in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {n: i for i, n in enumerate("sun mon tue wed thu fri sat".split())}
# (min, max, names) per field, in order: minute, hour, day-of-month, month, day-of-week
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))


class CronError(ValueError):
    """A schedule robfig/cron's ParseStandard refuses; the message is robfig's."""


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A parsed schedule. `every`: seconds of an `@every` schedule (else None); `expr`: the
    cronsim expression (explicit values per field); `zone`: where the fields are read (None: the
    time's own zone, as robfig's time.Local); `never`: no time ever matches."""

    expr: str = ""
    every: int | None = None
    zone: _dt.tzinfo | None = None
    never: bool = False

    def next(self, t: _dt.datetime) -> _dt.datetime | None:
        """The first activation strictly after `t` (at whole seconds), in `t`'s zone; None if never."""
        if self.every is not None:   # ConstantDelaySchedule.Next: t + delay, less t's fraction of a second
            return t + _dt.timedelta(seconds=self.every) - _dt.timedelta(microseconds=t.microsecond)
        if self.never:
            return None
        local = t.astimezone(self.zone) if self.zone is not None else t
        try:
            found = next(cronsim.CronSim(self.expr, local))
        except StopIteration:
            return None
        return found.astimezone(t.tzinfo)


def parse(spec: str, local: _dt.tzinfo | None = None) -> Schedule:
    """robfig's ParseStandard(spec); `local` stands for time.Local (None: each time's own zone)."""
    if not spec:
        raise CronError("empty spec string")
    zone = local
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        space, eq = spec.find(" "), spec.find("=")
        name = spec[eq + 1:space] if space > eq else spec[eq + 1:]
        zone = load_location(name)
        if zone is None:
            raise CronError(f"provided bad location {name}: unknown time zone {name}")
        spec = spec[space:].strip() if space > eq else ""
    if spec.startswith("@"):
        return _descriptor(spec, zone)
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
    parts = [_field(f, *bounds) for f, bounds in zip(fields, _BOUNDS)]
    expr = " ".join(_cronsim_field(values, star) for values, star in parts)
    try:
        cronsim.CronSim(expr, _dt.datetime(2000, 1, 1, tzinfo=UTC))
    except cronsim.CronSimError:   # e.g. day 31 of February only: parsed, never fires
        return Schedule(expr=expr, zone=zone, never=True)
    return Schedule(expr=expr, zone=zone)


def load_location(name: str) -> _dt.tzinfo | None:
    """Go's time.LoadLocation: "" and "UTC" are UTC, "Local" is the process's zone, else an IANA
    name (None if unknown)."""
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return local_zone()
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None


def local_zone() -> _dt.tzinfo:
    """The process's zone (Go's time.Local): $TZ when it names a zone, else /etc/localtime, else UTC."""
    name = os.environ.get("TZ", "").removeprefix(":")
    if name:
        return load_location(name) or UTC
    try:
        with open("/etc/localtime", "rb") as f:
            return zoneinfo.ZoneInfo.from_file(f, key="Local")
    except (OSError, ValueError):
        return UTC


def _descriptor(spec: str, zone: _dt.tzinfo | None) -> Schedule:
    if spec in DESCRIPTORS:
        return parse(DESCRIPTORS[spec], zone)
    if spec.startswith(EVERY):
        try:
            seconds = clock_mod.parse_duration(spec[len(EVERY):])
        except ValueError as exc:
            raise CronError(f"failed to parse duration {spec}: {exc}") from None
        return Schedule(every=max(1, int(seconds)), zone=zone)   # Every(): whole seconds, at least one
    raise CronError(f"unrecognized descriptor: {spec}")


def _field(text: str, lo: int, hi: int, names: dict[str, int] | None) -> tuple[set[int], bool]:
    """robfig's getField: the values a comma list selects, and whether it carries the star bit."""
    values: set[int] = set()
    star = False
    for expr in text.split(","):
        got, got_star = _range(expr, lo, hi, names)
        values |= got
        star = star or got_star
    return values, star


def _range(expr: str, lo: int, hi: int, names: dict[str, int] | None) -> tuple[set[int], bool]:
    """robfig's getRange: `*`, `?`, `n`, `a-b`, each optionally `/step` (`n/step` means n-max/step)."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    star = False
    if low_and_high[0] in ("*", "?"):
        start, end, star = lo, hi, True
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = hi
        if step > 1:
            star = False
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < lo:
        raise CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _int(text)


def _int(text: str) -> int:
    """Go's strconv.Atoi (an optional sign, decimal digits), then robfig's no-negative rule."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    num = int(text)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {text}")
    return num


def _cronsim_field(values: set[int], star: bool) -> str:
    """A field for cronsim: `*` when robfig set the star bit (cronsim then ANDs the day fields, as
    robfig does), else the explicit values (never starting with `*`: cronsim then ORs them)."""
    return "*" if star else ",".join(str(v) for v in sorted(values))
