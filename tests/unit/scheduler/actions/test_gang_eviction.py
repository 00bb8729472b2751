"""gangpreempt and gangreclaim: every case of upstream's gangpreempt_test.go and gangreclaim_test.go (domains,
arguments, the candidates of a domain) and the bundle model (actions/bundles.py). The plugins' UnifiedEvictable
answers: tests/unit/scheduler/plugins/test_unified_evictable.py; whole scenarios (Volcano's test/e2e/gangevict):
tests/scenarios/states/GP-*, GR-*."""
from __future__ import annotations

import numpy as np
import pytest

from tests.unit.scheduler import objects as o
from vclite.api import batch
from vclite.scheduler import conf, registry
from vclite.scheduler.actions import bundles, gangevict, gangplan, gangpreempt, gangreclaim
from vclite.scheduler.framework import hooks, hypernodes, plugin, session

TOP = hypernodes.TOP
CLASSES = [{"metadata": {"name": "hi"}, "value": 100}, {"metadata": {"name": "lo"}, "value": 10}]


class PermitAll:
    """upstream's test plugin: a UnifiedEvictable that allows every candidate."""
    name = "test-evict"
    Arguments = plugin.NoArguments

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.UNIFIED_EVICTABLE, lambda ctx, candidates: list(candidates))

    def on_session_close(self, ssn):
        pass


# ---- PickDomainsFromGradients ------------------------------------------------------------------------------
@pytest.mark.parametrize("grads, max_domains, fallback, want", [
    pytest.param([["d1", "d2"], ["d2", "d3"]], 2, "", ["d1", "d2"], id="gangpreempt: maxDomains and dedup"),
    pytest.param([["d1", "d2"], ["d2", "d3"]], 3, "", ["d1", "d2", "d3"], id="gangreclaim: maxDomains and dedup"),
    pytest.param(None, 8, TOP, [TOP], id="gangpreempt: fallback"),
    pytest.param([], 8, TOP, [TOP], id="gangreclaim: fallback"),
])
def test_pick_domains_from_gradients(grads, max_domains, fallback, want):
    assert gangevict.pick(grads or [], max_domains, fallback) == want


@pytest.mark.parametrize("grads, cap, want", [
    pytest.param([["a1", "a2"], ["b1"], ["top"]], 8, [["top"], ["b1"], ["a1", "a2"]], id="widest tier first"),
    pytest.param([["a1", "a2", "a3"], ["b1"]], 3, [["b1"], ["a2", "a3"]], id="capped: the last of a tier kept"),
])
def test_eviction_gradients(grads, cap, want):
    assert gangplan.widest_first(grads, cap) == want


# ---- arguments ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("action, arguments, want", [
    pytest.param("gangpreempt", {"maxDomains": 3, "allowWholeBundle": False}, (3, False), id="gangpreempt"),
    pytest.param("gangreclaim", {"maxDomains": 5, "allowWholeBundle": False}, (5, False), id="gangreclaim"),
    pytest.param("gangpreempt", {}, (8, True), id="defaults"),
    pytest.param("gangreclaim", {"allowWholeBundle": "f"}, (8, False), id="a string ParseBool reads"),
])
def test_parse_arguments(action, arguments, want):
    c = conf.build(action, [], [{"name": action, "arguments": arguments}])
    args = c.actions[0].args
    assert (args.maxDomains, args.allowWholeBundle) == want


@pytest.mark.parametrize("action", ["gangpreempt", "gangreclaim"])
@pytest.mark.parametrize("value", [0, -1], ids=["zero", "negative"])
def test_invalid_max_domains_is_refused_at_load(action, value):
    """Volcano falls back to 8 with a warning in its log; vclite refuses the file, naming the line."""
    text = f'actions: "{action}"\nconfigurations:\n- name: {action}\n  arguments:\n    maxDomains: {value}\ntiers: []\n'
    with pytest.raises(ValueError) as e:
        conf.parse(text, "sched.conf")
    assert str(e.value).startswith(f"sched.conf:5: action \"{action}\": argument 'maxDomains': must be a positive "
                                   f"number of HyperNodes to search, got {value}"), str(e.value)


# ---- the candidates of a domain (selectDomainBundles) ------------------------------------------------------
def _pg(key, q, min_member=1, priority_class=None, annotations=None):
    pg = o.pg(key, q, min_member, "Running", priority_class=priority_class)
    if annotations is not None:
        pg["metadata"]["annotations"] = annotations
    return pg


