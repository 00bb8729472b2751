"""usage: predicate, node scores, shadow estimates and arguments (plugins/usage/usage_test.go, estimator_test.go)."""
from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pytest

from tests.unit.scheduler import objects as o
from vclite.scheduler import conf, nodemetrics
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.plugins import usage, usage_estimate as est

ARGS = {"usage.weight": 5, "cpu.weight": 1, "memory.weight": 1, "thresholds": {"cpu": 80, "mem": 80}}


def use(cpu, mem, age=dt.timedelta(0)):
    return nodemetrics.NodeUsage(None if age is None else o.NOW - age, {"10m": cpu}, {"10m": mem})


# usage_test.go's nodes: n1 cpu over, n2 memory over, n3 at the limits, n4 over but 6 minutes old, n5 never read
USAGE = {"n1": use(81, 60), "n2": use(60, 81), "n3": use(80, 79), "n4": use(90, 81, dt.timedelta(minutes=6)),
         "n5": use(90, 81, None)}


def open_session(usage_map, pods=(), args=ARGS, nodes=("n1", "n2", "n3", "n4", "n5"), actions="allocate",
                 metrics=None):
    pending = [o.pod("c1/p1", "pg1"), *pods]
    st = o.state([o.node(n) for n in nodes], None, [o.pg("c1/pg1", min_member=0)], pending)
    st.node_usage = usage_map
    c = conf.build(actions, [[conf.plugin("usage", args, enablePredicate=True, enableNodeOrder=True)]])
    if metrics:
        c = dataclasses.replace(c, metrics=metrics)
    ssn = session.open_session(st, c, o.NOW)
    task = next(t for t in ssn.jobs["c1/pg1"].tasks.values() if t.name == "p1")
    return ssn, task


def refused(ssn, task):
    out = {}
    for failure in ssn.hooks.call(hooks.Point.PREDICATE, task, ssn.nodes):
        assert not failure.resolvable   # UnschedulableAndUnresolvable
        for why, mask in failure.reasons:
            for row in np.flatnonzero(mask):
                out[ssn.nodes.names[row]] = why
    return out


def scores(ssn, task):
    rows = np.arange(len(ssn.nodes))
    return dict(zip(ssn.nodes.names, ssn.hooks.call(hooks.Point.NODE_ORDER, task, rows).tolist()))


def test_predicate_volcano_rows():
    ssn, task = open_session(USAGE)
    assert refused(ssn, task) == {"n1": usage.CPU_EXCEEDED, "n2": usage.MEMORY_EXCEEDED}


@pytest.mark.parametrize("thresholds, want", [
    pytest.param({"cpu": 90, "mem": 90}, {}, id="higher-thresholds"),
    pytest.param({"cpu": 59}, {"n1": usage.CPU_EXCEEDED, "n2": usage.CPU_EXCEEDED, "n3": usage.CPU_EXCEEDED},
                 id="cpu-first"),
    pytest.param({"cpu": 100, "mem": 0}, {"n1": usage.MEMORY_EXCEEDED, "n2": usage.MEMORY_EXCEEDED,
                                          "n3": usage.MEMORY_EXCEEDED}, id="memory"),
])
def test_predicate_thresholds(thresholds, want):
    ssn, task = open_session(USAGE, args={"thresholds": thresholds})
    assert refused(ssn, task) == want


def test_predicate_off_with_enable_predicate_false():
    st = o.state([o.node("n1")], None, [o.pg("c1/pg1", min_member=0)], [o.pod("c1/p1", "pg1")])
    st.node_usage = {"n1": use(99, 99)}
    ssn = session.open_session(st, conf.parse({"actions": "allocate", "tiers": [{"plugins": [
        {"name": "usage", "enablePredicate": False}]}]}), o.NOW)
    assert ssn.hooks.registered(hooks.Point.PREDICATE) == []


SCORE_USAGE = {"n1": use(30, 50), "n2": use(60, 50), "n3": use(60, 80), "n4": use(10, 20, dt.timedelta(minutes=6)),
               "n5": use(0, 0, None)}


@pytest.mark.parametrize("weights, want", [
    pytest.param({"cpu.weight": 1, "memory.weight": 1}, {"n1": 300, "n2": 225, "n3": 150, "n4": 0, "n5": 0},
                 id="default-weights"),
    pytest.param({"cpu.weight": 2, "memory.weight": 8}, {"n1": 270, "n2": 240, "n3": 120, "n4": 0, "n5": 0},
                 id="memory-first"),
    pytest.param({"cpu.weight": 0, "memory.weight": 0}, {n: 0 for n in ("n1", "n2", "n3", "n4", "n5")},
                 id="zero-weights"),
])
def test_node_scores_volcano_rows(weights, want):
    ssn, task = open_session(SCORE_USAGE, args={"usage.weight": 5, **weights})
    assert scores(ssn, task) == pytest.approx(want)


