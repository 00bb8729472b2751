"""The API writes of a flow, recorded once and replayed: what admission, the store, watch delivery and every
component's watch handlers cost, without the syncs, the scheduler or processes — deterministic enough to count.

    python benchmarks/write_replay.py record chain 35 /tmp/w35.pkl   # runs hop_costs.measure, keeps its writes
    python benchmarks/write_replay.py replay /tmp/w35.pkl            # a fresh runtime, components started, no loop

`replay` prints the process CPU time of the writes. Under `valgrind --tool=callgrind` with PYTHONHASHSEED=0,
two recordings (n = 5 and n = 35) give the instructions a job's writes cost as (Ir(35) - Ir(5)) / 30, repeatable
to about 0.3 % (the collector is off during the replay). Never asserts anything.
"""
from __future__ import annotations

import asyncio
import copy
import gc
import pathlib
import pickle
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
for path in (str(ROOT), str(ROOT / "benchmarks")):
    if path not in sys.path:
        sys.path.insert(0, path)

from vclite.apiserver import inprocess  # noqa: E402
from vclite.cli import run as run_mod  # noqa: E402
from vclite.lib import errors  # noqa: E402

WRITES = ("create", "update", "update_status", "patch", "bind", "delete")


def record(shape: str, n: int, out: str) -> None:
    """Run the flow in process and keep each outermost client write (name, args, kwargs), copied as called."""
    import hop_costs
    log: list[tuple[str, tuple, dict]] = []
    depth = [0]

    def wrap(name: str, fn):
        def recorded(self, *args, **kwargs):
            if depth[0] == 0:
                log.append((name, copy.deepcopy(args), copy.deepcopy(kwargs)))
            depth[0] += 1
            try:
                return fn(self, *args, **kwargs)
            finally:
                depth[0] -= 1
        return recorded

    for name in WRITES:
        setattr(inprocess.InProcessClient, name, wrap(name, getattr(inprocess.InProcessClient, name)))
    hop_costs.measure(shape, n)
    pathlib.Path(out).write_bytes(pickle.dumps(log))
    print(f"{len(log)} writes recorded in {out}")


def _without_version(obj: dict) -> dict:
    md = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    return {**obj, "metadata": md}


def replay(path: str) -> None:
    log = pickle.loads(pathlib.Path(path).read_bytes())
    gc.disable()

    async def go(work: str) -> tuple[int, float]:
        rt = run_mod.build_runtime(None, None, work)
        rt.start()
        failed = 0
        t0 = time.process_time()
        for name, args, kwargs in log:
            if name in ("update", "update_status"):   # (a version the replay's store never gave)
                args = (_without_version(args[0]), *args[1:])
            try:
                getattr(rt.client, name)(*args, **kwargs)
            except errors.ApiError:
                failed += 1   # (the node the runtime made itself, for one)
        return failed, time.process_time() - t0

    with tempfile.TemporaryDirectory(prefix="write-replay-") as work:
        failed, spent = asyncio.run(go(work))
    print(f"{len(log)} writes replayed ({failed} refused), {spent * 1000:.1f} ms of CPU")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "record":
        record(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "replay":
        replay(sys.argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
