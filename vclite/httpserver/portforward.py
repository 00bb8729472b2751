"""`pods/portforward`: `kubectl port-forward`, and client libraries' port-forward, to a pod's ports.

A pod of the local executor is processes of this host, on its network: what the kubelet reaches as
"localhost:<port> in the pod's network namespace" is this host's localhost. Each forwarded connection
is a TCP connection to 127.0.0.1 (then ::1) at the pod's port, made when the client asks for it.

Two protocols, by the WebSocket subprotocol the client asks for:
- `SPDY/3.1+portforward.k8s.io` (kubectl 1.31 and newer): a SPDY/3 connection tunnelled in the
  WebSocket's binary messages (spdy.py). For each local connection kubectl opens two streams with the
  same `requestID` and `port` headers: `streamType: error` (the server writes a failure there, then
  ends it) and `streamType: data` (the bytes, both ways; each side ends it with FIN, RST_STREAM
  abandons it). The server answers every stream with SYN_REPLY and echoes PINGs.
- `v4.channel.k8s.io` (e.g. the Python client's `portforward`): the ports are in the query
  (`ports=8080,9090`); port i has data channel 2i and error channel 2i+1, and the first message on
  each channel is the port (2 bytes, little-endian). One connection per port; the WebSocket closes
  when all of them are done.

Before the upgrade the request is checked as kube-apiserver and the kubelet check it (`check_ports`,
and the app's pod checks). An older kubectl's plain SPDY (POST, `Upgrade: SPDY/3.1`) is refused with
a message, as for exec.
Must not: start or stop pods (the executor does).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from typing import Sequence

from aiohttp import WSMsgType, web

from vclite.httpserver import spdy
from vclite.lib import errors

TUNNEL = "SPDY/3.1+portforward.k8s.io"
CHANNELS = ("v4.channel.k8s.io", "channel.k8s.io")
PROTOCOLS = (TUNNEL, *CHANNELS)
CHUNK = 32 * 1024
SPDY_MESSAGE = ("vclite serves port-forward over WebSocket only (SPDY is not spoken): use kubectl 1.31 or newer, "
                "or a client that speaks the v4.channel.k8s.io WebSocket protocol")
_RESET = object()   # the client abandoned a data stream (RST_STREAM)


def check_port(text: str) -> int:
    """A port as the kubelet reads one (its words when it cannot)."""
    try:
        port = int(text, 10)
    except ValueError:
        raise errors.BadRequest(f'unable to parse "{text}" as a port: invalid syntax') from None
    if not text.isdigit() or port > 65535:
        raise errors.BadRequest(f'unable to parse "{text}" as a port: value out of range')
    if port < 1:
        raise errors.BadRequest(f'port "{text}" must be > 0')
    return port


def check_ports(values: Sequence[str]) -> list[int]:
    """The `ports` query of a channel-protocol request (each value may list several, comma-separated)."""
    if not values:
        raise errors.BadRequest('query parameter "port" is required')
    ports: list[int] = []
    for value in values:
        if not value:
            raise errors.BadRequest('query parameter "port" cannot be empty')
        ports += [check_port(p) for p in value.split(",")]
    return ports


async def dial(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the pod's port, as the kubelet makes it (IPv4 first, then IPv6); OSError with
    both failures in its message when neither answers."""
    failures = []
    for family, host in (("tcp4", "127.0.0.1"), ("tcp6", "::1")):
        try:
            return await asyncio.open_connection(host, port)
        except OSError as e:
            reason = (os.strerror(e.errno) if e.errno else str(e)).lower()
            address = host if ":" not in host else f"[{host}]"
            failures.append(f"dial {family} {address}:{port}: connect: {reason}")
    raise OSError(f"failed to connect to localhost:{port} inside the pod, IPv4: {failures[0]} IPv6: {failures[1]}")


def failure(port: int, pod: str, uid: str, error: BaseException) -> str:
    return f"error forwarding port {port} to pod {pod}, uid {uid}: {error}"


async def _pump_in(inbox: "asyncio.Queue[object]", writer: asyncio.StreamWriter) -> None:
    """The client's bytes to the pod's port: its end (FIN) half-closes the connection, a reset closes it."""
    try:
        while True:
            item = await inbox.get()
            if item is None:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            if item is _RESET:
                writer.close()
                return
            assert isinstance(item, bytes)
            writer.write(item)
            await writer.drain()
    except ConnectionError:
        writer.close()


class _Sender:
    """Messages to the client; nothing once the WebSocket is closed."""

    def __init__(self, ws: web.WebSocketResponse):
        self.ws = ws

    async def send(self, message: bytes) -> None:
        if not self.ws.closed:
            with contextlib.suppress(ConnectionError):
                await self.ws.send_bytes(message)


@dataclasses.dataclass
class _Pair:
    """The two streams of one forwarded connection (SPDY)."""
    port: int
    error_id: int = 0
    data_id: int = 0
    inbox: "asyncio.Queue[object]" = dataclasses.field(default_factory=asyncio.Queue)
    started: bool = False


