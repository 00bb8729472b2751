"""A real `vcctl server` process for tests that drive it over HTTP: temporary data directory, a
free port (`--port 0`), its kubeconfig; stopped with SIGTERM (killed if it does not stop)."""
from __future__ import annotations

import contextlib
import pathlib
import signal
import subprocess
import sys
import time
from typing import Iterator

import yaml

VCCTL = str(pathlib.Path(sys.executable).with_name("vcctl"))
ROOT = pathlib.Path(__file__).resolve().parents[1]


class Server:
    def __init__(self, proc: subprocess.Popen, data_dir: pathlib.Path, kubeconfig: pathlib.Path, url: str):
        self.proc, self.data_dir, self.kubeconfig, self.url = proc, data_dir, kubeconfig, url

    def token(self) -> str:
        return yaml.safe_load(self.kubeconfig.read_text())["users"][0]["user"]["token"]


def _read_announcement(proc: subprocess.Popen, out: pathlib.Path, deadline: float) -> tuple[str, str]:
    """The URL and kubeconfig path from the server's first stdout lines."""
    while True:
        url = kubeconfig = ""
        for line in out.read_text().splitlines():
            if line.startswith("vclite server listening on "):
                url = line.split()[-1]
            elif line.startswith("kubeconfig: "):
                kubeconfig = line.split(": ", 1)[1].strip()
        if url and kubeconfig:
            return url, kubeconfig
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"vcctl server did not start (exit {proc.poll()})")
        time.sleep(0.05)


@contextlib.contextmanager
def running(data_dir: pathlib.Path, *extra: str, startup: float = 60.0) -> Iterator[Server]:
    data_dir.mkdir(parents=True, exist_ok=True)
    out_path, log_path = data_dir / "server.out", data_dir / "server.log"
    out, log = open(out_path, "w"), open(log_path, "w")
    proc = subprocess.Popen([VCCTL, "server", "--data-dir", str(data_dir), "--port", "0", *extra], cwd=ROOT,
                            stdout=out, stderr=log, text=True)
    try:
        try:
            url, kubeconfig = _read_announcement(proc, out_path, time.monotonic() + startup)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n--- server log\n{log_path.read_text()[-3000:]}") from None
        yield Server(proc, data_dir, pathlib.Path(kubeconfig), url)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        out.close()
        log.close()


def wait_until(fn, what: str, timeout: float = 60.0):
    """Poll until fn() is truthy and return it (a readiness wait, not an assertion on time)."""
    deadline = time.monotonic() + timeout
    while not (value := fn()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)
    return value


def kubectl_runner(kubeconfig: pathlib.Path, cache: pathlib.Path):
    """`run(*args, check=True, input=None, cwd=ROOT, timeout=60)`: the real kubectl against the server
    (its own discovery cache); `run.argv` is the command line before the arguments."""
    argv = ["kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache)]

    def run(*args, timeout=60, check=True, input=None, cwd=ROOT):
        proc = subprocess.run([*argv, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              input=input)
        if check:
            assert proc.returncode == 0, f"kubectl {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr}"
        return proc
    run.argv = argv
    return run


def stop_cleanly(srv: Server) -> None:
    """SIGTERM the server: it must exit 0 (the tail of its log in the failure)."""
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(timeout=30) == 0, (srv.data_dir / "server.log").read_text()[-3000:]
