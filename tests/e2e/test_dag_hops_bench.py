"""benchmarks/dag_hops.py: the tool list it takes (the run itself needs the peer benchmark and PyPI, and is
timed, so it is not run here)."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("tools, unknown", [
    ("vclite,makee", "makee"),
    ("bogus,luigi,nope", "bogus, nope"),
])
def test_unknown_tools_are_refused_before_anything_is_set_up(tmp_path, tools, unknown):
    venvs = tmp_path / "venvs"
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dag_hops.py"), "--tools", tools,
                        "--venvs", str(venvs)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert f"--tools: unknown tool(s) {unknown}; known: vclite, make, python, snakemake, luigi, prefect" \
        in p.stderr, p.stderr
    assert not venvs.exists()   # nothing made for a refused list


def test_an_empty_tool_list_is_refused(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dag_hops.py"), "--tools", ",",
                        "--venvs", str(tmp_path / "venvs")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--tools: name at least one of vclite, make, python" in p.stderr, p.stderr


def test_help_names_every_peer():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dag_hops.py"), "--help"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    for tool in ("vclite", "make", "python", "snakemake", "luigi", "prefect"):
        assert tool in out, out
