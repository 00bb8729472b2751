"""SPDY/3 frames: the byte stream kubectl's `port-forward` speaks inside a WebSocket.

kubectl (1.31 and newer) opens a port-forward as a WebSocket with the subprotocol
`SPDY/3.1+portforward.k8s.io`: every binary message carries bytes of a SPDY/3 connection
(moby/spdystream, as the kubelet speaks it), cut anywhere. `Decoder.feed` turns those bytes into
frames; `Encoder` writes the server's frames. Header blocks are zlib streams primed with the SPDY/3
dictionary, one stream per direction for the whole connection, each block ending in a sync flush.

Only what a port-forward needs is spoken: SYN_STREAM in, SYN_REPLY, DATA, PING, RST_STREAM and
GOAWAY out. SETTINGS, WINDOW_UPDATE and HEADERS are read and ignored, as spdystream does (it keeps
no flow-control windows).
Must not: do input/output (portforward.py does).
"""
from __future__ import annotations

import dataclasses
import struct
import zlib

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
PROTOCOL_ERROR, CANCEL = 1, 5          # RST_STREAM status codes
MAX_DATA = (1 << 24) - 1                # a frame's length field is 24 bits
MAX_HEADER_BLOCK = 1 << 20              # more than any port-forward sends: a peer sending more is wrong

# The SPDY/3 header dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1): length-prefixed words, then a tail.
_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges age "
    "allow authorization cache-control connection content-base content-encoding content-language content-length "
    "content-location content-md5 content-range content-type date etag expect expires from host if-match "
    "if-modified-since if-none-match if-range if-unmodified-since last-modified location max-forwards pragma "
    "proxy-authenticate proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade "
    "user-agent vary via warning www-authenticate method get status"
).split() + ["200 OK"] + "version HTTP/1.1 url public set-cookie keep-alive origin".split()
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


class ProtocolError(ValueError):
    """The peer's bytes are not SPDY/3 as spdystream writes them: the connection cannot go on."""


@dataclasses.dataclass(frozen=True)
class Data:
    stream_id: int
    data: bytes
    fin: bool


@dataclasses.dataclass(frozen=True)
class Control:
    type: int
    flags: int
    stream_id: int = 0            # SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE
    headers: dict[str, str] = dataclasses.field(default_factory=dict)   # SYN_STREAM, SYN_REPLY, HEADERS
    value: int = 0                # PING's id, RST_STREAM's and GOAWAY's status, WINDOW_UPDATE's delta
    raw: bytes = b""              # the frame as read (a PING is echoed as it came)

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


Frame = Data | Control


class Decoder:
    """Frames from a SPDY/3 byte stream fed in pieces of any size."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                break
            raw = bytes(self._buffer[:8 + length])
            del self._buffer[:8 + length]
            frames.append(self._frame(raw))
        return frames

    def _frame(self, raw: bytes) -> Frame:
        first, flags, payload = int.from_bytes(raw[:4], "big"), raw[4], raw[8:]
        if not first & 0x80000000:
            return Data(first & 0x7FFFFFFF, payload, bool(flags & FLAG_FIN))
        version, ftype = (first >> 16) & 0x7FFF, first & 0xFFFF
        if version != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version} (3 is spoken)")
        if ftype == SYN_STREAM:
            _need(payload, 10, "SYN_STREAM")
            return Control(ftype, flags, _id(payload), self._headers(payload[10:]), raw=raw)
        if ftype in (SYN_REPLY, HEADERS):
            _need(payload, 4, "SYN_REPLY/HEADERS")
            return Control(ftype, flags, _id(payload), self._headers(payload[4:]), raw=raw)
        if ftype in (RST_STREAM, WINDOW_UPDATE):
            _need(payload, 8, "RST_STREAM/WINDOW_UPDATE")
            return Control(ftype, flags, _id(payload), value=int.from_bytes(payload[4:8], "big"), raw=raw)
        if ftype == PING:
            _need(payload, 4, "PING")
            return Control(ftype, flags, value=int.from_bytes(payload[:4], "big"), raw=raw)
        if ftype == GOAWAY:
            _need(payload, 8, "GOAWAY")
            return Control(ftype, flags, _id(payload), value=int.from_bytes(payload[4:8], "big"), raw=raw)
        return Control(ftype, flags, raw=raw)   # SETTINGS, or a type spdystream never sends: ignored

    def _headers(self, block: bytes) -> dict[str, str]:
        try:
            plain = self._inflate.decompress(block, MAX_HEADER_BLOCK)
        except zlib.error as e:
            raise ProtocolError(f"header block: {e}") from None
        if self._inflate.unconsumed_tail:
            raise ProtocolError("header block too large")
        return parse_header_block(plain)


def _need(payload: bytes, n: int, what: str) -> None:
    if len(payload) < n:
        raise ProtocolError(f"{what} frame of {len(payload)} bytes (at least {n} expected)")


def _id(payload: bytes) -> int:
    return int.from_bytes(payload[:4], "big") & 0x7FFFFFFF


def parse_header_block(plain: bytes) -> dict[str, str]:
    """Name/value pairs (SPDY/3: 32-bit counts and lengths); several values of a name are NUL-separated."""
    out: dict[str, str] = {}
    try:
        (count,), at = struct.unpack_from(">I", plain), 4
        for _ in range(count):
            (n,) = struct.unpack_from(">I", plain, at)
            name, at = plain[at + 4:at + 4 + n], at + 4 + n
            (n,) = struct.unpack_from(">I", plain, at)
            value, at = plain[at + 4:at + 4 + n], at + 4 + n
            out[name.decode("latin-1")] = value.decode("latin-1").split("\0")[0]
    except struct.error:
        raise ProtocolError("truncated header block") from None
    if at != len(plain):
        raise ProtocolError("header block longer than its pairs")
    return out


def header_block(headers: dict[str, str]) -> bytes:
    return struct.pack(">I", len(headers)) + b"".join(
        struct.pack(">I", len(k)) + k.lower().encode("latin-1") + struct.pack(">I", len(v)) + v.encode("latin-1")
        for k, v in headers.items())


class Encoder:
    """The server's frames. Its header compressor is one stream for the connection: frames carrying
    headers must be sent in the order they were made."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(zdict=DICTIONARY)

    def _headers(self, headers: dict[str, str]) -> bytes:
        return self._deflate.compress(header_block(headers)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    def syn_reply(self, stream_id: int, headers: dict[str, str] | None = None, fin: bool = False) -> bytes:
        return _control(SYN_REPLY, FLAG_FIN if fin else 0, struct.pack(">I", stream_id) + self._headers(headers or {}))


def _control(ftype: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, ftype, flags << 24 | len(payload)) + payload


def data(stream_id: int, payload: bytes = b"", fin: bool = False) -> bytes:
    """One DATA frame (payload at most MAX_DATA bytes)."""
    return struct.pack(">II", stream_id & 0x7FFFFFFF, (FLAG_FIN if fin else 0) << 24 | len(payload)) + payload


def rst_stream(stream_id: int, status: int) -> bytes:
    return _control(RST_STREAM, 0, struct.pack(">II", stream_id, status))


def goaway(last_good_stream: int, status: int = 0) -> bytes:
    return _control(GOAWAY, 0, struct.pack(">II", last_good_stream, status))
