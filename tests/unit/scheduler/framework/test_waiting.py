"""Waiting PodGroups read lazily by class (framework/waiting.py): enqueue admits exactly the jobs it
admits when every PodGroup is a JobInfo, and a class with no room costs one try."""
from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.scheduler import conf as conf_mod
from vclite.scheduler import registry
from vclite.scheduler.framework import plugin, session, snapshot, waiting

from .. import objects

REJECTED = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
             "message": "queue resource quota insufficient"}]


def _pg(key, created, **kw):
    obj = objects.pg(key, **kw)
    obj["metadata"]["creationTimestamp"] = created
    return obj


# Plugins that neither vote at enqueue nor order jobs, added to Volcano's default tiers.
NON_VOTING = [{"name": "network-topology-aware"}, {"name": "nodegroup", "arguments": {"strict": False}},
              {"name": "cdp"}]


def _conf(actions="enqueue, allocate", extra=()):
    c = objects.default_conf(actions)
    if not extra:
        return c
    tiers = yaml.safe_load(conf_mod.DEFAULT_CONF_YAML)["tiers"]
    tiers[-1]["plugins"] += list(extra)
    return conf_mod.parse({"actions": actions, "tiers": tiers})


def _run(state, lazy, monkeypatch, actions="enqueue, allocate", extra=()):
    with monkeypatch.context() as m:
        if not lazy:
            m.setattr(waiting, "enabled", lambda conf: False)
        return session.run_session(state, _conf(actions, extra), objects.NOW, binding_scheduled=True)


def _phases(state, result):
    """Every PodGroup's phase after the session (its stored one when the session wrote none)."""
    out = {}
    for pg in state.podgroups:
        key = f'{pg["metadata"]["namespace"]}/{pg["metadata"]["name"]}'
        out[key] = (result.podgroup_status.get(key) or pg.get("status") or {}).get("phase")
    return out


def test_equal_waiting_jobs_are_one_class_taken_in_creation_order(monkeypatch):
    # 2 cpu x 1.2 overcommit: room for two 1-cpu jobs; five equal jobs waited before
    pgs = [_pg(f"ns/j{i}", f"2026-01-01T00:00:0{9 - i}Z", phase="Pending", min_resources={"cpu": "1"},
               conditions=REJECTED) for i in range(5)]
    state = objects.state(nodes=[objects.node("n1", cpu="2")], podgroups=pgs)
    snap = snapshot.build(state, lazy_waiting=True)
    assert snap.jobs == {}
    (classes,) = snap.waiting.values()
    assert [len(c) for c in classes] == [5]
    assert [key for _, key, _ in classes[0].members] == ["ns/j4", "ns/j3", "ns/j2", "ns/j1", "ns/j0"]   # oldest first

    ssn = session.open_session(state, objects.default_conf("enqueue"), objects.NOW)
    session.run_actions(ssn)
    # the two oldest are admitted; the third is tried and rejected; the other two are never made
    assert {uid: str(j.phase) for uid, j in ssn.jobs.items()} == {
        "ns/j4": "Inqueue", "ns/j3": "Inqueue", "ns/j2": "Pending"}
    result = session.close_session(ssn)
    assert sorted(k for k, s in result.podgroup_status.items() if s["phase"] == "Inqueue") == ["ns/j3", "ns/j4"]
    assert _phases(state, result) == _phases(state, _run(state, False, monkeypatch, "enqueue"))


@pytest.mark.parametrize("case, pg_kw, lazy", [
    ("rejected before, no pods", dict(phase="Pending", conditions=REJECTED), True),
    ("never tried (no condition)", dict(phase="Pending"), False),
    ("admitted", dict(phase="Inqueue", conditions=REJECTED), False),
    ("condition not true", dict(phase="Pending", conditions=[{**REJECTED[0], "status": "False"}]), False),
])
def test_which_podgroups_wait_lazily(case, pg_kw, lazy):
    state = objects.state(nodes=[objects.node("n1")], podgroups=[_pg("ns/a", "2026-01-01T00:00:00Z", **pg_kw)])
    snap = snapshot.build(state, lazy_waiting=True)
    assert (snap.jobs == {}) is lazy, case
    assert bool(snap.waiting) is lazy, case


