"""A real Prometheus HTTP API for tests: an http.server in a thread answering /api/v1/query.

`running(answer)` yields a Prometheus whose `url` is the `metrics.address`; `answer(kind, node, form)`
gives, for a query of Volcano's CPU or memory use (`kind` "cpu" or "memory", `node` its instance), a
number (one vector sample), None (an empty vector), or (status, JSON body) to answer as is. Every
query is recorded in `calls` as (HTTP method, form). `post=False` answers 405 to POST, as a server
that takes GET only.
"""
from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import re
import threading
import urllib.parse
from typing import Any, Callable, Iterator

_INSTANCE = re.compile(r'instance="([^"]*)"')


@dataclasses.dataclass
class Prometheus:
    url: str
    calls: list[tuple[str, dict[str, str]]]


def vector(value: float | None, node: str, at: float) -> dict:
    result = [] if value is None else [{"metric": {"instance": node}, "value": [at, repr(float(value))]}]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


@contextlib.contextmanager
def running(answer: Callable[[str, str, dict], Any], post: bool = True) -> Iterator[Prometheus]:
    calls: list[tuple[str, dict[str, str]]] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, method: str, query: str) -> None:
            form = {k: v[0] for k, v in urllib.parse.parse_qs(query).items()}
            with lock:
                calls.append((method, form))
            path = urllib.parse.urlsplit(self.path).path
            if path != "/api/v1/query":
                status, body = 404, {"status": "error", "errorType": "not_found", "error": path}
            elif method == "POST" and not post:
                status, body = 405, {"status": "error", "errorType": "method", "error": "POST not allowed"}
            else:
                promql = form.get("query", "")
                kind = "memory" if "node_memory" in promql else "cpu"
                m = _INSTANCE.search(promql)
                got = answer(kind, m.group(1) if m else "", form)
                status, body = got if isinstance(got, tuple) else (200, vector(got, m.group(1) if m else "",
                                                                              float(form.get("time", 0))))
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            self._answer("POST", self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())

        def do_GET(self) -> None:
            self._answer("GET", urllib.parse.urlsplit(self.path).query)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Prometheus(f"http://127.0.0.1:{server.server_address[1]}", calls)
    finally:
        server.shutdown()
        server.server_close()
