"""Scheduler properties over random clusters (Hypothesis):
- no node is over-committed after a session's binds are applied;
- a gang is placed whole (≥ minMember ready) or not at all;
- a discarded statement leaves node arrays and plugin accounting exactly as they were;
- a session is reproducible: the same objects in any order give the same result."""
from __future__ import annotations

import datetime as dt
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.api import resources
from vclite.scheduler import conf
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import proportion

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
CONF = conf.parse(conf.DEFAULT_CONF_YAML.replace('"enqueue, allocate, backfill"', '"enqueue, allocate"'))


def _pod(name, group, cpu_m, mem_mi, node=None, phase="Pending", deleting=False):
    md = {"name": name, "namespace": "ns", "uid": name, "annotations": {"scheduling.k8s.io/group-name": group}}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"schedulerName": "volcano",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": md, "spec": spec, "status": {"phase": phase}}


@st.composite
def clusters(draw):
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        nodes.append({"metadata": {"name": f"n{i}"}, "status": {"allocatable": {
            "cpu": str(draw(st.integers(1, 8))), "memory": f"{draw(st.integers(1, 16))}Gi",
            "pods": str(draw(st.integers(1, 8)))}}})
    queues = [{"metadata": {"name": f"q{i}"}, "spec": {"weight": draw(st.integers(1, 3))}, "status": {"state": "Open"}}
              for i in range(draw(st.integers(1, 3)))]
    free = {n["metadata"]["name"]: [int(n["status"]["allocatable"]["cpu"]) * 1000,
                                    int(n["status"]["allocatable"]["memory"][:-2]) * 1024,
                                    int(n["status"]["allocatable"]["pods"])] for n in nodes}
    pgs, pods = [], []
    for j in range(draw(st.integers(1, 5))):
        group = f"g{j}"
        n_tasks = draw(st.integers(1, 5))
        running = draw(st.booleans())
        min_member = draw(st.integers(0, n_tasks))
        min_res = None
        if draw(st.booleans()):
            min_res = {"cpu": f"{draw(st.integers(0, 4000))}m"}
        pgs.append({"metadata": {"name": group, "namespace": "ns"},
                    "spec": {"queue": draw(st.sampled_from(queues))["metadata"]["name"], "minMember": min_member,
                             **({"minResources": min_res} if min_res else {})},
                    "status": {"phase": "Running" if running else draw(st.sampled_from(["Pending", "Inqueue"]))}})
        for t in range(n_tasks):
            cpu, mem = draw(st.integers(100, 4000)), draw(st.integers(64, 8192))
            node = None
            if running and draw(st.booleans()):   # an already-placed pod, only where it fits
                for name, f in free.items():
                    if f[0] >= cpu and f[1] >= mem and f[2] >= 1:
                        f[0], f[1], f[2], node = f[0] - cpu, f[1] - mem, f[2] - 1, name
                        break
            pods.append(_pod(f"{group}-{t}", group, cpu, mem, node=node, phase="Running" if node else "Pending",
                             deleting=bool(node) and draw(st.booleans())))
    return snapshot.ClusterState(nodes, queues, pgs, pods)


def _apply_binds(state, binds):
    for p in state.pods:
        key = f"ns/{p['metadata']['name']}"
        if key in binds:
            p["spec"]["nodeName"] = binds[key]


@settings(max_examples=150, deadline=None)
@given(clusters())
def test_no_node_is_overcommitted(state):
    result = session.run_session(state, CONF, NOW)
    _apply_binds(state, result.binds)
    for n in state.nodes:
        alloc = resources.from_resource_list(n["status"]["allocatable"])
        used: dict = {}
        for p in state.pods:
            if p["spec"].get("nodeName") == n["metadata"]["name"]:
                used = resources.add(used, resources.pod_requests(p))
        assert resources.less_equal(used, alloc), (n["metadata"]["name"], used, alloc)


@settings(max_examples=150, deadline=None)
@given(clusters())
def test_gang_is_placed_whole_or_not_at_all(state):
    result = session.run_session(state, CONF, NOW)
    for pg in state.podgroups:
        group = pg["metadata"]["name"]
        mine = [p for p in state.pods if p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == group]
        new = sum(1 for p in mine if f"ns/{p['metadata']['name']}" in result.binds)
        placed_before = sum(1 for p in mine if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp"))
        if new:
            assert new + placed_before >= pg["spec"]["minMember"], (group, new, placed_before)


@settings(max_examples=150, deadline=None)
@given(clusters(), st.randoms(use_true_random=False))
def test_discarded_statement_restores_node_arrays(state, rnd):
    ssn = session.open_session(state, CONF, NOW)
    prop = next(p for p in ssn.plugins if isinstance(p, proportion.Proportion))
    before = (ssn.nodes.copy_arrays(), {k: a.allocated.copy() for k, a in prop.attrs.items()},
              {t.uid: (t.status, t.node) for j in ssn.jobs.values() for t in j.tasks.values()})
    stmt = ssn.statement()
    tasks = [t for j in ssn.jobs.values() for t in j.tasks.values()]
    rnd.shuffle(tasks)
    for t in tasks:
        if t.status == tasks_mod.TaskStatus.PENDING and len(ssn.nodes):
            row = rnd.randrange(len(ssn.nodes))
            (stmt.allocate if rnd.random() < 0.5 else stmt.pipeline)(t, row)
        elif t.status == tasks_mod.TaskStatus.RUNNING and t.node in ssn.nodes.index:
            stmt.evict(t)
    stmt.discard()
    arrays, allocated, statuses = before
    for name, arr in ssn.nodes.copy_arrays().items():
        assert np.array_equal(arr, arrays[name]), name
    for k, a in prop.attrs.items():
        assert np.array_equal(a.allocated, allocated[k]), k
    assert {t.uid: (t.status, t.node) for j in ssn.jobs.values() for t in j.tasks.values()} == statuses


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 2**32 - 1))
def test_session_is_reproducible_whatever_the_input_order(state, seed):
    first = session.run_session(state, CONF, NOW)
    rnd = random.Random(seed)
    shuffled = snapshot.ClusterState(*(rnd.sample(lst, len(lst)) for lst in
                                       (state.nodes, state.queues, state.podgroups, state.pods, state.priority_classes)))
    second = session.run_session(shuffled, CONF, NOW)
    assert first == second
