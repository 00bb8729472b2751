"""The HyperNode a network-topology job was placed in, kept across sessions (actions/allocated.py), as
Volcano's scheduler cache keeps JobInfo.AllocatedHyperNode and each SubJob's: set to the HyperNode
allocate chose when the job's statement commits, checked and recovered from the pods' nodes when a
session first looks at the job, and read back by the next sessions' gradients and node scores.

The cluster is test_scheduler_topology's: racks s0 (s0-n1, s0-n2) and s1 (s1-n3, s1-n4) of 2 cpu
nodes under the spine s2 (tier 2). The job asks for 6 cpu of minResources, which no rack holds, so
allocate chooses the spine, while its two 1-cpu pods land on one node of s0."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from vclite.scheduler import conf
from vclite.scheduler.actions import allocated
from vclite.scheduler.framework import session, snapshot

from .test_scheduler_scenarios import NOW, P, pg, pod, queue
from .test_scheduler_topology import NODES, TREE

TIERS = [[P("gang", enableJobReady=True, enableJobPipelined=True, enableJobOrder=True),
          P("predicates", enablePredicate=True),
          P("network-topology-aware", enabledHyperNodeOrder=True, enableNodeOrder=True)]]
SPINE2 = {"mode": "hard", "highestTierAllowed": 2}


def group(uid="pg-uid-1", nt=SPINE2):
    g = pg("c1/j", "q1", 2, min_resources={"cpu": "6"})
    g["metadata"]["uid"] = uid
    g["spec"]["networkTopology"] = nt
    return g


def first_session(memory):
    pods = [pod(f"c1/j-{i}", "j", cpu="1", mem="1Gi") for i in range(2)]
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("q1")], podgroups=[group()], pods=pods,
                                  hypernodes=TREE, memory=memory)
    return session.run_session(state, conf.build("allocate", TIERS), NOW)


def test_the_chosen_hypernode_is_kept_when_the_job_commits():
    memory: dict = {}
    result = first_session(memory)
    assert set(result.binds.values()) <= {"s0-n1", "s0-n2"}, result.binds
    kept = memory[allocated.KEY]["c1/j"]
    assert (kept.podgroup, kept.job, kept.parts) == ("pg-uid-1", "s2", {"": "s2"})


def _second_session(memory, placed=True, uid="pg-uid-1", tree=TREE):
    """j-0 and j-1 where the first session put them (Running), j-2 new: the scores of its nodes."""
    binds = _FIRST.binds
    pods = [pod(f"c1/j-{i}", "j", cpu="1", mem="1Gi", node=binds[f"c1/j-{i}"] if placed else None,
                phase="Running" if placed else "Pending") for i in range(2)]
    pods.append(pod("c1/j-2", "j", cpu="1", mem="1Gi"))
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("q1")], podgroups=[group(uid)], pods=pods,
                                  hypernodes=tree, memory={} if memory is None else memory)
    ssn = session.open_session(state, conf.build("allocate", TIERS), NOW)
    task = next(t for t in ssn.jobs["c1/j"].tasks.values() if t.name == "j-2")
    rows = np.arange(len(ssn.nodes))
    got = np.broadcast_to(np.asarray(ssn.node_order(task, rows), dtype=float), (len(rows),))
    return {ssn.nodes.names[r]: round(float(got[r]), 1) for r in rows}


_FIRST_MEMORY: dict = {}
_FIRST = first_session(_FIRST_MEMORY)


def scores(s0, s1):
    return {"s0-n1": s0, "s0-n2": s0, "s1-n3": s1, "s1-n4": s1}


# Node scores (× 100): tiers 1 (racks), 2 (spine), 3 (the virtual top). A node whose rack is the job's
# allocated HyperNode scores 1; else (3 − tier of their LCA) / (3 − 1); the best nodes add the share of
# the job's 3 tasks on their rack (2/3 on s0).
@pytest.mark.parametrize("memory, kw, want", [
    pytest.param(lambda: copy.deepcopy(_FIRST_MEMORY), {}, scores(116.7, 50.0),
                 id="kept spine: every node of it ties at tier 2, s0 ahead by its share only"),
    pytest.param(lambda: None, {}, scores(166.7, 50.0),
                 id="nothing kept (a restart, a dry run): recovered from the pods, rack s0"),
    pytest.param(lambda: copy.deepcopy(_FIRST_MEMORY), {"uid": "pg-uid-2"}, scores(166.7, 50.0),
                 id="another PodGroup of the same name: its entry is not this one's"),
    pytest.param(lambda: copy.deepcopy(_FIRST_MEMORY), {"tree": TREE[:2]}, scores(166.7, 0.0),
                 id="the kept HyperNode is gone: recovered"),
    pytest.param(lambda: copy.deepcopy(_FIRST_MEMORY), {"placed": False}, scores(0.0, 0.0),
                 id="no pod of the job is allocated any more: forgotten"),
])
def test_later_sessions_read_it_back(memory, kw, want):
    assert _second_session(memory(), **kw) == want


def test_a_partition_keeps_the_hypernode_chosen_for_it():
    """A partition with its own networkTopology (subGroupPolicy) keeps the rack chosen for it; the job,
    limited by its partitions only, keeps the virtual top HyperNode it was searched in (as upstream)."""
    g = pg("c1/pg1", "q1", 2)
    g["metadata"]["uid"] = "pg-uid-9"
    g["spec"]["subGroupPolicy"] = [{"name": "workers", "matchLabelKeys": ["volcano.sh/task-spec"],
                                    "subGroupSize": 2, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}]
    pods = [pod(f"c1/w-{i}", "pg1", cpu="2", mem="1Gi") for i in range(2)]
    for p in pods:
        p["metadata"]["labels"] = {"volcano.sh/task-spec": "worker"}
    memory: dict = {}
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("q1")], podgroups=[g], pods=pods, hypernodes=TREE,
                                  memory=memory)
    result = session.run_session(state, conf.build("allocate", TIERS), NOW)
    assert set(result.binds.values()) == {"s0-n1", "s0-n2"}
    kept = memory[allocated.KEY]["c1/pg1"]
    assert (kept.job, kept.parts) == (allocated.TOP, {"workers/worker": "s0"})


def test_a_gone_job_is_forgotten_at_the_next_allocate_even_with_no_topology_job_left():
    memory = copy.deepcopy(_FIRST_MEMORY)
    assert "c1/j" in memory[allocated.KEY]
    other = pg("c1/plain", "q1", 1)   # no networkTopology: nothing looks the kept entries up
    state = snapshot.ClusterState(nodes=NODES, queues=[queue("q1")], podgroups=[other],
                                  pods=[pod("c1/plain-0", "plain", cpu="1", mem="1Gi")], hypernodes=TREE, memory=memory)
    result = session.run_session(state, conf.build("allocate", TIERS), NOW)
    assert result.binds, result
    assert memory[allocated.KEY] == {}
