"""GPUs for local pods: which of this host's GPUs each container may use, as a node's device manager and
NVIDIA's device plugin decide on a cluster.

On a cluster a container asking for `nvidia.com/gpu: 2` gets two GPUs of its node for itself, and a container
asking for none sees none. Locally every pod is a process of this host, so vclite gives each container the
variables CUDA and NVIDIA's tools read: `CUDA_VISIBLE_DEVICES` and `NVIDIA_VISIBLE_DEVICES` name its GPUs (an
empty CUDA_VISIBLE_DEVICES, for a container that asked for none, hides them all). A container's own `env` still
wins: a user who sets CUDA_VISIBLE_DEVICES there gets what they wrote.

- **This host's GPUs** (`host_gpus`): each GPU's UUID as the driver shows it in /proc/driver/nvidia/gpus (read,
  not asked: nvidia-smi may take seconds to start where the GPUs are not kept initialised; `driver_info`: a GPU
  the driver excludes is left out, one whose UUID it does not show yet has it asked of nvidia-smi), else from
  `nvidia-smi --query-gpu=uuid`; else as many indices as /proc/driver/nvidia/gpus has GPUs; else none. Of
  those, the ones vclite's own CUDA_VISIBLE_DEVICES lets CUDA see when it is set, read as CUDA reads it
  (cudavisible.py: `CUDA_VISIBLE_DEVICES=2,3 vcctl run …` keeps the run to those two; empty or `-1`: none; an
  index past the last GPU ends the list).
  The node sized like this host (`vcctl run`'s and `vcctl server`'s default) declares them as
  `nvidia.com/gpu` (nodes.py); `--nodes N`'s host-sized nodes share them out.
- **Each node's GPUs** (`node_devices`): its allocatable `nvidia.com/gpu` (else `volcano.sh/gpu-number`, the
  count Volcano's GPU sharing reads, else the cards of its `volcano.sh/node-vgpu-register`), taken in node order
  from the host's GPUs, so `--nodes '2x(nvidia.com/gpu=2)'` on a 4-GPU host gives local-0 GPUs 0-1 and local-1
  GPUs 2-3. Nodes that declare more GPUs than the host has wrap around and share physical GPUs (`shared_gpus`
  says so); on a host without GPUs the devices are numbered "0", "1", … across the nodes (nothing to isolate,
  but a script still sees which it got).
- **A pod's GPUs** (`assign`): each app container gets its `nvidia.com/gpu` limit (or request) of the node's
  GPUs that no running pod holds, in order; an init container reuses the pod's first ones (they never run
  alongside the app containers), as the kubelet's device manager allows. Too few free: the pod fails, as the
  kubelet fails it (`UnexpectedAdmissionError`, its message). A pod placed by Volcano's GPU sharing
  (`volcano.sh/gpu-index`, the card indices the deviceshare plugin wrote) sees those cards of its node, shared
  with the other pods the scheduler put there — in the containers that ask for `volcano.sh/gpu-memory` (or
  `gpu-number`); its other containers see none, as the device plugin is asked for the former only. A vGPU pod
  (`volcano.sh/vgpu-ids-new`) sees the GPUs behind its cards, with HAMi-core's limits (vgpus.py); a vGPU node's
  GPUs are the cards it registers (`registered_cards`).
Nothing here is called for a run without GPUs anywhere (`node_devices` is then empty): a CPU-only run's
environment is unchanged. Pure functions, but `host_gpus` (reads the host once).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from typing import Any, Mapping

from vclite.api import meta, quantity
from vclite.executor import cudavisible

Obj = dict[str, Any]
GPU = "nvidia.com/gpu"
GPU_NUMBER = "volcano.sh/gpu-number"   # Volcano's GPU sharing: a node's whole cards
GPU_INDEX = "volcano.sh/gpu-index"     # the cards the deviceshare plugin chose for a pod
VGPU_REGISTER = "volcano.sh/node-vgpu-register"   # a vGPU node's cards, `UUID,count,memory,type,health,mode:` each
VISIBLE = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
ADMISSION_REASON = "UnexpectedAdmissionError"
NVIDIA_SMI_TIMEOUT = 10.0   # seconds
PROC_GPUS = "/proc/driver/nvidia/gpus"   # the NVIDIA driver's GPUs, a directory per PCI address


class NotEnough(Exception):
    """Fewer free GPUs on the node than the pod asks for; the message is the kubelet's."""

    def __init__(self, requested: int, available: int):
        super().__init__(f"Allocate failed due to requested number of devices unavailable for {GPU}. "
                         f"Requested: {requested}, Available: {available}, which is unexpected")
        self.requested, self.available = requested, available


