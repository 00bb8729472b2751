"""What HyperNodes cost a scheduling session: network-topology-aware with and without them.

One cluster (nodes in racks of 8 under spines of 4 racks: tier-1 and tier-2 HyperNodes) and one
workload of single-pod jobs without networkTopology, scheduled by one session of Volcano's default
configuration plus network-topology-aware (its BatchNodeOrder scores every pod: HyperNode
bin-packing faded by tier). Each variant is timed (process CPU time) as the best of `--repeats`
sessions on the same input; "none" is the default configuration alone, "plugin" adds the plugin without HyperNodes (it
then registers no node score), "hypernodes" with them. With `--check`, the binds of the last two
runs are compared with those of a reference run given by `--reference FILE` (JSON written by
`--write FILE`), so a faster structure can be shown to place every pod where the old one did.
Never asserts anything about time.

    python benchmarks/topology.py [--nodes 256] [--jobs 1000] [--repeats 3] [--write F | --reference F]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.scheduler import NOW, make_jobs, make_nodes, make_queues  # noqa: E402
from vclite.scheduler import conf as conf_mod  # noqa: E402
from vclite.scheduler.framework import session, snapshot  # noqa: E402

Obj = dict[str, Any]
RACK, SPINE = 8, 4   # nodes per rack, racks per spine


def make_hypernodes(nodes: list[Obj]) -> list[Obj]:
    names = [n["metadata"]["name"] for n in nodes]
    racks = [names[i:i + RACK] for i in range(0, len(names), RACK)]
    out = []
    for r, members in enumerate(racks):
        out.append({"metadata": {"name": f"rack-{r:04d}"}, "spec": {"tier": 1, "members": [
            {"type": "Node", "selector": {"exactMatch": {"name": m}}} for m in members]}})
    for s in range(0, len(racks), SPINE):
        out.append({"metadata": {"name": f"spine-{s // SPINE:04d}"}, "spec": {"tier": 2, "members": [
            {"type": "HyperNode", "selector": {"exactMatch": {"name": f"rack-{r:04d}"}}}
            for r in range(s, min(s + SPINE, len(racks)))]}})
    return out


def make_conf(topology: bool) -> conf_mod.SchedulerConf:
    second = ["overcommit", "drf", "predicates", "proportion", "nodeorder"]
    if topology:
        second.append("network-topology-aware")
    return conf_mod.parse({"actions": "enqueue, allocate, backfill",
                           "tiers": [{"plugins": [{"name": p} for p in ("priority", "gang", "conformance")]},
                                     {"plugins": [{"name": p} for p in second]}]})


def run(n_nodes: int, n_jobs: int, topology: bool, hypernodes: bool) -> tuple[float, dict[str, str]]:
    nodes = make_nodes(n_nodes)
    queues = make_queues(1)
    podgroups, pods = make_jobs(n_jobs, 1, queues)
    state = snapshot.ClusterState(nodes=nodes, queues=queues, podgroups=podgroups, pods=pods,
                                  hypernodes=make_hypernodes(nodes) if hypernodes else [])
    conf = make_conf(topology)
    t0 = time.process_time()   # CPU time: the machine is shared, wall time says more about the neighbours
    result = session.run_session(state, conf, NOW)
    return time.process_time() - t0, dict(result.binds)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--write", help="write the binds of the HyperNode run to this JSON file")
    ap.add_argument("--reference", help="compare the binds of the HyperNode run with this JSON file")
    args = ap.parse_args(argv)
    rows, binds = [], {}
    for label, topology, hns in (("none", False, False), ("plugin", True, False), ("hypernodes", True, True)):
        best = float("inf")
        for _ in range(args.repeats):
            took, binds[label] = run(args.nodes, args.jobs, topology, hns)
            best = min(best, took)
        rows.append((label, best))
    base = rows[0][1]
    print(f"| variant | session ({args.nodes} nodes, {args.jobs} single-pod jobs) | × default |")
    print("|---|---|---|")
    for label, best in rows:
        print(f"| {label} | {best * 1000:.0f} ms | {best / base:.2f} |")
    if args.write:
        pathlib.Path(args.write).write_text(json.dumps(binds["hypernodes"], sort_keys=True))
    if args.reference:
        same = json.loads(pathlib.Path(args.reference).read_text()) == binds["hypernodes"]
        print(f"binds with HyperNodes {'identical to' if same else 'DIFFER from'} {args.reference}")


if __name__ == "__main__":
    main()
