"""The scheduler's reason a JobFlow's vcjob waits, copied from its PodGroup into the per-job condition."""
from __future__ import annotations

import pytest

from vclite.controllers.jobflow import waiting

MSG = ("3/6 tasks in gang unschedulable: pod group is not ready, 6 Pending, 6 minAvailable; Pending: 3 Schedulable, "
       "3 Unschedulable. Origin reason is t-3: 0/2 nodes are unavailable: 2 Insufficient cpu.")


def job(name="f-a", uid="u1", phase="Pending", ns="ns"):
    obj = {"metadata": {"name": name, "namespace": ns, "uid": uid}, "status": {}}
    if phase is not None:
        obj["status"]["state"] = {"phase": phase}
    return obj


def podgroup(owner="f-a", uid="u1", ns="ns", conditions=(), kind="Job"):
    return {"metadata": {"name": f"{owner}-{uid}", "namespace": ns,
                         "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": kind, "name": owner,
                                              "uid": uid, "controller": True}]},
            "status": {"phase": "Inqueue", "conditions": list(conditions)}}


def cond(status="True", ctype="Unschedulable", reason="NotEnoughResources", message=MSG):
    return {"type": ctype, "status": status, "reason": reason, "message": message}


@pytest.mark.parametrize("pg, want", [
    pytest.param(podgroup(conditions=[cond()]), ("NotEnoughResources", MSG), id="unschedulable"),
    pytest.param(podgroup(conditions=[cond(status="False")]), None, id="no longer unschedulable"),
    pytest.param(podgroup(conditions=[cond(ctype="Scheduled", reason="tasks in gang are ready to be scheduled")]), None,
                 id="scheduled"),
    pytest.param(podgroup(), None, id="no conditions"),
    pytest.param(podgroup(conditions=[cond(reason="", message='queue "q" is Closed')]), ("Unschedulable", 'queue "q" is Closed'),
                 id="no reason: the condition type stands in"),
])
def test_unschedulable(pg, want):
    assert waiting.unschedulable(pg) == want


@pytest.mark.parametrize("events, jobs, want", [
    pytest.param([podgroup(conditions=[cond()])], [job()], {"f-a": ("NotEnoughResources", MSG)}, id="pending job"),
    pytest.param([podgroup(conditions=[cond()])], [job(phase="")], {"f-a": ("NotEnoughResources", MSG)},
                 id="job without a phase yet"),
    pytest.param([podgroup(conditions=[cond()])], [job(phase="Running")], {}, id="running job: no reason"),
    pytest.param([podgroup(conditions=[cond()])], [job(uid="u2")], {}, id="PodGroup of an earlier job of that name"),
    pytest.param([podgroup(conditions=[cond()]), podgroup(conditions=[cond(status="False")])], [job()], {},
                 id="reason gone"),
    pytest.param([podgroup(conditions=[cond()], kind="Deployment")], [job()], {}, id="not a vcjob's PodGroup"),
    pytest.param([podgroup(conditions=[cond()], ns="other")], [job()], {}, id="other namespace"),
    # a vcjob deleted and made again under its name (a retry): until the cluster's garbage collector deletes
    # its PodGroup, the scheduler may still write it, after the new one's
    pytest.param([podgroup(uid="u2", conditions=[cond(message="new")]), podgroup(conditions=[cond(message="old")])],
                 [job(uid="u2")], {"f-a": ("NotEnoughResources", "new")},
                 id="the earlier job's PodGroup written after the new one's"),
    pytest.param([podgroup(uid="u2", conditions=[cond(message="new")]), podgroup(conditions=[cond(message="old")]),
                  podgroup(conditions=[cond(status="False")])], [job(uid="u2")], {"f-a": ("NotEnoughResources", "new")},
                 id="the earlier job's PodGroup schedulable after the new one's was written"),
])
def test_index(events, jobs, want):
    index = waiting.Index()
    for pg in events:
        index.update(pg)
    assert index.reasons(jobs) == want


def test_index_reports_only_changes_and_forgets_deleted_podgroups():
    index = waiting.Index()
    pg = podgroup(conditions=[cond()])
    assert index.update(pg) == ("ns", "f-a")
    assert index.update(pg) is None                      # the same reason again
    assert index.update(podgroup(conditions=[cond(message="other")])) == ("ns", "f-a")
    assert index.update(pg, deleted=True) == ("ns", "f-a")
    assert index.reasons([job()]) == {}
    assert index.update(podgroup()) is None              # nothing known, nothing to forget


def test_index_forgets_the_podgroup_deleted_not_the_new_one_of_a_job_of_that_name():
    index = waiting.Index()
    index.update(podgroup(conditions=[cond(message="old")]))
    index.update(podgroup(uid="u2", conditions=[cond(message="new")]))
    index.update(podgroup(conditions=[cond(message="old, once more")]))
    assert index.update(podgroup(conditions=[cond(message="old, once more")]), deleted=True) == ("ns", "f-a")
    assert index.reason("ns", "f-a", "u2") == ("NotEnoughResources", "new")
    assert index.reason("ns", "f-a", "u1") is None and index.waiting_jobs("ns") == ["f-a"]
    index.update(podgroup(uid="u2", conditions=[cond(message="new")]), deleted=True)
    assert index.waiting_jobs("ns") == []


@pytest.mark.parametrize("conditions, want", [
    pytest.param({"f-a": {"phase": "Pending", "createTime": "t"}},
                 {"f-a": {"phase": "Pending", "createTime": "t", "reason": "NotEnoughResources", "message": MSG}},
                 id="added to a pending vcjob's condition"),
    pytest.param({"f-a": {"phase": "Running"}}, {"f-a": {"phase": "Running"}}, id="not once it runs"),
    pytest.param({"f-a": {"phase": "Pending", "reason": "Retrying", "message": "attempt 2"}},
                 {"f-a": {"phase": "Pending", "reason": "Retrying", "message": "attempt 2"}},
                 id="a reason of its own is kept"),
    pytest.param({"f-b": {"phase": "Pending"}}, {"f-b": {"phase": "Pending"}}, id="other vcjobs untouched"),
])
def test_annotate(conditions, want):
    status = {"state": {"phase": "Running"}, "conditions": conditions}
    before = repr(status)
    out = waiting.annotate(status, {"f-a": ("NotEnoughResources", MSG)})
    assert out["conditions"] == want
    assert repr(status) == before   # not modified in place
