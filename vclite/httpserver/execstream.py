"""`pods/exec` over WebSocket: the channel.k8s.io streaming protocol of `kubectl exec` and `kubectl cp`.

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
Must not: start processes (the executor's podexec.py does).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from typing import Any, Awaitable, Callable, Mapping, Sequence

from aiohttp import WSMsgType, web

from vclite.api import meta
from vclite.executor import podexec
from vclite.httpserver import media
from vclite.lib import errors

Obj = dict[str, Any]
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, ERROR, RESIZE, CLOSE = 0, 3, 4, 255
SPDY_MESSAGE = ("vclite serves exec over WebSocket only (SPDY is not spoken): use kubectl 1.30 or newer, "
                "or a client that speaks the v5.channel.k8s.io WebSocket protocol")


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


def check(pod: Obj, query: Mapping[str, str], commands: Sequence[str]) -> Options:
    """The exec's options from the query, refused (BadRequest) where kube-apiserver or the kubelet would."""
    container = container_of(pod, query.get("container"))
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.BadRequest(f"pod {meta.name(pod)} does not have a host assigned")
    flags = {k: media.parse_bool(query.get(k), k) for k in ("stdin", "stdout", "stderr", "tty")}
    if not commands:
        raise errors.BadRequest("you must specify at least one command for the container")
    if flags["tty"]:
        flags["stderr"] = False   # (a terminal is one stream; the kubelet drops stderr too)
    if not (flags["stdin"] or flags["stdout"] or flags["stderr"]):
        raise errors.BadRequest("you must specify at least 1 of stdin, stdout, stderr")
    return Options(list(commands), container, **flags)


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


Start = Callable[[Options], Awaitable[podexec.Session]]


async def serve(request: web.Request, opts: Options, start: Start) -> web.StreamResponse:
    """Upgrade to a WebSocket and run the command over it (`start` raises podexec.ExecError when it
    cannot: that is told on the error stream, as a runtime's failure is)."""
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0)
    await ws.prepare(request)
    try:
        session = await start(opts)
    except podexec.ExecError as e:
        await _finish(ws, failure_status(str(e)))
        return ws
    inputs = asyncio.ensure_future(_inputs(ws, session))
    try:
        await asyncio.gather(*(_copy(ws, sid, reader) for sid, reader in session.outputs))
        code = await session.wait()
        await _finish(ws, exit_status(code, opts.command))
    finally:
        session.kill()   # (if the client went away first; what an ended command left in the background stays)
        await session.wait()
        inputs.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await inputs
    return ws


async def _copy(ws: web.WebSocketResponse, sid: int, reader: asyncio.StreamReader) -> None:
    while data := await podexec.read(reader):
        if ws.closed:
            return
        await ws.send_bytes(bytes([sid]) + data)


async def _finish(ws: web.WebSocketResponse, status: Obj) -> None:
    with contextlib.suppress(ConnectionError):
        if not ws.closed:
            await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
        await ws.close()


async def _inputs(ws: web.WebSocketResponse, session: podexec.Session) -> None:
    """The client's messages: stdin data, its end, terminal sizes. The connection's end kills the command."""
    stdin = session.stdin
    async for msg in ws:
        if msg.type != WSMsgType.BINARY or not msg.data:
            continue
        sid, data = msg.data[0], msg.data[1:]
        if sid == STDIN and stdin is not None:
            try:
                stdin.write(data)
                await stdin.drain()
            except ConnectionError:   # (the command closed its stdin or ended)
                stdin = None
        elif sid == RESIZE:
            _resize(session, data)
        elif sid == CLOSE and data[:1] == bytes([STDIN]) and stdin is not None:
            stdin.close()
            stdin = None
    session.kill()


def _resize(session: podexec.Session, data: bytes) -> None:
    try:
        size = json.loads(data)
        session.resize(int(size.get("Width") or 0), int(size.get("Height") or 0))
    except (ValueError, TypeError, AttributeError, OSError):
        pass   # (a malformed size changes nothing, as the kubelet ignores it)
