"""The extension-point table and its combination rules, one row per rule behaviour."""
from __future__ import annotations

import numpy as np
import pytest

from vclite.scheduler.framework import hooks

Point, Vote, Rule = hooks.Point, hooks.Vote, hooks.Rule
A, B, C = object(), object(), object()


def build(point, tiers, flags=None):
    """tiers: list of lists of return values (or callables); every plugin has the point's flag on."""
    h = hooks.Hooks(len(tiers))
    for t, tier in enumerate(tiers):
        for i, value in enumerate(tier):
            fn = value if callable(value) else (lambda *a, v=value: v)
            on = (flags or {}).get(i, True)
            hooks.Registrar(h, t, f"p{t}{i}", lambda flag, on=on: on).add(point, fn)
    return h


@pytest.mark.parametrize("point, tiers, want", [
    pytest.param(Point.JOB_ORDER, [], 0, id="order: nothing registered -> 0"),
    pytest.param(Point.JOB_ORDER, [[0, -1, 1]], -1, id="order: first non-zero decides"),
    pytest.param(Point.JOB_ORDER, [[0], [0, 1]], 1, id="order: later tier when earlier all zero"),
    pytest.param(Point.JOB_READY, [], True, id="AND: default True"),
    pytest.param(Point.JOB_READY, [[True], [True, False]], False, id="AND: any false -> False"),
    pytest.param(Point.OVERUSED, [], False, id="OR: default False"),
    pytest.param(Point.OVERUSED, [[False], [True]], True, id="OR: any true -> True"),
    pytest.param(Point.JOB_ENQUEUEABLE, [], True, id="vote: nobody votes -> True"),
    pytest.param(Point.JOB_ENQUEUEABLE, [[Vote.ABSTAIN], [Vote.ABSTAIN]], True, id="vote: all abstain -> True"),
    pytest.param(Point.JOB_ENQUEUEABLE, [[Vote.PERMIT, Vote.REJECT]], False, id="vote: reject in same tier wins"),
    pytest.param(Point.JOB_ENQUEUEABLE, [[Vote.PERMIT], [Vote.REJECT]], True, id="vote: permitting tier stops"),
    pytest.param(Point.JOB_ENQUEUEABLE, [[Vote.ABSTAIN], [Vote.REJECT]], False, id="vote: abstain tier -> next"),
    pytest.param(Point.JOB_PIPELINED, [[Vote.ABSTAIN, Vote.PERMIT]], True, id="vote: permit among abstains"),
    pytest.param(Point.JOB_STARVING, [], False, id="and-by-tier: default False"),
    pytest.param(Point.JOB_STARVING, [[], [True, False]], False, id="and-by-tier: first tier with fns, AND"),
    pytest.param(Point.JOB_STARVING, [[True], [False]], True, id="and-by-tier: first tier decides"),
    pytest.param(Point.JOB_VALID, [[None, "bad", "worse"]], "bad", id="first failure returned"),
    pytest.param(Point.JOB_VALID, [[None], [None]], None, id="all pass -> None"),
    pytest.param(Point.BEST_NODE, [[None], [3, 4]], 3, id="first result"),
    pytest.param(Point.PREDICATE, [[["x"]], [[], ["y", "z"]]], ["x", "y", "z"], id="all-pass: failures concatenated"),
    pytest.param(Point.PREEMPTABLE, [], None, id="intersect: nothing registered -> None"),
    pytest.param(Point.PREEMPTABLE, [[None, [A, B]]], [A, B], id="intersect: abstainers ignored"),
    pytest.param(Point.PREEMPTABLE, [[[A, B, C], [C, A]]], [A, C], id="intersect: order of the first list"),
    pytest.param(Point.PREEMPTABLE, [[[A], []], [[B]]], [B], id="intersect: empty leaves the tier undecided"),
    pytest.param(Point.PREEMPTABLE, [[[A], [B]], [[C]]], [C], id="intersect: no common victim -> next tier"),
    pytest.param(Point.PREEMPTABLE, [[[A], [B], [A, B]], [[C]]], [A, B],
                 id="intersect: after an empty intersection the next offer starts again (Volcano's nil slice)"),
    pytest.param(Point.PREEMPTABLE, [[[A], [B]]], None, id="intersect: no tier decides -> None"),
    pytest.param(Point.VICTIM_TASKS, [[[], []], [[A, B], [B, C]]], [A, B, C], id="union: first tier with victims"),
])
def test_rules(point, tiers, want):
    assert build(point, tiers).call(point, "arg") == want


def test_weighted_sum_of_score_arrays():
    h = hooks.Hooks(2)
    hooks.Registrar(h, 0, "a", lambda f: True).add(Point.NODE_ORDER, lambda t, rows: np.array([1.0, 2.0]), weight=2)
    hooks.Registrar(h, 1, "b", lambda f: True).add(Point.NODE_ORDER, lambda t, rows: np.array([10.0, 0.0]))
    assert list(h.call(Point.NODE_ORDER, None, None)) == [12.0, 4.0]
    assert hooks.Hooks(1).call(Point.NODE_ORDER, None, None) == 0


def test_call_all_calls_every_function_in_order():
    seen = []
    h = build(Point.ALLOCATE_EVENT, [[lambda t: seen.append(("a", t))], [lambda t: seen.append(("b", t))]])
    assert h.call(Point.ALLOCATE_EVENT, 7) is None
    assert seen == [("a", 7), ("b", 7)]


@pytest.mark.parametrize("point, flag_on, registered", [
    pytest.param(Point.JOB_ORDER, False, False, id="flagged point, flag off -> not registered"),
    pytest.param(Point.JOB_ORDER, True, True, id="flagged point, flag on -> registered"),
    pytest.param(Point.JOB_VALID, False, True, id="jobValid has no flag -> always registered"),
    pytest.param(Point.ALLOCATE_EVENT, False, True, id="events have no flag -> always registered"),
])
def test_enable_flags_are_honoured(point, flag_on, registered):
    h = hooks.Hooks(1)
    asked = []
    reg = hooks.Registrar(h, 0, "p", lambda flag: asked.append(flag) or flag_on)
    assert reg.add(point, lambda *a: 1) is registered
    assert h.registered(point) == (["p"] if registered else [])
    assert asked == ([hooks.TABLE[point].flag] if hooks.TABLE[point].flag else [])


def test_every_point_has_a_row_and_every_rule_an_implementation():
    assert set(hooks.TABLE) == set(Point)
    assert set(hooks.RULES) == set(Rule)
    flags = {s.flag for s in hooks.TABLE.values() if s.flag}
    from vclite.scheduler import conf
    assert flags <= set(conf.FLAGS)


@pytest.mark.parametrize("point", [Point.JOB_ORDER, Point.JOB_STARVING, Point.PREEMPTABLE])
def test_a_caller_made_early_sees_later_registrations_in_tier_order(point):
    """Registrations out of tier order (tier 1 before tier 0) after the dispatcher exists: the flat
    rules and the per-tier rules both see tier 0 first."""
    h = hooks.Hooks(2)
    call = h.caller(point)
    late = {Point.JOB_ORDER: (1, -1), Point.JOB_STARVING: (False, True), Point.PREEMPTABLE: ([B], [A])}[point]
    hooks.Registrar(h, 1, "t1", lambda f: True).add(point, lambda *a: late[0])
    hooks.Registrar(h, 0, "t0", lambda f: True).add(point, lambda *a: late[1])
    assert h.registered(point) == ["t0", "t1"]
    assert call("x", "y") == late[1]
