"""Leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection runs it.

Several `vcctl controller` processes may run against one cluster (a Deployment with replicas, a
rolling update); only the one holding the Lease reconciles, the others stand by and take over when
the holder stops renewing. The rules are client-go's (what vc-controller-manager and every
Kubernetes controller use), so a reader of `kubectl get lease` sees what they expect:
- A candidate reads the Lease; if there is none it creates it, holding it. A Lease held by another
  identity is respected until `leaseDurationSeconds` have passed since this candidate *saw it
  change* (its own monotonic clock, never the holder's timestamps: clocks of two machines differ).
- Taking or renewing is an update at the resourceVersion read, so of two candidates only one wins.
  Renewing keeps `acquireTime` and `leaseTransitions`; taking over sets `acquireTime` and counts
  one more transition.
- The leader renews every `retry_period` — while the term it last saw runs, with one update at the
  version it wrote last (client-go's optimistic fast path: one request, not a read and a write),
  else by reading first; if no renewal succeeds for `renew_deadline`, it has lost the lease and must
  stop reconciling at once (the keeper calls `on_lost`; the command exits 1, as Volcano's
  controller manager exits).
- A leader writes only while its last successful renewal was *sent* less than `renew_deadline`
  ago (`leading`): standbys count the term from when they saw that renewal, later, so its writes
  stop at least `lease_duration − renew_deadline` before any of them may take over. A process
  paused past that (SIGSTOP, a VM frozen, a swap storm) resumes with its writes held
  (`Keeper.hold`, through `Fenced`) until a renewal re-checks the lease: it renews and goes on,
  or finds the lease taken and stops without writing. client-go leaves this to chance (its
  controllers run on until the renew loop gives up); the one write it cannot stop is one already
  on the wire when the pause came (Kubernetes has no fencing tokens).
- A leader that stops gracefully releases the Lease (holder emptied, 1 s term), so a standby
  takes over within a retry period instead of a lease duration.
`claim`, `held_elsewhere`, `renews_blindly`, `leading` and `settings_problem` are pure; `Elector`
does the API calls (blocking: call it from a worker thread); `acquire` is the asyncio loop that
waits to lead, `Keeper` the thread that renews, `Fenced` the client whose writes wait for it.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import random
import socket
import threading
import time
import uuid
from typing import Any, Callable

from vclite.api import kinds
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
log = logging.getLogger("vclite.leader")
JITTER = 1.2          # client-go's JitterFactor: waits between attempts to acquire are up to 2.2 × retry_period
RELEASED_TERM = 1     # leaseDurationSeconds of a released lease


@dataclasses.dataclass(frozen=True)
class Settings:
    """client-go's LeaderElectionConfig, with component-base's defaults."""

    namespace: str = "volcano-system"
    name: str = "vclite-controller"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


def default_identity() -> str:
    """Host name plus a unique suffix, as Volcano's: two processes on one host never share it."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def settings_problem(s: Settings) -> str | None:
    """What client-go's NewLeaderElector would refuse in these settings, or None."""
    if s.retry_period <= 0 or s.lease_duration < 1:
        return "the lease duration must be at least 1s and the retry period above 0"
    if s.lease_duration <= s.renew_deadline:
        return "the lease duration must be greater than the renew deadline"
    if s.renew_deadline <= JITTER * s.retry_period:
        return f"the renew deadline must be greater than {JITTER:g} × the retry period"
    if not s.identity:
        return "the identity must not be empty"
    return None


def held_elsewhere(spec: Obj, identity: str, observed_at: float, now: float) -> bool:
    """The lease has another holder whose term, counted from when we saw the lease change, runs."""
    holder = spec.get("holderIdentity") or ""
    term = spec.get("leaseDurationSeconds") or 0
    return bool(holder) and holder != identity and observed_at + term > now


