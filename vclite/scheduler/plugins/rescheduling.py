"""rescheduling: every `interval`, offer the `shuffle` action the running pods to move off busy nodes
(plugins/rescheduling/rescheduling.go).

```yaml
- name: rescheduling
  arguments:
    interval: 5m                  # a Go duration (5m)
    metricsPeriod: 10m            # which average of the nodes' use to read (5m)
    strategies:                   # (one lowNodeUtilization with 100 % thresholds: no victims)
    - name: lowNodeUtilization
      params:
        thresholds: {cpu: 20, memory: 20}          # a node under all of them is underused
        targetThresholds: {cpu: 60, memory: 60}    # a node over one of them is overused
```
A session at least `interval` after the last one that ran the strategies (the first: `interval` after
the scheduler started) registers their VictimTasks functions (`enabledVictim`); the `shuffle` action
then evicts what they choose among the running pods (rescheduling_lnu.py). Until then the plugin asks
for a session at the next time to run, when `shuffle` is configured and something runs.
The nodes' use is the session's node usage (scheduler/nodemetrics.py) for `metricsPeriod`, read
whatever its age; a node without it counts 0 %. As upstream, the metrics source fills the `10m`
averages only: with any other `metricsPeriod` (the default is 5m) every node would read 0 % (all
underused, so no victims) — hence `metricsPeriod: 10m`, required with thresholds.
Differences: Volcano's scheduler panics on an `interval` or `metricsPeriod` that is not a string or a
threshold that is not an integer, ignores strategies it does not know, evicts nothing when a strategy
has no `params` and falls back to 5m on a bad `interval`: all refused at load here, and so are the
design document's strategies and arguments Volcano never implemented (`offlineOnly`, `lowPriorityFirst`,
`queueSelector`, `labelSelector`) and thresholds with a `metricsPeriod` other than `10m` (nothing could
ever be evicted); every problem of the arguments is reported at once, each at its own line (the strategies'
entries and thresholds through plugin.ArgumentProblems; the metricsPeriod check even when other arguments are
bad). A dry run (no scheduler process) runs the strategies in its session. `thresholds`
keys `pod`/`pods` and the params `thresholdPriorityClassName`, `thresholdPriority`, `nodeFit`,
`numberOfNodes` are accepted and, as upstream, change nothing.

Must not: read the metrics source; keep state between sessions other than Session.memory.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import types
from typing import TYPE_CHECKING, Any, Mapping

from vclite.admission import pod as pod_admission
from vclite.api import meta, quantity, resources
from vclite.lib import clock
from vclite.scheduler import nodemetrics
from vclite.scheduler.framework import hooks, plugin, snapshot
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import rescheduling_lnu as lnu

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod

NAME = "rescheduling"
LOW_NODE_UTILIZATION = "lowNodeUtilization"
LAST_RUN = "rescheduling.lastRun"
DEFAULT_THRESHOLDS = types.MappingProxyType({"cpu": 100.0, "memory": 100.0, "pods": 100.0})
THRESHOLD_KEYS = ("cpu", "memory", "pod", "pods")
IGNORED_PARAMS = ("thresholdPriorityClassName", "thresholdPriority", "nodeFit", "numberOfNodes")
# strategies of docs/design/rescheduling.md never implemented (Volcano ignores them)
DESIGNED_ONLY = ("offlineOnly", "lowPriorityFirst")
_PANICS = "Volcano's scheduler panics on it"


@dataclasses.dataclass(frozen=True)
class Strategy:
    name: str = LOW_NODE_UTILIZATION
    thresholds: Mapping[str, float] = dataclasses.field(default_factory=lambda: DEFAULT_THRESHOLDS)
    target: Mapping[str, float] = dataclasses.field(default_factory=lambda: DEFAULT_THRESHOLDS)


def read_interval(value: Any, where: str) -> float:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a Go duration string such as 5m, got {value!r}; {_PANICS}")
    try:
        return clock.parse_duration(value)
    except ValueError:
        raise ValueError(f"{where}: expected a Go duration such as 5m, got {value!r} (Volcano would use 5m)") from None


def read_period(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string such as 10m, got {value!r}; {_PANICS}")
    return value or "5m"


def _thresholds(value: Any, where: str, inside: str, problems: list[tuple[str, str]]) -> Mapping[str, float]:
    """A strategy's thresholds (each problem added to `problems` at its place; the defaults where bad)."""
    if not isinstance(value, dict):
        problems.append((inside, f"{where}{inside}: expected a mapping such as {{cpu: 20, memory: 20}}, got "
                                 f"{value!r} (Volcano stops reading the strategy's params)"))
        return DEFAULT_THRESHOLDS
    out = dict(DEFAULT_THRESHOLDS)
    for key, v in value.items():
        if key not in THRESHOLD_KEYS:
            problems.append((inside, f"{where}{inside}: unknown resource {str(key)!r} "
                                     f"(known: {', '.join(THRESHOLD_KEYS)})"))
        elif isinstance(v, bool) or not isinstance(v, int):
            problems.append((f"{inside}.{key}", f"{where}{inside}.{key}: expected an integer percentage, got {v!r}; "
                                                f"{_PANICS}"))
        else:
            out[key] = float(v)
    return types.MappingProxyType(out)


