"""How long `vcctl server` keeps a client waiting while its control plane works on a burst.

Starts a real server (temporary data directory, a free port, TLS, its token; one node sized like this host
unless --nodes), then, while a probe thread issues a cheap GET every `--every` ms on its own keep-alive
connection and records each latency, submits a workload over HTTP and waits for it to finish:

- `jobs`: N one-replica vcjobs running `true` (10m cpu each: all of them fit at once);
- `sleep`: one vcjob of N pods running `sleep 5` (minAvailable N);
- `fan`: the peer benchmark's fan JobFlow of N jobs (`../shared/bench/peer-dag`: 1 cpu each, two at a time).

Prints the probe's latency distribution (p50/p99/max), its longest gap (between two consecutive answers) and,
with `--trace`, what the control loop ran during the worst gaps: the server is then started through a wrapper
that records every sync (component, key, seconds) and every `step` call of the loop, on the monotonic clock
this process shares. Figures only; never asserts anything.

    python benchmarks/api_latency.py [--workload jobs|sleep|fan] [--n 200] [--every 20] [--trace] [--probe PATH]
                                     [--tree DIR]   (run the server of another source tree: old and new interleaved)
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import apiserver  # noqa: E402  (its Api: a token, a TLS context, keep-alive calls)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = next((p for p in (ROOT.parent / "shared", pathlib.Path("/work/shared")) if p.exists()), ROOT)
PEER = SHARED / "bench" / "peer-dag" / "vclite_dag.py"
JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
FLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"
TEMPLATES = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobtemplates"
PODS = "/api/v1/namespaces/default/pods"

# The wrapper `--trace` starts the server through: every sync and every step, appended as JSON lines.
TRACER = r"""
import json, sys, time
from vclite.runtime import loop as loop_mod
out = open(sys.argv.pop(1), "w", buffering=1 << 16)
sync_one, step = loop_mod.Loop._sync_one, loop_mod.Loop.step
def traced_sync(self, c, key):
    t = time.monotonic(); sync_one(self, c, key)
    out.write(json.dumps(["sync", t, time.monotonic() - t, c.name, str(key)[:80]]) + "\n")
def traced_step(self, *a, **k):
    t = time.monotonic(); n = step(self, *a, **k)
    out.write(json.dumps(["step", t, time.monotonic() - t, n]) + "\n")
    return n
loop_mod.Loop._sync_one, loop_mod.Loop.step = traced_sync, traced_step
import asyncio.events
handle_run = asyncio.events.Handle._run
def traced_run(self):   # event-loop callbacks over 2 ms (a task's step: its name), the run_until ones left out
    t = time.monotonic(); handle_run(self); d = time.monotonic() - t
    if d > 0.002:
        cb = getattr(self._callback, "__self__", None)
        name = cb.get_name() if isinstance(cb, asyncio.Task) else getattr(self._callback, "__qualname__", "?")
        out.write(json.dumps(["callback", t, d, name]) + "\n")
