"""The disruption controller: each PodDisruptionBudget's status, as kube-controller-manager's
(pkg/controller/disruption) computes it.

For a budget, its pods are the pods of its namespace its selector selects (policy/v1: no selector
selects none, `{}` all), whatever their phase. Then:
- `minAvailable` an integer: expectedPods = the pods' count, desiredHealthy = minAvailable;
- `maxUnavailable`, or `minAvailable` a percentage: expectedPods = the sum of the scales of the
  pods' controllers (ownerReference with controller: true), desiredHealthy = expected − maxUnavailable
  (at least 0), or minAvailable% of expected, rounded up. A pod without a controller is left out
  (Warning `UnmanagedPods`); a controller without a scale fails the sync (below). vclite serves no
  kind with a scale subresource — a vcjob (`jobs.batch.volcano.sh`) has none, as on a cluster —,
  so only an integer `minAvailable` counts vcjob pods;
- currentHealthy = the pods that are Ready, not being deleted, and not in `status.disruptedPods`
  (pods an eviction let go, for 2 minutes from the eviction; older entries, and entries of pods
  gone or being deleted, are dropped — a pod still there after 2 minutes gets a `NotDeleted`
  Warning, on the pod as upstream records it);
- disruptionsAllowed = currentHealthy − desiredHealthy, 0 if that is negative or expectedPods is 0;
  observedGeneration = the budget's generation; condition `DisruptionAllowed` True
  (`SufficientPods`) or False (`InsufficientPods`).
A sync that fails (a controller without a scale) keeps the counts, sets disruptionsAllowed 0 and the
condition False with reason `SyncFailed` and the error as message (failSafe), with a Warning
`CalculateExpectedPodCountFailed`. No pods: a Normal `NoPods` Event. The status is written only
when it changes. Budgets are looked at again when they or their pods change, and when the oldest
entry of disruptedPods expires.

Talks to the cluster only through the Client protocol; watch handlers only enqueue keys.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Callable, Hashable

from vclite.api import disruption, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
Key = tuple[str, str]
COMPONENT = "controllermanager"   # the source of its Events, as kube-controller-manager's
# (controller ownerReference, namespace) -> its scale; None: no such controller; SyncError: cannot tell
ScaleOf = Callable[[Obj, str], "int | None"]

# the kinds kube-controller-manager finds by lister (vclite serves none of them: never found)
_LISTED_CONTROLLERS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "Deployment"),
                       ("apps/v1", "StatefulSet")}


class SyncError(Exception):
    """The budget's status cannot be computed; the message is the condition's (failSafe)."""


@dataclasses.dataclass
class Outcome:
    status: Obj
    events: list[tuple[str, str, str]]      # (type, reason, message) to record on the budget
    recheck_at: _dt.datetime | None         # when the oldest disrupted pod's entry expires
    pod_events: list[tuple[str, str, str, str]] = dataclasses.field(default_factory=list)   # (pod, type, reason, msg)


def controller_ref(pod: Obj) -> Obj | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def scale_of(ref: Obj, namespace: str) -> int | None:
    """What kube-controller-manager finds for a pod's controller, among the kinds vclite serves:
    the listed kinds are never found; a served kind has no scale subresource; anything else is
    unknown to the API."""
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    if (api_version, kind) in _LISTED_CONTROLLERS:
        return None
    served = kinds.lookup(api_version, kind)
    if served is not None:
        raise SyncError(f"{served.resource} does not implement the scale subresource")
    raise SyncError(f'no matches for kind "{kind}" in version "{api_version}"')


def expected_scale(pods: list[Obj], scale: ScaleOf) -> tuple[int, list[str]]:
    """The sum of the scales of the pods' controllers (each counted once), and the pods without one."""
    scales: dict[str, int] = {}
    unmanaged: list[str] = []
    for pod in pods:
        ref = controller_ref(pod)
        if ref is None:
            unmanaged.append(meta.name(pod))
            continue
        uid = str(ref.get("uid") or "")
        if uid in scales:
            continue
        found = scale(ref, meta.namespace(pod))
        if found is None:
            raise SyncError(f'found no controllers for pod "{meta.name(pod)}"')
        scales[uid] = found
    return sum(scales.values()), unmanaged


