"""vGPU (HAMi-core) as Volcano's deviceshare plugin sees it (api/devices/nvidia/vgpu, `VGPUEnable`).

A node has vGPUs when the volcano-vgpu-device-plugin has registered them: the node annotation
`volcano.sh/node-vgpu-register` lists its cards, `UUID,count,memory,type,health,mode` each, joined by
`:` (count: how many pods may share the card; memory in MiB; mode `hami-core` or `mig`), and the node's
`status.allocatable` has non-zero `volcano.sh/vgpu-number`, `volcano.sh/vgpu-cores` and
`volcano.sh/vgpu-memory`. A card entry with fewer than six fields voids the node's inventory, as
upstream. `mig` needs the geometries of the `volcano-vgpu-device-config` ConfigMap, which vclite
does not read: like upstream without that ConfigMap, such a card is shared as hami-core.

A container asks in its limits for `volcano.sh/vgpu-number` cards (1 when it only sets
`volcano.sh/vgpu-memory`), each with `volcano.sh/vgpu-memory` MiB (limits, else requests; without it
the whole card) and `volcano.sh/vgpu-cores` percent (0-100; 100 = the card alone). Cards are tried in
the schedule policy's order — binpack: most memory used first; spread: fewest pods first; otherwise
from the last card down — and a card is skipped when its share count, memory or cores are used up,
its type does not contain NVIDIA or is excluded by the pod's `nvidia.com/use-gputype` /
`nvidia.com/nouse-gputype`, its UUID is not allowed by `volcano.sh/vgpu-use-gpuuuid` /
`volcano.sh/vgpu-nouse-gpuuuid`, or (pod annotation `volcano.sh/vgpu-podgroup-policy: spread`) a pod of
the same PodGroup already uses it. A pod annotated `volcano.sh/vgpu-mode` fits only a node of that mode.

The node score sums, over the cards chosen: binpack 100 × the card's used memory (this pod's
included) / its memory; spread 100 for a card no pod used before this one (upstream scores after
counting the pod, so its spread score is always 0: see docs/differences.md). Placed pods carry
`volcano.sh/vgpu-ids-new` (`UUID,NVIDIA,memory,cores:` per card, `;` between containers), which the
ledger is rebuilt from at every session. The handshake annotation older Volcano read
(`volcano.sh/node-vgpu-handshake`) is gone upstream, replaced by the allocatable check above.

Must not: know sessions or tasks; `Node` is one node's ledger, changed only by `add_*`/`remove`.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from vclite.api import batch, meta, quantity

Obj = dict[str, Any]
NAME = "hamivgpu"
REGISTER = "volcano.sh/node-vgpu-register"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_CORES = "volcano.sh/vgpu-cores"
USE_TYPE, NOUSE_TYPE = "nvidia.com/use-gputype", "nvidia.com/nouse-gputype"
USE_UUID, NOUSE_UUID = "volcano.sh/vgpu-use-gpuuuid", "volcano.sh/vgpu-nouse-gpuuuid"
MODE = "volcano.sh/vgpu-mode"
PODGROUP_POLICY = "volcano.sh/vgpu-podgroup-policy"
ASSIGNED_NODE = "volcano.sh/vgpu-node"
ASSIGNED_TIME = "volcano.sh/vgpu-time"
ASSIGNED_IDS = "volcano.sh/vgpu-ids-new"
TO_ALLOCATE = "volcano.sh/devices-to-allocate"
BIND_TIME = "volcano.sh/bind-time"
BIND_PHASE = "volcano.sh/bind-phase"
RELEASED = (ASSIGNED_NODE, ASSIGNED_IDS, TO_ALLOCATE, ASSIGNED_TIME, BIND_TIME, BIND_PHASE)
VOLCANO_GROUP_NAME = "scheduling.volcano.sh/group-name"
NVIDIA = "NVIDIA"
HAMI_CORE, MIG = "hami-core", "mig"
BINPACK, SPREAD = "binpack", "spread"
NO_FIT = "hami-vgpuDeviceSharing error"


@dataclasses.dataclass
class Card:
    index: int
    uuid: str
    count: int
    memory: int
    type: str
    health: bool
    used_num: int = 0
    used_mem: int = 0
    used_core: int = 0
    # pod uid -> [cards taken, memory, cores, PodGroup key]
    pods: dict[str, list] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Node:
    name: str
    mode: str
    cards: dict[int, Card]

    def add_placed(self, uid: str, pod: Obj) -> None:
        """AddResource from the pod's `vgpu-ids-new` (HAMi-core's AddPod: a pod already on the card is not
        counted again)."""
        group = group_key(pod)
        for container in decode_pod_devices(meta.annotations(pod).get(ASSIGNED_IDS) or ""):
            for dev_uuid, mem, cores in container:
                card = self._card_of(dev_uuid)
                if card is not None and uid not in card.pods:
                    self._charge(card, uid, mem, cores, group)

    def add_chosen(self, uid: str, pod: Obj, chosen: list[list[tuple[str, int, int]]]) -> None:
        """An allocation made now: every chosen card is charged, once per time it was chosen."""
        group = group_key(pod)
        for container in chosen:
            for dev_uuid, mem, cores in container:
                card = self._card_of(dev_uuid)
                if card is not None:
                    self._charge(card, uid, mem, cores, group)

    def remove(self, uid: str) -> None:
        for card in self.cards.values():
            usage = card.pods.pop(uid, None)
            if usage is not None:
                card.used_num -= usage[0]
                card.used_mem -= usage[1]
                card.used_core -= usage[2]

    def _card_of(self, dev_uuid: str) -> Card | None:
        for i in sorted(self.cards):
            if self.cards[i].uuid in dev_uuid:   # (upstream: strings.Contains)
                return self.cards[i]
        return None

    @staticmethod
    def _charge(card: Card, uid: str, mem: int, cores: int, group: str) -> None:
        card.used_num += 1
        card.used_mem += mem
        card.used_core += cores
        usage = card.pods.setdefault(uid, [0, 0, 0, group])
        usage[0] += 1
        usage[1] += mem
        usage[2] += cores


_GO_INT = re.compile(r"[+-]?[0-9]+")   # what Go's strconv.Atoi reads (no spaces, underscores, other digits)


def _int(text: str) -> int:
    """strconv.Atoi, its error read as 0 (as upstream, which ignores it)."""
    return int(text) if _GO_INT.fullmatch(text) else 0


def _allocatable(node: Obj, name: str) -> int:
    value = ((node.get("status") or {}).get("allocatable") or {}).get(name)
    try:
        return math.ceil(quantity.parse(value)) if value is not None else 0
    except (ValueError, TypeError):
        return 0


def node_devices(node: Obj) -> Node | None:
    """NewGPUDevices: the registered cards, or None (no register annotation, no vGPU allocatable, or
    an entry upstream cannot read)."""
    text = meta.annotations(node).get(REGISTER)
    if text is None or ":" not in text:
        return None
    if not all(_allocatable(node, r) for r in (VGPU_NUMBER, VGPU_CORES, VGPU_MEMORY)):
        return None
    cards: dict[int, Card] = {}
    for index, entry in enumerate(text.split(":")):
        if "," not in entry:
            continue
        items = entry.split(",")
        if len(items) < 6:
            return None
        cards[index] = Card(index, items[0], _int(items[1]), _int(items[2]), items[3],
                            items[4] in ("1", "t", "T", "TRUE", "true", "True"))
    # (a `mig` card falls back to hami-core without the device ConfigMap's geometries: the node's mode too)
    return Node(meta.name(node), HAMI_CORE, cards) if cards else None


def why_ignored(node: Obj) -> str | None:
    """Why a node that carries the register annotation has no vGPUs for the scheduler (None: it has, or
    it carries no annotation): what upstream only logs, for a reader of the node's manifest."""
    text = meta.annotations(node).get(REGISTER)
    if text is None:
        return None
    missing = [r for r in (VGPU_NUMBER, VGPU_CORES, VGPU_MEMORY) if not _allocatable(node, r)]
    if missing:
        return f"{REGISTER} is set but status.allocatable has no (or zero) {', '.join(missing)}"
    for entry in text.split(":"):
        if "," in entry and len(entry.split(",")) < 6:
            return f"{REGISTER} entry {entry!r} has fewer than six fields (UUID,count,memory,type,health,mode)"
    if ":" not in text or not any("," in e for e in text.split(":")):
        return f"{REGISTER} lists no card (UUID,count,memory,type,health,mode entries, each ended by ':')"
    return None


