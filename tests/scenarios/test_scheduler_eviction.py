"""Eviction scenarios: `preempt` and `reclaim` ported from Volcano's unit tests (reference §4.2,
§4.3: actions/preempt/preempt_test.go TestPreempt and TestNormalPreemptRechecksPredicateAfterEviction,
plugins/priority/priority_test.go TestPreempt, actions/reclaim/reclaim_test.go TestReclaim), plus
vclite's own. Each row: cluster objects + tiers + actions -> the evicted pods (in eviction order)
and, where stated, the pipelined reservations. Ids follow the upstream case order (PREEMPT-05, -08,
-11..-13 and RECLAIM-02, -03, -07..-09 are not transcribed in the reference; they are ported from
the same upstream files). Tiers built in code have every enable flag OFF unless listed."""
from __future__ import annotations

import dataclasses

import numpy as np
import yaml
import pytest

from tests.scenarios.test_scheduler_scenarios import NOW, P, node, pg, pod, queue
from vclite.api import batch
from vclite.scheduler import conf, registry
from vclite.scheduler.framework import fit, hooks, plugin, session, snapshot
from vclite.scheduler.framework import tasks as tasks_mod


# ---- builders on top of the scenario file's ------------------------------------------------------
def pclass(name, value, policy=None):
    pc = {"metadata": {"name": name}, "value": value}
    if policy:
        pc["preemptionPolicy"] = policy
    return pc


def group(key, q, min_member, phase="Inqueue", prio=None, min_task_member=None):
    obj = pg(key, q, min_member, phase, min_task_member=min_task_member)
    if prio:
        obj["spec"]["priorityClassName"] = prio
    return obj


def running(key, grp, node_name, cpu="1", mem="1G", preemptable=None, priority=None, annotate=False, **kw):
    p = pod(key, grp, cpu, mem, node=node_name, phase="Running")
    return _decorate(p, preemptable, priority, annotate, **kw)


def pending(key, grp, cpu="1", mem="1G", priority=None, policy=None, **kw):
    p = pod(key, grp, cpu, mem)
    if policy:
        p["spec"]["preemptionPolicy"] = policy
    return _decorate(p, None, priority, False, **kw)


def _decorate(p, preemptable, priority, annotate, priority_class=None):
    if preemptable is not None:
        where = "annotations" if annotate else "labels"
        p["metadata"].setdefault(where, {})[batch.PREEMPTABLE] = "true" if preemptable else "false"
    if priority is not None:
        p["spec"]["priority"] = priority
    if priority_class:
        p["spec"]["priorityClassName"] = priority_class
    return p


def q(name, weight=1, cap=None, priority=None, state="Open", reclaimable=None):
    obj = queue(name, weight, {"cpu": cap[0], "memory": cap[1]} if cap else None, state)
    if priority is not None:
        obj["spec"]["priority"] = priority
    if reclaimable is not None:
        obj["spec"]["reclaimable"] = reclaimable
    return obj


@dataclasses.dataclass
class Case:
    tiers: list
    actions: str
    nodes: list
    queues: list
    podgroups: list
    pods: list
    evict: list
    pipelined: dict | None = None
    classes: list = dataclasses.field(default_factory=list)
    registry: object = None
    configurations: list = dataclasses.field(default_factory=list)


def run(case: Case) -> session.SessionResult:
    state = snapshot.ClusterState(nodes=case.nodes, queues=case.queues, podgroups=case.podgroups, pods=case.pods,
                                  priority_classes=case.classes)
    built = conf.build(case.actions, case.tiers, case.configurations, registry=case.registry)
    return session.run_session(state, built, NOW)


# ---- preempt (T_PREEMPT) -------------------------------------------------------------------------
T_PREEMPT = [[P("conformance", enablePreemptable=True),
              P("gang", enablePreemptable=True, enableJobPipelined=True, enableJobStarving=True),
              P("priority", enableTaskOrder=True, enableJobOrder=True, enablePreemptable=True,
                enableJobPipelined=True, enableJobStarving=True),
              P("proportion", enabledOverused=True, enabledAllocatable=True, enableQueueOrder=True)]]
PRIO = [pclass("high-priority", 100000), pclass("low-priority", 10)]
ONE = {"": 1}
TWO = {"": 2}


def preempt_case(nodes, queues, podgroups, pods, evict, pipelined=None, tiers=T_PREEMPT, reg=None, classes=None):
    return Case(tiers, "preempt", nodes, queues, podgroups, pods, evict, pipelined, classes or PRIO, reg)


