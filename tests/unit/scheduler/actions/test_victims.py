"""Shared eviction helpers: the preemptable annotation/label, preemptionPolicy, victim order, and
the memo of hopeless nodes."""
from __future__ import annotations

import numpy as np
import pytest

from tests.unit.scheduler import objects as o
from vclite.api import batch
from vclite.scheduler import conf, registry
from vclite.scheduler.actions import victims
from vclite.scheduler.framework import hooks, plugin, session


def _ssn(pods, tiers=None, queues=None, pgs=None):
    st = o.state([o.node("n1", "8", "8Gi"), o.node("n2", "8", "8Gi")], queues, pgs or [o.pg("ns/g")], pods)
    return session.open_session(st, conf.build("preempt", tiers or [[]]), o.NOW)


def _task(ssn, key):
    return next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.key == key)


@pytest.mark.parametrize("annotation, label, want", [
    pytest.param(None, None, True, id="default: preemptable"),
    pytest.param("false", None, False, id="annotation false"),
    pytest.param("true", "false", True, id="annotation wins over label"),
    pytest.param(None, "false", False, id="label false"),
    pytest.param(None, "True", True, id="Go spelling True"),
    pytest.param("0", None, False, id="Go spelling 0"),
    pytest.param("yes", None, False, id="invalid value counts as false"),
])
def test_preemptable(annotation, label, want):
    pod = o.pod("ns/p", "g", node="n1", phase="Running")
    if annotation is not None:
        pod["metadata"]["annotations"][batch.PREEMPTABLE] = annotation
    if label is not None:
        pod["metadata"]["labels"] = {batch.PREEMPTABLE: label}
    assert victims.preemptable(_task(_ssn([pod]), "ns/p")) is want


CLASSES = [{"metadata": {"name": "polite"}, "value": 5, "preemptionPolicy": "Never"},
           {"metadata": {"name": "pushy"}, "value": 5, "preemptionPolicy": "PreemptLowerPriority"}]


@pytest.mark.parametrize("policy, priority_class, want", [
    pytest.param(None, None, False, id="unset"),
    pytest.param("PreemptLowerPriority", None, False, id="lower priority"),
    pytest.param("Never", None, True, id="never"),
    pytest.param(None, "polite", True, id="from a Never PriorityClass"),
    pytest.param(None, "pushy", False, id="from a PreemptLowerPriority class"),
    pytest.param("PreemptLowerPriority", "polite", False, id="the pod's own policy wins"),
    pytest.param(None, "missing", False, id="unknown class"),
])
def test_never_preempts(policy, priority_class, want):
    pod = o.pod("ns/p", "g")
    if policy:
        pod["spec"]["preemptionPolicy"] = policy
    if priority_class:
        pod["spec"]["priorityClassName"] = priority_class
    st = o.state([o.node("n1")], None, [o.pg("ns/g")], [pod], CLASSES)
    ssn = session.open_session(st, conf.build("preempt", [[]]), o.NOW)
    assert victims.never_preempts(_task(ssn, "ns/p"), victims.never_classes(ssn)) is want


def test_victim_order():
    """Same job: lowest task priority first; other queue before own-queue order by reverse
    QueueOrder; same queue: reverse JobOrder."""
    tiers = [[conf.plugin("priority", enableTaskOrder=True, enableJobOrder=True),
              conf.plugin("proportion", enableQueueOrder=True)]]
    pgs = [o.pg("ns/hi", "q1", 0, priority_class="hi"), o.pg("ns/lo", "q1", 0, priority_class="lo"),
           o.pg("ns/other", "q2", 0)]
    pods = [o.pod("ns/hi-0", "hi", node="n1", phase="Running", priority=5),
            o.pod("ns/hi-1", "hi", node="n1", phase="Running", priority=1),
            o.pod("ns/lo-0", "lo", node="n1", phase="Running"),
            o.pod("ns/other-0", "other", node="n1", phase="Running")]
    st = o.state([o.node("n1", "8", "8Gi")], [o.queue("q1", priority=1), o.queue("q2")], pgs, pods,
                 [{"metadata": {"name": "hi"}, "value": 100}, {"metadata": {"name": "lo"}, "value": 1}])
    ssn = session.open_session(st, conf.build("preempt", tiers), o.NOW)
    tasks = [_task(ssn, k) for k in ("ns/hi-0", "ns/hi-1", "ns/lo-0", "ns/other-0")]
    line = victims.victim_queue(ssn, tasks)
    order = [line.pop().key for _ in range(len(tasks))]
    # q2 (priority 0) comes after q1 in QueueOrder, so its pods go first; then q1's lower job lo;
    # then hi's tasks, lowest task priority first.
    assert order == ["ns/other-0", "ns/lo-0", "ns/hi-1", "ns/hi-0"]
    assert [t.key for t in victims.in_victim_order(ssn, tasks)] == order


