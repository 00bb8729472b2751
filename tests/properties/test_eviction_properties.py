"""Eviction properties over random clusters (Hypothesis), with Volcano's default tiers (every
flag on, as parsed from YAML) and the eviction actions:
- a statement that evicted, pipelined and merged node statements, once discarded, leaves the
  session exactly as a freshly opened one (node columns, task statuses and nodes, job books,
  proportion and drf accounting);
- preempt never evicts a pod of higher priority than the preemptor (another job's pod: of a
  lower job priority; the preemptor's own job: of a lower task priority) — with Volcano's Helm
  tiers (gang and drf with enablePreemptable: false). With the built-in default tiers it does not
  hold, in Volcano as here: when priority (tier 1) finds no victim, its tier is undecided and drf
  (tier 2) may choose pods of equal or higher priority (volcano-sh/volcano#2147; scenario DRF-T2);
- remembering hopeless nodes (actions/victims.py Hopeless) changes no decision;
- no node is over-committed after evictions, binds and pipelined reservations: what is bound
  fits now, and what will be there once evicted and deleting pods are gone fits too."""
from __future__ import annotations

import datetime as dt

import numpy as np
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import scheduler_confs
from vclite.api import batch, resources
from vclite.scheduler import conf, registry
from vclite.scheduler.framework import hooks, plugin, session, snapshot
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import drf, proportion

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
TaskStatus = tasks_mod.TaskStatus
CLASSES = [{"metadata": {"name": n}, "value": v} for n, v in (("low", 10), ("mid", 100), ("high", 1000))]


HELM_TIERS = scheduler_confs.HELM_TIERS


def default_conf(actions, tiers=conf.DEFAULT_CONF_YAML):
    loaded = yaml.safe_load(tiers)
    return conf.parse({"actions": actions, "tiers": loaded["tiers"] if isinstance(loaded, dict) else loaded})


