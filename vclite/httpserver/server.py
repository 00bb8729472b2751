"""Serving: the runtime and the HTTP API in one asyncio loop, until SIGTERM or SIGINT.

`serve(rt, options)`:
1. credentials: the token (created at first start) and TLS — the given certificate, or a
   generated self-signed one. TLS is the default even on loopback, because kubectl (client-go)
   sends a bearer token over TLS only; `plain_http` (loopback only) is for clients that do not;
2. binds the listener (port 0 = any free port), writes the kubeconfig with the real URL, and
   announces `options.announce(url, kubeconfig path)`;
3. drives the runtime: `run_until` processes work until quiescent, then the loop waits for the
   next write (every write is a watch event; a global watch wakes it) or a signal;
4. on SIGTERM/SIGINT, stops gracefully: readiness goes false, the listener closes, watches and
   followed logs end, in-flight requests finish (up to `shutdown_timeout`), the runtime stops,
   and every pod is stopped (`rt.shutdown()`), then the store is closed (`rt.close()`).
The `default/kubernetes` Service names the server (apiservice.py). Component sync latencies (and the
scheduler's binds) feed the metrics through `rt.on_sync`, JobFlow
phase changes through a watch (Volcano's `volcano_jobflow_{succeed,failed}_phase_count`).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import pathlib
import signal
import socket
from typing import Any, Callable

from aiohttp import web

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.httpserver import apiservice
from vclite.httpserver import app as app_mod
from vclite.httpserver import backend as backend_mod
from vclite.httpserver import security
from vclite.runtime import runtime as runtime_mod

log = logging.getLogger("vclite.httpserver")


class ServeError(Exception):
    """The server cannot start as asked (TLS required, address in use, bad certificate…)."""


@dataclasses.dataclass
class Options:
    data_dir: pathlib.Path
    address: str = "127.0.0.1"
    port: int = 6443
    tls_cert: pathlib.Path | None = None
    tls_key: pathlib.Path | None = None
    plain_http: bool = False                # loopback only; kubectl sends no token over plain HTTP
    shutdown_timeout: float = 10.0
    announce: Callable[[str, pathlib.Path], None] = lambda url, kubeconfig: None


@dataclasses.dataclass
class Listening:
    url: str
    kubeconfig: pathlib.Path
    runner: web.AppRunner
    server: app_mod.Server
    port: int = 0


def check_options(options: Options) -> None:
    if bool(options.tls_cert) != bool(options.tls_key):
        raise ServeError("--tls-cert and --tls-key go together")
    if options.plain_http and options.tls_cert:
        raise ServeError("--plain-http and --tls-cert/--tls-key exclude each other")
    if options.plain_http and not security.is_loopback(options.address):
        raise ServeError(f"plain HTTP is only served on a loopback address, not {options.address}: "
                         "serve TLS (the default) on other addresses")
    try:   # (an address that names no host is refused before the data directory is made)
        socket.getaddrinfo(options.address, None)
    except (OSError, UnicodeError) as e:
        raise ServeError(f"cannot listen on {options.address}: {getattr(e, 'strerror', None) or e}") from None
    if options.tls_cert and options.tls_key:   # (loaded now: a bad pair leaves no data directory behind)
        _given_context(pathlib.Path(options.tls_cert), pathlib.Path(options.tls_key))


def _given_context(cert: pathlib.Path, key: pathlib.Path) -> Any:
    """The TLS context of a given certificate and key, or a ServeError that says what is wrong with them."""
    try:
        return security.server_context(cert, key)
    except (OSError, ValueError) as e:
        text = str(e)
        why = ("the key does not belong to the certificate" if "KEY_VALUES_MISMATCH" in text
               else "they are not a PEM certificate and its PEM private key" if "PEM" in text else text)
        raise ServeError(f"cannot load the TLS certificate {cert} with the key {key}: {why} ({text})") from None


def tls_settings(options: Options) -> tuple[Any, bytes | None]:
    """(ssl context or None, CA PEM for the kubeconfig or None). TLS unless `plain_http`:
    client-go (kubectl) sends credentials over TLS only, so a token needs TLS even on loopback."""
    check_options(options)
    if options.plain_http:
        return None, None
    if options.tls_cert and options.tls_key:
        cert, key = pathlib.Path(options.tls_cert), pathlib.Path(options.tls_key)
        return _given_context(cert, key), cert.read_bytes()
    cert, key, ca = security.generate_self_signed(options.data_dir / security.TLS_DIR, options.address)
    try:
        return security.server_context(cert, key), ca
    except (OSError, ValueError) as e:
        raise ServeError(f"cannot load the TLS certificate {cert} / key {key}: {e}") from None


def _bound(address: str, port: int) -> socket.socket:
    """A socket bound to (address, port) (port 0: one the kernel picks), or a ServeError that says why not."""
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as e:
        sock.close()
        raise ServeError(f"cannot listen on {address}:{port}: {e.strerror or e}") from None
    return sock


def check_port(options: Options) -> None:
    """The ServeError `listen` would meet binding the port (in use, not allowed), found before the data directory
    is made, so that a server that cannot start leaves nothing behind (the port stays free for `listen`)."""
    if options.port:
        _bound(options.address, options.port).close()


async def listen(backend: backend_mod.Backend, options: Options) -> Listening:
    """Credentials, listener, kubeconfig: everything up to serving (no signals, no runtime)."""
    options.data_dir.mkdir(parents=True, exist_ok=True)
    token = security.load_or_create_token(options.data_dir)
    ssl_ctx, ca = tls_settings(options)
    server = app_mod.Server(backend, token)
    runner = web.AppRunner(server.app(), access_log=None, shutdown_timeout=options.shutdown_timeout,
                           handle_signals=False)
    await runner.setup()
    try:
        sock = _bound(options.address, options.port)
    except ServeError:
        await runner.cleanup()
        raise
    port = sock.getsockname()[1]
    site = web.SockSite(runner, sock, ssl_context=ssl_ctx)
    await site.start()
    url = security.url(options.address, port, ssl_ctx is not None)
    kubeconfig = security.write_kubeconfig(options.data_dir, url, token, ca)
    backend.apiserver = (apiservice.endpoint_ip(options.address), port)
    return Listening(url, kubeconfig, runner, server, port)


async def _drive(rt: Any, stop: asyncio.Event) -> None:
    """Run the runtime until `stop`: process work until quiescent, then sleep until a write."""
    changed = asyncio.Event()
    sub = rt.client.watch(None, lambda ev: changed.set())
    try:
        while not stop.is_set():
            changed.clear()
            try:
                await rt.run_until(stop.is_set, chores=True)
            except runtime_mod.Interrupted:
                return
            if stop.is_set():
                return
            waiter = asyncio.ensure_future(changed.wait())
            stopper = asyncio.ensure_future(stop.wait())
            await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            for f in (waiter, stopper):
                f.cancel()
    finally:
        sub.cancel()


def _hook_metrics(rt: Any, server: app_mod.Server) -> Any:
    """Feed the metrics: component syncs through `rt.on_sync`, JobFlow phases through a watch from now
    on (JobFlows that finished before this start are not counted again). Returns the watch to cancel."""
    def on_sync(component: str, seconds: float) -> None:
        scheduled = 0
        if component == "scheduler":
            result = getattr(rt.scheduler, "last_result", None)
            scheduled = len(getattr(result, "binds", None) or {})
        server.observe_sync(component, seconds, scheduled)
    if hasattr(rt, "on_sync"):
        rt.on_sync = on_sync

    def on_jobflow(ev: Any) -> None:
        if ev.type != client_mod.EventType.DELETED:
            server.observe_jobflow(ev.object, ev.old)
    return rt.client.watch(kinds.JOBFLOW, on_jobflow)


async def serve(rt: Any, options: Options) -> int:
    """Serve until signalled; returns the exit code (0 after a graceful stop, 1 if the control
    loop failed — the server then stops too rather than serve an API nothing reconciles)."""
    log_path = rt.executor.log_path if rt.executor is not None else None
    backend = backend_mod.Backend.of_client(rt.client, log_path, rt.executor)
    listening = await listen(backend, options)
    server = listening.server
    counting = _hook_metrics(rt, server)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    apiservice.ensure(rt.client, listening.port)

    def on_service(ev: Any) -> None:   # (deleted or changed: kept, as kube-apiserver's bootstrap controller does)
        if not apiservice.is_it(ev.object) or stop.is_set():
            return
        if ev.type == client_mod.EventType.DELETED or apiservice.needs_fix(ev.object, listening.port):
            loop.call_soon(apiservice.ensure, rt.client, listening.port)
    keeping = rt.client.watch(kinds.SERVICE, on_service)

    def on_signal(signame: str) -> None:
        if not stop.is_set():
            log.info("received %s: shutting down", signame)
        stop.set()
        rt.request_stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    options.announce(listening.url, listening.kubeconfig)
    log.info("serving", extra={"fields": {"url": listening.url, "kubeconfig": str(listening.kubeconfig),
                                          "data_dir": str(options.data_dir)}})
    rt.start()
    server.ready = True
    driver = asyncio.ensure_future(_drive(rt, stop))
    failed: list[BaseException] = []

    def driver_done(task: asyncio.Future) -> None:
        if not task.cancelled() and task.exception() is not None and not stop.is_set():
            failed.append(task.exception())
            log.error("the control loop failed: shutting down", exc_info=task.exception())
            stop.set()

    driver.add_done_callback(driver_done)
    try:
        await stop.wait()
    finally:
        server.ready = False
        await server.stop_streams()
        await listening.runner.cleanup()          # stop accepting, finish in-flight requests
        stop.set()
        rt.request_stop()
        with contextlib.suppress(Exception):
            await driver
        await rt.shutdown()                        # every pod stopped, final statuses written
        counting.cancel()
        keeping.cancel()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        close = getattr(rt, "close", None)
        if close is not None:
            close()
        log.info("stopped")
    return 1 if failed else 0
