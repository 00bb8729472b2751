"""An allocate handler that refuses allocations (statement.Refused, as deviceshare does when no card fits) leaves
every session consistent (Hypothesis), over the eviction properties' random clusters with allocate, preempt,
reclaim and backfill, in Volcano's default tiers and in the Helm chart's:
- no bind, reservation or task placed by the session is on a node refused for it (the refusal is undone at
  once, wherever it happened: allocate, a preemptor's or a reclaimer's reservation, backfill);
- the node columns are the snapshot's changed by exactly the tasks whose status or node the session changed
  (nothing half-undone: idle, used, releasing, pipelined);
- a task the session did not place has no node; a gang with new binds is whole (bound, reserved and pending
  BestEffort pods reach minAvailable);
- every refused pod that is still Pending and whose gang is not waiting as a whole is told why
  (PodScheduled=False naming the refusal);
- the close, which looks only at the jobs a refusal touched, tells the pods exactly what (and in the order)
  a close walking every job tells them."""
from __future__ import annotations

import datetime as dt
import zlib

import numpy as np
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import scheduler_confs
from vclite.scheduler import conf, registry
from vclite.scheduler.framework import hooks, plugin, session, statement
from vclite.scheduler.framework import status as status_mod
from vclite.scheduler.framework import tasks as tasks_mod

from .test_eviction_properties import clusters

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
ACTIONS = "enqueue, allocate, preempt, reclaim, backfill"
TaskStatus = tasks_mod.TaskStatus
_NEW = (TaskStatus.ALLOCATED, TaskStatus.PIPELINED)


def refused(key: str, node: str, salt: int) -> bool:
    return zlib.crc32(f"{salt}/{key}/{node}".encode()) % 3 == 0


class Refuser:
    """Refuses a new allocation or reservation of a fixed set of (pod, node) pairs; counts what it was told."""
    name = "refuser"
    Arguments = plugin.NoArguments
    salt = 0

    def __init__(self, arguments):
        self.held: dict[str, str] = {}   # uid -> node of what it accepted and was not told is undone

    def on_session_open(self, ssn, reg):
        reg.add(hooks.Point.ALLOCATE_EVENT, self.allocated)
        reg.add(hooks.Point.DEALLOCATE_EVENT, self.deallocated)

    def allocated(self, task):
        if task.status in _NEW and refused(task.key, task.node, self.salt):
            return statement.Refused(f"no card for {task.key}")
        self.held[task.uid] = task.node
        return None

    def deallocated(self, task):
        self.held.pop(task.uid, None)

    def on_session_close(self, ssn):
        pass


def _conf(tiers_yaml: str, salt: int):
    tiers = yaml.safe_load(tiers_yaml)
    tiers = tiers["tiers"] if isinstance(tiers, dict) else tiers
    tiers[-1]["plugins"].append({"name": "refuser"})
    cls = type("Refuser", (Refuser,), {"salt": salt})
    return conf.parse({"actions": ACTIONS, "tiers": tiers}, registry=registry.default_registry().with_plugins(cls))


