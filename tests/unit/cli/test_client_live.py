"""`vcctl jobflow get -w`'s pure parts: what it lists and watches, and when its last frame may be drawn (the
vcjobs the finished JobFlow's status says ended are ended in the cache too)."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.cli import client_live, phasechanges, view, viewdraw
from vclite.store import selectors


def jobflow(conditions):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
            "metadata": {"name": "jf", "namespace": "default"},
            "spec": {"flows": [{"name": n} for n in ("a", "b")]},
            "status": {"state": {"phase": "Succeed"}, "conditions": conditions}}


def job(name, phase):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"}, "status": {"state": {"phase": phase}}}


@pytest.mark.parametrize("conditions, jobs, expected", [
    pytest.param({"jf-a": {"phase": "Completed"}, "jf-b": {"phase": "Completed"}},
                 [job("jf-a", "Completed"), job("jf-b", "Running")], ["jf-b"], id="a-completion-not-seen-yet"),
    pytest.param({"jf-a": {"phase": "Completed"}, "jf-b": {"phase": "Failed", "createTime": "t"}},
                 [job("jf-a", "Completed"), job("jf-b", "Failed")], [], id="caught-up"),
    pytest.param({"jf-a": {"phase": "Completed"}}, [], [], id="a-vcjob-not-seen-at-all-is-drawn-from-its-condition"),
    pytest.param({"jf-a": {"phase": "Running"}}, [job("jf-a", "Completed")], [], id="the-cache-ahead-of-the-status"),
    pytest.param({"jf-a": {"phase": "Pending", "reason": "WaitingForDependencies"}}, [job("jf-a", "Pending")], [],
                 id="not-ended-in-the-status"),
])
def test_the_vcjobs_behind_the_jobflow_status(conditions, jobs, expected):
    assert client_live.behind(view.Snapshot([jobflow(conditions)], jobs, [], [])) == expected


@pytest.mark.parametrize("phase, listed", [("Pending", True), ("Running", True), ("Failed", True),
                                           ("Succeeded", False)])
def test_pods_that_succeeded_are_not_listed(phase, listed):
    """The view reads pods only to say why a job waits or failed."""
    field_selector = dict(client_live.selectors("default", "jf"))[kinds.POD]["field_selector"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "status": {"phase": phase}}
    assert selectors.field_predicate(field_selector, "Pod")(pod) is listed


def test_the_last_frame_written_to_a_file_has_each_row_on_one_line_without_padding():
    """Written to a file or a pipe, rich drew 80 columns: a row's detail wrapped over many lines of a log."""
    import datetime as dt
    detail = "attempt 2 failed; no retries left (limit 1) " * 3
    jf = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
          "metadata": {"name": "jf", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
          "status": {"state": {"phase": "Failed"}, "conditions": {
              "jf-a": {"phase": "Failed", "reason": "RetriesExhausted", "message": detail.strip()},
              "jf-b": {"phase": "Skipped", "reason": "DependencyNeverMet",
                       "message": "dependsOn target a was Failed"}}}}
    text = client_live.unwrapped(viewdraw.render(view.Snapshot([jf], [], [], []),
                                             dt.datetime(2026, 1, 1, 0, 1, tzinfo=dt.timezone.utc)))
    lines = text.splitlines()
    assert any(line.startswith("a ") and line.endswith(detail.strip()) for line in lines), text
    assert any(line.startswith("b ") and line.endswith("dependsOn target a was Failed") for line in lines), text
    assert all(line == line.rstrip() for line in lines) and len(lines) == 5, text


def event(job_name, reason="FailedCreate", kind="Job", last="2026-01-01T00:00:01Z", rv="5", message="refused"):
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{job_name}.{rv}", "namespace": "default",
                                                              "resourceVersion": rv},
            "involvedObject": {"kind": kind, "namespace": "default", "name": job_name}, "reason": reason,
            "lastTimestamp": last, "message": message, "type": "Warning"}


