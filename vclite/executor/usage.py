"""What a container's processes use — CPU time and resident memory — read from /proc.

A container here is the process group its process leads (runner.py). One pass over /proc gives, for
each wanted group, the CPU time of its live processes (user and system, their own and that of the
children they waited for: a finished step of a script still counts) and their resident memory — but for a
server's exit journal wrapper (exits.py), the group's leader, which is not the container's program. The
memory limit (memory.py) and `kubectl top` (`usage_rate`, the metrics API) read it.

Pure functions but `by_group` (and `boot_seconds`), which read /proc. Must not: know pods.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Collection, Iterable

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
MIN_WINDOW = 1.0    # seconds: a shorter gap since the last sample reads as the average since the start


@dataclasses.dataclass(frozen=True)
class Usage:
    cpu_seconds: float = 0.0      # CPU time used so far by the group's live processes
    resident: int = 0             # resident bytes, summed
    started: float | None = None  # seconds after boot the group's leader started (None: not seen)


@dataclasses.dataclass(frozen=True)
class ContainerUsage:
    cores: float       # CPU used, in cores, over `window`
    resident: int      # resident bytes now
    window: float      # seconds the CPU figure is the average of


@dataclasses.dataclass(frozen=True)
class Stat:
    group: int
    cpu_seconds: float
    resident: int
    started: float
    pid: int


def parse_stat(pid: int, line: str) -> Stat:
    """A /proc/<pid>/stat line (the name may hold spaces and parentheses: fields are counted from its
    last `)`): process group (field 5), utime, stime, cutime, cstime (14-17), starttime (22), rss (24)."""
    f = line[line.rindex(")") + 2:].split()
    cpu = (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / TICKS
    return Stat(int(f[2]), cpu, int(f[21]) * PAGE_SIZE, int(f[19]) / TICKS, pid)


def add(stats: Iterable[Stat], groups: Iterable[int], wrapped: Collection[int] = ()) -> dict[int, Usage]:
    """Each of `groups` summed over `stats` (the leader's start time is the group's). The leader of a group in
    `wrapped` is the exit journal's wrapper shell (exits.py), not the container's: its start counts, not what
    it uses."""
    out = {g: Usage() for g in groups}
    for s in stats:
        u = out.get(s.group)
        if u is not None:
            leader = s.pid == s.group
            if leader and s.group in wrapped:
                out[s.group] = Usage(u.cpu_seconds, u.resident, s.started)
                continue
            out[s.group] = Usage(u.cpu_seconds + s.cpu_seconds, u.resident + s.resident,
                                 s.started if leader else u.started)
    return out


def by_group(groups: Iterable[int], proc: str = "/proc", wrapped: Collection[int] = ()) -> dict[int, Usage]:
    """What every process of each of `groups` (process group ids) uses now, summed per group (`wrapped`: see
    add)."""
    wanted = set(groups)
    if not wanted:
        return {}
    try:
        entries = os.listdir(proc)
    except OSError:
        return add((), wanted)
    return add(_stats(proc, entries), wanted, wrapped)


def _stats(proc: str, entries: list[str]) -> Iterable[Stat]:
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/stat") as f:
                yield parse_stat(int(entry), f.read())
        except (OSError, ValueError, IndexError):
            continue   # (gone meanwhile, or not readable)


def boot_seconds(proc: str = "/proc") -> float | None:
    """Seconds since boot (/proc/uptime), the clock process start times count on."""
    try:
        with open(f"{proc}/uptime") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def usage_rate(now: float, current: Usage, previous: tuple[float, float] | None) -> tuple[float, float]:
    """(cores used, window in seconds): the CPU time used since `previous` — (seconds after boot,
    cpu_seconds) of an earlier sample — if it is at least MIN_WINDOW old, else since the group started.
    `now` is seconds after boot."""
    if previous is not None and now - previous[0] >= MIN_WINDOW and current.cpu_seconds >= previous[1]:
        window = now - previous[0]
        return (current.cpu_seconds - previous[1]) / window, window
    if current.started is None:
        return 0.0, 0.0
    window = max(now - current.started, 1.0 / TICKS)
    return current.cpu_seconds / window, window