def expected_and_desired(spec: Obj, pods: list[Obj], scale: ScaleOf) -> tuple[int, int, list[str]]:
    """(expectedPods, desiredHealthy, unmanaged pods) as getExpectedPodCount computes them."""
    max_unavailable, min_available = spec.get("maxUnavailable"), spec.get("minAvailable")
    if max_unavailable is not None:
        expected, unmanaged = expected_scale(pods, scale)
        desired = max(0, expected - disruption.scaled(max_unavailable, expected, True))
        return expected, desired, unmanaged
    if isinstance(min_available, int):
        return len(pods), min_available, []
    if isinstance(min_available, str):
        expected, unmanaged = expected_scale(pods, scale)
        return expected, disruption.scaled(min_available, expected, True), unmanaged
    return 0, 0, []


def prune_disrupted(disrupted: Obj, pods: list[Obj], now: _dt.datetime,
                    timeout: float = disruption.DELETION_TIMEOUT_SECONDS) -> tuple[Obj, list[str], _dt.datetime | None]:
    """(entries kept, pods not deleted in time, when the next kept entry expires), as buildDisruptedPodMap."""
    by_name = {meta.name(p): p for p in pods}
    kept: Obj = {}
    late: list[str] = []
    recheck: _dt.datetime | None = None
    for name, when in sorted((disrupted or {}).items()):
        pod = by_name.get(name)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        at = clock_mod.parse_time(when) if isinstance(when, str) else None
        if at is None:
            continue
        expires = at + _dt.timedelta(seconds=timeout)
        if expires < now:
            late.append(name)
            continue
        kept[name] = when
        recheck = expires if recheck is None or expires < recheck else recheck
    return kept, late, recheck


def count_healthy(pods: list[Obj], disrupted: Obj, now: _dt.datetime,
                  timeout: float = disruption.DELETION_TIMEOUT_SECONDS) -> int:
    healthy = 0
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        when = disrupted.get(meta.name(pod))
        at = clock_mod.parse_time(when) if isinstance(when, str) else None
        if at is not None and at + _dt.timedelta(seconds=timeout) > now:
            continue
        if disruption.pod_ready(pod):
            healthy += 1
    return healthy


def set_condition(conditions: list[Obj], allowed: bool, reason: str, message: str, generation: int,
                  now: str) -> list[Obj]:
    """apimeta.SetStatusCondition for DisruptionAllowed: lastTransitionTime moves only with the status."""
    status = "True" if allowed else "False"
    old = next((c for c in conditions if c.get("type") == disruption.DISRUPTION_ALLOWED), None)
    since = old.get("lastTransitionTime") if old is not None and old.get("status") == status else now
    cond: Obj = {"type": disruption.DISRUPTION_ALLOWED, "status": status, "observedGeneration": generation,
                 "lastTransitionTime": since, "reason": reason, "message": message}
    if not generation:
        cond.pop("observedGeneration")
    others = [c for c in conditions if c.get("type") != disruption.DISRUPTION_ALLOWED]
    return others + [cond] if old is None else [cond if c is old else c for c in conditions]


def allowed_condition(status: Obj, now: str) -> Obj:
    """`status` with its DisruptionAllowed condition as UpdateDisruptionAllowedCondition sets it."""
    allowed = (status.get("disruptionsAllowed") or 0) > 0
    reason = disruption.SUFFICIENT_PODS if allowed else disruption.INSUFFICIENT_PODS
    return {**status, "conditions": set_condition(list(status.get("conditions") or ()), allowed, reason, "",
                                                  int(status.get("observedGeneration") or 0), now)}