class Counter:
    """Counts Preemptable calls; abstains, with a key (so hopeless nodes may be remembered)."""
    name = "counter"
    Arguments = plugin.NoArguments
    calls = 0

    def __init__(self, arguments):
        Counter.calls = 0

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.PREEMPTABLE, self.count, key=lambda evictor: ())

    def count(self, evictor, candidates):
        Counter.calls += 1
        return None

    def on_session_close(self, ssn):
        pass


def test_equal_preemptors_facing_a_full_cluster_ask_each_node_once():
    """20 pending jobs as good as the 10 running ones: priority finds no victim anywhere; the
    nodes found hopeless for the first preemptor are not asked again for the others."""
    tiers = [[conf.plugin("counter", enablePreemptable=True),
              conf.plugin("priority", enablePreemptable=True, enableJobStarving=True)]]
    nodes = [o.node(f"n{i}", "1", "1Gi") for i in range(10)]
    pgs = [o.pg(f"ns/run{i}", min_member=1, phase="Running") for i in range(10)]
    pgs += [o.pg(f"ns/wait{i}", min_member=1) for i in range(20)]
    pods = [o.pod(f"ns/run{i}-0", f"run{i}", "1", "1Gi", node=f"n{i}", phase="Running") for i in range(10)]
    pods += [o.pod(f"ns/wait{i}-0", f"wait{i}", "1", "1Gi") for i in range(20)]
    reg = registry.default_registry().with_plugins(Counter)
    result = session.run_session(o.state(nodes, None, pgs, pods), conf.build("preempt", tiers, registry=reg), o.NOW)
    assert result.evictions == []
    assert Counter.calls == 10


def test_hopeless_nodes_are_forgotten_when_a_node_changes():
    ssn = _ssn([o.pod("ns/p", "g"), o.pod("ns/q", "g")], tiers=[[conf.plugin("conformance", enablePreemptable=True)]])
    memo = victims.Hopeless(ssn, hooks.Point.PREEMPTABLE)
    p = _task(ssn, "ns/p")
    profile = memo.profile(p, "any")
    memo.add(profile, 1)
    assert list(memo.drop(profile, np.array([0, 1]))) == [0]
    assert list(memo.drop(memo.profile(p, "other"), np.array([0, 1]))) == [0, 1]
    ssn.statement().pipeline(_task(ssn, "ns/q"), 0)   # any node change
    assert list(memo.drop(profile, np.array([0, 1]))) == [0, 1]


def test_nothing_is_remembered_without_keys():
    class NoKey(Counter):
        name = "nokey"

        def on_session_open(self, ssn, reg):
            reg.add(hooks.Point.PREEMPTABLE, self.count)

    reg = registry.default_registry().with_plugins(NoKey)
    st = o.state([o.node("n1")], None, [o.pg("ns/g")], [o.pod("ns/p", "g")])
    ssn = session.open_session(st, conf.build("preempt", [[conf.plugin("nokey", enablePreemptable=True)]],
                                              registry=reg), o.NOW)
    assert victims.Hopeless(ssn, hooks.Point.PREEMPTABLE).profile(_task(ssn, "ns/p"), "any") is None