@settings(max_examples=100, deadline=None)
@given(clusters(), st.integers(0, 1000), st.sampled_from([conf.DEFAULT_CONF_YAML, scheduler_confs.HELM_TIERS]))
def test_a_refused_allocation_leaves_the_session_consistent(state, salt, tiers):
    c = _conf(tiers, salt)
    fresh = session.open_session(state, c, NOW)
    before = {t.uid: (t.status, t.node) for j in fresh.jobs.values() for t in j.tasks.values()}
    ssn = session.open_session(state, c, NOW)
    session.run_actions(ssn)
    tasks = {t.uid: t for j in ssn.jobs.values() for t in j.tasks.values()}

    # the node columns: the snapshot's, changed by exactly the tasks the session moved
    want = fresh.nodes
    for uid, t in tasks.items():
        old_status, old_node = before[uid]
        if (old_status, old_node) == (t.status, t.node):
            continue
        if old_node and old_status in tasks_mod.OCCUPYING_STATUS:
            want.remove_task(want.index[old_node], t.req, old_status)
        if t.node and t.status in tasks_mod.OCCUPYING_STATUS:
            want.add_task(want.index[t.node], t.req, TaskStatus.ALLOCATED if t.status == TaskStatus.BINDING
                          else t.status)
    got = ssn.nodes.copy_arrays()
    for name, arr in want.copy_arrays().items():
        assert np.allclose(arr, got[name]), name

    for uid, t in tasks.items():
        if before[uid][0] == TaskStatus.PENDING:
            assert (t.status == TaskStatus.PENDING) == (t.node == ""), (t.key, t.status, t.node)
            if t.node:
                assert not refused(t.key, t.node, salt), (t.key, t.status, t.node)

    result = session.close_session(ssn)
    for key, node in result.binds.items():
        assert not refused(key, node, salt), (key, node)
    for job_uid, nodes in result.pipelined.items():
        job = ssn.jobs[job_uid]
        for t in job.tasks_in(TaskStatus.PIPELINED):
            assert not refused(t.key, t.node, salt)
    for job in ssn.jobs.values():
        if any(t.key in result.binds for t in job.tasks.values()):
            # (ready, reserved and pending BestEffort pods count: allocate commits when Volcano's IsReady holds,
            # counting a BestEffort pod that preempt may reserve later in the session; and a member preempt or
            # reclaim evicted after the commit counts: in Volcano's tiers a tier whose priority plugin finds no
            # victim defers to the next one, where gang has no say, so a whole gang's member may be evicted)
            evicted = sum(1 for t in job.tasks.values()
                          if t.status is TaskStatus.RELEASING and before[t.uid][0] is not TaskStatus.RELEASING)
            assert job.is_pipelined() or job.waiting_task_num() + job.n_ready + job.n_pending_best_effort + evicted \
                >= job.min_available, job.uid
    for uid in (uid for uids in ssn.refused.values() for uid in uids):
        t = tasks[uid]
        if t.status != TaskStatus.PENDING or t.pod.get("status", {}).get("conditions"):
            continue
        job = ssn.jobs[t.job]
        if job.uid not in ssn.unschedulable_now:
            assert t.key in result.pod_conditions, t.key


def _told_by_walking_every_job(ssn) -> dict:
    """The pods' conditions as the close computed them before it looked only at what refusals touched: every job
    whose gang waits as a whole tells its waiting pods; every other job is walked for its pods still Pending that
    were refused (any job's refusal) or that allocate could not place this session (fit errors, a plugin's note)."""
    out: dict = {}
    refused = {uid for uids in ssn.refused.values() for uid in uids}
    for job in ssn.jobs.values():
        if job.uid in ssn.unschedulable_now:
            only = None
        else:
            only = refused | set(job.nodes_fit_errors) | set(job.task_notes)
            if not only:
                continue
        base = status_mod.base_error_message(job)
        for status in status_mod.WAITING_TASKS:
            for task in (job.index.get(status) or {}).values():
                if only is not None and (task.uid not in only or task.status != TaskStatus.PENDING):
                    continue
                why = status_mod.task_scheduling_reason(job, task, base)
                if status_mod.pod_scheduled_differs(task.pod, *why):
                    out[task.key] = why
    return out


@settings(max_examples=100, deadline=None)
@given(clusters(), st.integers(0, 1000), st.sampled_from([conf.DEFAULT_CONF_YAML, scheduler_confs.HELM_TIERS]))
def test_the_close_tells_the_pods_what_walking_every_job_tells_them(state, salt, tiers):
    ssn = session.open_session(state, _conf(tiers, salt), NOW)
    session.run_actions(ssn)
    result = session.close_session(ssn)
    assert list(result.pod_conditions.items()) == list(_told_by_walking_every_job(ssn).items())
