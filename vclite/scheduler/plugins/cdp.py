"""cdp: cooldown protection — a pod that started running recently is not evicted (plugins/cdp/cdp.go).

A pod with the label, else the annotation, `volcano.sh/cooldown-time` (a Go duration, e.g. `600s`)
is no victim of preempt or reclaim while it is Running and its PodScheduled=True condition is
younger than that time; a value that does not parse leaves the pod unprotected (upstream logs it).
For elastic jobs whose pods are preempted and restarted over and over (volcano-sh/volcano#2075).
Sessions run on events here: a protection that ends while a preemptor waits asks for a session
then (`Session.recheck_by`), as Volcano's periodic session would notice.

Must not: keep state between sessions.
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

from vclite.api import meta
from vclite.lib import clock
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

COOLDOWN = "volcano.sh/cooldown-time"


def cooldown(pod: dict) -> _dt.timedelta | None:
    """The pod's cooldown time (label first, then annotation), or None."""
    value = meta.labels(pod).get(COOLDOWN)
    if value is None:
        value = meta.annotations(pod).get(COOLDOWN)
    if value is None:
        return None
    try:
        return _dt.timedelta(seconds=clock.parse_duration(value))
    except ValueError:
        return None


def protected_until(pod: dict) -> _dt.datetime | None:
    """When a Running pod's cooldown protection ends (None: not protected at all)."""
    wait = cooldown(pod)
    status = pod.get("status") or {}
    if wait is None or status.get("phase") != "Running":
        return None
    for c in status.get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            since = clock.parse_time(c.get("lastTransitionTime"))
            return since + wait if since is not None else None
    return None


class Cdp:
    name = "cdp"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        reg.add(hooks.Point.PREEMPTABLE, self.victims)
        reg.add(hooks.Point.RECLAIMABLE, self.victims)

    def victims(self, evictor: "tasks_mod.TaskInfo",
                candidates: "list[tasks_mod.TaskInfo]") -> "list[tasks_mod.TaskInfo]":
        out = []
        for task in candidates:
            until = protected_until(task.pod)
            if until is not None and until > self.ssn.now:
                self.ssn.recheck_by(until)
                continue
            out.append(task)
        return out

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
