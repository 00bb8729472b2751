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
              coalesced); last, the same sync when every other middle vcjob waits (Pending, its PodGroup
              Unschedulable: the status shows why each waits) and the sync writes the status.
  hops        benchmarks/dag_hops.py: `vcctl run` of the peer benchmark's 50-job chain and 202-job
              fan against make -j2 and Luigi (../shared/bench/peer-dag), per-hop cost of the chain.
  watch       a `vcctl server` running start -> 10,000 -> end (`true` jobs, 32 CPUs), once 1,000 middle
              jobs completed: `vcctl jobflow get NAME` (to its exit), the first frame of `vcctl jobflow
              get NAME -w` in a pseudo-terminal (from its start to the view's title on the terminal),
              and what each following frame costs (reading the cache, drawing) while the flow runs.
  runview     `vcctl run` of start -> 2,000 -> end with its live view (a terminal): the time drawing
              took, in how many frames.

Prints figures; never asserts anything about time.

    python benchmarks/jobflow.py [admit] [completion] [hops] [watch] [runview] [--quick] [--runs 3]
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import io
import os
import pathlib
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
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
          "status.compute from scratch | controller sync | sync writing the status, the others waiting |\n"
          "|---|---|---|---|---|---|---|")
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
        sync_waiting = controller_sync(n, min(samples, 20), waiting=True)
        print(f"| {n:,} | {statistics.median(decide) * 1e6:.0f} µs | {statistics.median(assemble) * 1e6:.0f} µs | "
              f"{write * 1000:.1f} ms | {full * 1000:.1f} ms | {sync * 1000:.2f} ms | {sync_waiting * 1000:.2f} ms |")
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


def controller_sync(n: int, samples: int, waiting: bool = False) -> float:
    """Median seconds of JobFlowController.sync after one middle vcjob of fan(n) completed, with the
    real in-process API: informers, engine, and the status write (handed over to the store, not copied).
    `waiting`: every middle vcjob Pending, its PodGroup saying why (Unschedulable: a cluster too small for the
    fan, so the status shows each one's reason), and each sync writes the status (the write gap has passed)."""
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
    if waiting:
        for name in mids:
            wait_unschedulable(client, name)
        drain(ctrl)
    for name in mids[:: max(1, len(mids) // samples)][:samples]:
        finish(name)
        if waiting:
            clock.advance(controller_mod.BIG_WRITE_GAP)
        t = time.perf_counter()
        ctrl.sync(key)
        costs.append(time.perf_counter() - t)
        drain(ctrl)
    ctrl.stop()
    return statistics.median(costs)


def wait_unschedulable(client: Any, name: str) -> None:
    """What the vcjob controller and the scheduler write for a vcjob that cannot run yet: Pending, and its
    PodGroup Unschedulable."""
    job = client.get(kinds.JOB, "default", name)
    stamp = clock_mod.format_time(T0)
    client.update_status({**job, "status": {"state": {"phase": "Pending", "lastTransitionTime": stamp}}})
    owner = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": name, "uid": meta.uid(job),
             "controller": True}
    pg = client.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": "default", "ownerReferences": [owner]},
                        "spec": {"minMember": 1}})
    client.update_status({**pg, "status": {"phase": "Pending", "conditions": [
        {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "transitionID": "t",
         "message": "1/1 tasks in gang unschedulable: 0/4 nodes are available, 4 Insufficient cpu.",
         "lastTransitionTime": stamp}]}})


def drain(ctrl: controller_mod.JobFlowController) -> None:
    while (k := ctrl.queue.get()) is not None:
        ctrl.sync(k)


# ---- hops ----------------------------------------------------------------------------------------------------
def bench_hops(runs: int) -> None:
    print("\n## Per-hop latency against make and Luigi (benchmarks/dag_hops.py)\n")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dag_hops.py"), "--runs", str(runs)],
                          cwd=ROOT, capture_output=True, text=True)
    print(proc.stdout[proc.stdout.find("| tool"):] if "| tool" in proc.stdout else proc.stdout + proc.stderr[-2000:])


