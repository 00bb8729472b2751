"""PodGroup phase at session close, condition upserts, and "changed" ignoring time-only changes."""
from __future__ import annotations

import pytest

from vclite.scheduler.framework import fit, snapshot, status
from vclite.scheduler.framework import tasks as tasks_mod

from .. import objects

S = tasks_mod.TaskStatus


NO_NODE = "releasing-without-a-node"   # a Releasing task that was never placed


def job(min_member, phase, statuses):
    pods = [objects.pod(f"ns/t-{i}", "g") for i in range(len(statuses))]
    j = snapshot.build(objects.state(podgroups=[objects.pg("ns/g", min_member=min_member, phase=phase)],
                                     pods=pods)).jobs["ns/g"]
    for i, s in enumerate(statuses):
        t = j.tasks[f"ns/t-{i}"]
        j.update_task_status(t, S.RELEASING if s == NO_NODE else s)
        t.node = "n1" if s not in (S.PENDING, NO_NODE) else ""
    return j


@pytest.mark.parametrize("min_member, phase, statuses, unschedulable, want", [
    pytest.param(2, "Pending", [S.PENDING, S.PENDING], False, "Pending", id="nothing scheduled"),
    pytest.param(2, "Inqueue", [S.PENDING, S.PENDING], False, "Inqueue", id="inqueue stays inqueue"),
    pytest.param(2, "Inqueue", [S.BINDING, S.BINDING], False, "Inqueue", id="binding is not yet scheduled"),
    pytest.param(2, "Inqueue", [S.BOUND, S.RUNNING], False, "Running", id="bound and running"),
    pytest.param(2, "Running", [S.SUCCEEDED, S.FAILED], False, "Completed", id="all scheduled tasks finished"),
    pytest.param(2, "Running", [S.RUNNING, S.RELEASING], False, "Running", id="releasing with a node counts"),
    pytest.param(2, "Running", [S.RUNNING, NO_NODE], False, "Pending", id="releasing without a node does not"),
    pytest.param(2, "Running", [S.SUCCEEDED, S.RELEASING], False, "Running", id="releasing is not finished"),
    pytest.param(2, "Running", [S.RUNNING, S.PENDING], True, "Unknown", id="running + unschedulable now"),
    pytest.param(2, "Running", [S.RUNNING, S.PENDING], False, "Pending", id="lost its gang"),
    # minMember 0: 0 scheduled >= 0 and all 0 of them finished -> Completed (Volcano's getPodGroupPhase)
    pytest.param(0, "Inqueue", [], False, "Completed", id="minMember 0, no tasks"),
    pytest.param(0, "Inqueue", [S.PENDING], False, "Completed", id="minMember 0, nothing placed"),
    pytest.param(0, "Pending", [S.PENDING, S.PENDING], False, "Completed", id="minMember 0, not enqueued"),
])
def test_phase(min_member, phase, statuses, unschedulable, want):
    assert status.phase(job(min_member, phase, statuses), unschedulable) == want


@pytest.mark.parametrize("statuses, want", [
    pytest.param([S.BINDING, S.BINDING], "Running", id="the session's binds complete the gang"),
    pytest.param([S.BINDING, S.BOUND], "Running", id="bound by an earlier session, binding now"),
    pytest.param([S.BINDING, S.PENDING], "Inqueue", id="half a gang bound is not running"),
    pytest.param([S.ALLOCATED, S.ALLOCATED], "Inqueue", id="allocated in a discarded statement"),
    pytest.param([S.BINDING, S.SUCCEEDED], "Running", id="not completed while one is binding"),
])
def test_phase_counting_binding_as_scheduled(statuses, want):
    """An embedded shell binds right after the session: the PodGroup is Running at once."""
    assert status.phase(job(2, "Inqueue", statuses), False, binding_scheduled=True) == want


