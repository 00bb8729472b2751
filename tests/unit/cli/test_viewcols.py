"""The live view's column widths follow the terminal's width (viewcols.py): at 80, 100, 120 and 160 columns
every column keeps at least its least width, every cell's text is drawn whole (folded over lines; a loop
item's label cut with `…` only when it must), and no line is wider than the terminal."""
from __future__ import annotations

import datetime as dt

import pytest
from rich.console import Console
from rich.text import Text

from vclite.cli import view, viewcols, viewdraw

NOW = dt.datetime(2026, 1, 1, 0, 1, tzinfo=dt.timezone.utc)
WIDEST = {"flow": 33, "depends on": 36, "state": 9, "tasks": 8, "elapsed": 7, "detail": 104}


@pytest.mark.parametrize("total, expected", [
    pytest.param(60, {"flow": 11, "depends on": 6, "state": 9, "tasks": 6, "elapsed": 7, "detail": 11},
                 id="60: under the least widths, the wide columns give a cell each in turn"),
    pytest.param(80, {"flow": 18, "depends on": 10, "state": 9, "tasks": 8, "elapsed": 7, "detail": 18},
                 id="80: the least widths"),
    pytest.param(100, {"flow": 24, "depends on": 14, "state": 9, "tasks": 8, "elapsed": 7, "detail": 28},
                 id="100: a fair detail first, then the labels"),
    pytest.param(120, {"flow": 33, "depends on": 14, "state": 9, "tasks": 8, "elapsed": 7, "detail": 39},
                 id="120: the labels on one line"),
    pytest.param(160, {"flow": 33, "depends on": 30, "state": 9, "tasks": 8, "elapsed": 7, "detail": 63},
                 id="160: the rest to the detail"),
    pytest.param(1000, WIDEST, id="a file: every column as wide as its text, no wider"),
])
def test_widths_for_a_terminal(total, expected):
    got = viewcols.widths(total, WIDEST, viewcols.DAG_GRANTS)
    assert got == expected
    assert sum(got.values()) + viewcols.GAP * (len(got) - 1) <= total


def test_a_column_with_little_text_is_no_wider_than_it():
    got = viewcols.widths(120, {"flow": 4, "depends on": 10, "state": 9, "tasks": 5, "elapsed": 7, "detail": 6},
                          viewcols.DAG_GRANTS)
    assert got == {"flow": 4, "depends on": 10, "state": 9, "tasks": 5, "elapsed": 7, "detail": 6}


def _job(name, phase, item=None):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z",
                         "labels": {"volcano.sh/createdByJobFlow": "default.jf"},
                         "annotations": {"flow.volcano.sh/item": item} if item else {}},
            "spec": {"tasks": [{"name": "main", "replicas": 1}]}, "status": {"state": {"phase": phase}}}


UNSCHEDULABLE = ("1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; "
                 "Pending: 1 Unschedulable")
WAITS = "waiting for jf-train to be Completed (4 items: 2 Running, 1 Failed, 1 Pending)"


def _flow():
    """A JobFlow an ML engineer runs: a long flow name, a loop over hyper-parameters, a waiting flow."""
    items = [{"lr": 0.01 * i, "batch": 256} for i in range(4)]
    flows = [{"name": "prepare-dataset"},
             {"name": "train", "dependsOn": {"targets": ["prepare-dataset"]}, "withItems": items},
             {"name": "evaluate-the-best-checkpoint", "dependsOn": {"targets": ["train"]}}]
    conds = {"jf-train": {"phase": "Running", "reason": "FanOut", "items": 4},
             "jf-evaluate-the-best-checkpoint": {"phase": "Pending", "reason": "WaitingForDependencies",
                                                 "message": WAITS}}
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "jf", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"flows": flows}, "status": {"conditions": conds, "state": {"phase": "Running"}}}
    jobs = [_job("jf-prepare-dataset", "Completed"), _job("jf-train-0", "Running"), _job("jf-train-1", "Running"),
            _job("jf-train-2", "Failed"), _job("jf-train-3", "Pending")]
    pg = {"kind": "PodGroup", "metadata": {"name": "pg3", "namespace": "default", "ownerReferences": [
        {"controller": True, "name": "jf-train-3", "kind": "Job"}]},
          "status": {"conditions": [{"type": "Unschedulable", "status": "True", "message": UNSCHEDULABLE}]}}
    return jf, view.Snapshot([jf], jobs, [pg], [])


