"""pods/portforward's protocols over a real HTTP server and real TCP connections to a real echo
server: the SPDY tunnel kubectl speaks (stream pairs, FIN both ways, a reset, PING, a refused port,
several connections at once) and the v4 channel protocol of client libraries; and the kubelet's
port checks."""
import asyncio
import contextlib
import socket
import struct

import aiohttp
import pytest
from aiohttp import web

from tests.unit.httpserver.test_spdy import Client
from vclite.httpserver import portforward, spdy
from vclite.lib import errors


@pytest.mark.parametrize("text, port", [("8080", 8080), ("1", 1), ("65535", 65535)])
def test_ports_read(text, port):
    assert portforward.check_port(text) == port


@pytest.mark.parametrize("values, words", [
    pytest.param([], 'query parameter "port" is required', id="none"),
    pytest.param([""], 'query parameter "port" cannot be empty', id="empty"),
    pytest.param(["http"], 'unable to parse "http" as a port: invalid syntax', id="a-name"),
    pytest.param(["70000"], 'unable to parse "70000" as a port: value out of range', id="too-large"),
    pytest.param(["-1"], 'unable to parse "-1" as a port', id="negative"),
    pytest.param(["0"], 'port "0" must be > 0', id="zero"),
    pytest.param(["80,x"], 'unable to parse "x"', id="one-bad-in-a-list"),
])
def test_bad_ports(values, words):
    with pytest.raises(errors.BadRequest, match=words):
        portforward.check_ports(values)


def test_several_ports_in_the_query():
    assert portforward.check_ports(["80,81", "82"]) == [80, 81, 82]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.asynccontextmanager