@pytest.mark.parametrize("statuses, counts", [
    pytest.param([S.PENDING, S.PENDING], {}, id="nothing placed: no count written"),
    pytest.param([S.RUNNING, S.PENDING], {"running": 1}, id="one running"),
    pytest.param([S.SUCCEEDED, S.FAILED], {"succeeded": 1, "failed": 1}, id="finished"),
])
def test_podgroup_status_counts_are_omitempty(statuses, counts):
    """PodGroupStatus' running/succeeded/failed are `omitempty` in Volcano's Go type: a zero is not
    written, so `kubectl get pg` shows RUNNINGS blank for a group with nothing running, as on Volcano."""
    written = status.podgroup_status(job(2, "Inqueue", statuses), False)
    assert {k: written[k] for k in ("running", "succeeded", "failed") if k in written} == counts


def test_upsert_keeps_times_when_only_times_change():
    old = {"type": "Scheduled", "status": "True", "reason": "r", "message": "", "lastTransitionTime": "t0",
           "transitionID": "s0"}
    conds = [old]
    status.upsert(conds, dict(old, lastTransitionTime="t1", transitionID="s1"))
    assert conds == [old]
    status.upsert(conds, dict(old, status="False", lastTransitionTime="t1"))
    assert conds[0]["lastTransitionTime"] == "t1"
    status.upsert(conds, {"type": "Unschedulable", "status": "True"})
    assert [c["type"] for c in conds] == ["Scheduled", "Unschedulable"]


@pytest.mark.parametrize("old, new, changed", [
    pytest.param({"phase": "Running", "running": 1}, {"phase": "Running", "running": 1, "succeeded": 0, "failed": 0},
                 False, id="zero counts equal absent counts"),
    pytest.param({"phase": "Running", "conditions": [{"type": "A", "lastTransitionTime": "t0"}]},
                 {"phase": "Running", "conditions": [{"type": "A", "lastTransitionTime": "t1"}]}, False,
                 id="condition time only"),
    pytest.param({"phase": "Inqueue"}, {"phase": "Running"}, True, id="phase"),
    pytest.param({"phase": "Running", "conditions": [{"type": "A", "message": "x"}]},
                 {"phase": "Running", "conditions": [{"type": "A", "message": "y"}]}, True, id="message"),
])
def test_status_changed(old, new, changed):
    assert status.status_changed(old, new) is changed


GPU = "nvidia.com/gpu"


@pytest.mark.parametrize("stored, allocated", [
    pytest.param({"cpu": "2", "memory": "1Gi"}, {"cpu": 2000, "memory": 2**30}, id="same"),
    pytest.param({"cpu": "2000m", "memory": "1073741824"}, {"cpu": 2000, "memory": 2**30}, id="same, other spelling"),
    pytest.param({"cpu": "2", "memory": "1Gi"}, {"cpu": 2500, "memory": 2**30}, id="cpu changed"),
    pytest.param({"cpu": "0", "memory": "0"}, {}, id="nothing allocated, zeros written"),
    pytest.param({}, {}, id="nothing allocated, nothing written"),
    pytest.param({"cpu": "0"}, {}, id="memory missing"),
    pytest.param({"cpu": "1", "memory": "0", GPU: "1"}, {"cpu": 1000, GPU: 1000}, id="scalar resource"),
    pytest.param({"cpu": "1", "memory": "0", GPU: "1"}, {"cpu": 1000}, id="scalar resource freed"),
    pytest.param({"cpu": "1", "memory": "0", GPU: "0"}, {"cpu": 1000}, id="freed scalar written as zero"),
    pytest.param({"cpu": "1", "memory": "0", "pods": "1"}, {"cpu": 1000, "pods": 1}, id="pods"),
    pytest.param({"cpu": "1", "memory": "0"}, {"cpu": 1000, "pods": 1}, id="pods added"),
    pytest.param({"requests.cpu": "1", "memory": "0"}, {"cpu": 1000}, id="quota spelling is rewritten"),
    pytest.param({"cpu": "1", "memory": "0", "example.com/x": "0"}, {"cpu": 1000}, id="zero outside the dims"),
    pytest.param({"cpu": "1", "memory": "0", "example.com/x": "3"}, {"cpu": 1000}, id="non-zero outside the dims"),
    pytest.param({"cpu": "one", "memory": "0"}, {"cpu": 1000}, id="invalid stored value"),
    pytest.param({"cpu": "1", "memory": ["0"]}, {"cpu": 1000}, id="unhashable stored value"),
    pytest.param({"cpu": "0.0005", "memory": "0"}, {"cpu": 1}, id="sub-millicore stored value"),
])
def test_queue_allocated_unchanged_agrees_with_the_patch(stored, allocated):
    """The fast check says "unchanged" exactly when formatting the vector would write nothing."""
    q = snapshot.build(objects.state(queues=[{"metadata": {"name": "q"}, "spec": {"weight": 1},
                                              "status": {"allocated": stored}}]))
    queue, dims = q.queues["q"], status.dims_mod.Dims([GPU])
    v = dims.zeros()
    for name, value in allocated.items():
        v[dims.index[name]] = value
    try:
        patch = status.queue_status_update(queue, status.allocated_list(v, dims))
    except (ValueError, TypeError):
        patch = "rewrite"
    assert status.queue_allocated_unchanged(queue, v, dims) == (patch is None)


