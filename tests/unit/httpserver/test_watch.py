"""Watch feeds over the real in-process API: initial state, resume, Gone, selector transitions."""
import datetime

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.httpserver import watch
from vclite.lib import clock as clock_mod
from vclite.lib import errors


def cm(name, ns="default", labels=None):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns,
                                                                   **({"labels": labels} if labels else {})}}


@pytest.fixture
def client():
    return inprocess.new_client(clock_mod.VirtualClock())


def events(feed):
    return [(t, o["metadata"]["name"]) for t, o in feed.drain()]


def test_without_version_starts_with_current_state_then_follows(client):
    client.create(cm("b"))
    client.create(cm("a"))
    feed = watch.Feed(client, kinds.CONFIGMAP, "default", None, None)
    feed.open(None)
    assert events(feed) == [("ADDED", "a"), ("ADDED", "b")]
    client.create(cm("c"))
    client.delete(kinds.CONFIGMAP, "default", "a")
    assert events(feed) == [("ADDED", "c"), ("DELETED", "a")]
    feed.close()
    client.create(cm("d"))
    assert events(feed) == []


def test_resume_from_resource_version_replays_later_events_only(client):
    first = client.create(cm("a"))
    client.create(cm("b"))
    client.patch(kinds.CONFIGMAP, "default", "a", {"data": {"k": "v"}})
    feed = watch.Feed(client, kinds.CONFIGMAP, None, None, None)
    feed.open(first["metadata"]["resourceVersion"])
    assert events(feed) == [("ADDED", "b"), ("MODIFIED", "a")]


def test_too_old_version_is_gone():
    client = inprocess.InProcessClient(inprocess.memory.MemoryStore(clock_mod.VirtualClock(), history=2),
                                       clock_mod.VirtualClock())
    for name in "abcde":
        client.create(cm(name))
    with pytest.raises(errors.Gone):
        watch.Feed(client, kinds.CONFIGMAP, None, None, None).open("1")


def test_namespace_filter(client):
    feed = watch.Feed(client, kinds.CONFIGMAP, "team", None, None)
    feed.open(None)
    client.create(cm("a", "default"))
    client.create(cm("b", "team"))
    assert events(feed) == [("ADDED", "b")]


def test_selector_transitions_become_added_and_deleted(client):
    client.create(cm("a", labels={"app": "x"}))
    feed = watch.Feed(client, kinds.CONFIGMAP, None, "app=y", None)
    feed.open(None)
    assert events(feed) == []
    client.patch(kinds.CONFIGMAP, "default", "a", {"metadata": {"labels": {"app": "y"}}})
    client.patch(kinds.CONFIGMAP, "default", "a", {"data": {"k": "1"}})
    client.patch(kinds.CONFIGMAP, "default", "a", {"metadata": {"labels": {"app": "z"}}})
    client.patch(kinds.CONFIGMAP, "default", "a", {"data": {"k": "2"}})
    assert events(feed) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_field_selector_on_name(client):
    feed = watch.Feed(client, kinds.CONFIGMAP, None, None, "metadata.name=b")
    feed.open(None)
    client.create(cm("a"))
    client.create(cm("b"))
    assert events(feed) == [("ADDED", "b")]


def test_slow_consumer_is_cut_off(client):
    feed = watch.Feed(client, kinds.CONFIGMAP, None, None, None, max_buffer=2)
    feed.open(None)
    for name in "abc":
        client.create(cm(name))
    assert feed.overflowed and len(feed.buffer) == 2


def test_initial_events_end_bookmark(client):
    client.create(cm("a"))
    feed = watch.Feed(client, kinds.CONFIGMAP, None, None, None)
    feed.open(None, send_initial_events=True, initial_bookmark=True, current_rv="42")
    got = feed.drain()
    assert got[-1] == ("BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {
        "resourceVersion": "42", "annotations": {watch.INITIAL_EVENTS_END: "true"}}})


@pytest.mark.parametrize("from_version, initial, bookmarks, wanted", [
    pytest.param(None, None, False, ["ADDED a", "ADDED b", "MODIFIED b"], id="legacy-state-then-changes"),
    pytest.param("first", None, False, ["ADDED b", "MODIFIED b"], id="legacy-replay-from-a-version"),
    pytest.param("first", True, True, ["ADDED a", "ADDED b", "BOOKMARK", "MODIFIED b"],
                 id="initial-events-whatever-the-version"),
    pytest.param(None, True, False, ["ADDED a", "ADDED b", "MODIFIED b"], id="no-end-bookmark-unless-allowed"),
    pytest.param(None, False, False, ["MODIFIED b"], id="no-initial-events-from-now"),
    pytest.param("first", False, False, ["ADDED b", "MODIFIED b"], id="no-initial-events-from-a-version"),
])
def test_send_initial_events_as_kube_apiservers_watch_cache(client, from_version, initial, bookmarks, wanted):
    first = client.create(cm("a"))
    b = client.create(cm("b"))
    feed = watch.Feed(client, kinds.CONFIGMAP, None, None, None)
    feed.open(first["metadata"]["resourceVersion"] if from_version else None, initial, bookmarks, "9")
    client.update({**b, "data": {"k": "2"}})
    assert [f"{t} {o['metadata'].get('name', '')}".strip() for t, o in feed.drain()] == wanted


def test_table_frames_are_one_row_tables(client):
    obj = client.create(cm("a"))
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    frame = watch.frame(kinds.CONFIGMAP, "ADDED", obj, True, now)
    assert frame["type"] == "ADDED" and frame["object"]["kind"] == "Table"
    assert frame["object"]["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    assert len(frame["object"]["rows"]) == 1
    assert watch.frame(kinds.CONFIGMAP, "ADDED", obj, False, now) == {"type": "ADDED", "object": obj}