def compute(pdb: Obj, pods: list[Obj], now: _dt.datetime, scale: ScaleOf = scale_of) -> Outcome:
    """The budget's next status (trySync, or failSafe when it fails), the Events and the recheck time."""
    old = dict(pdb.get("status") or {})
    stamp = clock_mod.format_time(now) or ""
    notes: list[tuple[str, str, str]] = []
    if not pods:
        notes.append(("Normal", "NoPods", "No matching pods found"))
    spec = pdb.get("spec") or {}
    try:
        expected, desired, unmanaged = expected_and_desired(spec, pods, scale)
    except SyncError as exc:
        notes.append(("Warning", "CalculateExpectedPodCountFailed",
                      f"Failed to calculate the number of expected pods: {exc}"))
        generation = int(old.get("observedGeneration") or 0)
        failed = {**old, "disruptionsAllowed": 0, "conditions": set_condition(
            list(old.get("conditions") or ()), False, disruption.SYNC_FAILED, str(exc), generation, stamp)}
        return Outcome(failed, notes, None)
    if unmanaged:
        notes.append(("Warning", "UnmanagedPods", (
            f"Pods selected by this PodDisruptionBudget (selector: {_selector_text(spec.get('selector'))}) were "
            "found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may "
            "result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of "
            "the PDB to an integer value.")))
    kept, late, recheck = prune_disrupted(old.get("disruptedPods") or {}, pods, now)
    pod_notes = [(name, "Warning", "NotDeleted",
                  f"Pod was expected by PDB {meta.namespace(pdb)}/{meta.name(pdb)} to be deleted but it wasn't")
                 for name in late]
    healthy = count_healthy(pods, kept, now)
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    status: Obj = {"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
                   "expectedPods": expected}
    if kept:
        status["disruptedPods"] = kept
    generation = int((pdb.get("metadata") or {}).get("generation") or 0)
    if generation:
        status["observedGeneration"] = generation
    status["conditions"] = old.get("conditions") or []
    return Outcome(allowed_condition(status, stamp), notes, recheck, pod_notes)


def _selector_text(selector: Any) -> str:
    """The selector as Go's %v prints a *LabelSelector (roughly: `&LabelSelector{MatchLabels:…}`)."""
    if not isinstance(selector, dict):
        return "nil"
    labels = ",".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    exprs = ",".join(f"{e.get('key')} {e.get('operator')} {e.get('values') or []}"
                     for e in selector.get("matchExpressions") or ())
    return f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[{exprs}],}}"


class DisruptionController:
    """Keeps every PodDisruptionBudget's status (kube-controller-manager's `disruption` controller)."""

    name = "disruption-controller"
    retries_forever = True   # (kube-controller-manager's: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, recorder: events.RecordFn | None = None):
        self.client, self.clock = client, clock
        self.record = recorder or events.direct(client, clock)
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.budgets = informer_mod.Informer(client, kinds.PODDISRUPTIONBUDGET, self._on_budget)
        self.pods = informer_mod.Informer(client, kinds.POD, self._on_pod,
                                          indexers={"namespace": lambda p: meta.namespace(p)})

    def start(self) -> None:
        """Follow budgets; pods only once a budget exists (`_follow_pods`)."""
        self.budgets.start()
        for pdb in self.budgets.items():
            self._follow_pods()
            self.queue.add((meta.namespace(pdb), meta.name(pdb)))

    def _follow_pods(self) -> None:
        """Start following pods (a list, then the watch; once). Until a budget exists no pod is selected
        by one, so a run without budgets pays nothing for this controller on each pod event."""
        self.pods.start()

    def stop(self) -> None:
        self.budgets.stop()
        self.pods.stop()

    def _on_budget(self, ev: client_mod.WatchEvent) -> None:
        if ev.type != client_mod.EventType.DELETED:
            self._follow_pods()
            self.queue.add((meta.namespace(ev.object), meta.name(ev.object)))

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        ns = meta.namespace(ev.object)
        labels = [meta.labels(ev.object)] + ([meta.labels(ev.old)] if ev.old is not None else [])
        for pdb in self.budgets.items(ns):
            if any(disruption.selects(pdb, lb) for lb in labels):
                self.queue.add((ns, meta.name(pdb)))

    def _pods_of(self, pdb: Obj) -> list[Obj]:
        return [p for p in self.pods.by_index("namespace", meta.namespace(pdb))
                if disruption.selects(pdb, meta.labels(p))]

    def sync(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        pdb = self.budgets.get(ns, name)
        if pdb is None:
            return
        now = self.clock.now()
        outcome = compute(pdb, self._pods_of(pdb), now)
        for event_type, reason, message in outcome.events:
            self.record(pdb, event_type, reason, message, COMPONENT)
        for pod_name, event_type, reason, message in outcome.pod_events:
            pod = self.pods.get(ns, pod_name)
            if pod is not None:
                self.record(pod, event_type, reason, message, COMPONENT)
        if outcome.recheck_at is not None:
            self.queue.add_after(key, max(0.0, (outcome.recheck_at - now).total_seconds()) + 0.001, chore=True)
        if outcome.status == (pdb.get("status") or {}):
            return
        try:
            self.client.update_status({**pdb, "status": outcome.status})
        except errors.NotFound:
            pass     # deleted meanwhile
        except errors.Conflict:
            self.queue.add(key)   # changed meanwhile (an eviction): look again at the new version
