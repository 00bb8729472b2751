"""A real scheduler extender for tests: an http.server in a thread answering POST /<verb> from a table.

`running({"predicate": fn, ...})` yields an Extender whose `url` is the urlPrefix; `fn(body)` returns the JSON
answer, or (status, answer) for another status, or raises to drop the connection. Each request is
recorded in `calls` as (verb, body). A verb not in the table gets 404.
"""
from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import threading
from typing import Any, Callable, Iterator


@dataclasses.dataclass
class Extender:
    url: str
    calls: list[tuple[str, Any]]

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.calls]

    def bodies(self, verb: str) -> list[Any]:
        return [body for v, body in self.calls if v == verb]


@contextlib.contextmanager
def running(answers: dict[str, Callable[[Any], Any]], prefix: str = "") -> Iterator[Extender]:
    calls: list[tuple[str, Any]] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            verb = self.path[len(prefix):].lstrip("/")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            with lock:
                calls.append((verb, body))
            fn = answers.get(verb)
            status, answer = 404, {"error": f"no verb {verb}"}
            if fn is not None:
                got = fn(body)
                status, answer = got if isinstance(got, tuple) else (200, got)
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass   # a client that stopped reading (a too large answer, a timeout): nothing to report

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Extender(f"http://127.0.0.1:{server.server_address[1]}{prefix}", calls)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
