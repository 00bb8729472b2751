"""The PodGroup controller: a pod for Volcano's scheduler that no vcjob made gets a PodGroup of its own.

Volcano's pkg/controllers/podgroup (createNormalPodPGIfNotExist): a pod with `schedulerName:
volcano` and no `scheduling.k8s.io/group-name` annotation gets the PodGroup
`podgroup-<uid of its controller owner, or its own>` — minMember 1, the pod's requests as
minResources, its priorityClassName, the queue of its `scheduling.volcano.sh/queue-name`
annotation (else the default queue), owned by the pod's controller or the pod itself so it goes
with it — and then the annotation naming that group. The scheduler then places the pod like any
gang of one, and the executor runs it. (Volcano also does this for ReplicaSets and StatefulSets,
which vclite does not serve.)

Talks to the cluster only through the Client protocol; the watch handler only enqueues keys.
"""
from __future__ import annotations

from typing import Any, Hashable

from vclite.api import batch, kinds, meta, resources, scheduling
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
SCHEDULER_NAME = "volcano"
PREFIX = "podgroup-"
QUEUE_ANNOTATION = scheduling.QUEUE_NAME_ANNOTATION


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
    return {"apiVersion": kinds.PODGROUP.api_version, "kind": kinds.PODGROUP.kind,
            "metadata": {"name": group_name(pod), "namespace": meta.namespace(pod), "ownerReferences": list(refs)},
            "spec": pg_spec, "status": {"phase": "Pending"}}


class PodGroupController:
    name = "podgroup-controller"

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock)
        self.pods = informer_mod.Informer(client, kinds.POD, self._on_pod)

    def start(self) -> None:
        self.pods.start()
        for pod in self.pods.items():
            if wants_group(pod):
                self.queue.add(meta.key(pod))

    def stop(self) -> None:
        self.pods.stop()

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        if ev.type != client_mod.EventType.DELETED and wants_group(ev.object):
            self.queue.add(meta.key(ev.object))

    def sync(self, key: Hashable) -> None:
        ns, _, name = str(key).partition("/")
        pod = self.pods.get(ns, name)
        if pod is None or not wants_group(pod):
            return
        group = build(pod)
        try:
            self.client.create(group)
        except errors.AlreadyExists:
            pass
        try:
            self.client.patch(kinds.POD, ns, name, {"metadata": {"annotations": {batch.GROUP_NAME: meta.name(group)}}})
        except errors.NotFound:
            pass   # deleted meanwhile (its PodGroup goes with it)
