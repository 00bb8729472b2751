"""tdm: revocable zones lent to preemptable work during their hours (Volcano's plugins/tdm) and the shuffle
action that evicts what is left there when a zone closes; ported from Test_parseRevocableZone and Test_TDM."""
import datetime as dt
import time

import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import tdm

from .test_scheduler_scenarios import P, node, pg, pod, queue


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """Zones are in the scheduler's local time: make it UTC for these tests."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(hour, minute=0):
    return dt.datetime(2026, 3, 10, hour, minute, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("text, hours", [
    ("00:00_01:00", None), ("00:00-01:00", 1), ("0:00-23:59", 23 + 59 / 60), ("0:00", None), ("1:00-0:00", 23),
    ("1:0-0:0", None), ("   1:00-0:00    ", 23), ("23:59-23:59", 24), ("63:59-23:59", None),
])
def test_parse_window(text, hours):
    if hours is None:
        with pytest.raises(ValueError):
            tdm.parse_window(text)
        return
    start, end = tdm.parse_window(text)
    s, e = tdm.window_around(at(0, 30) if start.hour == 0 else at(23, 59), start, end)
    assert (e - s).total_seconds() / 3600 == pytest.approx(hours)


@pytest.mark.parametrize("now, window, open_", [
    (at(12), "10:00-21:00", True), (at(9, 59), "10:00-21:00", False), (at(21, 1), "10:00-21:00", False),
    (at(23), "22:00-06:00", True), (at(1), "22:00-06:00", True),     # upstream: closed after midnight
    (at(7), "22:00-06:00", False), (at(12), "0:00-0:00", True),
])
def test_windows_open_and_close(now, window, open_):
    s, e = tdm.window_around(now, *tdm.parse_window(window))
    assert (s <= now <= e) is open_


def zone_node(name, zone=None):
    return node(name, 16, "64Gi", labels={tdm.ZONE_LABEL: zone} if zone else {})


NODES = [zone_node("n1", "rz1"), zone_node("n2", "rz1"), zone_node("n3"), zone_node("n4"), zone_node("n5", "rz2")]
ARGS = {"tdm.revocable-zone.rz1": "0:00-0:00", "tdm.revocable-zone.rz2": "0:00-0:01"}
TIERS = [[P("tdm", ARGS, enableNodeOrder=True, enablePredicate=True, enablePreemptable=True, enabledVictim=True,
            enableJobOrder=True, enableJobPipelined=True, enableJobStarving=True)]]


def open_session(pods, now=None, nodes=NODES, memory=None, groups=None):
    state = snapshot.ClusterState(nodes=nodes, queues=[queue("c1")], podgroups=groups or [pg("c1/pg1", "c1", 0)],
                                  pods=pods, memory=memory)
    return session.open_session(state, conf.build("allocate", TIERS), now or at(12))


def revocable_pod(key, zone_annotation=None, **kw):
    p = pod(key, "pg1", cpu="1", mem="1Gi", **kw)
    if zone_annotation is not None:
        p["metadata"]["annotations"][tdm.ZONE_LABEL] = zone_annotation
    return p


@pytest.mark.parametrize("p, fits, scores", [
    pytest.param(revocable_pod("c1/p1", "*"), ["n1", "n2", "n3", "n4"], {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
                 id="preemptable-task-rz-available"),
    pytest.param(revocable_pod("c1/p2"), ["n3", "n4"], {"n3": 0, "n4": 0}, id="not-preemptable-task"),
    pytest.param(revocable_pod("c1/p3", "rz1"), ["n3", "n4"], {"n3": 0, "n4": 0}, id="only-star-counts"),
])
def test_upstream_tdm_cases(p, fits, scores):
    ssn = open_session([p])
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values())
    ok, _ = ssn.feasible_nodes(task, copy=True)
    names = [ssn.nodes.names[i] for i in np.flatnonzero(ok)]
    assert names == fits
    rows = np.flatnonzero(ok)
    got = np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=float), rows.shape)
    assert {ssn.nodes.names[r]: float(s) for r, s in zip(rows, got)} == scores


def test_reasons_and_the_next_change_of_a_zone():
    ssn = open_session([revocable_pod("c1/p", "*")])
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values())
    why = {ssn.nodes.names[r]: reason for f in ssn.predicate(task, ssn.nodes) for reason, m in f.reasons
           for r in np.flatnonzero(m)}
    assert why == {"n5": "current time beyond revocable zone rz2:0:00-0:01"}
    assert ssn.recheck_at == at(0) + dt.timedelta(days=1)     # rz2 opens at midnight


def running(key, node_name, preemptable=True, zone="*"):
    p = revocable_pod(key, zone, node=node_name, phase="Running")
    p["metadata"].setdefault("labels", {})["volcano.sh/preemptable"] = "true" if preemptable else "false"
    return p


def test_shuffle_evicts_what_a_closed_zone_still_runs_once_per_period():
    pods = [running("c1/a", "n5"), running("c1/b", "n5"), running("c1/c", "n3"), running("c1/d", "n5", False)]
    group = pg("c1/pg1", "c1", 0)
    group["metadata"]["annotations"] = {tdm.JDB_MAX: "100%"}
    memory = {}
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("c1")], podgroups=[group], pods=pods, memory=memory)
    first = session.run_session(state, conf.build("shuffle", TIERS), at(12))
    assert sorted(first.evictions) == ["c1/a", "c1/b"]      # rz2 is closed; c on an ordinary node; d not preemptable
    again = session.run_session(state, conf.build("shuffle", TIERS), at(12) + dt.timedelta(seconds=30))
    assert again.evictions == []                            # within tdm.evict.period (1m) of the last eviction
    later = session.run_session(state, conf.build("shuffle", TIERS), at(12) + dt.timedelta(minutes=2))
    assert sorted(later.evictions) == ["c1/a", "c1/b"]


@pytest.mark.parametrize("notes, want", [
    pytest.param({}, 1, id="no-budget-one-at-a-time"),
    pytest.param({tdm.JDB_MAX: "2"}, 2, id="max-unavailable"),
    pytest.param({tdm.JDB_MIN: "1"}, 2, id="min-available-keeps-one-of-three"),
    pytest.param({tdm.JDB_MIN: "5"}, 1, id="min-available-above-running-still-one-as-upstream"),
    pytest.param({tdm.JDB_MAX: "50%"}, 2, id="percent-rounds-up"),
])
def test_budgets_cap_victims_per_job(notes, want):
    group = pg("c1/pg1", "c1", 0)
    group["metadata"]["annotations"] = notes
    pods = [running("c1/a", "n5"), running("c1/b", "n5"), running("c1/c", "n5")]
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("c1")], podgroups=[group], pods=pods)
    assert len(session.run_session(state, conf.build("shuffle", TIERS), at(12)).evictions) == want


def test_a_preemptable_preemptor_evicts_nobody_and_others_spare_revocable_nodes():
    preemptor = revocable_pod("c1/p", None)
    preemptor["metadata"]["labels"] = {"volcano.sh/preemptable": "false"}   # (a pod is preemptable by default)
    ssn = open_session([running("c1/on-n3", "n3"), running("c1/on-n1", "n1"), preemptor])
    by_name = {t.name: t for j in ssn.jobs.values() for t in j.tasks.values()}
    candidates = [by_name["on-n3"], by_name["on-n1"]]
    fn = next(fn for fn, _, _ in ssn.hooks.flat(tdm.hooks.Point.PREEMPTABLE))
    assert fn(by_name["p"], candidates) == [by_name["on-n3"]]          # revocable-node pods are not victims
    assert fn(by_name["on-n1"], candidates) == []                       # a preemptable preemptor evicts nobody


# ---- tdm_test.go Test_TDM_victimsFn: rz1 (0:00-0:01) is closed at noon; the victims the budgets allow ----------
def _victims_case_pods():
    """p1..p5 (c1/pg1) on n1 and p6..p10 (c2/pg2) on n2, 1 cpu each, preemptable by annotation except p4, p5."""
    out = []
    for i in range(1, 11):
        ns, group, where = ("c1", "pg1", "n1") if i <= 5 else ("c2", "pg2", "n2")
        p = pod(f"{ns}/p{i}", group, cpu="1", mem="1Gi", node=where, phase="Running")
        p["metadata"]["annotations"]["volcano.sh/preemptable"] = "false" if i in (4, 5) else "true"
        out.append(p)
    return out


def _budget_group(key, notes):
    g = pg(key, key.split("/")[0], 0)
    g["metadata"]["annotations"] = notes
    return g


@pytest.mark.parametrize("groups, window, want", [
    pytest.param({"c1/pg1": {tdm.JDB_MAX: "30%"}}, "0:00-0:01", 2, id="case 0: max-unavailable 30% of 5 rounds up"),
    pytest.param({"c1/pg1": {tdm.JDB_MAX: "30%"}}, "0:00-0:00", 0, id="case 1: a zone open all day evicts nothing"),
    pytest.param({"c1/pg1": {tdm.JDB_MAX: "99%"}}, "0:00-0:01", 3, id="case 2: only the preemptable pods"),
    pytest.param({"c2/pg2": {tdm.JDB_MAX: "50%"}}, "0:00-0:01", 3, id="case 3: max-unavailable 50%"),
    pytest.param({"c2/pg2": {tdm.JDB_MAX: "50%"}, "c1/pg1": {tdm.JDB_MAX: "90%"}}, "0:00-0:01", 6,
                 id="case 4: two jobs, each its own budget"),
    pytest.param({"c2/pg2": {tdm.JDB_MAX: "3"}}, "0:00-0:01", 3, id="case 5: max-unavailable 3"),
    pytest.param({"c2/pg2": {tdm.JDB_MIN: "3"}}, "0:00-0:01", 2, id="case 6: min-available 3 of 5"),
    pytest.param({"c2/pg2": {tdm.JDB_MIN: "30%"}}, "0:00-0:01", 3, id="case 7: min-available 30% rounds up"),
    pytest.param({"c2/pg2": {tdm.JDB_MIN: "2"}, "c1/pg1": {tdm.JDB_MAX: "3"}}, "0:00-0:01", 6,
                 id="case 8: min-available and max-unavailable side by side"),
])
def test_upstream_victims_fn(groups, window, want):
    """Upstream calls VictimTasks once the eviction period has passed; here shuffle, in the first session, evicts
    what it returns. Only the PodGroups listed exist, so the other namespace's pods are in no job."""
    wanted = set(groups)
    pods = [p for p in _victims_case_pods()
            if f"{p['metadata']['namespace']}/{p['metadata']['annotations']['scheduling.k8s.io/group-name']}"
            in wanted]
    state = snapshot.ClusterState(nodes=[zone_node("n1", "rz1"), zone_node("n2", "rz1")],
                                  queues=[queue("c1"), queue("c2")],
                                  podgroups=[_budget_group(k, v) for k, v in groups.items()], pods=pods)
    tiers = [[P("tdm", {"tdm.revocable-zone.rz1": window, "tdm.evict.period": "1s"}, enabledVictim=True)]]
    evicted = session.run_session(state, conf.build("shuffle", tiers), at(12)).evictions
    assert len(evicted) == want, evicted
    assert not {"c1/p4", "c1/p5"} & set(evicted)