def card_problems(node: Obj) -> list[str]:
    """The cards of a node's register annotation whose count or memory upstream reads as 0 (not an
    integer: the card then takes no pod), for a reader of the node's manifest; [] when none, or when
    the node has no vGPUs at all (why_ignored says why)."""
    if node_devices(node) is None:
        return []
    out = []
    for entry in meta.annotations(node)[REGISTER].split(":"):
        items = entry.split(",")
        if len(items) < 6:
            continue
        for field, value in (("count", items[1]), ("memory", items[2])):
            if not _GO_INT.fullmatch(value):
                out.append(f"{REGISTER} card {items[0]!r}: {field} {value!r} is not an integer, so it counts 0 "
                           "and the card takes no pod")
    return out


def decode_pod_devices(text: str) -> list[list[tuple[str, int, int]]]:
    """`vgpu-ids-new` as (UUID, memory, cores) per card per container; unreadable entries are skipped."""
    out = []
    for container in text.split(";") if text else ():
        devs = []
        for entry in container.split(":"):
            items = entry.split(",")
            if len(items) < 4:
                continue
            try:
                devs.append((items[0], int(items[2]), int(items[3])))
            except ValueError:
                continue
        out.append(devs)
    return out


def encode_pod_devices(chosen: list[list[tuple[str, int, int]]]) -> str:
    return ";".join("".join(f"{u},{NVIDIA},{m},{c}:" for u, m, c in container) for container in chosen)