PREEMPT = [
    pytest.param(preempt_case(
        [node("n1", 10, "10G")], [q("q1")], [group("c1/pg1", "q1", 3, min_task_member={"": 3})],
        [running("c1/preemptee1", "pg1", "n1"), running("c1/preemptee2", "pg1", "n1"), pending("c1/preemptor1", "pg1")],
        [], pipelined={"c1/pg1": ["n1"]}), id="PREEMPT-01 enough idle resources: no eviction, pipelined"),
    pytest.param(preempt_case(
        [node("n1", 3, "3G")], [q("q1")],
        [group("c1/pg1", "q1", 1, min_task_member=TWO), group("c1/pg2", "q1", 1, min_task_member=TWO)],
        [running("c1/preemptee1", "pg1", "n1"), running("c1/preemptee2", "pg1", "n1"),
         running("c1/preemptee3", "pg2", "n1"), pending("c1/preemptor2", "pg2")],
        [], pipelined={}), id="PREEMPT-02 job not starving: nothing"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/pg1", "q1", 1, prio="low-priority", min_task_member=TWO),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=TWO)],
        [running("c1/preemptee1", "pg1", "n1", preemptable=True), running("c1/preemptee2", "pg1", "n1", preemptable=False),
         pending("c1/preemptor1", "pg2"), pending("c1/preemptor2", "pg2")],
        ["c1/preemptee1"], pipelined={"c1/pg2": ["n1"]}), id="PREEMPT-03 one task of another job"),
    pytest.param(preempt_case(
        [node("n1", 6, "6G")], [q("q1")],
        [group("c1/pg1", "q1", 1, prio="low-priority", min_task_member={"": 3}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", preemptable=True), running("c1/preemptee2", "pg1", "n1", preemptable=True),
         running("c1/preemptee3", "pg1", "n1", preemptable=False), pending("c1/preemptor1", "pg2", "5", "5G")],
        ["c1/preemptee2", "c1/preemptee1"], pipelined={"c1/pg2": ["n1"]}),
        id="PREEMPT-04 enough tasks for a large task, lowest task first"),
    pytest.param(preempt_case(
        [node("n1", 12, "12G")], [q("q1", cap=("4", "4G"))],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", "3", "3G", preemptable=True), pending("c1/preemptor1", "pg2", "3", "3G")],
        ["c1/preemptee1"]), id="PREEMPT-05 queue capability forces preemption in the same queue"),
    pytest.param(preempt_case(
        [node("n1", 12, "12G")], [q("q1", cap=("6", "6G"))],
        [group("c1/pg1", "q1", 1, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", "3", "3G", preemptable=True), pending("c1/preemptor1", "pg2", "3", "3G")],
        []), id="PREEMPT-06 allocatable and room: no preemption"),
    pytest.param(preempt_case(
        [node("n1", 12, "12G")], [q("q1", cap=("3", "3G"))],
        [group("c1/pg1", "q1", 1, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", preemptable=False), running("c1/preemptee2", "pg1", "n1", preemptable=True),
         running("c1/preemptee3", "pg1", "n1", preemptable=True, priority=100000), pending("c1/preemptor1", "pg2")],
        ["c1/preemptee2"]), id="PREEMPT-07 not the preemptable=false pod, lowest task priority first"),
    pytest.param(preempt_case(
        [node("n1", 12, "12G", pods=1)], [q("q1", cap=("6", "6G"))],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", None, None, preemptable=True), pending("c1/preemptor1", "pg2", "3", "3G")],
        ["c1/preemptee1"]), id="PREEMPT-08 a pod with requests evicts a BestEffort pod for its pod slot"),
    pytest.param(preempt_case(
        [node("n1", 12, "12G", pods=1)], [q("q1", cap=("6", "6G"))],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", None, None, preemptable=True), pending("c1/preemptor1", "pg2", None, None)],
        ["c1/preemptee1"]), id="PREEMPT-09 BestEffort evicts BestEffort"),
    pytest.param(preempt_case(
        [node("n1", 1, "1Gi", pods=1)], [q("q1")],
        [group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q1", 1, prio="high-priority")],
        [running("c1/preemptee1", "pg1", "n1", preemptable=True), pending("c1/preemptor1", "pg2", policy="Never")],
        [], pipelined={}), id="PREEMPT-10 preemptionPolicy Never"),
    pytest.param(preempt_case(
        [node("n1", 10, "10G")], [q("q1", cap=("3", "3G"))],
        [group("c1/pg1", "q1", 1, prio="low-priority", min_task_member=TWO),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg1", "n1", preemptable=True), running("c1/preemptee2", "pg1", "n1", preemptable=True),
         pending("c1/preemptor1", "pg2", "4", "4G")],
        [], pipelined={}), id="PREEMPT-11 evictions rolled back when the queue still cannot take the preemptor"),
    pytest.param(preempt_case(
        [node("n1", 3, "3G"), node("n2", 4, "4G")], [q("q1", cap=("6", "6G"))],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE),
         group("c1/pg3", "q1", 0, prio="low-priority", min_task_member={})],
        [running("c1/preemptee1", "pg1", "n1", preemptable=True),
         running("c1/preemptee2", "pg3", "n2", "4", "4G", preemptable=True), pending("c1/preemptor1", "pg2", "3", "3G")],
        ["c1/preemptee2"], pipelined={"c1/pg2": ["n2"]}),
        id="PREEMPT-12 only the evictions of the node where the preemptor fits commit"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1"), q("q2", cap=("4", "4G"))],
        [group("c1/pg1", "q1", 1, min_task_member=ONE),
         group("c1/pg2", "q2", 0, prio="low-priority", min_task_member={}),
         group("c1/pg3", "q2", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/q1-runner1", "pg1", "n1"), running("c1/q2-preemptee1", "pg2", "n1", preemptable=True),
         pending("c1/q2-preemptor1", "pg3")],
        ["c1/q2-preemptee1"]), id="PREEMPT-13 several queues"),
]


class HiddenDevice:
    """PREEMPT-14's test plugin: the task "preemptor" does not fit a node while "preemptee" runs
    there (a device the resource columns do not show); evicting it cures that (resolvable)."""
    name = "device-fit-after-eviction"
    Arguments = plugin.NoArguments
    resolvable = True

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        self.ssn = ssn
        reg.add(hooks.Point.PREDICATE, self.predicate)

    def predicate(self, task, nodes):
        if task.name != "preemptor":
            return []
        occupied = np.zeros(len(nodes), dtype=bool)
        for job in self.ssn.jobs.values():
            for t in job.tasks.values():
                if t.name == "preemptee" and t.status != tasks_mod.TaskStatus.RELEASING and t.node in nodes.index:
                    occupied[nodes.index[t.node]] = True
        return [fit.Failure((("hidden device capacity is occupied", occupied),), resolvable=self.resolvable)]

    def on_session_close(self, ssn):
        pass


class HiddenDeviceUnresolvable(HiddenDevice):
    name = "device-unresolvable"
    resolvable = False


def device_case(plugin_cls, evict):
    tiers = [[P("conformance", enablePreemptable=True),
              P("gang", enablePreemptable=False, enableJobPipelined=True, enableJobStarving=True),
              P("priority", enableTaskOrder=True, enableJobOrder=True, enablePreemptable=True,
                enableJobPipelined=True, enableJobStarving=True),
              P("proportion", enabledOverused=True, enabledAllocatable=True, enableQueueOrder=True),
              P(plugin_cls.name, enablePredicate=True)]]
    return preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/pg-low", "q1", 1, prio="low-priority", min_task_member=ONE),
         group("c1/pg-high", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee", "pg-low", "n1", preemptable=True), pending("c1/preemptor", "pg-high")],
        evict, tiers=tiers, reg=registry.default_registry().with_plugins(plugin_cls))


PREEMPT += [
    pytest.param(device_case(HiddenDevice, ["c1/preemptee"]),
                 id="PREEMPT-14 predicates re-checked after each tentative eviction"),
    pytest.param(device_case(HiddenDeviceUnresolvable, []),
                 id="PREEMPT-14b an unresolvable predicate failure keeps preempt off the node"),
]

# TestTopologyAwarePreempt's two cases TestPreempt lacks, run with normal preemption (the TOPO- rows below
# run them with enableTopologyAwarePreemption) and without the capacity plugin (vclite refuses it beside
# proportion; it only added a queue order there): Volcano's expected victims are the same.
def _anti(p, labels):
    p["metadata"].setdefault("labels", {}).update(labels)
    p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}
    return p


T_PREEMPT_PRED = [T_PREEMPT[0] + [P("predicates", enablePreemptable=True, enablePredicate=True)]]
PREEMPT += [
    pytest.param(preempt_case(
        [node("n1", 2, "2Gi", pods=2, labels={"kubernetes.io/hostname": "n1"})], [q("q1", cap=("2", "2G"))],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg3", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/preemptee1", "pg2", "n1", preemptable=True),
         _anti(running("c1/preemptee2", "pg1", "n1", preemptable=True), {"test": "test"}),
         _anti(pending("c1/preemptor1", "pg3"), {"test": "test"})],
        ["c1/preemptee2"], {"c1/pg3": ["n1"]}, tiers=T_PREEMPT_PRED),
        id="PREEMPT-15 the victim whose anti-affinity conflicts with the preemptor"),
    pytest.param(preempt_case(
        [node("n1", 2, "2Gi", pods=2)], [q("q1", cap=("1", "1G"), priority=1), q("q2", cap=("1", "1G"), priority=10)],
        [group("c1/pg3", "q2", 1, "Running", prio="high-priority"),
         group("c1/pg1", "q1", 0, "Running", prio="low-priority"),
         group("c1/pg2", "q1", 1, prio="high-priority")],
        [running("c1/preemptee2", "pg3", "n1", preemptable=True),
         running("c1/preemptee1", "pg1", "n1", preemptable=True),
         pending("c1/preemptor1", "pg2", policy="PreemptLowerPriority")],
        ["c1/preemptee1"], {"c1/pg2": ["n1"]}), id="PREEMPT-16 preemption with priority queues: within the queue"),
]

