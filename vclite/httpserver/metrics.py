"""Prometheus metrics: counters, gauges and histograms with labels, rendered in the text format.

Owned by one server (no module-level registry). Gauges whose values are read at scrape time (objects
by kind, flows by phase, open watches) are callbacks, so nothing is maintained on hot paths.
Rendering follows the text exposition format 0.0.4: `# HELP`, `# TYPE`, then samples; histograms
as cumulative `_bucket{le=…}`, `_sum` and `_count`.
"""
from __future__ import annotations

import bisect
import dataclasses
import math
from typing import Callable, Iterable

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: Labels = ()) -> str:
    pairs = labels + extra
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _num(v: float) -> str:
    if v == math.inf:
        return "+Inf"
    return repr(float(v)) if isinstance(v, float) and not float(v).is_integer() else str(int(v))


@dataclasses.dataclass
class Counter:
    name: str
    help: str
    values: dict[Labels, float] = dataclasses.field(default_factory=dict)
    type = "counter"

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        self.values[key] = self.values.get(key, 0.0) + amount

    def samples(self) -> Iterable[str]:
        for labels, v in sorted(self.values.items()):
            yield f"{self.name}{_labels(labels)} {_num(v)}"


@dataclasses.dataclass
class Gauge:
    """A gauge read at scrape time: `read()` returns {labels dict as sorted tuple: value}."""
    name: str
    help: str
    read: Callable[[], dict[Labels, float]]
    type = "gauge"

    def samples(self) -> Iterable[str]:
        for labels, v in sorted(self.read().items()):
            yield f"{self.name}{_labels(labels)} {_num(v)}"


@dataclasses.dataclass
class Histogram:
    name: str
    help: str
    buckets: tuple[float, ...] = LATENCY_BUCKETS
    series: dict[Labels, list] = dataclasses.field(default_factory=dict)  # [bucket counts..., sum, count]
    type = "histogram"

    def observe(self, value: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        s = self.series.get(key)
        if s is None:
            s = self.series[key] = [0] * len(self.buckets) + [0.0, 0]
        i = bisect.bisect_left(self.buckets, value)
        if i < len(self.buckets):
            s[i] += 1
        s[-2] += value
        s[-1] += 1

    def count(self, **labels: str) -> int:
        s = self.series.get(tuple(sorted(labels.items())))
        return s[-1] if s else 0

    def samples(self) -> Iterable[str]:
        for labels, s in sorted(self.series.items()):
            cumulative = 0
            for bound, n in zip(self.buckets, s):
                cumulative += n
                yield f"{self.name}_bucket{_labels(labels, (('le', _num(bound)),))} {cumulative}"
            yield f"{self.name}_bucket{_labels(labels, (('le', '+Inf'),))} {s[-1]}"
            yield f"{self.name}_sum{_labels(labels)} {_num(s[-2]) if s[-2] else 0}"
            yield f"{self.name}_count{_labels(labels)} {s[-1]}"


Metric = Counter | Gauge | Histogram


class Registry:
    def __init__(self) -> None:
        self.metrics: list[Metric] = []

    def add(self, metric: Metric) -> Metric:
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        lines = []
        for m in self.metrics:
            lines.append(f"# HELP {m.name} {m.help}")
            lines.append(f"# TYPE {m.name} {m.type}")
            lines.extend(m.samples())
        return "\n".join(lines) + "\n"