@pytest.mark.parametrize("kept_by_caller", [False, True], ids=["pool made by build", "pool kept by the shell"])
def test_a_waiting_podgroup_with_a_pod_is_a_job(kept_by_caller):
    pgs = [_pg(f"ns/{n}", "2026-01-01T00:00:00Z", phase="Pending", conditions=REJECTED) for n in ("a", "b")]
    state = objects.state(nodes=[objects.node("n1")], podgroups=pgs, pods=[objects.pod("ns/a-0", "a")])
    if kept_by_caller:
        state.waiting, state.podgroups = waiting.Pool.of(pgs)
        assert state.podgroups == []
    snap = snapshot.build(state, lazy_waiting=True)
    assert list(snap.jobs) == ["ns/a"] and list(snap.jobs["ns/a"].tasks) == ["ns/a-0"]
    (classes,) = snap.waiting.values()
    assert [len(c) for c in classes] == [1] and classes[0].take().uid == "ns/b" and classes[0].take() is None


def test_a_pool_given_to_a_session_that_cannot_use_it_is_read_eagerly():
    pgs = [_pg("ns/a", "2026-01-01T00:00:00Z", phase="Pending", conditions=REJECTED)]
    pool, others = waiting.Pool.of(pgs)
    snap = snapshot.build(snapshot.ClusterState(nodes=[objects.node("n1")], queues=[objects.queue("default")],
                                                podgroups=others, waiting=pool))
    assert list(snap.jobs) == ["ns/a"] and snap.waiting == {}


@pytest.mark.parametrize("steps, want", [
    ([("a", 3, True), ("b", 1, True), ("c", 2, True)], ["b", "c", "a"]),    # sorted by creation
    ([("a", 1, True), ("a", 2, False)], []),                                # admitted: leaves the pool
    ([("a", 1, True), ("b", 2, True), ("a", None, None)], ["b"]),           # deleted
    ([("a", 1, True), ("b", 2, True), ("a", 3, True)], ["b", "a"]),         # a new version re-sorted
])
def test_pool_updates(steps, want):
    pool = waiting.Pool()
    for name, second, rejected in steps:
        pg = None
        if second is not None:
            pg = _pg(f"ns/{name}", f"2026-01-01T00:00:0{second}Z", phase="Pending" if rejected else "Inqueue",
                     conditions=REJECTED)
        pool.update(f"ns/{name}", pg)
    assert [key.split("/")[1] for _, members in pool.classes() for _, key, _ in members] == want
    assert len(pool) == len(want)


def test_a_queue_whose_jobs_all_wait_still_takes_part_in_proportion():
    # q2 guarantees 3 of the 4 cpus; its jobs wait, so q1 deserves 1 cpu, not 4
    state = objects.state(
        nodes=[objects.node("n1", cpu="4")],
        queues=[objects.queue("default"), objects.queue("q1"), objects.queue("q2", guarantee={"cpu": "3"})],
        podgroups=[_pg("ns/w", "2026-01-01T00:00:00Z", q="q2", phase="Pending", min_resources={"cpu": "9"},
                       conditions=REJECTED),
                   _pg("ns/r", "2026-01-01T00:00:00Z", q="q1", phase="Running")],
        pods=[objects.pod("ns/r-0", "r", cpu="2", node="n1", phase="Running")])
    ssn = session.open_session(state, objects.default_conf(), objects.NOW)
    assert "ns/w" not in ssn.jobs
    proportion = next(p for p in ssn.plugins if p.name == "proportion")
    assert set(proportion.attrs) == {"q1", "q2"}
    assert proportion.attrs["q1"].deserved[ssn.dims.index["cpu"]] == pytest.approx(1000)


@pytest.mark.parametrize("actions, extra_plugin, want", [
    ("enqueue, allocate", None, True),
    ("allocate, backfill", None, False),            # without enqueue, allocate takes Pending jobs
    ("enqueue, allocate", "custom", False),         # a plugin not known to vote by class
    ("enqueue, allocate", "network-topology-aware", True),   # no JobEnqueueable, no JobOrder
    ("enqueue, allocate", "nodegroup", True),
    ("enqueue, allocate", "cdp", True),
    ("enqueue, allocate", "pdb", True),             # victims only
    ("enqueue, allocate", "resourcequota", True),   # votes by (namespace, minResources), its pending only grows
    ("enqueue, allocate", "sla", False),            # orders and admits by each job's deadline
])
def test_enabled(actions, extra_plugin, want):
    tiers = [[conf_mod.plugin("priority"), conf_mod.plugin("gang")], [conf_mod.plugin("proportion")]]
    if extra_plugin and extra_plugin != "custom":
        c = conf_mod.build(actions, [*tiers, [conf_mod.plugin(extra_plugin)]])
    elif extra_plugin:
        class Custom:
            name = "custom"
            Arguments = plugin.NoArguments
        reg = registry.default_registry().with_plugins(Custom)
        c = conf_mod.build(actions, [*tiers, [conf_mod.plugin("custom")]], registry=reg)
    else:
        c = conf_mod.build(actions, tiers)
    assert waiting.enabled(c) is want


