"""Scheduler speed at scale: pods scheduled per second and peak memory, against published figures.

Generates clusters and workloads as plain API objects and schedules them through the pure entry
`session.run_session` with Volcano's default configuration (enqueue, allocate, backfill; priority,
gang, conformance / overcommit, drf, predicates, proportion, nodeorder):

  a. 5,000 nodes, 50,000 single-pod jobs;
  b. 5,000 nodes, 100 gang jobs of 500 pods;
  c. 1,000 nodes, 10,000 pods in 500 jobs of 20 across 10 weighted queues, plus binpack;
  d. 5,000 nodes, one gang of 10,000 pods (the shape of the published Volcano gang figure).

Every PodGroup starts Pending with its pods already created, so one session runs enqueue and
allocate for all of them (the snapshot is built inside the timed call, from a cold request memo
as after a scheduler restart). "first" is that first session; "end-to-end" repeats sessions,
applying binds and PodGroup statuses between them as the shell would (not timed), until every pod
is bound. Snapshot building is also timed alone on the same input. Peak memory is the case
process's peak RSS (`ru_maxrss`, each full case runs in its own process), input objects included.
Never asserts anything about time.

    python benchmarks/scheduler.py [--quick] [--cases a,b,c] [--profile CASE]
"""
from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import pathlib
import resource
import subprocess
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vclite.scheduler import conf as conf_mod  # noqa: E402
from vclite.scheduler import registry as registry_mod  # noqa: E402
from vclite.scheduler.framework import session, snapshot  # noqa: E402

Obj = dict[str, Any]
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
GOAL_PODS_PER_S = 5000
GOAL_MEMORY_MIB = 2048
NODE_SHAPES = (("16", "64Gi"), ("32", "128Gi"), ("64", "256Gi"))
POD_SHAPES = (("500m", "1Gi"), ("1", "2Gi"), ("2", "4Gi"), ("250m", "512Mi"))

# name: (nodes, jobs, pods per job, queues, binpack, reference text)
CASES: dict[str, tuple[int, int, int, int, bool, str]] = {
    "a": (5000, 50_000, 1, 1, False, "kube-scheduler CI floor at 5,000 nodes: 680–810 pods/s"),
    "b": (5000, 100, 500, 1, False, "Volcano, one 10,000-pod gang: ~220 pods/s (nearest published)"),
    "c": (1000, 500, 20, 10, True, "Volcano at 1,000 nodes: ~500–590 pods/s"),
    "d": (5000, 1, 10_000, 1, False, "Volcano, one 10,000-pod gang: ~220 pods/s"),
}
QUICK: dict[str, tuple[int, int, int, int]] = {"a": (200, 1000, 1, 1), "b": (200, 4, 100, 1), "c": (100, 50, 20, 10),
                                               "d": (200, 1, 400, 1)}
LABELS = {"a": "5,000 nodes, 50,000 single-pod jobs", "b": "5,000 nodes, 100 gangs × 500 pods",
          "c": "1,000 nodes, 500 jobs × 20 pods, 10 queues", "d": "5,000 nodes, one gang of 10,000 pods"}


# ---- workload --------------------------------------------------------------------------------------
def _stamp(i: int) -> str:
    return (NOW - dt.timedelta(days=1) + dt.timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_nodes(n: int) -> list[Obj]:
    out = []
    for i in range(n):
        cpu, mem = NODE_SHAPES[i % len(NODE_SHAPES)]
        res = {"cpu": cpu, "memory": mem, "pods": "110"}
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": f"node-{i:05d}", "uid": f"node-uid-{i}", "resourceVersion": "1",
                                 "labels": {"kubernetes.io/hostname": f"node-{i:05d}",
                                            "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
                    "spec": {},
                    "status": {"capacity": dict(res), "allocatable": dict(res),
                               "conditions": [{"type": "Ready", "status": "True"}]}})
    return out


def make_queues(n: int) -> list[Obj]:
    names = ["default"] + [f"q{i}" for i in range(1, n)] if n > 1 else ["default"]
    return [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": name, "uid": f"queue-{name}", "resourceVersion": "1",
                          "creationTimestamp": _stamp(0)},
             "spec": {"weight": i + 1, "reclaimable": True}, "status": {"state": "Open"}}
            for i, name in enumerate(names)]


def _quantity_sum(shape: tuple[str, str], n: int) -> dict[str, str]:
    cpu, mem = shape
    milli = int(float(cpu.rstrip("m")) if cpu.endswith("m") else float(cpu) * 1000) * n
    mi = {"Gi": 1024, "Mi": 1}[mem[-2:]] * int(mem[:-2]) * n
    return {"cpu": f"{milli}m", "memory": f"{mi}Mi", "pods": str(n)}


