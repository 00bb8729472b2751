"""Pod and container status as the kubelet reports them. Pure: state records, phase rule, status dict.

Phase (Kubernetes `getPhase`, restated for a runner that knows when it is done):
- the runner is finished (no container runs or will run again): Succeeded if every container,
  init containers included, terminated with exit code 0; otherwise Failed;
- an init container has not yet succeeded, or an app container has not started yet: Pending;
- otherwise Running (a container waiting to restart counts as running).
Container states are the API's: waiting {reason, message} / running {startedAt} / terminated
{exitCode, reason Completed|Error|StartError|OOMKilled, message, startedAt, finishedAt}, with lastState,
restartCount, ready and started.
This module does no I/O and holds no process handles.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any

from vclite.api import core

Obj = dict[str, Any]


class StateKind(enum.StrEnum):
    WAITING = "waiting"
    RUNNING = "running"
    TERMINATED = "terminated"


class Reason(enum.StrEnum):
    COMPLETED = "Completed"
    ERROR = "Error"
    START_ERROR = "StartError"
    OOM_KILLED = "OOMKilled"
    CRASH_LOOP = "CrashLoopBackOff"
    CREATING = "ContainerCreating"
    INITIALIZING = "PodInitializing"


class ConditionType(enum.StrEnum):
    READY_TO_START = "PodReadyToStartContainers"   # (beta, on by default since Kubernetes 1.29)
    SCHEDULED = "PodScheduled"
    INITIALIZED = "Initialized"
    CONTAINERS_READY = "ContainersReady"
    READY = "Ready"


TERMINAL = (core.PodPhase.SUCCEEDED, core.PodPhase.FAILED)


@dataclasses.dataclass
class ContainerState:
    """One container's observed state; mutated only by the transition methods below."""

    name: str
    image: str = ""
    kind: StateKind = StateKind.WAITING
    reason: str = Reason.CREATING
    message: str = ""
    started_at: str | None = None
    pid: int | None = None
    terminated: Obj | None = None      # the current (or latest) termination record
    last_state: Obj | None = None      # the termination before the current run
    restart_count: int = 0

    def start(self, now: str, pid: int | None) -> None:
        if self.terminated is not None:           # a restart
            self.last_state, self.terminated = self.terminated, None
            self.restart_count += 1
        self.kind, self.reason, self.message = StateKind.RUNNING, "", ""
        self.started_at, self.pid = now, pid

    def finish(self, exit_code: int, now: str, message: str = "", reason: str | None = None) -> None:
        """The process ended (or, when it never started, could not be started)."""
        reason = reason or (Reason.COMPLETED if exit_code == 0 else Reason.ERROR)
        if self.kind != StateKind.RUNNING:         # never started this time
            if self.terminated is not None:
                self.last_state = self.terminated
                self.restart_count += 1
            self.started_at, self.pid = now, None
        record: Obj = {"exitCode": exit_code, "reason": str(reason), "startedAt": self.started_at,
                       "finishedAt": now}
        if message:
            record["message"] = message
        if self.pid is not None:
            record["containerID"] = f"vclite://{self.pid}"
        self.kind, self.terminated, self.reason, self.message = StateKind.TERMINATED, record, "", ""

    def back_off(self, message: str) -> None:
        self.kind, self.reason, self.message = StateKind.WAITING, Reason.CRASH_LOOP, message

    def wait(self, reason: str, message: str = "") -> None:
        """Not started (or stopped while backing off, when it stays terminated)."""
        if self.terminated is not None:
            self.kind, self.reason, self.message = StateKind.TERMINATED, "", ""
        else:
            self.kind, self.reason, self.message = StateKind.WAITING, reason, message

    @property
    def exit_code(self) -> int | None:
        return None if self.terminated is None else self.terminated["exitCode"]

    @property
    def has_run(self) -> bool:
        return self.kind == StateKind.RUNNING or self.terminated is not None

    def to_status(self) -> Obj:
        if self.kind == StateKind.RUNNING:
            state: Obj = {"running": {"startedAt": self.started_at}}
        elif self.kind == StateKind.TERMINATED and self.terminated is not None:
            state = {"terminated": dict(self.terminated)}
        else:
            state = {"waiting": {"reason": str(self.reason), **({"message": self.message} if self.message else {})}}
        last = self.terminated if self.kind == StateKind.WAITING and self.terminated else self.last_state
        out: Obj = {"name": self.name, "state": state, "lastState": {"terminated": dict(last)} if last else {},
                    "ready": self.kind == StateKind.RUNNING, "restartCount": self.restart_count,
                    "started": self.kind == StateKind.RUNNING, "image": self.image, "imageID": ""}
        if self.pid is not None:
            out["containerID"] = f"vclite://{self.pid}"
        return out


def active_deadline(pod: Obj) -> int | None:
    """The pod's spec.activeDeadlineSeconds (seconds it may stay active after it starts), or None."""
    seconds = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return seconds if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0 else None


def pod_phase(init: list[ContainerState], main: list[ContainerState], finished: bool) -> core.PodPhase:
    if finished:
        ok = all(c.kind == StateKind.TERMINATED and c.exit_code == 0 for c in init + main)
        return core.PodPhase.SUCCEEDED if ok else core.PodPhase.FAILED
    if any(c.exit_code != 0 or c.kind != StateKind.TERMINATED for c in init):
        return core.PodPhase.PENDING
    if any(not c.has_run for c in main):
        return core.PodPhase.PENDING
    return core.PodPhase.RUNNING


