"""DecodingClient: the components' view leaves out objects whose spec or status is not an object (a store
written past admission), warns once per version, and hands on everything else unchanged."""
from __future__ import annotations

import logging

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.apiserver import decoding, inprocess
from vclite.lib import clock


def _pod(name, **parts):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}, **parts}


@pytest.mark.parametrize("parts, mistyped", [
    ({}, None),
    ({"status": None}, None),
    ({"status": {"phase": "Pending"}}, None),
    ({"status": "Running"}, "status"),
    ({"status": ["Running"]}, "status"),
    ({"status": 3}, "status"),
    ({"spec": "x"}, "spec"),
    ({"spec": [], "status": "y"}, "spec"),
])
def test_mistyped_part(parts, mistyped):
    assert decoding.mistyped_part(_pod("p", **parts)) == mistyped


@pytest.fixture
def api():
    inner = inprocess.new_client(clock.VirtualClock())
    return inner, decoding.DecodingClient(inner)


def test_lists_leave_out_undecodable_objects_and_warn_once_naming_them(api, caplog):
    inner, typed = api
    inner.create(_pod("good"))
    inner.store.create(kinds.POD, _pod("bad", status=["Running"]))   # (past admission, as a hand-written store)
    with caplog.at_level(logging.WARNING):
        assert [o["metadata"]["name"] for o in typed.list(kinds.POD)] == ["good"]
        typed.list(kinds.POD)
    assert caplog.text.count("Pod default/bad has a status that is not an object") == 1
    assert sorted(o["metadata"]["name"] for o in inner.list(kinds.POD)) == ["bad", "good"], "the API serves both"
    assert typed.get(kinds.POD, "default", "bad")["status"] == ["Running"], "gets go through"


def test_watch_skips_undecodable_versions_and_hands_on_the_next_sound_one_as_added(api):
    inner, typed = api
    seen = []
    typed.watch(kinds.POD, lambda ev: seen.append((ev.type, ev.object["metadata"]["name"], ev.old is None)))
    inner.store.create(kinds.POD, _pod("p", status="weird"))
    stored = inner.store.get(kinds.POD, "default", "p")
    inner.store.update(kinds.POD, {**stored, "status": {"phase": "Pending"}}, subresource="status")
    inner.create(_pod("q"))
    inner.delete(kinds.POD, "default", "q")
    assert seen[0] == (client_mod.EventType.ADDED, "p", True), "the first sound version of p is its ADDED"
    assert [(t, n) for t, n, _ in seen[1:]][:1] == [(client_mod.EventType.ADDED, "q")]
    assert (client_mod.EventType.DELETED, "q") in [(t, n) for t, n, _ in seen]


def test_the_deletion_of_an_undecodable_version_is_handed_on_without_its_bad_parts(api):
    """An object a component saw while sound, then written with a bad status and deleted, leaves no ghost."""
    inner, typed = api
    seen = []
    typed.watch(kinds.POD, seen.append)
    inner.create(_pod("p"))
    stored = inner.store.get(kinds.POD, "default", "p")
    inner.store.update(kinds.POD, {**stored, "status": "weird"}, subresource="status")
    inner.store.delete(kinds.POD, "default", "p")
    last = seen[-1]
    assert last.type is client_mod.EventType.DELETED and last.object["metadata"]["name"] == "p"
    assert "status" not in last.object and [e.type for e in seen].count(client_mod.EventType.MODIFIED) == 0


def _vcjob(name, status):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1}]}, "status": status}


def test_a_vcjob_whose_status_holds_a_field_of_the_wrong_type_is_left_out_as_a_whole(api, caplog):
    """(a typed informer cannot decode it: the JobFlow controller would copy `taskStatusCount` into its flow)"""
    inner, typed = api
    seen = []
    typed.watch(kinds.JOB, lambda ev: seen.append((ev.type, ev.object["status"])))
    inner.store.create(kinds.JOB, _vcjob("j", {"state": {"phase": "Running"}}))
    stored = inner.store.get(kinds.JOB, "default", "j")
    bad = {"state": {"phase": "Running"}, "taskStatusCount": {"t": {"phase": {"Running": "one"}}}}
    with caplog.at_level(logging.WARNING):
        inner.store.update(kinds.JOB, {**stored, "status": bad}, subresource="status")
        assert typed.list(kinds.JOB) == [], "left out of lists"
    assert caplog.text.count("Job default/j has a status.taskStatusCount.phase of the wrong type ('one', where Go's "
                             "decoder wants int32") == 1, caplog.text
    assert [t for t, _ in seen] == [client_mod.EventType.ADDED], "the bad version is not handed on"
    stored = inner.store.get(kinds.JOB, "default", "j")
    # a later write that leaves the bad part as it is (the same objects) is still left out
    inner.store.update(kinds.JOB, {**stored, "status": {**stored["status"], "running": 1}}, subresource="status")
    assert len(seen) == 1
    stored = inner.store.get(kinds.JOB, "default", "j")
    inner.store.update(kinds.JOB, {**stored, "status": {"state": {"phase": "Running"}, "running": 1}},
                       subresource="status")
    assert seen[-1] == (client_mod.EventType.ADDED, {"state": {"phase": "Running"}, "running": 1}), \
        "the next sound version is handed on as its ADDED"
    assert [o["metadata"]["name"] for o in typed.list(kinds.JOB)] == ["j"]
