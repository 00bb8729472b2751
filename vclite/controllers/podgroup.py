"""The PodGroup controller: a pod for Volcano's scheduler that no vcjob made gets a PodGroup of its own.

Volcano's pkg/controllers/podgroup (createNormalPodPGIfNotExist): a pod with `schedulerName:
volcano` and no `scheduling.k8s.io/group-name` annotation gets the PodGroup
`podgroup-<uid of its controller owner, or its own>` — minMember 1, the pod's requests as
minResources, its priorityClassName, the queue of its `scheduling.volcano.sh/queue-name`
annotation (else the default queue), owned by the pod's controller or the pod itself so it goes
with it; the pod's `volcano.sh/preemptable`, `cooldown-time`, `revocable-zone` and disruption budget
(`jdb-min-available`, else `jdb-max-unavailable`) annotations and its `preemptable`/`cooldown-time`
labels copied; a `networkTopology` from its `volcano.sh/network-topology-mode` (hard or soft, anything
else hard) and `volcano.sh/network-topology-highest-tier` (an integer, else left out) annotations —
and then the annotation naming that group. The scheduler then places the pod like any
gang of one, and the executor runs it. (Volcano also does this for ReplicaSets and StatefulSets,
which vclite does not serve, and so never reads an owner's annotations: `--inherit-owner-annotations`
and `scheduling.volcano.sh/group-min-member` on a Deployment have nothing to act on.)

A create a ResourceQuota refuses (`count/podgroups.scheduling.volcano.sh`) is retried as any failure, but as
one only something else can let succeed (errors.Expected.waits_on_others: a `vcctl run` with nothing else left
stops as stuck at once instead of after the 15 retries' back-off, and logs it once); the API's words are kept
per pod (`refusals`: Volcano records no Event, only its log) for the run's report of why the pod waits.

Only added pods are looked at, as Volcano's controller registers an AddFunc alone (the pods listed at its start
count as added): a pod changed later — its group annotation removed — is left as it is until a restart.
Talks to the cluster only through the Client protocol; the watch handler only enqueues keys.
"""
from __future__ import annotations

import re
from typing import Any, Hashable

from vclite.api import batch, kinds, meta, resources, scheduling
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

EXCEEDED_QUOTA = "exceeded quota"   # kube-apiserver's words in a 403 a ResourceQuota gives

Obj = dict[str, Any]
SCHEDULER_NAME = "volcano"
PREFIX = "podgroup-"
QUEUE_ANNOTATION = scheduling.QUEUE_NAME_ANNOTATION
TOPOLOGY_MODE = "volcano.sh/network-topology-mode"
TOPOLOGY_HIGHEST_TIER = "volcano.sh/network-topology-highest-tier"
COPIED_ANNOTATIONS = (batch.PREEMPTABLE, batch.COOLDOWN_TIME, batch.REVOCABLE_ZONE)
COPIED_LABELS = (batch.PREEMPTABLE, batch.COOLDOWN_TIME)
_GO_INT = re.compile(r"[+-]?[0-9]+")   # strconv.Atoi's syntax
_INT64 = 2 ** 63


def wants_group(pod: Obj) -> bool:
    """A pod for Volcano's scheduler that belongs to no PodGroup yet (and is not going away)."""
    return ((pod.get("spec") or {}).get("schedulerName") == SCHEDULER_NAME
            and not meta.annotations(pod).get(batch.GROUP_NAME) and not meta.is_deleting(pod))


def _controller_ref(pod: Obj) -> Obj | None:
    return next((r for r in (pod.get("metadata") or {}).get("ownerReferences") or []
                 if isinstance(r, dict) and r.get("controller")), None)


def group_name(pod: Obj) -> str:
    """Volcano's GeneratePodgroupName: after the pod's controller owner, else the pod."""
    owner = _controller_ref(pod)
    return PREFIX + str((owner or {}).get("uid") or meta.uid(pod))


