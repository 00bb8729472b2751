"""benchmarks/instructions.py: its usage errors, the missing-valgrind message, and a real count under valgrind
(figures are not checked beyond being positive: they are measurements)."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "benchmarks" / "instructions.py")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=600,
                          env=env or dict(os.environ))


@pytest.mark.parametrize("args, message", [
    (["bogus"], "unknown measure 'bogus': jobs or run"),
    (["--trees", "/nonexistent"], "/nonexistent: not a vclite checkout"),
    (["--small", "5", "--big", "3"], "--big (3) must be more than --small (5)"),
    (["--shapes", "ring"], "--shapes: chain, fan or chain,fan, got 'ring'"),
    (["--big", "x"], "not a whole number: 'x'"),
    (["--small", "0"], "must be at least 1, got 0"),
])
def test_usage_errors_exit_2_naming_the_problem(args, message):
    proc = run(*args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_without_valgrind_it_says_what_to_install(tmp_path):
    proc = run("jobs", env={**os.environ, "PATH": str(tmp_path)})   # (an empty directory: no valgrind on it)
    assert proc.returncode == 2 and "valgrind is not installed (apt install valgrind)" in proc.stderr, proc.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_counts_the_instructions_of_a_chain_job():
    proc = run("jobs", "--shapes", "chain", "--small", "1", "--big", "2")
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"jobs: a chain job \(in process\)\s+([\d.]+)$", proc.stdout, re.M)
    assert found and float(found.group(1)) > 1, proc.stdout   # (millions: a job is tens of millions)
