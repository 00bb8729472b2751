"""benchmarks/jobflow.py's `runview` part drives `vcctl run`'s live view through the CLI's own run
loop; it broke silently when the view was split into view.py and viewdraw.py. Run on a small fan
(figures are not checked, only that the flow finished and frames were drawn)."""
from __future__ import annotations

import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_jobflow", ROOT / "benchmarks" / "jobflow.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_runview_part_draws_a_small_fan(capsys):
    from vclite.cli import viewdraw
    render = viewdraw.render
    _bench_module().bench_runview(10)
    out = capsys.readouterr().out
    assert "start -> 10 -> end" in out, out
    m = re.search(r"^finished in [\d.]+ s; drawing took [\d.]+ s in (\d+) frames", out, re.M)
    assert m and int(m.group(1)) > 0, out
    assert viewdraw.render is render   # (the timing wrapper is taken off again)
