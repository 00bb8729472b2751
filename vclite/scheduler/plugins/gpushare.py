"""GPU sharing and GPU number as Volcano's deviceshare plugin sees them (api/devices/nvidia/gpushare).

The volcano-device-plugin advertises a node's GPUs as two extended resources, `volcano.sh/gpu-memory`
(all cards' memory together) and `volcano.sh/gpu-number`; a node has `gpu-number` cards of
`gpu-memory // gpu-number` each (read from `status.capacity` as upstream does, else from
`status.allocatable`, which vclite's node files fill from each other), minus the card ids listed in
the node annotation `volcano.sh/gpu-unhealthy-ids` ("1,3"). A pod asks, in its containers' limits,
for `volcano.sh/gpu-memory` (GPU sharing: the sum over its containers, or the largest init
container's, must fit on one card) or `volcano.sh/gpu-number` (whole idle cards: cards no pod uses).
A placed pod's cards are in its annotation `volcano.sh/gpu-index` ("0" or "0,2"), written at the
bind with `volcano.sh/predicate-time` (nanoseconds since the epoch): each listed card is charged the
pod's whole gpu-memory request. Cards are tried in ascending id order (upstream walks a Go map).

Must not: know sessions or tasks; `Node` is one node's ledger, changed only by `add`/`remove`.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from vclite.api import meta, quantity

Obj = dict[str, Any]
NAME = "GpuShare"
GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
GPU_INDEX = "volcano.sh/gpu-index"
PREDICATE_TIME = "volcano.sh/predicate-time"
UNHEALTHY_IDS = "volcano.sh/gpu-unhealthy-ids"
NO_MEMORY = "GpuShare no enough gpu memory"
NO_NUMBER = "GpuNumber no enough gpu number"


_GO_INT = re.compile(r"[+-]?[0-9]+")   # what Go's strconv.Atoi reads (no spaces, underscores, other digits)


def _atoi(text: str) -> int | None:
    return int(text) if _GO_INT.fullmatch(text) else None


def _value(q: Any) -> int:
    """Kubernetes' Quantity.Value() (rounded up); 0 for a value that is not a quantity."""
    try:
        return math.ceil(quantity.parse(q))
    except (ValueError, TypeError):
        return 0


def _limit(container: Obj, name: str) -> int:
    return _value(((container.get("resources") or {}).get("limits") or {}).get(name, 0))


def pod_amount(pod: Obj, name: str) -> int:
    """getGPUMemoryOfPod / getGPUNumberOfPod: the containers' limits summed, or the largest init
    container's if that is more."""
    spec = pod.get("spec") or {}
    total = sum(_limit(c, name) for c in spec.get("containers") or ())
    init = max((_limit(c, name) for c in spec.get("initContainers") or ()), default=0)
    return max(total, init)


def gpu_index(pod: Obj) -> list[int]:
    """The card ids of `volcano.sh/gpu-index`; [] when absent or not a list of integers (upstream logs it)."""
    value = meta.annotations(pod).get(GPU_INDEX)
    if not value:
        return []
    ids = [_atoi(v) for v in value.split(",")]
    return [] if None in ids else [i for i in ids if i is not None]


@dataclasses.dataclass
class Card:
    id: int
    memory: int
    pods: dict[str, int] = dataclasses.field(default_factory=dict)   # pod uid -> its gpu-memory request

    @property
    def idle_memory(self) -> int:
        return max(0, self.memory - sum(self.pods.values()))

    @property
    def idle(self) -> bool:
        return not self.pods


@dataclasses.dataclass
class Node:
    name: str
    cards: dict[int, Card]

    def add(self, uid: str, pod: Obj, ids: list[int]) -> None:
        """AddResource: the pod is on each listed card that exists."""
        mem = pod_amount(pod, GPU_MEMORY)
        for i in ids:
            if i in self.cards:
                self.cards[i].pods[uid] = mem

    def remove(self, uid: str) -> None:
        for card in self.cards.values():
            card.pods.pop(uid, None)

    def by_memory(self, request: int) -> list[int]:
        """predicateGPUbyMemory: the cards whose idle memory holds `request`, ascending."""
        return [i for i in sorted(self.cards) if self.cards[i].idle_memory >= request]

    def by_number(self, request: int) -> list[int]:
        """predicateGPUbyNumber: the first `request` idle cards, or [] when there are fewer."""
        idle = [i for i in sorted(self.cards) if self.cards[i].idle]
        return idle[:request] if len(idle) >= request else []


