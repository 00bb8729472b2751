"""sla: a job that has waited longer than its service-level waiting time goes first and is let in
(plugins/sla/sla.go).

Waiting time: the PodGroup's annotation `volcano.sh/sla-waiting-time`, else `sla-waiting-time` (a
vcjob's annotations are its PodGroup's), else the plugin's argument `sla-waiting-time`; a Go
duration (`1h2m3s`). An annotation that does not parse or is not positive is ignored (upstream logs
it); the argument is checked at load (upstream logs a bad one and goes on without it). A job
without one has no service level.
- JobOrder: jobs with a waiting time before those without; among them, the earlier deadline
  (PodGroup creation + waiting time) first;
- JobEnqueueable and JobPipelined: Permit once the deadline has passed (the job is let in, and its
  allocations are kept even before it is ready, so the cluster reserves room for it), else Abstain.
Sessions run on events here, not every second: a job whose deadline is still ahead asks the session
to run again at that moment (`Session.recheck_by`), so a waiting job is let in on time.

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import TYPE_CHECKING

from vclite.api import meta
from vclite.lib import clock
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

ARGUMENT = "sla-waiting-time"
ANNOTATIONS = ("volcano.sh/sla-waiting-time", "sla-waiting-time")   # v1beta1.JobWaitingTime first


def waiting_time(text: object) -> _dt.timedelta | None:
    """A positive Go duration, or None."""
    try:
        seconds = clock.parse_duration(text) if isinstance(text, str) else 0.0
    except ValueError:
        return None
    return _dt.timedelta(seconds=seconds) if seconds > 0 else None


@dataclasses.dataclass(frozen=True)
class Arguments:
    waiting: str = plugin.arg(ARGUMENT, "")

    def __post_init__(self) -> None:
        if self.waiting != "" and waiting_time(self.waiting) is None:
            raise ValueError(f'plugin "sla": argument {ARGUMENT!r}: expected a positive Go duration such as '
                             f'"1h30m" or "90s", got {self.waiting!r}')


class Sla:
    name = "sla"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments
        self.default = waiting_time(arguments.waiting)

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self._deadlines: dict[str, _dt.datetime | None] = {}
        reg.add(hooks.Point.JOB_ORDER, self.job_order)
        reg.add(hooks.Point.JOB_ENQUEUEABLE, self.permit)
        reg.add(hooks.Point.JOB_PIPELINED, self.permit)

    def deadline(self, job: "jobs_mod.JobInfo") -> _dt.datetime | None:
        if job.uid not in self._deadlines:
            notes = meta.annotations(job.podgroup) if isinstance(job.podgroup, dict) else {}
            wait = None
            for key in ANNOTATIONS:
                if key in notes:
                    wait = waiting_time(notes[key])
                    if wait is not None:
                        break
            wait = wait or self.default
            self._deadlines[job.uid] = job.created + wait if wait is not None else None
        return self._deadlines[job.uid]

    def job_order(self, l: "jobs_mod.JobInfo", r: "jobs_mod.JobInfo") -> int:
        ld, rd = self.deadline(l), self.deadline(r)
        if ld is None:
            return 0 if rd is None else 1
        if rd is None:
            return -1
        return -1 if ld < rd else 1 if ld > rd else 0

    def permit(self, job: "jobs_mod.JobInfo") -> hooks.Vote:
        due = self.deadline(job)
        if due is None:
            return hooks.Vote.ABSTAIN
        if self.ssn.now < due:
            self.ssn.recheck_by(due)
            return hooks.Vote.ABSTAIN
        return hooks.Vote.PERMIT

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