def renews_blindly(spec: Obj, identity: str, observed_at: float, now: float) -> bool:
    """May a renewal skip reading the lease (client-go's fast path): we hold it as last seen and the
    term counted from then runs, so nobody else may have taken it. An update at the version we
    wrote then either succeeds or conflicts (someone wrote since: read, as usual)."""
    term = spec.get("leaseDurationSeconds") or 0
    return spec.get("holderIdentity") == identity and observed_at + term > now


def leading(renewed_at: float | None, now: float, renew_deadline: float) -> bool:
    """May the holder write at `now` (monotonic), its last successful renewal sent at `renewed_at`:
    only within `renew_deadline` of it (see the module docstring)."""
    return renewed_at is not None and now < renewed_at + renew_deadline


def claim(old: Obj | None, identity: str, now_text: str, lease_duration: float) -> Obj:
    """The Lease spec that makes `identity` the holder: a renewal keeps the acquisition time and the
    count of transitions, a take-over starts a new term and counts one more transition."""
    term = max(1, int(lease_duration))
    if old is not None and old.get("holderIdentity") == identity:
        return {**old, "holderIdentity": identity, "leaseDurationSeconds": term, "renewTime": now_text,
                "acquireTime": old.get("acquireTime") or now_text}
    transitions = (old or {}).get("leaseTransitions")
    return {"holderIdentity": identity, "leaseDurationSeconds": term, "acquireTime": now_text,
            "renewTime": now_text, "leaseTransitions": (transitions or 0) + 1 if old is not None else 0}


class Elector:
    """One candidate. `try_acquire_or_renew` and `release` call the API (blocking)."""

    def __init__(self, client: Any, settings: Settings, monotonic: Callable[[], float] = time.monotonic,
                 clock: clock_mod.Clock | None = None):
        self.client, self.settings = client, settings
        self._monotonic = monotonic
        self._clock = clock or clock_mod.RealClock()
        self._observed: Obj | None = None     # the Lease as last read or written
        self._observed_at = 0.0               # monotonic time its spec was first seen as it is
        self.renewed_at: float | None = None  # monotonic time the last successful attempt began
        self.last_error = ""                  # why the last attempt failed (other than a running term)

    @property
    def lease(self) -> Obj | None:
        """The Lease as last read or written (read only)."""
        return self._observed

    @property
    def holder(self) -> str:
        return ((self._observed or {}).get("spec") or {}).get("holderIdentity") or ""

    def is_leader(self) -> bool:
        return self.holder == self.settings.identity

    def may_write(self) -> bool:
        """Holding the lease as last seen, renewed within the renew deadline (`leading`)."""
        return self.is_leader() and leading(self.renewed_at, self._monotonic(), self.settings.renew_deadline)

    def _observe(self, lease: Obj) -> None:
        if self._observed is None or (self._observed.get("spec") or {}) != (lease.get("spec") or {}):
            self._observed_at = self._monotonic()
        self._observed = lease

    def _now_text(self) -> str:
        return clock_mod.format_micro_time(self._clock.now())

    def try_acquire_or_renew(self) -> bool:
        """One attempt: True if this candidate holds the lease now."""
        self.last_error = ""
        began = self._monotonic()
        held = self._try_acquire_or_renew(began)
        if held:
            self.renewed_at = began
        return held

    def _try_acquire_or_renew(self, now: float) -> bool:
        s = self.settings
        if self._observed is not None and renews_blindly(self._observed.get("spec") or {}, s.identity,
                                                         self._observed_at, now):
            try:
                self._observe(self.client.update({**self._observed, "spec": claim(
                    self._observed.get("spec") or {}, s.identity, self._now_text(), s.lease_duration)}))
                return True
            except errors.ApiError as e:   # (a Conflict: written since; as client-go, read and try again)
                log.info("renewing Lease %s/%s at the version last written failed (%s): reading it",
                         s.namespace, s.name, e)
        try:
            lease = self.client.get(kinds.LEASE, s.namespace, s.name)
        except errors.NotFound:
            body = {"apiVersion": kinds.LEASE.api_version, "kind": kinds.LEASE.kind,
                    "metadata": {"name": s.name, "namespace": s.namespace},
                    "spec": claim(None, s.identity, self._now_text(), s.lease_duration)}
            try:
                self._observe(self.client.create(body))
            except errors.ApiError as e:
                self.last_error = f"cannot create Lease {s.namespace}/{s.name}: {e}"
                return False
            return True
        except errors.ApiError as e:
            self.last_error = f"cannot read Lease {s.namespace}/{s.name}: {e}"
            return False
        self._observe(lease)
        spec = lease.get("spec") or {}
        if held_elsewhere(spec, s.identity, self._observed_at, self._monotonic()):
            return False
        try:
            self._observe(self.client.update({**lease, "spec": claim(spec, s.identity, self._now_text(),
                                                                     s.lease_duration)}))
        except errors.ApiError as e:   # (a Conflict: another candidate wrote first)
            self.last_error = f"cannot update Lease {s.namespace}/{s.name}: {e}"
            return False
        return True

    def release(self) -> bool:
        """Give the lease up (if held): holder emptied, a 1 s term. True if released or not held."""
        if not self.is_leader() or self._observed is None:
            return True
        now = self._now_text()
        spec = {**(self._observed.get("spec") or {}), "holderIdentity": "", "leaseDurationSeconds": RELEASED_TERM,
                "renewTime": now, "acquireTime": now}
        try:
            self._observe(self.client.update({**self._observed, "spec": spec}))
        except errors.ApiError as e:
            log.warning("could not release Lease %s/%s: %s", self.settings.namespace, self.settings.name, e)
            return False
        return True


