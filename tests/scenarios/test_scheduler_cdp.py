"""cdp: cooldown protection of recently started pods against preempt and reclaim (Volcano's plugins/cdp),
ported from its Test_CooldownTimePlugin_podPreemptStableTime and TestPreemptableFn."""
import datetime as dt

import pytest

from vclite.scheduler.plugins import cdp

from .test_scheduler_eviction import PRIO, Case, T_PREEMPT, group, node, pending, q, run, running
from .test_scheduler_scenarios import NOW, P


def at(seconds_ago):
    return (NOW - dt.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def scheduled(p, seconds_ago, cooldown=None, where="annotations"):
    p["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": at(seconds_ago)}]
    if cooldown is not None:
        p["metadata"].setdefault(where, {})[cdp.COOLDOWN] = cooldown
    return p


@pytest.mark.parametrize("metadata, want", [
    ({"annotations": {cdp.COOLDOWN: "600s"}}, 600),
    ({"annotations": {cdp.COOLDOWN: "600abcde"}}, None),
    ({"labels": {cdp.COOLDOWN: "1m"}, "annotations": {cdp.COOLDOWN: "600s"}}, 60),    # the label first
    ({}, None),
])
def test_cooldown_time(metadata, want):
    got = cdp.cooldown({"metadata": metadata})
    assert (got.total_seconds() if got else None) == want


T_CDP = [[P("cdp", enablePreemptable=True, enableReclaimable=True), *T_PREEMPT[0]]]


def victims_case(pods):
    return Case(T_CDP, "preempt", [node("n1", 3, "3G")], [q("q1")],
                [group("c1/pg1", "q1", 0, prio="low-priority"),    # (minMember 0: gang lets every pod go)
                 group("c1/pg2", "q1", 1, prio="high-priority")],
                pods + [pending("c1/preemptor", "pg2", cpu="3", mem="3G")], [], classes=PRIO)


def test_protected_pods_are_kept_and_the_session_looks_again_when_protection_ends():
    pods = [scheduled(running("c1/young", "pg1", "n1", preemptable=True), 100, "600s"),     # protected 500 s more
            scheduled(running("c1/bad", "pg1", "n1", preemptable=True), 100, "600abcde"),   # invalid: unprotected
            scheduled(running("c1/old", "pg1", "n1", preemptable=True), 800, "600s")]       # protection over
    result = run(victims_case(pods))
    assert sorted(result.evictions) == []     # 3 cpus are needed, one stays protected: nobody is evicted
    assert result.recheck_at == NOW + dt.timedelta(seconds=500)


def test_without_protection_the_preemptor_takes_the_node():
    pods = [scheduled(running("c1/young", "pg1", "n1", preemptable=True), 700, "600s"),
            scheduled(running("c1/bad", "pg1", "n1", preemptable=True), 100, "600abcde"),
            scheduled(running("c1/old", "pg1", "n1", preemptable=True), 800, "600s", where="labels")]
    result = run(victims_case(pods))
    assert sorted(result.evictions) == ["c1/bad", "c1/old", "c1/young"]
    assert result.recheck_at is None


def test_a_protected_pod_is_spared_while_others_make_room():
    case = victims_case([scheduled(running("c1/young", "pg1", "n1", preemptable=True), 100, "600s"),
                         scheduled(running("c1/a", "pg1", "n1", preemptable=True), 900),
                         scheduled(running("c1/b", "pg1", "n1", preemptable=True), 900)])
    case.pods[-1] = pending("c1/preemptor", "pg2", cpu="2", mem="2G")
    result = run(case)
    assert sorted(result.evictions) == ["c1/a", "c1/b"]