def group_key(pod: Obj) -> str:
    """namespace/PodGroup of the pod (`scheduling.k8s.io/group-name`, else `scheduling.volcano.sh/group-name`)."""
    ann = meta.annotations(pod)
    group = ann.get(batch.GROUP_NAME) or ann.get(VOLCANO_GROUP_NAME) or ""
    return f"{meta.namespace(pod)}/{group}" if group else ""


def _whole(container: Obj, name: str, fallback_requests: bool) -> int | None:
    res = container.get("resources") or {}
    value = (res.get("limits") or {}).get(name)
    if value is None and fallback_requests:
        value = (res.get("requests") or {}).get(name)
    if value is None:
        return None
    try:
        v = quantity.parse(value)
    except (ValueError, TypeError):
        return 0
    return int(v) if v.denominator == 1 else 0   # (AsInt64: not an integer -> not read)


def requests(pod: Obj) -> bool:
    """checkVGPUResourcesInPod: a container limits vgpu-memory or vgpu-number."""
    for c in (pod.get("spec") or {}).get("containers") or ():
        limits = (c.get("resources") or {}).get("limits") or {}
        if VGPU_MEMORY in limits or VGPU_NUMBER in limits:
            return True
    return False


@dataclasses.dataclass(frozen=True)
class Request:
    nums: int
    mem: int
    mem_percent: int   # 101: not given (the default configuration names no percentage resource)
    cores: int


def container_requests(pod: Obj) -> list[Request]:
    """ExtractResourceRequest, per container that asks for vGPUs."""
    out = []
    for c in (pod.get("spec") or {}).get("containers") or ():
        nums = _whole(c, VGPU_NUMBER, False)
        if nums is None:
            if _whole(c, VGPU_MEMORY, False) is None:
                continue
            nums = 1
        mem = _whole(c, VGPU_MEMORY, True) or 0
        cores = _whole(c, VGPU_CORES, True) or 0
        out.append(Request(nums, mem, 100 if mem == 0 else 101, cores))
    return out


def _type_allowed(ann: dict[str, str], card_type: str) -> bool:
    """checkGPUtype: `use-gputype` (any listed substring, case-insensitive) or not `nouse-gputype`."""
    upper = card_type.upper()
    if USE_TYPE in ann:
        return any(v.upper() in upper for v in ann[USE_TYPE].split(","))
    if NOUSE_TYPE in ann:
        return not any(v.upper() in upper for v in ann[NOUSE_TYPE].split(","))
    return True


def _uuids(value: str | None) -> list[str]:
    return [u.strip() for u in (value or "").split(",") if u.strip()]


def _order(dev: Node, policy: str) -> list[int]:
    if policy == BINPACK:
        return sorted(dev.cards, key=lambda i: (-dev.cards[i].used_mem, i))
    if policy == SPREAD:
        return sorted(dev.cards, key=lambda i: (dev.cards[i].used_num, i))
    return sorted(dev.cards, reverse=True)


