"""The eviction subresource's decision (pods/<name>/eviction, policy/v1 Eviction), as kube-apiserver's
EvictionREST makes it, over the Client protocol.

- A pod that is Pending, Succeeded, Failed or already being deleted is deleted at once: no budget
  is consulted (it is no disruption).
- Otherwise the PodDisruptionBudgets of its namespace whose selector selects it (policy/v1: none
  for an absent selector, all for `{}`): more than one is an error (500, `This pod has more than
  one PodDisruptionBudget, which the eviction subresource does not support.`); none: delete.
- A pod that is not Ready is deleted without spending the budget when the budget's
  `unhealthyPodEvictionPolicy` is AlwaysAllow, or (IfHealthyBudget, the default) when
  currentHealthy ≥ desiredHealthy > 0.
- Else the budget decides (checkAndDecrement): a status older than the spec (observedGeneration
  below generation) → 429 `... is still being processed by the server` (retry after 10 s);
  disruptionsAllowed negative, or more than 2,000 entries in disruptedPods → 403; 0 → 429
  `Cannot evict pod as it would violate the pod's disruption budget.` with the cause `The disruption
  budget <name> needs <desired> healthy pods and has <current> currently`. Otherwise the budget's
  status is written with one disruption less and the pod under `disruptedPods` (the disruption
  controller then counts it unhealthy until it is gone, for 2 minutes at most), and the pod is
  deleted.
- Before the delete, the pod gets the condition DisruptionTarget (reason EvictionByEvictionAPI),
  as with Kubernetes' PodDisruptionConditions (GA in 1.31).
A dry run decides the same and writes nothing. vclite's API is served by one thread, so nothing
changes between the reads and the writes (kube-apiserver retries on conflicts instead).
"""
from __future__ import annotations

from typing import Any

from vclite.api import disruption, kinds, meta
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                     "message": "Eviction API: evicting"}


class MultipleBudgets(errors.ApiError):
    code = 500
    reason = ""   # (kube-apiserver's Status for it has none)


def _still_processing(name: str) -> errors.TooManyRequests:
    return errors.TooManyRequests(VIOLATION, 10, [{"reason": disruption.DISRUPTION_BUDGET_CAUSE, "message": (
        f"The disruption budget {name} is still being processed by the server.")}])


def _forbidden(name: str, why: str) -> errors.Forbidden:
    return errors.Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: {why}')


def can_ignore_budgets(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Pending", "Succeeded", "Failed") or bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def budgets_of(pod: Obj, budgets: list[Obj]) -> list[Obj]:
    labels = meta.labels(pod)
    return [b for b in budgets if meta.namespace(b) == meta.namespace(pod) and disruption.selects(b, labels)]


def spends_budget(pod: Obj, pdb: Obj) -> bool:
    """False when an unready pod may go without spending the budget (unhealthyPodEvictionPolicy)."""
    if disruption.pod_ready(pod):
        return True
    if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == disruption.ALWAYS_ALLOW:
        return False
    status = pdb.get("status") or {}
    current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
    return not (current >= desired and desired > 0)


def decrement(pdb: Obj, pod_name: str, now: str) -> Obj:
    """checkAndDecrement: the budget's new status, or the refusal raised."""
    name, status = meta.name(pdb), dict(pdb.get("status") or {})
    if int(status.get("observedGeneration") or 0) < int((pdb.get("metadata") or {}).get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise _forbidden(name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > disruption.MAX_DISRUPTED_PODS:
        raise _forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        raise errors.TooManyRequests(VIOLATION, 0, [{"reason": disruption.DISRUPTION_BUDGET_CAUSE, "message": (
            f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods and has "
            f"{int(status.get('currentHealthy') or 0)} currently")}])
    status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        conditions = [c for c in status.get("conditions") or () if c.get("type") != disruption.DISRUPTION_ALLOWED]
        old = next((c for c in status.get("conditions") or () if c.get("type") == disruption.DISRUPTION_ALLOWED), {})
        cond = {"type": disruption.DISRUPTION_ALLOWED, "status": "False",
                "observedGeneration": status.get("observedGeneration"),
                "lastTransitionTime": old.get("lastTransitionTime") if old.get("status") == "False" else now,
                "reason": disruption.INSUFFICIENT_PODS, "message": ""}
        status["conditions"] = conditions + [{k: v for k, v in cond.items() if v is not None}]
    status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: now}
    return status


def evict(client: Any, clock: clock_mod.Clock, namespace: str, name: str, grace_period: int | None = None,
          dry_run: bool = False) -> None:
    """Evict the pod, or raise the ApiError kube-apiserver answers with (404 for a missing pod)."""
    pod = client.get(kinds.POD, namespace, name)
    if not can_ignore_budgets(pod):
        matching = budgets_of(pod, client.list(kinds.PODDISRUPTIONBUDGET, namespace))
        if len(matching) > 1:
            raise MultipleBudgets(MULTIPLE)
        if matching and spends_budget(pod, matching[0]):
            status = decrement(matching[0], name, clock_mod.format_time(clock.now()) or "")
            if not dry_run:
                client.update_status({**matching[0], "status": status})
    if dry_run:
        return
    conditions = [c for c in (pod.get("status") or {}).get("conditions") or ()
                  if c.get("type") != DISRUPTION_TARGET["type"]]
    stamp = {**DISRUPTION_TARGET, "lastProbeTime": None, "lastTransitionTime": clock_mod.format_time(clock.now())}
    generation = (pod.get("metadata") or {}).get("generation")
    if isinstance(generation, int) and generation > 0:   # (as kube's: the pod's generation it was set for)
        stamp["observedGeneration"] = generation
    try:
        client.update_status({**pod, "status": {**(pod.get("status") or {}), "conditions": conditions + [stamp]}})
    except errors.Conflict:
        pass   # (one thread: cannot happen; the delete below still evicts)
    client.delete(kinds.POD, namespace, name, grace_period=grace_period)
