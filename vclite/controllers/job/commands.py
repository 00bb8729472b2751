"""The command contract: how a client (vcctl suspend/resume, kubectl) asks the vcjob controller to
run an action on a job, through the API only, exactly once.

Two ways, both consumed by the controller before it acts:
- Volcano's: a bus.volcano.sh/v1alpha1 `Command` in the job's namespace, `target` naming the job
  (apiVersion batch.volcano.sh/v1alpha1, kind Job) and `action` the action. The controller deletes
  the Command (one that is already gone was consumed: nothing happens), records `CommandIssued`,
  then runs the action.
- vclite's older form, kept for scripts written against it: the job annotation

      vclite.volcano.sh/command: <Action>      (e.g. AbortJob, ResumeJob, RestartJob, TerminateJob)

  which the controller removes (an update of the job's metadata) before it acts.

Either way the action runs with event `CommandIssued` — an explicit action, so no lifecycle policy
applies. An unknown action is dropped with a Warning event and nothing else happens.

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

