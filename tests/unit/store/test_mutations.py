"""The read-only contract of shared objects: what the in-process client shares, and the detector
that catches a component changing a shared object (store/mutations.py)."""
import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock
from vclite.store import memory, mutations


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "command": ["true"]}]}}


@pytest.fixture
def detecting(monkeypatch):
    monkeypatch.setenv(mutations.ENV, "1")
    store = memory.MemoryStore(clock.VirtualClock())
    return store, inprocess.new_client(clock.VirtualClock(), store=store)


def test_writes_return_the_stored_object_and_reads_return_copies(detecting):
    store, client = detecting
    created = client.create(pod("a"))
    assert created is store.peek(kinds.POD, "default", "a")
    status = client.update_status({**created, "status": {"phase": "Running"}})
    assert status is store.peek(kinds.POD, "default", "a")
    got = client.get(kinds.POD, "default", "a")
    assert got == status and got is not status
    got["status"]["phase"] = "Failed"   # the caller's own copy: allowed
    mutations.check_all_live()
    assert store.peek(kinds.POD, "default", "a")["status"]["phase"] == "Running"


# (how a component breaks the contract, when the detector notices)
MUTATIONS = [
    ("a write's result, noticed at the next write", lambda c, obj: obj["spec"].update(nodeName="x"),
     lambda c: c.update_status({**c.get(kinds.POD, "default", "a"), "status": {"phase": "Running"}})),
    ("a write's result, noticed on delete", lambda c, obj: obj["metadata"]["labels"].update(x="y"),
     lambda c: c.delete(kinds.POD, "default", "a")),
    ("a write's result, noticed on get", lambda c, obj: obj["metadata"].pop("uid"),
     lambda c: c.get(kinds.POD, "default", "a")),
    ("a write's result, noticed by the sweep after a test", lambda c, obj: obj.update(status={"phase": "Failed"}),
     lambda c: mutations.check_all_live()),
]


@pytest.mark.parametrize("case, mutate, notice", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_changed_shared_object_is_reported(detecting, case, mutate, notice):
    _, client = detecting
    created = client.create({**pod("a"), "metadata": {"name": "a", "namespace": "default", "labels": {}}})
    mutate(client, created)
    with pytest.raises(mutations.SharedObjectMutated, match=r"\('Pod', 'default', 'a'\)"):
        notice(client)
    created.clear()   # (leave nothing for the autouse sweep to report)
    mutations._live.clear()


def test_a_watch_handler_that_changes_its_event_object_is_reported_at_once(detecting):
    _, client = detecting
    client.watch(kinds.POD, lambda ev: ev.object["metadata"].update(name="renamed"))
    with pytest.raises(mutations.SharedObjectMutated):
        client.create(pod("a"))
    mutations._live.clear()


def test_the_detector_is_off_unless_asked_for(monkeypatch):
    monkeypatch.delenv(mutations.ENV, raising=False)
    store = memory.MemoryStore(clock.VirtualClock())
    created = store.create(kinds.POD, pod("a"), copy_result=False)
    created["metadata"]["labels"] = {"changed": "in place"}   # nothing checks: production pays nothing
    assert store.get(kinds.POD, "default", "a")["metadata"]["labels"] == {"changed": "in place"}