asyncio.events.Handle._run = traced_run
import atexit; atexit.register(out.flush)
from vclite.cli import main
sys.argv[0] = "vcctl"
sys.exit(main.main())
"""


def vcjob(name: str, replicas: int, command: list[str]) -> dict:
    pod = {"spec": {"restartPolicy": "Never", "containers": [{
        "name": "main", "image": "busybox", "command": command,
        "resources": {"requests": {"cpu": "10m", "memory": "1Mi"}}}]}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"schedulerName": "volcano", "minAvailable": replicas,
                     "tasks": [{"name": "main", "replicas": replicas, "template": pod}]}}


def workload(kind: str, n: int) -> list[tuple[str, dict]]:
    if kind == "jobs":
        return [(JOBS, vcjob(f"j{i:04d}", 1, ["true"])) for i in range(n)]
    if kind == "sleep":
        return [(JOBS, vcjob("sleepers", n, ["sleep", "5"]))]
    import yaml
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "flow.yaml"
        subprocess.run([sys.executable, str(PEER), "fan", str(n), str(out)], check=True)
        docs = [d for d in yaml.safe_load_all(out.read_text()) if d]
    return [(TEMPLATES if d["kind"] == "JobTemplate" else FLOWS, d) for d in docs]


def finished(api: apiserver.Api, conn, kind: str, n: int) -> bool:
    if kind == "fan":
        _, body = api.call(conn, "GET", FLOWS + "/bench")
        return json.loads(body).get("status", {}).get("state", {}).get("phase") in ("Succeed", "Failed")
    _, body = api.call(conn, "GET", JOBS)
    phases = [j.get("status", {}).get("state", {}).get("phase") for j in json.loads(body)["items"]]
    return len(phases) == (n if kind == "jobs" else 1) and all(p in ("Completed", "Failed") for p in phases)


class Probe(threading.Thread):
    """GET `path` every `every` seconds (or as soon as the previous answer came, if later): (sent, answered)."""

    def __init__(self, api: apiserver.Api, path: str, every: float):
        super().__init__(daemon=True)
        self.api, self.path, self.every = api, path, every
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        conn = self.api.connect()
        nxt = time.monotonic()
        while not self.stop.is_set():
            sent = time.monotonic()
            code, _ = self.api.call(conn, "GET", self.path)
            self.samples.append((sent, time.monotonic()))
            if code != 200:
                raise RuntimeError(f"probe: {code}")
            nxt = max(nxt + self.every, time.monotonic())
            time.sleep(max(0.0, nxt - time.monotonic()))


def pct(xs: list[float], p: float) -> float:
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else float("nan")


def report(samples: list[tuple[float, float]], trace: pathlib.Path | None, worst: int) -> None:
    lat = sorted(b - a for a, b in samples)
    gaps = sorted(((b2 - b1), b1, b2) for (_, b1), (_, b2) in zip(samples, samples[1:]))
    print(f"probe: {len(lat)} requests; latency p50 {pct(lat, 50) * 1e3:.1f} ms, p90 {pct(lat, 90) * 1e3:.1f} ms, "
          f"p99 {pct(lat, 99) * 1e3:.1f} ms, max {lat[-1] * 1e3:.1f} ms; longest gap between answers "
          f"{gaps[-1][0] * 1e3:.1f} ms")
    if trace is None or not trace.exists():
        return
    rows = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    syncs = [r for r in rows if r[0] == "sync"]
    steps = [r for r in rows if r[0] == "step"]
    by_comp: dict[str, list[float]] = {}
    for _, _, d, comp, _ in syncs:
        by_comp.setdefault(comp, []).append(d)
    print("syncs by component (count, total s, max ms): " + "; ".join(
        f"{c} {len(ds)}, {sum(ds):.2f}, {max(ds) * 1e3:.1f}" for c, ds in sorted(by_comp.items())))
    longest = sorted(steps, key=lambda r: r[2])[-3:]
    print("longest step calls (ms, syncs): " + ", ".join(f"{r[2] * 1e3:.1f} ({r[3]})" for r in reversed(longest)))
    for gap, b1, b2 in reversed(gaps[-worst:]):
        inside = [r for r in syncs if r[1] + r[2] > b1 and r[1] < b2]
        busy = sum(min(r[1] + r[2], b2) - max(r[1], b1) for r in inside)
        top = sorted(inside, key=lambda r: r[2])[-4:]
        calls = [r for r in rows if r[0] == "callback" and r[1] + r[2] > b1 and r[1] < b2]
        named: dict[str, list[float]] = {}
        for r in calls:
            named.setdefault(r[3].split(" ")[0], []).append(min(r[1] + r[2], b2) - max(r[1], b1))
        print(f"  gap {gap * 1e3:.1f} ms: {len(inside)} syncs, {busy * 1e3:.1f} ms in syncs; longest: " + ", ".join(
            f"{r[3]} {r[4]} {r[2] * 1e3:.1f} ms" for r in reversed(top)))
        print("    callbacks over 2 ms (syncs included): " + (", ".join(
            f"{n} x{len(ds)} {sum(ds) * 1e3:.1f} ms" for n, ds in sorted(named.items(), key=lambda x: -sum(x[1])))
            or "none"))


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=("jobs", "sleep", "fan"), default="jobs")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--every", type=float, default=20, help="milliseconds between probes")
    ap.add_argument("--probe", default="/readyz")
    ap.add_argument("--nodes", default=None)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--worst", type=int, default=3, help="gaps to explain with --trace")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--poll", type=float, default=0.1, help="seconds between two looks at whether it finished")
    ap.add_argument("--tree", type=pathlib.Path, default=ROOT, help="the source tree whose server runs")
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="vclite-api-latency-"))
    trace = tmp / "trace.jsonl" if args.trace else None
    data = tmp / "data"
    data.mkdir()
    argv = ["server", "--data-dir", str(data), "--port", "0", *(["--nodes", args.nodes] if args.nodes else [])]
    cmd = [sys.executable, "-c", TRACER, str(trace), *argv] if trace else [sys.executable, "-m", "vclite.cli.main",
                                                                                *argv]
    out = data / "server.out"
    proc = subprocess.Popen(cmd, stdout=open(out, "w"), stderr=open(data / "server.log", "w"),
                            cwd=args.tree, env={**os.environ, "PYTHONPATH": str(args.tree.resolve())})
    try:
        kubeconfig = None
        deadline = time.monotonic() + 60
        while kubeconfig is None:
            for line in out.read_text().splitlines():
                if line.startswith("kubeconfig: "):
                    kubeconfig = pathlib.Path(line.split(": ", 1)[1])
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("vcctl server did not start:\n" + (data / "server.log").read_text()[-2000:])
            time.sleep(0.05)
        api = apiserver.Api(kubeconfig)
        conn = api.connect()
        docs = workload(args.workload, args.n)
        probe = Probe(api, args.probe, args.every / 1e3)
        time.sleep(0.5)
        probe.start()
        time.sleep(0.3)
        began = time.monotonic()
        for path, doc in docs:
            code, body = api.call(conn, "POST", path, doc)
            if code != 201:
                sys.exit(f"create {doc['metadata']['name']}: {code} {body[:300]!r}")
        submitted = time.monotonic()
        while not finished(api, conn, args.workload, args.n):
            if time.monotonic() - began > args.timeout:
                sys.exit("the workload did not finish")
            time.sleep(args.poll)
        ended = time.monotonic()
        probe.stop.set()
        probe.join()
        print(f"workload {args.workload} {args.n}: submitted in {submitted - began:.2f} s, finished after "
              f"{ended - began:.2f} s")
        stop(proc)   # (the trace is complete once the server has exited)
        report([s for s in probe.samples if began - 0.1 <= s[0] <= ended], trace, args.worst)
    finally:
        stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
