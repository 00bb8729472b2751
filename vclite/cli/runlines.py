"""The lines `vcctl run` (and `vcctl jobflow get -w`) writes when its output is not a terminal (a CI log, a pipe):
one per phase change of a JobFlow, a vcjob or a bare pod — but a loop's items (or a repeat's iterations) are
counted, one line per loop flow for the changes seen together, so that a sweep of 200 items does not write 600
lines:

    JobFlow default/sweep: flow train: 20 items: 19 Running, 1 Pending

and an item that fails has a line of its own too, naming it as the live view names its row:

    vcjob default/sweep-train-12 (flow train, item 12: 0.013): Failed

A container going into CrashLoopBackOff has a line of its own, once (`crash_loop_notes`).

`change_lines` makes the lines of one batch of changes; `LoopLines` holds a loop's count line back while its
items still change (their vcjobs start over several ticks): it is written once the loop's counts have not
changed for SETTLE seconds, HOLD_MAX seconds after its first change held at the latest, just before a failed
item's line or a line about its JobFlow, and at the end — never twice the same. Every other line is written
at once.

Pure: from the changes, the phases and the last objects `run.Progress` keeps (and the times it is given).
"""
from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator
from typing import Any

from vclite.api import batch, flow, meta
from vclite.cli import view

Obj = dict[str, Any]
# an item reaching one of these phases gets a line of its own (it is what a reader of the log looks for)
ITEM_LINE_PHASES = frozenset({batch.JobPhase.FAILED, batch.JobPhase.TERMINATED, batch.JobPhase.ABORTED})
FLOW_DONE = frozenset({flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED})
SETTLE = 0.5     # seconds a loop's counts stay unchanged before its held count line is written
HOLD_MAX = 2.0   # seconds a loop's count line is held at most (a loop whose items never stop changing)
Loop = tuple[str, str]   # (JobFlow key `ns/name`, loop flow name)


@dataclasses.dataclass(frozen=True)
class _Change:
    """One line of a batch of changes: `text` (a plain line, or a failed item's), or the `loop` whose count
    line goes there (text ""); `jobflow`: the key of the JobFlow a plain line is about."""

    text: str
    loop: Loop | None = None
    jobflow: str = ""


def _changes(changed: list[str], phases: dict[str, str], jobflows: dict[str, Obj], jobs: dict[str, Obj],
             passed: dict[str, list[str]] | None = None) -> Iterator[_Change]:
    """Each change in order: a plain line, or for a loop's item its loop (and a line if it failed). A key may be
    in `changed` once per phase change, where it happened; `passed`: by key, the phases an object reached and left
    again since the last lines (a vcjob's Restarting and Pending before its Running). Each place of a key writes
    the next of its phases, `passed` then its phase of now; its last place writes those left (a key given once:
    every phase it passed, then its phase of now). The JobFlow of a line is named on its key's last line only
    (where its flows' details go)."""
    left = collections.Counter(changed)
    done: dict[str, int] = {}   # of each key: how many of its phases were written
    items: dict[str, tuple[Obj | None, str, str]] = {}   # of each vcjob key: its JobFlow, its loop flow, its item
    for what in changed:
        left[what] -= 1
        if what not in items:
            job = jobs.get(what) if what.startswith("vcjob ") else None
            jf = jobflows.get(meta.labels(job).get(flow.CREATED_BY_JOB_FLOW, "").replace(".", "/", 1)) \
                if job is not None else None
            name, item = view.loop_item(jf, meta.name(job), view.Snapshot([jf], [job], [], [])) \
                if jf is not None and job is not None else ("", "")
            items[what] = (jf, name, item)
        jf, name, item = items[what]
        was, at = (passed or {}).get(what, ()), done.get(what, 0)
        if left[what]:   # (not its last place: the next phase it passed, if any is left)
            now = list(was[at:at + 1])
        else:
            now = [*was[at:], phases.get(what, "")]
        done[what] = at + len(now)
        if item and jf is not None:   # (an item: its loop's count, and a line for each failure)
            yield _Change("", (meta.key(jf), name))
            yield from (_Change(f"{what} (flow {name}, {item}): {phase}", (meta.key(jf), name))
                        for phase in now if phase in ITEM_LINE_PHASES)
            continue
        jobflow = what[len("JobFlow "):] if what.startswith("JobFlow ") and not left[what] else ""
        for i, phase in enumerate(now):
            yield _Change(f"{what}: {phase}", jobflow=jobflow if i == len(now) - 1 else "")


def _ends(change: _Change, phases: dict[str, str]) -> bool:
    """Whether `change` is a JobFlow's line saying it finished: its flows' details come before it (their cause),
    those of a JobFlow that goes on after it (what it is waiting for now)."""
    return bool(change.jobflow) and phases.get(f"JobFlow {change.jobflow}") in FLOW_DONE