def _columns(drawn: str, headers: tuple[str, ...]) -> tuple[list[int], dict[str, str]]:
    """Each column's drawn width (from where the headers start) and its text, lines joined without spaces."""
    lines = drawn.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(headers[0] + " ") and headers[1] in line)
    starts = [lines[at].index(h) for h in headers]
    widths = [b - a - viewcols.GAP for a, b in zip(starts, starts[1:])]
    body = lines[at + 2:]
    text = {h: "".join("".join(line[a:b].split()) for line in body)
            for h, a, b in zip(headers, starts, [*starts[1:], None])}
    return widths, text


LEAST = {"flow": viewcols.LEAST_FLOW, "depends on": viewcols.LEAST_DEPENDS, "state": len("Completed"),
         "tasks": len("main 0/1"), "elapsed": len("elapsed")}


@pytest.mark.parametrize("width, labels_whole", [(80, False), (100, False), (120, True), (160, True)])
def test_every_column_keeps_its_least_width_and_every_text_is_drawn(width, labels_whole):
    jf, snap = _flow()
    console = Console(width=width, record=True, highlight=False, color_system=None)
    table = viewdraw.jobflow_table(jf, snap, NOW)
    console.print(table)
    drawn = console.export_text()
    assert all(len(line.rstrip()) <= width for line in drawn.splitlines()), drawn
    widths, text = _columns(drawn, viewdraw.DAG_COLUMNS)
    for name, least in LEAST.items():
        assert widths[viewdraw.DAG_COLUMNS.index(name)] >= least, (name, drawn)
    detail_width = max(len(line[drawn.splitlines()[1].index("detail"):].rstrip()) for line in drawn.splitlines()[3:])
    assert detail_width >= viewcols.LEAST_DETAIL, drawn

    def squeezed(cells):
        return "".join("".join(str(c).split()) for c in cells)
    rows = view.dag_rows(jf, snap)
    flow_width = widths[0]
    # (a loop item's label is cut with `…` when it must, a flow's name folds: it is never cut)
    labels = [r.label[:flow_width - 1] + "…" if r.item and len(r.label) > flow_width else r.label for r in rows]
    assert all(len(r.label) <= flow_width for r in rows if r.item) == labels_whole
    cells = [viewdraw.row_cells(snap, jf, r, NOW) for r in rows]
    assert text["flow"] == squeezed(labels), drawn
    assert text["depends on"] == squeezed(r.depends for r in rows), drawn
    assert text["state"] == squeezed(c[0].plain for c in cells), drawn
    assert text["detail"] == squeezed(c[3] for c in cells), drawn
    assert UNSCHEDULABLE.replace(" ", "") in text["detail"] and WAITS.replace(" ", "") in text["detail"]


def test_a_fitted_table_is_as_wide_as_its_text_in_a_file():
    table = viewdraw.FittedTable(Text("t"), ("a", "b"), [("x" * 50, Text("y" * 300))], viewcols.JOB_GRANTS)
    console = Console(width=1000, record=True, color_system=None)
    console.print(table)
    assert ("x" * 50 + "  " + "y" * 300) in console.export_text()


def test_at_80_columns_a_loops_dependency_takes_two_lines_at_most():
    """`split; for each in {{outputs.split}}` took 3–4 lines of the narrow column; `split → each item` 2."""
    flows = [{"name": "split"}, {"name": "process", "dependsOn": {"targets": ["split"]},
                                 "withParam": "{{outputs.split}}"},
             {"name": "languages", "withItems": [{"code": "en"}, {"code": "de"}]}]
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "jf", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"flows": flows}, "status": {"state": {"phase": "Running"}, "conditions": {
              "jf-split": {"phase": "Pending", "reason": "JobTemplateNotFound", "message": UNSCHEDULABLE}}}}
    console = Console(width=80, record=True, highlight=False, color_system=None)
    console.print(viewdraw.jobflow_table(jf, view.Snapshot([jf], [], [], []), NOW))
    lines = console.export_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("flow "))
    start, end = lines[at].index("depends on"), lines[at].index("state")
    cells = [line[start:end].strip() for line in lines[at + 2:]]
    labels = [line[:start].strip() for line in lines[at + 2:]]
    process, languages = labels.index("process"), labels.index("languages")
    for cell, text in ((cells[process:languages], "split → each item"), (cells[languages:], "each of 2 items")):
        assert len(cell) <= 2 and " ".join(cell) == text, console.export_text()


