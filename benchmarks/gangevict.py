"""What gangpreempt and gangreclaim cost a session with many starving gangs.

A generated cluster: `--nodes` nodes of 8 cpu / 32Gi, each full with low-priority running gangs (two
pods of 2 cpu per node and gang, two gangs a node: minMember 2, so every running gang's pods are one
whole bundle), and `--gangs` starving high-priority gangs (Inqueue, every pod pending) of 4 to 12 pods
of 2 cpu. `preempt`: all in one queue, so gangpreempt evicts; `reclaim`: the running gangs in a
reclaimable queue of their own, the starving ones in another, each deserving half the cluster (capacity),
so gangreclaim does. The configuration is
Volcano's gangevict e2e one (tests/scenarios/states/conf/gangevict.conf) with only the action measured.

Each variant is timed (process CPU time, the best of `--repeats` sessions on the same input); the
decisions (evictions, pipelined PodGroups) are printed as a digest so that two runs (before / after a
change) can be compared. `--profile VARIANT` prints cProfile's top functions by call count and time.
Never asserts anything about time.

With `--topology`, racks of 8 nodes (tier-1 HyperNodes) under spines of 4 racks (tier 2), and every starving
gang kept within one spine (hard networkTopology): the actions search up to 8 HyperNodes a gang.

    python benchmarks/gangevict.py [--nodes 200] [--gangs 80] [--repeats 3] [--topology] [--profile preempt]
"""
from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import json
import pathlib
import pstats
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from vclite.scheduler import conf as conf_mod  # noqa: E402
from vclite.scheduler.framework import session, snapshot  # noqa: E402

Obj = dict[str, Any]
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
CONF_FILE = ROOT / "tests/scenarios/states/conf/gangevict.conf"


def _pod(ns: str, name: str, group: str, cpu: str, node: str | None, priority: str) -> Obj:
    spec: Obj = {"schedulerName": "volcano", "priorityClassName": priority,
                 "containers": [{"name": "c", "image": "busybox",
                                 "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}",
                         "creationTimestamp": "2025-12-31T00:00:00Z",
                         "annotations": {"scheduling.k8s.io/group-name": group}},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def _pg(ns: str, name: str, queue: str, members: int, priority: str, phase: str, stamp: int) -> Obj:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "uid": f"pg-{ns}-{name}",
                         "creationTimestamp": (NOW - dt.timedelta(hours=1, seconds=-stamp)).strftime(
                             "%Y-%m-%dT%H:%M:%SZ")},
            "spec": {"queue": queue, "minMember": members, "priorityClassName": priority},
            "status": {"phase": phase}}


def make_hypernodes(n_nodes: int) -> list[Obj]:
    """Racks of 8 nodes (tier 1) under spines of 4 racks (tier 2)."""
    racks = [[f"n{i:04d}" for i in range(r, min(r + 8, n_nodes))] for r in range(0, n_nodes, 8)]
    out = [{"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": f"rack-{r:03d}"},
            "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": m}}} for m in rack]}}
           for r, rack in enumerate(racks)]
    for s in range(0, len(racks), 4):
        out.append({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                    "metadata": {"name": f"spine-{s // 4:03d}"},
                    "spec": {"tier": 2, "members": [{"type": "HyperNode", "selector": {"exactMatch": {
                        "name": f"rack-{r:03d}"}}} for r in range(s, min(s + 4, len(racks)))]}})
    return out


def make_state(n_nodes: int, n_gangs: int, variant: str, topology: bool = False) -> snapshot.ClusterState:
    """The cluster described in the module docstring (deterministic); `topology`: HyperNodes, and every
    starving gang kept within one tier-2 HyperNode (`networkTopology` hard, highestTierAllowed 2)."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:04d}"},
              "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}} for i in range(n_nodes)]
    low_q, high_q = ("q1", "q1") if variant == "preempt" else ("low", "high")
    half = {"cpu": str(4 * n_nodes), "memory": f"{16 * n_nodes}Gi"}   # (capacity: what each queue deserves)
    queues = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": q},
               "spec": {"weight": 1, "reclaimable": True, **({"deserved": half} if variant == "reclaim" else {})},
               "status": {"state": "Open"}} for q in sorted({low_q, high_q})]
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for n, v in (("high", 100), ("low", 10))]
    podgroups, pods = [], []
    for i in range(n_nodes):
        for g in range(2):
            name = f"run-{i:04d}-{g}"
            podgroups.append(_pg("ns", name, low_q, 2, "low", "Running", i * 2 + g))
            pods += [_pod("ns", f"{name}-{k}", name, "2", f"n{i:04d}", "low") for k in range(2)]
    for j in range(n_gangs):
        name, size = f"starve-{j:03d}", 4 + 2 * (j % 5)
        podgroups.append(_pg("ns", name, high_q, size, "high", "Inqueue", 10_000 + j))
        if topology:
            podgroups[-1]["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 2}
        pods += [_pod("ns", f"{name}-{k}", name, "2", None, "high") for k in range(size)]
    return snapshot.ClusterState(nodes=nodes, queues=queues, podgroups=podgroups, pods=pods,
                                 priority_classes=classes, request_cache={},
                                 hypernodes=make_hypernodes(n_nodes) if topology else [])


def make_conf(variant: str) -> conf_mod.SchedulerConf:
    text = CONF_FILE.read_text().replace('"allocate, backfill, gangreclaim, gangpreempt"', f'"gang{variant}"')
    return conf_mod.parse(text, str(CONF_FILE))


def digest(result: session.SessionResult) -> str:
    """The decisions, hashed: evictions in order and the pipelined PodGroups with their nodes."""
    data = {"evictions": list(result.evictions),
            "pipelined": {k: list(v) for k, v in sorted(result.pipelined.items())}}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def run(n_nodes: int, n_gangs: int, variant: str, repeats: int, topology: bool = False) -> dict[str, Any]:
    conf = make_conf(variant)
    best, result = float("inf"), None
    for _ in range(repeats):
        state = make_state(n_nodes, n_gangs, variant, topology)
        c0 = time.process_time()
        result = session.run_session(state, conf, NOW)
        best = min(best, time.process_time() - c0)
    assert result is not None
    return {"variant": variant + ("+topology" if topology else ""), "cpu_s": round(best, 3),
            "evictions": len(result.evictions), "pipelined": len(result.pipelined), "digest": digest(result)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--gangs", type=int, default=80)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--variants", default="preempt,reclaim")
    ap.add_argument("--topology", action="store_true", help="HyperNodes; the starving gangs within a tier-2 one")
    ap.add_argument("--profile", metavar="VARIANT", help="one session under cProfile: the top functions")
    a = ap.parse_args(argv)
    if a.profile:
        conf, state = make_conf(a.profile), make_state(a.nodes, a.gangs, a.profile, a.topology)
        prof = cProfile.Profile()
        prof.runcall(session.run_session, state, conf, NOW)
        stats = pstats.Stats(prof)
        stats.sort_stats("calls").print_stats(25)
        stats.sort_stats("tottime").print_stats(25)
        return
    print(f"{a.nodes} nodes, {a.gangs} starving gangs; process CPU, best of {a.repeats}")
    for variant in a.variants.split(","):
        print(json.dumps(run(a.nodes, a.gangs, variant, a.repeats, a.topology)))


if __name__ == "__main__":
    main()
