"""The phase changes a follower writing lines has seen and not yet written — `vcctl run` without a terminal
(run.Progress) and `vcctl jobflow get NAME -w` piped (client_live.py) — kept from the watch events themselves, so
that every phase passed has its line, in the order it happened: a vcjob's Pending, Restarting, Pending, Running in
one burst of work reads so, not Pending, Running. Also each JobFlow's last version and its flows' new details
(flownotes.py), which `lines` writes next to its phase lines (runlines.py: a loop's items counted per loop flow).

Pure but for what it remembers: every followed object's last phase (the loops' counts read them), the changes since
the last lines.
"""
from __future__ import annotations

from typing import Any

from vclite.api import flow, kinds, meta
from vclite.cli import flownotes, runlines, view
from vclite.lib import clock

Obj = dict[str, Any]
DELETED = "DELETED"
_FLOW_DONE = frozenset({flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED})


def pod_phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def followed(event_type: str, obj: Obj) -> tuple[str, str]:
    """(the key of a JobFlow, vcjob or pod in the lines: `JobFlow ns/name`, `vcjob ns/name`, `pod ns/name`; its
    phase in a line — "" once deleted)."""
    kind = obj.get("kind")
    is_flow, is_pod = kind == kinds.JOBFLOW.kind, kind == kinds.POD.kind
    what = f"{'JobFlow' if is_flow else 'pod' if is_pod else 'vcjob'} {meta.key(obj)}"
    if event_type == DELETED:
        return what, ""
    return what, view.jobflow_phase(obj) if is_flow else pod_phase(obj) if is_pod else meta.phase(obj)


def listed_order(objects: list[Obj]) -> list[Obj]:
    """The JobFlows and vcjobs a follower listed (`vcctl jobflow get -w` started late), in the order they reached
    their current phase — their lines come first, before what the watches bring: a JobFlow not finished first (it
    was Pending or Running before its vcjobs' current phases), then the vcjobs by the time of their phase
    (`status.state.lastTransitionTime`, to the second), then by creation (a dependent is created after its target
    ended), then in the order their JobFlow's status recorded them (`jobStatusList`: creation order, finer than a
    second), then by resourceVersion; a finished JobFlow last (it ended because its vcjobs did). Sorting by the
    current resourceVersion alone put a vcjob written again after it ended (a label, a status write) after the
    JobFlow's Succeed it caused."""
    recorded = {(meta.namespace(o), str(entry.get("name"))): i for o in objects if o.get("kind") == kinds.JOBFLOW.kind
                for i, entry in enumerate((o.get("status") or {}).get("jobStatusList") or [])
                if isinstance(entry, dict)}

    def key(obj: Obj) -> tuple[int, float, float, int, int]:
        if obj.get("kind") == kinds.JOBFLOW.kind:
            return (2 if meta.phase(obj) in _FLOW_DONE else 0), 0.0, 0.0, 0, _version(obj)
        created = _seconds((obj.get("metadata") or {}).get("creationTimestamp"))
        at = _seconds(((obj.get("status") or {}).get("state") or {}).get("lastTransitionTime")) or created
        return 1, at, created, recorded.get((meta.namespace(obj), meta.name(obj)), -1), _version(obj)
    return sorted(objects, key=key)


def _seconds(stamp: Any) -> float:
    """An RFC 3339 time as seconds since the epoch; 0 when absent or unreadable."""
    try:
        at = clock.parse_time(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return 0.0
    return at.timestamp() if at is not None else 0.0


def _version(obj: Obj) -> int:
    rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(rv) if rv.isdigit() else 0


class PhaseChanges:
    """The lines of what changed, as the watch events of the followed objects come (`observe`, in their order)."""

    def __init__(self) -> None:
        self.phases: dict[str, str] = {}   # every followed object's last phase, by its key (`followed`)
        self._changed: list[str] = []   # the key of each phase change since the last lines, in order
        self._changed_keys: set[str] = set()
        self._passed: dict[str, list[str]] = {}   # phases reached and left since the last lines (runlines._changes)
        self._jobflows: dict[str, Obj] = {}   # the last version of each JobFlow (the lines name its loop items)
        self._changed_jobs: dict[str, Obj] = {}   # the last version of each vcjob in `_changed`
        self._loop_lines = runlines.LoopLines()   # (a loop's count line held while its items still change)
        self._flownotes = flownotes.FlowNotes()   # what each flow's detail said last (retries, failures, probes…)
        self._flow_notes: dict[str, list[str]] = {}   # by JobFlow: its flows' detail lines not yet written

    def observe(self, event_type: str, obj: Obj) -> tuple[str, str]:
        """Take one watch event of a JobFlow, a vcjob or a pod followed; its key and phase (`followed`)."""
        what, phase = followed(event_type, obj)
        if obj.get("kind") == kinds.JOBFLOW.kind:
            if event_type == DELETED:
                self._flownotes.forget(meta.key(obj))
            else:
                self._flow_notes.setdefault(meta.key(obj), []).extend(self._flownotes.lines(obj))
                self._jobflows[meta.key(obj)] = obj
        if phase and self.phases.get(what) != phase:
            if what in self._changed_keys:   # (its phase of before came since the last lines, and goes)
                self._passed.setdefault(what, []).append(self.phases[what])
            self.phases[what] = phase
            self._changed.append(what)   # (each change at its place: a cause's line before its effect's)
            self._changed_keys.add(what)
            if obj.get("kind") == kinds.JOB.kind:
                self._changed_jobs[what] = obj
        return what, phase

    def lines(self, now: float | None = None, final: bool = False) -> list[str]:
        """Lines for the phases that appeared or changed since the last call, in the order they changed
        (runlines: a loop's items counted in one line per loop flow, each failed item named), each JobFlow's flows'
        new details (flownotes: retries, failures, probes, skips …) next to its own line. `now` (the follower's
        monotonic time): a loop's count line is held while its items still change (runlines.LoopLines), until due
        or `final`; None: every line at once. An object that passed through phases since its last line (a vcjob
        Pending, Restarting, Pending, Running in one burst of work) has a line for each, in order, before its line
        of now: a log shows the restart, and every phase a job was in."""
        if now is None:
            lines = runlines.change_lines(self._changed, self.phases, self._jobflows, self._changed_jobs,
                                          self._flow_notes, self._passed)
        else:
            lines = self._loop_lines.lines(self._changed, self.phases, self._jobflows, self._changed_jobs,
                                           now, final, self._flow_notes, self._passed)
        self._passed = {}
        self._changed, self._changed_keys = [], set()
        self._changed_jobs = {}
        self._flow_notes = {}
        return lines

    def due_in(self, now: float) -> float | None:
        """Seconds from `now` until a held count line is due (None: none is held)."""
        return self._loop_lines.due_in(now)