@pytest.mark.parametrize("ev, listed", [
    pytest.param(event("jf-a"), True, id="a-vcjobs-failed-create"),
    pytest.param(event("jf-a", reason="Scheduled"), False, id="another-reason"),
    pytest.param(event("p", kind="Pod"), False, id="another-kind"),
])
def test_the_failed_creates_of_vcjobs_are_watched(ev, listed):
    """Why a vcjob of the flow lacks pods (the API refused them: a missing ServiceAccount on a server, a quota): the
    view said only `Pending main 0/1`, where `vcctl run` said `FailedCreate: …`."""
    field_selector = dict(client_live.selectors("default", "jf"))[kinds.EVENT]["field_selector"]
    assert selectors.field_predicate(field_selector, "Event")(ev) is listed


def test_a_waiting_vcjob_says_its_latest_failed_create():
    cache = client_live.Cache()
    a = {**job("jf-a", "Pending"), "spec": {"tasks": [{"name": "main", "replicas": 1}]}}
    cache.seed(kinds.JOBFLOW, [jobflow({"jf-a": {"phase": "Pending"}})])
    cache.seed(kinds.JOB, [a])
    cache.seed(kinds.EVENT, [
        event("jf-a", last="2026-01-01T00:00:09Z", rv="7", message='serviceaccount "ci" not found'),
        event("jf-a", last="2026-01-01T00:00:01Z", rv="9", message="older")])
    snap = cache.snapshot()
    assert snap.create_failures == {("default", "jf-a"): 'serviceaccount "ci" not found'}
    assert view.why_waiting(snap, a) == 'FailedCreate: serviceaccount "ci" not found'


class _NoEvents:
    """A client of a cluster whose user may not read Events (the rest is listed empty)."""

    def list_with_version(self, kind, namespace, label_selector=None, field_selector=None):
        if kind is kinds.EVENT:
            from vclite.lib import errors
            raise errors.Forbidden('events is forbidden: User "dev" cannot list resource "events"')
        return [], "1"

    def watch(self, kind, handler, resource_version=None, **kw):
        return type("Sub", (), {"cancel": lambda self: None})()


def test_a_user_who_may_not_read_events_still_follows_the_flow():
    cache = client_live.Cache()
    loader = client_live.Loader(_NoEvents(), cache, "default", "jf", jobflow({})).start()
    for t in loader._threads:
        t.join(10)
    loader.check()   # (no error: the view goes without the Events' reasons)
    assert loader.done() and cache.snapshot().create_failures == {}


def versioned(obj, rv):
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv)}}


def _event(kind, obj, type_="MODIFIED"):
    from vclite.apiserver import client as client_mod
    return client_mod.WatchEvent(client_mod.EventType(type_), kind, obj, None)


@pytest.mark.parametrize("versions, expected", [
    pytest.param({"jf": 12, "jf-a": 11}, ["vcjob default/jf-a", "JobFlow default/jf"],
                 id="a-vcjobs-failure-before-the-JobFlows-it-caused"),
    pytest.param({"jf": 10, "jf-a": 11}, ["JobFlow default/jf", "vcjob default/jf-a"], id="in-the-servers-order"),
])
def test_the_changes_in_the_order_the_server_wrote_them(versions, expected):
    """The JobFlow and its vcjobs come on two watches: each batch is taken in resourceVersion order."""
    cache = client_live.Cache(events=True)
    cache.seed(kinds.JOBFLOW, [])
    cache.seed(kinds.JOB, [])
    cache.handle(_event(kinds.JOBFLOW, versioned({**jobflow({}), "status": {"state": {"phase": "Failed"}}},
                                                 versions["jf"])))
    cache.handle(_event(kinds.JOB, versioned(job("jf-a", "Failed"), versions["jf-a"])))
    changes = phasechanges.PhaseChanges()
    assert [changes.observe(t, obj)[0] for t, obj in cache.drain()] == expected
    assert cache.drain() == []   # (taken once)


