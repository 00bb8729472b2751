"""Why a JobFlow's vcjob waits: the scheduler's reason, shown in the JobFlow's per-job conditions.

A created vcjob that cannot be scheduled is `Pending` in its JobFlow's `status.conditions[<vcjob>]`;
the reason is on its PodGroup, as the scheduler's `Unschedulable=True` condition (`3/6 tasks in gang
unschedulable: …`, `queue "q" is Closed`, `queue resource quota insufficient: …`). `Index` keeps
that reason per vcjob from the PodGroups' watch events (a PodGroup is its vcjob's by the controller
ownerReference), and `annotate` copies it into the condition of each vcjob still Pending, as the extra
fields `reason` and `message` that conditions of not-yet-created flows already carry (a Volcano CRD
on a real cluster prunes them; nothing else changes).

Pure but for `Index`, which only remembers what the events said. Must not import the scheduler: the
reason is read from the PodGroup's status, as any client would read it.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vclite.api import batch, kinds, meta, scheduling

Obj = dict[str, Any]
WAITING_PHASES = frozenset({"", batch.JobPhase.PENDING})
UNSCHEDULABLE = str(scheduling.PodGroupConditionType.UNSCHEDULABLE)


def unschedulable(podgroup: Obj) -> tuple[str, str] | None:
    """(reason, message) of the PodGroup's Unschedulable=True condition, or None."""
    for c in (podgroup.get("status") or {}).get("conditions") or []:
        if c.get("type") == UNSCHEDULABLE and c.get("status") == "True":
            return str(c.get("reason") or UNSCHEDULABLE), str(c.get("message") or "")
    return None


def owner(podgroup: Obj) -> tuple[str, str, str] | None:
    """(namespace, vcjob name, vcjob uid) of the vcjob that controls the PodGroup, or None."""
    ref = meta.controller_ref(podgroup)
    if not ref or ref.get("kind") != kinds.JOB.kind:
        return None
    return meta.namespace(podgroup), str(ref.get("name") or ""), str(ref.get("uid") or "")


class Index:
    """The Unschedulable reason of each vcjob's PodGroup, kept from PodGroup events: by vcjob name, then by the
    vcjob's uid (a vcjob deleted and made again under its name has a PodGroup of its own; on a cluster the earlier
    one may still be written, or deleted, after the new one's is)."""

    def __init__(self) -> None:
        self._by_job: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}

    def update(self, podgroup: Obj, deleted: bool = False) -> tuple[str, str] | None:
        """Record the PodGroup's reason; returns (namespace, vcjob name) if what is known changed."""
        who = owner(podgroup)
        if who is None:
            return None
        ns, job, uid = who
        reason = None if deleted else unschedulable(podgroup)
        known = self._by_job.get((ns, job))
        if reason is None:
            if known is None or uid not in known:
                return None
            del known[uid]
            if not known:
                del self._by_job[(ns, job)]
        else:
            if known is not None and known.get(uid) == reason:
                return None
            self._by_job.setdefault((ns, job), {})[uid] = reason
        return ns, job

    def fill(self, podgroups: Iterable[Obj]) -> None:
        for pg in podgroups:
            self.update(pg)

    def waiting_jobs(self, namespace: str) -> list[str]:
        """Names of the vcjobs of `namespace` whose PodGroup says why they wait (few: a JobFlow's
        controller looks only at these instead of at every vcjob of the flow)."""
        return [job for ns, job in self._by_job if ns == namespace]

    def reason(self, namespace: str, job: str, uid: str) -> tuple[str, str] | None:
        """(reason, message) of why the vcjob `namespace/job` (this uid: not a same-named earlier one) waits, if its
        PodGroup says."""
        return self._by_job.get((namespace, job), {}).get(uid)

    def reasons(self, jobs: Iterable[Obj]) -> dict[str, tuple[str, str]]:
        """vcjob name -> (reason, message) for those of `jobs` that wait and whose PodGroup says why."""
        out = {}
        for job in jobs:
            if meta.phase(job) not in WAITING_PHASES:
                continue
            hit = self._by_job.get((meta.namespace(job), meta.name(job)), {}).get(meta.uid(job))
            if hit is not None:
                out[meta.name(job)] = hit
        return out


def annotate(status: Obj, reasons: Mapping[str, tuple[str, str]]) -> Obj:
    """`status` with `reason`/`message` added to the condition of each named vcjob that is still
    Pending and has none of its own (a new dict when anything is added; `status` is not modified)."""
    conditions = status.get("conditions")
    if not reasons or not isinstance(conditions, dict):
        return status
    changed = {}
    for name, (reason, message) in reasons.items():
        cond = conditions.get(name)
        if not isinstance(cond, dict) or cond.get("phase", "") not in WAITING_PHASES:
            continue
        if cond.get("reason") or cond.get("message"):
            continue
        changed[name] = {**cond, "reason": reason, "message": message}
    if not changed:
        return status
    return {**status, "conditions": {**conditions, **changed}}
