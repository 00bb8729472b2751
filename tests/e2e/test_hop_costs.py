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


def test_path_splits_each_hop_at_the_spawn_and_names_what_ran_before_it():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "hop_costs.py"), "--chain", "12", "--path"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    head = re.search(r"critical path of a chain of 12 \((\d+) hops\): exit to next spawn ([\d.]+) ms, spawn to its "
                     r"exit ([\d.]+) ms \(means\)", out)
    assert head and int(head.group(1)) >= 1 and float(head.group(2)) > 0 and float(head.group(3)) > 0, out
    rows = {m.group(1): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^  (\S+)\s+([\d.]+)\s+([\d.]+)$", out, re.M)}
    # a hop's path: the vcjob controller completes a job and starts the next, the JobFlow controller creates it,
    # the scheduler enqueues and binds it, the executor starts it
    for name in ("job-controller", "jobflow-controller", "scheduler", "executor"):
        assert rows[name][0] > 0, out
    assert sum(rows["event-recorder"]) > 0, out   # (Events: in the background lane, mostly while processes run)
    assert re.search(r"^  \(event loop, waiting\)\s+[\d.]+$", out, re.M), out