# ---- watch: vcctl jobflow get [-w] against a server running a big fan ----------------------------------------
WATCH_NODES = "1x(cpu=32,memory=64Gi)"
FOLLOW_SECONDS = 10.0   # following frames are measured for this long


def fan_templates(flows: list[Obj]) -> list[Obj]:
    """A JobTemplate per flow (Volcano names a flow after its template): one `true` container."""
    return [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
             "metadata": {"name": f["name"], "namespace": "default"},
             "spec": {"minAvailable": 1, "tasks": [{"name": "main", "replicas": 1, "template": {"spec": {
                 "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"],
                                                           "resources": {"requests": {"cpu": "1"}}}]}}}]}}
            for f in flows]


def vcctl_command(*args: str) -> list[str]:
    return [str(pathlib.Path(sys.executable).with_name("vcctl")), *args]


def first_frame(args: list[str], marker: bytes, timeout: float = 300.0) -> float:
    """Seconds from starting `vcctl ARGS` in a pseudo-terminal (160x50) until `marker` is on it; then it is killed."""
    began = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:   # the child: vcctl, its stdout a terminal
        os.environ.update(COLUMNS="160", LINES="50", TERM="xterm-256color")
        os.execv(vcctl_command()[0], vcctl_command(*args))
    seen, took = b"", float("nan")
    try:
        while select.select([fd], [], [], timeout)[0]:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            seen += chunk
            if not chunk or marker in seen:
                took = time.perf_counter() - began if marker in seen else took
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return took


def following_frames(kubeconfig: str, name: str, seconds: float) -> list[float]:
    """Seconds each frame of `jobflow get -w` (client_live, in this process, on a 160x50 terminal) took after the
    first — reading the cache, building the view, drawing it — for `seconds`."""
    from rich import live as rich_live
    from rich.console import Console

    from vclite.cli import client_live
    from vclite.kube import client as kube_client

    costs: list[float] = []
    started, stop_at = [0.0], time.perf_counter() + seconds
    snapshot, update = client_live.Cache.snapshot, rich_live.Live.update

    def timed_snapshot(cache: Any) -> Any:
        started[0] = time.perf_counter()
        return snapshot(cache)

    def timed_update(live: Any, *a: Any, **kw: Any) -> None:
        update(live, *a, **kw)
        costs.append(time.perf_counter() - started[0])
        if time.perf_counter() > stop_at:
            raise KeyboardInterrupt
    client_live.Cache.snapshot, rich_live.Live.update = timed_snapshot, timed_update
    try:
        client = kube_client.HttpClient.from_kubeconfig(kubeconfig)
        console = Console(file=io.StringIO(), force_terminal=True, width=160, height=50)
        client_live.follow(client, "default", name, clock_mod.RealClock(), console,
                           jobflow=client.get(kinds.JOBFLOW, "default", name))
    finally:
        client_live.Cache.snapshot, rich_live.Live.update = snapshot, update
    return costs[1:]