def _capacity(node: Obj, name: str) -> int | None:
    status = node.get("status") or {}
    for field in ("capacity", "allocatable"):
        value = (status.get(field) or {}).get(name)
        if value is not None:
            return _value(value)
    return None


def node_devices(node: Obj) -> Node | None:
    """NewGPUDevices: the node's cards, or None when it advertises no GPU memory and number."""
    total, number = _capacity(node, GPU_MEMORY), _capacity(node, GPU_NUMBER)
    if total is None or not number:
        return None
    per_card = total // number
    cards = {i: Card(i, per_card) for i in range(number)}
    for sid in (meta.annotations(node).get(UNHEALTHY_IDS) or "").split(","):
        card = _atoi(sid)
        if card is not None:   # (else upstream logs it: unhealthy_problems)
            cards.pop(card, None)
    return Node(meta.name(node), cards)


def unhealthy_problems(node: Obj) -> list[str]:
    """The entries of a GPU node's `volcano.sh/gpu-unhealthy-ids` that are no card id as Go's Atoi reads
    one (upstream logs and skips them: that card stays in use), for a reader of the node's manifest."""
    text = meta.annotations(node).get(UNHEALTHY_IDS)
    if not text or node_devices(node) is None:
        return []
    return [f"{UNHEALTHY_IDS} entry {sid!r} is not a card id (an integer, no spaces), so it is skipped and no "
            "card is taken out of use for it" for sid in text.split(",") if _atoi(sid) is None]


def why_ignored(node: Obj) -> str | None:
    """Why a node advertising one of the two GPU resources has no GPU share cards (None: it has, or
    advertises neither)."""
    total, number = _capacity(node, GPU_MEMORY), _capacity(node, GPU_NUMBER)
    if total is None and number is None:
        return None
    if total is None:
        return f"{GPU_NUMBER} is advertised without {GPU_MEMORY}"
    if not number:
        return f"{GPU_MEMORY} is advertised without a non-zero {GPU_NUMBER}"
    return None


def requests(pod: Obj, sharing: bool, number: bool) -> bool:
    """HasDeviceRequest: the pod asks for what is enabled."""
    return (sharing and pod_amount(pod, GPU_MEMORY) > 0) or (number and pod_amount(pod, GPU_NUMBER) > 0)


def filter_node(dev: Node, pod: Obj, sharing: bool, number: bool) -> str | None:
    """FilterNode: None when the pod fits, else the reason."""
    if sharing:
        mem = pod_amount(pod, GPU_MEMORY)
        if mem > 0 and not dev.by_memory(mem):
            return NO_MEMORY
    if number:
        n = pod_amount(pod, GPU_NUMBER)
        if n > 0 and not dev.by_number(n):
            return NO_NUMBER
    return None


def allocate(dev: Node, uid: str, pod: Obj, unix_nano: int) -> dict[str, str] | None:
    """Allocate: the cards the pod takes (the first that holds its memory, or its number of idle cards),
    added to the ledger, as the annotations to bind with; None when nothing fits or nothing is asked."""
    mem = pod_amount(pod, GPU_MEMORY)
    if mem > 0:
        ids = dev.by_memory(mem)[:1]
    elif pod_amount(pod, GPU_NUMBER) > 0:
        ids = dev.by_number(pod_amount(pod, GPU_NUMBER))
    else:
        return None
    if not ids:
        return None
    dev.add(uid, pod, ids)
    return {PREDICATE_TIME: str(unix_nano), GPU_INDEX: ",".join(str(i) for i in ids)}


RELEASED = (PREDICATE_TIME, GPU_INDEX)   # the annotations Release takes back from an undone allocation