NEXT = ["evaluate-resnet50", "evaluate-vit-b16", "export-onnx", "publish-report", "notify-team", "cleanup",
        "archive"]


def _titled(name, next_flows):
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"flows": [{"name": "a"}]},
          "status": {"state": {"phase": "Running"}, "nextFlows": next_flows, "completedJobs": ["x"] * 2,
                     "pendingJobs": ["y"] * 5}}
    return jf, view.Snapshot([jf], [], [], [])


@pytest.mark.parametrize("name, width, next_part", [
    pytest.param("sweep", 80, "next: 7 flows", id="80-no-name-fits-a-count"),
    pytest.param("sweep", 120, "next: evaluate-resnet50, evaluate-vit-b16, +5 more", id="120-two-names-fit"),
    pytest.param("hyperparameter-sweep-over-every-model", 120, "next: 7 flows", id="120-a-long-name-a-count"),
    pytest.param("sweep", 1000, "next: evaluate-resnet50, evaluate-vit-b16, export-onnx, publish-report, "
                 "notify-team, +2 more", id="a-file-five-names-at-most"),
])
def test_a_jobflows_title_names_the_next_flows_that_fit(name, width, next_part):
    """The title line (name, phase, counts, `next:`, elapsed) stays on one line, as wide as the terminal (not
    only the table): the next flows that do not fit are counted."""
    jf, snap = _titled(name, NEXT)
    console = Console(width=width, record=True, highlight=False, color_system=None)
    console.print(viewdraw.jobflow_table(jf, snap, NOW))
    drawn = console.export_text().splitlines()
    assert drawn[0].rstrip() == f"JobFlow default/{name}  Running  2/7 jobs completed  {next_part}  1m00s", drawn
    assert drawn[1].startswith("flow "), drawn


def test_a_title_too_long_for_the_terminal_drops_the_next_flows():
    """80 columns and a long name: the name, phase and counts fold over two lines, the next flows left out."""
    jf, snap = _titled("hyperparameter-sweep-over-every-model", NEXT)
    console = Console(width=80, record=True, highlight=False, color_system=None)
    console.print(viewdraw.jobflow_table(jf, snap, NOW))
    drawn = console.export_text()
    assert "next:" not in drawn and "jobs completed 1m00s" in " ".join(drawn.split()), drawn
    assert all(len(line.rstrip()) <= 80 for line in drawn.splitlines()), drawn


@pytest.mark.parametrize("names, room, text", [
    pytest.param(["a", "b"], 80, "next: a, b  ", id="all-fit"),
    pytest.param(["abc", "def", "ghi"], 20, "next: abc, +2 more  ", id="one-and-a-count"),
    pytest.param(["abc", "def", "ghi"], 19, "next: 3 flows  ", id="only-a-count"),
    pytest.param(["abc", "def", "ghi"], 14, "", id="not-even-a-count"),
    pytest.param(["abc"], 10, "", id="nothing-fits"),
    pytest.param([], 80, "", id="none"),
    pytest.param([f"f{i}" for i in range(10_000)], 200, "next: f0, f1, f2, f3, f4, +9995 more  ",
                 id="a-big-flow-five-at-most"),
])
def test_next_text(names, room, text):
    assert viewdraw.next_text(names, room) == text


def test_a_loops_row_says_the_message_jobflow_describe_prints():
    """The loop flow's row: its state and, in the detail, the controller's message (`20 items: 1 Failed, 19 in
    progress`), the words `vcctl jobflow describe` prints under status.conditions; its items named by value."""
    message = "20 items: 1 Failed, 19 in progress"
    flows = [{"name": "train", "withItems": [f"m{i}" for i in range(20)]}]
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "jf", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"flows": flows}, "status": {"state": {"phase": "Running"}, "conditions": {
              "jf-train": {"phase": "Running", "reason": "FanOut", "message": message, "items": 20}}}}
    snap = view.Snapshot([jf], [_job("jf-train-1", "Failed")], [], [])
    rows = view.dag_rows(jf, snap)
    state, _, _, detail = viewdraw.row_cells(snap, jf, rows[0], NOW)
    assert (rows[0].label, state.plain, detail) == ("train", "Running", message)
    assert rows[2].label == "  item 1: m1"
