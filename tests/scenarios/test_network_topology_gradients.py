"""The HyperNode gradients (the candidate HyperNodes of a job or partition, tier by tier), row by row as
Volcano's network-topology-aware unit tests give them: TestHyperNodeGradientPreFiltering,
TestHyperNodeGradientForSubJobFn_NoSubJobPolicyRespectsHardTopology and TestReverseAndCapEvictionGradients.
vclite keeps the search in actions/topology.py (`gradients`) and the eviction order in actions/gangplan.py
(`widest_first`); gangevict.domains and gangplan's partition search call them as upstream's eviction does."""
import fractions

import pytest

from vclite.scheduler import conf
from vclite.scheduler.actions import gangevict, gangplan, topology
from vclite.scheduler.framework import hypernodes, session, snapshot

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue
from .test_scheduler_topology import hn

# ---- TestHyperNodeGradientPreFiltering ------------------------------------------------------------------------
# Upstream: 100 tier-1 HyperNodes of ten 4-cpu / 8Gi nodes under one tier-2 HyperNode, and hn-1-0's idle and
# future idle set by hand. Here three tier-1 HyperNodes (the other two only make the tree alike), and hn-1-0's
# idle and future idle made by pods: `running` cpus running, `releasing` cpus being deleted (not idle, but
# future idle), `pipelined` cpus pipelined this session (future idle no more); 2Gi of memory per cpu, as
# upstream's rows (memory in Gi = 2 × cpu).
PER_HN = 10
TOP = hypernodes.TOP
TIER1 = [f"hn-1-{i}" for i in range(3)]
TREE = [hn(h, 1, *(f"node-{i * PER_HN + j:02d}" for j in range(PER_HN))) for i, h in enumerate(TIER1)] + \
       [hn("hn-2-0", 2, *TIER1, kind="HyperNode")]


def prefilter_session(running, releasing, pipelined):
    nodes_ = [node(f"node-{i:02d}", 4, "8Gi") for i in range(PER_HN * len(TIER1))]
    slots = (f"node-{i // 4:02d}" for i in range(4 * PER_HN))   # hn-1-0's cpus, node by node
    pods = [pod(f"c1/run-{i}", "other", cpu="1", mem="2Gi", node=next(slots), phase="Running")
            for i in range(running)]
    pods += [pod(f"c1/rel-{i}", "other", cpu="1", mem="2Gi", node=next(slots), phase="Running", deleting=True)
             for i in range(releasing)]
    pods += [pod(f"c1/pipe-{i}", "pipe", cpu="1", mem="2Gi") for i in range(pipelined)]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], hypernodes=TREE, pods=pods,
                                  podgroups=[pg("c1/job", "q1", 1), pg("c1/other", "q1", 1), pg("c1/pipe", "q1", 1)])
    tiers = [[P("network-topology-aware", enabledHyperNodeOrder=True)]]
    ssn = session.open_session(state, conf.build("allocate", tiers), NOW)
    stmt = ssn.statement()
    for task in sorted(ssn.jobs["c1/pipe"].tasks.values(), key=lambda t: t.key):
        stmt.pipeline(task, ssn.nodes.index[next(slots)])
    return ssn


def gib_pair(cpu):
    return {"cpu": fractions.Fraction(cpu), "memory": fractions.Fraction(2 * cpu * 2 ** 30)}


PREFILTER_ROWS = [
    # (name, highest tier, evict, min cpu, idle cpu, future idle cpu, hn-1-0 selected)
    ("job-idle-sufficient-future-idle-sufficient", 2, False, 20, 30, 35, True),
    ("job-idle-sufficient-future-idle-insufficient", 2, False, 20, 30, 15, True),
    ("job-idle-insufficient-future-idle-sufficient", 2, False, 20, 15, 30, True),
    ("job-idle-insufficient-future-idle-insufficient", 2, False, 20, 15, 15, False),
    ("subjob-idle-sufficient-future-idle-sufficient", 1, False, 10, 20, 25, True),
    ("subjob-idle-sufficient-future-idle-insufficient", 1, False, 10, 20, 5, True),
    ("subjob-idle-insufficient-future-idle-sufficient", 1, False, 10, 5, 20, True),
    ("subjob-idle-insufficient-future-idle-insufficient", 1, False, 10, 5, 5, False),
    ("evict-idle-insufficient-future-idle-insufficient", 2, True, 20, 15, 15, True),
    ("evict-allocatable-insufficient", 2, True, 50, 15, 15, False),
]