def _queue(name, reclaimable=None):
    q = o.queue(name)
    if reclaimable is not None:
        q["spec"]["reclaimable"] = reclaimable
    return q


def _select(action, pgs, pods, queues, allow_whole=True, starving="ns/preemptor"):
    st = o.state([o.node("n1", "8", "8Gi")], queues, pgs, pods, CLASSES)
    reg = registry.default_registry().with_plugins(PermitAll)
    ssn = session.open_session(st, conf.build(action, [[conf.plugin("test-evict")]], registry=reg), o.NOW)
    cls = {"gangpreempt": gangpreempt.GangPreempt, "gangreclaim": gangreclaim.GangReclaim}[action]
    act = cls(cls.Arguments(allowWholeBundle=allow_whole))
    act.prepare(ssn)
    job = ssn.jobs[starving]
    need = np.sum([t.req for t in job.tasks.values()], axis=0)
    chosen = act.select(ssn, job, need, TOP, np.ones(len(ssn.nodes), dtype=bool))
    return [t.key for t in bundles.flatten(chosen)]


def _running(key, group, priority=10, role=None, annotations=None):
    pod = o.pod(key, group, "1", "1Gi", node="n1", phase="Running", priority=priority, role=role)
    pod["metadata"]["annotations"].update(annotations or {})
    return pod


PREEMPTOR = [o.pod("ns/preemptor", "preemptor", "1", "1Gi", priority=100)]
NOT_PREEMPTABLE = {batch.PREEMPTABLE: "false"}


@pytest.mark.parametrize("allow_whole, pg_annotations, want", [
    pytest.param(False, None, [], id="RespectAllowWholeBundle: no whole bundles"),
    pytest.param(True, None, ["ns/victim"], id="RespectAllowWholeBundle: whole bundles allowed"),
    pytest.param(True, NOT_PREEMPTABLE, [], id="RespectVictimJobPreemptable"),
    pytest.param(True, {}, ["ns/victim"], id="AllowVictimJobWhenPreemptableUnset"),
])
def test_gangpreempt_candidates(allow_whole, pg_annotations, want):
    """One running victim of a job of minMember 1 (a whole bundle: evicting it breaks the gang)."""
    pgs = [_pg("ns/preemptor", "q1", priority_class="hi"),
           _pg("ns/victim", "q1", 1, priority_class="lo", annotations=pg_annotations)]
    assert _select("gangpreempt", pgs, PREEMPTOR + [_running("ns/victim", "victim")], [_queue("q1")],
                   allow_whole) == want


@pytest.mark.parametrize("pgs, pods, want", [
    pytest.param([_pg("ns/equal", "q1", 0, priority_class="hi")], [_running("ns/equal", "equal", 100)], [],
                 id="same priority: not a candidate"),
    pytest.param([_pg("ns/other", "q2", 0, priority_class="lo")], [_running("ns/other", "other")], [],
                 id="another queue: not a candidate"),
    pytest.param([_pg("ns/low", "q1", 0, priority_class="lo")],
                 [_running("ns/low", "low", annotations=NOT_PREEMPTABLE)], [], id="a pod annotated not preemptable"),
    pytest.param([_pg("ns/low", "q1", 0, priority_class="lo")], [_running("ns/low", "low")], ["ns/low"],
                 id="lower priority, same queue"),
])
def test_gangpreempt_candidate_filter(pgs, pods, want):
    pgs = [_pg("ns/preemptor", "q1", priority_class="hi"), *pgs]
    assert _select("gangpreempt", pgs, PREEMPTOR + pods, [_queue("q1"), _queue("q2")]) == want


RECLAIMER = [o.pod("ns/reclaimer", "reclaimer", "1", "1Gi", priority=100)]


