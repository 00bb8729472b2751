"""gangpreempt's and gangreclaim's victim cache (actions/gangevict.py VictimCache) changes no decision:
on random clusters — full nodes of running gangs of several queues, priorities and minMembers, several
starving gangs, sometimes a HyperNode tree and starving gangs with a hard networkTopology — a session
with the cache decides exactly what one that rebuilds every gang's bundles decides (binds, evictions in
order, pipelined PodGroups, PodGroup statuses)."""
from __future__ import annotations

import contextlib
import datetime as dt
import pathlib

from hypothesis import given, settings
from hypothesis import strategies as st

from vclite.api import batch
from vclite.scheduler import conf
from vclite.scheduler.actions import gangevict
from vclite.scheduler.framework import session, snapshot

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
CLASSES = [{"metadata": {"name": n}, "value": v} for n, v in (("low", 10), ("mid", 100), ("high", 1000))]
GANGEVICT_CONF = (pathlib.Path(__file__).parents[1] / "scenarios/states/conf/gangevict.conf").read_text()
# the same actions over Volcano's default tiers (proportion instead of capacity, no network-topology-aware)
DEFAULT_TIERS_CONF = conf.DEFAULT_CONF_YAML.replace('actions: "enqueue, allocate, backfill"',
                                                    'actions: "gangreclaim, gangpreempt"')


def _pod(name, group, cpu, node=None, priority=None, preemptable=None):
    md = {"name": name, "namespace": "ns", "uid": name, "annotations": {batch.GROUP_NAME: group}}
    if preemptable is not None:
        md["annotations"][batch.PREEMPTABLE] = "true" if preemptable else "false"
    spec = {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": {
        "cpu": str(cpu), "memory": f"{cpu}Gi"}}}]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": md, "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


@st.composite
def clusters(draw):
    n_nodes = draw(st.integers(2, 8))
    size = draw(st.integers(2, 4))   # cpu (and Gi) per node
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {
        "cpu": str(size), "memory": f"{size}Gi", "pods": "20"}}} for i in range(n_nodes)]
    queues = []
    for i in range(draw(st.integers(1, 3))):
        spec = {"weight": 1, "deserved": {"cpu": str(draw(st.integers(0, n_nodes * size))),
                                          "memory": f"{n_nodes * size}Gi"}}
        if draw(st.booleans()):
            spec["reclaimable"] = draw(st.booleans())
        queues.append({"metadata": {"name": f"q{i}"}, "spec": spec, "status": {"state": "Open"}})
    q_names = [q["metadata"]["name"] for q in queues]
    hypernodes = []
    if draw(st.booleans()):   # racks of two nodes (tier 1) under one spine (tier 2)
        racks = [f"r{i}" for i in range(0, n_nodes, 2)]
        hypernodes = [{"metadata": {"name": r}, "spec": {"tier": 1, "members": [
            {"type": "Node", "selector": {"exactMatch": {"name": f"n{k}"}}}
            for k in range(i * 2, min(i * 2 + 2, n_nodes))]}} for i, r in enumerate(racks)]
        hypernodes.append({"metadata": {"name": "spine"}, "spec": {"tier": 2, "members": [
            {"type": "HyperNode", "selector": {"exactMatch": {"name": r}}} for r in racks]}})
    pgs, pods = [], []
    free = {f"n{i}": size for i in range(n_nodes)}
    j = 0
    while any(free.values()) and j < 3 * n_nodes:   # running gangs until the nodes are full
        group, n_tasks = f"run{j}", draw(st.integers(1, 4))
        cpu = draw(st.integers(1, 2))
        placed = []
        for t in range(n_tasks):
            node = next((n for n, f in free.items() if f >= cpu), None)
            if node is None:
                break
            free[node] -= cpu
            placed.append(_pod(f"{group}-{t}", group, cpu, node, draw(st.sampled_from([None, 1, 5])),
                               draw(st.sampled_from([None, None, True, False]))))
        if not placed:
            break
        pgs.append({"metadata": {"name": group, "namespace": "ns", "annotations": {} if draw(st.integers(0, 5))
                                 else {batch.PREEMPTABLE: "false"}},
                    "spec": {"queue": draw(st.sampled_from(q_names)), "minMember": draw(st.integers(1, len(placed))),
                             "priorityClassName": draw(st.sampled_from(["low", "low", "mid"]))},
                    "status": {"phase": "Running"}})
        pods += placed
        j += 1
    for k in range(draw(st.integers(1, 5))):   # starving gangs
        group, n_tasks = f"starve{k}", draw(st.integers(1, 4))
        spec = {"queue": draw(st.sampled_from(q_names)), "minMember": draw(st.integers(1, n_tasks)),
                "priorityClassName": draw(st.sampled_from(["mid", "high", "high"]))}
        if hypernodes and draw(st.booleans()):
            spec["networkTopology"] = {"mode": "hard", "highestTierAllowed": draw(st.integers(1, 2))}
        pgs.append({"metadata": {"name": group, "namespace": "ns"}, "spec": spec, "status": {"phase": "Inqueue"}})
        pods += [_pod(f"{group}-{t}", group, draw(st.integers(1, 2))) for t in range(n_tasks)]
    return snapshot.ClusterState(nodes, queues, pgs, pods, CLASSES, hypernodes=hypernodes)


@contextlib.contextmanager
def victim_cache(on: bool):
    was = gangevict.GangEviction.cache_victims
    gangevict.GangEviction.cache_victims = on
    try:
        yield
    finally:
        gangevict.GangEviction.cache_victims = was


@settings(max_examples=80, deadline=None)
@given(clusters(), st.sampled_from([GANGEVICT_CONF, DEFAULT_TIERS_CONF]))
def test_the_victim_cache_changes_no_decision(state, conf_text):
    c = conf.parse(conf_text)
    with victim_cache(False):
        rebuilt = session.run_session(state, c, NOW)
    with victim_cache(True):
        cached = session.run_session(state, c, NOW)
    assert cached == rebuilt
