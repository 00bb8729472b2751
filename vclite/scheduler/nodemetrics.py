"""Node usage for the `usage` and `rescheduling` plugins: the scheduler conf's `metrics` section, checked,
and a Prometheus HTTP API read as Volcano's metrics source reads it (pkg/scheduler/metrics/source).

```yaml
metrics:
  type: prometheus                 # or elasticsearch (nodemetrics_es.py); prometheus_adaptor: refused
  address: http://prometheus:9090
  interval: 30s                    # how often usage is read (a Go duration; 30s)
  tls.insecureSkipVerify: "false"
```
`check(raw)` gives the section as Volcano reads it (a map of strings: yaml.v2 turns every scalar into
its text) and the problems (field path, message) of a bad one. `prometheus_usage(conf, nodes, now)`
asks, for each node, Volcano's two instant queries — CPU and memory use in percent averaged over
NODE_METRICS_PERIOD (`10m`), the node named by the `instance` label — and takes the first sample of
each answer. As upstream: a query that fails (unreachable server, an error answer, no sample, not a
vector) leaves that value 0 and the node's metrics time is still `now`, so an unreachable Prometheus
gives fresh zero usage; the calls of one round share a 60 s deadline. The result is a NodeUsage per
node, its averages kept under the key `10m` only (Volcano's cache does the same, whatever period a
plugin asks for).

Must not: know the session or any plugin; this is I/O, called off the session (the scheduler shell's
worker thread, or once before a dry run's session).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import ssl
import time
import types
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable, Mapping

from vclite.lib import clock

log = logging.getLogger(__name__)

NODE_METRICS_PERIOD = "10m"   # the only key Volcano's cache fills (source.NODE_METRICS_PERIOD)
PROMETHEUS, ADAPTOR, ELASTICSEARCH = "prometheus", "prometheus_adaptor", "elasticsearch"
SUPPORTED = (PROMETHEUS, ELASTICSEARCH)   # (the adaptor reads the cluster's custom metrics API: not ported)
KEYS = ("type", "address", "interval", "tls.insecureSkipVerify", "elasticsearch.index",
        "elasticsearch.username", "elasticsearch.password", "elasticsearch.hostnameFieldName")
DEFAULT_INTERVAL = 30.0   # seconds (cache.go's defaultMetricsInternal)
ROUND_DEADLINE = 60.0     # seconds for one round over every node (cache.go's context timeout)

CPU_QUERY = ('avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{{mode="idle",'
             'instance="{node}"}}[5m])) * 100), 0)[{period}:30s])')
MEM_QUERY = ('100*avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node}"}}/'
             'node_memory_MemTotal_bytes{{instance="{node}"}}))[{period}:30s])')


@dataclasses.dataclass(frozen=True)
class NodeUsage:
    """Volcano's NodeUsage: when the metrics were read (None: never) and the averages by period, in percent."""
    metrics_time: _dt.datetime | None = None
    cpu_avg: Mapping[str, float] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    mem_avg: Mapping[str, float] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))


NO_USAGE = NodeUsage()


def _text(value: Any) -> str | None:
    """A YAML scalar as yaml.v2 decodes it into a Go string (None: not a scalar)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def check(raw: Any) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The `metrics` section as strings, and its problems as (field path, message)."""
    problems: list[tuple[str, str]] = []
    if raw is None:
        return {}, problems
    if not isinstance(raw, Mapping):
        return {}, [("metrics", "metrics: must be a mapping (type, address, interval)")]
    conf: dict[str, str] = {}
    for key, value in raw.items():
        where = f"metrics[{key}]" if "." in str(key) else f"metrics.{key}"
        if str(key) not in KEYS:
            nested = [k for k in KEYS if k.startswith(f"{key}.")]
            if nested and isinstance(value, Mapping):   # the nested form Volcano's design document shows
                problems.append((where, f"metrics: {key} cannot be a mapping: Volcano reads the section as one "
                                        f"level of strings (a nested mapping makes it fall back to its default "
                                        f"configuration); write {', '.join(nested)} as keys"))
            else:
                problems.append((where, f'metrics: unknown field "{key}" (known: {", ".join(KEYS)})'))
            continue
        text = _text(value)
        if text is None:
            problems.append((where, f"metrics: {key} must be a string, got {type(value).__name__}; Volcano cannot "
                                    "read the file (it falls back to its default configuration)"))
            continue
        conf[str(key)] = text
    kind = conf.get("type", "")
    if kind == ADAPTOR:
        problems.append(("metrics.type", f'metrics: type "{kind}" is not supported by vclite yet (supported: '
                                         f'{", ".join(SUPPORTED)})'))
    elif kind not in ("", *SUPPORTED):
        problems.append(("metrics.type", f'metrics: unknown type "{kind}" (Volcano reads {PROMETHEUS}, {ADAPTOR}, '
                                         f'{ELASTICSEARCH}; vclite supports {", ".join(SUPPORTED)})'))
    address = conf.get("address", "")
    if not kind and address:   # (Volcano's design document calls the type optional, "prometheus by default")
        problems.append(("metrics.address", "metrics: address is set but type is not: Volcano reads no usage "
                                            "without a type (its design document's \"prometheus by default\" "
                                            "is not what its scheduler does); write type: prometheus"))
    if kind in SUPPORTED:
        parts = urllib.parse.urlsplit(address)
        if not address and "address" not in raw:
            problems.append(("metrics", f"metrics: address is required with type {kind} (Volcano: \"metrics "
                                        "address is empty\", and no usage is read)"))
        elif address and parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(("metrics.address", f"metrics: address must be an http(s) URL such as "
                                                f"http://prometheus:9090, got {address!r}"))
    if conf.get("interval"):
        try:
            ok = clock.parse_duration(conf["interval"]) > 0
        except ValueError:
            ok = False
        if not ok:
            problems.append(("metrics.interval", f"metrics: interval must be a positive Go duration such as 30s, "
                                                 f"got {conf['interval']!r} (Volcano would use 30s)"))
    skip = conf.get("tls.insecureSkipVerify")
    if skip not in (None, "", "true", "false"):
        problems.append(("metrics[tls.insecureSkipVerify]", f'metrics: tls.insecureSkipVerify must be "true" or '
                                                            f'"false", got {skip!r} (Volcano: anything but "true" '
                                                            "is false)"))
    return conf, problems


