"""The usage plugin's arithmetic (plugins/usage/estimator.go, shadow_cache.go): what a pod placed since
the last metrics is expected to use, and how busy that makes a node.

- `pod_estimate(request, limit, request_ratio, burst_ratio, risk)`: (request·request_ratio + (limit −
  request)·burst_ratio)·risk, within [0, effective limit] (the limit, or the request when the limit is
  missing or lower); a BestEffort pod is estimated at the configured `be_cpu`/`be_mem`·risk.
- `composite(real_percent, shadow, capacity)`: (real% of capacity + shadow) / capacity within [0, 1].
- `load(cpu, mem, cpu_weight, mem_weight)`: their weighted mean; `risk_factor(load, threshold,
  factor)`: `factor` once the load reaches `threshold` (a factor below 1 is 1).
- `node_score(cpu, mem, weights, usage_weight)`: the weighted mean of what is left, × 100 × usage.weight.
- `ShadowCache`: per node, the estimates of the pods placed but not yet visible in the metrics; each
  pod's estimate is kept as added, so taking it out subtracts exactly that (a pod added again replaces
  its earlier estimate).

Must not: know the session.
"""
from __future__ import annotations

MAX_NODE_SCORE = 100.0   # kube-scheduler's MaxNodeScore


def _clamp(value: float, low: float, high: float) -> float:
    return low if value < low else high if value > high else value


def load(cpu: float, mem: float, cpu_weight: int, mem_weight: int) -> float:
    total = cpu_weight + mem_weight
    return 0.0 if total == 0 else (cpu * cpu_weight + mem * mem_weight) / total


def risk_factor(load_value: float, threshold: float, factor: float) -> float:
    if factor < 1.0:
        return 1.0
    return factor if load_value >= threshold else 1.0


def pod_estimate(request: float, limit: float, request_ratio: float, burst_ratio: float, risk: float) -> float:
    request = max(request, 0.0)
    effective = request if limit <= 0 or limit < request else limit
    burst = max(effective - request, 0.0)
    return _clamp((request * request_ratio + burst * burst_ratio) * risk, 0.0, effective)


def best_effort_estimate(configured: float, risk: float) -> float:
    return max(configured, 0.0) * risk


def composite(real_percent: float, shadow: float, capacity: float) -> float:
    if capacity <= 0:
        return 0.0
    return _clamp((real_percent / 100.0 * capacity + shadow) / capacity, 0.0, 1.0)


def node_score(cpu: float, mem: float, cpu_weight: int, mem_weight: int, usage_weight: int) -> float:
    total = cpu_weight + mem_weight
    if total == 0:
        return 0.0
    left = ((1.0 - cpu) * cpu_weight + (1.0 - mem) * mem_weight) / total
    return left * MAX_NODE_SCORE * usage_weight


class ShadowCache:
    """Estimated CPU (millicores) and memory (bytes) per node of the pods the metrics do not show yet."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.mem: dict[str, float] = {}
        self.snapshots: dict[str, tuple[str, float, float]] = {}   # pod uid -> (node, cpu, mem) as added

    def node(self, name: str) -> tuple[float, float]:
        return self.cpu.get(name, 0.0), self.mem.get(name, 0.0)

    def add(self, node: str, uid: str, cpu: float, mem: float) -> None:
        if uid in self.snapshots:
            self._subtract(self.snapshots[uid])
        self.cpu[node] = self.cpu.get(node, 0.0) + cpu
        self.mem[node] = self.mem.get(node, 0.0) + mem
        self.snapshots[uid] = (node, cpu, mem)

    def remove(self, uid: str) -> None:
        snap = self.snapshots.pop(uid, None)
        if snap is not None:
            self._subtract(snap)

    def _subtract(self, snap: tuple[str, float, float]) -> None:
        node, cpu, mem = snap
        self.cpu[node] = max(self.cpu.get(node, 0.0) - cpu, 0.0)
        self.mem[node] = max(self.mem.get(node, 0.0) - mem, 0.0)