def _card_score(policy: str, card: Card, was_unused: bool) -> float:
    if policy == BINPACK:
        return 100 * card.used_mem / card.memory if card.memory else 0.0
    if policy == SPREAD:
        return 100.0 if was_unused else 0.0
    return 0.0


def fit(dev: Node, pod: Obj, policy: str) -> tuple[list[list[tuple[str, int, int]]] | None, float, str]:
    """checkNodeGPUSharingPredicateAndScore on a copy of the ledger: (cards per container or None, score,
    why not)."""
    ann = meta.annotations(pod)
    if MODE in ann and ann[MODE] != dev.mode:
        return None, 0.0, f"pod required sharing mode {ann[MODE]} is not the same as the node mode {dev.mode}"
    reqs = container_requests(pod)
    # what the tentative additions change, per card index: [num, mem, core]
    extra: dict[int, list[int]] = {}
    group = group_key(pod) if ann.get(PODGROUP_POLICY) == SPREAD else ""
    allow, deny = _uuids(ann.get(USE_UUID)), _uuids(ann.get(NOUSE_UUID))
    chosen: list[list[tuple[str, int, int]]] = []
    score = 0.0
    for req in reqs:
        if req.nums > len(dev.cards):
            return None, 0.0, f"no enough gpu cards on node {dev.name}"
        need, devs, uuid_matched = req.nums, [], False
        view = _Tentative(dev, extra)
        for i in _order(view, policy):
            card = dev.cards[i]
            num, mem, core = view.used(i)
            if (allow or deny) and (not card.uuid or (allow and card.uuid not in allow) or card.uuid in deny):
                continue
            uuid_matched = True
            if card.count <= num:
                continue
            if group and any(u[3] == group and (u[1] > 0 or u[2] > 0) for u in card.pods.values()):
                continue
            want_mem = int(card.memory * req.mem_percent / 100) if req.mem_percent != 101 else req.mem
            if card.memory - mem < want_mem or core + req.cores > 100:
                continue
            if (req.cores == 100 and num > 0) or (core == 100 and req.cores == 0):
                continue
            if NVIDIA not in card.type or not _type_allowed(ann, card.type):
                continue
            e = extra.setdefault(i, [0, 0, 0])
            e[0] += 1
            e[1] += want_mem
            e[2] += req.cores
            if need > 0:
                need -= 1
                devs.append((card.uuid, want_mem, req.cores))
                score += _card_score(policy, _Used(card, e), num == 0)
            if need == 0:
                break
        if need > 0:
            if (allow or deny) and not uuid_matched:
                return None, 0.0, (f"no GPU matches UUID constraints {USE_UUID}={ann.get(USE_UUID, '')!r}, "
                                   f"{NOUSE_UUID}={ann.get(NOUSE_UUID, '')!r} on node {dev.name}")
            return None, 0.0, "not enough gpu fitted on this node"
        chosen.append(devs)
    return chosen, score, ""


class _Used:
    """A card as it would be with the tentative additions `e` ([num, mem, core])."""

    def __init__(self, card: Card, e: list[int]):
        self.memory = card.memory
        self.used_mem = card.used_mem + e[1]
        self.used_num = card.used_num + e[0]


class _Tentative:
    """The ledger with the tentative additions, as `_order` reads it."""

    def __init__(self, dev: Node, extra: dict[int, list[int]]):
        self.dev, self.extra = dev, extra
        self.cards = {i: _Used(c, extra.get(i, [0, 0, 0])) for i, c in dev.cards.items()}

    def used(self, i: int) -> tuple[int, int, int]:
        card, e = self.dev.cards[i], self.extra.get(i, [0, 0, 0])
        return card.used_num + e[0], card.used_mem + e[1], card.used_core + e[2]


def allocate(dev: Node, uid: str, pod: Obj, policy: str, unix: int) -> dict[str, str] | None:
    """Allocate: the cards chosen, charged to the ledger, as the annotations to bind with; None when none fit."""
    chosen, _, _ = fit(dev, pod, policy)
    if chosen is None:
        return None
    dev.add_chosen(uid, pod, chosen)
    ids = encode_pod_devices(chosen)
    return {ASSIGNED_NODE: dev.name, ASSIGNED_TIME: str(unix), ASSIGNED_IDS: ids, TO_ALLOCATE: ids,
            BIND_PHASE: "allocating", BIND_TIME: str(unix)}
