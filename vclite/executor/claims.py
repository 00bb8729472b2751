"""Where a pod's persistentVolumeClaim volumes are on this machine: the kubelet's look-up of a claim's volume.

A `persistentVolumeClaim` volume names a claim of the pod's namespace; the claim, once Bound, names its
PersistentVolume (spec.volumeName), and the volume says where its data is (api/storage.data_path: a hostPath or
local path as it is, vclite's provisioned directory `<workdir>/<namespace>/_pvc/<claim>`, `<workdir>/_pv/<volume>`
for a source this machine cannot attach). `resolve` gives each claim name its (path, hostPath type), which the
runner treats as a pod's hostPath volume (a DirectoryOrCreate path made), or raises Unmountable when a claim
cannot be mounted yet — as the kubelet's volume manager refuses it (desired_state_of_world_populator):
- the claim does not exist: `persistentvolumeclaim "data" not found`;
- it is being deleted: `persistentvolumeclaim "data" is being deleted`;
- it is not Bound (or names no volume): `persistentvolumeclaim "data" is not bound`;
- its volume does not exist, or its claimRef names another claim;
- (with `is_dir`, the executor's look at the file system) its volume is a `local` one, or a hostPath of type
  `Directory`, whose path is not a directory: the kubelet's MountVolume failure (a pod would otherwise run
  without its data, its writes landing in the container's own file system).
The pod then waits in ContainerCreating with that message and a Warning Event FailedMount; the executor tries
again when a claim or a volume changes.

Nothing here writes the file system (`is_dir` looks); the getters read the API (the executor's).
"""
from __future__ import annotations

import pathlib
from typing import Any, Callable, Mapping

from vclite.api import meta, storage

Obj = dict[str, Any]
Getter = Callable[[str, str], "Obj | None"]   # (namespace, name) -> the object, None when there is none
FAILED_MOUNT = "FailedMount"   # the kubelet's Event reason for a volume it cannot mount


class Unmountable(Exception):
    """A claim volume the pod cannot have yet: `message` for its containers' waiting state, `detail` as the
    kubelet words it in its FailedMount Event, `volume` the pod's volume name."""

    def __init__(self, message: str, volume: str, claim: str, detail: str):
        super().__init__(message)
        self.message, self.volume, self.claim, self.detail = message, volume, claim, detail

    def event_message(self, namespace: str) -> str:
        """The kubelet's FailedMount text (volume_manager.WaitForAttachAndMount over the populator's error)."""
        return (f"Unable to attach or mount volumes: unmounted volumes=[{self.volume}], failed to process "
                f"volumes=[{self.volume}]: error processing PVC {namespace}/{self.claim}: {self.detail}")


class MountFailed(Unmountable):
    """A claim's volume whose directory is missing: the kubelet's MountVolume error in its FailedMount Event."""

    def event_message(self, namespace: str) -> str:
        return self.detail


def claim_volumes(pod: Obj) -> list[tuple[str, Obj]]:
    """(volume name, its persistentVolumeClaim source) of each claim volume of the pod, in order."""
    return [(v.get("name", ""), v["persistentVolumeClaim"]) for v in (pod.get("spec") or {}).get("volumes") or ()
            if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)]


def resolve(pod: Obj, get_claim: Getter, get_volume: Callable[[str], "Obj | None"],
            root: pathlib.Path, is_dir: Callable[[pathlib.Path], bool] | None = None
            ) -> dict[str, tuple[pathlib.Path, str]]:
    """Claim name -> (where its data is, the hostPath type it is checked with), for every claim the pod's
    volumes name; raises Unmountable for the first that cannot be mounted. `root`: the executor's work
    directory (storage.data_path)."""
    namespace = meta.namespace(pod)
    out: dict[str, tuple[pathlib.Path, str]] = {}
    for volume_name, source in claim_volumes(pod):
        name = source.get("claimName") or ""
        if name in out:
            continue
        claim = get_claim(namespace, name)
        if claim is None:
            raise Unmountable(f'persistentvolumeclaim "{name}" not found', volume_name, name,
                              f'failed to fetch PVC from API server: persistentvolumeclaims "{name}" not found')
        if meta.is_deleting(claim):
            raise Unmountable(f'persistentvolumeclaim "{name}" is being deleted', volume_name, name,
                              "PVC is being deleted")
        bound_to = (claim.get("spec") or {}).get("volumeName") or ""
        if (claim.get("status") or {}).get("phase") != storage.CLAIM_BOUND or not bound_to:
            raise Unmountable(f'persistentvolumeclaim "{name}" is not bound', volume_name, name, "PVC is not bound")
        volume = get_volume(bound_to)
        if volume is None:
            raise Unmountable(f'persistentvolumeclaim "{name}": its persistentvolume "{bound_to}" not found',
                              volume_name, name,
                              f"failed to fetch PV {bound_to} from API server: "
                              f'persistentvolumes "{bound_to}" not found')
        if not storage.refers_to(volume, claim):
            raise Unmountable(f'persistentvolumeclaim "{name}": persistentvolume "{bound_to}" is not bound to it',
                              volume_name, name,
                              f"found PV object {bound_to} but its ClaimRef does not point to this claim")
        path, type_ = storage.data_path(volume, root)
        if is_dir is not None and type_ == "Directory" and not is_dir(path):
            pv = meta.name(volume)
            local = isinstance((volume.get("spec") or {}).get("local"), dict)
            raise MountFailed(f'persistentvolumeclaim "{name}": its persistentvolume "{pv}" has no directory {path}',
                              volume_name, name,
                              f'MountVolume.NewMounter initialization failed for volume "{pv}" : path "{path}" does '
                              "not exist" if local else
                              f'MountVolume.SetUp failed for volume "{pv}" : hostPath type check failed: {path} is '
                              "not a directory")
        out[name] = (path, type_)
    return out


def read_only(source: Mapping[str, Any]) -> bool:
    """A claim volume source's `readOnly: true`: its mounts are read-only."""
    return source.get("readOnly") is True
