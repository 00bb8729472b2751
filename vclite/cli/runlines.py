"""The lines `vcctl run` writes when its output is not a terminal (a CI log, a pipe): one per phase change of
a JobFlow, a vcjob or a bare pod — but a loop's items (or a repeat's iterations) are counted, one line per
loop flow for the changes seen together, so that a sweep of 200 items does not write 600 lines:

    JobFlow default/sweep: flow train: 20 items: 19 Running, 1 Pending

and an item that fails has a line of its own too, naming it as the live view names its row:

    vcjob default/sweep-train-12 (flow train, item 12: 0.013): Failed

Pure: from the changes, the phases and the last objects `run.Progress` keeps.
"""
from __future__ import annotations

from typing import Any

from vclite.api import batch, flow, meta
from vclite.cli import view

Obj = dict[str, Any]
# an item reaching one of these phases gets a line of its own (it is what a reader of the log looks for)
ITEM_LINE_PHASES = frozenset({batch.JobPhase.FAILED, batch.JobPhase.TERMINATED, batch.JobPhase.ABORTED})


def change_lines(changed: list[str], phases: dict[str, str], jobflows: dict[str, Obj], jobs: dict[str, Obj]
                 ) -> list[str]:
    """The lines for `changed` (`vcjob ns/name`, `JobFlow ns/name`, `pod ns/name`, in the order they changed):
    `<what>: <phase>`, but the vcjobs of a loop's items counted in one line per loop flow (at the place of its
    first changed item), and each item that failed named. `phases`: every followed object's phase, by the same
    keys; `jobflows`: the last version of each JobFlow by `ns/name`; `jobs`: the last version of each changed
    vcjob by its key in `changed`."""
    lines: list[str] = []
    loops: dict[tuple[str, str], int] = {}   # (JobFlow key, flow) -> the index of its count line
    for what in changed:
        phase = phases.get(what, "")
        job = jobs.get(what) if what.startswith("vcjob ") else None
        jf = jobflows.get(meta.labels(job).get(flow.CREATED_BY_JOB_FLOW, "").replace(".", "/", 1)) \
            if job is not None else None
        name, item = view.loop_item(jf, meta.name(job), view.Snapshot([jf], [job], [], [])) \
            if jf is not None and job is not None else ("", "")
        if not item:
            lines.append(f"{what}: {phase}")
            continue
        if (meta.key(jf), name) not in loops:
            loops[(meta.key(jf), name)] = len(lines)
            lines.append("")   # (its count, written once every change is known)
        if phase in ITEM_LINE_PHASES:
            lines.append(f"{what} (flow {name}, {item}): {phase}")
    for (key, name), at in loops.items():
        lines[at] = f"JobFlow {key}: flow {name}: {loop_counts(jobflows[key], name, phases)}"
    return lines


def loop_counts(jf: Obj, name: str, phases: dict[str, str]) -> str:
    """`20 items: 1 Failed, 12 Running, 7 Completed`: the phase of each vcjob of loop flow `name` (in the order
    of the live view's summary rows: trouble first), the items without a vcjob yet `not created`."""
    base = flow.job_name(meta.name(jf), name)
    cond = ((jf.get("status") or {}).get("conditions") or {}).get(base) or {}
    word = "iterations" if cond.get("iterations") is not None else "items"
    count = int(cond.get("items") or cond.get("iterations") or 0)
    if not count:   # (the JobFlow's status not written yet: its vcjobs made so far)
        prefix = f"vcjob {meta.namespace(jf)}/{base}-"
        count = 1 + max((int(k[len(prefix):]) for k in phases if k.startswith(prefix) and k[len(prefix):].isdigit()),
                        default=-1)
    counts: dict[str, int] = {}
    for index in range(count):
        phase = phases.get(f"vcjob {meta.namespace(jf)}/{base}-{index}")
        if phase:
            counts[phase] = counts.get(phase, 0) + 1
    if sum(counts.values()) < count:
        counts["not created"] = count - sum(counts.values())
    order = view.COUNT_ORDER
    ranked = sorted(counts, key=lambda p: (order.index(p) if p in order else len(order), p))
    return f"{count} {word}: " + ", ".join(f"{counts[p]} {p}" for p in ranked)
