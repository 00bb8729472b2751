"""`vcctl scheduler dry-run` with the usage and rescheduling plugins, node usage read from a real Prometheus."""
from __future__ import annotations

import contextlib
import json
import socket
import threading

import pytest
import yaml
from click.testing import CliRunner

from tests import prometheus_server
from vclite.cli import main as main_mod

USE = {("cpu", "n1"): 90, ("memory", "n1"): 30, ("cpu", "n2"): 50, ("memory", "n2"): 30,
       ("cpu", "n3"): 10, ("memory", "n3"): 10}

CONF = """actions: "enqueue, allocate, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: usage
    arguments:
      thresholds: {{cpu: 80, mem: 80}}
  - name: rescheduling
    arguments:
      metricsPeriod: 10m
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {{cpu: 20, memory: 20}}
          targetThresholds: {{cpu: 60, memory: 60}}
metrics:
  type: prometheus
  address: {url}
"""


def _node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name, group, node=None):
    spec = {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox",
                                                       "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": "ns", "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": spec, "status": {"phase": "Running" if node else "Pending",
                                 **({"startTime": "2020-01-01T00:00:00Z"} if node else {})}}


def _group(name, phase):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"minMember": 1, "queue": "default"}, "status": {"phase": phase}}


STATE = [_node("n1"), _node("n2"), _node("n3"), _group("old", "Running"), _group("new", "Inqueue"),
         _pod("r1", "old", "n1"), _pod("r2", "old", "n1"), _pod("r3", "old", "n1"), _pod("p", "new")]


def test_busy_node_refused_idle_node_preferred_and_busy_node_relieved(tmp_path):
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(STATE))
    with prometheus_server.running(lambda kind, node, form: USE[kind, node]) as prom:
        (tmp_path / "sched.conf").write_text(CONF.format(url=prom.url))
        args = ["scheduler", "dry-run", "-f", str(state), "--conf", str(tmp_path / "sched.conf")]
        as_json = CliRunner().invoke(main_mod.cli, [*args, "-o", "json"])
        table = CliRunner().invoke(main_mod.cli, args)
    assert as_json.exit_code == 0, as_json.output
    out = json.loads(as_json.stdout)
    # (what it waits for, and how long at most, on stderr)
    assert f"reading the nodes' usage from {prom.url} (at most 5s: --metrics-timeout)" in as_json.stderr
    assert f"note: node usage (10m averages) from {prom.url}: n1 cpu 90%" in as_json.stderr
    # n1 is over the cpu threshold; n3 is the least used; n1 gives back pods until it is under 60 %
    assert out["binds"] == {"ns/p": "n3"}
    assert out["evictions"] == ["ns/r1", "ns/r2"]
    assert table.exit_code == 0, table.output
    assert (f"node usage (10m averages) from {prom.url}: n1 cpu 90% memory 30%, n2 cpu 50% memory 30%, "
            "n3 cpu 10% memory 10%") in table.output


def test_a_bad_metrics_section_runs_nothing(tmp_path):
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(STATE))
    (tmp_path / "sched.conf").write_text(CONF.format(url="prometheus:9090"))
    r = CliRunner().invoke(main_mod.cli, ["scheduler", "dry-run", "-f", str(state), "--conf",
                                          str(tmp_path / "sched.conf")])
    assert r.exit_code == 2
    assert f"{tmp_path / 'sched.conf'}:21: metrics: address must be an http(s) URL" in r.output
    assert "no session was run" in r.output


@contextlib.contextmanager
def _silent_server():
    """A real TCP server that accepts every connection, reads what it is sent and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)   # (kept open, never answered)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", held
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


@pytest.mark.parametrize("kind, note", [
    pytest.param("prometheus", "6 of 6 usage queries to {url} failed, each value counted 0 as in Volcano (first: n1 "
                               "cpu: ", id="prometheus: every query counted 0"),
    pytest.param("elasticsearch", "node usage not read from {url} (", id="elasticsearch: nothing read"),
])
def test_a_source_that_never_answers_holds_the_dry_run_for_its_metrics_timeout_only(tmp_path, kind, note):
    """Before, a dry run waited up to Volcano's 60 s round for a source that accepts and never answers; now its
    one read gives up after --metrics-timeout (5 s by default), says so, and the session runs as with an
    unreachable source."""
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(STATE))
    with _silent_server() as (url, held):
        (tmp_path / "sched.conf").write_text(CONF.format(url=url).replace("type: prometheus", f"type: {kind}"))
        r = CliRunner().invoke(main_mod.cli, ["scheduler", "dry-run", "-f", str(state), "--conf",
                                              str(tmp_path / "sched.conf"), "-o", "json", "--metrics-timeout", "0.5"])
        asked = len(held)
    assert r.exit_code == 0, r.output
    assert asked >= 1   # (the source was reached: it accepted and said nothing)
    assert f"reading the nodes' usage from {url} (at most 0.5s: --metrics-timeout)" in r.stderr
    assert f"note: {note.format(url=url)}" in r.stderr, r.stderr
    assert ("the source did not answer within 0.5s, all this dry run waits for it (--metrics-timeout; Volcano's "
            "scheduler waits up to 60s a round)") in r.stderr, r.stderr
    assert json.loads(r.stdout)["binds"] == {"ns/p": "n1"}   # (no usage: the session ran as with none)


@pytest.mark.parametrize("value", ["0", "-1", "inf", "soon"])
def test_a_bad_metrics_timeout_is_refused(tmp_path, value):
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(STATE))
    r = CliRunner().invoke(main_mod.cli, ["scheduler", "dry-run", "-f", str(state), "--metrics-timeout", value])
    assert r.exit_code == 2 and "--metrics-timeout" in r.output, r.output
