"""nodemetrics: the conf's `metrics` section, and Volcano's Prometheus reads against a real HTTP server."""
from __future__ import annotations

import datetime as dt
import socket

import pytest

from tests import prometheus_server
from vclite.scheduler import conf, nodemetrics

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
TIERS = "tiers:\n- plugins:\n  - name: gang\n"


@pytest.mark.parametrize("metrics, want", [
    pytest.param("", {}, id="no-section"),
    pytest.param("metrics:\n  type: prometheus\n  address: http://p:9090\n",
                 {"type": "prometheus", "address": "http://p:9090"}, id="prometheus"),
    pytest.param("metrics:\n  type: prometheus\n  address: https://p\n  interval: 1m\n  tls.insecureSkipVerify: true\n",
                 {"type": "prometheus", "address": "https://p", "interval": "1m", "tls.insecureSkipVerify": "true"},
                 id="scalars-as-yaml-v2-text"),
    pytest.param("metrics:\n  interval: 10s\n", {"interval": "10s"}, id="no-type-reads-nothing"),
    pytest.param("metrics:\n  type: elasticsearch\n  address: http://e:9200\n  elasticsearch.index: m-*\n",
                 {"type": "elasticsearch", "address": "http://e:9200", "elasticsearch.index": "m-*"},
                 id="elasticsearch"),
])
def test_good_sections(metrics, want):
    c = conf.parse('actions: "allocate"\n' + TIERS + metrics, "sched.conf")
    assert dict(c.metrics) == want
    assert nodemetrics.enabled(c.metrics) == (want.get("type") in ("prometheus", "elasticsearch"))


@pytest.mark.parametrize("metrics, line, message", [
    ("metrics: [a]\n", 5, "metrics: must be a mapping"),
    ("metrics:\n  type: prometheus\n  adress: http://p\n", 7, 'metrics: unknown field "adress"'),
    ("metrics:\n  type: elasticsearch\n", 5, "metrics: address is required with type elasticsearch"),
    ("metrics:\n  type: prometheus_adaptor\n", 6, 'metrics: type "prometheus_adaptor" is not supported by vclite yet'),
    ("metrics:\n  type: graphite\n", 6, 'metrics: unknown type "graphite"'),
    ("metrics:\n  type: prometheus\n", 5, "metrics: address is required with type prometheus"),
    # the design document's "type: optional, prometheus by default": Volcano then reads nothing, silently
    ("metrics:\n  address: http://p:9090\n", 6, "metrics: address is set but type is not: Volcano reads no usage"),
    ("metrics:\n  type: prometheus\n  address: p:9090\n", 7, "metrics: address must be an http(s) URL"),
    ("metrics:\n  type: prometheus\n  address: http://p\n  interval: 30\n", 8,
     "metrics: interval must be a positive Go duration"),
    ("metrics:\n  type: prometheus\n  address: http://p\n  interval: -1s\n", 8,
     "metrics: interval must be a positive Go duration"),
    ("metrics:\n  type: prometheus\n  address: http://p\n  tls.insecureSkipVerify: yes please\n", 8,
     'metrics: tls.insecureSkipVerify must be "true" or "false"'),
    ("metrics:\n  type: prometheus\n  address: {a: 1}\n", 7, "metrics: address must be a string"),
    ("metrics:\n  type: prometheus\n  address: http://p\n  tls:\n    insecureSkipVerify: \"false\"\n", 8,
     "metrics: tls cannot be a mapping: Volcano reads the section as one level of strings"),
])
def test_bad_sections_name_their_line(metrics, line, message):
    with pytest.raises(conf.ConfError) as e:
        conf.parse('actions: "allocate"\n' + TIERS + metrics, "sched.conf")
    assert any(p.line == line and message in p.message for p in e.value.problems), e.value


@pytest.mark.parametrize("conf_, seconds", [({}, 30.0), ({"interval": "1m"}, 60.0), ({"interval": "x"}, 30.0),
                                            ({"interval": "0s"}, 30.0)])
def test_interval(conf_, seconds):
    assert nodemetrics.interval(conf_) == seconds


def test_reads_each_node_with_volcanos_queries():
    table = {("cpu", "n1"): 12.5, ("memory", "n1"): 40, ("cpu", "n2"): 90, ("memory", "n2"): 85.25}
    with prometheus_server.running(lambda kind, node, form: table[kind, node]) as prom:
        got = nodemetrics.prometheus_usage({"type": "prometheus", "address": prom.url + "/"}, ["n1", "n2"], lambda: NOW)
    assert got == {
        "n1": nodemetrics.NodeUsage(NOW, {"10m": 12.5}, {"10m": 40.0}),
        "n2": nodemetrics.NodeUsage(NOW, {"10m": 90.0}, {"10m": 85.25}),
    }
    methods = {m for m, _ in prom.calls}
    assert methods == {"POST"}
    queries = [f["query"] for _, f in prom.calls]
    assert queries[0] == ('avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle",'
                          'instance="n1"}[5m])) * 100), 0)[10m:30s])')
    assert queries[1] == ('100*avg_over_time(((1-node_memory_MemAvailable_bytes{instance="n1"}/'
                          'node_memory_MemTotal_bytes{instance="n1"}))[10m:30s])')
    assert prom.calls[0][1]["time"] == "1767225600"