def make_jobs(n_jobs: int, per_job: int, queues: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    podgroups, pods = [], []
    qnames = [q["metadata"]["name"] for q in queues]
    for j in range(n_jobs):
        ns, name = f"ns-{j % 20}", f"job-{j:05d}"
        shape = POD_SHAPES[j % len(POD_SHAPES)]
        podgroups.append({
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "uid": f"pg-{j}", "resourceVersion": "1",
                         "creationTimestamp": _stamp(j)},
            "spec": {"minMember": per_job, "queue": qnames[j % len(qnames)],
                     "minResources": _quantity_sum(shape, per_job)},
            "status": {"phase": "Pending"}})
        for k in range(per_job):
            pname = f"{name}-worker-{k}"
            pods.append({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pname, "namespace": ns, "uid": f"pod-{j}-{k}", "resourceVersion": "1",
                             "creationTimestamp": _stamp(j),
                             "labels": {"volcano.sh/job-name": name, "volcano.sh/task-spec": "worker"},
                             "annotations": {"scheduling.k8s.io/group-name": name,
                                             "volcano.sh/task-spec": "worker"}},
                "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "1"],
                                         "resources": {"requests": {"cpu": shape[0], "memory": shape[1]},
                                                       "limits": {"cpu": shape[0], "memory": shape[1]}}}]},
                "status": {"phase": "Pending"}})
    return podgroups, pods


def binpack_registered() -> bool:
    cls = registry_mod.default_registry().plugins.get("binpack")
    return cls is not None and not cls.__module__.endswith(".unsupported")


def make_conf(binpack: bool) -> conf_mod.SchedulerConf:
    plugins2 = ["overcommit", "drf", "predicates", "proportion", "nodeorder"] + (["binpack"] if binpack else [])
    return conf_mod.parse({"actions": "enqueue, allocate, backfill",
                           "tiers": [{"plugins": [{"name": p} for p in ("priority", "gang", "conformance")]},
                                     {"plugins": [{"name": p} for p in plugins2]}]})


# ---- sessions --------------------------------------------------------------------------------------
def apply(state: snapshot.ClusterState, result: session.SessionResult) -> None:
    """What the shell writes back (binds, PodGroup statuses), applied to the listed objects."""
    if result.binds:
        pods = []
        for p in state.pods:
            node = result.binds.get(f"{p['metadata']['namespace']}/{p['metadata']['name']}")
            if node is not None:
                p = dict(p, spec=dict(p["spec"], nodeName=node),
                         metadata=dict(p["metadata"], resourceVersion="2"))
            pods.append(p)
        state.pods = pods
    if result.podgroup_status:
        state.podgroups = [
            dict(pg, status=result.podgroup_status.get(f"{pg['metadata']['namespace']}/{pg['metadata']['name']}",
                                                       pg["status"]))
            for pg in state.podgroups]