def network_topology(pod: Obj) -> Obj | None:
    """Volcano's parseNetworkTopologyFromPod: the PodGroup's networkTopology from the pod's annotations
    (None when it has neither); the mode lower-cased, `hard` unless it says `soft`; the tier when
    strconv.Atoi reads it and it is not negative (upstream copies a negative one, and the PodGroup it
    then makes is refused by the CRD's minimum on every retry, so the pod never runs)."""
    ann = meta.annotations(pod)
    if TOPOLOGY_MODE not in ann and TOPOLOGY_HIGHEST_TIER not in ann:
        return None
    mode = str(ann.get(TOPOLOGY_MODE, "")).lower()
    nt: Obj = {"mode": mode if mode in ("hard", "soft") else "hard"}
    tier = ann.get(TOPOLOGY_HIGHEST_TIER)
    if isinstance(tier, str) and _GO_INT.fullmatch(tier) and 0 <= int(tier) < _INT64:
        nt["highestTierAllowed"] = int(tier)   # (a negative one too: the PodGroup CRD's minimum is 0)
    return nt


def _copied(source: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: source[k] for k in keys if k in source}


def build(pod: Obj) -> Obj:
    """The PodGroup Volcano's buildPodGroupFromPod makes for `pod` (pure)."""
    spec = pod.get("spec") or {}
    owner = _controller_ref(pod)
    refs = (pod.get("metadata") or {}).get("ownerReferences") if owner else [{
        "apiVersion": "v1", "kind": "Pod", "name": meta.name(pod), "uid": meta.uid(pod),
        "controller": True, "blockOwnerDeletion": True}]
    pg_spec: Obj = {"minMember": 1, "minResources": resources.to_quota_list(resources.pod_requests(pod),
                                                                  resources.pod_limits(pod))}
    if spec.get("priorityClassName"):
        pg_spec["priorityClassName"] = spec["priorityClassName"]
    queue = meta.annotations(pod).get(QUEUE_ANNOTATION)
    if queue:
        pg_spec["queue"] = queue
    nt = network_topology(pod)
    if nt is not None:
        pg_spec["networkTopology"] = nt
    md: Obj = {"name": group_name(pod), "namespace": meta.namespace(pod), "ownerReferences": list(refs)}
    pod_ann = meta.annotations(pod)
    annotations = _copied(pod_ann, COPIED_ANNOTATIONS)
    annotations |= _copied(pod_ann, (batch.JDB_MIN_AVAILABLE,) if batch.JDB_MIN_AVAILABLE in pod_ann
                           else (batch.JDB_MAX_UNAVAILABLE,))
    labels = _copied(meta.labels(pod), COPIED_LABELS)
    if annotations:
        md["annotations"] = annotations
    if labels:
        md["labels"] = labels
    return {"apiVersion": kinds.PODGROUP.api_version, "kind": kinds.PODGROUP.kind,
            "metadata": md, "spec": pg_spec, "status": {"phase": "Pending"}}


class PodGroupController:
    name = "podgroup-controller"
    retries_forever = True   # (Volcano's pg_controller: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.pods = informer_mod.Informer(client, kinds.POD, self._on_pod)
        self.refusals: dict[str, str] = {}   # pod key -> why the API refused its PodGroup (the latest try)

    def start(self) -> None:
        self.pods.start()
        for pod in self.pods.items():
            if wants_group(pod):
                self.queue.add(meta.key(pod))

    def stop(self) -> None:
        self.pods.stop()

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        # (pod adds only, as Volcano's informer handler: a pod whose group annotation is taken away later, or whose
        # PodGroup is deleted, is not looked at again until the controller starts again and lists it)
        if ev.type == client_mod.EventType.ADDED and wants_group(ev.object):
            self.queue.add(meta.key(ev.object))

    def sync(self, key: Hashable) -> None:
        ns, _, name = str(key).partition("/")
        pod = self.pods.get(ns, name)
        if pod is None or not wants_group(pod):
            self.refusals.pop(str(key), None)
            return
        group = build(pod)
        try:
            self.client.create(group)
        except errors.AlreadyExists:
            pass
        except errors.Forbidden as exc:   # (retried for ever all the same, as Volcano's AddRateLimited)
            self.refusals[str(key)] = f"PodGroup not created: {exc}"
            if EXCEEDED_QUOTA not in str(exc):
                raise
            raise errors.Expected(f"PodGroup of pod {ns}/{name} not created: {exc}", waits_on_others=True) from None
        self.refusals.pop(str(key), None)
        try:
            self.client.patch(kinds.POD, ns, name, {"metadata": {"annotations": {batch.GROUP_NAME: meta.name(group)}}})
        except errors.NotFound:
            pass   # deleted meanwhile (its PodGroup goes with it)
