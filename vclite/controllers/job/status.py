"""Counting a vcjob's pods into its status counters, and the per-task checks the watch handlers use.

- `Tally`: pending/running/succeeded/failed/unknown + taskStatusCount {task: {phase: {PodPhase: n}}}
  (Volcano's classifyAndAddUpPodBaseOnPhase + calcPodStatus). A pod without a phase counts as
  Pending: the Kubernetes apiserver always sets Pending on create, so only a pod written by hand can
  lack it (Volcano would count it Unknown).
- `task_completed`: every replica of the task Succeeded (cache.TaskCompleted).
- `task_failed`: Σ container + initContainer restartCount over the task's Running/Pending pods >=
  the task's maxRetry (0 -> 3, -1 = unlimited) (cache.TaskFailed).
- `dependencies_met`: a task with `dependsOn` may get pods only when its dependencies are ready
  (Succeeded, or Running with every container Ready, >= the dependency's minAvailable; `iteration:
  any` with several names needs one, otherwise all).
- `sync_view`: what SyncJob reads from a pod (the watch handler skips changes that leave it alone).
- `write_counts`: the counters into a status dict with Go's omitempty (zeros omitted).

Pure functions over pod / job dicts; no client.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

from vclite.api import batch
from vclite.api import core
from vclite.api import meta

Obj = dict[str, Any]
PodPhase = core.PodPhase
_EMPTY: dict = {}

ITERATION_ANY = "any"  # dependsOn.iteration (Volcano's batch.IterationAny); default is "all"
COUNTER_FIELDS = ("pending", "running", "succeeded", "failed", "terminating", "unknown")


_PHASES = {str(p): p for p in PodPhase}


def pod_phase(pod: Obj) -> PodPhase:
    raw = (pod.get("status") or _EMPTY).get("phase") or PodPhase.PENDING
    return _PHASES.get(raw, PodPhase.UNKNOWN) if isinstance(raw, str) else PodPhase.UNKNOWN


def task_of(pod: Obj) -> str | None:
    return meta.annotations(pod).get(batch.TASK_SPEC)


@dataclasses.dataclass
class Tally:
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    task_status_count: dict[str, dict[str, dict[str, int]]] = dataclasses.field(default_factory=dict)

    def add(self, pod: Obj) -> None:
        """Count one live pod by its phase (and into taskStatusCount when it names its task)."""
        phase = pod_phase(pod)
        field = {PodPhase.PENDING: "pending", PodPhase.RUNNING: "running", PodPhase.SUCCEEDED: "succeeded",
                 PodPhase.FAILED: "failed"}.get(phase, "unknown")
        setattr(self, field, getattr(self, field) + 1)
        task = task_of(pod)
        if task is not None:
            phases = self.task_status_count.setdefault(task, {"phase": {}})["phase"]
            phases[str(phase)] = phases.get(str(phase), 0) + 1

    def add_terminating(self, n: int = 1) -> None:
        self.terminating += n

    def counters(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in COUNTER_FIELDS}


def tally(pods: Iterable[Obj]) -> Tally:
    """Counters of a set of pods: deleting pods count as terminating only."""
    t = Tally()
    for pod in pods:
        if meta.is_deleting(pod):
            t.add_terminating()
        else:
            t.add(pod)
    return t


def sync_view(pod: Obj) -> tuple:
    """Everything SyncJob reads from a pod (its controller, phase, deletion, the out-of-sync mark,
    readiness for dependent tasks): a pod change that leaves this alone cannot change what SyncJob
    does, so its OutOfSync request is not queued (e.g. the scheduler binding a pod)."""
    return ((meta.controller_ref(pod) or {}).get("uid"), pod_phase(pod), meta.is_deleting(pod),
            batch.OUT_OF_SYNC_ANNOTATION in meta.annotations(pod), ready_for_dependents(pod))


def write_counts(status: Obj, t: Tally) -> None:
    """Store the counters in `status` as Volcano serialises them (omitempty: zeros and {} omitted)."""
    for f, v in t.counters().items():
        if v:
            status[f] = v
        else:
            status.pop(f, None)
    if t.task_status_count:
        status["taskStatusCount"] = t.task_status_count
    else:
        status.pop("taskStatusCount", None)


def _task_spec(job: Obj, task_name: str) -> Obj | None:
    for task in (job.get("spec") or {}).get("tasks") or []:
        if task.get("name") == task_name:
            return task
    return None


def task_completed(job: Obj, task_name: str, task_pods: Iterable[Obj]) -> bool:
    task = _task_spec(job, task_name)
    replicas = int((task or {}).get("replicas", 0) or 0)
    if replicas <= 0:
        return False
    return sum(1 for p in task_pods if pod_phase(p) == PodPhase.SUCCEEDED) >= replicas


def restart_count(pod: Obj) -> int:
    st = pod.get("status") or {}
    return sum(int(cs.get("restartCount", 0) or 0)
               for cs in (st.get("initContainerStatuses") or []) + (st.get("containerStatuses") or []))


def task_failed(job: Obj, task_name: str, task_pods: Iterable[Obj]) -> bool:
    task = _task_spec(job, task_name)
    if task is None:
        return False
    replicas = int(task.get("replicas", 0) or 0)
    max_retry = int(task.get("maxRetry", 0) or 0)
    if replicas == 0 or max_retry == -1:
        return False
    if max_retry == 0:
        max_retry = batch.DEFAULT_MAX_RETRY
    retried = sum(restart_count(p) for p in task_pods if pod_phase(p) in (PodPhase.RUNNING, PodPhase.PENDING))
    return retried >= max_retry


def ready_for_dependents(pod: Obj) -> bool:
    """Succeeded, or Running with every container Ready."""
    phase = pod_phase(pod)
    if phase == PodPhase.SUCCEEDED:
        return True
    if phase != PodPhase.RUNNING:
        return False
    return all(cs.get("ready") for cs in (pod.get("status") or {}).get("containerStatuses") or [])


def task_ready(job: Obj, task_name: str, pods_by_name: Mapping[str, Obj]) -> bool:
    """Enough of the task's pods are ready for tasks depending on it (minAvailable, nil -> replicas)."""
    task = _task_spec(job, task_name)
    if task is None:
        return False
    replicas = int(task.get("replicas", 0) or 0)
    need = replicas if task.get("minAvailable") is None else int(task["minAvailable"])
    job_name = meta.name(job)
    ready = sum(1 for i in range(replicas)
                if (p := pods_by_name.get(f"{job_name}-{task_name}-{i}")) is not None and ready_for_dependents(p))
    return ready >= need


def dependencies_met(job: Obj, task: Obj, pods_by_name: Mapping[str, Obj]) -> bool:
    """May pods of `task` be created now? (waitDependsOnTaskMeetCondition)"""
    depends = task.get("dependsOn")
    if not depends:
        return True
    names = list(depends.get("name") or [])
    if len(names) > 1 and depends.get("iteration") == ITERATION_ANY:
        return any(task_ready(job, n, pods_by_name) for n in names)
    return all(task_ready(job, n, pods_by_name) for n in names)
