"""A job's partitions (Volcano's SubJobs: a PodGroup's `subGroupPolicy`, a vcjob task's `partitionPolicy`) and
the gang checks `minSubGroups` (a task's `minPartitions`) asks for (api/job_info.go CheckSubJobValid,
CheckSubJobReady, CheckSubJobPipelined).

Membership, as Volcano's getOrCreateSubJob: a task joins the first policy whose `labelSelector` (if any)
selects it and whose `matchLabelKeys` it all carries (non-empty), one partition per value tuple; other tasks
are in the default partition. A partition is ready when its tasks that are placed or finished
(Allocated, Binding, Bound, Running, Succeeded), plus its pending BestEffort ones, reach its
`subGroupSize` (1 when unset); pipelined when its pipelined tasks count too. A policy with `minSubGroups`
n > 0 makes a job valid only with n partitions, ready only with n ready, pipelined only with n pipelined.

The policies with a minimum are read once per JobInfo (`JobInfo.sub_groups`; adding a task resets it).
Must not: change the job.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from vclite.api import meta
from vclite.api import topology as topology_api
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod

Obj = dict[str, Any]
TaskStatus = tasks_mod.TaskStatus
_READY = tasks_mod.ALLOCATED_STATUS | {TaskStatus.SUCCEEDED}
_PIPELINED = _READY | {TaskStatus.PIPELINED}


@dataclasses.dataclass(frozen=True)
class Group:
    """A policy with `minSubGroups` > 0 and the tasks (uids) of each of its partitions."""
    name: str
    minimum: int
    size: int
    parts: tuple[tuple[str, ...], ...]


def policies(job: "jobs_mod.JobInfo") -> list[Obj]:
    spec = (job.podgroup.get("spec") or {}) if isinstance(job.podgroup, dict) else {}
    found = spec.get("subGroupPolicy")
    if not found:   # (most jobs, asked several times each per session)
        return []
    return [p for p in found if isinstance(p, dict)]


def membership(job: "jobs_mod.JobInfo") -> dict[str, tuple[Obj, list[str]] | None]:
    """Each task's partition: (its policy, the values of its matchLabelKeys), or None for the default one."""
    pols = policies(job)
    out: dict[str, tuple[Obj, list[str]] | None] = {}
    for t in sorted(job.tasks.values(), key=lambda t: t.key):
        labels = meta.labels(t.pod)
        out[t.uid] = None
        for pol in pols:
            keys = [k for k in pol.get("matchLabelKeys") or () if isinstance(k, str)]
            selector = pol.get("labelSelector")
            if selector and not topology_api.selects(selector, labels):
                continue
            values = [labels.get(k) for k in keys]
            if not keys or not all(values):
                continue
            out[t.uid] = (pol, values)
            break
    return out


def sub_job_name(policy: Obj, values: list[str]) -> str:
    """A partition's name: `<policy>/<values joined by "-">` (the default partition: "")."""
    return f"{policy.get('name')}/{'-'.join(values)}"


def sub_job_ids(job: "jobs_mod.JobInfo") -> dict[str, str]:
    """Each task's partition name, for the tasks of a policy's partition (others: the default one, "")."""
    if not policies(job):
        return {}
    return {uid: sub_job_name(*member) for uid, member in membership(job).items() if member is not None}


def sub_job_size(job: "jobs_mod.JobInfo", name: str) -> int:
    """The tasks that make partition `name` ready (Volcano's SubJobInfo.MinAvailable): its policy's
    `subGroupSize`, 1 when unset and for the default partition of a job with policies."""
    for member in membership(job).values():
        if member is not None and sub_job_name(*member) == name:
            size = member[0].get("subGroupSize")
            return size if isinstance(size, int) and not isinstance(size, bool) else 1
    return 1


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def groups(job: "jobs_mod.JobInfo") -> tuple[Group, ...]:
    """The job's policies with a minimum, with their partitions (cached on the job)."""
    cached = job.sub_groups
    if cached is not None:
        return cached
    wanted = {p.get("name"): p for p in policies(job) if _int(p.get("minSubGroups")) > 0}
    out: tuple[Group, ...] = ()
    if wanted:
        parts: dict[Any, dict[tuple, list[str]]] = {name: {} for name in wanted}
        for uid, member in membership(job).items():
            if member is not None and member[0].get("name") in parts:
                parts[member[0].get("name")].setdefault(tuple(member[1]), []).append(uid)
        out = tuple(Group(str(name), _int(p.get("minSubGroups")), max(_int(p.get("subGroupSize")), 1),
                          tuple(tuple(uids) for uids in parts[name].values())) for name, p in wanted.items())
    job.sub_groups = out
    return out


def valid(job: "jobs_mod.JobInfo") -> bool:
    """CheckSubJobValid: each policy has at least its minimum of partitions."""
    return all(len(g.parts) >= g.minimum for g in groups(job))


def _met(job: "jobs_mod.JobInfo", g: Group, statuses: frozenset) -> int:
    """How many of the policy's partitions have `size` tasks in `statuses` (or pending BestEffort)."""
    met = 0
    for uids in g.parts:
        n = 0
        for uid in uids:
            t = job.tasks[uid]
            if t.status in statuses or (t.status == TaskStatus.PENDING and t.best_effort):
                n += 1
        if n >= g.size:
            met += 1
    return met


def _enough(job: "jobs_mod.JobInfo", statuses: frozenset) -> bool:
    return all(_met(job, g, statuses) >= g.minimum for g in groups(job))


def ready(job: "jobs_mod.JobInfo") -> bool:
    """CheckSubJobReady: each policy has at least its minimum of ready partitions."""
    return not groups(job) or _enough(job, _READY)


def short_of(job: "jobs_mod.JobInfo") -> dict[str, int]:
    """For each policy with a minimum, how many more partitions must become ready (allocate.go
    organizeJobWorksheet's count of the SubJobs already ready against MinSubJobs); policies met are left out."""
    short = {g.name: g.minimum - _met(job, g, _READY) for g in groups(job)}
    return {name: n for name, n in short.items() if n > 0}


def pipelined(job: "jobs_mod.JobInfo") -> bool:
    """CheckSubJobPipelined: … of partitions ready or pipelined."""
    return not groups(job) or _enough(job, _PIPELINED)
