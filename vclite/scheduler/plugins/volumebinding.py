"""kube-scheduler's VolumeBinding PreFilter, as Volcano's predicates plugin runs it (PrePredicate): a pod is
not placed while a claim its volumes name is missing, being deleted or not Bound.

kube's reasons (volume_binding.go podHasPVCs, GetPodVolumeClaims), as Volcano's handleSkipPrePredicatePlugin
words the failure (`plugin VolumeBinding pre-predicates failed <reason>`), which allocate records on every node:
- `persistentvolumeclaim "data" not found`;
- `persistentvolumeclaim "data" is being deleted`;
- `pod has unbound immediate PersistentVolumeClaims` (every claim binds at once here: vclite's volume controller
  provisions or binds a claim when it is made, as a class with volumeBindingMode Immediate does).
The check is registered only when the session knows the claims (ClusterState.claims), which the scheduler's shell
gives it only while some pod to place names a claim; then a pod without claims costs a look at its volume list,
and claims are looked up in an index of the session's claims made on the first pod that names one.

Must not: read the API or change node state.
"""
from __future__ import annotations

from typing import Any, Iterable

from vclite.api import meta, storage

Obj = dict[str, Any]
NAME = "VolumeBinding"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_EMPTY: Obj = {}


def not_found(claim: str) -> str:
    return f'persistentvolumeclaim "{claim}" not found'


def being_deleted(claim: str) -> str:
    return f'persistentvolumeclaim "{claim}" is being deleted'


def failed(reason: str) -> str:
    """Volcano's PrePredicate error for a failed PreFilter of VolumeBinding."""
    return f"plugin {NAME} pre-predicates failed {reason}"


class Claims:
    """The session's claims by (namespace, name), indexed on first use."""

    def __init__(self, claims: Iterable[Obj]):
        self._source = claims
        self._index: dict[tuple[str, str], Obj] | None = None

    def get(self, namespace: str, name: str) -> Obj | None:
        if self._index is None:
            self._index = {(meta.namespace(c), meta.name(c)): c for c in self._source}
        return self._index.get((namespace, name))


def pre_filter(pod: Obj, claims: Claims) -> str | None:
    """Why `pod` cannot be placed for its claims (kube's reason), or None."""
    volumes = (pod.get("spec") or _EMPTY).get("volumes")
    if not volumes:
        return None
    unbound = False
    namespace = ""
    for vol in volumes:
        source = vol.get("persistentVolumeClaim") if isinstance(vol, dict) else None
        if not source:
            continue
        name = source.get("claimName") or ""
        namespace = namespace or meta.namespace(pod)
        claim = claims.get(namespace, name)
        if claim is None:
            return not_found(name)
        if meta.is_deleting(claim):
            return being_deleted(name)
        if (claim.get("status") or {}).get("phase") != storage.CLAIM_BOUND or \
                not (claim.get("spec") or {}).get("volumeName"):
            unbound = True
    return UNBOUND_IMMEDIATE if unbound else None
