"""`vcctl run --listen HOST:PORT`: the Kubernetes-compatible API of `vcctl server`, served during a run.

The run's own in-process API is served (`httpserver.server.listen`, on the run's event loop) as `vcctl
server` serves its own: HTTPS with a self-signed certificate and a bearer token, both written with a
kubeconfig into `<workdir>/.api` (a namespace's directory can never be called so), which is removed when
the run ends. So `kubectl --kubeconfig <workdir>/.api/kubeconfig get jf -w` and `vcctl jobflow suspend
NAME -k <that kubeconfig>` reach the running flows; the API ends with the run, after its pods were
stopped (a timeout, Ctrl-C) and their final statuses written, so a client watching them sees them end.
"""
from __future__ import annotations

import asyncio
import pathlib
import shlex
import shutil
from typing import TYPE_CHECKING, Callable

from vclite.runtime import runtime as runtime_mod

if TYPE_CHECKING:   # (the HTTP server's modules load in serve(): parse_address is read at every `vcctl run`)
    from vclite.httpserver import server as server_mod

API_DIR = ".api"   # under the run's workdir: the token, the certificates, the kubeconfig


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (`127.0.0.1:6443`, `[::1]:0`, `:8443` for 127.0.0.1) -> (host, port); ValueError says why."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: expected HOST:PORT with a port of 0..65535 (e.g. 127.0.0.1:6443; 0: any free "
                         "port)")
    bracketed = host.startswith("[") or host.endswith("]")
    if bracketed and not (host.startswith("[") and host.endswith("]") and len(host) > 2 and "[" not in host[1:]):
        raise ValueError(f"{text!r}: an address in brackets is an IPv6 address, as in [::1]:6443")
    host = host[1:-1] if bracketed else host
    if ":" in host and not bracketed:
        raise ValueError(f"{text!r}: write an IPv6 address in brackets ([::1]:6443)")
    return host or "127.0.0.1", int(port)


class Served:
    """The API served for one run: `url`, `kubeconfig`; `close()` ends it and removes its credentials."""

    def __init__(self, listening: "server_mod.Listening", api_dir: pathlib.Path):
        self.listening, self.api_dir = listening, api_dir
        self.url, self.kubeconfig = listening.url, listening.kubeconfig

    def lines(self) -> list[str]:
        """What the run tells its user once listening (the commands' path quoted for a POSIX shell)."""
        quoted = shlex.quote(str(self.kubeconfig))
        return [f"serving the API during the run on {self.url} (kubeconfig: {self.kubeconfig})",
                f"  kubectl --kubeconfig {quoted} get jobflows -w",
                f"  vcctl jobflow suspend NAME {self.resume_flags}"]

    @property
    def resume_flags(self) -> str:
        """`-k <the kubeconfig>`, quoted for a POSIX shell: what a command pasted from the run's words adds."""
        return f"-k {shlex.quote(str(self.kubeconfig))}"

    async def close(self) -> None:
        """Stop serving (watches and followed logs end, in-flight requests finish), forget the credentials."""
        self.listening.server.ready = False
        await self.listening.server.stop_streams()
        await self.listening.runner.cleanup()
        shutil.rmtree(self.api_dir, ignore_errors=True)


async def serve(rt: runtime_mod.Runtime, host: str, port: int) -> Served:
    """Serve `rt`'s API on host:port (TLS, a new token); server_mod.ServeError if it cannot."""
    from vclite.httpserver import backend as backend_mod
    from vclite.httpserver import server as server_mod
    api_dir = rt.workdir / API_DIR
    log_path = rt.executor.log_path if rt.executor is not None else None
    backend = backend_mod.Backend.of_client(rt.client, log_path, rt.executor)
    try:
        listening = await server_mod.listen(backend, server_mod.Options(data_dir=api_dir, address=host, port=port))
    except BaseException:
        shutil.rmtree(api_dir, ignore_errors=True)
        raise
    listening.server.ready = True
    return Served(listening, api_dir)



async def drive(rt: runtime_mod.Runtime, done: Callable[[], bool], timeout: float | None,
                on_tick: Callable[[], None] | None, stopping: asyncio.Event, note: Callable[[str], None],
                idle: Callable[[], None] | None = None) -> bool:
    """`rt.run_until(done)` for a run that serves its API: when nothing can move on by itself (a suspended
    JobFlow, a job no node fits) the run is not over, since a client may change something (resume it,
    add a node): it waits for the next write, until `done()` (True), the timeout or `stopping` (Ctrl-C:
    runtime.Interrupted). Chores run as in `vcctl server`. `note` says once that the run waits for a client;
    `idle` is called each time before it waits (the lines held back are written then)."""
    deadline = None if timeout is None else rt.clock.monotonic() + timeout
    changed = asyncio.Event()
    sub = rt.client.watch(None, lambda ev: changed.set())
    said = False
    try:
        while True:
            changed.clear()
            left = None if deadline is None else max(0.0, deadline - rt.clock.monotonic())
            if await rt.run_until(done, timeout=left, on_tick=on_tick, chores=True):
                return True
            left = None if deadline is None else deadline - rt.clock.monotonic()
            if left is not None and left <= 0:
                return False
            if changed.is_set():
                continue   # (written while it ran: look again before waiting)
            if idle is not None:
                idle()
            if not said:
                note("nothing can move on by itself: the run waits for a client of its API "
                     "(Ctrl-C or --timeout to stop it)")
                said = True
            waits = {asyncio.ensure_future(changed.wait()), asyncio.ensure_future(stopping.wait())}
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            if stopping.is_set():
                raise runtime_mod.Interrupted()
    finally:
        sub.cancel()
