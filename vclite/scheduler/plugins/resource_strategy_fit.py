"""resource-strategy-fit: score nodes per resource, most- or least-allocated, keep scarce resources for
the pods that need them, and keep a GPU node's cpu and memory for its GPUs (plugins/resource-strategy-fit).

Arguments (Volcano's; nested values decoded as Volcano's JSON decoder does, keys without case):
- `resourceStrategyFitWeight` (10; negative: 10);
- `resources`: resource name (or a prefix pattern ending in one `*`, e.g. `nvidia.com/*`; the longest
  matching prefix wins, an exact name first) -> `{type: LeastAllocated|MostAllocated, weight}`
  (weight <= 0: 1; another type: LeastAllocated); absent or empty: cpu and memory LeastAllocated,
  weight 1. A pattern `*` alone, or with a `*` elsewhere, is dropped (upstream logs it);
- `sra` (scarce resource avoidance): `{enable, resources: "a, b", weight, resourceWeight: {a: 2}}`;
- `proportional`: `{enable, resources: "nvidia.com/gpu", resourceProportion: {nvidia.com/gpu.cpu: 4,
  nvidia.com/gpu.memory: 8}}` (cpus and GB per unit of the resource; absent or negative: 1).
NodeOrder, × 100:
- strategy: over the resources the pod requests that have a configuration (or, when the pod's
  annotation `volcano.sh/resource-strategy-scoring-type` names a type, those in its JSON annotation
  `volcano.sh/resource-strategy-weight`; a missing or bad weight annotation — not a JSON object, or a
  weight that is not an integer — scores 0): MostAllocated
  w·(used+request)/allocatable, LeastAllocated w·(allocatable−used−request)/allocatable (0 when
  allocatable or w is 0), averaged over the weights, × resourceStrategyFitWeight; 0 on a node where
  one of them would be over-used;
- sra (when enabled with a weight > 0): 0 on a node lacking a resource the pod requests, else
  (1 − Σ weights of the scarce resources the node has / Σ weights) × sra weight: nodes without
  scarce resources are preferred for pods that do not need them.
Predicate (when proportional is enabled): a pod requesting none of the listed resources may not take
a node's cpu or memory below what its idle units of them reserve ("proportional of resource <name>
check failed").

Must not: keep state between sessions.
"""
from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from vclite.api import meta
from vclite.scheduler.framework import dims as dims_mod
from vclite.scheduler.framework import fit, hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import nodes as nodes_mod
    from vclite.scheduler.framework import session as session_mod
    from vclite.scheduler.framework import tasks as tasks_mod

LEAST, MOST = "LeastAllocated", "MostAllocated"
SCORING_TYPE = "volcano.sh/resource-strategy-scoring-type"
SCORING_WEIGHT = "volcano.sh/resource-strategy-weight"
MAX_NODE_SCORE = 100.0
DEFAULT_WEIGHT = 10
DEFAULT_RESOURCES = {"cpu": (LEAST, 1), "memory": (LEAST, 1)}


