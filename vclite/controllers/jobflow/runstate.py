"""The run state of one JobFlow as the engine keeps it: instances (one vcjob name each), flows, and
the actions a settle asks of the controller; the limits that shape its status. Plain data and a few
pure helpers; the rules that change it are in engine.py, the conditions it shows in conditions.py.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
from typing import Any

from vclite.api import batch, flow, flowexpr, meta
from vclite.controllers.jobflow import plan as plan_mod
from vclite.controllers.jobflow import readiness
from vclite.controllers.jobflow import status as st

Obj = dict[str, Any]
JP, O = batch.JobPhase, flowexpr.Outcome
NO_FACTS: frozenset[str] = frozenset()

MISSING = object()


LIST_LIMIT = 10      # names spelled out in a condition message


COMPACT_AT = 2000    # instances from which a Completed vcjob's status entries are compact
# a big flow's Running vcjobs whose entries keep their detail at one time; the others' are as small as a Pending
# vcjob's (a wide fan with thousands running at once on a cluster stays under etcd's limit)
DETAILED_RUNNING = 100


NEXT_LIMIT = 20      # names in status.nextFlows


SUSPEND_ANNOTATION = flow.SUSPEND_ANNOTATION


class IState(enum.StrEnum):
    """What an instance (one vcjob name of a flow) is doing."""

    ABSENT = "Absent"          # no vcjob: to be created (or waiting for a note to clear)
    ACTIVE = "Active"          # a vcjob that has not finished (Pending … Completing, Aborted, Restarting)
    RETRY_WAIT = "RetryWait"   # failed; re-created after the back-off
    REPLACING = "Replacing"    # the failed vcjob is being deleted, to be created again
    COMPLETED = "Completed"
    FAILED = "Failed"
    TERMINATED = "Terminated"


FINAL_I = frozenset({IState.COMPLETED, IState.FAILED, IState.TERMINATED})


RUNNING_I = frozenset({IState.ACTIVE, IState.REPLACING})


FAILED_I = frozenset({IState.FAILED, IState.TERMINATED})   # its vcjob failed for good
# its vcjob failed, for good or in an attempt waiting for its retry: why is told (read from its pods)
TOLD_I = FAILED_I | {IState.RETRY_WAIT}


OUTCOME_OF = {IState.COMPLETED: O.COMPLETED, IState.FAILED: O.FAILED, IState.TERMINATED: O.TERMINATED}


RETRIED_NOTES = frozenset({st.Reason.TEMPLATE_NOT_FOUND, st.Reason.JOB_EXISTS,   # tried again every sync
                           st.Reason.CREATE_REFUSED})


@dataclasses.dataclass(eq=False)

class Inst:
    name: str
    flow: str
    index: int = -1            # item index or iteration; -1: the flow's only vcjob
    item: Any = MISSING
    job: Obj | None = None
    state: IState = IState.ABSENT
    retries: int = 0
    first_created: str = ""    # a retried instance: its first attempt's creationTimestamp
    retry_of: str = ""         # uid of the failed vcjob being replaced
    retry_at: dt.datetime | None = None
    output: str | None = None
    why: str | None = None     # why its failed vcjob failed (podfailure.job_failure), once read; "": nothing says
    note: st.Note | None = None
    seen_uid: str = ""         # the last vcjob (uid) observed under this name
    gone: bool = False         # `job` finished, then was deleted (its TTL, a user): its outcome stands
    refused: str = ""          # why a due retry was not made after all (maxDuration passed while it waited)


@dataclasses.dataclass(eq=False)

class FlowRT:
    d: plan_mod.FlowDef
    started: bool = False
    insts: list[Inst] = dataclasses.field(default_factory=list)
    final: str | None = None                 # the flow's outcome once it has finished
    facts: frozenset[str] = NO_FACTS
    reason: str = ""                         # why it finished without (or before) its vcjobs
    message: str = ""
    verdict: readiness.Verdict | None = None
    counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # IState -> n
    pending: int = 0                         # simple dependency: targets not met yet
    dead: int = 0                            # simple dependency: targets that can never be met
    until_done: int = -1                     # repeat: the last iteration whose `until` was evaluated
    items: list[Any] | None = None           # fan-out: the items, once known


@dataclasses.dataclass

class Actions:
    create: list[Inst] = dataclasses.field(default_factory=list)
    delete: list[tuple[str, str]] = dataclasses.field(default_factory=list)   # (vcjob name, uid)
    wake_at: dt.datetime | None = None
    probing: bool = False                    # an http/tcp probe is still undecided: check again soon


def pending(reason: str, message: str) -> Obj:
    return {"phase": str(JP.PENDING), "reason": str(reason), "message": message}


def suspended(jobflow: Obj) -> bool:
    return str(meta.annotations(jobflow).get(SUSPEND_ANNOTATION, "")).lower() == "true"


def epoch() -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
