"""The PodGroup of a vcjob (Volcano's `createOrUpdatePodGroup` and `calcPGMinResources`), pure.

- `name(job)`: `<job>-<jobUID>`.
- `build(job, priorities)`: a new PodGroup: ownerReference to the job, the job's labels and
  annotations (without vclite's command annotation, see commands.py), spec minMember = job.minAvailable,
  minTaskMember (task.minAvailable ?? minPartitions×partitionSize ?? replicas), queue,
  priorityClassName, minResources, networkTopology, subGroupPolicy for partitioned tasks.
- `min_resources(job, priorities)`: tasks sorted by their template PriorityClass value, highest
  first (unknown or missing class = 0; `priorities` maps class name -> value); if job.minAvailable
  < Σ task.minAvailable, the first minAvailable pods in that order; else each task's minAvailable
  pods, then filled up to job.minAvailable with the remaining replicas in priority order. Per-pod
  usage is quota-style (cpu + requests.cpu, ..., pods + count/pods, limits.cpu/memory/ephemeral-storage:
  Kubernetes' PodUsageFunc). A task without minAvailable is
  taken as minAvailable = replicas, as Volcano's webhook defaults it.
- `reconcile(pg, job, priorities)`: the updated PodGroup when its spec must follow the job
  (shouldUpdateExistingPodGroup), else None.

Pure: no client; PriorityClass values are passed in. It never touches PodGroup status (the
scheduler's).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from vclite.api import batch
from vclite.api import kinds
from vclite.api import meta
from vclite.api import quantity
from vclite.api import resources
from vclite.controllers.job import commands
from vclite.lib import jsoncopy

Obj = dict[str, Any]

def name(job: Obj) -> str:
    return f"{meta.name(job)}-{meta.uid(job)}"


def _task_min(task: Obj) -> int:
    return int(task["replicas"] if task.get("minAvailable") is None else task["minAvailable"])


def min_task_member(task: Obj) -> int:
    if task.get("minAvailable") is not None:
        return int(task["minAvailable"])
    part = task.get("partitionPolicy") or {}
    if part.get("minPartitions") and part.get("partitionSize"):
        return int(part["minPartitions"]) * int(part["partitionSize"])
    return int(task.get("replicas", 0) or 0)


def _pod_usage(task: Obj) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """A pod of the task: (requests, limits)."""
    spec = (task.get("template") or {}).get("spec") or {}
    return resources.pod_requests(spec), resources.pod_limits(spec)


def min_resources(job: Obj, priorities: Mapping[str, int]) -> dict[str, str]:
    spec = job.get("spec") or {}
    tasks = list(spec.get("tasks") or [])

    def prio(task: Obj) -> int:
        pc = ((task.get("template") or {}).get("spec") or {}).get("priorityClassName") or ""
        return int(priorities.get(pc, 0)) if pc else 0

    ordered = sorted(tasks, key=prio, reverse=True)  # stable: equal priorities keep spec order
    job_min = int(spec.get("minAvailable", 0) or 0)
    total: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}

    def take(task: Obj, count: int) -> None:
        nonlocal total, limits
        if count > 0:
            requests, lims = _pod_usage(task)
            total = resources.add(total, resources.scale(requests, count))
            limits = resources.add(limits, resources.scale(lims, count))

    if job_min < sum(_task_min(t) for t in tasks):
        left = job_min
        for task in ordered:
            n = min(left, int(task.get("replicas", 0) or 0))
            take(task, n)
            left -= n
            if left <= 0:
                break
        return resources.to_quota_list(total, limits)
    count = 0
    for task in ordered:
        n = min(_task_min(task), job_min - count)
        take(task, n)
        count += n
        if count >= job_min:
            return resources.to_quota_list(total, limits)
    left = job_min - count
    for task in ordered:
        rest = int(task.get("replicas", 0) or 0) - _task_min(task)
        if rest <= 0:
            continue
        n = min(rest, left)
        take(task, n)
        left -= n
        if left <= 0:
            break
    return resources.to_quota_list(total, limits)


def _network_topology(nt: Obj | None) -> Obj | None:
    if not nt:
        return None
    out: Obj = {"mode": nt.get("mode")}
    if nt.get("highestTierAllowed") is not None:
        out["highestTierAllowed"] = nt["highestTierAllowed"]
    elif nt.get("highestTierName"):
        out["highestTierName"] = nt["highestTierName"]
    return out


def sub_group_policies(tasks: list[Obj]) -> list[Obj]:
    out = []
    for task in tasks:
        part = task.get("partitionPolicy")
        if part is None:
            continue
        # (Volcano points at the partition's fields: one not written is 0 there, never null)
        policy: Obj = {"name": task.get("name"), "subGroupSize": part.get("partitionSize") or 0,
                       "minSubGroups": part.get("minPartitions") or 0,
                       "labelSelector": {"matchLabels": {batch.TASK_SPEC: task.get("name")}},
                       "matchLabelKeys": [batch.PARTITION_ID]}
        nt = part.get("networkTopology")
        if nt:
            policy["networkTopology"] = {k: nt[k] for k in ("mode", "highestTierAllowed", "highestTierName")
                                         if nt.get(k) is not None}
        out.append(policy)
    return out


def build(job: Obj, priorities: Mapping[str, int], spec_built: Obj | None = None) -> Obj:
    """The job's PodGroup; `spec_built`: its spec, if already built from this job (copied here)."""
    annotations = {k: v for k, v in meta.annotations(job).items() if k != commands.ANNOTATION}
    pg_spec = jsoncopy.deep_copy(spec_built) if spec_built is not None else _spec(job, priorities)
    md: Obj = {"name": name(job), "namespace": meta.namespace(job), "ownerReferences": [meta.owner_ref(job)]}
    if annotations:
        md["annotations"] = annotations
    if meta.labels(job):
        md["labels"] = dict(meta.labels(job))
    return {"apiVersion": kinds.PODGROUP.api_version, "kind": kinds.PODGROUP.kind, "metadata": md, "spec": pg_spec}


