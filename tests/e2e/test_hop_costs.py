"""benchmarks/hop_costs.py runs small flows through the real runtime and accounts every component
(figures are not checked, only that each component's work was seen and the flows finished)."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMPONENTS = ("scheduler", "job-controller", "jobflow-controller", "executor", "jobtemplate-controller",
              "event-recorder")


def test_hop_costs_accounts_every_component():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "hop_costs.py"), "--chain", "3", "--fan", "3",
                          "--runs", "1"], capture_output=True, text=True, timeout=300, check=True).stdout
    assert "chain of 3: 3 jobs" in out and "fan 1 + 3 + 1: 5 jobs" in out, out
    for section in out.split("\n\n")[1:]:
        rows = {m.group(1): float(m.group(2)) for m in re.finditer(r"^  (\S+)\s+([\d.]+)\s+[\d.]+\s+\d+$", section,
                                                                   re.M)}
        assert set(COMPONENTS) <= set(rows), section   # (others, e.g. the queue controller, sync at start-up)
        assert all(rows[name] > 0 for name in COMPONENTS), section
    assert re.search(r"per hop \(chain − one job\) / 2: -?[\d.]+ ms", out), out
