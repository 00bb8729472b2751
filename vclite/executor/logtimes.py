"""When each part of a container's log was written: a time index beside the log, for
`kubectl logs --timestamps`, `--since` and `--since-time`.

A container's process writes its log file itself (nothing of vclite between the process and the file: a quick
job's hop pays nothing for logging, and a process keeps logging while a server restarts). So the time of a line is
the time the executor saw it: every SAMPLE_INTERVAL seconds, for each container whose process runs, the executor
appends `<size> <unix time>` to `<log>.times` when the log has grown — a sample: every byte before `size` was
there by then. A line takes the time of the first sample at or after its end; the bytes after the last sample take
the time the run ended (its `finishedAt`), or, while it runs, the time they are read. A container taken over after
a restart (executor/recovery.py) gets one sample at once: what it wrote while no server ran takes the time of the
log's last write then (`catch_up`). A container that ends within its first interval (most quick jobs) has no
index: its lines take its end time. A time is therefore at most SAMPLE_INTERVAL late and never early (the
kubelet's are the moment the runtime read the line) — but for the end time, which the pod status gives in whole
seconds.

Pure but for `append_sample`, `read_samples` and `catch_up` (one small file each).
"""
from __future__ import annotations

import bisect
import datetime as dt
import pathlib
from typing import Callable

SAMPLE_INTERVAL = 0.5   # seconds between two looks at the logs of the running containers
SUFFIX = ".times"

Samples = list[tuple[int, float]]   # (log size, unix time it was seen), by size


def times_path(log: pathlib.Path) -> pathlib.Path:
    """The time index of the log file `log` (`main.log` -> `main.log.times`)."""
    return log.with_name(log.name + SUFFIX)


def append_sample(log: pathlib.Path, size: int, when: float) -> None:
    with open(times_path(log), "a", encoding="ascii") as f:
        f.write(f"{size} {when:.6f}\n")


def catch_up(log: pathlib.Path) -> tuple[int, int] | None:
    """A log written while no executor looked at it (a container taken over after a restart: its process kept
    writing): one sample at its size with the time of its last write (every byte was there by then: never early),
    unless no byte came since the last sample. Its (inode, size) as sampled, None when it cannot be read."""
    try:
        st = log.stat()
    except OSError:
        return None
    samples = read_samples(log)
    if st.st_size > (samples[-1][0] if samples else 0):
        append_sample(log, st.st_size, max(st.st_mtime, samples[-1][1] if samples else 0.0))
    return st.st_ino, st.st_size


def parse_samples(text: str) -> Samples:
    """The samples of an index file's text; a last line without its newline (the writer stopped
    mid-line) and a line out of order (never written so, but a file may be damaged) are left out."""
    out: Samples = []
    for line in text.split("\n")[:-1]:
        size, _, when = line.partition(" ")
        try:
            sample = (int(size), float(when))
        except ValueError:
            continue
        if not out or (sample[0] > out[-1][0] and sample[1] >= out[-1][1]):
            out.append(sample)
    return out


def read_samples(log: pathlib.Path) -> Samples:
    try:
        return parse_samples(times_path(log).read_text(encoding="ascii", errors="replace"))
    except OSError:
        return []


def time_of(samples: Samples, end: int, fallback: float) -> float:
    """The time of the bytes that end at offset `end`: the first sample at or after it, else
    `fallback` (never earlier than the last sample)."""
    i = bisect.bisect_left(samples, (end, float("-inf")))
    if i < len(samples):
        return samples[i][1]
    return max(fallback, samples[-1][1]) if samples else fallback


def format_time(when: float) -> str:
    """The kubelet's time prefix: RFC 3339 in UTC with nine fractional digits."""
    micros = round(when * 1_000_000)
    seconds, micros = divmod(micros, 1_000_000)
    stamp = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{micros * 1000:09d}Z"


class TimedLines:
    """Turns a log's bytes, read from offset `start`, into the lines to send: each prefixed with its
    time (`timestamps`), and those before `since` (a unix time) left out. Bytes up to `known` (the
    size when reading began) without a sample take `fallback`; bytes after it take `now()` (they
    were written while being followed)."""

    def __init__(self, samples: Samples, start: int, known: int, fallback: float, now: Callable[[], float],
                 timestamps: bool, since: float | None):
        self.samples, self.offset, self.known = samples, start, known
        self.fallback, self.now = fallback, now
        self.timestamps, self.since = timestamps, since
        self._partial = b""

    def _line(self, line: bytes, end: int) -> bytes:
        when = time_of(self.samples, end, self.fallback) if end <= self.known else self.now()
        if self.since is not None and when < self.since:
            return b""
        return (format_time(when).encode() + b" " + line) if self.timestamps else line

    def feed(self, data: bytes) -> bytes:
        """The output for the next bytes read (whole lines; a line's start is kept until its end)."""
        data, self._partial = self._partial + data, b""
        out, pos = [], 0
        base = self.offset
        while True:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            out.append(self._line(data[pos:nl + 1], base + nl + 1))
            pos = nl + 1
        self._partial = data[pos:]
        self.offset = base + pos
        return b"".join(out)

    def flush(self) -> bytes:
        """The last line, when the log ends without a newline."""
        if not self._partial:
            return b""
        line, self._partial = self._partial, b""
        self.offset += len(line)
        return self._line(line, self.offset)
