"""vGPUs for local pods: what a pod Volcano's deviceshare plugin placed on a vGPU node's cards sees, as the
volcano-vgpu-device-plugin (HAMi-core mode) gives it on a cluster.

On a cluster the plugin reads the pod's `volcano.sh/vgpu-ids-new` (the cards deviceshare chose: `UUID,NVIDIA,
memory,cores:` per card, `;` between the containers that ask for vGPUs, in their order) and gives each such
container its cards in `NVIDIA_VISIBLE_DEVICES`, each card's memory in `CUDA_DEVICE_MEMORY_LIMIT_<i>` (MiB,
`<n>m`), the first card's `CUDA_DEVICE_SM_LIMIT` (percent) and a `CUDA_DEVICE_MEMORY_SHARED_CACHE` of its own;
HAMi-core (libvgpu.so, preloaded into the container) enforces them.

Locally a vGPU node's cards are the host GPUs the node was given (devices.node_devices counts the cards of its
`volcano.sh/node-vgpu-register` annotation): a chosen card is found by its UUID among them (a node registering
this host's own UUIDs), else by its place in the register annotation. The container gets those GPUs'
CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES (devices.env) and HAMi-core's variables above, so a user who
preloads HAMi-core gets the limits; nothing is preloaded here. A card the node does not have is left out.
Pure functions.
"""
from __future__ import annotations

from typing import Any

from vclite.api import meta
from vclite.executor import devices

Obj = dict[str, Any]
CHOSEN = "volcano.sh/vgpu-ids-new"           # the cards deviceshare chose for a pod, per container
ASKS = ("volcano.sh/vgpu-number", "volcano.sh/vgpu-memory")   # a container's limits naming one asks for vGPUs
MEMORY_LIMIT = "CUDA_DEVICE_MEMORY_LIMIT_"
SM_LIMIT = "CUDA_DEVICE_SM_LIMIT"
SHARED_CACHE = "CUDA_DEVICE_MEMORY_SHARED_CACHE"


def _asks(container: Obj) -> bool:
    limits = (container.get("resources") or {}).get("limits") or {}
    return any(name in limits for name in ASKS)


def _chosen(text: str) -> list[list[tuple[str, int, int]]]:
    """`vgpu-ids-new` as (UUID, memory, cores) per card per container; unreadable cards are left out."""
    out = []
    for segment in text.split(";"):
        cards = []
        for entry in segment.split(":"):
            fields = entry.split(",")
            if len(fields) < 4:
                continue
            try:
                cards.append((fields[0].strip(), int(fields[2]), int(fields[3])))
            except ValueError:
                continue
        out.append(cards)
    return out


def _on_host(uuid: str, node: tuple[str, ...], register: tuple[str, ...]) -> str | None:
    if uuid in node:
        return uuid
    if uuid in register and register.index(uuid) < len(node):
        return node[register.index(uuid)]
    return None


def container_env(pod: Obj, node: tuple[str, ...], register: tuple[str, ...],
                  cache_dir: str) -> dict[str, dict[str, str]]:
    """Container name -> its variables, for each container of the pod the vgpu-ids-new annotation gives cards
    this node has (`node`: its GPUs, devices.node_devices; `register`: devices.registered_cards of the Node);
    {} for a pod without the annotation. Each container's HAMi-core cache is `<cache_dir>/<name>.vgpu.cache`."""
    text = meta.annotations(pod).get(CHOSEN)
    if not isinstance(text, str) or not text.strip():
        return {}
    asking = [c for c in (pod.get("spec") or {}).get("containers") or [] if _asks(c)]
    out: dict[str, dict[str, str]] = {}
    for container, chosen in zip(asking, _chosen(text)):
        cards: dict[str, tuple[int, int]] = {}   # host GPU -> (memory, cores), in the annotation's order
        for uuid, memory, cores in chosen:
            host = _on_host(uuid, node, register)
            if host is not None:
                cards.setdefault(host, (memory, cores))
        if not cards:
            continue
        name = container.get("name", "")
        variables = devices.env(list(cards))
        variables.update({f"{MEMORY_LIMIT}{i}": f"{memory}m" for i, (memory, _) in enumerate(cards.values())})
        variables[SM_LIMIT] = str(next(iter(cards.values()))[1])
        variables[SHARED_CACHE] = f"{cache_dir}/{name}.vgpu.cache"
        out[name] = variables
    return out
