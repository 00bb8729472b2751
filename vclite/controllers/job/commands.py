"""The command contract: how a client (vcctl suspend/resume, kubectl annotate) asks the vcjob
controller to run an action, through the API only.

Volcano uses a bus.volcano.sh `Command` object that the controller deletes and turns into a request
`{event: CommandIssued, action}`. vclite has no Command kind; instead the client sets the annotation

    vclite.volcano.sh/command: <Action>      (e.g. AbortJob, ResumeJob, RestartJob, TerminateJob)

on the vcjob. The controller consumes it exactly once: it removes the annotation (an update of the
job's metadata), records a `CommandIssued` event, then executes the action with event
`CommandIssued` — an explicit action, so no lifecycle policy applies. An unknown value is removed
with a Warning event and nothing else happens.

Pure helpers; the controller does the writing.
"""
from __future__ import annotations

from typing import Any

from vclite.api import batch
from vclite.api import meta

ANNOTATION = "vclite.volcano.sh/command"

# Actions a command may carry: the user-facing ones plus SyncJob (a forced reconcile).
ALLOWED = frozenset(batch.POLICY_ACTIONS | {batch.Action.SYNC_JOB})


def requested(job: dict[str, Any]) -> str | None:
    """The raw command annotation value, or None."""
    value = meta.annotations(job).get(ANNOTATION)
    return None if value is None else str(value)


def parse(value: str) -> batch.Action | None:
    """The Action a command value names, or None when it is not an allowed action."""
    try:
        action = batch.Action(value.strip())
    except ValueError:
        return None
    return action if action in ALLOWED else None


def removal_patch() -> dict[str, Any]:
    """The merge patch that consumes the command."""
    return {"metadata": {"annotations": {ANNOTATION: None}}}


def set_patch(action: batch.Action) -> dict[str, Any]:
    """The merge patch a client sends to issue a command."""
    return {"metadata": {"annotations": {ANNOTATION: str(action)}}}