@pytest.mark.parametrize("answer, cpu, mem", [
    pytest.param(lambda kind, node, form: None, 0.0, 0.0, id="empty-vector-is-0"),
    pytest.param(lambda kind, node, form: (400, {"status": "error", "errorType": "bad_data", "error": "parse"}),
                 0.0, 0.0, id="error-answer-is-0"),
    pytest.param(lambda kind, node, form: 7.0 if kind == "cpu" else (503, b"down"), 7.0, 0.0,
                 id="one-query-failing-keeps-the-other"),
    pytest.param(lambda kind, node, form: (200, {"status": "success", "data": {"resultType": "scalar",
                                                                               "result": [0, "5"]}}),
                 0.0, 0.0, id="not-a-vector-is-0"),
])
def test_failed_queries_leave_zero_and_the_metrics_fresh(answer, cpu, mem):
    """Volcano logs a failed query and goes on: the node's metrics time is still now."""
    with prometheus_server.running(answer) as prom:
        got = nodemetrics.prometheus_usage({"type": "prometheus", "address": prom.url}, ["n1"], lambda: NOW)
    assert got == {"n1": nodemetrics.NodeUsage(NOW, {"10m": cpu}, {"10m": mem})}


def test_get_when_post_is_not_allowed():
    with prometheus_server.running(lambda kind, node, form: 3.0, post=False) as prom:
        got = nodemetrics.prometheus_usage({"type": "prometheus", "address": prom.url}, ["n1"], lambda: NOW)
    assert got["n1"].cpu_avg == {"10m": 3.0}
    assert [m for m, _ in prom.calls] == ["POST", "GET", "POST", "GET"]


def test_unreachable_server_gives_fresh_zero_usage():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    got = nodemetrics.prometheus_usage({"type": "prometheus", "address": f"http://127.0.0.1:{port}"}, ["a", "b"],
                                       lambda: NOW)
    assert got == {n: nodemetrics.NodeUsage(NOW, {"10m": 0.0}, {"10m": 0.0}) for n in ("a", "b")}


def test_a_dry_run_says_which_queries_failed():
    """An unreachable Prometheus counts 0 (as Volcano), and the dry run's notes said only "cpu 0% memory 0%":
    they now say the queries failed and why."""
    from vclite.cli import dryrun
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    metrics = {"type": "prometheus", "address": f"http://127.0.0.1:{port}"}
    failures: list[str] = []
    nodemetrics.prometheus_usage(metrics, ["a"], lambda: NOW, failures)
    assert [f.split(":")[0] for f in failures] == ["a cpu", "a memory"], failures
    c = conf.parse({"actions": "allocate", "tiers": [{"plugins": [{"name": "usage"}]}], "metrics": metrics})
    state = dryrun.State(dryrun.snapshot.ClusterState(nodes=[{"metadata": {"name": "n1"}}]))
    dryrun.read_usage(state, c, NOW)
    assert state.notes[0] == f"node usage (10m averages) from http://127.0.0.1:{port}: n1 cpu 0% memory 0%"
    assert state.notes[1].startswith(f"2 of 2 usage queries to http://127.0.0.1:{port} failed, each value counted 0 "
                                     "as in Volcano (first: n1 cpu: "), state.notes


@pytest.mark.parametrize("plugins, note", [
    pytest.param(["usage"], "usage configured without a metrics source", id="usage"),
    pytest.param(["usage", "rescheduling"], "rescheduling and usage configured without a metrics source", id="both"),
    pytest.param(["gang"], None, id="no-reader"),
])
def test_a_dry_run_says_when_the_usage_readers_have_no_source(plugins, note):
    """usage or rescheduling without a `metrics` section have no say (as upstream): the dry run said nothing."""
    from vclite.cli import dryrun
    c = conf.parse({"actions": "allocate", "tiers": [{"plugins": [{"name": p} for p in plugins]}]})
    state = dryrun.State(dryrun.snapshot.ClusterState(nodes=[{"metadata": {"name": "n1"}}]))
    dryrun.read_usage(state, c, NOW)
    assert [n.split(" (")[0] for n in state.notes] == ([note] if note else [])
