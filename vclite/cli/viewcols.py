"""The widths of the live view's columns for the terminal it is drawn in (viewdraw.py draws with them).

A table is given the terminal's width less the gaps between its columns, and each column grows, in the
order of the table's grants, to a grant's width (never wider than its widest cell, header included). A
column's first grant is its least width, kept however narrow the terminal: the short columns (state,
tasks 8, elapsed) their text, the flow LEAST_FLOW characters, the dependency LEAST_DEPENDS and the detail
LEAST_DETAIL (what a flow waits on, why it was skipped, why it failed: it matters most when something is
wrong). The next grants, while there is room, make the dependency and the tasks a little wider and the
detail FAIR_DETAIL wide, then the loop items' labels one line (up to FLOW_WIDTH), then the detail
GOOD_DETAIL wide, then every column as wide as its widest cell, the detail first.

So 80 columns keep the least widths (`  item 0: resnet50` whole, `  item 1: {"lr":0.…` cut), 100 columns
give a fair detail and labels of 20-odd characters, 120 columns labels up to FLOW_WIDTH on one line and a
detail of about 40, and wider terminals the rest to the detail. A column narrower than its text folds it
over lines — but a loop item's label, cut with `…`: its value is a preview already —, and a table whose
columns all fit is no wider than they need (a file or a pipe gets one line per row). A terminal too narrow
even for the least widths (under about 80 columns) takes the difference from the wide columns, a cell
each in turn, then from the short ones, none under FLOOR.

Pure arithmetic on cell counts: no rich here.
"""
from __future__ import annotations

import dataclasses

FLOW_WIDTH = 36     # a loop item's label (`  item 0: {"lr":0.1,"batch":256,…`) is one line up to this
LEAST_FLOW = 18    # `  item 0: resnet50` whole at 80 columns
LEAST_DEPENDS = 10
LEAST_DETAIL = 18
FAIR_DETAIL = 28
GOOD_DETAIL = 40
FLOOR = 6           # no column narrower, however narrow the terminal
GAP = 2             # cells between two columns
UNBOUNDED = 1 << 30


@dataclasses.dataclass(frozen=True)
class Grant:
    """Column `column` grows to `width` cells (at most its widest cell) while there is room."""

    column: str
    width: int


# the DAG of a JobFlow: flow, depends on, state, tasks, elapsed, detail
DAG_GRANTS = (
    Grant("elapsed", 7), Grant("state", 11), Grant("tasks", 8),
    Grant("flow", LEAST_FLOW), Grant("depends on", LEAST_DEPENDS), Grant("detail", LEAST_DETAIL),
    Grant("depends on", 14), Grant("tasks", 10), Grant("detail", FAIR_DETAIL),
    Grant("flow", FLOW_WIDTH), Grant("detail", GOOD_DETAIL),
    Grant("depends on", 30), Grant("tasks", 24),
    Grant("detail", UNBOUNDED), Grant("depends on", UNBOUNDED), Grant("flow", UNBOUNDED),
    Grant("tasks", UNBOUNDED), Grant("state", UNBOUNDED), Grant("elapsed", UNBOUNDED),
)
# the standalone vcjobs: job, phase, tasks, elapsed, detail
JOB_GRANTS = (
    Grant("elapsed", 7), Grant("phase", 11), Grant("tasks", 8), Grant("job", 20), Grant("detail", LEAST_DETAIL),
    Grant("job", 40), Grant("detail", GOOD_DETAIL), Grant("tasks", 24),
    Grant("detail", UNBOUNDED), Grant("job", UNBOUNDED), Grant("tasks", UNBOUNDED),
    Grant("phase", UNBOUNDED), Grant("elapsed", UNBOUNDED),
)
# who gives up width when the least widths do not fit: the first group, a cell each in turn, then the next
SHRINK_ORDER = (("flow", "job", "depends on", "detail", "tasks"), ("state", "phase", "elapsed"))


def widths(total: int, widest: dict[str, int], grants: tuple[Grant, ...]) -> dict[str, int]:
    """Each column's width in a terminal `total` cells wide; `widest`: its widest cell (its header included),
    by column name, in the order drawn."""
    room = total - GAP * (len(widest) - 1)
    out: dict[str, int] = {}
    for grant in grants:   # (a column's first grant is its least width)
        if grant.column in widest and grant.column not in out:
            out[grant.column] = min(grant.width, widest[grant.column])
    for name, cells in widest.items():   # (a column no grant names: as wide as its text)
        out.setdefault(name, cells)
    over = sum(out.values()) - room
    for group in SHRINK_ORDER:   # (a cell at a time from each column of a group in turn)
        while over > 0:
            names = [n for n in group if out.get(n, 0) > FLOOR]
            if not names:
                break
            for name in names[:over]:
                out[name] -= 1
            over -= len(names[:over])
    left = room - sum(out.values())
    for grant in grants:
        if left <= 0:
            break
        if grant.column in out:
            grow = max(0, min(grant.width, widest[grant.column]) - out[grant.column])
            grow = min(grow, left)
            out[grant.column] += grow
            left -= grow
    return out
