"""`pods/exec` and `pods/attach` over WebSocket: the channel.k8s.io streaming protocol of `kubectl exec`,
`kubectl cp` and `kubectl attach`.

kubectl (1.30 and newer) opens an exec as a WebSocket (GET, subprotocol `v5.channel.k8s.io`; `v4` is
taken too). Every binary message is one byte of stream id, then data: 0 stdin, 1 stdout, 2 stderr,
3 the error stream — one Status at the end: Success, or Failure with reason NonZeroExitCode and the
exit code as an `ExitCode` cause (kubectl exits with it), or Failure with the message of a command
that did not start —, 4 a terminal's size (`{"Width": w, "Height": h}`); v5 adds 255: the client's
"stream N ended" (`[255, 0]`: its stdin is closed, so is the command's). The server closes the
connection after the Status; a client that goes away first has its command killed.

Before the upgrade, the request is checked as kube-apiserver and the kubelet check it (`check`):
the container (`-c`, or the pod's only one), a node that runs the pod, at least one stream, a
command. A refusal is an HTTP error, so kubectl, which then retries over SPDY (POST, `Upgrade:
SPDY/3.1`), gets it again and prints it as against a cluster. SPDY itself is not spoken: an older
kubectl is told to use a newer one.

An attach (`check_attach`, `serve_attach`) is the same protocol around a running container instead of
a new command (the executor's podattach.py): the container's output from now on, stdin into the
container's own, and at the end — the container's, or the client's detaching — a Success Status (an
attach has no exit code). Refused with a Status: a terminal (`tty`), which no container has here.
Must not: start processes or read logs (the executor's podexec.py and podattach.py do).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from typing import Any, Awaitable, Callable, Mapping, Protocol, Sequence

from aiohttp import WSMsgType, web

from vclite.api import meta
from vclite.executor import podexec
from vclite.httpserver import media
from vclite.lib import errors

Obj = dict[str, Any]
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, ERROR, RESIZE, CLOSE = 0, 3, 4, 255
SPDY_MESSAGE = ("vclite serves exec and attach over WebSocket only (SPDY is not spoken): use kubectl 1.30 or "
                "newer, or a client that speaks the v5.channel.k8s.io WebSocket protocol")
SUCCESS = {"metadata": {}, "status": "Success"}
STOPPING_MESSAGE = "the vclite server is stopping (and its pods with it): the attach ends"


@dataclasses.dataclass(frozen=True)
class Options:
    command: list[str]
    container: str
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


def container_of(pod: Obj, name: str | None) -> str:
    """The container an exec goes to, as kube-apiserver picks it (its words when it cannot)."""
    spec = pod.get("spec") or {}
    names = [c.get("name", "") for key in ("initContainers", "containers") for c in spec.get(key) or []]
    if name:
        if name not in names:
            raise errors.BadRequest(f"container {name} is not valid for pod {meta.name(pod)}")
        return name
    apps = spec.get("containers") or []
    if len(apps) == 1:
        return apps[0].get("name", "")
    if not apps:
        raise errors.BadRequest(f"a container name must be specified for pod {meta.name(pod)}")
    raise errors.BadRequest(f"a container name must be specified for pod {meta.name(pod)}, "
                            f"choose one of: [{' '.join(names)}]")


@dataclasses.dataclass(frozen=True)
class AttachOptions:
    container: str
    stdin: bool
    stdout: bool
    stderr: bool

    @property
    def output(self) -> int | None:
        """The stream the container's output goes out as (its log merges stdout and stderr): stdout if
        asked for, else stderr if asked for, else none."""
        return podexec.STDOUT if self.stdout else podexec.STDERR if self.stderr else None


def _placed_container(pod: Obj, query: Mapping[str, str]) -> str:
    """kube-apiserver's checks of an exec or attach: the container, then a node that runs the pod."""
    container = container_of(pod, query.get("container"))
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.BadRequest(f"pod {meta.name(pod)} does not have a host assigned")
    return container


def _streams(query: Mapping[str, str], commands: Sequence[str] | None = None) -> dict[str, bool]:
    """The kubelet's reading of the streams asked for (stdin, stdout, stderr, tty) and, for an exec, the
    command."""
    flags = {k: media.parse_bool(query.get(k), k) for k in ("stdin", "stdout", "stderr", "tty")}
    if commands is not None and not commands:
        raise errors.BadRequest("you must specify at least one command for the container")
    if flags["tty"]:
        flags["stderr"] = False   # (a terminal is one stream; the kubelet drops stderr too)
    if not (flags["stdin"] or flags["stdout"] or flags["stderr"]):
        raise errors.BadRequest("you must specify at least 1 of stdin, stdout, stderr")
    return flags


def check(pod: Obj, query: Mapping[str, str], commands: Sequence[str]) -> Options:
    """The exec's options from the query, refused (BadRequest) where kube-apiserver or the kubelet would."""
    container = _placed_container(pod, query)
    return Options(list(commands), container, **_streams(query, commands))


