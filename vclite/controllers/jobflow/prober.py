"""HTTP and TCP checks for `dependsOn.probe.httpGetList` / `tcpSocketList`, off the controller's path.

A check is a real connection to a target pod (`status.podIP`, 127.0.0.1 for vclite's local pods):
httpGet succeeds on a status 200–399 (as a Kubernetes httpGet probe), tcpSocket when the connection
opens. `Prober.check(target)` never blocks: it returns the result observed within the last `ttl`
seconds, or None after submitting the check to a small thread pool (started on first use, so a
JobFlow without such probes starts no thread). The controller asks again after a back-off, through
its work queue; results are read only on the controller's thread. `inline=True` runs checks on the
caller's thread (deterministic tests against real local servers). A success is remembered for
`ttl` seconds; a failure only until the next ask, which checks again.

No API access; only sockets.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import http.client
import socket
import threading
from typing import Callable

from vclite.lib import clock as clock_mod


@dataclasses.dataclass(frozen=True)
class Target:
    kind: str                     # httpGet | tcpSocket
    host: str
    port: int
    path: str = "/"
    header: tuple[str, str] | None = None


def check_now(target: Target, timeout: float = 1.0) -> bool:
    """One real check, blocking at most about `timeout` seconds."""
    try:
        if target.kind == "tcpSocket":
            with socket.create_connection((target.host, target.port), timeout=timeout):
                return True
        conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
        try:
            headers = {target.header[0]: target.header[1]} if target.header else {}
            conn.request("GET", target.path or "/", headers=headers)
            return 200 <= conn.getresponse().status < 400
        finally:
            conn.close()
    except (OSError, http.client.HTTPException, ValueError):
        return False


class Prober:
    def __init__(self, clock: clock_mod.Clock, ttl: float = 1.0, timeout: float = 1.0, workers: int = 4,
                 inline: bool = False, check: Callable[[Target, float], bool] = check_now):
        self.clock, self.ttl, self.timeout, self.workers, self.inline = clock, ttl, timeout, workers, inline
        self._check = check
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._running: dict[Target, concurrent.futures.Future] = {}
        self._results: dict[Target, tuple[bool, float]] = {}   # target -> (ok, observed at)

    def check(self, target: Target) -> bool | None:
        now = self.clock.monotonic()
        fut = self._running.get(target)
        if fut is not None and fut.done():
            del self._running[target]
            self._results[target] = (bool(fut.result()), now)
        known = self._results.get(target)
        if known is not None and known[0] and now - known[1] <= self.ttl:
            return True
        if target in self._running:
            return None
        if self.inline:
            self._results[target] = (self._check(target, self.timeout), now)
            return self._results[target][0]
        self._results.pop(target, None)
        self._running[target] = self._executor().submit(self._check, target, self.timeout)
        return False if known is not None and not known[0] else None   # a failure seen: checking again

    def _executor(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self.workers, thread_name_prefix="vclite-probe")
            return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
