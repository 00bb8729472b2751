"""resourcequota: a PodGroup is not enqueued while its minResources would exceed a ResourceQuota of its
namespace (plugins/resourcequota).

JobEnqueueable: Permit without minResources or without quotas in the job's namespace. Otherwise, for
each quota (by name) of the namespace, with its `status.hard` and `status.used` as the resourcequota
controller writes them: minResources masked to the names `hard` lists, added to `used` plus what this
session already enqueued in the namespace; a name over its hard limit rejects the job with
"resource quota insufficient, requested: ..., used: ..., limited: ..." (the names exceeded; `used` as
the quota's status says it). JobEnqueued: the namespace's pending usage grows by the whole minResources
(only for jobs every plugin admitted: the enqueue action calls it then). PodGroup minResources are
written quota-style by the vcjob controller (`requests.cpu`, `count/pods`, `limits.memory`, …), so a
quota's names find their counterparts.

Differences, on purpose: the message lists resources as `name=quantity` (kube's quota wording) where
Volcano prints Go's ResourceList maps; the rejection becomes the PodGroup's Unschedulable condition
(and its Warning Event, as every enqueue rejection here) where Volcano records a Normal Event.
As upstream ("resourceQuota scope not supported"), a quota's scopes are not looked at: every quota
of the namespace applies to every PodGroup in it.

Must not: keep state between sessions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vclite.api import meta, quantity, resources, scheduling
from vclite.api import quota as quota_mod
from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

Fraction = quantity.Fraction
INSUFFICIENT = "resource quota insufficient"


def _status(q: dict[str, Any]) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    status = q.get("status") or {}
    return quota_mod.parse_list(status.get("hard")), quota_mod.parse_list(status.get("used"))


def verdict(min_resources: dict[str, Fraction], quotas: list[tuple[dict[str, Fraction], dict[str, Fraction]]],
            pending: dict[str, Fraction]) -> str | None:
    """None if `min_resources` fits every (hard, used) quota on top of `pending`; else why not."""
    for hard, used in quotas:
        requested = quota_mod.mask(min_resources, hard)
        with_pending = resources.add(pending, used) if pending else used
        over = sorted(n for n, v in requested.items() if with_pending.get(n, Fraction(0)) + v > hard[n])
        if over:
            return (f"{INSUFFICIENT}, requested: {quota_mod.pretty(quota_mod.mask(requested, over))}, "
                    f"used: {quota_mod.pretty({n: used.get(n, Fraction(0)) for n in over})}, "
                    f"limited: {quota_mod.pretty(quota_mod.mask(hard, over))}")
    return None


class ResourceQuota:
    name = "resourcequota"
    Arguments = plugin.NoArguments

    def __init__(self, arguments: plugin.NoArguments):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.quotas: dict[str, list[tuple[dict[str, Fraction], dict[str, Fraction]]]] = {}
        for q in sorted(ssn.resource_quotas, key=lambda o: (meta.namespace(o), meta.name(o))):
            self.quotas.setdefault(meta.namespace(q), []).append(_status(q))
        self.pending: dict[str, dict[str, Fraction]] = {}
        reg.add(hooks.Point.JOB_ENQUEUEABLE, self.job_enqueueable)
        reg.add(hooks.Point.JOB_ENQUEUED, self.job_enqueued)

    @staticmethod
    def _min_resources(job: "jobs_mod.JobInfo") -> dict[str, Fraction] | None:
        raw = ((job.podgroup or {}).get("spec") or {}).get("minResources")
        return None if raw is None else quota_mod.parse_list(raw)

    def job_enqueueable(self, job: "jobs_mod.JobInfo") -> hooks.Vote:
        quotas = self.quotas.get(job.namespace)
        min_res = self._min_resources(job) if quotas else None
        if min_res is None:
            return hooks.Vote.PERMIT
        why = verdict(min_res, quotas or [], self.pending.get(job.namespace) or {})
        if why is None:
            return hooks.Vote.PERMIT
        self.ssn.note_enqueue_rejection(job, scheduling.ConditionReason.NOT_ENOUGH_RESOURCES, why)
        return hooks.Vote.REJECT

    def job_enqueued(self, job: "jobs_mod.JobInfo") -> None:
        if job.namespace not in self.quotas:
            return
        min_res = self._min_resources(job)
        if min_res is not None:
            self.pending[job.namespace] = resources.add(self.pending.get(job.namespace) or {}, min_res)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
