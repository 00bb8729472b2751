"""The resourcequota controller (kube-controller-manager's): each ResourceQuota's `status.hard` is its
`spec.hard`, and `status.used` what its namespace uses of each of those names now.

Usage is counted as admission counts it (api/quota.py), over the pods a quota's scopes match (every
pod without scopes): those not Succeeded/Failed for compute resources and `pods`, all of them for
`count/pods`; stored objects for `count/<resource>` and the legacy `configmaps`/`secrets`/`services`/
`resourcequotas`/`persistentvolumeclaims` (not by a scoped quota), Services' `services.loadbalancers`/
`services.nodeports`, and PersistentVolumeClaims' `requests.storage` and per-class
`<class>.storageclass.storage.k8s.io/requests.storage|persistentvolumeclaims`. A namespace is recounted when
one of its quotas changes, when one of its pods is created, deleted or reaches Succeeded/Failed, when another
object of its is created or deleted, when a Service's type or ports change and when a claim's request,
allocation or class changes; the status is written only when it differs. Kubernetes also recounts every 5 minutes; nothing here can
drift, so there is no period.

Talks to the API only through the Client protocol; watch handlers only enqueue namespaces.
"""
from __future__ import annotations

from typing import Any, Hashable

from vclite.api import kinds, meta
from vclite.api import quota as quota_mod
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
BY_NAMESPACE = "namespace"


def _namespace(obj: Obj) -> str:
    return meta.namespace(obj)


def status_of(quota: Obj, pods: list[Obj], counts: dict[str, quota_mod.Fraction]) -> Obj:
    """The status the controller writes for `quota`, given its namespace's pods and object counts."""
    spec = quota.get("spec") or {}
    hard = dict(spec.get("hard") or {})
    if quota_mod.is_scoped(spec):   # (its scopes select pods; it counts no other kind)
        used = quota_mod.usage(hard, [p for p in pods if quota_mod.pod_matches(spec, p)], {})
    else:
        used = quota_mod.usage(hard, pods, counts)
    return {"hard": hard, "used": {name: quota_mod.show(value, name) for name, value in used.items()}}


# kinds whose objects charge more than their count, and how much (a change of it is a recount)
_CHARGED = {kinds.SERVICE.kind: quota_mod.service_usage, kinds.PERSISTENTVOLUMECLAIM.kind: quota_mod.claim_usage}


def _usage_changed(ev: client_mod.WatchEvent) -> bool:
    charge = _CHARGED.get(ev.kind.kind)
    return charge is not None and charge(ev.old or {}) != charge(ev.object)


class ResourceQuotaController:
    name = "resourcequota-controller"
    retries_forever = True   # (kube-controller-manager's: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.quotas = informer_mod.Informer(client, kinds.RESOURCEQUOTA, self._on_quota,
                                            indexers={BY_NAMESPACE: _namespace})
        self.pods = informer_mod.Informer(client, kinds.POD, self._on_pod, indexers={BY_NAMESPACE: _namespace})
        self._counted = [k for k in kinds.ALL
                         if k.namespaced and k.kind not in (kinds.POD.kind, kinds.RESOURCEQUOTA.kind)]
        self._subs: list[client_mod.Subscription] = []

    def start(self) -> None:
        """Follow quotas; pods and the counted kinds only once a quota exists (`_follow_usage`)."""
        self.quotas.start()
        for ns in self.quotas.index_values(BY_NAMESPACE):
            self._follow_usage()
            self.queue.add(ns)

    def _follow_usage(self) -> None:
        """Start following pods and the kinds a quota counts (once). Until a quota exists nothing is
        counted, so a run without quotas pays nothing for this controller on each write."""
        if self._subs:
            return
        self.pods.start()
        self._subs = [self.client.watch(k, self._on_object) for k in self._counted]

    def stop(self) -> None:
        self.quotas.stop()
        self.pods.stop()
        for sub in self._subs:
            sub.cancel()
        self._subs = []

    def _has_quota(self, namespace: str) -> bool:
        return bool(self.quotas.by_index(BY_NAMESPACE, namespace))

    def _on_quota(self, ev: client_mod.WatchEvent) -> None:
        if ev.type != client_mod.EventType.BOOKMARK:
            if ev.type != client_mod.EventType.DELETED:
                self._follow_usage()
            self.queue.add(meta.namespace(ev.object))
            # (its own status writes come back here too: the recount then finds nothing to write)

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        ns = meta.namespace(ev.object)
        if not self._has_quota(ns):
            return
        if ev.type in (client_mod.EventType.ADDED, client_mod.EventType.DELETED) or \
                quota_mod.counts_compute(ev.old or {}) != quota_mod.counts_compute(ev.object):
            self.queue.add(ns)

    def _on_object(self, ev: client_mod.WatchEvent) -> None:
        if ev.type in (client_mod.EventType.ADDED, client_mod.EventType.DELETED) or (
                ev.type == client_mod.EventType.MODIFIED and _usage_changed(ev)):
            ns = meta.namespace(ev.object)
            if self._has_quota(ns):
                self.queue.add(ns)

    def _list(self, kind: kinds.Kind, namespace: str) -> list[Obj]:
        """The namespace's objects of a counted kind (quotas from the informer)."""
        if kind is kinds.RESOURCEQUOTA:
            return self.quotas.by_index(BY_NAMESPACE, namespace)
        return self.client.list(kind, namespace)

    def sync(self, key: Hashable) -> None:
        ns = str(key)
        quotas = self.quotas.by_index(BY_NAMESPACE, ns)
        if not quotas:
            return
        names = {n for q in quotas for n in ((q.get("spec") or {}).get("hard") or {})}
        pods = self.pods.by_index(BY_NAMESPACE, ns) if quota_mod.needs_pods(names) else []
        counts = quota_mod.object_counts(names, lambda k: self._list(k, ns))
        for q in quotas:
            if meta.is_deleting(q):
                continue
            status = status_of(q, pods, counts)
            if status == (q.get("status") or {}):
                continue
            try:
                self.client.update_status({**q, "status": status})
            except errors.NotFound:
                continue
            # (a Conflict: the quota changed meanwhile; the runtime retries and its event requeues it)