def test_no_metrics_at_all_scores_zero_and_refuses_nothing():
    ssn, task = open_session({})
    assert refused(ssn, task) == {}
    assert set(scores(ssn, task).values()) == {0.0}


def bound(key, node, phase="Pending", start=None, cpu="1", mem="1Gi", limits=None):
    p = o.pod(key, "pg1", node=node, phase=phase, cpu=cpu, mem=mem)
    if start is not None:
        p["status"]["startTime"] = (o.NOW - start).isoformat().replace("+00:00", "Z")
    if limits:
        p["spec"]["containers"][0]["resources"]["limits"] = limits
    return p


@pytest.mark.parametrize("pod, shadow", [
    pytest.param(bound("c1/b", "n1"), True, id="bound"),
    pytest.param(bound("c1/b", "n1", "Running", start=dt.timedelta(seconds=10)), True, id="running-recently"),
    pytest.param(bound("c1/b", "n1", "Running"), True, id="running-without-start-time"),
    pytest.param(bound("c1/b", "n1", "Running", start=dt.timedelta(minutes=10)), False, id="running-long"),
    pytest.param(bound("c1/b", "n1", "Succeeded"), False, id="finished"),
])
def test_shadow_pods_at_session_open(pod, shadow):
    """shouldAddToShadowCache: 1 cpu · request_ratio 0.7 = 700m of a 4-cpu node, 0.7Gi of 8Gi."""
    ssn, task = open_session({"n1": use(0, 0)}, pods=[pod], nodes=("n1",))
    plugin = next(p for p in ssn.plugins if p.name == "usage")
    assert plugin.shadow.node("n1") == ((700.0, 0.7 * 2 ** 30) if shadow else (0.0, 0.0))
    want = ((1 - 700 / 4000) + (1 - 0.7 / 8)) / 2 * 100 * 5 if shadow else 500.0
    assert scores(ssn, task)["n1"] == pytest.approx(want)


def test_metrics_interval_from_the_conf():
    """A pod running for 40 s is in the blind spot of a 1m metrics interval, not of the default 30 s."""
    pod = bound("c1/b", "n1", "Running", start=dt.timedelta(seconds=40))
    for metrics, shadow in (({}, 0.0), ({"interval": "1m"}, 700.0)):
        ssn, _ = open_session({"n1": use(0, 0)}, pods=[pod], nodes=("n1",), metrics=metrics)
        plugin = next(p for p in ssn.plugins if p.name == "usage")
        assert plugin.shadow.node("n1")[0] == shadow


def test_allocations_of_the_session_count_at_once():
    """Two equal nodes: the first pod goes to n1, whose estimate then makes n2 the better node."""
    pods = [o.pod("c1/p2", "pg1")]
    st = o.state([o.node("n1"), o.node("n2")], None, [o.pg("c1/pg1", min_member=0)], [o.pod("c1/p1", "pg1"), *pods])
    st.node_usage = {"n1": use(10, 10), "n2": use(10, 10)}
    c = conf.build("allocate", [[conf.plugin("usage", {}, enablePredicate=True, enableNodeOrder=True)]])
    result = session.run_session(st, c, o.NOW)
    assert result.binds == {"c1/p1": "n1", "c1/p2": "n2"}
    st.node_usage = {}
    assert session.run_session(st, c, o.NOW).binds == {"c1/p1": "n1", "c1/p2": "n1"}


