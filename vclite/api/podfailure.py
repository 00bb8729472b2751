"""Why a pod, or a vcjob through its pods, failed, in words: pure reading of their statuses.

One wording wherever a failure is told — `vcctl run`'s report and live view (cli/view.py) and the JobFlow
controller's failure messages (its vcjobs' conditions, the exit handler's `workflow.failures`): the pod's own
reason (the kubelet's `DeadlineExceeded: …`), else each container that exited non-zero with its exit code,
reason and termination message, e.g. `pod night-b-main-0: container main exited with code 3 (Error)`, as
Argo's `Error (exit code 3)`. No I/O: the caller brings the pods (a snapshot, or the API's through a client).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vclite.api import meta

Obj = dict[str, Any]

MESSAGE_SHOWN = 200   # characters of a container's termination message put in a reason
REASONS_SHOWN = 3     # pod reasons spelled out in a vcjob's failure; the others are counted


def terminated(cs: Obj) -> Obj | None:
    """A container's last termination (now, or before its restart), if any."""
    return (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated")


def exit_text(name: str, term: Obj, what: str = "container") -> str:
    """`container main exited with code 3 (Error)`, then `: <termination message>` when it wrote one."""
    text = f"{what} {name} exited with code {term.get('exitCode')} ({term.get('reason') or 'Error'})"
    message = " ".join(str(term.get("message") or "").split())
    if message:
        text += ": " + (message if len(message) <= MESSAGE_SHOWN else message[:MESSAGE_SHOWN] + "…")
    return text


def failed_init_containers(pod: Obj) -> list[str]:
    """Names of the pod's init containers that exited non-zero (the pod failed before its containers ran)."""
    return [cs.get("name", "") for cs in (pod.get("status") or {}).get("initContainerStatuses") or []
            if (terminated(cs) or {}).get("exitCode", 0) != 0]


def pod_failure_reasons(pod: Obj) -> list[str]:
    """Why a failed pod failed: the pod's own reason and message when it has one (the kubelet's:
    `DeadlineExceeded: Pod was active on the node longer than the specified deadline`), then each init
    container, then container, that exited non-zero (`init container setup exited with code 4 (Error)`) — but
    those the pod's reason already tells of (it ended them: `ProcessLost`)."""
    status = pod.get("status") or {}
    reasons = [f"{status['reason']}: {status.get('message', '')}".rstrip(": ")] if status.get("reason") else []
    for what, key in (("init container", "initContainerStatuses"), ("container", "containerStatuses")):
        for cs in status.get(key) or []:
            term = terminated(cs)
            if term and term.get("exitCode", 0) != 0 and not (status.get("reason") and
                                                              term.get("reason") == status["reason"]):
                reasons.append(exit_text(str(cs.get("name")), term, what))
    if not reasons and status.get("message"):   # no process told why
        reasons.append(str(status["message"]))
    return reasons


def exits_before_stop(pod: Obj) -> list[str]:
    """A pod that did not fail itself (stopped by its job): its containers' non-zero exits, with restarts."""
    out = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        term = terminated(cs)
        if term and term.get("exitCode", 0) != 0 and term.get("reason") != "ProcessLost":
            restarts = cs.get("restartCount") or 0
            out.append(exit_text(str(cs.get("name")), term)
                       + (f", restarted {restarts} time{'s' if restarts != 1 else ''}" if restarts else ""))
    return out


def _finished_at(pod: Obj) -> str:
    """When the pod's first container to end ended (RFC 3339 text; "~" when none says: after every time)."""
    times = [str(t.get("finishedAt")) for key in ("initContainerStatuses", "containerStatuses")
             for cs in (pod.get("status") or {}).get(key) or [] for t in [terminated(cs) or {}] if t.get("finishedAt")]
    return min(times, default="~")


def job_failure(job: Obj, pods: Iterable[Obj]) -> str:
    """Why a vcjob failed, from its failed pods — the first to fail first (`pod a-t-0: init container setup
    exited with code 4 (Error)`, `pod a-t-0: container main exited with code 3 (Error)`; REASONS_SHOWN of them,
    then a count) —, else what its stopped pods' containers exited with, else its state's reason; a job that
    used up its restarts says so: `(after 2 retries, maxRetry 2)`. "" when nothing says why."""
    pods = sorted(pods, key=lambda p: (_finished_at(p), meta.name(p)))
    reasons = [f"pod {meta.name(pod)}: {r}" for pod in pods
               if (pod.get("status") or {}).get("phase") == "Failed" for r in pod_failure_reasons(pod)]
    if not reasons:   # (its pods were stopped by the job's own action, TerminateJob or AbortJob: what exited first)
        reasons = [f"pod {meta.name(pod)}: {r}" for pod in pods for r in exits_before_stop(pod)]
    job_status = job.get("status") or {}
    state = job_status.get("state") or {}
    if not reasons and (state.get("reason") or state.get("message")):
        reasons.append(f"{state.get('reason', '')}: {state.get('message', '')}".strip(": "))
    shown = REASONS_SHOWN
    text = "; ".join(reasons[:shown]) + (f" (+{len(reasons) - shown} more)" if len(reasons) > shown else "")
    retries = job_status.get("retryCount") or 0
    if text and isinstance(retries, int) and retries > 0:
        text += f" (after {retries} {'retry' if retries == 1 else 'retries'}, maxRetry " \
                f"{(job.get('spec') or {}).get('maxRetry', 3)})"
    return text