def _condition(previous: list[Obj], ctype: ConditionType, ok: bool, now: str, reason: str = "",
               message: str = "", generation: int | None = None) -> Obj:
    status = "True" if ok else "False"
    old = next((c for c in previous if c.get("type") == ctype), None)
    since = old.get("lastTransitionTime") if old and old.get("status") == status else now
    cond: Obj = {"type": str(ctype), "status": status, "lastProbeTime": None, "lastTransitionTime": since}
    if generation:
        cond["observedGeneration"] = generation
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _not_done(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"   # (Go's %s of a []string, as the kubelet's messages print it)


def _readiness(phase: core.PodPhase, main: list[ContainerState]) -> tuple[bool, str, str]:
    """ContainersReady as the kubelet's GenerateContainersReadyCondition: (ok, reason, message)."""
    if phase == core.PodPhase.SUCCEEDED:
        return False, "PodCompleted", ""
    if phase == core.PodPhase.FAILED:   # (its containers may still be stopping: not ready whatever they say)
        return False, "PodFailed", ""
    unready = [c.name for c in main if c.kind != StateKind.RUNNING]
    if unready or not main:
        return False, "ContainersNotReady", f"containers with unready status: {_not_done(unready)}"
    return True, "", ""


def _gates_unready(gates: tuple[str, ...], conditions: list[Obj]) -> str:
    """Why the pod's readiness gates hold Ready back (the kubelet's GeneratePodReadyCondition), or ""."""
    problems = []
    for gate in gates:
        cond = next((c for c in conditions if c.get("type") == gate), None)
        if cond is None:
            problems.append(f'corresponding condition of pod readiness gate "{gate}" does not exist.')
        elif cond.get("status") != "True":
            problems.append(f'the status of pod readiness gate "{gate}" is not "True", but {cond.get("status")}')
    return ", ".join(problems)


def kubelet_conditions(prev_conds: list[Obj], phase: core.PodPhase, now: str, init: list[ContainerState],
                       main: list[ContainerState], *, sandbox: bool = True, gates: tuple[str, ...] = (),
                       generation: int | None = None) -> list[Obj]:
    """The conditions a Kubernetes 1.32 kubelet owns, in the order it writes them (generateAPIPodStatus; `kubectl
    describe pod` lists them so): PodReadyToStartContainers (its sandbox is up: `sandbox`, never once the pod
    has ended), Initialized, Ready, ContainersReady, PodScheduled. A succeeded pod is Initialized with reason
    PodCompleted; Ready and ContainersReady are False with reason PodCompleted (PodFailed for a failed pod) once
    it ended, ContainersNotReady naming the containers not running before; Ready also waits for the pod's
    readiness gates (ReadinessGatesNotReady)."""
    incomplete = [c.name for c in init if c.exit_code != 0 or c.kind != StateKind.TERMINATED]
    if incomplete:
        initialized = (False, "ContainersNotInitialized", f"containers with incomplete status: {_not_done(incomplete)}")
    else:
        initialized = (True, "PodCompleted" if phase == core.PodPhase.SUCCEEDED else "", "")
    containers = _readiness(phase, main)
    ready = containers
    gates_message = _gates_unready(gates, prev_conds) if containers[0] else ""
    if gates_message:
        ready = (False, "ReadinessGatesNotReady", gates_message)
    made = [(ConditionType.READY_TO_START, (sandbox and phase not in TERMINAL, "", "")),
            (ConditionType.INITIALIZED, initialized), (ConditionType.READY, ready),
            (ConditionType.CONTAINERS_READY, containers), (ConditionType.SCHEDULED, (True, "", ""))]
    return [_condition(prev_conds, ctype, ok, now, reason, message, generation)
            for ctype, (ok, reason, message) in made]


def build_status(previous: Obj | None, phase: core.PodPhase, now: str, *, start_time: str | None,
                 init: list[ContainerState], main: list[ContainerState], reason: str = "",
                 message: str = "", generation: int | None = None, sandbox: bool = True,
                 gates: tuple[str, ...] = ()) -> Obj:
    """The pod status to write: `previous` (unknown fields kept) with every kubelet-owned field set.
    Transition times of unchanged conditions are kept, so an unchanged pod yields an equal status.
    Conditions: kubelet_conditions (`sandbox`, `gates`: its arguments), after those the kubelet does not own,
    kept where they were.
    `generation`: the pod's metadata.generation this status was made from, written as the kubelet of
    Kubernetes 1.33+ writes it (PodObservedGenerationTracking): `status.observedGeneration` and each
    of its conditions' `observedGeneration` (none without one: a pod stored before pods had one)."""
    status = dict(previous or {})
    if generation:
        status["observedGeneration"] = generation
    prev_conds = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    ours = kubelet_conditions(prev_conds, phase, now, init, main, sandbox=sandbox, gates=gates,
                              generation=generation)
    types = {c["type"] for c in ours}
    status["conditions"] = [c for c in prev_conds if c.get("type") not in types] + ours
    status["phase"] = str(phase)
    status["hostIP"] = status["podIP"] = "127.0.0.1"
    status["hostIPs"] = status["podIPs"] = [{"ip": "127.0.0.1"}]
    if start_time:
        status["startTime"] = start_time
    if init:
        status["initContainerStatuses"] = [c.to_status() for c in init]
    # kubelet sorts a pod's container statuses by name (init containers stay in spec order), and
    # Volcano's job controller reads the exit code of the first: so does ours.
    status["containerStatuses"] = [c.to_status() for c in sorted(main, key=lambda c: c.name)]
    for field, value in (("reason", reason), ("message", message)):
        if value:
            status[field] = value
        else:
            status.pop(field, None)
    return status
