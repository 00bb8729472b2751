"""The default StorageClass `standard` a control plane starts with: made when missing at each start (a durable
store reopened keeps its own, or gets it back if a user deleted it), never for a cluster's existing state."""
from vclite.api import kinds, storage
from vclite.apiserver import inprocess
from vclite.lib import clock
from vclite.store import memory, sqlite


def test_a_fresh_control_plane_has_the_default_class():
    [cls] = inprocess.new_client().list(kinds.STORAGECLASS)
    assert cls["metadata"]["name"] == "standard" and storage.is_default_class(cls)
    assert (cls["provisioner"], cls["reclaimPolicy"], cls["volumeBindingMode"]) == (
        storage.PROVISIONER, "Delete", "Immediate")


def test_a_clusters_existing_state_gets_no_class():
    client = inprocess.new_client(store=memory.MemoryStore(clock.VirtualClock()), existing_state=True)
    assert client.list(kinds.STORAGECLASS) == []


def test_deleted_it_stays_deleted_until_the_next_start(tmp_path):
    clk = clock.VirtualClock()
    store = sqlite.SqliteStore(clk, tmp_path / "store.db")
    client = inprocess.new_client(clk, store=store)
    client.delete(kinds.STORAGECLASS, "", "standard")
    assert client.list(kinds.STORAGECLASS) == []
    store.close()
    store = sqlite.SqliteStore(clk, tmp_path / "store.db")
    try:
        assert [meta["metadata"]["name"] for meta in inprocess.new_client(clk, store=store).list(kinds.STORAGECLASS)
                ] == ["standard"]
    finally:
        store.close()


def test_a_changed_default_class_is_kept_at_the_next_start(tmp_path):
    clk = clock.VirtualClock()
    store = sqlite.SqliteStore(clk, tmp_path / "store.db")
    client = inprocess.new_client(clk, store=store)
    client.patch(kinds.STORAGECLASS, "", "standard",
                 {"metadata": {"annotations": {storage.ANN_DEFAULT_CLASS: "false"}}})
    store.close()
    store = sqlite.SqliteStore(clk, tmp_path / "store.db")
    try:
        [cls] = inprocess.new_client(clk, store=store).list(kinds.STORAGECLASS)
        assert not storage.is_default_class(cls)
    finally:
        store.close()
