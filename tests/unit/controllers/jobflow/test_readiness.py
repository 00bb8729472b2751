"""Readiness table: which flows get their vcjob created now (Volcano §2.3 `deployJob`/`judge`, D1–D3, D9).

`observed` maps flow name -> its vcjob's phase; a flow with no vcjob is absent.
"""
from __future__ import annotations

import pytest

from vclite.controllers.jobflow import readiness

R, W, B, C = readiness.State.READY, readiness.State.WAITING, readiness.State.BLOCKED, readiness.State.CREATED


def fl(name, *targets, probe=None, empty_targets=False):
    f = {"name": name}
    if targets or empty_targets or probe:
        f["dependsOn"] = {}
        if targets or empty_targets:
            f["dependsOn"]["targets"] = list(targets)
        if probe:
            f["dependsOn"]["probe"] = probe
    return f


CHAIN = [fl("a"), fl("b", "a")]
DIAMOND = [fl("a"), fl("b", "a"), fl("c", "a"), fl("d", "b", "c")]
EXAMPLE = [fl("a"), fl("b", "a"), fl("c", "b"), fl("d", "b"), fl("e", "c", "d")]   # V:example/jobflow


@pytest.mark.parametrize("flows, observed, expected", [
    pytest.param([], {}, [], id="no-flows"),
    pytest.param(CHAIN, {}, ["a"], id="D1-chain-start-only-a"),
    pytest.param(CHAIN, {"a": "Pending"}, [], id="D1-a-pending"),
    pytest.param(CHAIN, {"a": "Running"}, [], id="D1-a-running"),
    pytest.param(CHAIN, {"a": "Completing"}, [], id="D1-completing-is-not-enough"),
    pytest.param(CHAIN, {"a": "Completed"}, ["b"], id="D1-a-completed-b-ready"),
    pytest.param(CHAIN, {"a": "Completed", "b": ""}, [], id="created-b-not-again"),
    pytest.param(CHAIN, {"a": "Failed"}, [], id="D5-failed-target-never-satisfies"),
    pytest.param(CHAIN, {"a": "Terminated"}, [], id="terminated-target-never-satisfies"),
    pytest.param(CHAIN, {"a": "Aborted"}, [], id="aborted-target-waits"),
    pytest.param(DIAMOND, {"a": "Completed"}, ["b", "c"], id="D2-diamond-b-c-same-sync"),
    pytest.param(DIAMOND, {"a": "Completed", "b": "Completed", "c": "Running"}, [], id="D2-d-waits-for-both"),
    pytest.param(DIAMOND, {"a": "Completed", "b": "Completed", "c": "Completed"}, ["d"], id="D2-d-ready"),
    pytest.param(EXAMPLE, {"a": "Completed", "b": "Completed"}, ["c", "d"], id="example-c-d"),
    pytest.param([fl("a", empty_targets=True)], {}, ["a"], id="D3-targets-empty-immediately"),
    pytest.param([fl("a", probe={"taskStatusList": [{"taskName": "t", "phase": "Running"}]})], {}, ["a"],
                 id="D3-probe-without-targets-ignored"),
    pytest.param([fl("x"), fl("a", "x", probe={"httpGetList": [{"port": 80}]})], {"x": "Completed"}, ["a"],
                 id="probe-with-targets-only-targets-count"),
    pytest.param([fl("a"), fl("a")], {}, ["a"], id="D9-duplicate-names-one-job"),
    pytest.param([fl("a"), fl("b", "a", "a")], {"a": "Completed"}, ["b"], id="repeated-target"),
    pytest.param([fl("b", "zz")], {"zz": "Completed"}, [], id="undefined-target-never-ready"),
    pytest.param([fl("a", "b"), fl("b", "a"), fl("c")], {}, ["c"], id="cycle-never-ready"),
    pytest.param([fl("a", "a")], {}, [], id="self-loop-never-ready"),
])
def test_flows_to_create(flows, observed, expected):
    assert readiness.flows_to_create(flows, observed) == expected