def _fields(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a mapping, got {value!r}")
    return {str(k).lower(): v for k, v in value.items()}


def _int(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"{where}: expected an integer, got {value!r}")


def valid_pattern(name: str) -> bool:
    """Upstream's isValidWildcardPattern: no `*`, or one trailing `*` after a prefix."""
    return "*" not in name or (name != "*" and name.endswith("*") and name.count("*") == 1)


def read_resources(value: Any, where: str) -> tuple[tuple[str, str, int], ...]:
    out = []
    _fields(value, where)   # (a mapping, else refused)
    for name, cfg in value.items():
        f = _fields(cfg, f"{where}[{name}]")
        kind = f.get("type", "")
        weight = _int(f.get("weight", 0), f"{where}[{name}].weight") if "weight" in f else 0
        if not isinstance(kind, str):
            raise ValueError(f"{where}[{name}].type: expected {LEAST} or {MOST}, got {kind!r}")
        if valid_pattern(str(name)):
            out.append((str(name), kind if kind in (LEAST, MOST) else LEAST, weight if weight > 0 else 1))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class Sra:
    enable: bool = False
    weight: int = 0
    resources: tuple[tuple[str, int], ...] = ()


def _policy(value: Any, where: str, table: str) -> tuple[dict[str, Any], bool, list[str], dict]:
    """What sra and proportional share: (fields, `enable`, the names of `resources` "a, b", the map
    `table` — its keys matched exactly, as Go's decoder matches a map's)."""
    f = _fields(value, where)
    enable = f.get("enable", False)
    if not isinstance(enable, bool):
        raise ValueError(f"{where}.enable: expected true or false, got {enable!r}")
    names = f.get("resources", "")
    if not isinstance(names, str):
        raise ValueError(f"{where}.resources: expected a comma-separated string, got {names!r}")
    given = f.get(table.lower()) or {}
    if not isinstance(given, dict):
        raise ValueError(f"{where}.{table}: expected a mapping, got {given!r}")
    return f, enable, [n for n in (n.strip() for n in names.split(",")) if n], given


def read_sra(value: Any, where: str) -> Sra:
    f, enable, names, weights = _policy(value, where, "resourceWeight")
    resources = []
    for name in names:
        w = _int(weights[name], f"{where}.resourceWeight[{name}]") if name in weights else 1
        resources.append((name, w if w >= 0 else 1))
    return Sra(enable, _int(f.get("weight", 0), f"{where}.weight"), tuple(resources))


@dataclasses.dataclass(frozen=True)
class Proportional:
    enable: bool = False
    rates: tuple[tuple[str, float, float], ...] = ()     # resource, cpus per unit, GB per unit


def read_proportional(value: Any, where: str) -> Proportional:
    _, enable, names, given = _policy(value, where, "resourceProportion")
    rates = []
    for name in names:
        pair = []
        for part in ("cpu", "memory"):
            v = given.get(f"{name}.{part}", 1.0)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{where}.resourceProportion[{name}.{part}]: expected a number, got {v!r}")
            pair.append(float(v) if v >= 0 else 1.0)
        rates.append((name, pair[0], pair[1]))
    return Proportional(enable, tuple(rates))


@dataclasses.dataclass(frozen=True)
class Arguments:
    weight: int = plugin.arg("resourceStrategyFitWeight", DEFAULT_WEIGHT)
    resources: tuple = plugin.arg("resources", (), read_resources)
    sra: Sra = plugin.arg("sra", Sra(), read_sra)
    proportional: Proportional = plugin.arg("proportional", Proportional(), read_proportional)

    def strategy(self) -> dict[str, tuple[str, int]]:
        if not self.resources:
            return dict(DEFAULT_RESOURCES)
        return {name: (kind, w) for name, kind, w in self.resources}


def config_for(name: str, strategy: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
    """Upstream's findResourceConfigWithPrefix: the exact name, else the longest matching prefix pattern."""
    if name in strategy:
        return strategy[name]
    best, found = "", None
    for key, cfg in strategy.items():
        if key.endswith("*") and name.startswith(key[:-1]) and len(key) - 1 > len(best):
            best, found = key[:-1], cfg
    return found


class ResourceStrategyFit:
    name = "resource-strategy-fit"
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.arguments = arguments
        self.weight = arguments.weight if arguments.weight >= 0 else DEFAULT_WEIGHT
        self.strategy = arguments.strategy()

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.nodes = ssn.nodes
        dims = ssn.dims
        self.dims = dims
        sra = self.arguments.sra
        self.sra_weight = sra.weight if sra.enable else 0
        self.sra_sum = sum(w for _, w in sra.resources)
        self.sra_vector = np.zeros(len(dims))
        for name, w in sra.resources:
            if name in dims.index:
                self.sra_vector[dims.index[name]] += w
        prop = self.arguments.proportional
        if prop.enable and prop.rates:
            reg.add(hooks.Point.PREDICATE, self.predicate)
        if self.weight > 0 or self.sra_weight > 0:
            reg.add(hooks.Point.NODE_ORDER, self.node_order, key=self.key)

    # ---- NodeOrder -------------------------------------------------------------------------------
    def _pod_strategy(self, task: "tasks_mod.TaskInfo") -> tuple[str, Any] | None:
        notes = meta.annotations(task.pod)
        kind = notes.get(SCORING_TYPE, "")
        if not kind:
            return None
        try:
            weights = json.loads(notes.get(SCORING_WEIGHT) or "")
        except ValueError:
            weights = None
        if not isinstance(weights, dict):
            return (kind, None)
        # as Go's json.Unmarshal into map[ResourceName]int: a weight that is not an integer fails it all
        # (the node scores 0), a null is 0
        if any(v is not None and (isinstance(v, bool) or not isinstance(v, int)) for v in weights.values()):
            return (kind, None)
        return (kind, tuple(sorted((str(k), v or 0) for k, v in weights.items())))

    def key(self, task: "tasks_mod.TaskInfo") -> Any:
        return (task.req.tobytes(), self._pod_strategy(task))

    def _requested(self, task: "tasks_mod.TaskInfo") -> list[int]:
        return [int(i) for i in np.flatnonzero(task.req > 0) if i != self.dims.pods]

    def node_order(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows))
        if self.weight > 0:
            out += self._strategy_scores(task, rows)
        if self.sra_weight > 0:
            out += self._sra_scores(task, rows)
        return out

    def _strategy_scores(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        pod = self._pod_strategy(task)
        if pod is not None and pod[1] is None:
            return np.zeros(len(rows))    # a scoring type without (valid) weights: 0, as upstream
        nodes, names = self.nodes, self.dims.names
        total, weights = np.zeros(len(rows)), 0
        over = np.zeros(len(rows), dtype=bool)
        for i in self._requested(task):
            if pod is not None:
                w = dict(pod[1]).get(names[i])
                if w is None:
                    continue
                kind = pod[0]
            else:
                cfg = config_for(names[i], self.strategy)
                if cfg is None:
                    continue
                kind, w = cfg
            weights += w
            cap = nodes.allocatable[rows, i]
            final = nodes.used[rows, i] + task.req[i]
            if w == 0:
                continue
            usable = cap != 0
            over |= usable & (final > cap)
            safe = np.where(usable, cap, 1.0)
            if kind == MOST:
                total += np.where(usable, final * w / safe, 0.0)
            elif kind == LEAST:
                total += np.where(usable, (cap - final) * w / safe, 0.0)
        if weights > 0:
            total = total / weights
        total = total * MAX_NODE_SCORE * self.weight
        total[over] = 0.0
        return total

    def _sra_scores(self, task: "tasks_mod.TaskInfo", rows: np.ndarray) -> np.ndarray:
        alloc = self.nodes.allocatable[rows]
        lacking = np.zeros(len(rows), dtype=bool)
        for i in self._requested(task):
            lacking |= alloc[:, i] == 0
        has = (alloc > 0).astype(np.float64) @ self.sra_vector
        score = 1.0 - has / self.sra_sum if self.sra_sum > 0 else has
        score = score * MAX_NODE_SCORE * self.sra_weight
        score[lacking] = 0.0
        return score

    # ---- Predicate -------------------------------------------------------------------------------
    def predicate(self, task: "tasks_mod.TaskInfo", nodes: "nodes_mod.NodeState") -> list[fit.Failure]:
        index = self.dims.index
        rates = [(name, cpu, mem) for name, cpu, mem in self.arguments.proportional.rates]
        if any(name in index and task.req[index[name]] > 0 for name, _, _ in rates):
            return []
        cpu, mem = index[dims_mod.CPU], index[dims_mod.MEMORY]
        reasons, charged = [], np.zeros(len(nodes), dtype=bool)
        for name, cpu_rate, mem_rate in rates:
            if name not in index:
                continue
            units = nodes.idle[:, index[name]]
            short = ((nodes.idle[:, cpu] - task.req[cpu] < units * cpu_rate)
                     | (nodes.idle[:, mem] - task.req[mem] < units * mem_rate * 1000 * 1000)) & ~charged
            if short.any():
                reasons.append((f"proportional of resource {name} check failed", short))
                charged |= short
        return [fit.Failure(tuple(reasons))] if reasons else []

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