# ---- enableTopologyAwarePreemption (preempt_test.go TestTopologyAwarePreempt) -------------------------
# Its twelve rows are TestPreempt's rows 1-10 and PREEMPT-15/16 above, run with the dry-run path and the
# predicates plugin in the tier (capacity, which upstream adds for its queue order only, is left out: vclite
# refuses it beside proportion). Victims are evicted most important first (the reprieve order: Volcano
# evicts a candidate's victims in that order too; its test compares them as a set). A node where the
# preemptor fits without evicting anything is no candidate, so nothing is pipelined there (row 1).
def aware(**arguments):
    return [{"name": "preempt", "arguments": {"enableTopologyAwarePreemption": True, **arguments}}]


def _aware(param, evict=None, pipelined="same"):
    case = param.values[0]
    return pytest.param(dataclasses.replace(
        case, tiers=T_PREEMPT_PRED, configurations=aware(), evict=case.evict if evict is None else evict,
        pipelined=case.pipelined if pipelined == "same" else pipelined), id="TOPO-" + param.id)


_BY_ID = {p.id.split(" ")[0]: p for p in PREEMPT}
PREEMPT_AWARE = [
    _aware(_BY_ID["PREEMPT-01"], pipelined={}),
    *(_aware(_BY_ID[f"PREEMPT-{i:02d}"]) for i in (2, 3)),
    _aware(_BY_ID["PREEMPT-04"], evict=["c1/preemptee1", "c1/preemptee2"]),
    *(_aware(_BY_ID[f"PREEMPT-{i:02d}"]) for i in (5, 6, 7, 8, 9, 10, 15, 16)),
    # vclite's own: Volcano re-checks only the predicates once every potential victim is gone, so it would
    # evict both pods for a preemptor its queue cannot take; here that node is no candidate (differences.md)
    _aware(_BY_ID["PREEMPT-11"]),
]


def _reprieve_case(evict, configurations=()):
    """Two low pods on n1: the one evicted first (lowest priority) turns out not to be needed."""
    case = preempt_case(
        [node("n1", 4, "4G")], [q("q1")],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/small", "pg1", "n1", "1", "1G", preemptable=True, priority=1),
         running("c1/big", "pg1", "n1", "3", "3G", preemptable=True, priority=5),
         pending("c1/preemptor1", "pg2", "3", "3G")], evict, {"c1/pg2": ["n1"]})
    return dataclasses.replace(case, configurations=list(configurations))


def _pick_case(evict, node_name, **arguments):
    """n1 (first in node order) would cost a priority-5 pod, n2 a priority-1 one."""
    case = preempt_case(
        [node("n1", 1, "1G"), node("n2", 1, "1G")], [q("q1")],
        [group("c1/pg1", "q1", 0, prio="low-priority", min_task_member={}),
         group("c1/pg2", "q1", 1, prio="high-priority", min_task_member=ONE)],
        [running("c1/on-n1", "pg1", "n1", preemptable=True, priority=5),
         running("c1/on-n2", "pg1", "n2", preemptable=True, priority=1),
         pending("c1/preemptor1", "pg2")], evict, {"c1/pg2": [node_name]})
    return dataclasses.replace(case, configurations=aware(**arguments))