def test_a_busy_node_is_not_used_even_when_it_is_the_only_one():
    st = o.state([o.node("n1")], None, [o.pg("c1/pg1", min_member=1)], [o.pod("c1/p1", "pg1")])
    st.node_usage = {"n1": use(95, 10)}
    c = conf.parse({"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "usage"}]}]})
    result = session.run_session(st, c, o.NOW)
    assert result.binds == {}
    assert f"1 {usage.CPU_EXCEEDED}" in str(result.podgroup_status["c1/pg1"])


@pytest.mark.parametrize("values, want", [
    ((0.4, 0.6, 1, 1), 0.5), ((0.8, 0.2, 3, 1), 0.65), ((0.8, 0.2, 0, 0), 0.0)])
def test_load(values, want):
    assert est.load(*values) == pytest.approx(want)


@pytest.mark.parametrize("values, want", [
    ((0.59, 0.6, 1.2), 1.0), ((0.6, 0.6, 1.2), 1.2), ((0.9, 0.6, 1.2), 1.2), ((0.9, 0.6, 0.8), 1.0)])
def test_risk_factor(values, want):
    assert est.risk_factor(*values) == pytest.approx(want)


@pytest.mark.parametrize("values, want", [
    pytest.param((500, 2000, 1.0, 0.0, 1.0), 500, id="request"),
    pytest.param((500, 2000, 0.0, 0.0, 1.0), 0, id="zero-weights"),
    pytest.param((500, 2000, 1.0, 1.0, 1.0), 2000, id="up-to-the-limit"),
    pytest.param((500, 2000, 0.5, 0.2, 1.0), 550, id="burst-share"),
    pytest.param((500, 2000, 1.0, 1.0, 1.5), 2000, id="clamped-to-the-limit"),
    pytest.param((500, 0, 0.7, 0.5, 1.2), 420, id="no-limit-no-burst"),
    pytest.param((500, 300, 1.0, 0.0, 2.0), 500, id="limit-below-request-is-the-request"),
    pytest.param((-5, 0, 1.0, 0.0, 1.0), 0, id="negative-request"),
])
def test_pod_estimate(values, want):
    assert est.pod_estimate(*values) == pytest.approx(want)


@pytest.mark.parametrize("values, want", [
    ((50, 1000, 4000), 0.75), ((90, 1000, 4000), 1.0), ((0, 0, 0), 0.0), ((-50, 0, 100), 0.0)])
def test_composite(values, want):
    assert est.composite(*values) == pytest.approx(want)


def test_shadow_cache_subtracts_what_it_added():
    c = est.ShadowCache()
    c.add("n1", "a", 100, 10)
    c.add("n1", "b", 50, 5)
    c.add("n2", "a", 30, 3)   # a again: its first estimate leaves n1
    assert (c.node("n1"), c.node("n2")) == ((50, 5), (30, 3))
    c.remove("a")
    c.remove("zzz")
    assert (c.node("n1"), c.node("n2")) == ((50, 5), (0, 0))


@pytest.mark.parametrize("args, want", [
    pytest.param({}, usage.Arguments(), id="defaults"),
    pytest.param({"estimator": {"request_ratio": 0.8, "burst_ratio": 0.3, "risk_threshold": 0.75,
                                "risk_factor": 1.5, "be_cpu": "500m", "be_mem": "300Mi"}},
                 usage.Arguments(estimator=usage.Estimator(0.8, 0.3, 0.75, 1.5, 500.0, 300 * 2 ** 20)),
                 id="estimator-quantities"),
    pytest.param({"estimator": {"be_cpu": 300, "be_mem": 100}},
                 usage.Arguments(estimator=usage.Estimator(be_cpu=300.0, be_mem=100 * 2 ** 20)),
                 id="estimator-integers-millicores-and-MiB"),
    pytest.param({"usage.weight": 0, "thresholds": {"cpu": 0, "mem": 100}},
                 usage.Arguments(usage_weight=0, thresholds=usage.Thresholds(0, 100)), id="bounds"),
])
def test_arguments(args, want):
    c = conf.build("allocate", [[conf.plugin("usage", args)]])
    assert c.tiers[0][0].args == want


@pytest.mark.parametrize("arguments, line, message", [
    ("usage.weight: -1", 6, "'usage.weight': must not be negative"),
    ("cpu.weight: 1.5", 6, "'cpu.weight': expected an integer"),
    ('memory.weight: "2"', 6, "'memory.weight': expected an integer"),
    ("thresholds: {cpu: 101}", 6, "thresholds.cpu: must be a percentage from 0 to 100"),
    ("thresholds: {cpu: 80.5}", 6, "thresholds.cpu: expected an integer"),
    ("thresholds: {memory: 80}", 6, "thresholds: unknown key 'memory' (known: cpu, mem)"),
    ("thresholds: 80", 6, "thresholds: expected a mapping"),
    ("estimator: {request_ratio: 1.5}", 6, "estimator.request_ratio: must be from 0 to 1"),
    ("estimator: {risk_factor: 0.5}", 6, "estimator.risk_factor: must be at least 1"),
    ("estimator: {be_cpu: -1}", 6, "estimator.be_cpu: must not be negative"),
    ("estimator: {be_mem: lots}", 6, "estimator.be_mem: expected an integer of MiB or a quantity"),
    ("estimator: {be_gpu: 1}", 6, "estimator: unknown key 'be_gpu'"),
    ("usage.wieght: 5", 6, 'unknown argument "usage.wieght"'),
])
def test_bad_arguments_name_their_line(arguments, line, message):
    text = f'actions: "allocate"\ntiers:\n- plugins:\n  - name: usage\n    arguments:\n      {arguments}\n'
    with pytest.raises(conf.ConfError) as e:
        conf.parse(text, "sched.conf")
    assert len(e.value.problems) == 1
    p = e.value.problems[0]
    assert (p.file, p.line) == ("sched.conf", line) and message in p.message, p