def _spec(job: Obj, priorities: Mapping[str, int]) -> Obj:
    spec = job.get("spec") or {}
    tasks = list(spec.get("tasks") or [])
    pg_spec: Obj = {
        "minMember": int(spec.get("minAvailable", 0) or 0),
        "minTaskMember": {t.get("name"): min_task_member(t) for t in tasks},
        "queue": spec.get("queue") or batch.DEFAULT_QUEUE,
        "minResources": min_resources(job, priorities),
    }
    if spec.get("priorityClassName"):
        pg_spec["priorityClassName"] = spec["priorityClassName"]
    nt = _network_topology(spec.get("networkTopology"))
    if nt:
        pg_spec["networkTopology"] = nt
    subgroups = sub_group_policies(tasks)
    if subgroups:
        pg_spec["subGroupPolicy"] = subgroups
    return pg_spec


def _same_resources(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    if (a or {}) == (b or {}):   # (the same text: no quantity to parse)
        return True
    try:
        return ({k: quantity.parse(v) for k, v in (a or {}).items()} ==
                {k: quantity.parse(v) for k, v in (b or {}).items()})
    except ValueError:
        return False


def _differs(spec: Obj, want: Obj) -> bool:
    """Whether reconcile would change a PodGroup spec (the same tests, without copying)."""
    members = spec.get("minTaskMember")
    return ((spec.get("priorityClassName") or "") != (want.get("priorityClassName") or "")
            or spec.get("minMember", 0) != want["minMember"]
            or not _same_resources(spec.get("minResources"), want["minResources"])
            or members is None or any(members.get(k) != v for k, v in want["minTaskMember"].items())
            or (spec.get("subGroupPolicy") or []) != want.get("subGroupPolicy", []))


def reconcile(pg: Obj, job: Obj, priorities: Mapping[str, int], want: Obj | None = None) -> Obj | None:
    """A copy of `pg` with minMember, minResources, minTaskMember, priorityClassName and
    subGroupPolicy following the job, or None when nothing has to change. `want`: the spec
    `build(job, priorities)` makes, if the caller has it already (read only)."""
    if want is None:
        want = build(job, priorities)["spec"]
    if not _differs(pg.get("spec") or {}, want):
        return None
    new = jsoncopy.deep_copy(pg)
    spec = new.setdefault("spec", {})
    changed = False
    if (spec.get("priorityClassName") or "") != (want.get("priorityClassName") or ""):
        changed = True
        if want.get("priorityClassName"):
            spec["priorityClassName"] = want["priorityClassName"]
        else:
            spec.pop("priorityClassName", None)
    if spec.get("minMember", 0) != want["minMember"] or not _same_resources(spec.get("minResources"),
                                                                           want["minResources"]):
        changed = True
        spec["minMember"], spec["minResources"] = want["minMember"], want["minResources"]
    members = spec.get("minTaskMember")
    if members is None or any(members.get(k) != v for k, v in want["minTaskMember"].items()):
        changed = True
        spec["minTaskMember"] = {**(members or {}), **want["minTaskMember"]}
    if (spec.get("subGroupPolicy") or []) != want.get("subGroupPolicy", []):
        changed = True
        if want.get("subGroupPolicy"):
            spec["subGroupPolicy"] = want["subGroupPolicy"]
        else:
            spec.pop("subGroupPolicy", None)
    return new if changed else None
