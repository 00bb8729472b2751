"""What a container's view of the file system costs (executor/mountview.py), in the same run.

Three ways to start one container's program, timed directly (median of --starts): the program alone (`sh -c
true`, what a container without volumeMounts pays), the view script with one volume at a path the host lacks
(`/data`: the host's `/` replicated into a tmpfs), and with a ConfigMap-like mount inside an existing host
directory (`/etc/config`: `/etc` shadowed, a bind per entry) plus the termination message at
/dev/termination-log (`/dev` shadowed). Then whole `vcctl run`s of a JobFlow chain of --jobs jobs whose
container has a volumeMount, against the same chain without one, and the per-job difference. Never asserts.

    python benchmarks/views.py [--starts 30] [--jobs 20] [--runs 3]
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vclite.executor import mountview  # noqa: E402


def timed(argv: list[str], starts: int) -> float:
    """Median wall time of `argv`, in milliseconds."""
    times = []
    for _ in range(starts):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def chain(jobs: int, volume: bool) -> str:
    mounts = ("          volumeMounts: [{name: data, mountPath: /data}]\n" if volume else "")
    volumes = ("        volumes: [{name: data, emptyDir: {}}]\n" if volume else "")
    flows = "\n".join(f"  - name: j{i}" + (f"\n    dependsOn: {{targets: [j{i - 1}]}}" if i else "")
                      for i in range(jobs))
    templates = "".join(f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: j{i}}}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: t
    replicas: 1
    template:
      spec:
        restartPolicy: Never
{volumes}        containers:
        - name: c
          image: busybox
          command: ["true"]
{mounts}""" for i in range(jobs))
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: chain}}
spec:
  flows:
{flows}
{templates}"""


def run_seconds(path: pathlib.Path, work: pathlib.Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([str(ROOT / "vcctl"), "run", "--quiet", "--workdir", str(work), str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=30)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    why = mountview.available()
    if why is not None:
        print(f"no views on this host ({why}): nothing to measure")
        return
    with tempfile.TemporaryDirectory(prefix="vclite-views-bench-") as tmp:
        d = pathlib.Path(tmp)
        for name in ("root", "data", "cfg"):
            (d / name).mkdir()
        (d / "term").write_bytes(b"")
        program = ["sh", "-c", "true"]
        plain = timed(program, args.starts)
        data = timed(mountview.command(mountview.Spec(str(d / "root"), "/", (mountview.Bind(str(d / "data"), "/data"),)),
                                       program), args.starts)
        full = timed(mountview.command(mountview.Spec(str(d / "root"), "/", (
            mountview.Bind(str(d / "data"), "/data"), mountview.Bind(str(d / "cfg"), "/etc/config", True),
            mountview.Bind(str(d / "term"), "/dev/termination-log"))), program), args.starts)
        print(f"one start (median of {args.starts}): program alone {plain:.1f} ms; in a view with /data "
              f"{data:.1f} ms; with /data, /etc/config and /dev/termination-log {full:.1f} ms")
        files = {v: d / f"chain-{v}.yaml" for v in (False, True)}
        for v, f in files.items():
            f.write_text(chain(args.jobs, v))
        results: dict[bool, list[float]] = {False: [], True: []}
        for k in range(args.runs):   # (alternating: a machine that slows down weighs on both)
            for v in (False, True):
                results[v].append(run_seconds(files[v], d / f"work-{v}-{k}"))
        plain_run, view_run = (statistics.median(results[v]) for v in (False, True))
        print(f"`vcctl run` of a {args.jobs}-job chain (median of {args.runs}): without volumes {plain_run:.2f} s, "
              f"each container with an emptyDir at /data {view_run:.2f} s: "
              f"{(view_run - plain_run) / args.jobs * 1000:+.1f} ms a job")


if __name__ == "__main__":
    main()