def _pod(name, group, cpu_m, mem_mi, node=None, deleting=False, preemptable=None, priority=None, never=False):
    md = {"name": name, "namespace": "ns", "uid": name, "annotations": {batch.GROUP_NAME: group}}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if preemptable is not None:
        md["annotations"][batch.PREEMPTABLE] = "true" if preemptable else "false"
    requests = {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"} if cpu_m else {}
    spec = {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    if never:
        spec["preemptionPolicy"] = "Never"
    return {"metadata": md, "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


@st.composite
def clusters(draw):
    nodes = []
    for i in range(draw(st.integers(1, 4))):
        nodes.append({"metadata": {"name": f"n{i}"}, "status": {"allocatable": {
            "cpu": str(draw(st.integers(1, 6))), "memory": f"{draw(st.integers(1, 8))}Gi",
            "pods": str(draw(st.integers(1, 6)))}}})
    queues = [{"metadata": {"name": f"q{i}"}, "spec": {"weight": draw(st.integers(1, 3))}, "status": {"state": "Open"}}
              for i in range(draw(st.integers(1, 3)))]
    free = {n["metadata"]["name"]: [int(n["status"]["allocatable"]["cpu"]) * 1000,
                                    int(n["status"]["allocatable"]["memory"][:-2]) * 1024,
                                    int(n["status"]["allocatable"]["pods"])] for n in nodes}
    pgs, pods = [], []
    for j in range(draw(st.integers(2, 6))):
        group = f"g{j}"
        n_tasks = draw(st.integers(1, 4))
        running = j % 2 == 0 or draw(st.booleans())
        pgs.append({"metadata": {"name": group, "namespace": "ns"},
                    "spec": {"queue": draw(st.sampled_from(queues))["metadata"]["name"],
                             "minMember": draw(st.integers(0, n_tasks)),
                             "priorityClassName": draw(st.sampled_from(["low", "mid", "high"]))},
                    "status": {"phase": "Running" if running else "Inqueue"}})
        for t in range(n_tasks):
            best_effort = draw(st.integers(0, 9)) == 0
            cpu, mem = (0, 0) if best_effort else (draw(st.integers(250, 3000)), draw(st.integers(64, 4096)))
            node = None
            if running and draw(st.integers(0, 4)):   # mostly placed already, only where it fits
                for name, f in free.items():
                    if f[0] >= cpu and f[1] >= mem and f[2] >= 1:
                        f[0], f[1], f[2], node = f[0] - cpu, f[1] - mem, f[2] - 1, name
                        break
            pods.append(_pod(f"{group}-{t}", group, cpu, mem, node=node,
                             deleting=bool(node) and draw(st.integers(0, 5)) == 0,
                             preemptable=draw(st.sampled_from([None, None, True, False])),
                             priority=draw(st.sampled_from([None, 1, 5])),
                             never=not node and draw(st.integers(0, 5)) == 0))
    return snapshot.ClusterState(nodes, queues, pgs, pods, CLASSES)


def _books(ssn):
    """Everything a statement touches, in comparable form."""
    prop = next(p for p in ssn.plugins if isinstance(p, proportion.Proportion))
    fair = next(p for p in ssn.plugins if isinstance(p, drf.Drf))
    return {
        "nodes": {k: v.tolist() for k, v in ssn.nodes.copy_arrays().items()},
        "tasks": {t.uid: (t.status, t.node) for j in ssn.jobs.values() for t in j.tasks.values()},
        "index": {j.uid: {s: sorted(ts) for s, ts in j.index.items() if ts} for j in ssn.jobs.values()},
        "jobs": {j.uid: j.allocated.tolist() for j in ssn.jobs.values()},
        "proportion": {k: (a.allocated.tolist(), a.share) for k, a in prop.attrs.items()},
        "drf": ({k: v.tolist() for k, v in fair.allocated.items()}, dict(fair.shares)),
    }


@settings(max_examples=60, deadline=None)
@given(clusters(), st.randoms(use_true_random=False))
def test_discarded_statement_with_evictions_restores_the_snapshot(state, rnd):
    fresh = _books(session.open_session(state, default_conf("preempt"), NOW))
    ssn = session.open_session(state, default_conf("preempt"), NOW)
    stmt = ssn.statement()
    tasks = [t for j in ssn.jobs.values() for t in j.tasks.values()]
    rnd.shuffle(tasks)
    for t in tasks:
        node_stmt = ssn.statement()
        if t.status in (TaskStatus.RUNNING, TaskStatus.BOUND) and t.node in ssn.nodes.index:
            node_stmt.evict(t, "preempt")
        elif t.status == TaskStatus.PENDING and len(ssn.nodes):
            node_stmt.pipeline(t, rnd.randrange(len(ssn.nodes)))
        (stmt.merge if rnd.random() < 0.7 else lambda s: s.discard())(node_stmt)
    assert _books(ssn) != fresh or not stmt.operations
    stmt.discard()
    assert _books(ssn) == fresh


def _after(state, actions, tiers=conf.DEFAULT_CONF_YAML):
    ssn = session.open_session(state, default_conf(actions, tiers), NOW)
    session.run_actions(ssn)
    return ssn, session.close_session(ssn)


@settings(max_examples=80, deadline=None)
@given(clusters())
def test_preempt_never_evicts_higher_priority(state):
    ssn, result = _after(state, "enqueue, allocate, preempt", HELM_TIERS)
    tasks = {t.key: t for j in ssn.jobs.values() for t in j.tasks.values()}
    pipelined = [t for t in tasks.values() if t.status == TaskStatus.PIPELINED]
    for key in result.evictions:
        v = tasks[key]
        vj = ssn.jobs[v.job]
        assert any((t.job != v.job and ssn.jobs[t.job].queue == vj.queue and ssn.jobs[t.job].priority > vj.priority)
                   or (t.job == v.job and t.priority > v.priority) for t in pipelined), key


@settings(max_examples=80, deadline=None)
@given(clusters())
def test_no_node_overcommitted_after_evictions_and_pipelines(state):
    ssn, result = _after(state, "enqueue, allocate, preempt, reclaim, backfill")
    evicted = set(result.evictions)
    pipelined = [t for j in ssn.jobs.values() for t in j.tasks_in(TaskStatus.PIPELINED)]
    pods = {f"ns/{p['metadata']['name']}": p for p in state.pods}
    for n in state.nodes:
        name = n["metadata"]["name"]
        alloc = resources.from_resource_list(n["status"]["allocatable"])
        now: dict = {}
        later: dict = {}
        for key, p in pods.items():
            req = resources.pod_requests(p)
            on = p["spec"].get("nodeName") or result.binds.get(key)
            if on != name:
                continue
            now = resources.add(now, req)
            if key not in evicted and not p["metadata"].get("deletionTimestamp"):
                later = resources.add(later, req)
        for t in pipelined:
            if t.node == name:
                later = resources.add(later, resources.pod_requests(pods[t.key]))
        assert resources.less_equal(now, alloc), (name, now, alloc)
        assert resources.less_equal(later, alloc), (name, later, alloc)


class Abstainer:
    """Registers Preemptable and Reclaimable functions without a key that always abstain: the
    verdicts are unchanged, but preempt and reclaim can no longer remember hopeless nodes."""
    name = "abstainer"
    Arguments = plugin.NoArguments

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.PREEMPTABLE, lambda evictor, candidates: None)
        reg.add(hooks.Point.RECLAIMABLE, lambda evictor, candidates: None)

    def on_session_close(self, ssn):
        pass


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_remembering_hopeless_nodes_changes_nothing(state):
    actions = "enqueue, allocate, preempt, reclaim, backfill"
    tiers = yaml.safe_load(conf.DEFAULT_CONF_YAML)["tiers"]
    plain = session.run_session(state, conf.parse({"actions": actions, "tiers": tiers}), NOW)
    tiers[0]["plugins"].append({"name": "abstainer"})
    reg = registry.default_registry().with_plugins(Abstainer)
    unremembered = session.run_session(state, conf.parse({"actions": actions, "tiers": tiers}, registry=reg), NOW)
    assert plain == unremembered