async def _attempt(elector: Elector, timeout: float) -> bool:
    """One attempt in a worker thread (the API calls block), given up after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.wait_for(loop.run_in_executor(None, elector.try_acquire_or_renew), timeout)
    except asyncio.TimeoutError:
        elector.last_error = f"no answer from the API server within {timeout:g}s"
        return False


async def acquire(elector: Elector, stop: asyncio.Event) -> bool:
    """Try until the lease is ours (True) or `stop` is set (False), every retry period plus jitter."""
    s = elector.settings
    told = ""
    while not stop.is_set():
        if await _attempt(elector, s.renew_deadline):
            log.info("leading: holds Lease %s/%s as %s", s.namespace, s.name, s.identity)
            return True
        news = elector.last_error or f"Lease {s.namespace}/{s.name} is held by {elector.holder}"
        if news != told:   # (said once per change, not every retry period)
            if elector.last_error:
                log.warning("%s", news)
            else:
                log.info("standing by: %s", news)
            told = news
        try:
            await asyncio.wait_for(stop.wait(), s.retry_period * (1 + random.random() * JITTER))
        except asyncio.TimeoutError:
            pass
    return False


class LeaseLost(Exception):
    """A write refused: this process no longer holds the lease (or stopped renewing it)."""


class Keeper:
    """Renews the lease from its own thread, every retry period, as client-go's renew loop: the
    controllers' loop may be busy (a long resync, a request hanging on a dead connection) for
    longer than a term, and a renewal waiting for it would let a standby take over while this
    process still reconciles. A renewal that fails is retried every retry period; when none has
    succeeded `renew_deadline` after its first try, `on_lost(why)` is called from the keeper's
    thread — it must stop the process at once (the command exits). Each API call runs in a worker
    thread and is given up at the deadline, so a hanging request cannot hold the keeper past it.
    As client-go, the first try of a renewal comes right after the wait, so a process paused for a
    while still renews if nobody took the lease meanwhile — and until it has, `hold` keeps its
    writes waiting (the module docstring)."""

    def __init__(self, elector: Elector, on_lost: Callable[[str], None]):
        self.elector, self.on_lost = elector, on_lost
        self._stop = threading.Event()
        self._changed = threading.Condition()   # notified after every attempt, and when it ends
        self._lost = ""                          # why the lease was lost ("" while held)
        self._told: float | None = -1.0          # the renewal whose lateness `hold` logged last
        self._calls = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="vclite-lease-call")
        self._thread = threading.Thread(target=self._run, name="vclite-lease", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop renewing (before releasing the lease); returns once the keeper's thread is done."""
        self._stop.set()
        self._notify()
        self._thread.join(timeout=self.elector.settings.renew_deadline + 1)
        self._calls.shutdown(wait=False)

    def hold(self) -> None:
        """Return when this process may write as the leader: at once while renewals are on time;
        after a pause past the renew deadline, once a renewal has succeeded again. Raise LeaseLost
        once the lease is lost or the keeper has stopped (writes must not go on then)."""
        with self._changed:
            while True:
                if self._lost or self._stop.is_set() or not self._thread.is_alive():
                    raise LeaseLost(f"not the leader: {self._lost or 'the lease is no longer renewed'}")
                if self.elector.may_write():
                    return
                renewed = self.elector.renewed_at
                if renewed != self._told:   # (said once per late renewal, not once per write waiting for it)
                    self._told = renewed
                    ago = "never" if renewed is None else f"{self.elector._monotonic() - renewed:.1f}s ago"
                    log.warning("writes wait for a renewal of the lease: last renewed %s, beyond the %gs "
                                "renew deadline (was this process paused?)", ago, self.elector.settings.renew_deadline)
                self._changed.wait(self.elector.settings.retry_period)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _attempt(self, timeout: float) -> bool:
        call = self._calls.submit(self.elector.try_acquire_or_renew)
        try:
            return call.result(timeout=max(timeout, 0.001))
        except concurrent.futures.TimeoutError:
            self.elector.last_error = f"no answer from the API server within {round(timeout, 1):g}s"
            return False
        finally:
            self._notify()

    def _lose(self) -> None:
        s = self.elector.settings
        holder = self.elector.holder or "nobody"
        why = self.elector.last_error or f"Lease {s.namespace}/{s.name} is held by {holder}"
        with self._changed:
            self._lost = why
            self._changed.notify_all()
        log.error("lost the lease: not renewed within %gs: %s", s.renew_deadline, why)
        self.on_lost(why)

    def _run(self) -> None:
        s = self.elector.settings
        while not self._stop.wait(s.retry_period):
            deadline = time.monotonic() + s.renew_deadline
            while not self._attempt(deadline - time.monotonic()):
                if self._stop.is_set():
                    return
                if time.monotonic() + s.retry_period >= deadline:
                    self._lose()
                    return
                if self._stop.wait(s.retry_period):
                    return
                if time.monotonic() >= deadline:   # (paused in the wait: no time is left to try in; client-go's
                    self._lose()                   # renew context has expired too)
                    return


class Fenced:
    """`client`, its writes (create, update, update_status, patch, bind, delete) first waiting for
    `keeper.hold()`: what the controllers of a leader write through (reads and watches pass through)."""

    def __init__(self, client: Any, keeper: Keeper):
        self._client, self._keeper = client, keeper

    def create(self, obj: Obj) -> Obj:
        self._keeper.hold()
        return self._client.create(obj)

    def update(self, obj: Obj) -> Obj:
        self._keeper.hold()
        return self._client.update(obj)

    def update_status(self, obj: Obj) -> Obj:
        self._keeper.hold()
        return self._client.update_status(obj)

    def patch(self, *args: Any, **kwargs: Any) -> Obj:
        self._keeper.hold()
        return self._client.patch(*args, **kwargs)

    def bind(self, *args: Any, **kwargs: Any) -> None:
        self._keeper.hold()
        return self._client.bind(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Obj | None:
        self._keeper.hold()
        return self._client.delete(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)