PREEMPT_AWARE += [
    pytest.param(_reprieve_case(["c1/small", "c1/big"]), id="TOPO-own-01a normal preemption evicts until it fits"),
    pytest.param(_reprieve_case(["c1/big"], aware()), id="TOPO-own-01b the dry run reprieves the victim not needed"),
    pytest.param(_pick_case(["c1/on-n1"], "n1"),
                 id="TOPO-own-02a one candidate by default (10% of 2 nodes, at least 1): the first node's"),
    pytest.param(_pick_case(["c1/on-n2"], "n2", minCandidateNodesAbsolute=2),
                 id="TOPO-own-02b two candidates: the one whose most important victim matters least"),
]


def _with_topology(spec_key, value, configurations=()):
    """PREEMPT-03 with the preemptor's PodGroup carrying a network topology: it is not preempted for."""
    case = _BY_ID["PREEMPT-03"].values[0]
    pgs = [dict(g, spec={**g["spec"], spec_key: value}) if g["metadata"]["name"] == "pg2" else g
           for g in case.podgroups]
    return dataclasses.replace(case, podgroups=pgs, evict=[], pipelined={}, configurations=list(configurations))


PREEMPT_AWARE += [
    pytest.param(_with_topology("networkTopology", {"mode": "hard", "highestTierAllowed": 1}),
                 id="TOPO-own-03a a job with networkTopology does not preempt (Volcano #4374)"),
    pytest.param(_with_topology("networkTopology", {"mode": "soft"}, aware()),
                 id="TOPO-own-03b nor with the dry run, soft mode too"),
    pytest.param(_with_topology("subGroupPolicy", [{"name": "p", "subGroupSize": 1, "matchLabelKeys": ["x"],
                                                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}]),
                 id="TOPO-own-03c nor a job with a partition's networkTopology"),
]
PREEMPT += PREEMPT_AWARE


# ---- priority plugin (priority_test.go TestPreempt): allocate then preempt ----------------------------
PRIO_EVICT = P("priority", enableTaskOrder=True, enableJobOrder=True, enablePreemptable=True,
               enableReclaimable=True, enableJobStarving=True)
PRIO_NO_EVICT = P("priority", enableTaskOrder=True, enableJobOrder=True, enablePreemptable=False,
                  enableReclaimable=False, enableJobStarving=True)
PRIO_CLASSES = [pclass("low-priority", 100), pclass("high-priority", 1000)]
PREEMPT += [
    pytest.param(Case(
        [[PRIO_EVICT]], "allocate, preempt", [node("node1", 6, "6G"), node("node2", 2, "2G")], [q("q1", cap=("6", "6G"))],
        [group("ns1/pg1", "q1", 1, prio="low-priority", min_task_member={}),
         group("ns2/pg2", "q1", 1, prio="high-priority", min_task_member={})],
        [running("ns1/preemptee1", "pg1", "node1", "3", "3G", preemptable=True),
         running("ns1/preemptee2", "pg1", "node1", "3", "3G", preemptable=True, priority=1000),
         pending("ns2/preemptor1", "pg2", "3", "3G")],
        ["ns1/preemptee1"], {"ns2/pg2": ["node1"]}, PRIO_CLASSES), id="PRIO-01 preemptable enabled"),
    pytest.param(Case(
        [[PRIO_NO_EVICT]], "allocate, preempt", [node("node1", 3, "3G"), node("node2", 3, "3G")], [q("q1", cap=("6", "6G"))],
        [group("ns1/pg1", "q1", 1, prio="low-priority", min_task_member={}),
         group("ns2/pg2", "q1", 1, prio="high-priority", min_task_member={})],
        [running("ns1/preemptee1", "pg1", "node1", "3", "3G", preemptable=True),
         running("ns1/preemptee2", "pg1", "node2", "3", "3G", preemptable=False),
         pending("ns2/preemptor1", "pg2", "3", "3G")],
        [], {}, PRIO_CLASSES), id="PRIO-02 preemptable disabled"),
]


# ---- reclaim (T_RECLAIM; only the plugins a case names are registered) ----------------------------
def t_reclaim(*names):
    rows = [P("conformance", enableReclaimable=True), P("gang", enableReclaimable=True, enableJobStarving=True),
            P("proportion", enableReclaimable=True, enableQueueOrder=True, enablePreemptive=True),
            P("priority", enableReclaimable=True, enableJobOrder=True, enableTaskOrder=True)]
    return [[r for r in rows if r["name"] in names]]


CGP = t_reclaim("conformance", "gang", "proportion")
CGPP = t_reclaim("conformance", "gang", "proportion", "priority")


def reclaim_case(tiers, nodes, queues, podgroups, pods, evict, classes=(), pipelined=None):
    return Case(tiers, "reclaim", nodes, queues, podgroups, pods, evict, pipelined, list(classes))


THREE_RUNNING = [running("c1/preemptee1", "pg1", "n1", preemptable=False), running("c1/preemptee2", "pg1", "n1", preemptable=True),
                 running("c1/preemptee3", "pg1", "n1", preemptable=False), pending("c1/preemptor1", "pg2")]
