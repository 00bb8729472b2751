"""`vcctl run --listen HOST:PORT`: the address it takes."""
from __future__ import annotations

import pytest

from vclite.cli import runlisten


@pytest.mark.parametrize("text, want", [
    pytest.param("127.0.0.1:6443", ("127.0.0.1", 6443), id="ipv4"),
    pytest.param("0.0.0.0:0", ("0.0.0.0", 0), id="any-port"),
    pytest.param(":8443", ("127.0.0.1", 8443), id="loopback-by-default"),
    pytest.param("[::1]:6443", ("::1", 6443), id="ipv6"),
    pytest.param("localhost:65535", ("localhost", 65535), id="name"),
])
def test_parse_address(text, want):
    assert runlisten.parse_address(text) == want


@pytest.mark.parametrize("text, message", [
    pytest.param("localhost", "expected HOST:PORT", id="no-port"),
    pytest.param("127.0.0.1:65536", "a port of 0..65535", id="port-too-big"),
    pytest.param("127.0.0.1:http", "expected HOST:PORT", id="named-port"),
    pytest.param("::1:6443", "write an IPv6 address in brackets", id="bare-ipv6"),
    # (taken as 127.0.0.1, or tried as a host name "[::1" and refused with exit 1 once the run was set up, before)
    pytest.param("[]:0", "an address in brackets is an IPv6 address", id="empty-brackets"),
    pytest.param("[::1:0", "an address in brackets is an IPv6 address", id="unclosed-bracket"),
    pytest.param("::1]:0", "an address in brackets is an IPv6 address", id="unopened-bracket"),
])
def test_parse_address_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        runlisten.parse_address(text)


def test_parsing_loads_no_http_server():
    """The option is read at every `vcctl run`: the HTTP server's modules load only for a run that serves."""
    import subprocess
    import sys
    code = ("import sys; from vclite.cli import runlisten; runlisten.parse_address(':1'); "
            "print('vclite.httpserver.server' in sys.modules, 'aiohttp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_drive_calls_idle_before_it_waits_for_a_client():
    """A run serving its API, when nothing moves by itself, writes what its lines hold back (`idle`) before it
    waits for a client: the held lines are not left unwritten while it waits."""
    import asyncio

    from vclite.lib import clock
    from vclite.runtime import runtime as runtime_mod

    rt = runtime_mod.Runtime(clock.VirtualClock(), nodes=[], run_pods=False)
    said: list[str] = []

    async def main():
        stopping = asyncio.Event()

        def idle():
            said.append("idle")
            stopping.set()   # (Ctrl-C: the wait ends at once)
        rt.start()
        with pytest.raises(runtime_mod.Interrupted):
            await runlisten.drive(rt, lambda: False, None, None, stopping, said.append, idle=idle)
        await rt.shutdown()
    asyncio.run(main())
    assert said[0] == "idle" and said[1].startswith("nothing can move on by itself"), said