def read_strategies(value: Any, where: str) -> tuple[Strategy, ...]:
    """The strategies; every problem of the list at once (plugin.ArgumentProblems, each at its place inside
    the list, with the strategies read without their faulty entries)."""
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list of {{name, params}}, got {value!r}")
    out: list[Strategy] = []   # (with problems: what could be read, for the check of metricsPeriod)
    problems: list[tuple[str, str]] = []
    names: set[Any] = set()
    for i, entry in enumerate(value):
        strategy = _strategy(entry, f"[{i}]", f"{where}: strategies", names, problems)
        if strategy is not None:
            out.append(strategy)
    if problems:
        raise plugin.ArgumentProblems(problems, tuple(out) or (Strategy(),))
    return tuple(out) or (Strategy(),)


def _strategy(entry: Any, at: str, where: str, names: set[Any], problems: list[tuple[str, str]]) -> Strategy | None:
    """One entry of `strategies` (None when it cannot be read at all); its problems added to `problems`."""
    def problem(inside: str, message: str) -> None:
        problems.append((at + inside, f"{where}{at}{inside}: {message}" if inside else f"{where}{at}: {message}"))
    if not isinstance(entry, dict):
        problem("", f"expected a mapping with name and params, got {entry!r}")
        return None
    for key in entry:
        if key not in ("name", "params"):
            problem("", f"unknown field {str(key)!r} (known: name, params)")
    name = entry.get("name")
    if name in DESIGNED_ONLY:
        problem(".name", f"strategy {name!r} is in Volcano's design but not implemented (Volcano ignores it): "
                         f"remove it (known: {LOW_NODE_UTILIZATION})")
        return None
    if name != LOW_NODE_UTILIZATION:
        problem(".name", f"unknown strategy {name!r} (known: {LOW_NODE_UTILIZATION}; Volcano ignores the others)")
        return None
    if name in names:
        problem(".name", f"strategy {name!r} is listed twice")
    names.add(name)
    params = entry.get("params")
    if not isinstance(params, dict):
        problem(".params", f"expected a mapping with thresholds and targetThresholds, got {params!r} (Volcano "
                           "evicts nothing without params)")
        return None
    for key in params:
        if key not in ("thresholds", "targetThresholds", *IGNORED_PARAMS):
            problem(".params", f"unknown parameter {str(key)!r} (known: thresholds, targetThresholds, "
                               f"{', '.join(IGNORED_PARAMS)})")
    low = _thresholds(params["thresholds"], f"{where}", f"{at}.params.thresholds", problems) \
        if "thresholds" in params else DEFAULT_THRESHOLDS
    target = _thresholds(params["targetThresholds"], f"{where}", f"{at}.params.targetThresholds", problems) \
        if "targetThresholds" in params else DEFAULT_THRESHOLDS
    return Strategy(name, low, target)


def _designed_only(where: str) -> None:
    raise ValueError(f"{where}: in Volcano's design but not implemented (Volcano ignores it): remove it; every "
                     "running pod the strategies choose may be evicted")