def check_attach(pod: Obj, query: Mapping[str, str]) -> AttachOptions:
    """The attach's options from the query, refused (BadRequest) where kube-apiserver or the kubelet would,
    and for a terminal, which the local executor gives no container."""
    container = _placed_container(pod, query)
    flags = _streams(query)
    if flags.pop("tty"):
        raise errors.BadRequest(f"container {container} has no terminal: the local executor runs containers "
                                f"without one (their tty: true is ignored); attach with a stdin that is not a "
                                f"terminal, e.g. cat | kubectl attach -i {meta.name(pod)} -c {container}")
    return AttachOptions(container, **flags)


def exit_status(code: int, command: Sequence[str]) -> Obj:
    """The error stream's Status for a command that ended with `code`."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
            "message": f"command terminated with non-zero exit code: error executing command "
                       f"[{' '.join(command)}], exit code {code}",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def failure_status(message: str) -> Obj:
    return {"metadata": {}, "status": "Failure", "reason": "InternalError", "message": message, "code": 500}


class Output(Protocol):
    async def read(self, n: int = -1) -> bytes: ...   # (b"" at the end)


class Session(Protocol):
    """What is streamed: podexec.Session (a command) or podattach.Attachment (a running container)."""
    stdin: asyncio.StreamWriter | None

    @property
    def outputs(self) -> Sequence[tuple[int, Output]]: ...

    async def wait(self) -> int: ...

    def resize(self, width: int, height: int) -> None: ...

    def end_stdin(self) -> None: ...

    def kill(self) -> None: ...


Start = Callable[[Options], Awaitable[podexec.Session]]


async def serve(request: web.Request, opts: Options, start: Start) -> web.StreamResponse:
    """Upgrade to a WebSocket and run the command over it (`start` raises podexec.ExecError when it
    cannot: that is told on the error stream, as a runtime's failure is)."""
    return await _serve(request, lambda: start(opts), lambda code: exit_status(code, opts.command))


async def serve_attach(request: web.Request, attach: Callable[[], Awaitable[Session]],
                       stopping: asyncio.Event) -> web.StreamResponse:
    """Upgrade to a WebSocket and attach to the container over it (`attach` raises podexec.ExecError when
    it cannot: the container ended meanwhile); a Success Status at the end, as the kubelet sends. When
    `stopping` is set (the server stops, and its pods with it), the client is detached with a Failure
    Status saying so, rather than hold the shutdown."""
    return await _serve(request, attach, lambda code: SUCCESS, stopping)


async def _serve(request: web.Request, start: Callable[[], Awaitable[Session]],
                 status: Callable[[int], Obj], stopping: asyncio.Event | None = None) -> web.StreamResponse:
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0)
    await ws.prepare(request)
    try:
        session = await start()
    except podexec.ExecError as e:
        await _finish(ws, failure_status(str(e)))
        return ws
    inputs = asyncio.ensure_future(_inputs(ws, session))
    stopped = asyncio.ensure_future(_stopped(stopping, session))
    try:
        await asyncio.gather(*(_copy(ws, sid, reader) for sid, reader in session.outputs))
        code = await session.wait()
        await _finish(ws, failure_status(STOPPING_MESSAGE) if stopped.done() else status(code))
    finally:
        session.kill()   # (if the client went away first; what an ended command left in the background stays)
        await session.wait()
        for task in (inputs, stopped):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return ws


async def _stopped(stopping: asyncio.Event | None, session: Session) -> None:
    """Detach the session when the server stops (returns then; never without `stopping`)."""
    if stopping is None:
        await asyncio.Future()   # (until cancelled)
    else:
        await stopping.wait()
        session.kill()


async def _copy(ws: web.WebSocketResponse, sid: int, reader: Output) -> None:
    while data := await podexec.read(reader):
        if ws.closed:
            return
        await ws.send_bytes(bytes([sid]) + data)


async def _finish(ws: web.WebSocketResponse, status: Obj) -> None:
    with contextlib.suppress(ConnectionError):
        if not ws.closed:
            await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
        await ws.close()


async def _inputs(ws: web.WebSocketResponse, session: Session) -> None:
    """The client's messages: stdin data, its end, terminal sizes. The connection's end kills the command
    (detaches an attached client)."""
    stdin, stdin_open = session.stdin, True
    async for msg in ws:
        if msg.type != WSMsgType.BINARY or not msg.data:
            continue
        sid, data = msg.data[0], msg.data[1:]
        if sid == STDIN and stdin is not None:
            if stdin.is_closing():   # (the command ended, or an attached container's stdin was closed)
                stdin = None
                continue
            try:
                stdin.write(data)
                await stdin.drain()
            except ConnectionError:   # (the command closed its stdin or ended)
                stdin = None
        elif sid == RESIZE:
            _resize(session, data)
        elif sid == CLOSE and data[:1] == bytes([STDIN]) and stdin_open:
            session.end_stdin()
            stdin, stdin_open = None, False
    session.kill()


def _resize(session: Session, data: bytes) -> None:
    try:
        size = json.loads(data)
        session.resize(int(size.get("Width") or 0), int(size.get("Height") or 0))
    except (ValueError, TypeError, AttributeError, OSError):
        pass   # (a malformed size changes nothing, as the kubelet ignores it)