@pytest.mark.parametrize("pgs, pods, queues, want", [
    pytest.param([_pg("ns/victim", "q2"), _pg("ns/other", "q3")],
                 [_running("ns/victim", "victim"), _running("ns/other", "other")],
                 [_queue("q1"), _queue("q2", True), _queue("q3", False)], ["ns/victim"],
                 id="ReclaimableCrossQueueOnly"),
    pytest.param([_pg("ns/victim", "q2", annotations=NOT_PREEMPTABLE)], [_running("ns/victim", "victim")],
                 [_queue("q1"), _queue("q2", True)], [], id="RespectVictimJobPreemptable"),
    pytest.param([_pg("ns/victim", "q2", annotations={})], [_running("ns/victim", "victim")],
                 [_queue("q1"), _queue("q2", True)], ["ns/victim"], id="AllowVictimJobWhenPreemptableUnset"),
    pytest.param([_pg("ns/mine", "q1")], [_running("ns/mine", "mine")], [_queue("q1")], [],
                 id="the reclaimer's own queue: not a candidate"),
    pytest.param([_pg("ns/victim", "q2", priority_class="hi")], [_running("ns/victim", "victim", 100)],
                 [_queue("q1"), _queue("q2")], ["ns/victim"], id="priority does not matter"),
])
def test_gangreclaim_candidates(pgs, pods, queues, want):
    pgs = [_pg("ns/reclaimer", "q1", priority_class="hi"), *pgs]
    assert _select("gangreclaim", pgs, RECLAIMER + pods, queues, starving="ns/reclaimer") == want


# ---- bundles ---------------------------------------------------------------------------------------------
def _job(pg, pods):
    st = o.state([o.node("n1", "16", "16Gi")], [o.queue("q")], [pg], pods, CLASSES)
    ssn = session.open_session(st, conf.build("allocate", [[]]), o.NOW)
    return ssn, ssn.jobs[f"{pg['metadata']['namespace']}/{pg['metadata']['name']}"]


def _partitioned(key, group, part, phase="Running"):
    p = o.pod(key, group, "1", "1Gi", node="n1" if phase == "Running" else None, phase=phase)
    p["metadata"]["labels"] = {"part": part}
    return p


SUBGROUPS = dict(o.pg("ns/v", "q", 2, "Running"))
SUBGROUPS["spec"] = dict(SUBGROUPS["spec"], subGroupPolicy=[{"name": "p", "matchLabelKeys": ["part"],
                                                             "subGroupSize": 2, "minSubGroups": 1}])


@pytest.mark.parametrize("pg, pods, safe, whole", [
    pytest.param(o.pg("ns/v", "q", 2, "Running"), [_running(f"ns/v-{i}", "v") for i in range(4)],
                 ["ns/v-0", "ns/v-1"], ["ns/v-2", "ns/v-3"], id="surplus above minMember is safe"),
    pytest.param(o.pg("ns/v", "q", 3, "Running"),
                 [_running("ns/v-0", "v"), _running("ns/v-1", "v"), o.pod("ns/v-2", "v")],
                 ["ns/v-0", "ns/v-1"], [], id="a gang already broken: all safe"),
    pytest.param(o.pg("ns/v", "q", 2, "Running"),
                 [_running("ns/v-0", "v", priority=5), _running("ns/v-1", "v", priority=1),
                  _running("ns/v-2", "v", priority=3)],
                 ["ns/v-1"], ["ns/v-2", "ns/v-0"], id="lowest priority first"),
    pytest.param(o.pg("ns/v", "q", 3, "Running", min_task_member={"ps": 1, "worker": 2}),
                 [_running("ns/v-ps", "v", role="ps")] + [_running(f"ns/v-w{i}", "v", role="worker") for i in range(3)],
                 ["ns/v-w0"], ["ns/v-ps", "ns/v-w1", "ns/v-w2"], id="a role at its minimum is kept whole"),
    pytest.param(SUBGROUPS, [_partitioned("ns/v-a0", "v", "a"), _partitioned("ns/v-a1", "v", "a"),
                             _partitioned("ns/v-b0", "v", "b"), _partitioned("ns/v-b1", "v", "b")],
                 ["ns/v-a0", "ns/v-a1"], ["ns/v-b0", "ns/v-b1"],
                 id="minSubGroups: one partition to spare, taken whole"),
])
def test_job_bundles(pg, pods, safe, whole):
    ssn, job = _job(pg, pods)
    local = [t for t in job.tasks.values() if t.node]
    got = {b.whole: [t.key for t in b.tasks] for b in bundles.job_bundles(job, local)}
    assert (got.get(False, []), got.get(True, [])) == (safe, whole)
    for b in bundles.job_bundles(job, local):
        assert (b.cost == 0).all() != b.whole   # a safe bundle costs nothing; a whole one the job's requests


