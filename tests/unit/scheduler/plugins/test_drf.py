"""drf: the dominant share formula, JobOrder, Preemptable, and the hierarchy flag at load (hdrf's own:
test_hdrf.py, scenarios/test_scheduler_hdrf.py)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.unit.scheduler import objects as o
from vclite.scheduler import conf
from vclite.scheduler.framework import hooks, session
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import drf

INF = float("inf")


@pytest.mark.parametrize("allocated, total, want", [
    pytest.param([2000, 2**30, 1], [4000, 4 * 2**30, 10], 0.5, id="cpu dominates"),
    pytest.param([1000, 3 * 2**30, 1], [4000, 4 * 2**30, 10], 0.75, id="memory dominates"),
    pytest.param([1000, 2**30, 2], [4000, 4 * 2**30, 2], 1.0, id="pods count too"),
    pytest.param([0, 0, 0], [4000, 4 * 2**30, 10], 0.0, id="nothing allocated"),
    pytest.param([0, 5, 0], [4000, 0, 10], 0.0, id="dimension without total is ignored"),
    pytest.param([7, 7, 7], [0, 0, 0], 0.0, id="empty cluster"),
    pytest.param([0.05, 0, 0], [0.05, 0, 0], 0.0, id="total below tolerance is ignored"),
])
def test_share(allocated, total, want):
    assert drf.share(np.array(allocated, dtype=float), np.array(total, dtype=float)) == pytest.approx(want)


TIERS = [[conf.plugin("drf", enablePreemptable=True, enableJobOrder=True)]]


def _session(a_running, b_running, b_min=0):
    """Node of 10 cpu; job a (preemptor's) with `a_running` pods and one pending; job b with `b_running`."""
    pods = [o.pod(f"ns/a-{i}", "a", "1", "1", node="n1", phase="Running") for i in range(a_running)]
    pods += [o.pod("ns/a-p", "a", "1", "1")]
    pods += [o.pod(f"ns/b-{i}", "b", "1", "1", node="n1", phase="Running") for i in range(b_running)]
    st = o.state([o.node("n1", "10", "1000Gi", pods="1000")], None,
                 [o.pg("ns/a", min_member=0), o.pg("ns/b", min_member=b_min)], pods)
    ssn = session.open_session(st, conf.build("preempt", TIERS), o.NOW)
    return ssn, next(p for p in ssn.plugins if isinstance(p, drf.Drf))


@pytest.mark.parametrize("a_running, b_running, victims", [
    pytest.param(0, 4, ["ns/b-0", "ns/b-1", "ns/b-2"], id="until b would drop below a+1 (equal counts)"),
    pytest.param(2, 4, ["ns/b-0"], id="only while b stays at least as big as a+1"),
    pytest.param(3, 4, [], id="a+1 already as big as b"),
    pytest.param(5, 2, [], id="a ahead of b"),
])
def test_preemptable_keeps_shares_ordered(a_running, b_running, victims):
    ssn, plugin = _session(a_running, b_running)
    a, b = ssn.jobs["ns/a"], ssn.jobs["ns/b"]
    preemptor = next(iter(a.tasks_in(tasks_mod.TaskStatus.PENDING)))
    candidates = sorted(b.tasks.values(), key=lambda t: t.key)
    assert [t.key for t in plugin.preemptable(preemptor, candidates)] == victims


def test_job_order_lower_share_first_and_follows_events():
    ssn, plugin = _session(1, 3)
    a, b = ssn.jobs["ns/a"], ssn.jobs["ns/b"]
    assert plugin.job_order(a, b) == -1 and plugin.job_order(b, a) == 1
    stmt = ssn.statement()
    for t in list(b.tasks.values())[:2]:
        stmt.evict(t)                       # b: 3 -> 1 placed, a ahead now
    assert plugin.job_order(a, b) == 0       # 1 vs 1
    stmt.pipeline(next(iter(a.tasks_in(tasks_mod.TaskStatus.PENDING))), 0)
    assert plugin.job_order(a, b) == 1
    stmt.discard()
    assert plugin.job_order(a, b) == -1 and plugin.shares["ns/b"] == pytest.approx(0.3)


def test_hierarchy_is_accepted_at_load_but_not_beside_proportion():
    built = conf.build("allocate", [[conf.plugin("drf", enableHierarchy=True)]])
    assert built.tiers[0][0].enabled("enableHierarchy")
    with pytest.raises(ValueError, match="drf with enableHierarchy cannot be used with proportion in the same tier"):
        conf.build("allocate", [[conf.plugin("drf", enableHierarchy=True), conf.plugin("proportion")]])


def _hq(name, hierarchy, weights):
    q = o.queue(name)
    q["metadata"]["annotations"] = {"volcano.sh/hierarchy": hierarchy, "volcano.sh/hierarchy-weights": weights}
    return q


def test_hierarchical_queue_order_follows_allocations_and_a_discarded_statement():
    """qa (root/a) runs 2 pods, qb (root/b, weight 2) runs 3, each has pods pending: qb goes first (0.3/2 <
    0.2/1); a pod pipelined for qb makes them equal (0.4/2), a second gives qb all it asks for (saturated: last);
    a discard restores the tree."""
    pods = [o.pod(f"ns/a-{i}", "a", "1", "1", node="n1", phase="Running") for i in range(2)] + [o.pod("ns/a-p", "a")]
    pods += [o.pod(f"ns/b-{i}", "b", "1", "1", node="n1", phase="Running") for i in range(3)]
    pods += [o.pod(f"ns/b-p{i}", "b", "1", "1") for i in range(2)]
    st = o.state([o.node("n1", "10", "1000Gi", pods="1000")], [_hq("qa", "root/a", "1/1"), _hq("qb", "root/b", "1/2")],
                 [o.pg("ns/a", "qa", min_member=0), o.pg("ns/b", "qb", min_member=0)], pods)
    tiers = [[conf.plugin("drf", enableHierarchy=True, enableQueueOrder=True, enableJobOrder=True)]]
    ssn = session.open_session(st, conf.build("allocate", tiers), o.NOW)
    plugin = next(p for p in ssn.plugins if isinstance(p, drf.Drf))
    qa, qb = ssn.queues["qa"], ssn.queues["qb"]
    assert plugin.queue_order(qb, qa) == -1
    stmt = ssn.statement()
    pending = sorted(ssn.jobs["ns/b"].tasks_in(tasks_mod.TaskStatus.PENDING), key=lambda t: t.key)
    stmt.pipeline(pending[0], 0)
    assert plugin.queue_order(qb, qa) == 0
    stmt.pipeline(pending[1], 0)
    assert plugin.queue_order(qb, qa) == 1
    stmt.discard()
    assert plugin.queue_order(qb, qa) == -1
    assert plugin.total_allocated is not None and plugin.total_allocated[0] == 5000


def test_without_hierarchy_drf_has_no_queue_order():
    st = o.state([o.node("n1")], [_hq("qa", "root/a", "1/1")], [o.pg("ns/a", "qa")], [o.pod("ns/a-0", "a")])
    tiers = [[conf.plugin("drf", enableQueueOrder=True, enableReclaimable=True)]]
    ssn = session.open_session(st, conf.build("allocate", tiers), o.NOW)
    plugin = next(p for p in ssn.plugins if isinstance(p, drf.Drf))
    assert plugin.tree is None and not ssn.hooks.flat(hooks.Point.QUEUE_ORDER)
