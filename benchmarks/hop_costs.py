"""Where a hop's time goes: per component, the syncs and CPU time each job of a flow costs.

Runs the peer benchmark's shapes (a chain of `true` jobs, and start -> N parallel -> end) on the
embedded control plane in this process — the real runtime, API, controllers, scheduler and local
executor, started as `vcctl run` starts them — and prints, per component, how many syncs each job
took and their time, plus the rest (the event loop, process start-up and waiting). The total per job
of the chain, less the one-job run, is the per-hop cost `benchmarks/dag_hops.py` measures from
outside (there with interpreter start-up and output). Never asserts anything.

`--path`: the chain's critical path instead. A hop is a pod's exit (its pidfd readable), the control
plane's work up to the next pod's spawn, then that process's own run until its exit; only the first
part is vclite's (make's whole hop is the second). Prints the means of both windows and, per
component, the syncs that ran inside the first (they delay the spawn, whether the next job needs them
or not) and the loop's own share, and what ran while the process did (bookkeeping, off the path).

    python benchmarks/hop_costs.py [--chain 50] [--fan 200] [--runs 3] [--path]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vclite.api import kinds, yamlio  # noqa: E402
from vclite.apiserver import client as client_mod  # noqa: E402
from vclite.cli import manifests  # noqa: E402
from vclite.cli import run as run_mod  # noqa: E402

TEMPLATE = """---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - {{name: main, image: busybox, command: ["true"], resources: {{requests: {{cpu: "1"}}}}}}
"""


def flow_yaml(shape: str, n: int) -> str:
    """The same JobFlow as ../shared/bench/peer-dag/vclite_dag.py writes."""
    if shape == "chain":
        deps = {f"c{i}": ([f"c{i - 1}"] if i else []) for i in range(n)}
    else:
        deps = {"start": [], **{f"m{i}": ["start"] for i in range(n)}, "end": [f"m{i}" for i in range(n)]}
    flows = [f"    - name: {name}" + (f"\n      dependsOn: {{targets: [{', '.join(d)}]}}" if d else "")
             for name, d in deps.items()]
    return "".join(TEMPLATE.format(name=name) for name in deps) + (
        "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: bench}\n"
        "spec:\n  jobRetainPolicy: retain\n  flows:\n" + "\n".join(flows) + "\n")


def measure(shape: str, n: int, on_sync: Callable[[str, float], None] | None = None
            ) -> tuple[float, int, dict[str, float], collections.Counter]:
    """(seconds, jobs, seconds per component, syncs per component) for one run; `on_sync` is told each sync too."""
    docs = yamlio.load_string(flow_yaml(shape, n), "bench.yaml")
    spent: dict[str, float] = collections.defaultdict(float)
    syncs: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="hop-costs-") as work:
        rt = run_mod.build_runtime(None, None, work)

        def count(component: str, seconds: float) -> None:
            spent[component] += seconds
            syncs[component] += 1
            if on_sync is not None:
                on_sync(component, seconds)
        rt.on_sync = count

        async def go() -> float:
            rt.start()
            problems = manifests.apply_all(rt.client, docs)
            assert not problems, problems
            progress = run_mod.Progress()
            for kind in (kinds.JOBFLOW, kinds.JOB):
                for obj in rt.client.list(kind):
                    progress.observe(client_mod.WatchEvent(client_mod.EventType.ADDED, kind, obj, None))
                rt.client.watch(kind, progress.observe)
            t0 = time.perf_counter()
            ok = await rt.run_until(progress.done, timeout=600)
            elapsed = time.perf_counter() - t0
            await rt.shutdown()
            if not ok:
                raise SystemExit(f"{shape} {n}: the flow did not finish")
            return elapsed
        elapsed = asyncio.run(go())
    return elapsed, n if shape == "chain" else n + 2, spent, syncs


class PathProbe:
    """Timestamps of the chain's pod spawns and exits, and of every sync (instrumentation of the real executor's
    process start and pidfd exit callback, for this process only)."""

    def __init__(self) -> None:
        from vclite.executor import processes
        self.marks: list[tuple[float, str]] = []            # (time, "spawn" | "exit")
        self.syncs: list[tuple[float, float, str]] = []     # (start, seconds, component)
        start, on_exit = processes.start, processes._PidfdChild._on_exit
        marks = self.marks

        async def timed_start(*args, **kwargs):
            marks.append((time.perf_counter(), "spawn"))
            return await start(*args, **kwargs)

        def timed_exit(child) -> None:
            marks.append((time.perf_counter(), "exit"))
            on_exit(child)
        processes.start, processes._PidfdChild._on_exit = timed_start, timed_exit

    def on_sync(self, component: str, seconds: float) -> None:
        self.syncs.append((time.perf_counter() - seconds, seconds, component))

    def hops(self, skip: int = 3) -> list[tuple[float, float, dict[str, float], dict[str, float]]]:
        """Per hop (the first and last `skip` left out: start-up and the end): (exit to next spawn, spawn to
        its exit, seconds per component of syncs that started in the first window, and in the second)."""
        marks = sorted(self.marks)
        out = []
        for i in range(len(marks) - 2):
            (t_exit, a), (t_spawn, b), (t_next_exit, c) = marks[i:i + 3]
            if (a, b, c) != ("exit", "spawn", "exit"):
                continue
            before: dict[str, float] = collections.defaultdict(float)
            during: dict[str, float] = collections.defaultdict(float)
            for start, seconds, component in self.syncs:
                if t_exit <= start < t_spawn:
                    before[component] += seconds
                elif t_spawn <= start < t_next_exit:
                    during[component] += seconds
            out.append((t_spawn - t_exit, t_next_exit - t_spawn, before, during))
        return out[skip:-skip] if len(out) > 2 * skip + 2 else out


def measure_path(n: int) -> list[tuple[float, float, dict[str, float], dict[str, float]]]:
    probe = PathProbe()
    measure("chain", n, on_sync=probe.on_sync)
    return probe.hops()


def report_path(n: int, hops: list[tuple[float, float, dict[str, float], dict[str, float]]]) -> None:
    if not hops:
        print(f"\nchain of {n}: no hop seen (too short a chain?)")
        return
    k = len(hops)
    mean = statistics.fmean
    print(f"\ncritical path of a chain of {n} ({k} hops): exit to next spawn {mean(h[0] for h in hops) * 1000:.2f} ms, "
          f"spawn to its exit {mean(h[1] for h in hops) * 1000:.2f} ms (means)")
    print(f"  {'ms a hop':36s} {'exit to spawn':>14s} {'while it runs':>14s}")
    names = sorted({c for h in hops for c in (*h[2], *h[3])}, key=lambda c: -sum(h[2].get(c, 0) for h in hops))
    rows = [(c, sum(h[2].get(c, 0) for h in hops) / k, sum(h[3].get(c, 0) for h in hops) / k) for c in names]
    loop = sum(h[0] - sum(h[2].values()) for h in hops) / k
    for c, before, during in rows:
        print(f"  {c:36s} {before * 1000:14.2f} {during * 1000:14.2f}")
    print(f"  {'(event loop, waiting)':36s} {loop * 1000:14.2f}")


def report(label: str, results: list[tuple[float, int, dict[str, float], collections.Counter]]) -> float:
    best = min(results, key=lambda r: r[0])
    elapsed, jobs, spent, syncs = best
    print(f"\n{label}: {jobs} jobs, {elapsed:.3f} s in the control plane (best of {len(results)}), "
          f"{elapsed / jobs * 1000:.2f} ms per job")
    print(f"  {'component':24s} {'syncs/job':>9s} {'ms/job':>8s} {'µs/sync':>8s}")
    for name in sorted(spent, key=lambda k: -spent[k]):
        print(f"  {name:24s} {syncs[name] / jobs:9.1f} {spent[name] / jobs * 1000:8.2f} "
              f"{spent[name] / syncs[name] * 1e6:8.0f}")
    rest = elapsed - sum(spent.values())
    print(f"  {'rest (loop, processes)':24s} {'':9s} {rest / jobs * 1000:8.2f}")
    return elapsed


def at_least(low: int):
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chain", type=at_least(2), default=50, help="jobs in the chain (at least 2: hops need two)")
    ap.add_argument("--fan", type=at_least(1), default=200, help="parallel jobs between start and end")
    ap.add_argument("--runs", type=at_least(1), default=3, help="runs of each shape (the best is shown)")
    ap.add_argument("--path", action="store_true",
                    help="the chain's critical path instead: exit to next spawn, and what runs in it (module doc)")
    a = ap.parse_args()
    if a.path:
        measure("chain", min(a.chain, 5))   # (warm-up: imports, first compilations)
        report_path(a.chain, measure_path(a.chain))
        return
    one = min(measure("chain", 1)[0] for _ in range(a.runs))
    chain = report(f"chain of {a.chain}", [measure("chain", a.chain) for _ in range(a.runs)])
    print(f"  per hop (chain − one job) / {a.chain - 1}: {(chain - one) / (a.chain - 1) * 1000:.2f} ms")
    report(f"fan 1 + {a.fan} + 1", [measure("fan", a.fan) for _ in range(a.runs)])


if __name__ == "__main__":
    main()