@pytest.mark.parametrize("tier, evict, need, idle, future, selected",
                         [pytest.param(*row[1:], id=row[0]) for row in PREFILTER_ROWS])
def test_volcano_hypernode_gradient_pre_filtering(tier, evict, need, idle, future, selected):
    """A HyperNode is a candidate when idle or future idle holds the minimum (allocation), when its
    allocatable does (eviction); the gradient runs from the lowest tier."""
    releasing = max(future - idle, 0)
    running = 4 * PER_HN - idle - releasing
    ssn = prefilter_session(running, releasing, max(idle - future, 0))
    rows = ssn.topology.leaves["hn-1-0"]
    assert (ssn.nodes.idle[rows][:, 0].sum(), ssn.nodes.future_idle()[rows][:, 0].sum()) == (idle * 1000,
                                                                                            future * 1000)
    grads = topology.gradients(ssn, ssn.jobs["c1/job"], tier, "", within="hn-2-0",
                               need=ssn.dims.vector(gib_pair(need)), evict=evict)
    assert ("hn-1-0" in {h for g in grads for h in g}) == selected
    tiers = [ssn.topology.tier[g[0]] for g in grads]
    assert tiers == sorted(tiers)


# ---- TestHyperNodeGradientForSubJobFn_NoSubJobPolicyRespectsHardTopology ----------------------------------------
ZONES = [hn("zone-a", 1, "node-a-1", "node-a-2"), hn("zone-d", 1, "node-d-1", "node-d-2"),
         hn("region", 2, "zone-a", "zone-d", kind="HyperNode")]


def zone_session(group):
    nodes_ = [node(n, 8, "8Gi") for n in ("node-a-1", "node-a-2", "node-d-1", "node-d-2")]
    state = snapshot.ClusterState(nodes=nodes_, queues=[queue("q1")], hypernodes=ZONES, podgroups=[group],
                                  pods=[pod("c1/pending-task", "job", cpu="20", mem="")])
    return session.open_session(state, conf.build("allocate", [[P("network-topology-aware")]]), NOW)


def test_volcano_hard_topology_without_a_feasible_tier1_domain_does_not_fall_back_to_the_root():
    """A hard tier-1 job whose 20 cpus no zone (16 cpus each) could hold gets no eviction domain at all —
    not the whole cluster — whether the limit is the job's own (its default partition carries it) or a
    partition's."""
    group = pg("c1/job", "q1", 1, min_resources={"cpu": "20"})
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    ssn = zone_session(group)
    job = ssn.jobs["c1/job"]
    assert gangevict.domains(ssn, job, 8, 8) == []
    hard1 = {"mode": "hard", "highestTierAllowed": 1}
    part = gangplan.Part("p/x", "p", 0, 1, list(job.tasks), hard1, 0, list(job.tasks.values()))
    assert gangplan._within(ssn, job, part, TOP, 8) == []


# ---- TestReverseAndCapEvictionGradients ---------------------------------------------------------------------
@pytest.mark.parametrize("cap, want", [
    pytest.param(3, [["c", "d"], ["b"]], id="widest-first-capped-at-3"),
    pytest.param(0, [["a", "b"], ["c", "d"]], id="no-limit-unchanged"),
])
def test_volcano_reverse_and_cap_eviction_gradients(cap, want):
    assert gangplan.widest_first([["a", "b"], ["c", "d"]], cap) == want
