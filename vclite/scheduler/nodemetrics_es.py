"""Node usage from Elasticsearch (metrics `type: elasticsearch`), as Volcano's metrics source reads it
(pkg/scheduler/metrics/source/metrics_client_elasticsearch.go).

For each node, one search of `elasticsearch.index` (`metricbeat-*`): the documents of the last
NODE_METRICS_PERIOD (`10m`) whose `elasticsearch.hostnameFieldName` (`host.hostname`) is the node's
name, averaged as `host.cpu.usage` and `system.memory.actual.used.pct` (fractions, so ×100); basic
authentication with `elasticsearch.username` and `elasticsearch.password` when both are set. An
average without documents is 0, and so is an answer without aggregations (an error answer, e.g. a
missing index: Volcano's client reads any JSON). Unlike Prometheus, a search that cannot be made or
read (unreachable server, not JSON, an answer over 1 MiB) fails the whole round: `elasticsearch_usage`
raises and the nodes keep the usage they had, as Volcano then updates nothing.
Difference: Volcano's client first checks that the server is Elasticsearch (its product header);
vclite asks any server that answers the search API.

Must not: know the session or any plugin (I/O, off the session, as nodemetrics.py).
"""
from __future__ import annotations

import base64
import json
import time
import types
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable, Mapping

from vclite.scheduler import nodemetrics

DEFAULT_INDEX = "metricbeat-*"
DEFAULT_HOSTNAME_FIELD = "host.hostname"
CPU_FIELD, MEM_FIELD = "host.cpu.usage", "system.memory.actual.used.pct"
MAX_BODY = 1 << 20


def search_body(node: str, hostname_field: str) -> dict:
    """Volcano's query: the last 10 minutes of the node's documents, the two averages only."""
    period = nodemetrics.NODE_METRICS_PERIOD
    return {"size": 0,
            "query": {"bool": {"must": [{"range": {"@timestamp": {"gte": "now-" + period, "lt": "now"}}},
                                        {"term": {hostname_field: node}}]}},
            "aggs": {"cpu": {"avg": {"field": CPU_FIELD}}, "mem": {"avg": {"field": MEM_FIELD}}}}


def _average(aggs: Any, name: str) -> float:
    """An aggregation's value as Go's decoder reads it into a float64 (keys without case; null: 0)."""
    if not isinstance(aggs, dict):
        return 0.0
    found = next((v for k, v in aggs.items() if k.lower() == name), None)
    value = found.get("value") if isinstance(found, dict) else None
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"aggregation {name}: cannot read {value!r} as a number")
    return float(value)


def search(conf: Mapping[str, str], node: str, timeout: float) -> tuple[float, float]:
    """(cpu, memory) percentages of one node. Raises OSError or ValueError when the search fails."""
    index = conf.get("elasticsearch.index") or DEFAULT_INDEX
    field = conf.get("elasticsearch.hostnameFieldName") or DEFAULT_HOSTNAME_FIELD
    url = conf["address"].rstrip("/") + "/" + urllib.parse.quote(index, safe="*,-_.") + "/_search"
    headers = {"Content-Type": "application/json"}
    user, password = conf.get("elasticsearch.username", ""), conf.get("elasticsearch.password", "")
    if user and password:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    request = urllib.request.Request(url, data=json.dumps(search_body(node, field)).encode(), headers=headers,
                                     method="POST")
    insecure = conf.get("tls.insecureSkipVerify") == "true"
    try:
        body = nodemetrics.read_body(request, timeout, insecure, MAX_BODY + 1)
    except urllib.error.HTTPError as e:   # (Volcano's client hands any status's body to the decoder)
        body = e.read(MAX_BODY + 1)
    if len(body) > MAX_BODY:
        raise ValueError(f"{url}: http: request body too large (over {MAX_BODY} bytes)")
    answer = json.loads(body)
    aggs = next((v for k, v in answer.items() if k.lower() == "aggregations"), None) \
        if isinstance(answer, dict) else None
    return _average(aggs, "cpu") * 100, _average(aggs, "mem") * 100


def elasticsearch_usage(conf: Mapping[str, str], nodes: Iterable[str], now: Any = None,
                        within: float = nodemetrics.ROUND_DEADLINE) -> dict[str, nodemetrics.NodeUsage]:
    """Each node's usage from Elasticsearch; raises (nothing read) when one search fails. `within`: the seconds
    the whole round may take (Volcano's 60; the dry run's is shorter)."""
    now = now or nodemetrics.utc_now
    deadline = time.monotonic() + within
    out = {}
    period = nodemetrics.NODE_METRICS_PERIOD
    for node in nodes:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("context deadline exceeded")
        cpu, mem = search(conf, node, left)
        out[node] = nodemetrics.NodeUsage(now(), types.MappingProxyType({period: cpu}),
                                          types.MappingProxyType({period: mem}))
    return out
