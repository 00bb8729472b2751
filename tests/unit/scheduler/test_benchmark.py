"""benchmarks/scheduler.py --quick runs and prints its comparison table (figures are not checked)."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_quick_benchmark_prints_the_table():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scheduler.py"), "--quick"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("| case | pods | first session")
    rows = [line for line in lines if line[:4] in ("| a.", "| b.", "| c.", "| d.")]
    assert [r[2] for r in rows] == ["a", "b", "c", "d"]
    assert "kube-scheduler" in out and "Goal:" in out


def test_topology_benchmark_prints_its_table_and_checks_binds(tmp_path):
    """benchmarks/topology.py on a small cluster: the table, and the binds compared with a file it wrote."""
    ref = tmp_path / "binds.json"
    args = [sys.executable, str(ROOT / "benchmarks" / "topology.py"), "--nodes", "16", "--jobs", "20", "--repeats", "1"]
    subprocess.run(args + ["--write", str(ref)], capture_output=True, text=True, timeout=120, check=True)
    out = subprocess.run(args + ["--reference", str(ref)], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    assert [line.split(" | ")[0] for line in out.splitlines()[2:5]] == ["| none", "| plugin", "| hypernodes"]
    assert "identical to" in out


def test_gangevict_benchmark_prints_its_figures():
    """benchmarks/gangevict.py on a small cluster: one JSON line a variant, with evictions and a digest."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gangevict.py"), "--nodes", "20", "--gangs", "8",
                          "--repeats", "1"], capture_output=True, text=True, timeout=120, check=True).stdout
    lines = out.splitlines()
    rows = [json.loads(line) for line in lines[1:]]
    assert [r["variant"] for r in rows] == ["preempt", "reclaim"], out
    assert all(r["evictions"] > 0 and len(r["digest"]) == 16 for r in rows), out