@dataclasses.dataclass(frozen=True)
class Arguments:
    interval: float = plugin.arg("interval", 300.0, read_interval)   # seconds
    metrics_period: str = plugin.arg("metricsPeriod", "5m", read_period)
    strategies: tuple = plugin.arg("strategies", (Strategy(),), read_strategies)
    queue_selector: Any = plugin.arg("queueSelector", None, lambda v, where: _designed_only(where))
    label_selector: Any = plugin.arg("labelSelector", None, lambda v, where: _designed_only(where))

    TOGETHER_KEYS = ("strategies", "metricsPeriod")   # (checked even when other arguments are bad)

    def check_together(self) -> None:
        """Thresholds given with a metricsPeriod the metrics source never fills (configuration load)."""
        given = any(s != Strategy(s.name) for s in self.strategies)
        if given and self.metrics_period != nodemetrics.NODE_METRICS_PERIOD:
            raise plugin.ArgumentProblems([("metricsPeriod", (
                f'plugin "{NAME}": metricsPeriod is {self.metrics_period}, but the metrics source fills only the '
                f"{nodemetrics.NODE_METRICS_PERIOD} averages (in Volcano too): every node would read 0 % and nothing "
                f"would ever be evicted; write metricsPeriod: {nodemetrics.NODE_METRICS_PERIOD}"))])


def _amount(node: dict, field: str, name: str) -> float | None:
    raw = ((node.get("status") or {}).get(field) or {}).get(name)
    try:
        return None if raw is None else float(quantity.parse(raw))
    except ValueError:
        return None


def _resource(node: dict, name: str, fields: tuple[str, ...]) -> float:
    for field in fields:
        v = _amount(node, field, name)
        if v is not None:
            return v
    return 0.0


def _qos(pod: dict) -> str:
    given = (pod.get("status") or {}).get("qosClass")
    if given:
        return str(given)
    try:
        return str(pod_admission.qos_class(pod.get("spec") or {}))
    except ValueError:
        return "BestEffort"


def _pod_entry(task: tasks_mod.TaskInfo) -> tuple:
    """(task, priority or None, QoS, requested cpu millicores, memory bytes) — Volcano's task Resreq."""
    try:
        req = resources.pod_requests(task.pod)
    except ValueError:
        req = {}
    priority = (task.pod.get("spec") or {}).get("priority")
    zero = quantity.Fraction(0)
    cpu, mem = req.get("cpu", zero), req.get("memory", zero)
    return (task, priority if isinstance(priority, int) else None, _qos(task.pod),
            int(-((-cpu * 1000) // 1)), int(-((-mem) // 1)))


class Rescheduling:
    name = NAME
    Arguments = Arguments

    def __init__(self, arguments: Arguments):
        self.args = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        self.ssn = ssn
        memory = ssn.memory
        last = memory.get(LAST_RUN, memory.get(snapshot.STARTED_AT))
        due = None if last is None else last + _dt.timedelta(seconds=self.args.interval)
        if due is not None and not due < ssn.now:   # (upstream: lastRescheduleTime.Add(interval).Before(now))
            if ssn.conf.has_action("shuffle") and self._anything_runs():
                ssn.recheck_by(due + _dt.timedelta(microseconds=1))
            return
        memory[LAST_RUN] = ssn.now
        for strategy in self.args.strategies:
            reg.add(hooks.Point.VICTIM_TASKS, lambda tasks, s=strategy: self.victims(s, tasks))

    def _anything_runs(self) -> bool:
        running = tasks_mod.TaskStatus.RUNNING
        return any(job.index.get(running) for job in self.ssn.jobs.values())

    def nodes(self, tasks: list) -> list[lnu.NodeLoad]:
        """Each node of the session with its measured use and the offered tasks it runs."""
        by_node: dict[str, list] = {}
        for t in tasks:
            by_node.setdefault(t.node, []).append(_pod_entry(t))
        period = self.args.metrics_period
        out = []
        for node in self.ssn.nodes.objects:
            name = meta.name(node)
            usage = self.ssn.node_usage.get(name, nodemetrics.NO_USAGE)
            out.append(lnu.NodeLoad(
                name=name, unschedulable=bool((node.get("spec") or {}).get("unschedulable")),
                use={lnu.CPU: usage.cpu_avg.get(period, 0.0), lnu.MEMORY: usage.mem_avg.get(period, 0.0)},
                capacity={r: _resource(node, r, ("capacity", "allocatable")) for r in lnu.RESOURCES},
                allocatable={lnu.CPU: math.ceil(_resource(node, "cpu", ("allocatable", "capacity")) * 1000),
                             lnu.MEMORY: math.ceil(_resource(node, "memory", ("allocatable", "capacity")))},
                pods=by_node.get(name, [])))
        return out

    def victims(self, strategy: Strategy, tasks: list) -> list:
        return lnu.victims(self.nodes(tasks), strategy.thresholds, strategy.target)

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None
