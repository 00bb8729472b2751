"""`vcctl run`'s output as a terminal and a pipe see it: the live DAG view on a terminal (a real
pseudo-terminal here, or rich's TTY_COMPATIBLE=1), one line per phase change when piped."""
from __future__ import annotations

import fcntl
import os
import pathlib
import pty
import re
import signal
import struct
import subprocess
import termios

import pytest

from tests import jobs_yaml
from tests.e2e.conftest import ROOT, VCCTL

pytestmark = pytest.mark.e2e
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LINE = "] vcjob default/diamond-a: Pending"   # a phase-change line (pipes)
TABLE = "depends on"                          # the live view's column (terminals)


def run_on_terminal(args: list[str], workdir: pathlib.Path, columns: int = 120) -> tuple[int, str]:
    """Run vcctl with its stdout on a pseudo-terminal `columns` wide (its window size, as a terminal emulator
    sets it); its exit code and all it drew there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([VCCTL, "run", "--workdir", str(workdir), *args], cwd=ROOT, stdout=follower,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:   # (EIO: the terminal's other end is closed)
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    proc.stderr.read()
    return proc.wait(timeout=120), ANSI.sub("", b"".join(chunks).decode(errors="replace"))


def test_a_terminal_gets_the_live_dag_view(tmp_path):
    code, drawn = run_on_terminal(["examples/diamond.yaml"], tmp_path / "work")
    assert code == 0, drawn
    assert TABLE in drawn and "JobFlow default/diamond  Succeed" in drawn, drawn
    assert LINE not in drawn


@pytest.mark.parametrize("env, live", [
    pytest.param({}, False, id="piped: lines"),
    pytest.param({"TTY_COMPATIBLE": "1"}, True, id="TTY_COMPATIBLE=1: the live view"),
    pytest.param({"FORCE_COLOR": "1"}, True, id="FORCE_COLOR=1: the live view, as rich decides"),
])
def test_a_pipe_gets_lines_unless_rich_is_told_it_is_a_terminal(env, live, tmp_path):
    clean = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")}
    proc = subprocess.run([VCCTL, "run", "--workdir", str(tmp_path / "work"), "examples/diamond.yaml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**clean, **env})
    assert proc.returncode == 0, proc.stderr
    out = ANSI.sub("", proc.stdout)
    assert (TABLE in out, LINE in out) == (live, not live), out


def test_the_live_view_names_each_loop_item(tmp_path):
    """A loop flow's rows show each item's value: withParam's (shard-a …, from `split`'s output) and withItems'."""
    code, drawn = run_on_terminal(["examples/fan-out.yaml"], tmp_path / "work")
    assert code == 0, drawn
    for label in ("item 0: shard-a", "item 2: shard-c", 'item 1: {"code":"de","name":"Ge…'):
        assert label in drawn, drawn


def test_an_80_column_terminal_gets_every_column_within_its_width(tmp_path):
    """At 80 columns no line of the view is wider than the terminal, every column is drawn (the detail
    included) and the items' labels are there, cut with `…` when they must be."""
    code, drawn = run_on_terminal(["examples/fan-out.yaml"], tmp_path / "work", columns=80)
    assert code == 0, drawn
    lines = drawn.replace("\r", "\n").splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines), drawn
    header = next(line for line in lines if line.startswith("flow "))
    assert header.split() == ["flow", "depends", "on", "state", "tasks", "elapsed", "detail"], drawn
    for label in ("item 0: shard-a", "item 2: shard-c", 'item 1: {"cod', "merge"):
        assert label in drawn, drawn


LOOP = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: sweep}
spec:
  flows:
    - name: train
      withItems: [resnet50, vit-b16, broken]
---
""" + jobs_yaml.template("train", ["sh", "-c", "if [ {{item}} = broken ]; then echo 'no such model' >&2; exit 3; fi; "
                                               "sleep 300"])


def test_a_stopped_run_names_the_loop_items_as_the_live_view_does(tmp_path):
    """Ctrl-C while two items of a loop run and one has failed: the report names each item with its value
    (`item 1: vit-b16`), as the live view's rows do, not only by its vcjob's index."""
    path = tmp_path / "sweep.yaml"
    path.write_text(LOOP)
    proc = subprocess.Popen([VCCTL, "run", "--workdir", str(tmp_path / "work"), str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stdout:   # (the progress lines, until both long items run and the broken one failed)
        seen.append(line)
        if line.rstrip().endswith("JobFlow default/sweep: flow train: 3 items: 1 Failed, 2 Running"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, ("".join(seen) + out, err)
    lines = err.splitlines()
    for expected in ("    item 0: resnet50 (vcjob sweep-train-0): vcjob is Running",
                     "    item 1: vit-b16 (vcjob sweep-train-1): vcjob is Running"):
        assert expected in lines, err
    assert any(line.startswith("  vcjob default/sweep-train-2 (flow train, item 2: broken) Failed: ")
               for line in lines), err


# 20 items ending 0.2 s apart, over 4 seconds: each ends in a tick of its own
SWEEP20 = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: sweep}
spec:
  flows:
    - name: train
      withItems: [%s]
---
""" % ", ".join(f'"{1 + i * 0.2:.1f}"' for i in range(20)) + jobs_yaml.template("train", ["sleep", "{{item}}"])


def test_a_pipe_gets_a_few_lines_for_a_loop_of_20_items(tmp_path):
    """Piped: the items' count line is written once their counts settle (or every 2 s at most), not at every
    tick where one of them started or ended: a handful of lines, the last one counting all 20 Completed."""
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP20)
    proc = subprocess.run([VCCTL, "run", "--workdir", str(tmp_path / "work"), str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    counts = [line for line in lines if "] JobFlow default/sweep: flow train: 20 items: " in line]
    assert counts and counts[-1].endswith(": 20 items: 20 Completed"), proc.stdout
    assert len(counts) <= 5 and len(lines) <= 8, proc.stdout
    assert lines[-1].endswith("] JobFlow default/sweep: Succeed"), proc.stdout