def interval(conf: Mapping[str, str]) -> float:
    """Seconds between two reads (`metrics.interval`; 30 s when unset or bad, as Volcano)."""
    try:
        value = clock.parse_duration(conf.get("interval", ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 else DEFAULT_INTERVAL


def enabled(conf: Mapping[str, str]) -> bool:
    """Whether usage is read at all (Volcano reads nothing without a `type`)."""
    return conf.get("type", "") in SUPPORTED and bool(conf.get("address"))


def _go_time(at: _dt.datetime) -> str:
    """client_golang's formatTime: Unix seconds with the fraction, shortest form."""
    text = repr(at.timestamp())
    return text[:-2] if text.endswith(".0") else text


def query(address: str, promql: str, at: _dt.datetime, timeout: float, insecure: bool = False) -> float | None:
    """One instant query (POST /api/v1/query, GET when the server answers 405, as client_golang): the
    first sample's value, or None when the answer holds no vector sample. Raises OSError or ValueError
    when the server cannot be asked or answers an error."""
    url = address.rstrip("/") + "/api/v1/query"
    form = urllib.parse.urlencode({"query": promql, "time": _go_time(at)})
    request = urllib.request.Request(url, data=form.encode(), method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        body = read_body(request, timeout, insecure)
    except urllib.error.HTTPError as e:
        if e.code != 405:
            raise ValueError(f"{url}: HTTP {e.code}: {_error_of(e.read())}") from None
        body = read_body(urllib.request.Request(f"{url}?{form}"), timeout, insecure)
    answer = json.loads(body)
    if not isinstance(answer, dict) or answer.get("status") != "success":
        raise ValueError(f"{url}: {_error_of(body)}")
    data = answer.get("data") or {}
    if data.get("resultType") != "vector" or not data.get("result"):
        return None
    value = data["result"][0].get("value") or [None, None]
    return float(value[1])


def read_body(request: urllib.request.Request, timeout: float, insecure: bool = False, limit: int = 1 << 20) -> bytes:
    """The answer's body (at most `limit` bytes), without an HTTP proxy (as Volcano's clients); with
    `insecure`, an https server's certificate is not checked (`tls.insecureSkipVerify`). Raises
    urllib.error.HTTPError for a status of 400 or more, OSError when the server cannot be reached."""
    context = None
    if insecure and request.full_url.startswith("https:"):
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                         urllib.request.HTTPSHandler(context=context))
    with opener.open(request, timeout=timeout) as response:
        return response.read(limit)


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def _error_of(body: bytes) -> str:
    try:
        answer = json.loads(body)
        return f"{answer.get('errorType', '')}: {answer.get('error', '')}".strip(": ")
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")


def prometheus_usage(conf: Mapping[str, str], nodes: Iterable[str], now: Any = None,
                     failures: list[str] | None = None, within: float = ROUND_DEADLINE) -> dict[str, NodeUsage]:
    """Each node's usage from the Prometheus at `metrics.address` (see the module docstring).
    `now()` gives the metrics time (the moment each node's queries ended); real time by default.
    `failures`, when given, receives a line for each query that failed (its value counted 0). `within`: the
    seconds the whole round may take (Volcano's 60; the dry run's is shorter): a query may wait what is left."""
    now = now or utc_now
    address, insecure = conf["address"], conf.get("tls.insecureSkipVerify") == "true"
    deadline = time.monotonic() + within
    out: dict[str, NodeUsage] = {}
    for node in nodes:
        values = []
        for template in (CPU_QUERY, MEM_QUERY):
            promql = template.format(node=node, period=NODE_METRICS_PERIOD)
            value = 0.0
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError("context deadline exceeded")
                got = query(address, promql, now(), left, insecure)
                if got is None:
                    log.warning("no data found for %s", promql)
                else:
                    value = got
            except (OSError, ValueError) as e:
                log.error("Error querying Prometheus: %s", e)
                if failures is not None:
                    failures.append(f"{node} {'cpu' if template is CPU_QUERY else 'memory'}: {e}")
            values.append(value)
        period = NODE_METRICS_PERIOD
        out[node] = NodeUsage(now(), types.MappingProxyType({period: values[0]}),
                              types.MappingProxyType({period: values[1]}))
    return out