def test_a_listed_object_is_taken_as_added_and_only_flows_and_vcjobs_are_kept():
    cache = client_live.Cache(events=True)
    cache.seed(kinds.JOB, [versioned(job("jf-a", "Running"), 3)])
    cache.seed(kinds.JOBFLOW, [])
    cache.seed(kinds.PODGROUP, [{"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "default"}}])
    cache.handle(_event(kinds.POD, {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}))
    assert [(t, obj["metadata"]["name"]) for t, obj in cache.drain()] == [("ADDED", "jf-a")]
    assert client_live.Cache().drain() == []   # (a terminal's view keeps no events)


def test_every_phase_a_vcjob_passed_between_two_reads_has_its_line_in_order():
    """A RestartJob policy: Running, Restarting, Pending, Running again, all before the next read — as `vcctl run`
    writes them (a read of the last state alone said Running, then nothing)."""
    cache = client_live.Cache(events=True)
    changes = phasechanges.PhaseChanges()
    cache.seed(kinds.JOB, [versioned(job("jf-a", "Running"), 5)])
    cache.seed(kinds.JOBFLOW, [])
    assert changes.observe(*cache.drain()[0]) and changes.lines() == ["vcjob default/jf-a: Running"]
    for rv, phase in enumerate(["Restarting", "Pending", "Running", "Completed"], start=6):
        cache.handle(_event(kinds.JOB, versioned(job("jf-a", phase), rv)))
    for ev_type, obj in cache.drain():
        changes.observe(ev_type, obj)
    assert changes.lines() == [f"vcjob default/jf-a: {p}" for p in ("Restarting", "Pending", "Running", "Completed")]


def listed(name, phase, rv, at=None, created="2026-01-01T00:00:00Z"):
    obj = versioned(job(name, phase), rv)
    obj["metadata"]["creationTimestamp"] = created
    if at:
        obj["status"]["state"]["lastTransitionTime"] = at
    return obj


def flow_listed(phase, rv, recorded=()):
    return versioned({**jobflow({}), "status": {"state": {"phase": phase},
                                                 "jobStatusList": [{"name": n} for n in recorded]}}, rv)


T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"


@pytest.mark.parametrize("jobflow_obj, jobs, expected", [
    pytest.param(flow_listed("Succeed", 70), [listed("jf-a", "Completed", 72, T1), listed("jf-b", "Completed", 68, T2)],
                 ["vcjob default/jf-a", "vcjob default/jf-b", "JobFlow default/jf"],
                 id="a-vcjob-written-again-after-the-flow-ended-still-before-its-Succeed"),
    pytest.param(flow_listed("Running", 64), [listed("jf-b", "Running", 61, T2), listed("jf-a", "Completed", 66, T1)],
                 ["JobFlow default/jf", "vcjob default/jf-a", "vcjob default/jf-b"], id="mid-flow"),
    pytest.param(flow_listed("Succeed", 70, ["jf-a", "jf-b"]),
                 [listed("jf-b", "Completed", 68, T1), listed("jf-a", "Completed", 72, T1)],
                 ["vcjob default/jf-a", "vcjob default/jf-b", "JobFlow default/jf"],
                 id="the-same-second-in-the-order-the-flow-recorded-them"),
    pytest.param(flow_listed("Failed", 9), [listed("jf-b", "Failed", 8, T1, created=T1),
                                            listed("jf-a", "Completed", 7, T1, created=T0)],
                 ["vcjob default/jf-a", "vcjob default/jf-b", "JobFlow default/jf"], id="the-same-second-by-creation"),
    pytest.param(flow_listed("Pending", 3), [listed("jf-a", "Pending", 2)],
                 ["JobFlow default/jf", "vcjob default/jf-a"], id="pending-no-transition-time"),
])
def test_a_late_start_lists_in_the_order_the_objects_reached_their_phase(jobflow_obj, jobs, expected):
    """`vcctl jobflow get -w` started after changes: the listed objects' lines in the order they reached their
    phase (not their current resourceVersion), a finished JobFlow after the vcjobs that ended it; nothing is
    drained before both kinds are listed (the JobFlow's Succeed alone first)."""
    cache = client_live.Cache(events=True)
    cache.seed(kinds.JOBFLOW, [jobflow_obj])
    assert cache.drain() == []   # (its vcjobs not listed yet)
    cache.seed(kinds.JOB, jobs)
    cache.handle(_event(kinds.JOB, versioned(job("jf-c", "Pending"), 1)))   # (a watch event: after the listing)
    changes = phasechanges.PhaseChanges()
    assert [changes.observe(t, obj)[0] for t, obj in cache.drain()] == expected + ["vcjob default/jf-c"]


def _flow_job(spec_extra, name="jf-a"):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"volcano.sh/createdByJobFlow": "default.jf"}},
            "spec": {"minAvailable": 1, "queue": "default", "tasks": [{"name": "t", "replicas": 1, "template": {
                "spec": {"containers": [{"name": "c", "image": "x", "command": ["true"]}]}}}], **spec_extra},
            "status": {"state": {"phase": "Running"}}}