@pytest.mark.parametrize("flows, observed, expected", [
    pytest.param(DIAMOND, {"a": "Completed", "b": "Running"}, [
        readiness.Verdict("a", C), readiness.Verdict("b", C), readiness.Verdict("c", R),
        readiness.Verdict("d", W, waiting_for=("b", "c"))], id="diamond-verdicts"),
    pytest.param([fl("a"), fl("b", "a", "zz", "yy")], {}, [
        readiness.Verdict("a", R), readiness.Verdict("b", B, undefined=("zz", "yy"))], id="undefined-named"),
    pytest.param([fl("a", "b"), fl("b", "a"), fl("c", "a")], {}, [
        readiness.Verdict("a", B, cycle=("a", "b", "a")), readiness.Verdict("b", B, cycle=("a", "b", "a")),
        readiness.Verdict("c", W, waiting_for=("a",))], id="cycle-named-downstream-waits"),
    pytest.param([fl("a"), fl("a", "b"), fl("b")], {}, [
        readiness.Verdict("a", R), readiness.Verdict("b", R)], id="duplicates-first-entry-counts"),
])
def test_evaluate(flows, observed, expected):
    assert readiness.evaluate(flows, observed) == expected


def test_every_dependency_kind_is_named_once():
    names = [k.name for k in readiness.DEPENDENCY_KINDS]
    assert names == sorted(set(names), key=names.index) and "targets" in names


# ---- why a flow is Skipped: in the terms of what the user wrote -------------------------------------
PROBE = {"taskStatusList": [{"taskName": "ps", "phase": "Running"}]}


@pytest.mark.parametrize("depends, outcomes, message", [
    pytest.param({"targets": ["b"]}, {"b": "Skipped"}, "dependsOn target b was Skipped", id="one-target"),
    pytest.param({"targets": ["b", "c"]}, {"b": "Completed", "c": "Failed"},
                 "dependsOn targets b, c can no longer all be Completed: c Failed", id="targets-all"),
    pytest.param({"targets": ["b", "c"], "strategy": "any"}, {"b": "Failed", "c": "Skipped"},
                 "dependsOn targets b, c (strategy any): none of them can complete: b Failed, c Skipped",
                 id="targets-any"),
    pytest.param({"targets": ["tg"], "probe": PROBE}, {"tg": "Completed", "probe:tg": "Failed"},
                 "dependsOn target tg finished (Completed) before its probe (task ps Running) held",
                 id="probe-never-held"),
    pytest.param({"targets": ["tg"], "probe": PROBE}, {"tg": "Skipped", "probe:tg": "Skipped"},
                 "dependsOn target tg was Skipped", id="probed-target-skipped"),
    pytest.param({"targets": ["b", "tg"], "probe": PROBE}, {"b": "Completed", "tg": "Terminated", "probe:tg": "Failed"},
                 "dependsOn targets b, tg can no longer all be Completed: "
                 "tg finished (Terminated) before its probe (task ps Running) held", id="probe-among-targets"),
    pytest.param({"expression": "b.Failed || c.Failed"}, {"b": "Completed", "c": "Completed"},
                 "dependsOn.expression b.Failed || c.Failed can never hold: b Completed, c Completed",
                 id="expression-as-written"),
    pytest.param({"targets": ["c"], "expression": "b.Failed"}, {"b": "Completed"},
                 "dependsOn.expression b.Failed can never hold: b Completed", id="expression-with-met-targets"),
])
def test_skip_message_names_what_the_user_wrote(depends, outcomes, message):
    from vclite.api import flowexpr
    from vclite.controllers.jobflow import plan
    p = plan.compile_spec({"flows": [{"name": "b"}, {"name": "c"}, {"name": "tg"},
                                     {"name": "x", "dependsOn": depends}]})
    facts = {name: flowexpr.outcome_facts(o) for name, o in outcomes.items()}
    verdict = readiness.decide(p.flows["x"], p, lambda name: facts.get(name, frozenset()))
    assert (verdict.state, verdict.message) == (readiness.State.SKIPPED, message)
