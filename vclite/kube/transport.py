"""HTTP(S) requests to one API server, with the kubeconfig's credentials, standard library only.

`Transport.request` sends one request on a keep-alive connection of the calling thread (each
thread has its own, so a Transport may be shared between threads) and returns the status and body;
`Transport.stream` opens a dedicated connection for a long-lived response (watch), which the caller
owns and closes. TLS: the kubeconfig's CA (or the system's), client certificate, `tls-server-name`,
`insecure-skip-tls-verify`. A connection failure raises `status.Unreachable` naming the URL, as
client-go does. This module knows nothing about kinds or objects.
"""
from __future__ import annotations

import base64
import dataclasses
import http.client
import os
import socket
import ssl
import tempfile
import threading
import urllib.parse
from typing import Any

from vclite import __version__
from vclite.kube import kubeconfig, status

USER_AGENT = f"vcctl/{__version__} (vclite)"
RETRYABLE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


@dataclasses.dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def ssl_context(cfg: kubeconfig.Config, cert: bytes | None, key: bytes | None) -> ssl.SSLContext:
    """The TLS settings of a kubeconfig cluster and user."""
    ctx = ssl.create_default_context()
    if cfg.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif cfg.ca_data:
        ctx = ssl.create_default_context(cadata=cfg.ca_data.decode("ascii", "replace"))
    if cert and key:
        # ssl only loads a certificate chain from files: write both to a private temporary
        # directory, load, and remove them at once.
        with tempfile.TemporaryDirectory(prefix="vcctl-tls-") as tmp:
            cert_path, key_path = os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key")
            for path, data in ((cert_path, cert), (key_path, key)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
            ctx.load_cert_chain(cert_path, key_path)
    return ctx


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with an explicit TLS server name (kubeconfig `tls-server-name`)."""

    def __init__(self, host: str, port: int | None, context: ssl.SSLContext, server_name: str | None,
                 timeout: float):
        super().__init__(host, port, context=context, timeout=timeout)
        self._server_name = server_name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self._server_name or self.host)


class Transport:
    def __init__(self, cfg: kubeconfig.Config, timeout: float = 30.0):
        url = urllib.parse.urlsplit(cfg.server if "://" in cfg.server else f"https://{cfg.server}")
        if url.scheme not in ("http", "https") or not url.hostname:
            raise kubeconfig.ConfigError(f"server address {cfg.server!r} is not an http(s) URL")
        self.cfg, self.timeout = cfg, timeout
        self.scheme, self.host, self.port = url.scheme, url.hostname, url.port
        self.base_path = url.path.rstrip("/")
        self.server = f"{url.scheme}://{url.netloc}{self.base_path}"
        self._local = threading.local()
        self._lock = threading.Lock()
        self._auth: tuple[str | None, ssl.SSLContext | None] | None = None

    # ---- credentials (computed once; exec plugins run on first use) --------------------------------
    def _credentials(self) -> tuple[str | None, ssl.SSLContext | None]:
        with self._lock:
            if self._auth is None:
                cfg = self.cfg
                token, cert, key = cfg.token, cfg.client_cert, cfg.client_key
                if cfg.exec_spec:
                    exec_token, exec_cert, exec_key = kubeconfig.run_exec(cfg.exec_spec, cfg.server)
                    token, cert, key = exec_token or token, exec_cert or cert, exec_key or key
                header = None
                if token:
                    header = f"Bearer {token}"
                elif cfg.username is not None and cfg.password is not None:
                    header = "Basic " + base64.b64encode(f"{cfg.username}:{cfg.password}".encode()).decode()
                try:
                    ctx = ssl_context(cfg, cert, key) if self.scheme == "https" else None
                except (ssl.SSLError, ValueError) as exc:
                    raise kubeconfig.ConfigError(f"TLS settings of {cfg.source or 'the kubeconfig'}: {exc}") from exc
                self._auth = (header, ctx)
            return self._auth

    def _connect(self, timeout: float | None) -> http.client.HTTPConnection:
        _, ctx = self._credentials()
        if self.scheme == "https":
            assert ctx is not None
            return _HTTPSConnection(self.host, self.port, ctx, self.cfg.tls_server_name, timeout or self.timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout or self.timeout)

    def headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        header, _ = self._credentials()
        out = {"Accept": accept, "User-Agent": USER_AGENT}
        if header:
            out["Authorization"] = header
        if content_type:
            out["Content-Type"] = content_type
        return out

    def _unreachable(self, method: str, path: str, exc: BaseException) -> status.Unreachable:
        detail = exc.reason if isinstance(exc, ssl.SSLError) and exc.reason else (
            getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
        return status.Unreachable(f'{method.title()} "{self.server}{path}": {detail}')

    # ---- requests ----------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: bytes | None = None, content_type: str | None = None,
                accept: str = "application/json") -> Response:
        """One request and its whole response. `path` includes the query string."""
        full = self.base_path + path
        headers = self.headers(accept, content_type if body is not None else None)
        for attempt in (0, 1):
            conn = getattr(self._local, "conn", None)
            reused = conn is not None
            if conn is None:
                conn = self._local.conn = self._connect(None)
            try:
                conn.request(method, full, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self._drop()
                return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
            except RETRYABLE as exc:
                self._drop()
                # A reused keep-alive connection may have been closed by the server while idle;
                # retry once — except a POST that may have been received (no duplicate creates).
                sent = isinstance(exc, http.client.RemoteDisconnected)
                if attempt == 0 and reused and not (method == "POST" and sent):
                    continue
                raise self._unreachable(method, full, exc) from exc
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                raise self._unreachable(method, full, exc) from exc
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def stream(self, path: str, timeout: float | None = None) -> tuple[http.client.HTTPConnection,
                                                                         http.client.HTTPResponse]:
        """GET on a dedicated connection, returning before the body is read (for watches). The
        caller reads the response line by line and closes the connection."""
        full = self.base_path + path
        conn = self._connect(timeout)
        try:
            conn.request("GET", full, headers=self.headers("application/json", None))
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise self._unreachable("GET", full, exc) from exc

    def close(self) -> None:
        self._drop()


def shutdown(conn: Any) -> None:
    """Unblock a thread reading from `conn` (used to cancel a watch from another thread)."""
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
