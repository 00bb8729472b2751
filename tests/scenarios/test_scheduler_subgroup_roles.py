"""A `subGroupPolicy` job is placed partition by partition (Volcano's allocateForJob / allocateForSubJob): a role
that fits nowhere is remembered per partition (FitFailedRoles / TaskHasFitErrors per SubJob), so the same role in
another partition is still tried; a partition that needs every one of its tasks is given up alone
(NeedContinueAllocating(subJob)), and a partition that does not become ready keeps nothing."""
from __future__ import annotations

import pytest

from tests.unit.scheduler import objects


def _pod(name, part, cpu):
    """cpu "x": a pod no node takes (its nodeSelector matches none)."""
    selector = {"zone": "nowhere"} if cpu == "x" else None
    p = objects.pod(f"ns/{name}", "g", cpu="1" if cpu == "x" else cpu, role="w", selector=selector)
    if part:
        p["metadata"]["labels"] = {"part": part}
    return p


def _run(pods, policy=True, size=None, min_member=1):
    group = objects.pg("ns/g", min_member=min_member)
    if policy:
        pol = {"name": "p", "matchLabelKeys": ["part"]}
        if size is not None:
            pol["subGroupSize"] = size
        group["spec"]["subGroupPolicy"] = [pol]
    return objects.run(objects.state(nodes=[objects.node("n1", cpu="4")], podgroups=[group],
                                     pods=[_pod(*p) for p in pods]))


@pytest.mark.parametrize("pods, kwargs, binds", [
    pytest.param([("g-a-0", "a", "x"), ("g-b-0", "b", "1")], {}, ["g-b-0"],
                 id="same role in another partition is tried"),
    pytest.param([("g-a-0", "a", "x"), ("g-a-1", "a", "1"), ("g-b-0", "b", "1")], {}, ["g-b-0"],
                 id="same role in the same partition is skipped"),
    pytest.param([("g-a-0", "a", "x"), ("g-a-1", "a", "1"), ("g-b-0", "b", "1"), ("g-b-1", "b", "1")],
                 {"size": 2}, ["g-b-0", "g-b-1"], id="a partition needing all its tasks is given up alone"),
    pytest.param([("g-a-0", "a", "1"), ("g-a-1", "a", "x"), ("g-b-0", "b", "1")], {"size": 2}, [],
                 id="a partition that is not ready keeps nothing; one short of its size is never ready"),
    pytest.param([("g-a-0", "a", "1"), ("g-a-1", "a", "x"), ("g-b-0", "b", "1"), ("g-b-1", "b", "2")],
                 {"size": 2}, ["g-b-0", "g-b-1"], id="a partition that is not ready keeps nothing"),
    pytest.param([("g-a-0", "a", "x"), ("g-b-0", "b", "1")], {"policy": False}, [],
                 id="without subGroupPolicy the role failed for the whole job"),
])
def test_failed_roles_per_partition(pods, kwargs, binds):
    result = _run(pods, **kwargs)
    assert result.binds == {f"ns/{name}": "n1" for name in binds}


def test_skipped_task_of_a_failed_role_says_why():
    result = _run([("g-a-0", "a", "x"), ("g-a-1", "a", "1"), ("g-b-0", "b", "1")], min_member=2)
    assert not result.binds
    assert "Task g-a-1 with role spec w has already predicated failed, skip" in str(result.pod_conditions["ns/g-a-1"])
    assert result.pod_conditions["ns/g-b-0"][0] == "Schedulable"   # (its role failed in another partition only)