class FarQueuesFirst:
    """A VictimQueueOrder plugin: victims of queue `far` go before those of `near`, whatever the
    QueueOrder says (as hierarchical capacity orders by distance from the preemptor's queue)."""
    name = "farfirst"
    Arguments = plugin.NoArguments
    seen: list = []

    def __init__(self, arguments):
        FarQueuesFirst.seen = []

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.VICTIM_QUEUE_ORDER, self.order)

    def order(self, l, r, preemptor):
        FarQueuesFirst.seen.append(preemptor.name)
        rank = {"far": 0, "near": 1}
        return rank.get(l.name, 2) - rank.get(r.name, 2)

    def on_session_close(self, ssn):
        pass


@pytest.mark.parametrize("with_plugin, order", [
    pytest.param(False, ["ns/near-0", "ns/far-0"], id="no VictimQueueOrder: reverse QueueOrder (near is later)"),
    pytest.param(True, ["ns/far-0", "ns/near-0"], id="VictimQueueOrder decides for the preemptor's queue"),
])
def test_victim_queue_order_point(with_plugin, order):
    tiers = [[conf.plugin("proportion", enableQueueOrder=True)] + ([conf.plugin("farfirst")] if with_plugin else [])]
    pgs = [o.pg("ns/near", "near", 0), o.pg("ns/far", "far", 0), o.pg("ns/me", "mine", 0)]
    pods = [o.pod("ns/near-0", "near", node="n1", phase="Running"),
            o.pod("ns/far-0", "far", node="n1", phase="Running"),
            o.pod("ns/me-0", "me")]
    st = o.state([o.node("n1", "8", "8Gi")], [o.queue("near"), o.queue("far", priority=1), o.queue("mine")], pgs, pods)
    reg = registry.default_registry().with_plugins(FarQueuesFirst)
    ssn = session.open_session(st, conf.build("reclaim", tiers, registry=reg), o.NOW)
    tasks = [_task(ssn, "ns/near-0"), _task(ssn, "ns/far-0")]
    me = _task(ssn, "ns/me-0")
    assert [t.key for t in victims.in_victim_order(ssn, tasks, me)] == order
    line = victims.victim_queue(ssn, list(reversed(tasks)), me)
    assert [line.pop().key for _ in range(2)] == order
    assert set(FarQueuesFirst.seen) == ({"mine"} if with_plugin else set())


@pytest.mark.parametrize("with_preemptor", [
    pytest.param(True, id="preemptor job found"),
    pytest.param(False, id="preemptor job missing"),
])
def test_victims_of_equal_jobs_go_by_task_order(with_preemptor):
    """session_plugins_victim_order_test.go TestBuildVictimsPriorityQueueJobTieBreaksWithTaskOrder: two jobs
    priority's JobOrder finds equal (the older one, pg-low, holds the lower-priority pod): the lower task
    priority is evicted first, whatever the jobs' creation times."""
    def created(pg, seconds):
        pg["metadata"]["creationTimestamp"] = f"1970-01-01T00:00:{seconds:02d}Z"
        return pg
    pgs = [created(o.pg("ns1/pg-high", "q1", phase="Running"), 20),
           created(o.pg("ns1/pg-low", "q1", phase="Running"), 10)]
    pods = [o.pod("ns1/p-high", "pg-high", node="n1", phase="Running", priority=100),
            o.pod("ns1/p-low", "pg-low", node="n1", phase="Running", priority=1)]
    if with_preemptor:
        pgs.append(o.pg("ns1/pg-preemptor", "q1", phase="Pending"))
        pods.append(o.pod("ns1/p-preemptor", "pg-preemptor", priority=100))
    tiers = [[conf.plugin("priority", enableJobOrder=True, enableTaskOrder=True)]]
    ssn = _ssn(pods, tiers, [o.queue("q1")], pgs)
    high, low = _task(ssn, "ns1/p-high"), _task(ssn, "ns1/p-low")
    preemptor = _task(ssn, "ns1/p-preemptor") if with_preemptor else None
    assert victims.victim_queue(ssn, [high, low], preemptor).pop() is low