def change_lines(changed: list[str], phases: dict[str, str], jobflows: dict[str, Obj], jobs: dict[str, Obj],
                 notes: dict[str, list[str]] | None = None, passed: dict[str, list[str]] | None = None
                 ) -> list[str]:
    """The lines for `changed` (`vcjob ns/name`, `JobFlow ns/name`, `pod ns/name`, in the order they changed):
    `<what>: <phase>`, but the vcjobs of a loop's items counted in one line per loop flow (at the place of its
    first changed item), and each item that failed named. `phases`: every followed object's phase, by the same
    keys; `jobflows`: the last version of each JobFlow by `ns/name`; `jobs`: the last version of each changed
    vcjob by its key in `changed`; `notes`: the detail lines of each JobFlow's flows (flownotes.py) that came with
    these changes, by `ns/name`, written next to the JobFlow's own line (before it when it finished: what its
    flows did, then what it became), or at the end; `passed`: see `_changes`."""
    lines: list[str] = []
    loops: dict[Loop, int] = {}   # the index of each loop's count line
    notes = dict(notes or {})
    for change in _changes(changed, phases, jobflows, jobs, passed):
        if change.loop is not None and not change.text:
            if change.loop not in loops:
                loops[change.loop] = len(lines)
                lines.append("")   # (its count, written once every change is known)
        else:
            before = _ends(change, phases)
            lines += notes.pop(change.jobflow, []) if before else []
            lines.append(change.text)
            lines += notes.pop(change.jobflow, []) if change.jobflow and not before else []
    for (key, name), at in loops.items():
        lines[at] = count_line(jobflows[key], name, phases)
    return lines + [line for more in notes.values() for line in more]


def count_line(jf: Obj, name: str, phases: dict[str, str]) -> str:
    """`JobFlow default/sweep: flow train: 20 items: 19 Running, 1 Pending`."""
    return f"JobFlow {meta.key(jf)}: flow {name}: {loop_counts(jf, name, phases)}"


class LoopLines:
    """The lines of a run's changes as they come (`lines`, called after every burst of work with the time),
    each loop's count line held back while its items still change. Keeps a few facts per loop flow followed
    (when its held changes came, its last line): its memory follows the number of loop flows, not of items."""

    def __init__(self, settle: float = SETTLE, hold_max: float = HOLD_MAX):
        self.settle, self.hold_max = settle, hold_max
        self._held: dict[Loop, tuple[float, float]] = {}   # (first, last) time of its changes not written
        self._written: dict[Loop, str] = {}                  # its last count line written

    def lines(self, changed: list[str], phases: dict[str, str], jobflows: dict[str, Obj], jobs: dict[str, Obj],
              now: float, final: bool = False, notes: dict[str, list[str]] | None = None,
              passed: dict[str, list[str]] | None = None) -> list[str]:
        """As change_lines, but each loop's count line written when due (at `now`, in seconds); `final`: the
        run ends, every held line is written."""
        out: list[str] = []
        notes = dict(notes or {})
        for change in _changes(changed, phases, jobflows, jobs, passed):
            if change.loop is not None:
                first = self._held.get(change.loop, (now, now))[0]
                self._held[change.loop] = (first, now)
                if change.text:   # (a failed item: the counts it changed, then its line, at once)
                    out += self._write(change.loop, phases, jobflows)
                    out.append(change.text)
                continue
            if change.jobflow:   # (its loops' counts before a line about the JobFlow)
                for loop in [loop for loop in self._held if loop[0] == change.jobflow]:
                    out += self._write(loop, phases, jobflows)
            before = _ends(change, phases)
            out += notes.pop(change.jobflow, []) if before else []
            out.append(change.text)
            out += notes.pop(change.jobflow, []) if change.jobflow and not before else []
        out += [line for more in notes.values() for line in more]
        for loop, (first, last) in list(self._held.items()):
            if final or now - last >= self.settle or now - first >= self.hold_max:
                out += self._write(loop, phases, jobflows)
        return out

    def due_in(self, now: float) -> float | None:
        """Seconds from `now` until a held count line is due (None: none is held)."""
        due = [min(last + self.settle, first + self.hold_max) - now for first, last in self._held.values()]
        return max(0.0, min(due)) if due else None

    def _write(self, loop: Loop, phases: dict[str, str], jobflows: dict[str, Obj]) -> list[str]:
        """Loop's count line, unless it says what its last one said (or its JobFlow is gone)."""
        self._held.pop(loop, None)
        jf = jobflows.get(loop[0])
        if jf is None:
            self._written.pop(loop, None)
            return []
        line = count_line(jf, loop[1], phases)
        if self._written.get(loop) == line:
            return []
        self._written[loop] = line
        return [line]


def loop_counts(jf: Obj, name: str, phases: dict[str, str]) -> str:
    """`20 items: 1 Failed, 12 Running, 7 Completed`: the phase of each vcjob of loop flow `name` (in the order
    of the live view's summary rows: trouble first), the items without a vcjob yet `not created`."""
    base = flow.job_name(meta.name(jf), name)
    cond = ((jf.get("status") or {}).get("conditions") or {}).get(base) or {}
    word = "iteration" if cond.get("iterations") is not None else "item"
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
    return f"{count} {word}{'' if count == 1 else 's'}: " + ", ".join(f"{counts[p]} {p}" for p in ranked)


def crash_loop_notes(pod: Obj, announced: set[tuple[str, str]]) -> list[str]:
    """A line for each container of `pod` that went into CrashLoopBackOff for the first time (added to
    `announced`): the run goes on while its restartPolicy restarts it, and the plain lines would otherwise say
    nothing until the run ends (a command this machine lacks, with OnFailure, restarts until --timeout)."""
    notes = []
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    statuses = (pod.get("status") or {}).get("initContainerStatuses") or [], \
        (pod.get("status") or {}).get("containerStatuses") or []
    last = {cs.get("name"): (cs.get("lastState") or {}).get("terminated") or {} for group in statuses for cs in group
            if isinstance(cs, dict)}
    for name in view.crash_looping(pod):
        if (meta.key(pod), name) in announced:
            continue
        announced.add((meta.key(pod), name))
        how = view.last_run(last.get(name) or {})
        notes.append(f"pod {meta.key(pod)}: container {name} is restarted by restartPolicy {policy}, with back-off"
                     + (f" (last run: {how})" if how else ""))
    return notes
