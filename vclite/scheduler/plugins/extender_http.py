"""The extender plugin's HTTP client: one JSON POST to `<urlPrefix>/<verb>` with a deadline (plugins/extender).

`post(prefix, verb, body, timeout)` sends `body` as JSON (`Content-Type: application/json`) and returns
the decoded answer, or raises ExtenderError saying what went wrong: the extender could not be reached,
did not answer within `timeout` seconds (the whole exchange, as Go's `http.Client.Timeout`), answered
with a status other than 200, or with a body over 10 MiB (Go's `http: request body too large`) or
that is not JSON. `check_url(text)` says why a `urlPrefix` cannot be used (None: it can).
The standard library's http.client is enough for one POST; no HTTP proxy is used (Go's client skips
proxies for loopback addresses, where an extender usually listens).

Must not: know the scheduler: bodies and answers are plain JSON values.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.parse
from typing import Any

MAX_BODY = 10 << 20   # upstream's maxBodySize
_CHUNK = 1 << 16


class ExtenderError(Exception):
    """A call that did not give an answer (unreachable, timed out, status not 200, bad body)."""


def url_of(prefix: str, verb: str) -> str:
    """Upstream's `strings.TrimRight(urlPrefix, "/") + "/" + verb`."""
    return prefix.rstrip("/") + "/" + verb


def check_url(text: str) -> str | None:
    """Why `text` cannot be an extender's urlPrefix (None: it can): http or https, with a host."""
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as e:
        return f"not a URL ({e})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https:// (e.g. http://127.0.0.1:8713)"
    if not parts.hostname:
        return "has no host (e.g. http://127.0.0.1:8713)"
    if parts.query or parts.fragment:
        return "must not have a query or fragment: the verb is appended to it"
    if port == 0:
        return "port 0 cannot be reached"
    return None


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname, parts.port, timeout=timeout), parts.path or "/"


def post(prefix: str, verb: str, body: Any, timeout: float, limit: str = "") -> Any:
    """POST `body` to `<prefix>/<verb>` and return the JSON answer (None for an empty body); `limit` says
    what set `timeout`, in the timeout's message (`<timeout> (extender.httpTimeout)` when not given)."""
    url = url_of(prefix, verb)
    data = json.dumps(body, separators=(",", ":")).encode()
    deadline = time.monotonic() + timeout
    conn, path = _connection(url, timeout)
    resp = None
    try:
        conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        sock = conn.sock   # (getresponse may hand the socket over to the response and forget it)
        _limit(sock, deadline)
        resp = conn.getresponse()
        if resp.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
        raw = _read(sock, resp, deadline)
    except (socket.timeout, TimeoutError):
        within = limit or f"{seconds(timeout)} (extender.httpTimeout)"
        raise ExtenderError(f"POST {url}: no answer within {within}") from None
    except (OSError, http.client.HTTPException) as e:
        raise ExtenderError(f"POST {url}: {e or type(e).__name__}") from None
    finally:
        if resp is not None:
            resp.close()
        conn.close()
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError as e:
        raise ExtenderError(f"POST {url}: the answer is not JSON: {e}") from None


def _read(sock: socket.socket | None, resp: http.client.HTTPResponse, deadline: float) -> bytes:
    """The answer's body, at most MAX_BODY bytes, read before `deadline`."""
    out = bytearray()
    while True:
        _limit(sock, deadline)
        chunk = resp.read1(_CHUNK)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > MAX_BODY:
            raise ExtenderError(f"http: request body too large (the answer exceeds {MAX_BODY} bytes)")


def _limit(sock: socket.socket | None, deadline: float) -> None:
    """The next socket operation may take what is left until `deadline` (TimeoutError: nothing is)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    if sock is not None:
        sock.settimeout(left)


def seconds(timeout: float) -> str:
    """A timeout as a Go duration reads (`100ms`, `2s`)."""
    return f"{timeout * 1000:g}ms" if timeout < 1 else f"{timeout:g}s"