# ---- property: lazy and eager sessions admit and bind the same jobs --------------------------------
_TIMES = [f"2026-01-01T00:00:0{i}Z" for i in range(3)]   # few distinct times: ties on creation


@st.composite
def _cluster(draw):
    nodes = [objects.node(f"n{i}", cpu=str(draw(st.integers(1, 6)))) for i in range(draw(st.integers(1, 2)))]
    queues = [objects.queue("default"),
              objects.queue("q1", weight=draw(st.integers(1, 3)),
                            capability=draw(st.sampled_from([None, {"cpu": "2"}, {"cpu": "5"}])),
                            state=draw(st.sampled_from(["Open", "Open", "Closed"]))),
              objects.queue("q2", guarantee=draw(st.sampled_from([None, {"cpu": "1"}])))]
    pgs, pods = [], []
    for i in range(draw(st.integers(0, 18))):
        key = f"ns/j{i}"
        kind = draw(st.sampled_from(["waiting", "waiting", "fresh", "running"]))
        kw = dict(q=draw(st.sampled_from(["default", "q1", "q2"])),
                  min_resources=draw(st.sampled_from([None, {"cpu": "1"}, {"cpu": "1"}, {"cpu": "2"}, {"cpu": "500m"}])),
                  priority_class=draw(st.sampled_from([None, None, "high"])),
                  min_member=draw(st.sampled_from([1, 1, 2])))
        created = draw(st.sampled_from(_TIMES))
        if kind == "waiting":
            pgs.append(_pg(key, created, phase="Pending", conditions=REJECTED, **kw))
        elif kind == "fresh":
            pgs.append(_pg(key, created, phase="Pending", **kw))
        else:
            pgs.append(_pg(key, created, phase="Running", **kw))
            node = nodes[draw(st.integers(0, len(nodes) - 1))]["metadata"]["name"]
            pods.append(objects.pod(f"ns/j{i}-0", f"j{i}", cpu=draw(st.sampled_from(["1", "2"])), node=node,
                                    phase="Running"))
    classes = [{"metadata": {"name": "high"}, "value": 100}]
    quotas = [{"metadata": {"name": "q", "namespace": "ns"},   # (read by resourcequota, when configured)
               "status": {"hard": {"cpu": draw(st.sampled_from(["1", "2", "4"]))},
                          "used": {"cpu": draw(st.sampled_from(["0", "1"]))}}}]
    return snapshot.ClusterState(nodes, queues, pgs, pods, classes, resource_quotas=quotas)


@settings(max_examples=150, deadline=None)
@given(state=_cluster(), extra=st.sampled_from([(), NON_VOTING, [{"name": "resourcequota"}]]))
def test_lazy_and_eager_sessions_decide_the_same(state, extra):
    import _pytest.monkeypatch
    mp = _pytest.monkeypatch.MonkeyPatch()
    try:
        lazy, eager = _run(state, True, mp, extra=extra), _run(state, False, mp, extra=extra)
    finally:
        mp.undo()
    assert _phases(state, lazy) == _phases(state, eager)
    assert lazy.binds == eager.binds
    assert lazy.queue_status == eager.queue_status



def test_the_names_a_configuration_is_asked_about_are_its_own():
    """A configuration's action and plugin names are computed once (sessions ask for them every time):
    a configuration made from it with other tiers has its own."""
    import dataclasses
    c = conf_mod.build("enqueue, allocate", [[conf_mod.plugin("priority"), conf_mod.plugin("gang")],
                                             [conf_mod.plugin("proportion")]])
    assert c.action_names == ("enqueue", "allocate") and c.plugin_names == {"priority", "gang", "proportion"}
    assert waiting.enabled(c)
    other = dataclasses.replace(c, tiers=(*c.tiers, conf_mod.build("allocate", [[conf_mod.plugin("sla")]]).tiers[0]))
    assert other.plugin_names == {"priority", "gang", "proportion", "sla"} and not waiting.enabled(other)
    assert c.plugin_names == {"priority", "gang", "proportion"} and waiting.enabled(c)
