"""Which watch events wake the scheduler (event-driven: no periodic sessions)."""
from __future__ import annotations

import copy

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.scheduler import conf, triggers

E = client_mod.EventType
POD = {"metadata": {"name": "p", "namespace": "ns", "annotations": {"scheduling.k8s.io/group-name": "g"}},
       "spec": {"schedulerName": "volcano"}, "status": {"phase": "Pending"}}
BOUND = {**POD, "spec": {"schedulerName": "volcano", "nodeName": "n1"}}
OTHER = {**POD, "spec": {"schedulerName": "default-scheduler"}}


def changed(obj, path, value):
    out = copy.deepcopy(obj)
    cur = out
    for p in path[:-1]:
        cur = cur.setdefault(p, {})
    cur[path[-1]] = value
    return out


def ev(kind, type_, obj, old=None):
    return client_mod.WatchEvent(type_, kind, obj, old)


PG = {"metadata": {"name": "g", "namespace": "ns"}, "spec": {"minMember": 1}, "status": {"phase": "Pending"}}
Q = {"metadata": {"name": "q"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
RQ = {"metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": {"pods": "2"}},
      "status": {"hard": {"pods": "2"}, "used": {"pods": "1"}}}
NODE = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4"},
                                               "conditions": [{"type": "Ready", "status": "True"}]}}
PDB = {"metadata": {"name": "b", "namespace": "ns"}, "spec": {"minAvailable": 1},
       "status": {"disruptionsAllowed": 0, "currentHealthy": 1}}

NUMA = {"metadata": {"name": "node-1"}, "spec": {"numares": {"cpu": {"allocatable": "0-3"}}}}

@pytest.mark.parametrize("event, wakes", [
    pytest.param(ev(kinds.POD, E.ADDED, POD), True, id="our pending pod created"),
    pytest.param(ev(kinds.POD, E.ADDED, OTHER), False, id="other scheduler's unbound pod created"),
    pytest.param(ev(kinds.POD, E.MODIFIED, BOUND, POD), True, id="pod bound (phase follows next session)"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(BOUND, ["status", "phase"], "Succeeded"), BOUND), True,
                 id="pod finished: resources freed"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(BOUND, ["metadata", "deletionTimestamp"], "t"), BOUND), True,
                 id="pod being deleted: releasing"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(BOUND, ["status", "conditions"], [{"type": "PodScheduled"}]),
                    BOUND), False, id="our own PodScheduled condition"),
    pytest.param(ev(kinds.POD, E.DELETED, BOUND), True, id="bound pod deleted"),
    pytest.param(ev(kinds.POD, E.DELETED, OTHER), False, id="other scheduler's unbound pod deleted"),
    pytest.param(ev(kinds.PODGROUP, E.ADDED, PG), True, id="podgroup created"),
    pytest.param(ev(kinds.PODGROUP, E.DELETED, PG), True, id="pending podgroup deleted"),
    pytest.param(ev(kinds.PODGROUP, E.DELETED, changed(PG, ["status", "phase"], "Inqueue")), True,
                 id="inqueue podgroup deleted (frees its reservation)"),
    pytest.param(ev(kinds.PODGROUP, E.DELETED, changed(PG, ["status", "phase"], "Running")), True,
                 id="running podgroup deleted"),
    pytest.param(ev(kinds.PODGROUP, E.DELETED, changed(PG, ["status", "phase"], "Completed")), False,
                 id="completed podgroup deleted (a finished job's clean-up)"),
    pytest.param(ev(kinds.PODGROUP, E.MODIFIED, changed(PG, ["status", "conditions"], [{"type": "X"}]), PG), False,
                 id="podgroup conditions only"),
    pytest.param(ev(kinds.PODGROUP, E.MODIFIED, changed(PG, ["spec", "minMember"], 2), PG), True,
                 id="podgroup spec changed"),
    pytest.param(ev(kinds.QUEUE, E.MODIFIED, changed(Q, ["status", "allocated"], {"cpu": "1"}), Q), False,
                 id="queue allocated written by us"),
    pytest.param(ev(kinds.QUEUE, E.MODIFIED, changed(Q, ["status", "state"], "Closed"), Q), True,
                 id="queue closed"),
    pytest.param(ev(kinds.NODE, E.ADDED, NODE), True, id="node added"),
    pytest.param(ev(kinds.NODE, E.MODIFIED, changed(NODE, ["status", "conditions"],
                                                    [{"type": "Ready", "status": "True", "lastHeartbeatTime": "x"}]),
                    NODE), False, id="node heartbeat"),
    pytest.param(ev(kinds.NODE, E.MODIFIED, changed(NODE, ["spec", "unschedulable"], True), NODE), True,
                 id="node cordoned"),
    pytest.param(ev(kinds.PRIORITYCLASS, E.ADDED, {"metadata": {"name": "high"}, "value": 10}), True,
                 id="priority class"),
    pytest.param(ev(kinds.PODDISRUPTIONBUDGET, E.ADDED, PDB), True, id="budget created"),
    pytest.param(ev(kinds.PODDISRUPTIONBUDGET, E.MODIFIED, changed(PDB, ["status", "disruptionsAllowed"], 1), PDB),
                 True, id="budget allows another disruption"),
    pytest.param(ev(kinds.PODDISRUPTIONBUDGET, E.MODIFIED, changed(PDB, ["status", "currentHealthy"], 2), PDB),
                 False, id="budget counts only"),
    pytest.param(ev(kinds.RESOURCEQUOTA, E.ADDED, RQ), True, id="quota created"),
    pytest.param(ev(kinds.RESOURCEQUOTA, E.DELETED, RQ), True, id="quota deleted"),
    pytest.param(ev(kinds.RESOURCEQUOTA, E.MODIFIED, changed(RQ, ["status", "used", "pods"], "0"), RQ), True,
                 id="quota used changed (a pod gave back what it used)"),
    pytest.param(ev(kinds.RESOURCEQUOTA, E.MODIFIED, changed(RQ, ["spec", "hard", "pods"], "9"), RQ), False,
                 id="quota spec alone (the plugin reads status.hard, which its controller writes next)"),
    pytest.param(ev(kinds.NUMATOPOLOGY, E.ADDED, NUMA), True, id="numatopology created"),
    pytest.param(ev(kinds.NUMATOPOLOGY, E.MODIFIED, changed(NUMA, ["spec", "numares", "cpu", "allocatable"], "0-1"),
                    NUMA), True, id="numatopology free CPUs changed"),
    pytest.param(ev(kinds.NUMATOPOLOGY, E.MODIFIED, changed(NUMA, ["metadata", "labels"], {"a": "b"}), NUMA), False,
                 id="numatopology labels only"),
    pytest.param(ev(kinds.JOB, E.ADDED, {"metadata": {"name": "j"}}), False, id="kinds not watched"),
])
def test_wakes_scheduler(event, wakes):
    assert triggers.wakes_scheduler(event) is wakes


