"""The scheduler's node usage, read off its thread every `metrics.interval` (Volcano's cache runs
GetMetricsData on a timer: cache.go).

`Feed.poll(nodes)` is called on the scheduler's thread (its work queue's `metrics` key): it takes the
result of a finished read, starts the next read on a worker thread when it is due, and answers whether
the usage changed (the shell then runs a session: a node may have become usable) and when to poll
again. A read that raises keeps the usage it had (Volcano: "Error getting node metrics", nothing
updated). `usage` is what the next session sees. `holds_sessions()`: the first read is to come or
under way, begun less than FIRST_READ_WAIT ago — Volcano's first session comes a second after its
cache synced, its first read (started with the cache) done by then, so the shell holds its sessions
until it is.

Must not: touch the API or the session; one read at a time, on a daemon thread of its own.
"""
from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any, Callable, Iterable, Mapping

from vclite.lib import clock as clock_mod
from vclite.scheduler import nodemetrics, nodemetrics_es

log = logging.getLogger(__name__)
POLL = 0.1   # seconds between two looks at a read under way
FIRST_READ_WAIT = 5.0   # seconds the first sessions wait for the first read (Volcano's usually has it by then)

Reader = Callable[..., Mapping[str, nodemetrics.NodeUsage]]


def read(conf: Mapping[str, str], nodes: Iterable[str], now: Any = None,
         failures: list[str] | None = None, within: float = nodemetrics.ROUND_DEADLINE
         ) -> Mapping[str, nodemetrics.NodeUsage]:
    """The nodes' usage from the source `metrics.type` names (prometheus or elasticsearch); raises when
    nothing could be read (Elasticsearch; a Prometheus query that fails counts 0 instead, and is told
    to `failures` when given). `within`: the seconds the whole read may take (Volcano's 60 by default)."""
    if conf.get("type") == nodemetrics.ELASTICSEARCH:
        return nodemetrics_es.elasticsearch_usage(conf, nodes, now, within)
    return nodemetrics.prometheus_usage(conf, nodes, now, failures, within)


class Feed:
    def __init__(self, conf: Mapping[str, str], clock: clock_mod.Clock, read: Reader = read):
        self.conf, self.clock, self.read = conf, clock, read
        self.interval = nodemetrics.interval(conf)
        self.usage: dict[str, nodemetrics.NodeUsage] = {}
        self._future: concurrent.futures.Future | None = None
        self._next_at = float("-inf")   # clock.monotonic() of the next read
        self._first_at: float | None = None   # clock.monotonic() of the first read's start
        self.ready = False   # a read has ended (with or without an answer)

    def holds_sessions(self) -> bool:
        return not self.ready and (self._first_at is None or self.clock.monotonic() - self._first_at < FIRST_READ_WAIT)

    def poll(self, nodes: Iterable[str]) -> tuple[bool, float]:
        """(the usage changed, seconds until the next poll)."""
        changed = False
        now = self.clock.monotonic()
        if self._future is not None:
            if not self._future.done():
                return False, POLL
            changed = self._take(self._future)
            self._future, self.ready = None, True
            self._next_at = now + self.interval
        if now < self._next_at:
            return changed, self._next_at - now
        if self._first_at is None:
            self._first_at = now
        self._future = future = concurrent.futures.Future()
        names = list(nodes)

        def run() -> None:
            try:
                future.set_result(self.read(self.conf, names, self.clock.now))
            except BaseException as e:   # (handed to the scheduler's thread)
                future.set_exception(e)
        # a daemon thread: a read waiting on an unreachable server never holds the process at exit
        threading.Thread(target=run, name="vclite-metrics", daemon=True).start()
        return changed, POLL

    def _take(self, future: concurrent.futures.Future) -> bool:
        try:
            got = dict(future.result())
        except Exception as e:   # (a reader's failure must not stop the scheduler)
            log.error("Error getting node metrics: %s", e)
            return False
        before = {n: _values(u) for n, u in self.usage.items()}
        self.usage = got
        return before != {n: _values(u) for n, u in got.items()}


def _values(u: nodemetrics.NodeUsage) -> Any:
    return (dict(u.cpu_avg), dict(u.mem_avg))
