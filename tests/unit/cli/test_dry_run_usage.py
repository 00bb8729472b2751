"""`vcctl scheduler dry-run` with the usage and rescheduling plugins, node usage read from a real Prometheus."""
from __future__ import annotations

import json

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
    assert f"reading the nodes' usage from {prom.url}" in as_json.stderr   # (what it waits for, on stderr)
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
