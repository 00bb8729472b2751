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
