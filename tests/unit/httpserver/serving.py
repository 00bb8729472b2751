"""A fresh API server over the in-process API, for tests that talk HTTP to it (aiohttp's test client)."""
from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from aiohttp import test_utils

from vclite.apiserver import inprocess
from vclite.httpserver import app as app_mod
from vclite.httpserver import backend
from vclite.lib import clock as clock_mod


def serve(test: Callable[[Any, Any, Any], Awaitable[None]], token: str, clock: Any = None,
          bookmark_interval: float | None = None, **backend_options: Any) -> None:
    """Run `await test(client, server, backend)` against a fresh, ready server (a real clock unless `clock`)."""
    async def main() -> None:
        be = backend.Backend.of_client(inprocess.new_client(clock or clock_mod.RealClock()), **backend_options)
        srv = (app_mod.Server(be, token) if bookmark_interval is None
               else app_mod.Server(be, token, bookmark_interval=bookmark_interval))
        srv.ready = True
        async with test_utils.TestClient(test_utils.TestServer(srv.app())) as client:
            await test(client, srv, be)
    asyncio.run(main())
