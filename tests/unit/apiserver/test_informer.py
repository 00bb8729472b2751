"""Informer over the in-process API: the cache follows the watch, and indexes follow every change."""
import pytest

from vclite.api import kinds, meta
from vclite.apiserver import inprocess, informer
from vclite.lib import clock


def pod(name, ns="default", phase=None, group=None):
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {}},
           "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}
    if group:
        obj["metadata"]["labels"]["group"] = group
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def by_group(p):
    return meta.labels(p).get("group")


def running(p):
    return "live" if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed") else None


def names(objs):
    return sorted(meta.name(o) for o in objs)


@pytest.fixture
def client():
    return inprocess.new_client(clock.VirtualClock())


def test_cache_follows_creates_updates_and_deletes(client):
    seen = []
    inf = informer.Informer(client, kinds.POD, lambda ev: seen.append((ev.type, meta.name(ev.object),
                                                                       inf.get("default", meta.name(ev.object)))))
    client.create(pod("before"))
    inf.start()
    client.create(pod("after"))
    client.delete(kinds.POD, "default", "before")
    assert names(inf.items()) == ["after"] and len(inf) == 1
    # the handler runs after the cache holds the event
    assert [(t, n, o is not None) for t, n, o in seen] == [("ADDED", "after", True), ("DELETED", "before", False)]


@pytest.mark.parametrize("steps, want", [
    pytest.param([("create", "a", "g1", None), ("create", "b", "g1", None), ("create", "c", "g2", None)],
                 {"g1": ["a", "b"], "g2": ["c"]}, id="created"),
    pytest.param([("create", "a", "g1", None), ("update", "a", "g2", None)], {"g1": [], "g2": ["a"]},
                 id="moved-between-values"),
    pytest.param([("create", "a", "g1", None), ("update", "a", None, None)], {"g1": []}, id="no-value-any-more"),
    pytest.param([("create", "a", None, None), ("update", "a", "g1", None)], {"g1": ["a"]}, id="value-added"),
    pytest.param([("create", "a", "g1", None), ("delete", "a", None, None)], {"g1": []}, id="deleted"),
    pytest.param([("create", "a", "g1", None), ("create", "a", "g1", "other")], {"g1": ["a", "a"]},
                 id="same-name-other-namespace"),
])
def test_index_follows_changes(client, steps, want):
    inf = informer.Informer(client, kinds.POD, indexers={"group": by_group})
    inf.start()
    for op, name, group, ns in steps:
        ns = ns or "default"
        if op == "create":
            client.create(pod(name, ns, group=group))
        elif op == "update":
            current = client.get(kinds.POD, ns, name)
            current["metadata"]["labels"] = {"group": group} if group else {}
            client.update(current)
        else:
            client.delete(kinds.POD, ns, name)
    for value, expected in want.items():
        assert names(inf.by_index("group", value)) == expected


def test_index_filled_from_the_initial_list_and_by_status(client):
    client.create(pod("a", group="g"))
    client.create(pod("b", group="g"))
    inf = informer.Informer(client, kinds.POD, indexers={"group": by_group, "state": running})
    inf.start()
    assert names(inf.by_index("group", "g")) == ["a", "b"]
    assert names(inf.by_index("state", "live")) == ["a", "b"]
    done = client.get(kinds.POD, "default", "a")
    done["status"] = {"phase": "Succeeded"}
    client.update_status(done)
    assert names(inf.by_index("state", "live")) == ["b"]
    # the index holds the newest version of each object
    assert inf.by_index("group", "g")[0]["metadata"]["resourceVersion"] == \
        inf.get("default", meta.name(inf.by_index("group", "g")[0]))["metadata"]["resourceVersion"]
    assert inf.by_index("state", "nothing") == []
