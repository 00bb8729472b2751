"""Partitions and minSubGroups (Volcano's CheckSubJobValid / CheckSubJobReady / CheckSubJobPipelined)."""
from __future__ import annotations

import pytest

from vclite.scheduler.framework import snapshot, subgroups
from vclite.scheduler.framework import tasks as tasks_mod
from vclite.scheduler.plugins import gang

from .. import objects

S = tasks_mod.TaskStatus
R, P, Q, PL = S.RUNNING, S.PENDING, S.PIPELINED, "pending-best-effort"


def job(statuses: list, min_sub_groups: int | None = 2, size: int | None = 2, part_of=lambda i: i // 2):
    """One pod per status, pod i in partition part_of(i) of policy `p` (label `part`); None: no such label."""
    group = objects.pg("ns/g", min_member=1)
    policy = {"name": "p", "matchLabelKeys": ["part"]}
    if min_sub_groups is not None:
        policy["minSubGroups"] = min_sub_groups
    if size is not None:
        policy["subGroupSize"] = size
    group["spec"]["subGroupPolicy"] = [policy, {"name": "other", "matchLabelKeys": ["other"]}]
    pods = []
    for i, s in enumerate(statuses):
        best_effort = s == PL
        p = objects.pod(f"ns/t-{i}", "g", cpu=None if best_effort else "1", mem=None if best_effort else "1Gi")
        if part_of(i) is not None:
            p["metadata"]["labels"] = {"part": str(part_of(i))}
        pods.append(p)
    j = snapshot.build(objects.state(podgroups=[group], pods=pods)).jobs["ns/g"]
    for i, s in enumerate(statuses):
        j.update_task_status(j.tasks[f"ns/t-{i}"], S.PENDING if s == PL else s)
    return j


@pytest.mark.parametrize("statuses, kwargs, valid, ready, pipelined", [
    pytest.param([R, R, R, R], {}, True, True, True, id="two ready partitions of two"),
    pytest.param([R, R, R, P], {}, True, False, False, id="one partition short of its size"),
    pytest.param([R, R, R, Q], {}, True, False, True, id="a pipelined task makes it pipelined only"),
    pytest.param([R, R, R, PL], {}, True, True, True, id="a pending BestEffort task counts"),
    pytest.param([R, R], {}, False, False, False, id="one partition of the two required"),
    pytest.param([R, R, P, P, R, R], {}, True, True, True, id="any two of three partitions"),
    pytest.param([R, R, P], {"size": None, "part_of": lambda i: i}, True, True, True, id="size 1 when unset"),
    pytest.param([R, R, R, R], {"min_sub_groups": None}, True, True, True, id="no minimum"),
    pytest.param([P, P, P, P], {"min_sub_groups": 0}, True, True, True, id="a minimum of 0"),
    pytest.param([R, R, R, R], {"part_of": lambda i: None}, False, False, False, id="no task in any partition"),
    pytest.param([S.SUCCEEDED, S.SUCCEEDED, S.FAILED, S.FAILED], {}, True, False, False,
                 id="failed tasks do not count"),
])
def test_min_sub_groups(statuses, kwargs, valid, ready, pipelined):
    j = job(statuses, **kwargs)
    assert (subgroups.valid(j), subgroups.ready(j), subgroups.pipelined(j)) == (valid, ready, pipelined)


def test_gang_reads_them():
    short = job([R, R, R, P])
    assert not gang.Gang.job_ready(short) and gang.Gang.job_pipelined(short) is gang.hooks.Vote.REJECT
    alone = job([R, R])
    result = gang.Gang.job_valid(alone)
    assert (result.reason, result.message) == ("NotEnoughPodsOfTask",
                                               "Not enough valid subGroups of each task for gang-scheduling")
    assert gang.Gang.job_ready(job([R, R, R, R]))


def test_the_cache_follows_the_tasks():
    j = job([R, R, R, R])
    assert subgroups.groups(j) is subgroups.groups(j)
    assert [g.parts for g in subgroups.groups(j)] == [(("ns/t-0", "ns/t-1"), ("ns/t-2", "ns/t-3"))]
    extra = snapshot.build(objects.state(podgroups=[objects.pg("ns/h")], pods=[objects.pod("ns/x", "h")])).jobs["ns/h"]
    j.add_task(extra.tasks["ns/x"])
    assert j.sub_groups is None


@pytest.mark.parametrize("statuses, kwargs, short", [
    pytest.param([R, R, R, R], {}, {}, id="both partitions ready"),
    pytest.param([R, R, R, P], {}, {"p": 1}, id="one partition short of its size"),
    pytest.param([P, P, P, P], {}, {"p": 2}, id="none ready"),
    pytest.param([R, R, P, P, P, P], {}, {"p": 1}, id="one of three ready, two needed"),
    pytest.param([P, P, P, P], {"min_sub_groups": None}, {}, id="no minimum"),
])
def test_short_of_counts_the_partitions_a_policy_still_needs(statuses, kwargs, short):
    assert subgroups.short_of(job(statuses, **kwargs)) == short