MID = [pclass("low-priority", 100), pclass("mid-priority", 500), pclass("high-priority", 1000)]
RECLAIM = [
    pytest.param(reclaim_case(
        CGP, [node("n1", 3, "3Gi")], [q("q1"), q("q2")],
        [group("c1/pg1", "q1", 1, prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        THREE_RUNNING, ["c1/preemptee2"], pipelined={"c1/pg2": ["n1"]}), id="RECLAIM-01 overusing queue gives back"),
    pytest.param(reclaim_case(
        CGPP, [node("n1", 4, "4Gi")], [q("q1"), q("q2"), q("q3")],
        [group("c1/pg1", "q1", 1, prio="mid-priority"), group("c1/pg2", "q2", 1, prio="low-priority"),
         group("c1/pg3", "q3", 1, prio="high-priority")],
        [running("c1/preemptee1-1", "pg1", "n1", preemptable=True), running("c1/preemptee1-2", "pg1", "n1", preemptable=True),
         running("c1/preemptee2-1", "pg2", "n1", preemptable=True), running("c1/preemptee2-2", "pg2", "n1", preemptable=False),
         pending("c1/preemptor1", "pg3")],
        ["c1/preemptee2-1"], MID), id="RECLAIM-02 reclaimees sorted"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 4, "4Gi")], [q("q1", priority=5), q("q2", priority=10), q("q3", priority=1)],
        [group("c1/pg1", "q1", 1, prio="mid-priority"), group("c1/pg2", "q2", 1, prio="mid-priority"),
         group("c1/pg3", "q3", 1, prio="mid-priority")],
        [running("c1/preemptee1-1", "pg1", "n1", preemptable=True), running("c1/preemptee1-2", "pg1", "n1", preemptable=False),
         running("c1/preemptee2-1", "pg2", "n1", preemptable=True), running("c1/preemptee2-2", "pg2", "n1", preemptable=False),
         pending("c1/preemptor1", "pg3")],
        ["c1/preemptee1-1"]), id="RECLAIM-03 lowest queue priority gives back first"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 1, "1Gi", pods=1)], [q("q1", 5), q("q2", 10)],
        [group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q2", 0, prio="high-priority")],
        [running("c1/preemptee1", "pg1", "n1", preemptable=True), pending("c1/preemptor1", "pg2", policy="Never")],
        [], [pclass("low-priority", 100), pclass("high-priority", 1000, "Never")]),
        id="RECLAIM-04 preemptionPolicy Never"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 2, "2G")], [q("q1"), q("q2")],
        [group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        [running("c1/preemptee1", "pg1", "n1"), running("c1/preemptee2", "pg1", "n1"),
         pending("c1/preemptor1", "pg2", priority_class="high-priority")],
        [], [pclass("low-priority", 100), pclass("high-priority", 1000, "Never")]),
        id="RECLAIM-04b preemptionPolicy Never from the pod's PriorityClass"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 2, "2G")], [q("q1"), q("q2")],
        [group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        [running("c1/preemptee1", "pg1", "n1"), running("c1/preemptee2", "pg1", "n1"),
         pending("c1/preemptor1", "pg2", priority_class="high-priority")],
        ["c1/preemptee2"], [pclass("low-priority", 100), pclass("high-priority", 1000)], {"c1/pg2": ["n1"]}),
        id="RECLAIM-04c the same with a class that may preempt"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 3, "3Gi")], [q("q1"), q("q2", state="Closed")],
        [group("c1/pg1", "q1", 1, "Running", prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        THREE_RUNNING, [], pipelined={}), id="RECLAIM-05 closed queue does not reclaim (proportion)"),
    pytest.param(reclaim_case(
        t_reclaim("conformance", "gang") + [[P("capacity", enableReclaimable=True, enableQueueOrder=True,
                                                enablePreemptive=True)]],
        [node("n1", 3, "3Gi")], [q("q1"), q("q2", state="Closed")],
        [group("c1/pg1", "q1", 1, "Running", prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        THREE_RUNNING, [], pipelined={}), id="RECLAIM-06 closed queue does not reclaim (capacity)"),
    pytest.param(reclaim_case(
        CGPP, [node("n1", 10, "2Gi")], [q("q1", priority=1), q("q2", priority=2), q("q3", 3)],
        [group("c1/pg1", "q1", 0, "Running", prio="mid-priority"), group("c1/pg2", "q2", 0, "Running", prio="mid-priority"),
         group("c1/pg3", "q3", 1, prio="mid-priority")],
        [running("c1/preemptee1-1", "pg1", "n1", preemptable=True), running("c1/preemptee2-1", "pg2", "n1", preemptable=True),
         pending("c1/preemptor1", "pg3", "2", "1G")],
        ["c1/preemptee1-1"], MID), id="RECLAIM-07 the node's free resources count"),
    pytest.param(reclaim_case(
        CGPP, [node("n1", 2, "2G")], [q("q1"), q("q2")],
        [group("c1/pg-victim", "q1", 1, "Running", prio="low-priority"),
         group("c1/pg-preemptor", "q2", 2, prio="high-priority-no-preempt")],
        [running("c1/victim-pod-no", "pg-victim", "n1", preemptable=False),
         running("c1/victim-pod", "pg-victim", "n1", preemptable=True),
         pending("c1/preemptor-task1-non-preemptable", "pg-preemptor", policy="Never"),
         pending("c1/preemptor-task2-preemptable", "pg-preemptor")],
        ["c1/victim-pod"], [pclass("low-priority", 100), pclass("high-priority-no-preempt", 1000, "Never"),
                            pclass("high-priority-can-preempt", 900)]),
        id="RECLAIM-08 second task reclaims when the first may not"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 10, "10G")], [q("q1", 1), q("q2", 9)],
        [group("c1/pg-victim", "q1", 0, "Running", prio="low-priority"),
         group("c1/pg-preemptor", "q2", 1, prio="low-priority")],
        [running("c1/victim-n1", "pg-victim", "n1", "2", "2G", preemptable=True), pending("c1/preemptor1", "pg-preemptor", "3", "3G")],
        [], pipelined={"c1/pg-preemptor": ["n1"]}), id="RECLAIM-09 no eviction when the node already has room"),
]

# ---- vclite's own ----------------------------------------------------------------------------------
# Jobs in creation order (no JobOrder), so a worse preemptor can come first.
T_BY_AGE = [[P("conformance", enablePreemptable=True), P("gang", enablePreemptable=True, enableJobStarving=True),
             P("priority", enableTaskOrder=True, enablePreemptable=True, enableJobStarving=True),
             P("proportion", enabledOverused=True, enableQueueOrder=True)]]


def pg_at(key, queue_name, prio, created):
    obj = group(key, queue_name, 1, prio=prio)
    obj["metadata"]["creationTimestamp"] = created
    return obj


# Without gang (whose JobStarving implies the job keeps all it has), a job may preempt its own tasks.
T_OWN_JOB = [[P("priority", enableTaskOrder=True, enableJobOrder=True, enablePreemptable=True, enableJobStarving=True),
              P("proportion", enabledOverused=True, enabledAllocatable=True, enableQueueOrder=True)]]