def test_apply_allowed_keeps_whole_bundles_whole():
    ssn, job = _job(o.pg("ns/v", "q", 2, "Running"), [_running(f"ns/v-{i}", "v") for i in range(4)])
    safe, whole = bundles.job_bundles(job, list(job.tasks.values()))
    allowed = {safe.tasks[0].uid, whole.tasks[0].uid}
    kept = bundles.apply_allowed([safe, whole], allowed)
    assert [(b.whole, [t.key for t in b.tasks]) for b in kept] == [(False, ["ns/v-0"])]
    assert kept[0].local[ssn.dims.index["cpu"]] == 1000   # (millicores): shrunk to what is left


def test_sort_for_preempt_safe_first_then_the_job_scheduled_last_then_return():
    pgs = [o.pg("ns/hi", "q", 1, "Running", priority_class="hi"), o.pg("ns/lo", "q", 1, "Running",
                                                                       priority_class="lo"),
           o.pg("ns/lo2", "q", 2, "Running", priority_class="lo")]
    pods = [_running("ns/hi-0", "hi"), _running("ns/hi-1", "hi"), _running("ns/lo-0", "lo"),
            _running("ns/lo2-0", "lo2"), _running("ns/lo2-1", "lo2")]
    st = o.state([o.node("n1", "16", "16Gi")], [o.queue("q")], pgs, pods, CLASSES)
    ssn = session.open_session(st, conf.build("allocate", [[conf.plugin("priority", enableJobOrder=True)]]),
                               o.NOW)
    found = [b for j in ssn.jobs.values() for b in bundles.job_bundles(j, list(j.tasks.values()))]
    need = ssn.dims.vector({"cpu": 1, "memory": 2 ** 30})
    got = [(b.whole, b.job.name) for b in bundles.sort_for_preempt(found, need, ssn.dims, ssn.job_less)]
    # safe first (hi's spare pod); then whole bundles, the job JobOrder takes last giving first: of the two
    # low-priority jobs, lo2 (created alike, its uid after lo's), then lo, then hi's pod at its minimum
    assert got == [(False, "hi"), (True, "lo2"), (True, "lo"), (True, "hi")]


# ---- the demand, the domains, the placement (gangplan, gangevict.domains) ------------------------------------
def _ssn(pgs, pods, nodes=None, hypernodes_=(), tiers=None):
    st = o.state(nodes or [o.node("n1", "2", "2Gi")], [o.queue("q")], pgs, pods, CLASSES)
    st.hypernodes = list(hypernodes_)
    c = conf.build("allocate", tiers or [[conf.plugin("gang", enableJobReady=True, enableJobPipelined=True),
                                          conf.plugin("priority", enableTaskOrder=True)]])
    return session.open_session(st, c, o.NOW)


def _gated(key, group):
    pod = o.pod(key, group)
    pod["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    return pod


@pytest.mark.parametrize("pg, pods, want", [
    pytest.param(o.pg("ns/j", "q", 2), [o.pod("ns/j-0", "j", priority=1), o.pod("ns/j-1", "j", priority=5)],
                 ["ns/j-1", "ns/j-0"], id="a starting gang: every pending task, best first"),
    pytest.param(o.pg("ns/j", "q", 1),
                 [o.pod("ns/j-0", "j"), _gated("ns/j-1", "j"), o.pod("ns/j-2", "j", cpu="", mem="")], ["ns/j-0"],
                 id="scheduling-gated and BestEffort tasks ask for no room"),
    pytest.param(SUBGROUPS, [_partitioned("ns/v-a0", "v", "a"), _partitioned("ns/v-a1", "v", "a"),
                             _partitioned("ns/v-b0", "v", "b", "Pending"),
                             _partitioned("ns/v-b1", "v", "b", "Pending")],
                 ["ns/v-b0", "ns/v-b1"], id="a ready gang: its first partition with pending tasks"),
])
def test_pending_demand(pg, pods, want):
    ssn = _ssn([pg], pods, [o.node("n1", "8", "8Gi")])
    job = next(iter(ssn.jobs.values()))
    assert [t.key for t in gangplan.pending(ssn, job)] == want


def test_a_failed_placement_leaves_nothing_applied():
    """The victim frees 1 cpu where the gang needs 2: its eviction is undone, the node as it was."""
    pgs = [o.pg("ns/v", "q", 1, "Running", priority_class="lo"), o.pg("ns/s", "q", 2, priority_class="hi")]
    pods = [_running("ns/v-0", "v"), o.pod("ns/s-0", "s"), o.pod("ns/s-1", "s")]
    ssn = _ssn(pgs, pods, [o.node("n1", "1", "1Gi")])
    before = ssn.nodes.copy_arrays()
    victim = next(t for t in ssn.jobs["ns/v"].tasks.values())
    assert gangplan.place(ssn, ssn.queues["q"], ssn.jobs["ns/s"], TOP, [victim], "gangpreempt", 8) is None
    after = ssn.nodes.copy_arrays()
    assert all((before[k] == after[k]).all() for k in before)
    assert victim.status == gangplan.TaskStatus.RUNNING


def _hn(name, tier, *members, kind="Node"):
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}}
                                               for m in members]}}


