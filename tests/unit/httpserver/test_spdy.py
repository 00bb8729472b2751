"""SPDY/3 framing as kubectl's port-forward writes it: frames cut anywhere, header blocks in one zlib
stream per direction (primed with the SPDY/3 dictionary), and the frames the server writes."""
import struct
import zlib

import pytest

from vclite.httpserver import spdy


class Client:
    """The client side of the framing, written from the SPDY/3 draft (as spdystream frames it)."""

    def __init__(self):
        self.deflate = zlib.compressobj(zdict=spdy.DICTIONARY)
        self.inflate = zlib.decompressobj(zdict=spdy.DICTIONARY)

    def block(self, headers):
        return self.deflate.compress(spdy.header_block(headers)) + self.deflate.flush(zlib.Z_SYNC_FLUSH)

    def syn_stream(self, sid, headers, fin=False):
        payload = struct.pack(">IIBB", sid, 0, 0, 0) + self.block(headers)
        return struct.pack(">HHI", 0x8003, spdy.SYN_STREAM, (1 if fin else 0) << 24 | len(payload)) + payload

    def headers_of(self, frame_bytes, skip):
        """The headers of a SYN_REPLY the server wrote."""
        return spdy.parse_header_block(self.inflate.decompress(frame_bytes[8 + skip:]))


def control(ftype, payload, flags=0, version=3):
    return struct.pack(">HHI", 0x8000 | version, ftype, flags << 24 | len(payload)) + payload


def test_the_dictionary_is_spdy3s():
    """1,423 bytes; its Adler-32 is the dictionary id the peer's zlib header names (0xe3c6a7c2)."""
    assert len(spdy.DICTIONARY) == 1423 and zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")


@pytest.mark.parametrize("piece", [1, 3, 7, 1000], ids=lambda n: f"fed-{n}-bytes-at-a-time")
def test_frames_cut_anywhere_are_read_whole(piece):
    client = Client()
    wire = (client.syn_stream(1, {"streamtype": "error", "port": "8080", "requestid": "0"})
            + client.syn_stream(3, {"streamtype": "data", "port": "8080", "requestid": "0"})
            + spdy.data(3, b"hello") + spdy.data(1, fin=True)
            + control(spdy.PING, struct.pack(">I", 1))
            + control(spdy.RST_STREAM, struct.pack(">II", 3, spdy.CANCEL))
            + control(spdy.SETTINGS, struct.pack(">I", 0))
            + control(spdy.WINDOW_UPDATE, struct.pack(">II", 3, 1024))
            + control(spdy.GOAWAY, struct.pack(">II", 3, 0)))
    decoder, frames = spdy.Decoder(), []
    for at in range(0, len(wire), piece):
        frames += decoder.feed(wire[at:at + piece])
    assert [(type(f).__name__, getattr(f, "type", None), f.stream_id) for f in frames] == [
        ("Control", spdy.SYN_STREAM, 1), ("Control", spdy.SYN_STREAM, 3), ("Data", None, 3), ("Data", None, 1),
        ("Control", spdy.PING, 0), ("Control", spdy.RST_STREAM, 3), ("Control", spdy.SETTINGS, 0),
        ("Control", spdy.WINDOW_UPDATE, 3), ("Control", spdy.GOAWAY, 3)]
    assert frames[0].headers == {"streamtype": "error", "port": "8080", "requestid": "0"}
    assert frames[1].headers["streamtype"] == "data"     # (the second block reuses the first's zlib stream)
    assert (frames[2].data, frames[2].fin, frames[3].data, frames[3].fin) == (b"hello", False, b"", True)
    assert frames[4].value == 1 and frames[4].raw == control(spdy.PING, struct.pack(">I", 1))
    assert (frames[5].value, frames[7].value) == (spdy.CANCEL, 1024)


def test_a_syn_stream_with_fin():
    frame, = spdy.Decoder().feed(Client().syn_stream(5, {"streamtype": "data"}, fin=True))
    assert frame.fin and frame.stream_id == 5


def test_the_servers_frames_as_the_client_reads_them():
    encoder, client = spdy.Encoder(), Client()
    first, second = encoder.syn_reply(1), encoder.syn_reply(3, {"X-Note": "a"}, fin=True)
    assert struct.unpack(">HHI", first[:8]) == (0x8003, spdy.SYN_REPLY, len(first) - 8)
    assert struct.unpack(">I", first[8:12]) == (1,) and client.headers_of(first, 4) == {}
    assert second[4] == spdy.FLAG_FIN and client.headers_of(second, 4) == {"x-note": "a"}
    assert spdy.data(3, b"abc", fin=True) == b"\x00\x00\x00\x03\x01\x00\x00\x03abc"
    assert spdy.rst_stream(3, spdy.PROTOCOL_ERROR) == control(spdy.RST_STREAM, struct.pack(">II", 3, 1))
    assert spdy.goaway(7) == control(spdy.GOAWAY, struct.pack(">II", 7, 0))


def test_several_values_of_a_name_keep_the_first():
    block = spdy.header_block({"port": "1\x002"})
    assert spdy.parse_header_block(block) == {"port": "1"}


@pytest.mark.parametrize("wire, words", [
    pytest.param(control(spdy.PING, struct.pack(">I", 1), version=2), "unsupported SPDY version 2", id="version-2"),
    pytest.param(control(spdy.SYN_STREAM, b"\x00\x00\x00\x01"), "SYN_STREAM frame of 4 bytes", id="short-syn"),
    pytest.param(control(spdy.PING, b""), "PING frame of 0 bytes", id="short-ping"),
    pytest.param(control(spdy.SYN_STREAM, struct.pack(">IIBB", 1, 0, 0, 0) + b"not zlib"), "header block",
                 id="not-zlib"),
])
def test_bad_bytes_are_a_protocol_error(wire, words):
    with pytest.raises(spdy.ProtocolError, match=words):
        spdy.Decoder().feed(wire)


@pytest.mark.parametrize("plain, words", [
    pytest.param(b"\x00\x00", "truncated", id="no-count"),
    pytest.param(struct.pack(">II", 1, 10) + b"abc", "truncated", id="short-name"),
    pytest.param(spdy.header_block({"a": "b"}) + b"x", "longer than its pairs", id="trailing-bytes"),
])
def test_bad_header_blocks(plain, words):
    with pytest.raises(spdy.ProtocolError, match=words):
        spdy.parse_header_block(plain)
