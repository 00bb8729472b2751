"""The volume controller: kube-controller-manager's persistentvolume controller (binding, vclite's
provisioner, reclaim) with its pvc-protection and pv-protection controllers.

Rules (kube's pv_controller.go; the decisions are api/storage.py's `decide_claim`, `decide_volume`, `reclaim`):
- A claim not yet bound binds to the volume its spec.volumeName names (Pending, without an error, while that
  volume does not exist; a Warning `VolumeMismatch` when it does not satisfy the claim), else to the volume
  pre-bound to it or the smallest that fits (class, volume mode, capacity, access modes, selector), else:
  no class (`""`) → stays Pending (Normal `FailedBinding`); a class → vclite's provisioner makes a directory
  `<workdir>/<namespace>/_pvc/<claim>` (mode 0777, as a local-path provisioner makes it) and a hostPath volume
  `pvc-<claim uid>` on it, with Events `Provisioning`/`ProvisioningSucceeded` as external provisioners emit them
  and the claim's storage-provisioner annotations as kube's controller sets them, then binds the two.
  Binding writes both sides as kube does: the volume's claimRef (annotated bound-by-controller unless a user
  pre-bound it) and phase Bound, then the claim's spec.volumeName and bind-completed (and bound-by-controller
  unless the user named the volume) and status Bound with the volume's access modes and capacity.
- A volume without a claimRef, or pre-bound to a claim not bound yet (no uid), is Available. A bound volume
  whose claim is gone is Released, then by its reclaim policy (Retain when unset, kube's default): Retain
  keeps it; Delete deletes it (and the directory, when vclite provisioned it); Recycle empties its directory
  and makes it Available again. A Bound claim whose volume is gone is Lost (Warning `ClaimLost`).
- A Bound claim whose request grew (admission lets it only where its class allows expansion) has the volume
  vclite provisioned for it grown to that size, then its status.capacity, with an external resizer's Events
  `Resizing`/`VolumeResizeSuccessful` (a directory needs no file system resize); a volume made by hand is not
  resized (as where no resizer runs).
- pvc-protection: a deleted claim keeps kubernetes.io/pvc-protection while a scheduled pod that has not
  finished names it; pv-protection: a deleted volume keeps kubernetes.io/pv-protection while it is Bound.
- Status writes only when they differ; a Pending claim's Event is recorded once per reason, not at each sync.

Differences from kube (docs/differences.md, "Storage (controller)"):
- a class that is not a StorageClass here, or whose provisioner does not run here, is provisioned by vclite's
  provisioner all the same (a Normal `StorageClassNotFound` / `ProvisionerNotFound` Event says so), so that
  manifests naming `gp2` or `nfs-client` run unchanged; a class of `kubernetes.io/no-provisioner` is honoured
  (static volumes only), and a Block claim is not provisioned (Warning `ProvisioningFailed`);
- WaitForFirstConsumer: binding waits until a pod that has not finished names the claim (or the
  scheduler's selected-node annotation is set); no topology is considered;
- Delete removes the data only of volumes vclite provisioned, and never anything outside
  `<workdir>/<namespace>/_pvc/` and `<workdir>/_pv/`; Recycle scrubs only such directories (elsewhere: Failed);
- no periodic resync: a volume appearing or changing wakes the unbound claims.

Costs nothing to a run without storage: it follows claims, volumes and classes only, and pods only once a
deleted claim must be checked or a claim waits for its first consumer. Talks to the cluster only through the
Client protocol; watch handlers only enqueue keys.
"""
from __future__ import annotations

import logging
import os
import pathlib
import shutil
from typing import Any, Callable, Hashable

from vclite.api import kinds, meta
from vclite.api import storage
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

log = logging.getLogger(__name__)
Obj = dict[str, Any]
CLAIM, VOLUME = "claim", "volume"   # the first item of a key: (CLAIM, namespace, name) or (VOLUME, name)
UNBOUND = "unbound"                 # claims' index: the claims that have not completed binding
BY_NAMESPACE = "namespace"
RESIZER = f"external-resizer {storage.PROVISIONER}"   # (the source of a resize's Events)
DIR_MODE = 0o777                    # (local-path provisioner's `mkdir -m 0777`: any pod's user may write)


def _unbound(claim: Obj) -> bool | None:
    return True if not storage.is_bind_completed(claim) else None


