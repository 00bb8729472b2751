"""The live view's drawing: view.py's rows and states as rich tables, one per JobFlow and one for the
standalone vcjobs, each state in its colour. Imported only when something is drawn (a terminal),
so a run whose output is piped never loads rich.

The cells are made once a frame (`render`); each table is laid out when it is drawn, its columns as wide
as viewcols.widths gives them for the width it is drawn in (a terminal of 80 columns or of 200, a file), its
title line too (FlowTitle: the `next:` flows that fit, the others counted).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from vclite.api import batch, meta
from vclite.cli import flowreport, viewcols
from vclite.cli.view import (Obj, Row, Snapshot, dag_rows, elapsed, failure_reason, first_pending_reason,
                             flow_state, is_suspended, standalone_jobs, task_progress, why_waiting)

PHASE_STYLE = {
    "Succeed": "bold green", "Completed": "green", "Running": "cyan", "Pending": "yellow",
    "Failed": "bold red", "Terminated": "red", "Aborted": "magenta", "Terminating": "magenta",
    "Restarting": "yellow", "Completing": "green", "Aborting": "magenta", "waiting": "dim",
    "Skipped": "dim strike", "probe": "yellow", "suspended": "magenta", "not created": "dim", "retrying": "yellow",
}
RETRY_REASONS = frozenset({"RetryBackoff", "Retrying", "RetriesExhausted", "NotRetried"})   # the message says more
DAG_COLUMNS = ("flow", "depends on", "state", "tasks", "elapsed", "detail")
JOB_COLUMNS = ("job", "phase", "tasks", "elapsed", "detail")


NEXT_SHOWN = 5   # flows named in a JobFlow's title after `next:`, at most (then `+N more`)


class FlowTitle:
    """A JobFlow's title line — `head` (name, phase, counts), the `next:` flows, `tail` (elapsed) — fitted to
    the width it is drawn in: as many next flows as fit (NEXT_SHOWN at most), the others counted (`next: a, b,
    +5 more`), `next: 7 flows` when no name fits, nothing when that does not either."""

    def __init__(self, head: Text, next_flows: list[str], tail: Text):
        self.head, self.next_flows, self.tail = head, next_flows, tail

    def fit(self, width: int) -> Text:
        room = width - self.head.cell_len - self.tail.cell_len
        return Text.assemble(self.head, (next_text(self.next_flows, room), "dim"), self.tail)


def next_text(names: list[str], room: int) -> str:
    """`next: a, b, +5 more  `: the first of `names` that fit in `room` cells (NEXT_SHOWN at most), the others
    counted; `next: 7 flows  ` if no name fits; "" if that does not fit either (or there is no name)."""
    for shown in range(min(len(names), NEXT_SHOWN), -1, -1):
        rest = len(names) - shown
        if shown:
            text = f"next: {', '.join([*names[:shown], *([f'+{rest} more'] if rest else [])])}  "
        else:
            text = f"next: {rest} flow{'' if rest == 1 else 's'}  " if rest else ""
        if cell_len(text) <= room:
            return text
    return ""


class FittedTable:
    """A table whose columns are as wide as viewcols.widths gives them for the width it is drawn in: `rows` of
    cells (str or Text) under `columns`, the columns growing in the order of `grants`; above it `title`, as
    wide as the terminal (a FlowTitle fitted to it)."""

    def __init__(self, title: Text | FlowTitle, columns: tuple[str, ...], rows: list[tuple[Text | str, ...]],
                 grants: tuple[viewcols.Grant, ...]):
        self.title, self.columns, self.rows, self.grants = title, columns, rows, grants
        self.widest = {c: max([cell_len(c), *(_cells(row[i]) for row in rows)]) for i, c in enumerate(columns)}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.title.fit(options.max_width) if isinstance(self.title, FlowTitle) else self.title
        yield self.table(options.max_width)

    def table(self, width: int) -> Table:
        """The rich Table for a terminal `width` cells wide (without the title)."""
        widths = viewcols.widths(width, self.widest, self.grants)
        table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False, padding=(0, viewcols.GAP - 1, 0, 0))
        for col in self.columns:
            table.add_column(col, overflow="fold", width=widths[col])
        for row in self.rows:
            table.add_row(*row)
        return table


def _cells(cell: Text | str) -> int:
    """The widest line of a cell, in terminal cells."""
    text = cell.plain if isinstance(cell, Text) else cell
    return max((cell_len(line) for line in text.split("\n")), default=0)


def counts_text(counts: tuple[tuple[str, int], ...]) -> Text:
    """`9,000 Completed, 800 Running`, each state in its colour."""
    text = Text()
    for i, (state, n) in enumerate(counts):
        text.append(", " if i else "")
        text.append(f"{n:,} {state}", style=PHASE_STYLE.get(state, ""))
    return text


def row_cells(snap: Snapshot, jf: Obj, row: Row, now: dt.datetime) -> tuple[Text, str, str, str]:
    """(state, tasks, elapsed, detail) of a DAG row."""
    if row.counts:
        pending = dict(row.counts).get("Pending")
        return counts_text(row.counts), "", "", first_pending_reason(snap, jf, row) if pending else ""
    cond = ((jf.get("status") or {}).get("conditions") or {}).get(row.key) or {}
    if row.job is None:
        if not row.key:
            return Text(""), "", "", ""
        state = flow_state(cond, None, False)
        return Text(state, style=PHASE_STYLE.get(state, "")), "", "", cond.get("message", "")
    ph, tasks, el, detail = job_cells(snap, row.job, [], now)
    extra = []
    if cond.get("retries"):
        extra.append(f"retry {cond['retries']}")
    if cond.get("reason") in RETRY_REASONS:
        extra.append(cond.get("message", ""))
        extra.append(flowreport.next_attempt(cond, now))
    state = flow_state(cond, row.job, is_suspended(jf))
    if state != ph.plain:
        ph = Text(state, style=PHASE_STYLE.get(state, ""))
    if cond.get("output") and meta.phase(row.job) == batch.JobPhase.COMPLETED:
        extra.append(f"output: {str(cond['output']).strip()[:60]}")
    return ph, tasks, el, "; ".join([x for x in (detail, *extra) if x])


def job_cells(snap: Snapshot, job: Obj | None, targets: list[str], now: dt.datetime) -> tuple[Text, str, str, str]:
    if job is None:
        detail = f"waiting on {', '.join(targets)}" if targets else "waiting"
        return Text("waiting", style=PHASE_STYLE["waiting"]), "", "", detail
    phase = meta.phase(job) or "Pending"
    detail = why_waiting(snap, job) if phase in ("Pending", "", "Running") else ""
    if phase == "Failed":
        detail = failure_reason(snap, job)
    return Text(phase, style=PHASE_STYLE.get(phase, "")), task_progress(job), elapsed(job, now), detail


def render(snap: Snapshot, now: dt.datetime) -> Group:
    """The live view: one table per JobFlow (its DAG in dependency order), one for standalone jobs."""
    parts: list[Any] = []
    for jf in snap.jobflows:
        parts.append(jobflow_table(jf, snap, now))
    jobs = standalone_jobs(snap)
    if jobs:
        rows: list[tuple[Text | str, ...]] = []
        for job in jobs:
            ph, tasks, el, detail = job_cells(snap, job, [], now)
            rows.append((meta.key(job), ph, tasks, el, Text(detail, style="dim")))
        parts.append(FittedTable(Text("vcjobs", style="bold"), JOB_COLUMNS, rows, viewcols.JOB_GRANTS))
    return Group(*parts)


def jobflow_table(jf: Obj, snap: Snapshot, now: dt.datetime) -> FittedTable:
    """One JobFlow: a title (phase, suspended, counts, next flows) and its DAG rows."""
    status = jf.get("status") or {}
    phase = meta.phase(jf) or "Pending"
    done = len(status.get("completedJobs") or [])
    skipped = len(status.get("skippedJobs") or [])
    failed = len(status.get("failedJobs") or []) + len(status.get("terminatedJobs") or [])
    total = done + skipped + sum(len(status.get(k) or []) for k in
                                 ("pendingJobs", "runningJobs", "failedJobs", "terminatedJobs", "unKnowJobs"))
    bits: list[Any] = [("JobFlow ", "bold"), (meta.key(jf), "bold"), "  ", (phase, PHASE_STYLE.get(phase, ""))]
    if is_suspended(jf):
        bits += ["  ", ("suspended", PHASE_STYLE["suspended"])]
    bits.append(f"  {done}/{total} jobs completed" + (f", {failed} failed" if failed else "")
                + (f", {skipped} skipped" if skipped else "") + "  ")
    finished = phase in ("Succeed", "Failed")
    next_flows = [str(n) for n in status.get("nextFlows") or []] if not finished else []
    title = FlowTitle(Text.assemble(*bits), next_flows, Text(elapsed(jf, now) if not finished else "", style="dim"))
    cells: list[tuple[Text | str, ...]] = []
    for row in dag_rows(jf, snap):
        ph, tasks, el, detail = row_cells(snap, jf, row, now)
        # (a loop item's label, `item 0: resnet50`, is cut rather than folded: its value is a preview already)
        label = Text(row.label, style="dim" if row.child else "", overflow="ellipsis" if row.item else "fold",
                     no_wrap=row.item)
        cells.append((label, row.depends, ph, tasks, el, Text(detail, style="dim")))
    return FittedTable(title, DAG_COLUMNS, cells, viewcols.DAG_GRANTS)
