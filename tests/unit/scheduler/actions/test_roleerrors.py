"""allocate's predicate error cache (roleerrors.py): what a role's failures leave for its next task."""
from __future__ import annotations

import types

import numpy as np
import pytest

from vclite.scheduler.actions import roleerrors
from vclite.scheduler.framework import fit


def task(role):
    return types.SimpleNamespace(role=role)


def failure(*reasons):
    return fit.Failure(tuple((r, np.array(m, dtype=bool)) for r, m in reasons))


@pytest.mark.parametrize("recorded, asked, want", [
    pytest.param([], "w", None, id="nothing failed yet"),
    pytest.param([("w", [failure(("Insufficient cpu", [1, 0, 0])), failure(("spread", [1, 1, 0]))])], "w",
                 [("Insufficient cpu", [1, 0, 0]), ("spread", [0, 1, 0])],
                 id="a node charged with the first failure naming it"),
    pytest.param([("w", [failure(("spread", [1, 0, 0]))]), ("w", [failure(("taint", [1, 0, 1]))])], "w",
                 [("spread", [1, 0, 0]), ("taint", [0, 0, 1])], id="a node keeps its first reason across tasks"),
    pytest.param([("w", [failure(("spread", [1, 0, 0]))])], "ps", None, id="another role has its own"),
    pytest.param([("", [failure(("spread", [1, 0, 0]))])], "", None, id="a task without a role is never cached"),
])
def test_what_a_roles_next_task_is_refused(recorded, asked, want):
    errors = roleerrors.RoleErrors(3)
    for role, failures in recorded:
        errors.record(task(role), failures)
    cached = errors.cached(task(asked))
    got = None if cached is None else [(r, m.astype(int).tolist()) for r, m in cached.reasons]
    assert got == want