# ---- a waiting pod's PodScheduled condition (Volcano's TaskSchedulingReason) --------------------------
FIT_NOWHERE = "0/2 nodes are unavailable: 2 Insufficient cpu."


def waiting_task(last=None, fit_errors=False, note=None):
    j = job(2, "Inqueue", [S.PENDING, S.PENDING])
    t = j.tasks["ns/t-0"]
    t.last_transaction = last
    if fit_errors:
        j.record_fit_errors(t, fit.FitErrors(2, {"Insufficient cpu": 2}))
    if note:
        j.task_notes[t.uid] = note
    return j, t


@pytest.mark.parametrize("last, fit_errors, note, want", [
    pytest.param((S.ALLOCATED, "n1", False), False, None,
                 ("Schedulable", "Pod ns/t-0 can possibly be assigned to n1, once minAvailable is satisfied", ""),
                 id="fit-but-the-gang-is-short"),
    pytest.param((S.PIPELINED, "n2", True), False, None,
                 ("Unschedulable", "Pod ns/t-0 can possibly be assigned to n2, once resource is released and "
                                   "minAvailable is satisfied", "n2"), id="pipelined-where-pods-were-evicted-for-it"),
    pytest.param((S.PIPELINED, "n2", False), False, None,
                 ("Unschedulable", "Pod ns/t-0 can possibly be assigned to n2, once resource is released and "
                                   "minAvailable is satisfied", ""), id="pipelined-nothing-evicted: not nominated"),
    pytest.param(None, True, None, ("Unschedulable", FIT_NOWHERE, ""), id="fit-nowhere"),
    pytest.param(None, False, 'queue "q" cannot take the task now',
                 ("Unschedulable", 'queue "q" cannot take the task now', ""),
                 id="a-plugin-refused-it"),
    pytest.param(None, False, None, ("Unschedulable", "the job's message", ""), id="not-tried: the job's message"),
    pytest.param(None, True, 'allocation to node "n1" undone: no card fits', ("Unschedulable", FIT_NOWHERE, ""),
                 id="fit-errors-and-a-refusal: the fit errors, as Volcano's NodesFitErrors"),
    pytest.param((S.ALLOCATED, "n1", False), True, 'allocation to node "n2" undone: no card fits',
                 ("Schedulable", "Pod ns/t-0 can possibly be assigned to n1, once minAvailable is satisfied", ""),
                 id="a-placement-discarded-after-both: the last transaction"),
])
def test_task_scheduling_reason(last, fit_errors, note, want):
    j, t = waiting_task(last, fit_errors, note)
    assert status.task_scheduling_reason(j, t, "the job's message") == want


@pytest.mark.parametrize("min_member, statuses, origin, want", [
    pytest.param(3, [S.PENDING] * 3, "",
                 "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
                 "Pending: 3 Unschedulable", id="nothing placed: every task pending"),
    # the gang's condition would say 1/3 (minAvailable 2, one running): the Event counts the pending tasks
    pytest.param(2, [S.RUNNING, S.PENDING, S.PENDING], "",
                 "2/3 tasks in gang unschedulable: pod group is not ready, 1 Running, 2 Pending, 2 minAvailable; "
                 "Pending: 2 Unschedulable", id="pending tasks, not the tasks short of minAvailable"),
    pytest.param(1, [], 'queue "q" is Closed',
                 '0/0 tasks in gang unschedulable: pod group is not ready, 1 minAvailable. '
                 'Origin reason is: queue "q" is Closed', id="an action's reason as the origin"),
])
def test_unschedulable_event_is_in_volcanos_words(min_member, statuses, origin, want):
    j = job(min_member, "Inqueue", statuses)
    j.origin_reason = origin
    assert status.unschedulable_event(j) == want


