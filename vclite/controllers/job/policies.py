"""Lifecycle-policy resolution for vcjob requests, and the bookkeeping rules of delayed actions.

`apply_policies(job, request) -> (Action, delay seconds | None)` is Volcano's
`job_controller_util.go: applyPolicies`: an explicit action (commands) wins; internal events,
requests from another job UID and stale requests (pod's job version < status.version) resolve to
SyncJob; otherwise the task's policies, then the job's, first match wins: an event match (the
policy's `events` plus `event`, or `*`) — except that PodPending only matches a policy that has a
timeout — or an exitCode match. A policy timeout becomes the delay.

Deliberate difference from Volcano: requests that do not come from a pod (PodGroup phase changes,
job updates, commands) carry no job version (`job_version=None`) and are never "stale". Volcano
gives them version 0, so after the first restart a PodGroup `Unknown` event can no longer trigger
an `Unknown` policy. As in Volcano, nothing emits `JobUpdated` (admission accepts it in policies,
but Volcano's controller never raises it: a spec update is an OutOfSync reconcile), so such a policy
behaves here exactly as on a Volcano cluster.

Delayed actions (`job_controller.go`): `cancelled_by_request` says whether a new pod event cancels
the pending delayed action of the same pod; `cancelled_by_action` whether an executed action
cancels another delayed action (same action type: job-level all, RestartTask the same task,
RestartPod the same pod, RestartPartition the same partition).

Pure: no client, no clock. Policy validation (event XOR exitCode, ...) is admission's job.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Mapping

from vclite.api import batch
from vclite.lib import clock as clock_mod

Event = batch.Event
Act = batch.Action


@dataclasses.dataclass(frozen=True)
class Request:
    """What happened to a job (Volcano's apis.Request)."""

    event: Event | None = None
    action: Act | None = None
    exit_code: int | None = None
    task_name: str = ""
    pod_name: str = ""
    job_uid: str = ""
    job_version: int | None = None   # from the pod's volcano.sh/job-version; None when not from a pod
    pod_uid: str = ""
    partition_id: str = ""
    command: tuple[str, str] | None = None   # (name, action) of the bus.volcano.sh Command that issued it


def _timeout(policy: Mapping[str, Any]) -> float | None:
    raw = policy.get("timeout")
    if raw is None or raw == "":
        return None
    if isinstance(raw, (int, float)):
        return float(raw)
    try:
        return clock_mod.parse_duration(str(raw))
    except ValueError:
        return None  # admission rejects malformed durations; never act on one


def _events(policy: Mapping[str, Any]) -> list[str]:
    events = list(policy.get("events") or [])
    if policy.get("event"):
        events.append(policy["event"])
    return events


def _match(policies: list[Mapping[str, Any]], req: Request) -> tuple[Act, float | None] | None:
    for policy in policies:
        events = _events(policy)
        if events and req.event:
            if req.event in events or Event.ANY in events:
                timeout = _timeout(policy)
                if req.event != Event.POD_PENDING or timeout is not None:
                    return Act(policy["action"]), timeout
        code = policy.get("exitCode")
        if code is not None and req.exit_code is not None and int(code) == req.exit_code:
            return Act(policy["action"]), _timeout(policy)
    return None


def apply_policies(job: Mapping[str, Any], req: Request) -> tuple[Act, float | None]:
    """The action a request asks for on `job` (a vcjob dict), and its delay in seconds (None: now)."""
    if req.action:
        return Act(req.action), None
    if req.event in batch.INTERNAL_EVENTS:
        return Act.SYNC_JOB, None
    uid = (job.get("metadata") or {}).get("uid", "")
    if req.job_uid and req.job_uid != uid:
        return Act.SYNC_JOB, None
    version = int((job.get("status") or {}).get("version", 0) or 0)
    if req.job_version is not None and req.job_version < version:
        return Act.SYNC_JOB, None
    spec = job.get("spec") or {}
    if req.task_name:
        for task in spec.get("tasks") or []:
            if task.get("name") == req.task_name:
                found = _match(task.get("policies") or [], req)
                if found is not None:
                    return found
                break
    return _match(spec.get("policies") or [], req) or (Act.SYNC_JOB, None)


# ---- delayed actions ---------------------------------------------------------------------------
class ActionType(enum.Enum):
    JOB = "job"
    TASK = "task"
    POD = "pod"
    PARTITION = "partition"


def action_type(action: Act) -> ActionType:
    """Volcano's GetActionType (anything not task/pod/partition-scoped is job-level)."""
    return {Act.RESTART_TASK: ActionType.TASK, Act.RESTART_POD: ActionType.POD,
            Act.RESTART_PARTITION: ActionType.PARTITION}.get(action, ActionType.JOB)


INTERNAL_ACTIONS = frozenset({Act.SYNC_JOB, Act.ENQUEUE_JOB, Act.SYNC_QUEUE, Act.OPEN_QUEUE, Act.CLOSE_QUEUE})
POD_EVENTS = frozenset({Event.POD_PENDING, Event.POD_RUNNING, Event.POD_FAILED, Event.POD_EVICTED})


@dataclasses.dataclass(frozen=True)
class Delayed:
    """A delayed action waiting for its timer (keyed by pod name within a job, as Volcano)."""

    action: Act
    event: Event | None
    task_name: str
    pod_name: str
    pod_uid: str
    partition_id: str
    due: float  # clock.monotonic() at which it fires


def cancelled_by_request(d: Delayed, req: Request) -> bool:
    """Does pod event `req` (for the same pod name) cancel `d`? (CleanPodDelayActionsIfNeed)"""
    if req.event not in POD_EVENTS or req.event == Event.POD_PENDING or req.pod_name != d.pod_name:
        return False
    if d.event == Event.POD_PENDING and req.pod_uid == d.pod_uid:
        return True
    return d.event in (Event.POD_FAILED, Event.POD_EVICTED) and req.event == Event.POD_RUNNING


def cancelled_by_action(d: Delayed, action: Act, task_name: str, pod_name: str, partition_id: str) -> bool:
    """Does executing a non-internal `action` cancel delayed action `d`? (cleanupDelayActions)"""
    kind = action_type(action)
    if action_type(d.action) is not kind:
        return False
    if kind is ActionType.TASK:
        return d.task_name == task_name
    if kind is ActionType.POD:
        return d.pod_name == pod_name
    if kind is ActionType.PARTITION:
        return d.partition_id == partition_id
    return True