class VolumeController:
    """Binds claims and volumes, provisions directories, reclaims released volumes, lifts the protection
    finalizers."""

    name = "persistentvolume-controller"
    retries_forever = True   # (kube-controller-manager's: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, root: str | pathlib.Path,
                 recorder: events.RecordFn | None = None):
        self.client, self.clock = client, clock
        self.root = pathlib.Path(os.path.abspath(root))
        self.record = recorder or events.direct(client, clock)
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.claims = informer_mod.Informer(client, kinds.PERSISTENTVOLUMECLAIM, self._on_claim,
                                            indexers={UNBOUND: _unbound})
        self.volumes = informer_mod.Informer(client, kinds.PERSISTENTVOLUME, self._on_volume)
        self.classes = informer_mod.Informer(client, kinds.STORAGECLASS, self._on_class)
        self.pods = informer_mod.Informer(client, kinds.POD, self._on_pod,
                                          indexers={BY_NAMESPACE: lambda p: meta.namespace(p)})
        self._said: dict[str, storage.Event] = {}   # claim uid -> the Pending Event last recorded on it

    # ---- watches: only enqueue ------------------------------------------------------------------------
    def start(self) -> None:
        """Follow classes, volumes and claims (pods only when needed: `_follow_pods`); sync every one."""
        self.classes.start()
        self.volumes.start()
        self.claims.start()
        for claim in self.claims.items():
            self.queue.add((CLAIM, meta.namespace(claim), meta.name(claim)))
        for volume in self.volumes.items():
            self.queue.add((VOLUME, meta.name(volume)))

    def stop(self) -> None:
        for inf in (self.classes, self.volumes, self.claims, self.pods):
            inf.stop()

    def _follow_pods(self) -> None:
        """Start following pods (once): a deleted claim's protection and a delayed binding look at them.
        A run that never deletes a claim nor delays a binding pays nothing for pods here."""
        self.pods.start()

    def _on_claim(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.BOOKMARK:
            return
        claim = ev.object
        self.queue.add((CLAIM, meta.namespace(claim), meta.name(claim)))
        if ev.type == client_mod.EventType.DELETED:
            self._said.pop(meta.uid(claim), None)
            volume = (claim.get("spec") or {}).get("volumeName")
            if volume:
                self.queue.add((VOLUME, volume))   # (Released, then reclaimed)

    def _on_volume(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.BOOKMARK:
            return
        volume = ev.object
        self.queue.add((VOLUME, meta.name(volume)))
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if ref.get("name"):
            self.queue.add((CLAIM, ref.get("namespace") or "", ref["name"]))   # (Lost, or the binding finished)
        if ev.type != client_mod.EventType.DELETED and not ref.get("uid"):
            self._wake_unbound()    # a volume free for a claim: kube finds it at its next resync, vclite now

    def _on_class(self, ev: client_mod.WatchEvent) -> None:
        if ev.type != client_mod.EventType.BOOKMARK:
            self._wake_unbound(meta.name(ev.object))

    def _wake_unbound(self, class_name: str | None = None) -> None:
        for claim in self.claims.by_index(UNBOUND, True):
            if class_name is None or storage.claim_class(claim) == class_name:
                self.queue.add((CLAIM, meta.namespace(claim), meta.name(claim)))

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        ns = meta.namespace(ev.object)
        names = set(storage.claim_names(ev.object.get("spec") or {}))
        if ev.old is not None:
            names.update(storage.claim_names(ev.old.get("spec") or {}))
        for name in names:
            claim = self.claims.get(ns, name)
            if claim is not None and (meta.is_deleting(claim) or not storage.is_bind_completed(claim)):
                self.queue.add((CLAIM, ns, name))

    # ---- sync -----------------------------------------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        if key[0] == CLAIM:   # type: ignore[index]
            self._sync_claim(key[1], key[2])   # type: ignore[index]
        else:
            self._sync_volume(key[1])   # type: ignore[index]

    def _pods_of(self, namespace: str) -> list[Obj]:
        self._follow_pods()
        return self.pods.by_index(BY_NAMESPACE, namespace)

    def _sync_claim(self, namespace: str, name: str) -> None:
        claim = self.claims.get(namespace, name)
        if claim is None:
            return
        if meta.is_deleting(claim) and storage.PVC_PROTECTION in (claim["metadata"].get("finalizers") or ()):
            in_use = any(storage.pod_uses_claim(p, name) for p in self._pods_of(namespace))
            released = storage.protection_done(claim, storage.PVC_PROTECTION, in_use)
            if released is not None:
                self._write(self.client.update, released)
                return
        class_name = storage.claim_class(claim)
        cls = self.classes.get("", class_name) if class_name else None
        consumer = False
        if cls is not None and cls.get("volumeBindingMode") == "WaitForFirstConsumer" and \
                not storage.is_bind_completed(claim):
            consumer = any(storage.pod_names_claim(p, name) for p in self._pods_of(namespace))
        volumes = {meta.name(v): v for v in self.volumes.items()}
        decision = storage.decide_claim(claim, volumes, cls, consumer)
        self._CLAIM_STEPS[decision.step](self, claim, decision, cls)

    def _bind_step(self, claim: Obj, decision: storage.ClaimDecision, cls: Obj | None) -> None:
        assert decision.volume is not None
        volume: Obj | None = decision.volume
        grown = storage.expanded_volume(decision.volume, claim)
        if grown is not None:   # (a request admission let grow: an external resizer's work, for a directory)
            self.record(claim, "Normal", "Resizing", f"External resizer is resizing volume {meta.name(grown)}",
                        RESIZER)
            volume = self._write(self.client.update, grown)
            if volume is None:
                return
            self.record(claim, "Normal", "VolumeResizeSuccessful", "Resize volume succeeded", RESIZER)
        self._bind(volume, claim)

    def _pending_step(self, claim: Obj, decision: storage.ClaimDecision, cls: Obj | None) -> None:
        self._claim_phase(claim, storage.CLAIM_PENDING, None)
        if decision.event is not None:
            self._say(claim, decision.event)

    def _lost_step(self, claim: Obj, decision: storage.ClaimDecision, cls: Obj | None) -> None:
        if (claim.get("status") or {}).get("phase") == storage.CLAIM_LOST:
            return   # (kube's updateClaimStatusWithEvent: the Event with the change only)
        if self._claim_phase(claim, storage.CLAIM_LOST, None) and decision.event is not None:
            self.record(claim, *decision.event, storage.PV_CONTROLLER)

    def _invalid_step(self, claim: Obj, decision: storage.ClaimDecision, cls: Obj | None) -> None:
        ref = ((decision.volume or {}).get("spec") or {}).get("claimRef") or {}
        raise RuntimeError(f'Invalid binding of claim "{meta.namespace(claim)}/{meta.name(claim)}" to volume '
                           f'"{meta.name(decision.volume or {})}": volume already claimed by '
                           f'"{ref.get("namespace")}/{ref.get("name")}"')

    def _nothing_step(self, claim: Obj, decision: storage.ClaimDecision, cls: Obj | None) -> None:
        pass

    def _provision_step(self, claim: Obj, decision: storage.ClaimDecision, cls: Obj | None) -> None:
        if decision.event is not None:
            self._say(claim, decision.event)
        annotated = storage.provisioner_annotated(claim)
        if annotated is not None:
            claim = self._write(self.client.update, annotated)
            if claim is None:
                return
        key = f"{meta.namespace(claim)}/{meta.name(claim)}"
        self.record(claim, "Normal", "Provisioning", f'External provisioner is provisioning volume for claim "{key}"',
                    storage.PROVISIONER)
        name = f"pvc-{meta.uid(claim)}"
        taken = [str(((v.get("spec") or {}).get("hostPath") or {}).get("path") or "")
                 for v in self.volumes.items() if meta.name(v) != name]
        path = storage.provisioned_path(self.root, claim, taken)
        volume = storage.provisioned_volume(claim, cls, path)
        try:
            path.mkdir(parents=True, exist_ok=True)
            os.chmod(path, DIR_MODE)   # (not the umask's: `mkdir -m 0777`)
        except OSError as exc:
            self.record(claim, "Warning", "ProvisioningFailed",
                        f'failed to provision volume with StorageClass "{storage.claim_class(claim)}": {exc}',
                        storage.PROVISIONER)
            raise
        try:
            volume = self.client.create(volume)
        except errors.AlreadyExists:
            volume = self.client.get(kinds.PERSISTENTVOLUME, "", name)
        self.record(claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}",
                    storage.PROVISIONER)
        self._bind(volume, claim)

    _CLAIM_STEPS: dict[storage.ClaimStep, Callable[..., None]] = {
        storage.ClaimStep.BIND: _bind_step,
        storage.ClaimStep.PROVISION: _provision_step,
        storage.ClaimStep.PENDING: _pending_step,
        storage.ClaimStep.LOST: _lost_step,
        storage.ClaimStep.INVALID: _invalid_step,
        storage.ClaimStep.NOTHING: _nothing_step,
    }

    def _sync_volume(self, name: str) -> None:
        volume = self.volumes.get("", name)
        if volume is None:
            return
        phase = (volume.get("status") or {}).get("phase")
        released = storage.protection_done(volume, storage.PV_PROTECTION, phase == storage.VOLUME_BOUND)
        if released is not None:
            self._write(self.client.update, released)
            return
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        claim = self.claims.get(ref.get("namespace") or "", ref["name"]) if ref.get("name") else None
        if claim is None and ref.get("uid"):
            claim = self._fresh_claim(ref)
        step = storage.decide_volume(volume, claim)
        if step is storage.VolumeStep.AVAILABLE:
            self._volume_phase(volume, storage.VOLUME_AVAILABLE)
        elif step is storage.VolumeStep.BOUND:
            self._volume_phase(volume, storage.VOLUME_BOUND)
        elif step is storage.VolumeStep.SYNC_CLAIM:
            assert claim is not None
            self.queue.add((CLAIM, meta.namespace(claim), meta.name(claim)))
        elif step is storage.VolumeStep.UNBIND:
            updated = self._write(self.client.update, storage.unbound_volume(volume))
            if updated is not None:
                self._volume_phase(updated, storage.VOLUME_AVAILABLE)
        else:
            if phase not in (storage.VOLUME_RELEASED, storage.VOLUME_FAILED):
                volume = self._volume_phase(volume, storage.VOLUME_RELEASED)
                if volume is None:
                    return
            self._reclaim(volume)

    def _fresh_claim(self, ref: Obj) -> Obj | None:
        """The claim a volume is bound to, asked of the API: not in the cache may be not there yet (kube asks
        too before it releases a volume)."""
        try:
            return self.client.get(kinds.PERSISTENTVOLUMECLAIM, ref.get("namespace") or "", ref["name"])
        except errors.NotFound:
            return None

    def _reclaim(self, volume: Obj) -> None:
        step, path, message = storage.reclaim(volume, self.root)
        if step is storage.Reclaim.RETAIN:
            return
        if step is storage.Reclaim.FAIL:
            if (volume.get("status") or {}).get("phase") != storage.VOLUME_FAILED:
                if self._volume_phase(volume, storage.VOLUME_FAILED, message) is not None:
                    self.record(volume, "Warning", "VolumeFailedRecycle", message, storage.PV_CONTROLLER)
            return
        try:
            if path is not None:
                self._clear(path, keep=step is storage.Reclaim.RECYCLE)
        except OSError as exc:
            reason = "VolumeFailedDelete" if step is storage.Reclaim.DELETE else "VolumeFailedRecycle"
            self.record(volume, "Warning", reason, str(exc), storage.PV_CONTROLLER)
            raise
        if step is storage.Reclaim.DELETE:
            if not meta.is_deleting(volume):
                try:
                    self.client.delete(kinds.PERSISTENTVOLUME, "", meta.name(volume),
                                       preconditions={"uid": meta.uid(volume)})
                except errors.NotFound:
                    pass
            return
        self.record(volume, "Normal", "VolumeRecycled", "Volume recycled", storage.PV_CONTROLLER)
        updated = self._write(self.client.update, storage.unbound_volume(volume))
        if updated is not None:
            self._volume_phase(updated, storage.VOLUME_AVAILABLE)

    def _clear(self, path: pathlib.Path, keep: bool) -> None:
        """Remove the directory `path` (keep: only what it holds), never following a symbolic link out of it,
        and only where storage.removable allows, reached through no symbolic link."""
        if not storage.removable(path, self.root) or \
                os.path.realpath(path.parent) != os.path.join(os.path.realpath(self.root),
                                                              str(path.parent.relative_to(self.root))):
            log.warning("volume directory %s not removed: not vclite's to remove", path)
            return
        if path.is_symlink():
            if not keep:
                path.unlink()
            return
        if not path.is_dir():
            return
        if not keep:
            shutil.rmtree(path)
            return
        for entry in path.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    # ---- writes ---------------------------------------------------------------------------------------
    def _bind(self, volume: Obj, claim: Obj) -> None:
        """kube's bind: the volume first (claimRef, then phase Bound), then the claim (volumeName and
        annotations, then status Bound); each written only when it changes."""
        new = storage.bound_volume(volume, claim)
        if new is not None:
            volume = self._write(self.client.update, new)
            if volume is None:
                return
        if self._volume_phase(volume, storage.VOLUME_BOUND) is None:
            return
        new = storage.bound_claim(claim, volume)
        if new is not None:
            claim = self._write(self.client.update, new)
            if claim is None:
                return
        self._claim_phase(claim, storage.CLAIM_BOUND, volume)
        self._said.pop(meta.uid(claim), None)

    def _claim_phase(self, claim: Obj, phase: str, volume: Obj | None) -> Obj | None:
        status = storage.claim_status(claim, phase, volume)
        if status == (claim.get("status") or {}):
            return claim
        return self._write(self.client.update_status, {**claim, "status": status})

    def _volume_phase(self, volume: Obj, phase: str, message: str = "") -> Obj | None:
        status = storage.volume_status(volume, phase, message)
        if status == (volume.get("status") or {}):
            return volume
        return self._write(self.client.update_status, {**volume, "status": status})

    def _write(self, write: Callable[[Obj], Obj], obj: Obj) -> Obj | None:
        """Write `obj`; None when it is gone meanwhile (its deletion is synced on its own)."""
        try:
            return write(obj)
        except errors.NotFound:
            return None

    def _say(self, claim: Obj, event: storage.Event) -> None:
        """Record a Pending claim's Event once per reason (kube records it at each resync)."""
        uid = meta.uid(claim)
        if self._said.get(uid) == event:
            return
        self._said[uid] = event
        self.record(claim, *event, storage.PV_CONTROLLER)