def test_base_error_message_is_the_jobs_fit_error():
    j = job(2, "Inqueue", [S.PENDING])
    assert status.base_error_message(j) == j.fit_error() == \
        "pod group is not ready, 1 Pending, 2 minAvailable; Pending: 1 Unschedulable"


SCHEDULED_FALSE = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                   "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Unschedulable", "message": FIT_NOWHERE}


@pytest.mark.parametrize("conditions, reason, message, differs, transition", [
    pytest.param([], "Unschedulable", FIT_NOWHERE, True, "NOW", id="none-yet"),
    pytest.param([SCHEDULED_FALSE], "Unschedulable", FIT_NOWHERE, False, "2026-01-01T00:00:00Z", id="same"),
    pytest.param([SCHEDULED_FALSE], "Unschedulable", "other", True, "2026-01-01T00:00:00Z",
                 id="new-message-keeps-the-transition-time"),
    pytest.param([{**SCHEDULED_FALSE, "status": "True"}], "Unschedulable", FIT_NOWHERE, True, "NOW",
                 id="was-true"),
])
def test_pod_scheduled_condition(conditions, reason, message, differs, transition):
    pod = {"status": {"conditions": [{"type": "Initialized", "status": "True"}, *conditions]}}
    assert status.pod_scheduled_differs(pod, reason, message) is differs
    out = status.pod_unscheduled_conditions(pod, reason, message, "NOW")
    assert out[0] == {"type": "Initialized", "status": "True"}   # (others kept, in place)
    assert out[1] == {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                      "lastTransitionTime": transition, "reason": reason, "message": message}


@pytest.mark.parametrize("nominated_now, nominated, differs", [
    pytest.param(None, "n1", True, id="nominated-now"),
    pytest.param("n1", "n1", False, id="already-nominated"),
    pytest.param("n1", "n2", True, id="another-node"),
    pytest.param("n1", "", False, id="nothing-to-nominate"),
])
def test_a_nominated_node_is_part_of_what_changed(nominated_now, nominated, differs):
    pod = {"status": {"conditions": [SCHEDULED_FALSE]}}
    if nominated_now:
        pod["status"]["nominatedNodeName"] = nominated_now
    assert status.pod_scheduled_differs(pod, "Unschedulable", FIT_NOWHERE, nominated) is differs


@pytest.mark.parametrize("min_member, statuses, covered", [
    pytest.param(1, [S.RELEASING], True, id="the only pod terminating on its node"),
    pytest.param(2, [S.RUNNING, S.RELEASING], True, id="one of two terminating"),
    pytest.param(2, [S.RELEASING, S.RELEASING], True, id="both terminating"),
    pytest.param(1, [NO_NODE], False, id="deleted before it was placed"),
    pytest.param(2, [S.RUNNING, S.RUNNING], False, id="nothing terminating"),
    pytest.param(2, [S.RUNNING, S.RELEASING, S.PENDING], False, id="a task still waits for a node"),
    pytest.param(3, [S.RUNNING, S.RELEASING, S.PIPELINED], False, id="a task still waits for releasing resources"),
    pytest.param(3, [S.RUNNING, S.RELEASING], False, id="too few even with the terminating one"),
    pytest.param(2, [S.SUCCEEDED, S.RELEASING], True, id="finished tasks were scheduled"),
])
def test_a_job_covered_by_its_terminating_pods(min_member, statuses, covered):
    """Volcano's shouldSkipUnschedulableForReleasing: neither gang nor allocate's JobValid reports such a job."""
    j = job(min_member, "Running", statuses)
    assert j.covered_by_releasing() is covered
    assert j.releasing_scheduled_num() == statuses.count(S.RELEASING)
