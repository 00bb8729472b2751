"""The UnifiedEvictable answers of priority, gang, conformance and capacity (gangpreempt, gangreclaim): what
each lets be evicted for each kind, and how a tier intersects them."""
from __future__ import annotations

import pytest

from tests.unit.scheduler import objects as o
from vclite.scheduler import conf
from vclite.scheduler.framework import eviction, hooks, hypernodes, session

CLASSES = [{"metadata": {"name": "hi"}, "value": 100}, {"metadata": {"name": "lo"}, "value": 10}]


def _running(key, group, priority=10):
    return o.pod(key, group, "1", "1Gi", node="n1", phase="Running", priority=priority)


def _unified(tiers, kind, pgs, pods, queues=None, starving="ns/s"):
    st = o.state([o.node("n1", "8", "8Gi")], queues or [o.queue("q")], pgs, pods, CLASSES)
    ssn = session.open_session(st, conf.build("allocate", tiers), o.NOW)
    candidates = [t for j in ssn.jobs.values() for t in j.tasks.values() if t.node]
    candidates.sort(key=lambda t: t.key)
    ctx = eviction.Context(kind, ssn.jobs[starving], hypernodes.TOP)
    got = ssn.hooks.call(hooks.Point.UNIFIED_EVICTABLE, ctx, candidates)
    return None if got is None else [t.key for t in got]


def _deserved(q, cpu, guarantee=None):
    q["spec"]["deserved"] = {"cpu": str(cpu), "memory": f"{cpu}Gi"}
    if guarantee is not None:
        q["spec"]["guarantee"] = {"resource": {"cpu": str(guarantee), "memory": f"{guarantee}Gi"}}
    return q


MIXED = ([o.pg("ns/s", "q", priority_class="hi"), o.pg("ns/lo", "q", priority_class="lo"),
          o.pg("ns/eq", "q", priority_class="hi"), o.pg("kube-system/sys", "q", priority_class="lo")],
         [o.pod("ns/s-0", "s", priority=100), _running("ns/lo-0", "lo"), _running("ns/eq-0", "eq", 100),
          _running("kube-system/sys-0", "sys")])


@pytest.mark.parametrize("tiers, kind, want", [
    pytest.param([[conf.plugin("priority")]], eviction.Kind.GANG_PREEMPT, ["kube-system/sys-0", "ns/lo-0"],
                 id="priority: lower job priority only, for gangpreempt"),
    pytest.param([[conf.plugin("priority")]], eviction.Kind.GANG_RECLAIM,
                 ["kube-system/sys-0", "ns/eq-0", "ns/lo-0"], id="priority: every candidate, for gangreclaim"),
    pytest.param([[conf.plugin("gang", enablePreemptable=False)]], eviction.Kind.GANG_PREEMPT,
                 ["kube-system/sys-0", "ns/eq-0", "ns/lo-0"], id="gang: every candidate, whatever the flag"),
    pytest.param([[conf.plugin("conformance")]], eviction.Kind.GANG_RECLAIM, ["ns/eq-0", "ns/lo-0"],
                 id="conformance: not kube-system"),
    pytest.param([[conf.plugin("priority"), conf.plugin("conformance")]], eviction.Kind.GANG_PREEMPT, ["ns/lo-0"],
                 id="a tier intersects"),
    pytest.param([[conf.plugin("drf"), conf.plugin("proportion")]], eviction.Kind.GANG_RECLAIM, None,
                 id="drf and proportion abstain, as upstream"),
])
def test_unified_evictable(tiers, kind, want):
    assert _unified(tiers, kind, *MIXED) == want


@pytest.mark.parametrize("q2, want", [
    pytest.param(_deserved(o.queue("q2"), 2), ["ns/v-0", "ns/v-1"], id="down to deserved"),
    pytest.param(_deserved(o.queue("q2"), 1, guarantee=3), ["ns/v-0"], id="never below guarantee"),
    pytest.param(_deserved(o.queue("q2"), 4), None, id="within deserved: none, the tier undecided"),
])
def test_capacity_unified_evictable_reclaim(q2, want):
    """q2 holds 4 cpu; capacity lets reclaim take what is over its deserved and above its guarantee
    (GR-4, GR-6); gangpreempt is not its business."""
    pgs = [o.pg("ns/s", "q1"), o.pg("ns/v", "q2", 1, "Running")]
    pods = [o.pod("ns/s-0", "s")] + [_running(f"ns/v-{i}", "v") for i in range(4)]
    tiers = [[conf.plugin("capacity")]]
    queues = [_deserved(o.queue("q1"), 4), q2]
    assert _unified(tiers, eviction.Kind.GANG_RECLAIM, pgs, pods, queues) == want
    assert _unified(tiers, eviction.Kind.GANG_PREEMPT, pgs, pods, queues) == [f"ns/v-{i}" for i in range(4)]
