"""rescheduling: lowNodeUtilization victims through the shuffle action, the interval, and the arguments."""
from __future__ import annotations

import datetime as dt

import pytest

from tests.unit.scheduler import objects as o
from vclite.scheduler import conf, nodemetrics
from vclite.scheduler.framework import hooks, session, snapshot
from vclite.scheduler.plugins import rescheduling, rescheduling_lnu as lnu

PARAMS = {"thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 60, "memory": 60}}
ARGS = {"interval": "5m", "metricsPeriod": "10m", "strategies": [{"name": "lowNodeUtilization", "params": PARAMS}]}


def use(cpu, mem):
    return nodemetrics.NodeUsage(o.NOW, {"10m": cpu}, {"10m": mem})


def running(name, node, cpu="500m", mem="512Mi", priority=None, limits=False):
    p = o.pod(f"ns/{name}", "pg1", cpu=cpu, mem=mem, node=node, phase="Running", priority=priority)
    if limits:
        p["spec"]["containers"][0]["resources"]["limits"] = dict(p["spec"]["containers"][0]["resources"]["requests"])
    return p


def shuffle(usage_map, pods, args=ARGS, nodes=("n1", "n2", "n3"), memory=None, unschedulable=()):
    st = o.state([o.node(n, unschedulable=n in unschedulable) for n in nodes], None,
                 [o.pg("ns/pg1", phase="Running")], pods)
    st.node_usage, st.memory = usage_map, memory
    c = conf.build("shuffle", [[conf.plugin("rescheduling", args, enabledVictim=True)]])
    return session.run_session(st, c, o.NOW)


BUSY = {"n1": use(80, 70), "n2": use(10, 10), "n3": use(50, 50)}


def chosen(usage_map, pods, args=ARGS):
    """The victims in the order the strategy chose them (shuffle then evicts them all)."""
    st = o.state([o.node(n) for n in ("n1", "n2", "n3")], None, [o.pg("ns/pg1", phase="Running")], pods)
    st.node_usage = usage_map
    ssn = session.open_session(st, conf.build("shuffle", [[conf.plugin("rescheduling", args, enabledVictim=True)]]),
                               o.NOW)
    tasks = sorted(ssn.jobs["ns/pg1"].tasks.values(), key=lambda t: t.key)
    return [t.key for t in ssn.victim_tasks(tasks)]


@pytest.mark.parametrize("usage_map, pods, victims", [
    pytest.param(BUSY, [running("a", "n1"), running("b", "n1"), running("c", "n1"), running("d", "n3")],
                 ["ns/a", "ns/b"], id="evict-until-no-longer-over-the-target"),
    pytest.param(BUSY, [running("hi", "n1", priority=10), running("lo", "n1", priority=5), running("none", "n1")],
                 ["ns/none", "ns/lo"], id="no-priority-first-then-lowest"),
    pytest.param(BUSY, [running("g", "n1", cpu="1", mem="1Gi", limits=True), running("b", "n1", cpu="1", mem="1Gi"),
                        running("be", "n1", cpu="", mem="")],
                 ["ns/be", "ns/b"], id="besteffort-then-burstable-then-guaranteed"),
    pytest.param({"n1": use(80, 70), "n2": use(30, 10), "n3": use(50, 50)}, [running("a", "n1")], [],
                 id="no-underused-node"),
    pytest.param({"n1": use(10, 10), "n2": use(10, 10), "n3": use(10, 10)}, [running("a", "n1")], [],
                 id="every-node-underused"),
    pytest.param({"n1": use(55, 55), "n2": use(10, 10), "n3": use(50, 50)}, [running("a", "n1")], [],
                 id="no-overused-node"),
    pytest.param({}, [running("a", "n1")], [], id="no-metrics-every-node-0-percent"),
    pytest.param({"n1": use(80, 95), "n2": use(10, 10), "n3": use(10, 10)},
                 [running(x, "n1", cpu="1", mem="100Mi") for x in "abcde"], ["ns/a", "ns/b", "ns/c", "ns/d"],
                 id="room-of-two-underused-nodes-then-exactly-0"),
    pytest.param({"n1": use(80, 95), "n2": use(10, 10), "n3": use(50, 50)},
                 [running(x, "n1", cpu="1", mem="100Mi") for x in "abc"], ["ns/a", "ns/b"],
                 id="stops-when-the-room-is-exactly-0"),
    pytest.param({"n1": use(80, 95), "n2": use(10, 10), "n3": use(50, 50)},
                 [running(x, "n1", cpu="1100m", mem="100Mi") for x in "abc"], ["ns/a", "ns/b", "ns/c"],
                 id="a-room-gone-below-0-does-not-stop-it"),
    pytest.param({"n1": use(95, 95), "n2": use(10, 10), "n3": use(90, 10)},
                 [running("a", "n3"), running("b", "n1"), running("c", "n1", cpu="1")],
                 ["ns/b", "ns/c", "ns/a"], id="busiest-node-first"),
])
def test_low_node_utilization(usage_map, pods, victims):
    assert chosen(usage_map, pods) == victims


def test_shuffle_evicts_the_victims():
    pods = [running("a", "n1"), running("b", "n1"), running("c", "n1"), running("d", "n3")]
    result = shuffle(BUSY, pods)
    assert result.evictions == ["ns/a", "ns/b"]


def test_an_unschedulable_node_is_never_underused():
    pods = [running("a", "n1")]
    assert shuffle(BUSY, pods, unschedulable=("n2",)).evictions == []


def test_other_metrics_periods_read_no_usage():
    """Volcano's cache keeps the 10m averages only: with another metricsPeriod nothing is busy (such a
    configuration with thresholds is refused at load; the default strategy reads no usage either)."""
    assert shuffle(BUSY, [running("a", "n1")], {"metricsPeriod": "5m"}).evictions == []


def test_default_strategy_evicts_nothing():
    assert shuffle(BUSY, [running("a", "n1")], {"metricsPeriod": "10m"}).evictions == []


@pytest.mark.parametrize("memory, runs", [
    pytest.param(None, True, id="dry-run-no-scheduler-process"),
    pytest.param({snapshot.STARTED_AT: o.NOW - dt.timedelta(minutes=4)}, False, id="4m-after-start"),
    pytest.param({snapshot.STARTED_AT: o.NOW - dt.timedelta(minutes=5)}, False, id="exactly-the-interval"),
    pytest.param({snapshot.STARTED_AT: o.NOW - dt.timedelta(minutes=6)}, True, id="6m-after-start"),
    pytest.param({snapshot.STARTED_AT: o.NOW - dt.timedelta(hours=1),
                  rescheduling.LAST_RUN: o.NOW - dt.timedelta(minutes=1)}, False, id="1m-after-the-last-run"),
])
def test_interval(memory, runs):
    result = shuffle(BUSY, [running("a", "n1")], memory=memory)
    assert result.evictions == (["ns/a"] if runs else [])
    if memory is not None:
        assert (memory.get(rescheduling.LAST_RUN) == o.NOW) == runs
        if not runs:   # the next time to run, for a scheduler whose sessions run on events
            last = memory.get(rescheduling.LAST_RUN, memory[snapshot.STARTED_AT])
            assert result.recheck_at == last + dt.timedelta(minutes=5, microseconds=1)


def test_no_recheck_without_shuffle_or_running_pods():
    memory = {snapshot.STARTED_AT: o.NOW}
    st = o.state([o.node("n1")], None, [o.pg("ns/pg1", phase="Running")], [running("a", "n1")])
    st.memory = memory
    c = conf.build("allocate", [[conf.plugin("rescheduling", ARGS, enabledVictim=True)]])
    assert session.run_session(st, c, o.NOW).recheck_at is None
    st.pods = []
    c = conf.build("shuffle", [[conf.plugin("rescheduling", ARGS, enabledVictim=True)]])
    assert session.run_session(st, c, o.NOW).recheck_at is None


def test_enabled_victim_false_registers_nothing():
    st = o.state([o.node("n1")], None, [], [])
    ssn = session.open_session(st, conf.build("shuffle", [[conf.plugin("rescheduling", ARGS)]]), o.NOW)
    assert ssn.hooks.registered(hooks.Point.VICTIM_TASKS) == []


@pytest.mark.parametrize("use_, target, room, want", [
    pytest.param({"cpu": 70.0, "memory": 10.0}, 60.0, {"cpu": 1, "memory": 1}, True, id="over-the-target"),
    pytest.param({"cpu": 60.0, "memory": 10.0}, 60.0, {"cpu": 1, "memory": 1}, True, id="at-the-target"),
    pytest.param({"cpu": 59.0, "memory": 59.0}, 60.0, {"cpu": 1, "memory": 1}, False, id="under-the-target"),
    pytest.param({"cpu": 70.0, "memory": 10.0}, 60.0, {"cpu": 0, "memory": 1}, False, id="no-room"),
    pytest.param({"cpu": 70.0, "memory": 10.0}, 60.0, {"cpu": -5, "memory": 1}, True, id="room-below-0-goes-on"),
])
def test_go_on(use_, target, room, want):
    node = lnu.NodeLoad("n", False, dict(use_), {"cpu": 4, "memory": 8}, {"cpu": 4000, "memory": 8}, [])
    assert lnu._go_on(node, room, {"cpu": target, "memory": target}) is want


def test_arguments():
    c = conf.build("shuffle", [[conf.plugin("rescheduling", {
        "interval": "90s", "metricsPeriod": "10m", "strategies": [{"name": "lowNodeUtilization", "params": {
            "thresholds": {"cpu": 10, "pod": 5}, "nodeFit": True}}]})]])
    args = c.tiers[0][0].args
    assert (args.interval, args.metrics_period) == (90.0, "10m")
    assert conf.build("shuffle", [[conf.plugin("rescheduling", {"metricsPeriod": ""})]]).tiers[0][0].args \
        .metrics_period == "5m"
    (s,) = args.strategies
    assert dict(s.thresholds) == {"cpu": 10.0, "memory": 100.0, "pods": 100.0, "pod": 5.0}
    assert dict(s.target) == {"cpu": 100.0, "memory": 100.0, "pods": 100.0}
    assert conf.build("shuffle", [[conf.plugin("rescheduling", {"strategies": []})]]).tiers[0][0].args.strategies \
        == (rescheduling.Strategy(),)


@pytest.mark.parametrize("arguments, line, message", [
    ("interval: 5", 6, "'interval': expected a Go duration string such as 5m, got 5; Volcano's scheduler panics"),
    ("interval: soon", 6, "'interval': expected a Go duration such as 5m, got 'soon' (Volcano would use 5m)"),
    ("metricsPeriod: 10", 6, "'metricsPeriod': expected a string"),
    ("strategies: {name: lowNodeUtilization}", 6, "'strategies': expected a list"),
    ("strategies: [{name: highNodeUtilization, params: {}}]", 6, "strategies[0].name: unknown strategy"),
    ("strategies: [{name: lowNodeUtilization}]", 6, "strategies[0].params: expected a mapping with thresholds"),
    ("strategies: [{name: lowNodeUtilization, params: {}, weight: 1}]", 6, "strategies[0]: unknown field 'weight'"),
    ("strategies: [{name: lowNodeUtilization, params: {}}, {name: lowNodeUtilization, params: {}}]", 6,
     "strategies[1].name: strategy 'lowNodeUtilization' is listed twice"),
    ("strategies: [{name: lowNodeUtilization, params: {thresholds: {cpu: 20.5}}}]", 6,
     "strategies[0].params.thresholds.cpu: expected an integer percentage, got 20.5; Volcano's scheduler panics"),
    ("strategies: [{name: lowNodeUtilization, params: {thresholds: {gpu: 20}}}]", 6,
     "strategies[0].params.thresholds: unknown resource 'gpu'"),
    ("strategies: [{name: lowNodeUtilization, params: {targetThresholds: 60}}]", 6,
     "strategies[0].params.targetThresholds: expected a mapping"),
    ("strategies: [{name: lowNodeUtilization, params: {evictableNamespaces: [a]}}]", 6,
     "strategies[0].params: unknown parameter 'evictableNamespaces'"),
    ("strategies: [{name: offlineOnly}]", 6, "strategies[0].name: strategy 'offlineOnly' is in Volcano's design but "
                                             "not implemented (Volcano ignores it): remove it"),
    ("queueSelector: [default]", 6, "'queueSelector': in Volcano's design but not implemented"),
    ("labelSelector: {team: a}", 6, "'labelSelector': in Volcano's design but not implemented"),
    ("strategies: [{name: lowNodeUtilization, params: {thresholds: {cpu: 20}}}]", 5,
     "metricsPeriod is 5m, but the metrics source fills only the 10m averages (in Volcano too)"),
])
def test_bad_arguments_name_their_line(arguments, line, message):
    text = f'actions: "shuffle"\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n      {arguments}\n'
    with pytest.raises(conf.ConfError) as e:
        conf.parse(text, "sched.conf")
    assert len(e.value.problems) == 1
    p = e.value.problems[0]
    assert (p.file, p.line) == ("sched.conf", line) and message in p.message, p


DESIGN_EXAMPLE = """\
actions: "enqueue, allocate, backfill, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: rescheduling
    arguments:
      interval: 5m
      metricsPeriod: 5m
      strategies:
        - name: offlineOnly
        - name: lowPriorityFirst
        - name: lowNodeUtilization
          params:
            thresholds:
              "cpu" : 20
              "memory": 20
              "pods": 20
            targetThresholds:
              "cpu" : 50.5
              "memory": 50
              "gpu": 50
      queueSelector:
        - default
        - test-queue
      labelSelector:
        business: offline
        team: test
"""


def test_every_problem_of_the_design_documents_example_is_reported_at_once():
    """docs/design/rescheduling.md's example (with two more slips in targetThresholds): every problem in one
    round, each at its own line, the metricsPeriod check included (before: only the first, offlineOnly)."""
    with pytest.raises(conf.ConfError) as e:
        conf.parse(DESIGN_EXAMPLE, "sched.conf")
    got = [(p.file, p.line, p.message) for p in e.value.problems]
    want = [
        (10, "metricsPeriod is 5m, but the metrics source fills only the 10m averages"),
        (12, "strategies[0].name: strategy 'offlineOnly' is in Volcano's design but not implemented"),
        (13, "strategies[1].name: strategy 'lowPriorityFirst' is in Volcano's design but not implemented"),
        (20, "strategies[2].params.targetThresholds: unknown resource 'gpu'"),
        (21, "strategies[2].params.targetThresholds.cpu: expected an integer percentage, got 50.5"),
        (24, "'queueSelector': in Volcano's design but not implemented"),
        (27, "'labelSelector': in Volcano's design but not implemented"),
    ]
    assert len(got) == len(want), got
    for (file, line, message), (want_line, want_message) in zip(got, sorted(want)):
        assert (file, line) == ("sched.conf", want_line) and want_message in message, (line, message)