class _Tunnel:
    """One SPDY port-forward connection."""

    def __init__(self, ws: web.WebSocketResponse, pod: str, uid: str):
        self.out = _Sender(ws)
        self.ws, self.pod, self.uid = ws, pod, uid
        self.encoder = spdy.Encoder()
        self.pairs: dict[str, _Pair] = {}
        self.streams: dict[int, _Pair] = {}
        self.tasks: set[asyncio.Task] = set()
        self.last_stream = 0

    async def run(self) -> None:
        decoder = spdy.Decoder()
        try:
            async for msg in self.ws:
                if msg.type != WSMsgType.BINARY:
                    continue
                try:
                    frames = decoder.feed(msg.data)
                except spdy.ProtocolError:
                    await self.out.send(spdy.goaway(self.last_stream, spdy.PROTOCOL_ERROR))
                    return
                for frame in frames:
                    if await self.handle(frame):
                        return
        finally:
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

    async def handle(self, frame: spdy.Frame) -> bool:
        """Act on one frame; True when the connection ends (GOAWAY)."""
        if isinstance(frame, spdy.Data):
            pair = self.streams.get(frame.stream_id)
            if pair is not None and frame.stream_id == pair.data_id:
                if frame.data:
                    pair.inbox.put_nowait(frame.data)
                if frame.fin:
                    pair.inbox.put_nowait(None)
            return False
        if frame.type == spdy.SYN_STREAM:
            await self._open(frame)
        elif frame.type == spdy.RST_STREAM:
            pair = self.streams.pop(frame.stream_id, None)
            if pair is not None and frame.stream_id == pair.data_id:
                pair.inbox.put_nowait(_RESET)
        elif frame.type == spdy.PING:
            await self.out.send(frame.raw)
        elif frame.type == spdy.GOAWAY:
            return True
        return False

    async def _open(self, frame: spdy.Control) -> None:
        """A new stream: answered, then paired with its sibling by requestID; a pair starts forwarding."""
        sid, headers = frame.stream_id, frame.headers
        self.last_stream = max(self.last_stream, sid)
        kind = headers.get("streamtype", "")
        try:
            if kind not in ("error", "data"):
                raise errors.BadRequest(f'invalid stream type "{kind}"')
            if "port" not in headers:
                raise errors.BadRequest('"port" header is required')
            port = check_port(headers["port"])
        except errors.BadRequest:
            await self.out.send(spdy.rst_stream(sid, spdy.PROTOCOL_ERROR))
            return
        await self.out.send(self.encoder.syn_reply(sid))
        pair = self.pairs.setdefault(headers.get("requestid", ""), _Pair(port))
        if kind == "error":
            pair.error_id = sid
        else:
            pair.data_id = sid
            if frame.fin:
                pair.inbox.put_nowait(None)
        self.streams[sid] = pair
        if pair.error_id and pair.data_id and not pair.started:
            pair.started = True
            self.pairs = {k: p for k, p in self.pairs.items() if p is not pair}
            task = asyncio.ensure_future(self._forward(pair))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _forward(self, pair: _Pair) -> None:
        try:
            reader, writer = await dial(pair.port)
        except OSError as e:
            await self.out.send(spdy.data(pair.error_id, failure(pair.port, self.pod, self.uid, e).encode()))
        else:
            upload = asyncio.ensure_future(_pump_in(pair.inbox, writer))
            try:
                while chunk := await reader.read(CHUNK):
                    await self.out.send(spdy.data(pair.data_id, chunk))
            except ConnectionError:
                pass
            finally:
                upload.cancel()
                writer.close()
        await self.out.send(spdy.data(pair.data_id, fin=True))
        await self.out.send(spdy.data(pair.error_id, fin=True))
        self.streams.pop(pair.data_id, None)
        self.streams.pop(pair.error_id, None)


async def _channels(ws: web.WebSocketResponse, ports: list[int], pod: str, uid: str) -> None:
    """The v4 channel protocol: one connection per port, opened at once."""
    out = _Sender(ws)
    inboxes: list["asyncio.Queue[object]"] = [asyncio.Queue() for _ in ports]
    for i, port in enumerate(ports):
        for channel in (2 * i, 2 * i + 1):
            await out.send(bytes([channel]) + port.to_bytes(2, "little"))

    async def forward(i: int, port: int) -> None:
        try:
            reader, writer = await dial(port)
        except OSError as e:
            await out.send(bytes([2 * i + 1]) + failure(port, pod, uid, e).encode())
            return
        upload = asyncio.ensure_future(_pump_in(inboxes[i], writer))
        try:
            while chunk := await reader.read(CHUNK):
                await out.send(bytes([2 * i]) + chunk)
        except ConnectionError:
            pass
        finally:
            upload.cancel()
            writer.close()

    async def inputs() -> None:
        async for msg in ws:
            if msg.type == WSMsgType.BINARY and msg.data and msg.data[0] % 2 == 0 and msg.data[0] // 2 < len(ports):
                if len(msg.data) > 1:
                    inboxes[msg.data[0] // 2].put_nowait(bytes(msg.data[1:]))
        for inbox in inboxes:
            inbox.put_nowait(_RESET)

    reading = asyncio.ensure_future(inputs())
    try:
        await asyncio.gather(*(forward(i, p) for i, p in enumerate(ports)))
    finally:
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading
        await ws.close()


async def serve(request: web.Request, query_ports: Sequence[str], pod: str, uid: str) -> web.StreamResponse:
    """Upgrade to a WebSocket and forward over it until the client or every connection is done."""
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0)
    protocol = ws.can_prepare(request).protocol   # (what the upgrade will agree on)
    ports = check_ports(query_ports) if protocol in CHANNELS else []
    await ws.prepare(request)
    if protocol == TUNNEL:
        await _Tunnel(ws, pod, uid).run()
        await ws.close()
    elif protocol in CHANNELS:
        await _channels(ws, ports, pod, uid)
    else:
        await ws.close(message=b"no port-forward protocol agreed: use " + ", ".join(PROTOCOLS).encode())
    return ws