async def serving():
    """An echo server (each connection: echo until the client's end, then close) and an HTTP server
    whose `/pf` forwards to it, as the app's route does."""
    async def echo(reader, writer):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()
    echo_server = await asyncio.start_server(echo, "127.0.0.1", 0)

    async def handler(request):
        try:
            return await portforward.serve(request, request.query.getall("ports", []), "box", "uid-1")
        except errors.BadRequest as e:
            return web.Response(status=400, text=str(e))
    app = web.Application()
    app.router.add_get("/pf", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/pf"
    try:
        async with aiohttp.ClientSession() as session:
            yield session, url, echo_server.sockets[0].getsockname()[1]
    finally:
        await runner.cleanup()
        echo_server.close()


class Tunnel:
    """kubectl's side of the SPDY tunnel, enough to drive the server."""

    def __init__(self, ws):
        self.ws, self.client, self.decoder, self.frames = ws, Client(), spdy.Decoder(), []

    async def send(self, raw):
        await self.ws.send_bytes(raw)

    async def open(self, request_id, port):
        sid = 2 * int(request_id) * 2 + 1
        for kind, stream in (("error", sid), ("data", sid + 2)):
            await self.send(self.client.syn_stream(stream, {"streamtype": kind, "port": str(port),
                                                            "requestid": str(request_id)}))
        return sid, sid + 2

    async def until(self, done, timeout=10):
        """Read frames until done(frames) holds."""
        async with asyncio.timeout(timeout):
            while not done(self.frames):
                msg = await self.ws.receive()
                assert msg.type == aiohttp.WSMsgType.BINARY, msg
                # (the test's decoder cannot read the server's SYN_REPLY headers: other zlib stream)
                self.frames += _frames(msg.data)
        return self.frames

    def data(self, sid):
        return b"".join(f[2] for f in self.frames if f[0] == "data" and f[1] == sid)

    def ended(self, sid):
        return any(f[0] == "data" and f[1] == sid and f[3] for f in self.frames)

    def replied(self):
        return [f[1] for f in self.frames if f[0] == "reply"]


def _frames(raw):
    """(kind, stream, data, fin) of each frame in the server's bytes (whole frames per message)."""
    out = []
    while raw:
        first, flags_len = struct.unpack(">II", raw[:8])
        length, flags = flags_len & 0xFFFFFF, flags_len >> 24
        payload, raw = raw[8:8 + length], raw[8 + length:]
        if first & 0x80000000:
            ftype = first & 0xFFFF
            name = {spdy.SYN_REPLY: "reply", spdy.RST_STREAM: "rst", spdy.PING: "ping", spdy.GOAWAY: "goaway"}[ftype]
            out.append((name, struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF, payload[4:], bool(flags & 1)))
        else:
            out.append(("data", first, payload, bool(flags & 1)))
    return out


def run(coro):
    return asyncio.run(coro)


def test_a_connection_through_the_tunnel():
    """Both streams answered; the bytes echoed; the client's FIN ends the pod side's writing, the pod's
    close ends the data stream, then the error stream ends empty (no failure)."""
    async def go():
        async with serving() as (session, url, port):
            async with session.ws_connect(url, protocols=[portforward.TUNNEL]) as ws:
                assert ws.protocol == portforward.TUNNEL
                t = Tunnel(ws)
                err, data = await t.open(0, port)
                await t.send(spdy.data(err, fin=True))     # (kubectl closes its side of the error stream)
                payload = bytes(range(256)) * 4096          # 1 MiB
                for at in range(0, len(payload), 50_000):
                    await t.send(spdy.data(data, payload[at:at + 50_000]))
                await t.send(spdy.data(data, fin=True))
                await t.until(lambda fs: t.ended(err))
                assert t.replied() == [err, data]
                assert t.data(data) == payload and t.ended(data) and t.data(err) == b""
    run(go())


def test_several_connections_at_once_and_a_ping():
    async def go():
        async with serving() as (session, url, port):
            async with session.ws_connect(url, protocols=[portforward.TUNNEL]) as ws:
                t = Tunnel(ws)
                pairs = [await t.open(i, port) for i in range(3)]
                await t.send(struct.pack(">HHI", 0x8003, spdy.PING, 4) + struct.pack(">I", 7))
                for i, (_, data) in enumerate(pairs):
                    await t.send(spdy.data(data, f"conn {i}".encode(), fin=True))
                await t.until(lambda fs: all(t.ended(err) for err, _ in pairs) and any(f[0] == "ping" for f in fs))
                assert [t.data(data) for _, data in pairs] == [b"conn 0", b"conn 1", b"conn 2"]
                assert ("ping", 7, b"", False) in t.frames
    run(go())


def test_a_port_nothing_listens_on_is_told_on_the_error_stream():
    async def go():
        async with serving() as (session, url, _):
            async with session.ws_connect(url, protocols=[portforward.TUNNEL]) as ws:
                t = Tunnel(ws)
                closed = free_port()
                err, data = await t.open(0, closed)
                await t.until(lambda fs: t.ended(err))
                message = t.data(err).decode()
                assert message.startswith(f"error forwarding port {closed} to pod box, uid uid-1: failed to connect "
                                          f"to localhost:{closed} inside the pod, IPv4: dial tcp4 127.0.0.1:{closed}: "
                                          f"connect: connection refused")
                assert t.ended(data) and t.data(data) == b""
    run(go())


def test_a_reset_data_stream_closes_the_pods_connection():
    """kubectl resets the data stream when its local connection is gone: the pod's side is closed
    (the echo server sees the end), and the streams end."""
    async def go():
        async with serving() as (session, url, port):
            async with session.ws_connect(url, protocols=[portforward.TUNNEL]) as ws:
                t = Tunnel(ws)
                err, data = await t.open(0, port)
                await t.send(spdy.data(data, b"first"))
                await t.until(lambda fs: t.data(data) == b"first")
                await t.send(spdy.rst_stream(data, spdy.CANCEL))
                await t.until(lambda fs: t.ended(err))
    run(go())


@pytest.mark.parametrize("headers", [
    pytest.param({"streamtype": "bogus", "port": "80"}, id="unknown-stream-type"),
    pytest.param({"streamtype": "data"}, id="no-port"),
    pytest.param({"streamtype": "data", "port": "0"}, id="port-zero"),
])
def test_a_bad_stream_is_reset(headers):
    async def go():
        async with serving() as (session, url, _):
            async with session.ws_connect(url, protocols=[portforward.TUNNEL]) as ws:
                t = Tunnel(ws)
                await t.send(t.client.syn_stream(1, headers))
                frames = await t.until(lambda fs: fs)
                assert frames[0][:2] == ("rst", 1) and frames[0][2] == struct.pack(">I", spdy.PROTOCOL_ERROR)
    run(go())


def test_bytes_that_are_not_spdy_end_the_connection():
    async def go():
        async with serving() as (session, url, _):
            async with session.ws_connect(url, protocols=[portforward.TUNNEL]) as ws:
                await ws.send_bytes(struct.pack(">HHI", 0x8002, spdy.PING, 4) + b"\x00\x00\x00\x01")
                msg = await ws.receive(timeout=10)
                assert _frames(msg.data)[0][:2] == ("goaway", 0)
                assert (await ws.receive(timeout=10)).type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    run(go())


def test_the_channel_protocol():
    """v4.channel.k8s.io: each channel first says its port (little-endian); data on 2i both ways; a
    refused port on its error channel 2i+1; the WebSocket closes when every connection is done."""
    async def go():
        async with serving() as (session, url, port):
            closed = free_port()
            async with session.ws_connect(f"{url}?ports={port},{closed}", protocols=["v4.channel.k8s.io"]) as ws:
                got = {}
                for _ in range(4):
                    msg = await ws.receive(timeout=10)
                    got[msg.data[0]] = msg.data[1:]
                assert got == {0: port.to_bytes(2, "little"), 1: port.to_bytes(2, "little"),
                               2: closed.to_bytes(2, "little"), 3: closed.to_bytes(2, "little")}
                await ws.send_bytes(b"\x00hello over channels")
                echoed, error = b"", b""
                while echoed != b"hello over channels" or not error:
                    msg = await ws.receive(timeout=10)
                    echoed += msg.data[1:] if msg.data[0] == 0 else b""
                    error += msg.data[1:] if msg.data[0] == 3 else b""
                assert error.decode().startswith(f"error forwarding port {closed} to pod box, uid uid-1: ")
    run(go())


def test_the_channel_protocol_needs_ports():
    async def go():
        async with serving() as (session, url, _):
            with pytest.raises(aiohttp.WSServerHandshakeError) as raised:
                await session.ws_connect(url, protocols=["v4.channel.k8s.io"])
            return raised.value.status
    assert run(go()) == 400