class _AsKubeClient:
    """The in-process client (its real store and watch) with the kube client's list_with_version and watch
    signatures the live view calls (selectors left out: this flow's objects are all there is)."""

    def __init__(self, raw):
        self.raw = raw

    def list_with_version(self, kind, namespace=None, label_selector=None, field_selector=None):
        objects = self.raw.list(kind, namespace)
        return objects, str(max([0] + [int(o["metadata"]["resourceVersion"]) for o in objects]))

    def watch(self, kind, handler, resource_version=None, namespace=None, label_selector=None, field_selector=None):
        return self.raw.watch(kind, handler, resource_version)


@pytest.mark.parametrize("listed, then, said", [
    pytest.param(_flow_job({"minAvailable": "one"}), None, "Job.spec.minAvailable of type int32",
                 id="listed: the typed list fails"),
    pytest.param(None, ("create", _flow_job({"minAvailable": "one"})), "Job.spec.minAvailable of type int32",
                 id="added through the watch: the view ends in the decoder's words"),
    pytest.param(_flow_job({}), ("update", _flow_job({"minAvailable": "one"})), "Job.spec.minAvailable of type int32",
                 id="modified through the watch"),
    pytest.param(None, ("create", _flow_job({})), None, id="a sound vcjob through the watch"),
    pytest.param(None, ("create-delete", _flow_job({"minAvailable": "one"})), "Job.spec.minAvailable",
                 id="added then deleted: its ADDED fails the view"),
])
def test_a_mistyped_object_listed_or_watched_fails_the_live_view(listed, then, said):
    """`jobflow get -w` reads as the other commands do (client_common.TypedClient): an object that does not decode
    into its Go type — listed, or in a watch event (written past admission, here straight into the store) —
    ends the view with CommandError in the Go decoder's words, instead of drawing it (or crashing on it)."""
    import time
    from vclite.apiserver import inprocess
    from vclite.cli import client_common
    from vclite.lib import clock
    raw = inprocess.new_client(clock.VirtualClock())
    flow_obj = raw.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                           "metadata": {"name": "jf", "namespace": "default"}, "spec": {"flows": [{"name": "a"}]}})
    if listed is not None:
        raw.store.create(kinds.JOB, listed)
    cache = client_live.Cache()
    loader = client_live.Loader(client_common.TypedClient(_AsKubeClient(raw)), cache, "default", "jf",
                                flow_obj).start()
    for t in loader._threads:
        t.join(10)
    if then is not None:
        how, obj = then
        if how == "update":
            obj["metadata"]["resourceVersion"] = raw.get(kinds.JOB, "default", "jf-a")["metadata"]["resourceVersion"]
            raw.store.update(kinds.JOB, obj)
        else:
            raw.store.create(kinds.JOB, obj)
            if how == "create-delete":
                raw.store.delete(kinds.JOB, "default", "jf-a")
        deadline = time.monotonic() + 10
        while loader.error is None and said is not None and time.monotonic() < deadline:
            cache.changed.wait(0.1)
    loader.cancel()
    if said is None:
        loader.check()
        assert [meta["metadata"]["name"] for meta in cache.snapshot().jobs] == ["jf-a"]
        return
    with pytest.raises(client_common.CommandError, match=said):
        loader.check()
