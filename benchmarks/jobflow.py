"""JobFlow at scale: admitting a 10,000-job flow, what one job's completion costs as the flow grows,
and the per-hop latency of whole `vcctl run`s against make and Luigi.

  admit       admission alone and a create through the in-process API (admission + store) of
              10,000-job JobFlows: a fan (start -> 9,998 parallel flows -> end, whose dependsOn
              names all 9,998), a chain of 10,000, and one flow with withItems of 10,000.
  completion  the fan of N = 100 / 1,000 / 10,000 flows, driven by the JobFlow controller's engine as
              the controller drives it: the cost of one middle job completing — the decision (observe +
              decide; each middle flow has one dependent, `end`, whose 9,998-target dependency is
              counted, not re-evaluated, so it should not grow with N), assembling the status (C-level
              copies of its lists), one status write through the in-process API (handed over: the store
              keeps the assembled status without copying it), status.compute from scratch (what a full
              recompute would cost), and a whole JobFlowController.sync (status writes of big flows are
              coalesced).
  hops        benchmarks/dag_hops.py: `vcctl run` of the peer benchmark's 50-job chain and 202-job
              fan against make -j2 and Luigi (../shared/bench/peer-dag), per-hop cost of the chain.

Prints figures; never asserts anything about time.

    python benchmarks/jobflow.py [admit] [completion] [hops] [--quick] [--runs 3]
"""
from __future__ import annotations

import argparse
import datetime as dt
import pathlib
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vclite.admission import admit as admission  # noqa: E402
from vclite.api import kinds, meta  # noqa: E402
from vclite.apiserver import inprocess  # noqa: E402
from vclite.controllers.jobflow import controller as controller_mod  # noqa: E402
from vclite.controllers.jobflow import engine, plan  # noqa: E402
from vclite.controllers.jobflow import status as status_mod  # noqa: E402
from vclite.lib import clock as clock_mod  # noqa: E402

Obj = dict[str, Any]
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def fan(n: int) -> list[Obj]:
    mids = [f"m{i}" for i in range(n - 2)]
    return [{"name": "start"}, *({"name": m, "dependsOn": {"targets": ["start"]}} for m in mids),
            {"name": "end", "dependsOn": {"targets": mids}}]


def chain(n: int) -> list[Obj]:
    return [{"name": f"c{i}", **({"dependsOn": {"targets": [f"c{i - 1}"]}} if i else {})} for i in range(n)]


def jobflow(flows: list[Obj], name: str = "big") -> Obj:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": name, "namespace": "default", "uid": "u-" + name}, "spec": {"flows": flows}}


def best(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# ---- admit ---------------------------------------------------------------------------------------------------
def bench_admit(runs: int) -> None:
    shapes = {"fan of 10,000 (end waits on 9,998)": fan(10_000), "chain of 10,000": chain(10_000),
              "withItems of 10,000": [{"name": "each", "withItems": list(range(10_000))}]}
    print("\n## Admitting a 10,000-job JobFlow (best of %d)\n" % runs)
    print("| shape | admission only | create through the in-process API |\n|---|---|---|")
    for label, flows in shapes.items():
        client = inprocess.new_client(clock_mod.VirtualClock())
        view = inprocess._View(client.store)
        obj = jobflow(flows)
        t_admit = best(lambda: admission.admit(admission.Operation.CREATE, kinds.JOBFLOW, obj, None, view), runs)
        counter = iter(range(10_000))
        t_create = best(lambda: client.create(jobflow(flows, f"big{next(counter)}")), runs)
        print(f"| {label} | {t_admit * 1000:.0f} ms | {t_create * 1000:.0f} ms |")


# ---- completion ---------------------------------------------------------------------------------------------
def vcjob(name: str, phase: str, uid: str) -> Obj:
    stamp = clock_mod.format_time(T0)
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "creationTimestamp": stamp,
                         "labels": {"volcano.sh/createdByJobFlow": "default.big"}},
            "spec": {"tasks": [{"name": "main", "replicas": 1}]},
            "status": {"state": {"phase": phase, "lastTransitionTime": stamp},
                       "taskStatusCount": {"main": {"phase": {"Running" if phase == "Running" else "Succeeded": 1}}}}}


def fan_engine(n: int) -> tuple[engine.Engine, list[str]]:
    """An engine for fan(n) with `start` done and every middle vcjob created and Running."""
    obj = jobflow(fan(n))
    eng = engine.Engine(obj, plan.compile_spec(obj["spec"], "big"))
    eng.load([], T0)
    for inst in eng.decide(T0).create:
        eng.observe(inst.name, vcjob(inst.name, "Completed", "u-start"), T0)
    for i, inst in enumerate(eng.decide(T0).create):
        eng.observe(inst.name, vcjob(inst.name, "Running", f"u{i}"), T0)
    eng.decide(T0)
    eng.status(T0)
    return eng, [f"big-m{i}" for i in range(n - 2)]


