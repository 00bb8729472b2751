"""HTTP and TCP probe checks against real local servers; the prober never blocks its caller."""
from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from vclite.controllers.jobflow import prober
from vclite.lib import clock as clock_mod


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = {"/ok": 200, "/redirect": 302, "/header": 200 if self.headers.get("X-Token") == "t" else 403}
        self.send_response(code.get(self.path, 500))
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def port():
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@pytest.mark.parametrize("kind, path, header, ok", [
    pytest.param("httpGet", "/ok", None, True, id="http-200"),
    pytest.param("httpGet", "/redirect", None, True, id="http-3xx-counts"),
    pytest.param("httpGet", "/boom", None, False, id="http-500"),
    pytest.param("httpGet", "/header", ("X-Token", "t"), True, id="http-header-sent"),
    pytest.param("httpGet", "/header", None, False, id="http-header-missing"),
    pytest.param("tcpSocket", "", None, True, id="tcp-open"),
])
def test_check_now(port, kind, path, header, ok):
    assert prober.check_now(prober.Target(kind, "127.0.0.1", port, path, header)) is ok


@pytest.mark.parametrize("kind", ["httpGet", "tcpSocket"])
def test_nothing_listening(kind):
    assert prober.check_now(prober.Target(kind, "127.0.0.1", closed_port(), "/"), timeout=0.5) is False


def test_threaded_prober_answers_later_and_remembers_success(port):
    clock = clock_mod.VirtualClock()
    p = prober.Prober(clock, ttl=5)
    target = prober.Target("httpGet", "127.0.0.1", port, "/ok")
    assert p.check(target) is None, "never blocks: the first ask submits the check"
    for _ in range(200):
        answer = p.check(target)
        if answer is not None:
            break
        time.sleep(0.01)
    assert answer is True
    clock.advance(4)
    assert p.check(target) is True, "a success is remembered for ttl seconds"
    clock.advance(2)
    assert p.check(target) is None, "then checked again"
    p.close()


def test_inline_prober_checks_again_after_a_failure():
    clock = clock_mod.VirtualClock()
    answers = iter([False, True])
    p = prober.Prober(clock, inline=True, check=lambda target, timeout: next(answers))
    target = prober.Target("tcpSocket", "127.0.0.1", 1)
    assert p.check(target) is False
    clock.advance(0.1)
    assert p.check(target) is True