RUNNING = changed(BOUND, ["status", "phase"], "Running")
U = triggers.Wake


@pytest.mark.parametrize("event, want", [
    pytest.param(ev(kinds.POD, E.ADDED, POD), U.NOW, id="pending pod to place"),
    pytest.param(ev(kinds.POD, E.MODIFIED, BOUND, POD), U.LATER, id="bound: bookkeeping only"),
    pytest.param(ev(kinds.POD, E.MODIFIED, RUNNING, BOUND), U.LATER, id="started on its node"),
    pytest.param(ev(kinds.POD, E.MODIFIED, RUNNING, POD), U.LATER, id="bound and started at once"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(RUNNING, ["status", "phase"], "Succeeded"), RUNNING), U.NOW,
                 id="finished: frees its node"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(RUNNING, ["status", "phase"], "Failed"), BOUND), U.NOW,
                 id="failed"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(RUNNING, ["metadata", "deletionTimestamp"], "t"), RUNNING),
                 U.NOW, id="being deleted"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(BOUND, ["spec", "nodeName"], "n2"), BOUND), U.NOW,
                 id="moved to another node"),
    pytest.param(ev(kinds.POD, E.MODIFIED, POD, RUNNING), U.NOW, id="back to pending, unbound"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(RUNNING, ["status", "conditions"], [{"type": "Ready"}]),
                    RUNNING), U.NONE, id="conditions only"),
    pytest.param(ev(kinds.POD, E.DELETED, RUNNING), U.NOW, id="deleted"),
    pytest.param(ev(kinds.POD, E.MODIFIED, changed(POD, ["spec", "schedulingGates"], [{"name": "a"}]),
                    changed(POD, ["spec", "schedulingGates"], [{"name": "b"}, {"name": "a"}])), U.NOW,
                 id="one of two gates removed: Volcano may now remove its own"),
    pytest.param(ev(kinds.POD, E.MODIFIED, POD, changed(POD, ["spec", "schedulingGates"], [{"name": "a"}])), U.NOW,
                 id="last gate removed"),
])
def test_urgency(event, want):
    assert triggers.urgency(event) == want


USED = changed(RQ, ["status", "used", "pods"], "0")


@pytest.mark.parametrize("event", [
    pytest.param(ev(kinds.RESOURCEQUOTA, E.ADDED, RQ), id="quota created"),
    pytest.param(ev(kinds.RESOURCEQUOTA, E.DELETED, RQ), id="quota deleted"),
    pytest.param(ev(kinds.RESOURCEQUOTA, E.MODIFIED, USED, RQ), id="quota used changed"),
])
def test_quota_events_wake_only_a_scheduler_that_reads_quotas(event):
    assert (triggers.wakes_scheduler(event, quotas=True), triggers.wakes_scheduler(event, quotas=False)) == \
        (True, False)


EXTENDER = {"name": "extender", "arguments": {"extender.urlPrefix": "http://127.0.0.1:8713"}}


@pytest.mark.parametrize("plugins, reads", [
    pytest.param([{"name": "gang"}, {"name": "proportion"}], False, id="default-like: nothing reads quotas"),
    pytest.param([{"name": "gang"}, {"name": "resourcequota"}], True, id="the resourcequota plugin"),
    pytest.param([{**EXTENDER, "arguments": {**EXTENDER["arguments"], "extender.predicateVerb": "filter"}}], False,
                 id="an extender without session open: it is never told the quotas"),
    pytest.param([{**EXTENDER, "arguments": {**EXTENDER["arguments"], "extender.onSessionOpenVerb": "open"}}], True,
                 id="an extender told the quotas at session open"),
])
def test_reads_quotas(plugins, reads):
    assert triggers.reads_quotas(conf.parse({"actions": "enqueue, allocate", "tiers": [{"plugins": plugins}]})) is reads