TREE = [_hn("s0", 1, "n0", "n1"), _hn("s1", 1, "n2", "n3"), _hn("s2", 2, "s0", "s1", kind="HyperNode")]


@pytest.mark.parametrize("nt, max_domains, cap, want", [
    pytest.param(None, 8, 8, [TOP], id="no networkTopology: the whole cluster"),
    pytest.param({"mode": "soft", "highestTierAllowed": 1}, 8, 8, [TOP], id="soft: the whole cluster"),
    pytest.param({"mode": "hard", "highestTierAllowed": 2}, 8, 8, ["s2", "s0", "s1"], id="hard: widest tier first"),
    pytest.param({"mode": "hard", "highestTierAllowed": 1}, 8, 8, ["s0", "s1"], id="hard tier 1"),
    pytest.param({"mode": "hard", "highestTierAllowed": 2}, 2, 8, ["s2", "s0"], id="at most maxDomains"),
    pytest.param({"mode": "hard", "highestTierAllowed": 2}, 8, 2, ["s2", "s1"],
                 id="at most max-hypernodes (the last of a tier kept)"),
])
def test_domains(nt, max_domains, cap, want):
    pg = o.pg("ns/j", "q", 1)
    if nt is not None:
        pg["spec"]["networkTopology"] = nt
    ssn = _ssn([pg], [o.pod("ns/j-0", "j")], [o.node(f"n{i}", "1", "1Gi") for i in range(4)], TREE)
    assert gangevict.domains(ssn, ssn.jobs["ns/j"], max_domains, cap) == want


@pytest.mark.parametrize("arguments, want", [
    pytest.param(None, 8, id="network-topology-aware not configured: 8"),
    pytest.param({}, 8, id="its default: 8"),
    pytest.param({"hypernode.gradient.evict.max-hypernodes": 3}, 3, id="its argument"),
    pytest.param({"hypernode.gradient.evict.max-hypernodes": 0}, 8, id="0 or less: 8, as upstream"),
])
def test_evict_cap(arguments, want):
    tiers = [[conf.plugin("network-topology-aware", arguments)]] if arguments is not None else [[]]
    ssn = _ssn([o.pg("ns/j", "q", 1)], [o.pod("ns/j-0", "j")], tiers=tiers)
    assert gangevict.evict_cap(ssn) == want


def test_a_placement_in_a_domain_asks_an_among_predicate_about_the_domains_nodes_only():
    """The extender's predicate (registered with among=True) is asked, for each task placed in s0, about s0's
    nodes the request fits only (Volcano's simulation predicates the domain's nodes, resources first); before:
    about every node of the cluster."""
    pgs = [o.pg("ns/s", "q", 2, priority_class="hi")]
    pods = [o.pod("ns/s-0", "s"), o.pod("ns/s-1", "s")]
    nodes = [o.node(n, "2", "4Gi") for n in ("n0", "n1", "n2", "n3")]
    ssn = _ssn(pgs, pods, nodes, TREE)
    asked = []
    ssn.hooks.register(hooks.Point.PREDICATE, 9, lambda task, nodes_, among: asked.append(
        (task.key, np.flatnonzero(among).tolist())) or [], 1.0, "recorder", hooks.AMONG)
    chain = gangplan.place(ssn, ssn.queues["q"], ssn.jobs["ns/s"], "s0", [], "gangpreempt", 8)
    assert chain is not None
    assert {t.node for t in ssn.jobs["ns/s"].tasks.values()} <= {"n0", "n1"}
    assert [key for key, _ in asked] == ["ns/s-0", "ns/s-1"]
    assert all(set(rows) <= {0, 1} and rows for _, rows in asked), asked