def rss_mib() -> float:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_case(case: str, quick: bool, max_sessions: int = 20) -> dict[str, Any]:
    n_nodes, n_jobs, per_job, n_queues, binpack, _ = CASES[case]
    if quick:
        n_nodes, n_jobs, per_job, n_queues = QUICK[case]
    with_binpack = binpack and binpack_registered()
    conf = make_conf(with_binpack)
    queues = make_queues(n_queues)
    podgroups, pods = make_jobs(n_jobs, per_job, queues)
    nodes = make_nodes(n_nodes)
    gc.collect()
    rss_input = rss_mib()

    def fresh_state() -> snapshot.ClusterState:
        return snapshot.ClusterState(nodes=nodes, queues=queues, podgroups=list(podgroups), pods=list(pods),
                                     priority_classes=[], request_cache={})

    gc.disable()   # as run_session does
    t0 = time.perf_counter()
    snapshot.build(fresh_state())
    snap_s = time.perf_counter() - t0
    gc.enable()
    gc.collect()

    state = fresh_state()
    sessions, bound, total_s, total_cpu, first = 0, 0, 0.0, 0.0, None
    while sessions < max_sessions:
        t0, c0 = time.perf_counter(), time.process_time()
        result = session.run_session(state, conf, NOW + dt.timedelta(seconds=sessions))
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        sessions += 1
        total_s += elapsed
        total_cpu += cpu
        bound += len(result.binds)
        if first is None:
            first = {"binds": len(result.binds), "seconds": elapsed, "cpu": cpu}
        if not result.binds or bound >= len(pods):
            break
        apply(state, result)
    return {
        "case": case, "nodes": n_nodes, "pods": len(pods), "jobs": n_jobs, "queues": n_queues,
        "binpack": with_binpack, "binpack_wanted": binpack, "snapshot_s": snap_s,
        "first_binds": first["binds"], "first_s": first["seconds"], "first_cpu_s": first["cpu"], "sessions": sessions,
        "bound": bound, "total_s": total_s, "total_cpu_s": total_cpu, "rss_input_mib": rss_input,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


# ---- report ----------------------------------------------------------------------------------------
def _rate(n: int, s: float) -> str:
    return f"{n / s:,.0f}" if s > 0 else "-"


def table(results: list[dict[str, Any]], quick: bool) -> str:
    lines = [
        "| case | pods | first session: pods/s (bound; wall s, CPU s) | end-to-end: pods/s (sessions) "
        "| of which snapshot s | peak RSS MiB (input) | reference | goal met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        label = LABELS[r["case"]] if not quick else f"{r['nodes']} nodes, {r['jobs']} jobs (quick)"
        if r["binpack_wanted"]:
            label += ", binpack" if r["binpack"] else ", WITHOUT binpack (not registered)"
        first = _rate(r["first_binds"], r["first_s"])
        e2e = _rate(r["bound"], r["total_s"])
        met = (r["bound"] == r["pods"] and r["first_s"] > 0 and r["bound"] / r["total_s"] >= GOAL_PODS_PER_S
               and r["first_binds"] / r["first_s"] >= GOAL_PODS_PER_S and r["peak_rss_mib"] < GOAL_MEMORY_MIB)
        lines.append(
            f"| {r['case']}. {label} | {r['pods']:,} | {first} ({r['first_binds']:,}; {r['first_s']:.2f}, "
            f"{r['first_cpu_s']:.2f}) | {e2e} ({r['sessions']}) | {r['snapshot_s']:.2f} | {r['peak_rss_mib']:,.0f} "
            f"({r['rss_input_mib']:,.0f}) | {CASES[r['case']][5]} | {'yes' if met else 'no'} |")
    lines.append(f"\nGoal: ≥ {GOAL_PODS_PER_S:,} pods/s in every case, peak memory < {GOAL_MEMORY_MIB:,} MiB. "
                 "pods/s = pods bound ÷ wall time of run_session (snapshot included).")
    return "\n".join(lines)


def small_session_ms(repeats: int) -> float:
    """Median wall time of one session over a small cluster, as the embedded control plane runs
    one per pod event: 3 nodes, 4 jobs of 2 pods (one job running, one bound, two pending), the
    default configuration, the request memo kept across sessions as the shell keeps it."""
    queues = make_queues(1)
    podgroups, pods = make_jobs(4, 2, queues)
    nodes = make_nodes(3)
    for pg in podgroups[:2]:
        pg["status"] = {"phase": "Running"}
    for i, pod in enumerate(pods[:4]):
        pod["spec"] = dict(pod["spec"], nodeName=nodes[i % 3]["metadata"]["name"])
        pod["status"] = {"phase": "Running" if i < 2 else "Pending"}
    conf = make_conf(False)
    cache: dict = {}
    times = []
    for _ in range(repeats):
        state = snapshot.ClusterState(nodes=nodes, queues=queues, podgroups=podgroups, pods=pods, request_cache=cache)
        t0 = time.perf_counter()
        session.run_session(state, conf, NOW)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1000


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small clusters (a smoke run, in this process)")
    ap.add_argument("--cases", default="a,b,c,d")
    ap.add_argument("--case", help=argparse.SUPPRESS)          # child process: run one case, print JSON
    ap.add_argument("--profile", metavar="CASE", help="run one case under cProfile and print the top functions")
    a = ap.parse_args(argv)
    if a.case:
        print(json.dumps(run_case(a.case, a.quick)))
        return
    if a.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.runcall(run_case, a.profile, a.quick)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    results = []
    for case in [c.strip() for c in a.cases.split(",") if c.strip()]:
        if case not in CASES:
            sys.exit(f"unknown case {case!r} (known: {', '.join(CASES)})")
        if a.quick:
            results.append(run_case(case, True))
        else:
            out = subprocess.run([sys.executable, __file__, "--case", case], check=True, capture_output=True,
                                 text=True).stdout
            results.append(json.loads(out.strip().splitlines()[-1]))
        r = results[-1]
        print(f"case {case}: {r['bound']:,}/{r['pods']:,} pods bound in {r['sessions']} session(s), "
              f"{r['total_s']:.2f} s", file=sys.stderr)
    print(table(results, a.quick))
    print(f"\nA session over a small cluster (3 nodes, 4 jobs of 2 pods, default configuration): "
          f"{small_session_ms(50 if a.quick else 500):.2f} ms (median).")


if __name__ == "__main__":
    main()
