"""The cost of a pod event to an Endpoints watch (httpserver/endpointwatch.py): one namespace with
`--services` Services (each selecting its own `--per-service` pods) and the pods' readiness flipped
`--events` times, with one open watch of Endpoints (`kubectl get endpoints -w`).

Runs in-process (the in-process API, no HTTP): the figure is the CPU time (of this process: a loaded
machine's other work is not counted) the watch's handler spends on the pod events, per event, against
the CPU time of the status writes themselves; the best of `--repeat` runs. Prints figures; never
asserts anything.

    python benchmarks/endpointwatch.py [--services 50] [--per-service 10] [--events 500] [--kind Endpoints]
                                       [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.httpserver import absent, backend, endpointwatch
from vclite.lib import clock


def service(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"s{i}", "namespace": "default"},
            "spec": {"selector": {"app": f"s{i}"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def pod(i: int, svc: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default",
                                                            "labels": {"app": f"s{svc}"}},
            "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x", "command": ["true"]}]}}


def ready(p: dict, ok: bool) -> dict:
    cond = {"type": "Ready", "status": "True" if ok else "False"}
    return {**p, "status": {"phase": "Running", "podIP": "127.0.0.1", "conditions": [cond]}}


def once(args: argparse.Namespace) -> tuple[float, float, int]:
    """(CPU seconds in the watch's handler, CPU seconds in all, events the watch buffered) of one run."""
    client = inprocess.new_client(clock.VirtualClock())
    for i in range(args.services):
        client.create(service(i))
    pods = [client.create(pod(i, i % args.services)) for i in range(args.services * args.per_service)]
    pods = [client.update_status(ready(p, False)) for p in pods]
    kind = next(k for k in absent.ALL if k.kind == args.kind)
    feed = endpointwatch.EndpointsFeed(client, backend.Backend.of_client(client).select, kind, "default", None, None)
    spent = [0.0]
    handler = feed._on_event

    def timed(ev):
        began = time.process_time()
        handler(ev)
        spent[0] += time.process_time() - began
    feed._on_event = timed   # (before open: the subscription takes the timed handler)
    feed.open(None)
    began = time.process_time()
    for n in range(args.events):
        i = n % len(pods)
        pods[i] = client.update_status(ready(pods[i], n // len(pods) % 2 == 0))
    return spent[0], time.process_time() - began, len(feed.buffer)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--services", type=int, default=50)
    ap.add_argument("--per-service", type=int, default=10)
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--kind", choices=("Endpoints", "EndpointSlice"), default="Endpoints")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    watch_s, total, sent = min(once(args) for _ in range(args.repeat))
    print(f"{args.services} Services x {args.per_service} pods, {args.events} pod events, one {args.kind} watch: "
          f"{watch_s * 1000:.1f} ms CPU in the watch ({watch_s / args.events * 1e6:.0f} us/event), "
          f"{(total - watch_s) * 1000:.1f} ms in the writes; {sent} events buffered")


if __name__ == "__main__":
    main()
