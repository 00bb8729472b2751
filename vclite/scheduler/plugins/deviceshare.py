"""deviceshare: shared GPUs — Volcano's GPU sharing / GPU number (gpushare.py) and vGPU (vgpu.py) devices.

Arguments (plugins/deviceshare/deviceshare.go): `deviceshare.GPUSharingEnable` (pods asking
`volcano.sh/gpu-memory`), `deviceshare.GPUNumberEnable` (`volcano.sh/gpu-number`),
`deviceshare.VGPUEnable` (`volcano.sh/vgpu-*`), `deviceshare.SchedulePolicy` (binpack or spread:
the order vGPU cards are tried in and their score), `deviceshare.ScheduleWeight` (the node score's
multiplier; 0, the default, scores nothing). GPU sharing with GPU number, or either with vGPU, is
refused at load (upstream exits). `deviceshare.NodeLockEnable` and the MIG ConfigMap's
`deviceshare.KnownGeometriesCMName`/`...Namespace` are accepted and change nothing here (one scheduler,
no cross-scheduler node lock; no ConfigMap read: the default device configuration); the Ascend NPU
switches are refused when true.

Each session builds the ledger of every node that advertises devices from the pods placed there (pods
of a node that are neither finished, pipelined nor being deleted, from their `volcano.sh/gpu-index` or
`volcano.sh/vgpu-ids-new` annotations), then keeps it current with the allocate / deallocate events.
- Predicate: a pod asking for an enabled device fails on a node with such devices that cannot hold
  it (a node without them passes here, and resource fit judges its extended resources), resolvable;
- NodeOrder: round(the devices' score) × ScheduleWeight (registered only with a weight > 0);
- allocate event: the devices chosen (upstream does it in the predicates plugin's handler) are
  charged to the ledger, and for a pod being bound their annotations go on its binding —
  `volcano.sh/gpu-index` and `volcano.sh/predicate-time`, or the vGPU ones (vgpu.py) — with the
  session's time; deallocate (an eviction, a discarded statement) takes them back. When no card fits
  (a node the predicate was not asked about), the allocation is refused (statement.Refused, upstream's
  error) and the statement undoes it: the pod stays Pending, its message says why.

Must not: write to the API (the annotations travel with the session's binds).
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.scheduler.framework import fit, hooks, plugin, statement
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import gpushare, podindex, vgpu

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

P = "deviceshare."
POLICIES = ("", vgpu.BINPACK, vgpu.SPREAD)
TaskStatus = tasks_mod.TaskStatus
# task statuses whose pod holds its devices (upstream NodeInfo.AddTask: not Pipelined, not Releasing)
_HOLDING = tasks_mod.OCCUPYING_STATUS - {TaskStatus.RELEASING, TaskStatus.PIPELINED}
_NEW = (TaskStatus.ALLOCATED, TaskStatus.PIPELINED)


def _policy(value: Any, where: str) -> str:
    text = plugin.convert(value, str, where)
    if text not in POLICIES:
        raise ValueError(f"{where}: expected binpack or spread, got {value!r} (Volcano would silently use neither: "
                         "cards tried from the last one, no score)")
    return text


def _not_ported(value: Any, where: str) -> bool:
    if plugin.convert(value, bool, where):
        raise ValueError(f"{where}: Ascend NPU sharing is not supported by vclite yet; remove it or set it false")
    return False


@dataclasses.dataclass(frozen=True)
class Arguments:
    gpu_sharing: bool = plugin.arg(P + "GPUSharingEnable", False)
    gpu_number: bool = plugin.arg(P + "GPUNumberEnable", False)
    node_lock: bool = plugin.arg(P + "NodeLockEnable", False)
    vgpu: bool = plugin.arg(P + "VGPUEnable", False)
    ascend_mindcluster: bool = plugin.arg(P + "AscendMindClusterVNPUEnable", False, _not_ported)
    ascend_hami: bool = plugin.arg(P + "AscendHAMiVNPUEnable", False, _not_ported)
    schedule_policy: str = plugin.arg(P + "SchedulePolicy", "", _policy)
    schedule_weight: int = plugin.arg(P + "ScheduleWeight", 0)
    geometries_cm_name: str = plugin.arg(P + "KnownGeometriesCMName", "volcano-vgpu-device-config")
    geometries_cm_namespace: str = plugin.arg(P + "KnownGeometriesCMNamespace", "kube-system")

    def check_together(self) -> None:
        if self.gpu_sharing and self.gpu_number:
            raise ValueError("deviceshare: can not define true in both gpu sharing and gpu number "
                             f"({P}GPUSharingEnable and {P}GPUNumberEnable)")
        if (self.gpu_sharing or self.gpu_number) and self.vgpu:
            raise ValueError(f"deviceshare: gpu-share and vgpu can't be used together ({P}VGPUEnable with "
                             f"{P}GPUSharingEnable or {P}GPUNumberEnable)")


class DeviceShare:
    name = "deviceshare"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.args = arguments
        self.share: dict[int, gpushare.Node] = {}   # node row -> GPU share ledger
        self.vgpu: dict[int, vgpu.Node] = {}        # node row -> vGPU ledger
        self.ssn: Any = None

    # ---- what a pod asks ---------------------------------------------------------------------------
    def _wants_share(self, pod: dict) -> bool:
        return bool(self.share) and gpushare.requests(pod, self.args.gpu_sharing, self.args.gpu_number)

    def _wants_vgpu(self, pod: dict) -> bool:
        return bool(self.vgpu) and vgpu.requests(pod)

    # ---- session -----------------------------------------------------------------------------------
    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        a = self.args
        if not (a.gpu_sharing or a.gpu_number or a.vgpu):
            return
        self.ssn = ssn
        self.build(ssn.nodes.objects, ssn.pods, ssn.nodes.index)
        if not (self.share or self.vgpu):
            return
        reg.add(hooks.Point.PREDICATE, self.predicate)
        if a.schedule_weight > 0:
            reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self._score_key)
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)

    def build(self, nodes: list[dict], pods: list[dict], index: dict[str, int]) -> None:
        """The ledgers of the nodes with devices, with the pods already placed on them."""
        for row, node in enumerate(nodes):
            if self.args.gpu_sharing or self.args.gpu_number:
                dev = gpushare.node_devices(node)
                if dev is not None:
                    self.share[row] = dev
            if self.args.vgpu:
                vdev = vgpu.node_devices(node)
                if vdev is not None:
                    self.vgpu[row] = vdev
        if not (self.share or self.vgpu):
            return
        for pod in pods:
            row = index.get(tasks_mod.node_name(pod))
            if row is None or tasks_mod.pod_status(pod) not in _HOLDING:
                continue
            self._add_placed(row, podindex.pod_uid(pod), pod)

    def _add_placed(self, row: int, uid: str, pod: dict) -> None:
        share = self.share.get(row)
        if share is not None and (gpushare.pod_amount(pod, gpushare.GPU_MEMORY) > 0
                                  or gpushare.pod_amount(pod, gpushare.GPU_NUMBER) > 0):
            share.add(uid, pod, gpushare.gpu_index(pod))
        vdev = self.vgpu.get(row)
        if vdev is not None:
            vdev.add_placed(uid, pod)

    def predicate(self, task: tasks_mod.TaskInfo, nodes: Any) -> list[fit.Failure]:
        pod = task.pod
        share, vg = self._wants_share(pod), self._wants_vgpu(pod)
        if not (share or vg):
            return []
        reasons: dict[str, np.ndarray] = {}
        n = len(nodes)
        if share:
            for row, dev in self.share.items():
                why = gpushare.filter_node(dev, pod, self.args.gpu_sharing, self.args.gpu_number)
                if why:
                    reasons.setdefault(why, np.zeros(n, dtype=bool))[row] = True
        if vg:
            for row, vdev in self.vgpu.items():
                if reasons and any(m[row] for m in reasons.values()):
                    continue
                chosen, _, _ = vgpu.fit(vdev, pod, self.args.schedule_policy)
                if chosen is None:
                    reasons.setdefault(vgpu.NO_FIT, np.zeros(n, dtype=bool))[row] = True
        if not reasons:
            return []
        return [fit.Failure(tuple(reasons.items()), resolvable=True)]

    def _score_key(self, task: tasks_mod.TaskInfo) -> Any:
        """Tasks asking for no device score 0 everywhere (one memo); device tasks are scored each time."""
        return None if (self._wants_share(task.pod) or self._wants_vgpu(task.pod)) else ()

    def node_order(self, task: tasks_mod.TaskInfo, rows: Any) -> np.ndarray:
        out = np.zeros(len(rows))
        if not self._wants_vgpu(task.pod):
            return out   # (GPU share devices score 0 upstream)
        for k, row in enumerate(rows.tolist()):
            vdev = self.vgpu.get(row)
            if vdev is not None:
                chosen, score, _ = vgpu.fit(vdev, task.pod, self.args.schedule_policy)
                if chosen is not None:
                    out[k] = math.floor(score + 0.5) * self.args.schedule_weight
        return out

    def on_allocate(self, task: tasks_mod.TaskInfo) -> statement.Refused | None:
        """The cards of an allocated or pipelined pod, charged and annotated; when none fit (the predicate
        was not asked, e.g. `enablePredicate: false`), the allocation is refused with upstream's error and the
        statement undoes it (upstream's event.Err: Statement.Allocate rolls it back), so no pod is bound
        without its card."""
        row = self.ssn.nodes.index.get(task.node)
        if row is None:
            return None
        pod = task.pod
        if task.status not in _NEW:   # (a discarded eviction puts a placed pod back)
            self._add_placed(row, task.uid, pod)
            return None
        annotations: dict[str, str] = {}
        share = self.share.get(row)
        if share is not None and self._wants_share(pod):
            got = gpushare.allocate(share, task.uid, pod, _unix_nano(self.ssn.now))
            if got is None:
                why = gpushare.filter_node(share, pod, self.args.gpu_sharing, self.args.gpu_number)
                ns, name = task.key.split("/", 1)
                return statement.Refused(f"deviceshare: the node {task.node} can't place the pod {name} in ns {ns}"
                                         + (f" ({why})" if why else ""))
            annotations.update(got)
        vdev = self.vgpu.get(row)
        if vdev is not None and self._wants_vgpu(pod):
            unix = _unix_nano(self.ssn.now) // 10**9
            got = vgpu.allocate(vdev, task.uid, pod, self.args.schedule_policy, unix)
            if got is None:
                why = vgpu.fit(vdev, pod, self.args.schedule_policy)[2]
                return statement.Refused(f"deviceshare: {why or 'no enough gpu cards on node ' + task.node}")
            annotations.update(got)
        if annotations:
            task.bind_annotations = {**(task.bind_annotations or {}), **annotations}
        return None

    def on_deallocate(self, task: tasks_mod.TaskInfo) -> None:
        row = self.ssn.nodes.index.get(task.node)
        if row is None:
            return
        for ledger in (self.share.get(row), self.vgpu.get(row)):
            if ledger is not None:
                ledger.remove(task.uid)
        if task.bind_annotations:
            left = {k: v for k, v in task.bind_annotations.items() if k not in gpushare.RELEASED + vgpu.RELEASED}
            task.bind_annotations = left or None

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        self.share, self.vgpu, self.ssn = {}, {}, None


def _unix_nano(now: Any) -> int:
    """The session's time in nanoseconds since the epoch (upstream reads the clock: time.Now())."""
    return int(now.timestamp()) * 10**9 + now.microsecond * 1000
