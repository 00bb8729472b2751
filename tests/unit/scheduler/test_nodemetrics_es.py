"""nodemetrics_es: Volcano's Elasticsearch reads of node usage, against a real HTTP server."""
from __future__ import annotations

import contextlib
import datetime as dt
import http.server
import json
import socket
import threading
from typing import Any, Callable, Iterator

import pytest

from vclite.cli import dryrun
from vclite.scheduler import conf, metricsfeed, nodemetrics
from vclite.scheduler import nodemetrics_es as es

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


@contextlib.contextmanager
def running(answer: Callable[[str, dict, dict], Any]) -> Iterator[tuple[str, list]]:
    """An HTTP server whose POSTs get `answer(path, body, headers)`: a JSON value, or (status, bytes)."""
    calls: list = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            calls.append((self.path, body, dict(self.headers)))
            got = answer(self.path, body, dict(self.headers))
            status, data = got if isinstance(got, tuple) else (200, json.dumps(got).encode())
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", calls
    finally:
        server.shutdown()
        server.server_close()


def aggs(cpu, mem):
    return {"took": 1, "hits": {"hits": []}, "aggregations": {"cpu": {"value": cpu}, "mem": {"value": mem}}}


def test_reads_each_node_with_volcanos_search():
    table = {"n1": aggs(0.35, 0.45), "n2": aggs(0.9, None)}
    def answer(path, body, headers):
        return table[body["query"]["bool"]["must"][1]["term"]["host.hostname"]]
    with running(answer) as (url, calls):
        got = metricsfeed.read({"type": "elasticsearch", "address": url}, ["n1", "n2"], lambda: NOW)
    assert got["n1"] == nodemetrics.NodeUsage(NOW, {"10m": pytest.approx(35.0)}, {"10m": pytest.approx(45.0)})
    assert got["n2"] == nodemetrics.NodeUsage(NOW, {"10m": pytest.approx(90.0)}, {"10m": 0.0})
    path, body, headers = calls[0]
    assert path == "/metricbeat-*/_search" and "Authorization" not in headers
    assert body == {"size": 0, "query": {"bool": {"must": [
        {"range": {"@timestamp": {"gte": "now-10m", "lt": "now"}}}, {"term": {"host.hostname": "n1"}}]}},
        "aggs": {"cpu": {"avg": {"field": "host.cpu.usage"}},
                 "mem": {"avg": {"field": "system.memory.actual.used.pct"}}}}


def test_index_hostname_field_and_basic_auth():
    with running(lambda path, body, h: aggs(0.1, 0.2)) as (url, calls):
        es.elasticsearch_usage({"address": url + "/", "elasticsearch.index": "custom", "elasticsearch.username": "u",
                                "elasticsearch.hostnameFieldName": "agent.name", "elasticsearch.password": "p"},
                               ["n1"], lambda: NOW)
    path, body, headers = calls[0]
    assert path == "/custom/_search"
    assert body["query"]["bool"]["must"][1] == {"term": {"agent.name": "n1"}}
    assert headers["Authorization"] == "Basic dTpw"


@pytest.mark.parametrize("answer, cpu, mem", [
    pytest.param({"aggregations": {"cpu": {"value": None}, "mem": {"value": None}}}, 0.0, 0.0, id="no-documents"),
    pytest.param((404, json.dumps({"error": {"type": "index_not_found_exception"}, "status": 404}).encode()),
                 0.0, 0.0, id="error-answer-reads-as-0"),
    pytest.param({"Aggregations": {"CPU": {"value": 0.5}}}, 50.0, 0.0, id="keys-without-case-as-go"),
])
def test_answers_read_as_volcanos_decoder(answer, cpu, mem):
    with running(lambda path, body, h: answer) as (url, _):
        got = es.elasticsearch_usage({"address": url}, ["n1"], lambda: NOW)
    assert got["n1"] == nodemetrics.NodeUsage(NOW, {"10m": cpu}, {"10m": mem})


@pytest.mark.parametrize("answer, error", [
    pytest.param((200, b"not json"), ValueError, id="not-json"),
    pytest.param((200, b'{"aggregations": {"cpu": {"value": "high"}}}'), ValueError, id="not-a-number"),
    pytest.param((200, b'{"pad": "' + b"a" * (1 << 20) + b'"}'), ValueError, id="over-1MiB"),
])
def test_an_unreadable_answer_fails_the_round(answer, error):
    with running(lambda path, body, h: answer) as (url, _):
        with pytest.raises(error):
            es.elasticsearch_usage({"address": url}, ["n1"], lambda: NOW)


def test_unreachable_server_fails_the_round_and_the_dry_run_says_so():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    metrics = {"type": "elasticsearch", "address": f"http://127.0.0.1:{port}"}
    with pytest.raises(OSError):
        es.elasticsearch_usage(metrics, ["n1"], lambda: NOW)
    c = conf.parse({"actions": "allocate", "tiers": [{"plugins": [{"name": "usage"}]}], "metrics": metrics})
    state = dryrun.State(dryrun.snapshot.ClusterState(nodes=[{"metadata": {"name": "n1"}}]))
    dryrun.read_usage(state, c, NOW)
    assert state.cluster.node_usage == {}
    assert state.notes[0].startswith(f"node usage not read from http://127.0.0.1:{port} (")
