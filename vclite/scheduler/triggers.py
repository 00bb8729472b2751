"""When may a watch event give the scheduler new work? A pure function over one event.

`urgency(ev)` says NOW when something schedulable may have changed (a session should run at once),
LATER when only the PodGroup bookkeeping a session writes follows from it (its phase and counts:
a session within STATUS_DELAY will do), NONE otherwise. There is no periodic session:
- Pod: created pending for us, finished, deleted or being deleted, gated or moved to another
  group or scheduler -> NOW; bound, or Pending -> Running on its node -> LATER (it frees nothing
  and needs nothing; the binding session already counted our own binds). Our own condition
  patches change none of these.
- PodGroup: created, deleted (unless Completed: its tasks all finished, it holds and reserves
  nothing), spec changed, or phase changed.
- Queue: created, deleted, spec changed, or state changed (not our `allocated` writes).
- Node: created, deleted, allocatable/capacity, labels, unschedulable or Ready changed.
- HyperNode: created, deleted or spec changed (not its status).
- Numatopology: created, deleted or spec changed (its free CPUs, policies: the numa-aware plugin's).
- PriorityClass: any change.
- PodDisruptionBudget: created, deleted, spec, disruptionsAllowed or disruptedPods changed (the pdb
  plugin's victims).
- ResourceQuota: created, deleted, or its status (hard, used) changed — only when something in the
  session reads quotas (`reads_quotas(conf)`: the resourcequota plugin, or an extender told them at session
  open); otherwise no decision depends on them, and the resourcequota controller's `status.used` writes
  (one per pod that starts or ends in a namespace with a quota) would each cost a session.
- PersistentVolumeClaim: created, deleted, its phase changed (Bound: a pod waiting for it may be placed)
  or its deletion began (the predicates plugin's VolumeBinding PreFilter).
- Namespace: labels changed (a pod affinity term's namespaceSelector may now select it, or no
  longer); a Namespace created or deleted has no pods yet, or no more: their own events count.

Must not: enqueue or read anything; the shell does.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

from vclite.api import batch, kinds, meta, scheduling
from vclite.apiserver import client as client_mod

if TYPE_CHECKING:
    from vclite.scheduler import conf as conf_mod

Obj = dict[str, Any]
STATUS_DELAY = 0.5   # seconds a LATER wake may wait for a session (Volcano's period is 1 s)


class Wake(enum.IntEnum):
    NONE = 0
    LATER = 1
    NOW = 2


def _get(obj: Obj | None, *path: str) -> Any:
    cur: Any = obj or {}
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return cur


def _ready(node: Obj | None) -> str:
    for c in _get(node, "status", "conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") or ""
    return ""


_EMPTY: Obj = {}


def _part(obj: Obj | None, name: str) -> Obj:
    part = obj.get(name) if obj else None
    return part if isinstance(part, dict) else _EMPTY


def _pod_fields(pod: Obj | None) -> tuple:
    md, spec, status = _part(pod, "metadata"), _part(pod, "spec"), _part(pod, "status")
    gates = spec.get("schedulingGates")   # (their names: removing one of two gates may let Volcano ungate it)
    names = tuple(g.get("name") for g in gates if isinstance(g, dict)) if isinstance(gates, list) else bool(gates)
    return (status.get("phase"), spec.get("nodeName"), md.get("deletionTimestamp"), names,
            _part(md, "annotations").get(batch.GROUP_NAME), spec.get("schedulerName"))


def _pod_urgency(ev: client_mod.WatchEvent, scheduler_name: str) -> Wake:
    pod = ev.object
    ours = (_get(pod, "spec", "schedulerName") or "") == scheduler_name
    if ev.type in (client_mod.EventType.ADDED, client_mod.EventType.DELETED):
        return Wake.NOW if _get(pod, "spec", "nodeName") or ours else Wake.NONE
    old, new = _pod_fields(ev.old), _pod_fields(pod)
    if old == new:
        return Wake.NONE
    (old_phase, old_node, *old_rest), (new_phase, new_node, *new_rest) = old, new
    if old_rest != new_rest or new_phase not in ("Pending", "Running") or (old_node and old_node != new_node):
        return Wake.NOW
    if old_phase == new_phase or (old_phase, new_phase) == ("Pending", "Running"):
        return Wake.LATER   # bound, or started where it was bound: bookkeeping only
    return Wake.NOW


_FIELDS = {
    kinds.PODGROUP.kind: lambda o: (_get(o, "spec"), _get(o, "status", "phase")),
    kinds.QUEUE.kind: lambda o: (_get(o, "spec"), _get(o, "status", "state")),
    kinds.HYPERNODE.kind: lambda o: (_get(o, "spec"),),
    kinds.NUMATOPOLOGY.kind: lambda o: (_get(o, "spec"),),
    kinds.PODDISRUPTIONBUDGET.kind: lambda o: (_get(o, "spec"), _get(o, "status", "disruptionsAllowed"),
                                               _get(o, "status", "disruptedPods")),
    kinds.RESOURCEQUOTA.kind: lambda o: (_get(o, "status"),),
    kinds.PERSISTENTVOLUMECLAIM.kind: lambda o: (_get(o, "status", "phase"), _get(o, "metadata", "deletionTimestamp")),
    kinds.NODE.kind: lambda o: (_get(o, "spec"), _get(o, "status", "allocatable"), _get(o, "status", "capacity"),
                                meta.labels(o or {}), _ready(o)),
}


QUOTA_READERS = ("resourcequota",)   # plugins whose decisions read ResourceQuotas (the extender: see below)


def reads_quotas(conf: "conf_mod.SchedulerConf") -> bool:
    """Whether a session under `conf` reads ResourceQuotas: the resourcequota plugin, or the extender plugin
    with an onSessionOpenVerb (its request carries every namespace's quotas, which its answers may follow)."""
    for tier in conf.tiers:
        for option in tier:
            if option.name in QUOTA_READERS:
                return True
            if option.name == "extender" and getattr(option.args, "on_session_open", ""):
                return True
    return False


def urgency(ev: client_mod.WatchEvent, scheduler_name: str = batch.DEFAULT_SCHEDULER,
            quotas: bool = True) -> Wake:
    """`quotas`: whether the session reads ResourceQuotas (reads_quotas); if not, their events are NONE."""
    if ev.type == client_mod.EventType.BOOKMARK:
        return Wake.NONE
    if not quotas and ev.kind.kind == kinds.RESOURCEQUOTA.kind:
        return Wake.NONE
    if ev.kind.kind == kinds.POD.kind:
        return _pod_urgency(ev, scheduler_name)
    if ev.kind.kind == kinds.PRIORITYCLASS.kind:
        return Wake.NOW
    if ev.kind.kind == kinds.NAMESPACE.kind:
        changed = ev.type == client_mod.EventType.MODIFIED and meta.labels(ev.old or {}) != meta.labels(ev.object)
        return Wake.NOW if changed else Wake.NONE
    fields = _FIELDS.get(ev.kind.kind)
    if fields is None:
        return Wake.NONE
    if ev.type == client_mod.EventType.DELETED and ev.kind.kind == kinds.PODGROUP.kind and \
            _get(ev.object, "status", "phase") == scheduling.PodGroupPhase.COMPLETED:
        return Wake.NONE   # (a finished job's clean-up)
    if ev.type != client_mod.EventType.MODIFIED:
        return Wake.NOW
    return Wake.NOW if fields(ev.old) != fields(ev.object) else Wake.NONE


def wakes_scheduler(ev: client_mod.WatchEvent, scheduler_name: str = batch.DEFAULT_SCHEDULER,
                    quotas: bool = True) -> bool:
    """Whether the event calls for a session at all (now or within STATUS_DELAY)."""
    return urgency(ev, scheduler_name, quotas) != Wake.NONE
