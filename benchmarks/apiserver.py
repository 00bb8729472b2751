"""`vcctl server` over HTTP: writes/s, watch events/s delivered to 50 watchers, and the latency of
`kubectl get jf` with 1,000 JobFlows stored.

Starts a real server (temporary data directory, a free port, TLS, its token) and drives it with
plain HTTP/1.1 keep-alive connections from this process — loopback only — then with the real
`kubectl`. Every write is durable (SQLite, synchronous commit) before it is acknowledged, so
writes/s includes the commit. Prints figures; never asserts anything.

    python benchmarks/apiserver.py [--writes 2000] [--watchers 50] [--events 400] [--flows 1000] [--gets 30]
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures
import http.client
import json
import pathlib
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
VCCTL = str(pathlib.Path(sys.executable).with_name("vcctl"))
CMS = "/api/v1/namespaces/{ns}/configmaps"
JOBFLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


class Api:
    def __init__(self, kubeconfig: pathlib.Path):
        cfg = yaml.safe_load(kubeconfig.read_text())
        cluster = cfg["clusters"][0]["cluster"]
        self.url = urllib.parse.urlsplit(cluster["server"])
        self.token = cfg["users"][0]["user"]["token"]
        self.ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.url.hostname, self.url.port, context=self.ctx, timeout=120)

    def call(self, conn: http.client.HTTPSConnection, method: str, path: str, body: dict | None = None,
             accept: str = "application/json") -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": accept, "Content-Type": "application/json"}
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()


def start_server(data_dir: pathlib.Path) -> tuple[subprocess.Popen, pathlib.Path]:
    data_dir.mkdir(parents=True)
    out = data_dir / "server.out"
    proc = subprocess.Popen([VCCTL, "server", "--data-dir", str(data_dir), "--port", "0", "--log-format", "json"],
                            stdout=open(out, "w"), stderr=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in out.read_text().splitlines():
            if line.startswith("kubeconfig: "):
                return proc, pathlib.Path(line.split(": ", 1)[1])
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    sys.exit("vcctl server did not start")


def configmap(ns: str, i: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:06d}", "namespace": ns},
            "data": {"i": str(i)}}


def bench_writes(api: Api, n: int, threads: int) -> None:
    def writer(t: int, count: int) -> list[float]:
        conn, lat = api.connect(), []
        for i in range(count):
            start = time.perf_counter()
            code, body = api.call(conn, "POST", CMS.format(ns="writes"), configmap("writes", t * 1_000_000 + i))
            lat.append(time.perf_counter() - start)
            if code != 201:
                raise RuntimeError(f"create failed: {code} {body[:200]!r}")
        conn.close()
        return lat

    for workers in (1, threads):
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            per = n // workers
            futures = [pool.submit(writer, t + (100 if workers > 1 else 0), per) for t in range(workers)]
            lats = sorted(x for f in futures for x in f.result())
        elapsed = time.perf_counter() - start
        print(f"writes ({workers} connection{'s' if workers > 1 else ''}): {len(lats)} creates in {elapsed:.2f} s "
              f"= {len(lats) / elapsed:,.0f} writes/s; latency p50 {pct(lats, 50):.2f} ms, p99 {pct(lats, 99):.2f} ms")
        api.call(api.connect(), "DELETE", CMS.format(ns="writes"))


def bench_watchers(api: Api, watchers: int, events: int) -> None:
    ns = "watched"
    counts = [0] * watchers
    ready = threading.Barrier(watchers + 1)

    def watch(i: int) -> None:
        conn = api.connect()
        conn.request("GET", CMS.format(ns=ns) + "?watch=true&timeoutSeconds=300",
                     headers={"Authorization": f"Bearer {api.token}"})
        resp = conn.getresponse()
        ready.wait()
        while counts[i] < events:
            line = resp.readline()
            if not line:
                break
            counts[i] += json.loads(line)["type"] == "ADDED"
        conn.close()

    threads = [threading.Thread(target=watch, args=(i,), daemon=True) for i in range(watchers)]
    for t in threads:
        t.start()
    ready.wait()
    time.sleep(0.5)  # let every watch register on the server
    conn = api.connect()
    start = time.perf_counter()
    for i in range(events):
        api.call(conn, "POST", CMS.format(ns=ns), configmap(ns, i))
    written = time.perf_counter() - start
    for t in threads:
        t.join(timeout=300)
    elapsed = time.perf_counter() - start
    delivered = sum(counts)
    print(f"watch: {events} writes seen by {watchers} watchers: {delivered:,} events delivered in {elapsed:.2f} s "
          f"= {delivered / elapsed:,.0f} events/s (writes alone took {written:.2f} s)")


def jobflow(i: int) -> dict:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": f"flow-{i:05d}"},
            "spec": {"flows": [{"name": "missing-template"}]}}


def settle(api: Api, quiet: float = 2.0, limit: float = 300.0) -> None:
    """Wait until the store's resourceVersion stops moving (the controllers are done)."""
    conn, last, since, start = api.connect(), "", time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit:
        rv = json.loads(api.call(conn, "GET", JOBFLOWS + "?limit=1")[1])["metadata"]["resourceVersion"]
        if rv != last:
            last, since = rv, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.2)


def bench_kubectl_get(api: Api, kubeconfig: pathlib.Path, flows: int, gets: int, tmp: pathlib.Path) -> None:
    conn = api.connect()
    start = time.perf_counter()
    for i in range(flows):
        code, body = api.call(conn, "POST", JOBFLOWS, jobflow(i))
        if code != 201:
            raise RuntimeError(f"create failed: {code} {body[:200]!r}")
    print(f"stored {flows} JobFlows in {time.perf_counter() - start:.2f} s; waiting for the controllers to settle")
    settle(api)
    server_side = []
    for _ in range(gets):
        t = time.perf_counter()
        code, body = api.call(conn, "GET", JOBFLOWS + "?limit=500", accept=TABLE)
        server_side.append(time.perf_counter() - t)
    server_side.sort()
    print(f"GET jobflows as Table (HTTP, 500 rows a page): p50 {pct(server_side, 50):.1f} ms, "
          f"p99 {pct(server_side, 99):.1f} ms")
    if shutil.which("kubectl") is None:
        print("kubectl not installed: kubectl latency skipped")
        return
    cmd = ["kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp / "kube-cache"), "get", "jf"]
    subprocess.run(cmd, capture_output=True, check=True)  # warm the discovery cache
    lats = []
    for _ in range(gets):
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        lats.append(time.perf_counter() - t)
    lats.sort()
    lines = len(out.stdout.splitlines()) - 1
    baseline = []
    for _ in range(min(gets, 10)):
        t = time.perf_counter()
        subprocess.run(["kubectl", "version", "--client"], capture_output=True)
        baseline.append(time.perf_counter() - t)
    print(f"kubectl get jf ({lines} rows, whole command): p50 {pct(lats, 50):.0f} ms, p99 {pct(lats, 99):.0f} ms "
          f"(kubectl version --client alone: p50 {pct(sorted(baseline), 50):.0f} ms)")


def pct(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[k] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--watchers", type=int, default=50)
    ap.add_argument("--events", type=int, default=400)
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--gets", type=int, default=30)
    a = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="vclite-bench-api-"))
    proc, kubeconfig = start_server(tmp / "data")
    try:
        api = Api(kubeconfig)
        print(f"server {api.url.geturl()} (data in {tmp / 'data'}; p50/p99 are per request)")
        bench_writes(api, a.writes, a.threads)
        bench_watchers(api, a.watchers, a.events)
        bench_kubectl_get(api, kubeconfig, a.flows, a.gets, tmp)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