def bench_watch(mids: int, at: int, runs: int) -> None:
    from tests import vcctl_server
    from vclite.kube import client as kube_client

    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    flows = fan(mids + 2)
    print(f"\n## vcctl jobflow get against a server running start -> {mids:,} -> end, at {at:,} completed "
          f"(best and median of {runs})\n")
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp, \
            vcctl_server.running(pathlib.Path(tmp), "--nodes", WATCH_NODES) as srv:
        kubeconfig = str(srv.kubeconfig)
        client = kube_client.HttpClient.from_kubeconfig(kubeconfig)
        t = time.perf_counter()
        for template in fan_templates(flows):
            client.create(template)
        client.create({**jobflow(flows), "metadata": {"name": "big", "namespace": "default"}})
        while True:
            status = client.get(kinds.JOBFLOW, "default", "big").get("status") or {}
            done = len(status.get("completedJobs") or [])
            if done >= at or meta.phase({"status": status}) in ("Succeed", "Failed"):
                break
            time.sleep(1)
        print(f"(created {len(flows):,} JobTemplates and the JobFlow, ran to {done:,} completed: "
              f"{time.perf_counter() - t:.0f} s)\n")
        print("| what | best | median |\n|---|---|---|")
        timed = {"`vcctl jobflow get big` (to its exit)": lambda: best(lambda: subprocess.run(
                     vcctl_command("jobflow", "get", "big", "-k", kubeconfig), capture_output=True, check=True), 1),
                 "`vcctl jobflow get big -w`: first frame": lambda: first_frame(
                     ["jobflow", "get", "big", "-w", "-k", kubeconfig], b"jobs completed")}
        for label, measure in timed.items():
            figures = [measure() for _ in range(runs)]
            print(f"| {label} | {min(figures):.2f} s | {statistics.median(figures):.2f} s |")
        frames = following_frames(kubeconfig, "big", FOLLOW_SECONDS)
        if frames:
            print(f"| each following frame ({len(frames)} in {FOLLOW_SECONDS:g} s) | {min(frames) * 1000:.0f} ms | "
                  f"{statistics.median(frames) * 1000:.0f} ms (max {max(frames) * 1000:.0f} ms) |")


# ---- runview: vcctl run's live view of a big fan --------------------------------------------------------------
def bench_runview(mids: int) -> None:
    from rich import live as rich_live
    from rich.console import Console

    from vclite.api import yamlio
    from vclite.cli import manifests
    from vclite.cli import run as run_mod
    from vclite.cli import viewdraw
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import hop_costs

    docs = yamlio.load_string(hop_costs.flow_yaml("fan", mids), "fan.yaml")
    costs: list[float] = []
    update = rich_live.Live.update

    def timed_update(live: Any, renderable: Any, *a: Any, **kw: Any) -> None:   # (render() ran just before)
        t = time.perf_counter()
        update(live, renderable, *a, **kw)
        costs.append(time.perf_counter() - t)
    rich_live.Live.update = timed_update
    view_render = viewdraw.render   # (run.py looks it up on the module at each frame)
    rendering: list[float] = []

    def timed_render(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        out = view_render(*a, **kw)
        rendering.append(time.perf_counter() - t)
        return out
    viewdraw.render = timed_render
    try:
        with tempfile.TemporaryDirectory(prefix="bench-runview-") as work:
            rt = run_mod.build_runtime(WATCH_NODES, None, work)
            assert not manifests.apply_all(rt.client, docs)
            console = Console(file=io.StringIO(), force_terminal=True, width=160, height=50)
            t = time.perf_counter()
            done, _, _ = asyncio.run(run_mod._run(rt, docs, io.StringIO(), console, False, 1200))
            wall = time.perf_counter() - t
    finally:
        rich_live.Live.update, viewdraw.render = update, view_render
    drawing = sum(costs) + sum(rendering)
    print(f"\n## vcctl run's live view of start -> {mids:,} -> end (a terminal of 160x50)\n")
    print(f"{'finished' if done else 'NOT finished'} in {wall:.1f} s; drawing took {drawing:.2f} s in {len(costs)} "
          f"frames ({drawing / max(1, len(costs)) * 1000:.0f} ms a frame, the longest "
          f"{max((a + b for a, b in zip(costs, rendering)), default=0) * 1000:.0f} ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["admit", "completion", "hops", "watch", "runview"])
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
    if "watch" in a.parts:
        bench_watch(1_000 if a.quick else 10_000, 100 if a.quick else 1_000, 1 if a.quick else a.runs)
    if "runview" in a.parts:
        bench_runview(500 if a.quick else 2_000)


if __name__ == "__main__":
    main()
