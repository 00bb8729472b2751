"""benchmarks/write_replay.py records a small chain's API writes and replays them on a fresh runtime (figures are
not checked, only that the writes were kept and replayed, the one the runtime makes itself refused)."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "benchmarks" / "write_replay.py")


def test_a_chain_s_writes_are_recorded_and_replayed(tmp_path):
    kept = tmp_path / "writes.pkl"
    out = subprocess.run([sys.executable, SCRIPT, "record", "chain", "2", str(kept)], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    recorded = int(re.search(r"^(\d+) writes recorded", out, re.M).group(1))
    assert recorded > 2 * 9, out   # (each job: its vcjob, PodGroup, pod, Events, their status writes)
    out = subprocess.run([sys.executable, SCRIPT, "replay", str(kept)], capture_output=True, text=True, timeout=300,
                         check=True).stdout
    assert re.search(rf"^{recorded} writes replayed \(1 refused\), [\d.]+ ms of CPU$", out, re.M), out