def bench_completion(sizes: list[int], samples: int) -> None:
    print("\n## One job completing, as the flow grows (fan of N; medians)\n")
    print("| N flows | decide (observe + decide) | status assembly | one status write in the store | "
          "status.compute from scratch | controller sync |\n|---|---|---|---|---|---|")
    for n in sizes:
        eng, mids = fan_engine(n)
        step = max(1, len(mids) // samples)
        decide, assemble = [], []
        for i, name in enumerate(mids[::step][:samples]):
            job = vcjob(name, "Completed", f"u{i}")
            t = time.perf_counter()
            eng.observe(name, job, T0)
            eng.decide(T0)
            t2 = time.perf_counter()
            eng.status(T0)
            decide.append(t2 - t)
            assemble.append(time.perf_counter() - t2)
        status = eng.status(T0)
        jobs = [i.job for i in eng.insts.values() if i.job is not None]
        obj = {**jobflow(fan(n)), "status": status}
        full = best(lambda: status_mod.compute(obj, jobs, T0), 1 if n >= 10_000 else 3)
        write = status_write(obj)
        sync = controller_sync(n, min(samples, 20))
        print(f"| {n:,} | {statistics.median(decide) * 1e6:.0f} µs | {statistics.median(assemble) * 1e6:.0f} µs | "
              f"{write * 1000:.1f} ms | {full * 1000:.1f} ms | {sync * 1000:.2f} ms |")
    print(f"\nA status is rewritten at most every {controller_mod.STATUS_WRITE_GAP} s "
          f"({controller_mod.BIG_WRITE_GAP} s from {controller_mod.BIG_STATUS:,} entries), at once when the phase "
          "changes, a retry or creation failure must be recorded, or the flow has finished.")


def status_write(obj: Obj) -> float:
    """Seconds for one update_status of this JobFlow (with its status) through the in-process API."""
    client = inprocess.new_client(clock_mod.VirtualClock())
    created = client.create({k: v for k, v in obj.items() if k != "status"})
    flip = iter(range(1_000_000))

    def write() -> None:
        status = {**obj["status"], "state": {"phase": "Running", "n": next(flip)}}
        client.update_status({**created, "metadata": {**created["metadata"], "resourceVersion": ""},
                              "status": status})
    return best(write, 3)


def controller_sync(n: int, samples: int) -> float:
    """Median seconds of JobFlowController.sync after one middle vcjob of fan(n) completed, with the
    real in-process API: informers, engine, and the status write (handed over to the store, not copied)."""
    clock = clock_mod.VirtualClock()
    client = inprocess.new_client(clock)
    flows = fan(n)
    for f in flows:   # Volcano names a flow after its JobTemplate: one template per flow
        client.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                       "metadata": {"name": f["name"], "namespace": "default"},
                       "spec": {"minAvailable": 1, "tasks": [{"name": "main", "replicas": 1, "template": {
                           "spec": {"containers": [{"name": "c", "image": "x", "command": ["true"]}]}}}]}})
    ctrl = controller_mod.JobFlowController(client, clock)
    ctrl.start()
    client.create(jobflow(flows))
    key = "default/big"
    drain(ctrl)

    def finish(name: str) -> None:
        job = client.get(kinds.JOB, "default", name)
        job["status"] = {**(job.get("status") or {}), "state": {"phase": "Completed",
                                                                "lastTransitionTime": clock_mod.format_time(T0)}}
        client.update_status(job)

    finish("big-start")
    drain(ctrl)
    costs = []
    mids = [f"big-m{i}" for i in range(n - 2)]
    for name in mids[:: max(1, len(mids) // samples)][:samples]:
        finish(name)
        t = time.perf_counter()
        ctrl.sync(key)
        costs.append(time.perf_counter() - t)
        drain(ctrl)
    ctrl.stop()
    return statistics.median(costs)


def drain(ctrl: controller_mod.JobFlowController) -> None:
    while (k := ctrl.queue.get()) is not None:
        ctrl.sync(k)


# ---- hops ----------------------------------------------------------------------------------------------------
def bench_hops(runs: int) -> None:
    print("\n## Per-hop latency against make and Luigi (benchmarks/dag_hops.py)\n")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dag_hops.py"), "--runs", str(runs)],
                          cwd=ROOT, capture_output=True, text=True)
    print(proc.stdout[proc.stdout.find("| tool"):] if "| tool" in proc.stdout else proc.stdout + proc.stderr[-2000:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["admit", "completion", "hops"])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    sizes = [100, 1000] if a.quick else [100, 1000, 10_000]
    if "admit" in a.parts:
        bench_admit(1 if a.quick else a.runs)
    if "completion" in a.parts:
        bench_completion(sizes, 50 if a.quick else 200)
    if "hops" in a.parts:
        bench_hops(1 if a.quick else a.runs)


if __name__ == "__main__":
    main()
