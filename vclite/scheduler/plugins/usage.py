"""usage: keep pods off busy nodes and prefer idle ones, by the nodes' measured CPU and memory use
(plugins/usage/usage.go).

Node usage is the session's `node_usage` (scheduler/nodemetrics.py: the scheduler conf's `metrics`
source, averages over `10m`). A node's metrics are *active* when read less than 5 minutes before the
session; a node without active metrics (no `metrics` section, never read, or stale) passes the
predicate and scores 0, as upstream.
- Predicate (`enablePredicate`): a node whose CPU average is above `thresholds.cpu` (80) is refused,
  "the CPU load of the node exceeds the upper limit." (then memory above `thresholds.mem`, 80), as
  UnschedulableAndUnresolvable (preempt and reclaim do not consider it).
- NodeOrder: ((1 − cpu)·cpu.weight + (1 − mem)·memory.weight) / (cpu.weight + memory.weight) · 100 ·
  usage.weight, where cpu and mem are the node's composite use: the measured percentage plus the
  estimates of pods the metrics cannot show yet (usage_estimate.py), over the node's capacity.
- The estimates ("shadow" pods): at session open every pod on a node that is Allocated, Binding or
  Bound, or Running and started less than `metrics.interval` (30s) ago; then each allocation and
  pipeline of the session adds its pod, each eviction and undone allocation takes it out.
Arguments (Volcano's names): `usage.weight` (5), `cpu.weight` (1), `memory.weight` (1), `thresholds:
{cpu: 80, mem: 80}` (integers 0–100), `estimator: {request_ratio: 0.7, burst_ratio: 0, risk_threshold:
0.6, risk_factor: 1.2, be_cpu: 250m, be_mem: 200Mi}` (ratios 0–1, factor ≥ 1; be_cpu an integer of
millicores or a quantity, be_mem an integer of MiB or a quantity). Where Volcano ignores a value of the
wrong type or out of range and keeps the default, vclite refuses it at load.
Differences: a node's capacity is `status.capacity`, else `status.allocatable` (a hand-written dry-run
state may give only that; upstream would count it 0 and score the node as idle); the shadow pods are
added in pod key order where upstream walks a map.

Must not: read the metrics source (the scheduler shell or the dry run did, before the session).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import meta, quantity, resources
from vclite.lib import clock
from vclite.scheduler import nodemetrics
from vclite.scheduler.framework import fit, hooks, plugin
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import usage_estimate as est

if TYPE_CHECKING:
    from vclite.scheduler.framework import nodes as nodes_mod
    from vclite.scheduler.framework import session as session_mod

NAME = "usage"
METRICS_ACTIVE = _dt.timedelta(minutes=5)
CPU_EXCEEDED = "the CPU load of the node exceeds the upper limit."
MEMORY_EXCEEDED = "the memory load of the node exceeds the upper limit."
DEFAULT_METRICS_INTERVAL = 30.0
_SHADOW = frozenset({tasks_mod.TaskStatus.ALLOCATED, tasks_mod.TaskStatus.BINDING, tasks_mod.TaskStatus.BOUND})
_KEEPS = "Volcano ignores it and keeps the default"


def _number(value: Any, where: str, integer: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        kind = "an integer, unquoted" if integer else "a number, unquoted"
        raise ValueError(f"{where}: expected {kind}, got {value!r}; {_KEEPS}")
    return value


def _section(value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a mapping ({', '.join(keys)}), got {value!r}; {_KEEPS}")
    for key in value:
        if key not in keys:
            raise ValueError(f"{where}: unknown key {str(key)!r} (known: {', '.join(keys)})")
    return value


@dataclasses.dataclass(frozen=True)
class Thresholds:
    cpu: float = 80.0
    mem: float = 80.0


def read_thresholds(value: Any, where: str) -> Thresholds:
    f = _section(value, f"{where}: thresholds", ("cpu", "mem"))
    out = {}
    for key in ("cpu", "mem"):
        if key in f:
            v = _number(f[key], f"{where}: thresholds.{key}", integer=True)
            if not 0 <= v <= 100:
                raise ValueError(f"{where}: thresholds.{key}: must be a percentage from 0 to 100, got {v}; {_KEEPS}")
            out[key] = float(v)
    return Thresholds(**out)


@dataclasses.dataclass(frozen=True)
class Estimator:
    request_ratio: float = 0.7
    burst_ratio: float = 0.0
    risk_threshold: float = 0.6
    risk_factor: float = 1.2
    be_cpu: float = 250.0                     # millicores
    be_mem: float = float(200 * 1024 * 1024)  # bytes


_ESTIMATOR_KEYS = ("request_ratio", "burst_ratio", "risk_threshold", "risk_factor", "be_cpu", "be_mem")


def _best_effort(value: Any, where: str, mib: bool) -> float:
    """be_cpu: an integer of millicores or a quantity; be_mem: an integer of MiB or a quantity (bytes)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{where}: must not be negative, got {value}; {_KEEPS}")
        return float(value * 1024 * 1024 if mib else value)
    if isinstance(value, str):
        try:
            q = quantity.parse(value)
        except ValueError:
            q = None
        if q is not None and q >= 0:
            return float(-((-q) // 1) if mib else -((-q * 1000) // 1))   # Value() / MilliValue(): rounded up
    raise ValueError(f"{where}: expected {'an integer of MiB' if mib else 'an integer of millicores'} or a quantity "
                     f"such as {'200Mi' if mib else '250m'}, got {value!r}; {_KEEPS}")


def read_estimator(value: Any, where: str) -> Estimator:
    f = _section(value, f"{where}: estimator", _ESTIMATOR_KEYS)
    out: dict[str, float] = {}
    for key, low, high in (("request_ratio", 0, 1), ("burst_ratio", 0, 1), ("risk_threshold", 0, 1),
                           ("risk_factor", 1, float("inf"))):
        if key in f:
            v = _number(f[key], f"{where}: estimator.{key}", integer=False)
            if not low <= v <= high:
                bound = f"from {low} to {high}" if high != float("inf") else f"at least {low}"
                raise ValueError(f"{where}: estimator.{key}: must be {bound}, got {v}; {_KEEPS}")
            out[key] = float(v)
    for key, mib in (("be_cpu", False), ("be_mem", True)):
        if key in f:
            out[key] = _best_effort(f[key], f"{where}: estimator.{key}", mib)
    return Estimator(**out)


def _weight(value: Any, where: str) -> int:
    v = _number(value, where, integer=True)
    if v < 0:
        raise ValueError(f"{where}: must not be negative, got {v}; {_KEEPS}")
    return int(v)


@dataclasses.dataclass(frozen=True)
class Arguments:
    usage_weight: int = plugin.arg("usage.weight", 5, _weight)
    cpu_weight: int = plugin.arg("cpu.weight", 1, _weight)
    memory_weight: int = plugin.arg("memory.weight", 1, _weight)
    thresholds: Thresholds = plugin.arg("thresholds", Thresholds(), read_thresholds)
    estimator: Estimator = plugin.arg("estimator", Estimator(), read_estimator)


def metrics_interval(metrics: Any) -> float:
    """`metrics.interval` of the scheduler conf in seconds, when a positive Go duration; else 30 s."""
    try:
        value = clock.parse_duration((metrics or {}).get("interval", ""))
    except ValueError:
        return DEFAULT_METRICS_INTERVAL
    return value if value > 0 else DEFAULT_METRICS_INTERVAL


def _capacity(node: dict, name: str) -> float:
    """The node's capacity of cpu (millicores) or memory (bytes): status.capacity, else allocatable."""
    status = node.get("status") or {}
    for field in ("capacity", "allocatable"):
        raw = (status.get(field) or {}).get(name)
        if raw is not None:
            try:
                q = quantity.parse(raw)
            except ValueError:
                return 0.0
            return float(q * 1000 if name == "cpu" else q)
    return 0.0


def _pod_amounts(pod: dict) -> tuple[float, float, float, float, bool]:
    """(cpu request, cpu limit, memory request, memory limit, BestEffort) in millicores and bytes."""
    try:
        req, lim = resources.pod_requests(pod), resources.pod_limits(pod)
    except ValueError:
        return 0.0, 0.0, 0.0, 0.0, True
    zero = quantity.Fraction(0)
    return (float(req.get("cpu", zero) * 1000), float(lim.get("cpu", zero) * 1000),
            float(req.get("memory", zero)), float(lim.get("memory", zero)), resources.is_best_effort(req))


class Usage:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.args = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        self.shadow = est.ShadowCache()
        self.delay = _dt.timedelta(seconds=metrics_interval(ssn.conf.metrics))
        nodes = ssn.nodes
        self.usage = [ssn.node_usage.get(name, nodemetrics.NO_USAGE) for name in nodes.names]
        self.active = np.array([u.metrics_time is not None and ssn.now - u.metrics_time <= METRICS_ACTIVE
                                for u in self.usage], dtype=bool)
        period = nodemetrics.NODE_METRICS_PERIOD
        self.real_cpu = [u.cpu_avg.get(period, 0.0) for u in self.usage]
        self.real_mem = [u.mem_avg.get(period, 0.0) for u in self.usage]
        self.cap_cpu = [_capacity(n, "cpu") for n in nodes.objects]
        self.cap_mem = [_capacity(n, "memory") for n in nodes.objects]
        t = self.args.thresholds
        cpu = self.active & (np.array(self.real_cpu) > t.cpu)
        mem = self.active & ~cpu & (np.array(self.real_mem) > t.mem)
        reasons = tuple((why, mask) for why, mask in ((CPU_EXCEEDED, cpu), (MEMORY_EXCEEDED, mem)) if mask.any())
        self.refused = [fit.Failure(reasons)] if reasons else []   # (the same for every task)
        self._warm_up()
        reg.add(hooks.Point.ALLOCATE_EVENT, self.on_allocate)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.on_deallocate)
        reg.add(hooks.Point.PREDICATE, self.predicate)
        # a node's score depends on that node alone (its metrics and the shadow pods placed on it, which
        # change only with the node's own rows), whatever the task: one key for every task
        reg.add(hooks.Point.NODE_ORDER, self.node_order, key=lambda task: NAME)

    # ---- the shadow pods ---------------------------------------------------------------------------
    def _in_blind_spot(self, pod: dict, status: tasks_mod.TaskStatus) -> bool:
        if status in _SHADOW:
            return True
        if status != tasks_mod.TaskStatus.RUNNING:
            return False
        started = clock.parse_time((pod.get("status") or {}).get("startTime"))
        return started is None or self.ssn.now - started < self.delay

    def _warm_up(self) -> None:
        index = self.ssn.nodes.index
        for pod in sorted(self.ssn.pods, key=meta.key):
            node = tasks_mod.node_name(pod)
            if node in index and self._in_blind_spot(pod, tasks_mod.pod_status(pod)):
                self._add(index[node], meta.uid(pod) or meta.key(pod), pod)

    def _composite(self, row: int) -> tuple[float, float]:
        cpu, mem = self.shadow.node(self.ssn.nodes.names[row])
        return (est.composite(self.real_cpu[row], cpu, self.cap_cpu[row]),
                est.composite(self.real_mem[row], mem, self.cap_mem[row]))

    def _add(self, row: int, uid: str, pod: dict) -> None:
        e, a = self.args.estimator, self.args
        risk = est.risk_factor(est.load(*self._composite(row), a.cpu_weight, a.memory_weight),
                               e.risk_threshold, e.risk_factor)
        cpu_req, cpu_lim, mem_req, mem_lim, best_effort = _pod_amounts(pod)
        if best_effort:
            cpu, mem = est.best_effort_estimate(e.be_cpu, risk), est.best_effort_estimate(e.be_mem, risk)
        else:
            cpu = est.pod_estimate(cpu_req, cpu_lim, e.request_ratio, e.burst_ratio, risk)
            mem = est.pod_estimate(mem_req, mem_lim, e.request_ratio, e.burst_ratio, risk)
        self.shadow.add(self.ssn.nodes.names[row], uid, cpu, mem)

    def on_allocate(self, task: tasks_mod.TaskInfo) -> None:
        row = self.ssn.nodes.index.get(task.node)
        if row is not None:
            self._add(row, task.uid, task.pod)

    def on_deallocate(self, task: tasks_mod.TaskInfo) -> None:
        self.shadow.remove(task.uid)

    # ---- hooks -------------------------------------------------------------------------------------
    def predicate(self, task: tasks_mod.TaskInfo, nodes: "nodes_mod.NodeState") -> list[fit.Failure]:
        return self.refused

    def node_order(self, task: tasks_mod.TaskInfo, rows: np.ndarray) -> np.ndarray:
        a = self.args
        out = np.zeros(len(rows))
        for i, row in enumerate(rows.tolist()):
            if self.active[row]:
                out[i] = est.node_score(*self._composite(row), a.cpu_weight, a.memory_weight, a.usage_weight)
        return out

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