OWN = [
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("kube-system/low", "q1", 0, prio="low-priority"), group("kube-system/high", "q1", 1, prio="high-priority")],
        [running("kube-system/victim", "low", "n1", "2", "2G"), pending("kube-system/preemptor", "high", "2", "2G")],
        [], pipelined={}), id="CONF-01 conformance: kube-system pods are never preempted"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/low", "q1", 0, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [running("c1/victim", "low", "n1", "2", "2G", priority_class="system-node-critical"),
         pending("c1/preemptor", "high", "2", "2G")],
        [], pipelined={}), id="CONF-02 conformance: critical priority classes are never preempted"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/low", "q1", 0, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [_decorate(running("c1/victim", "low", "n1", "2", "2G", preemptable=False), True, None, True),
         pending("c1/preemptor", "high", "2", "2G")],
        ["c1/victim"], pipelined={"c1/high": ["n1"]}), id="ANNOT-01 the preemptable annotation wins over the label"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/low", "q1", 0, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [running("c1/victim", "low", "n1", "2", "2G", preemptable=False), pending("c1/preemptor", "high", "2", "2G")],
        [], pipelined={}), id="ANNOT-02 preemptable=false protects a pod"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1"), q("q2")],
        [group("c1/low", "q2", 0, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [running("c1/victim", "low", "n1", "2", "2G"), pending("c1/preemptor", "high", "2", "2G")],
        [], pipelined={}), id="SCOPE-01 preempt never crosses queues"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/low", "q1", 0, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [running("c1/victim", "low", "n1", "2", "2G"), pending("c1/preemptor", "high", "1", "1G")],
        ["c1/victim"], pipelined={"c1/high": ["n1"]}), id="PIPE-01 the preemptor is pipelined onto the releasing node"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/low", "q1", 2, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [running("c1/low-0", "low", "n1"), running("c1/low-1", "low", "n1"), pending("c1/high-0", "high")],
        [], pipelined={}), id="GANG-P preempt leaves a victim job its minMember"),
    pytest.param(preempt_case(
        [node("n1", 3, "3G")], [q("q1")],
        [group("c1/low", "q1", 2, prio="low-priority"), group("c1/high", "q1", 1, prio="high-priority")],
        [running("c1/low-0", "low", "n1"), running("c1/low-1", "low", "n1"), running("c1/low-2", "low", "n1"),
         pending("c1/high-0", "high", "2", "2G")],
        [], pipelined={}), id="GANG-P2 one victim allowed, two needed: nothing evicted"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 2, "2G")], [q("q1"), q("q2")],
        [group("c1/a", "q1", 2, "Running"), group("c1/b", "q2", 1)],
        [running("c1/a-0", "a", "n1"), running("c1/a-1", "a", "n1"), pending("c1/b-0", "b")],
        [], pipelined={}), id="GANG-R reclaim leaves a victim job its minMember"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/mid", "q1", 0, prio="high-priority"), group("c1/new", "q1", 1, prio="low-priority")],
        [running("c1/mid-0", "mid", "n1", "2", "2G"), pending("c1/new-0", "new", "2", "2G")],
        [], pipelined={}), id="PRIO-own-01 a job never preempts a job of higher priority"),
    pytest.param(preempt_case(
        [node("n1", 1, "1G")], [q("q1")], [group("c1/j", "q1", 0, prio="low-priority")],
        [running("c1/j-0", "j", "n1", priority=1000), pending("c1/j-1", "j", priority=100)],
        [], pipelined={}, tiers=T_OWN_JOB), id="PRIO-own-02 a task never preempts a higher-priority task of its job"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")], [group("c1/j", "q1", 0, prio="low-priority")],
        [running("c1/j-0", "j", "n1", priority=1), running("c1/j-1", "j", "n1", priority=1),
         pending("c1/j-2", "j", priority=100)],
        ["c1/j-1"], pipelined={"c1/j": ["n1"]}, tiers=T_OWN_JOB),
        id="PRIO-own-03 within a job: a higher-priority task evicts a lower one"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 3, "3G"), node("n2", 2, "2G")], [q("q1"), q("q2")],
        [group("c1/a", "q1", 0, "Running"), group("c1/b", "q2", 1)],
        [running("c1/a-0", "a", "n1"), running("c1/a-1", "a", "n1"), running("c1/a-2", "a", "n1"),
         running("c1/a-3", "a", "n2"), pending("c1/b-0", "b", "2", "2G")],
        ["c1/a-3"], pipelined={"c1/b": ["n2"]}),
        id="PROP-R proportion lets a queue lose only what it uses above its deserved share"),
    pytest.param(preempt_case(
        [node("n1", 4, "4G")], [q("q1")],
        [group("c1/low", "q1", 3, "Running", prio="low-priority"),
         pg_at("c1/a", "q1", "mid-priority", "2026-01-01T00:00:00Z"), pg_at("c1/b", "q1", "mid-priority", "2026-01-01T00:00:01Z")],
        [running(f"c1/low-{i}", "low", "n1") for i in range(4)] + [pending("c1/a-0", "a", "2", "2G"), pending("c1/b-0", "b")],
        ["c1/low-3"], pipelined={"c1/b": ["n1"]}, tiers=T_BY_AGE, classes=PRIO + [pclass("mid-priority", 1000)]),
        id="MEMO-01 a node hopeless for a big preemptor is still tried for a smaller one"),
    pytest.param(preempt_case(
        [node("n1", 2, "2G")], [q("q1")],
        [group("c1/mid", "q1", 0, "Running", prio="mid-priority"),
         pg_at("c1/a", "q1", "low-priority", "2026-01-01T00:00:00Z"), pg_at("c1/b", "q1", "high-priority", "2026-01-01T00:00:01Z")],
        [running("c1/mid-0", "mid", "n1", "2", "2G"), pending("c1/a-0", "a", "2", "2G"), pending("c1/b-0", "b", "2", "2G")],
        ["c1/mid-0"], pipelined={"c1/b": ["n1"]}, tiers=T_BY_AGE, classes=PRIO + [pclass("mid-priority", 1000)]),
        id="MEMO-02 a node hopeless for a low-priority preemptor is still tried for a high one"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 3, "3Gi")], [q("q1", reclaimable=False), q("q2")],
        [group("c1/pg1", "q1", 1, prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        THREE_RUNNING, [], pipelined={}), id="RECLAIM-own-01 a queue with reclaimable: false keeps its pods"),
    pytest.param(reclaim_case(
        CGP, [node("n1", 3, "3Gi")], [q("q1"), q("q2")],
        [group("c1/pg1", "q1", 1, prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")],
        [running("c1/preemptee1", "pg1", "n1", preemptable=False), running("c1/preemptee2", "pg1", "n1", preemptable=True),
         running("c1/preemptee3", "pg1", "n1", preemptable=False), pending("c1/preemptor1", "pg2", "2", "2G")],
        [], pipelined={}), id="RECLAIM-own-02 evictions discarded when the task still does not fit"),
]


@pytest.mark.parametrize("case", PREEMPT + RECLAIM + OWN)
def test_eviction_scenario(case: Case):
    result = run(case)
    assert result.evictions == case.evict
    if case.pipelined is not None:
        assert result.pipelined == case.pipelined


# ---- default configuration, several sessions --------------------------------------------------------
DEFAULT_WITH_EVICTION = conf.DEFAULT_CONF_YAML.replace('"enqueue, allocate, backfill"',
                                                       '"enqueue, allocate, preempt, reclaim, backfill"')


def _session(nodes, queues, pgs, pods, classes=()):
    state = snapshot.ClusterState(nodes=nodes, queues=queues, podgroups=pgs, pods=pods, priority_classes=list(classes))
    return session.run_session(state, conf.parse(DEFAULT_WITH_EVICTION), NOW)


def test_default_conf_preempts_then_binds_once_victims_are_gone():
    """Volcano's default tiers with preempt: the high-priority job evicts two low-priority pods,
    waits (pipelined) while they terminate, and is bound once they are gone."""
    nodes = [node("n1", 4, "8Gi")]
    queues = [q("default")]
    classes = [pclass("low", 10), pclass("high", 1000)]
    pgs = [group("ns/low", "default", 1, "Running", prio="low"), group("ns/high", "default", 1, prio="high")]
    low = [running(f"ns/low-{i}", "low", "n1") for i in range(4)]
    high = pending("ns/high-0", "high", "2", "1G")
    r1 = _session(nodes, queues, pgs, low + [high], classes)
    assert r1.evictions == ["ns/low-3", "ns/low-2"]
    assert r1.binds == {} and r1.pipelined == {"ns/high": ["n1"]}
    waiting = [c["message"] for c in r1.podgroup_status["ns/high"]["conditions"] if c["type"] == "Unschedulable"]
    assert waiting == ["1/1 tasks in gang unschedulable: pod group is not ready, 1 Pipelined, 1 minAvailable"]
    assert r1.pod_conditions["ns/high-0"] == ("Unschedulable", "Pod ns/high-0 can possibly be assigned to n1, once "
                                              "resource is released and minAvailable is satisfied", "n1")
    for p in low[2:]:
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"   # being deleted: Releasing
    r2 = _session(nodes, queues, pgs, low + [high], classes)
    assert r2.evictions == [] and r2.binds == {} and r2.pipelined == {"ns/high": ["n1"]}
    r3 = _session(nodes, queues, pgs, low[:2] + [high], classes)
    assert r3.evictions == [] and r3.binds == {"ns/high-0": "n1"}


def test_default_conf_reclaims_for_a_starving_queue():
    """q2 deserves half the node; reclaim takes two of q1's four pods back for q2's gang of two."""
    nodes = [node("n1", 4, "8Gi")]
    queues = [q("q1"), q("q2")]
    pgs = [group("ns/a", "q1", 1, "Running"), group("ns/b", "q2", 2)]
    pods = [running(f"ns/a-{i}", "a", "n1") for i in range(4)] + [pending(f"ns/b-{i}", "b") for i in range(2)]
    r = _session(nodes, queues, pgs, pods)
    assert r.evictions == ["ns/a-3", "ns/a-2"]
    assert r.pipelined == {"ns/b": ["n1", "n1"]}
    assert r.binds == {}


def test_reclaim_commits_nothing_when_gang_cannot_be_pipelined():
    """A gang of three in q2 can only be given room for two: JobPipelined rejects, every eviction
    is rolled back."""
    nodes = [node("n1", 4, "8Gi")]
    queues = [q("q1"), q("q2")]
    pgs = [group("ns/a", "q1", 2, "Running"), group("ns/b", "q2", 3)]
    pods = [running(f"ns/a-{i}", "a", "n1") for i in range(4)] + [pending(f"ns/b-{i}", "b") for i in range(3)]
    r = _session(nodes, queues, pgs, pods)
    assert r.evictions == [] and r.pipelined == {} and r.binds == {}


def test_backfill_does_not_bind_onto_a_slot_a_terminating_pod_holds():
    """Found by the over-commit property: a BestEffort pod needs a pod slot now, not once the
    terminating pod is gone."""
    nodes = [node("n1", 1, "1Gi", pods=1)]
    old = running("ns/old-0", "old", "n1", None, None)
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    state = snapshot.ClusterState(nodes, [q("q1")], [group("ns/old", "q1", 0, "Running"), group("ns/be", "q1", 0)],
                                  [old, pending("ns/be-0", "be", None, None)])
    tiers = [[P("predicates", enablePredicate=True)]]
    result = session.run_session(state, conf.build("allocate, backfill", tiers), NOW)
    assert result.binds == {}


HELM_TIERS = """
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: proportion},
            {name: nodeorder}, {name: binpack}]
"""


@pytest.mark.parametrize("tiers, evict", [
    pytest.param(yaml.safe_load(conf.DEFAULT_CONF_YAML)["tiers"], ["ns/high-1"], id="DRF-T2 default tiers"),
    pytest.param(yaml.safe_load(HELM_TIERS), [], id="DRF-T2 Helm tiers"),
])
def test_drf_in_tier_two_decides_when_priority_finds_no_victim(tiers, evict):
    """Volcano's combination rule: priority (tier 1) finds no victim among higher-priority pods,
    so its tier is undecided and drf (tier 2, preemptable on in the built-in default) picks one by
    share — a lower-priority job evicts a higher-priority pod (volcano-sh/volcano#2147). The Helm
    chart's configuration turns drf's (and gang's) preemptable off, and nothing is evicted."""
    nodes = [node("n1", 2, "8Gi")]
    pgs = [group("ns/high", "default", 0, "Running", prio="high"), group("ns/low", "default", 1, prio="low")]
    pods = [running("ns/high-0", "high", "n1"), running("ns/high-1", "high", "n1"), pending("ns/low-0", "low")]
    state = snapshot.ClusterState(nodes, [q("default")], pgs, pods, [pclass("low", 10), pclass("high", 1000)])
    result = session.run_session(state, conf.parse({"actions": "enqueue, allocate, preempt", "tiers": tiers}), NOW)
    assert result.evictions == evict


def _vcjob(name, replicas, cpu, prio):
    return f"""---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  schedulerName: volcano
  priorityClassName: {prio}
  tasks:
    - name: main
      replicas: {replicas}
      template:
        spec:
          priorityClassName: {prio}
          restartPolicy: Never
          containers:
            - {{name: main, image: busybox, command: [sleep, "1000"], resources: {{requests: {{cpu: "{cpu}"}}}}}}
"""


def test_embedded_high_priority_vcjob_preempts_and_runs():
    """The whole control plane on a virtual clock: the scheduler evicts two pods of the running
    low-priority vcjob (the shell deletes them, the vcjob controller recreates them, Pending), and
    the high-priority vcjob is bound and runs. Overcommit is left out: with it, Volcano's (and
    vclite's) enqueue would not even admit the job into a full cluster."""
    from tests.scenarios.test_embedded_control_plane import NODE, kubelet
    from vclite.api import kinds, meta, yamlio
    from vclite.lib import clock
    from vclite.runtime import runtime

    text = conf.DEFAULT_CONF_YAML.replace('"enqueue, allocate, backfill"', '"enqueue, allocate, preempt, backfill"')
    rt = runtime.Runtime(clock.VirtualClock(), nodes=[NODE], run_pods=False,
                         scheduler_config=conf.parse(text.replace("  - name: overcommit\n", "")))
    rt.start()
    classes = "".join(f"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {n}}}\nvalue: {v}\n"
                      for n, v in (("low", 10), ("high", 1000)))
    for doc in yamlio.load_string(classes + _vcjob("low", 4, "1", "low"), "low.yaml"):
        rt.client.create(doc.obj)

    def steps(n):
        for _ in range(n):
            rt.settle()
            kubelet(rt, outcome=lambda pod: "Running")

    def pods():
        return sorted((meta.name(p), p["spec"].get("nodeName"), p["status"].get("phase"))
                      for p in rt.client.list(kinds.POD))

    steps(4)
    assert pods() == [(f"low-main-{i}", "n1", "Running") for i in range(4)]
    for doc in yamlio.load_string(_vcjob("high", 1, "2", "high"), "high.yaml"):
        rt.client.create(doc.obj)
    steps(6)
    assert pods() == [("high-main-0", "n1", "Running"), ("low-main-0", "n1", "Running"),
                      ("low-main-1", "n1", "Running"), ("low-main-2", None, "Pending"), ("low-main-3", None, "Pending")]
    assert {meta.name(j): meta.phase(j) for j in rt.client.list(kinds.JOB)} == {"high": "Running", "low": "Running"}


def test_volcano_pod_anti_affinity_evicts_the_pod_that_blocks():
    """predicates_test.go TestPodAntiAffinity ("pod-anti-affinity"): allocate then preempt with
    enableTopologyAwarePreemption. n1 (2 pod slots) runs worker-1 (role worker, required anti-affinity to other
    workers per hostname) and worker-2, both of the low-priority job pg1; the high-priority worker-3 has the same
    anti-affinity. Priority offers both (their job's priority is lower); the dry run finds that without worker-1
    worker-3 fits, and reprieves worker-2: worker-1 is evicted, worker-3 pipelined on n1.

    Differs on purpose (docs/differences.md): upstream's test expects nothing evicted, because its
    SimulateRemoveTaskFn/SimulateAddTaskFn run only for plugins with enablePreemptable or enableAllocatable, which
    the test's predicates lacks (tiers built in code leave flags off): the inter-pod affinity state of the dry run
    never loses worker-1, so no victim set ever lets worker-3 in. A YAML configuration turns those flags on, and
    upstream then evicts worker-1 as here (its e2e "should preempt low priority pod with anti-affinity
    constraint")."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
         "topologyKey": "kubernetes.io/hostname"}]}}
    w1 = running("ns1/worker-1", "pg1", "n1", "3", "3G", priority=100000)
    w1["metadata"]["labels"] = {"role": "worker"}
    w1["spec"]["affinity"] = anti
    w2 = running("ns1/worker-2", "pg1", "n1", "3", "3G", priority=10)
    w3 = pending("ns1/worker-3", "pg2", "3", "3G", priority=100000)
    w3["metadata"]["labels"] = {"role": "worker"}
    w3["spec"]["affinity"] = anti
    n1 = node("n1", 12, "12G", pods=2, labels={"kubernetes.io/hostname": "node1"})
    case = Case([[P("predicates", enablePredicate=True), P("priority", enablePreemptable=True,
                                                             enableJobStarving=True)]],
                "allocate, preempt", [n1], [q("q1", weight=0, cap=("9", "9G"))],
                [group("ns1/pg1", "q1", 0, "Running", prio="low-priority"),
                 group("ns1/pg2", "q1", 1, prio="high-priority")], [w1, w2, w3], [], {},
                [pclass("high-priority", 100000), pclass("low-priority", 10)], configurations=aware())
    result = run(case)
    assert (result.evictions, result.pipelined, result.binds) == (["ns1/worker-1"], {"ns1/pg2": ["n1"]}, {})