@functools.cache
def host_gpus() -> tuple[str, ...]:
    """This host's GPUs, as CUDA_VISIBLE_DEVICES may name them (see the module docstring)."""
    found = _driver_gpus()
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    return found if listed is None else cudavisible.visible(listed, found)


def _driver_gpus() -> tuple[str, ...]:
    """Every GPU the driver lets CUDA use: their UUIDs (its /proc files, else nvidia-smi), else "0", "1", … (as
    many as its /proc files show), else none."""
    uuids, count = _proc_gpus()
    if uuids:
        return uuids
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                                 text=True, timeout=NVIDIA_SMI_TIMEOUT, stdin=subprocess.DEVNULL)
            uuids = tuple(line.strip() for line in out.stdout.splitlines() if line.strip())
            if out.returncode == 0 and uuids:
                return uuids
        except (OSError, subprocess.SubprocessError):
            pass
    return tuple(str(i) for i in range(count))


_FIELD = re.compile(r"^[ \t]*([^:\n]+?)[ \t]*:[ \t]*(.*?)\s*$", re.MULTILINE)
_UUID = re.compile(r"GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def driver_info(text: str) -> tuple[str | None, bool]:
    """What a GPU's `information` file in PROC_GPUS says: (its UUID — None when it shows none, as before the GPU
    is initialised, `GPU UUID: GPU-????????-????-…` —, whether the GPU is excluded: `GPU Excluded: Yes`, the
    driver's NVreg_ExcludedGpus, which neither CUDA nor nvidia-smi sees)."""
    fields = dict(_FIELD.findall(text))
    uuid = fields.get("GPU UUID", "")
    return (uuid if _UUID.fullmatch(uuid) else None), fields.get("GPU Excluded", "").lower() == "yes"


def _proc_gpus() -> tuple[tuple[str, ...] | None, int]:
    """The GPUs the NVIDIA driver shows in PROC_GPUS (a directory per PCI address), but the excluded ones: (their
    UUIDs, in PCI order as nvidia-smi lists them — None unless each shows one —, their number)."""
    try:
        slots = sorted(os.listdir(PROC_GPUS))
    except OSError:
        return None, 0
    uuids: list[str | None] = []
    for slot in slots:
        try:
            with open(os.path.join(PROC_GPUS, slot, "information"), encoding="utf-8", errors="replace") as fh:
                uuid, excluded = driver_info(fh.read())
        except OSError:
            uuid, excluded = None, False
        if not excluded:
            uuids.append(uuid)
    known = [u for u in uuids if u is not None]
    return (tuple(known) if known and len(known) == len(uuids) else None), len(uuids)


def node_count(node: Obj) -> int:
    """A node's GPUs: allocatable nvidia.com/gpu, else volcano.sh/gpu-number, else the cards a vGPU node
    registers (registered_cards); 0 when none (or unreadable)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    for name in (GPU, GPU_NUMBER):
        if name in allocatable:
            try:
                return max(quantity.to_int(str(allocatable[name])), 0)   # (Quantity.Value(): rounded up)
            except (ValueError, TypeError, OverflowError):
                return 0
    return len(registered_cards(node))


def registered_cards(node: Obj) -> tuple[str, ...]:
    """The UUIDs of the cards a vGPU node's volcano.sh/node-vgpu-register annotation lists, in its order
    (the volcano-vgpu-device-plugin writes it on a cluster); () without one."""
    text = meta.annotations(node).get(VGPU_REGISTER)
    if not isinstance(text, str):
        return ()
    return tuple(entry.split(",", 1)[0].strip() for entry in text.split(":") if entry.strip())


def node_devices(nodes: list[Obj], host: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Node name -> its GPUs, for the nodes that have some (module docstring); {} when none has."""
    out: dict[str, tuple[str, ...]] = {}
    taken = 0
    for node in nodes:
        n = node_count(node)
        if n:
            ids = range(taken, taken + n)
            out[meta.name(node)] = tuple(host[i % len(host)] for i in ids) if host else tuple(str(i) for i in ids)
            taken += n
    return out


def shared_gpus(devices: Mapping[str, tuple[str, ...]], host: tuple[str, ...]) -> str | None:
    """A warning when the nodes declare more GPUs than the host has (pods of different nodes then share one)."""
    declared = sum(len(ids) for ids in devices.values())
    if host and declared > len(host):
        return (f"the nodes declare {declared} GPUs ({GPU}) and this host has {len(host)}: pods on different "
                "nodes may be given the same GPU")
    return None


def _count(container: Obj) -> int:
    resources = container.get("resources") or {}
    for part in ("limits", "requests"):
        value = (resources.get(part) or {}).get(GPU)
        if value is not None:
            try:
                return max(quantity.to_int(str(value)), 0)   # (Quantity.Value(): rounded up)
            except (ValueError, TypeError, OverflowError):
                return 0
    return 0


def shared_cards(pod: Obj, node: tuple[str, ...]) -> list[str] | None:
    """The node's cards at the pod's volcano.sh/gpu-index (Volcano's GPU sharing: not the pod's alone); None
    without the annotation or with one that names no card of this node."""
    text = meta.annotations(pod).get(GPU_INDEX)
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        indices = [int(x) for x in text.split(",")]
    except ValueError:
        return None
    if any(i < 0 or i >= len(node) for i in indices):
        return None
    return list(dict.fromkeys(node[i] for i in indices))


SHARED = ("volcano.sh/gpu-memory", GPU_NUMBER)   # what a container asks Volcano's GPU sharing for


def asks_shared(container: Obj) -> bool:
    """Whether a container asks Volcano's GPU sharing for a card (its limits or requests name gpu-memory or
    gpu-number): the device plugin gives the pod's cards to those containers only, as the kubelet asks it for
    each container that requests its resource."""
    resources = container.get("resources") or {}
    return any(name in (resources.get(part) or {}) for part in ("limits", "requests") for name in SHARED)


def assign(pod: Obj, node: tuple[str, ...], held: set[int]) -> dict[str, list[int]]:
    """Container name -> the positions in `node` (a node's GPUs) of its GPUs, for every init and app
    container ([] for none), none of them in `held` (the positions running pods hold). NotEnough when the pod
    asks for more than are free. (Positions, not ids: a node that declares more GPUs than the host has holds
    some id twice, and each declared GPU is still one pod's.)"""
    spec = pod.get("spec") or {}
    apps, inits = spec.get("containers") or [], spec.get("initContainers") or []
    wanted = [_count(c) for c in apps]
    need = max(sum(wanted), max((_count(c) for c in inits), default=0))
    free = [i for i in range(len(node)) if i not in held]
    if need > len(free):
        raise NotEnough(need, len(free))
    out: dict[str, list[int]] = {c.get("name", ""): free[:_count(c)] for c in inits}
    start = 0
    for c, n in zip(apps, wanted):
        out[c.get("name", "")] = free[start:start + n]
        start += n
    return out


def positions(visible: str, node: tuple[str, ...], taken: set[int]) -> set[int]:
    """The positions in `node` of the GPUs a process's CUDA_VISIBLE_DEVICES `visible` names (as env gave it), none
    of `taken`: an id a node holds twice (it declares more GPUs than the host has) is its first free position."""
    out: set[int] = set()
    for gpu in filter(None, visible.split(",")):
        free = [i for i, g in enumerate(node) if g == gpu and i not in taken and i not in out]
        if free:
            out.add(free[0])
    return out


def env(ids: list[str]) -> dict[str, str]:
    """The variables that give a container the GPUs `ids` (none: CUDA sees no GPU; NVIDIA's tools, `void`)."""
    ids = list(dict.fromkeys(ids))
    return {"CUDA_VISIBLE_DEVICES": ",".join(ids), "NVIDIA_VISIBLE_DEVICES": ",".join(ids) or "void"}
