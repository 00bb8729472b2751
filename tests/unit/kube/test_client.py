"""HttpClient against a real `vcctl server` (TLS on loopback, bearer token from its kubeconfig):
the Client protocol over the Kubernetes REST API, errors as vclite.lib.errors, and watches."""
import dataclasses
import queue
import time

import pytest

from tests import vcctl_server
from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.kube import client as kube_client
from vclite.kube import kubeconfig, status, watch
from vclite.lib import errors

WAIT = 30.0  # seconds to wait for an expected watch event before giving up


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("vclite"), "--nodes", "1x(cpu=2,memory=4Gi)") as srv:
        yield srv


@pytest.fixture(scope="module")
def api(server):
    return kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))


def cm(name, ns="default", **labels):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "data": {"k": "v"}}


def queue_obj(name, weight=1):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": weight}}


def test_crud_round_trip(api):
    created = api.create(cm("crud", app="x"))
    assert (created["kind"], created["apiVersion"], created["metadata"]["namespace"]) == ("ConfigMap", "v1", "default")
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    got = api.get(kinds.CONFIGMAP, "default", "crud")
    got["data"]["k"] = "changed"
    updated = api.update(got)
    assert updated["data"] == {"k": "changed"}
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    patched = api.patch(kinds.CONFIGMAP, "default", "crud", {"data": {"extra": "1", "k": None}})
    assert patched["data"] == {"extra": "1"}
    deleted = api.delete(kinds.CONFIGMAP, "default", "crud")
    assert deleted is None or deleted["metadata"]["name"] == "crud"
    with pytest.raises(errors.NotFound, match='configmaps "crud" not found'):
        api.get(kinds.CONFIGMAP, "default", "crud")


def test_delete_sends_its_preconditions(api):
    created = api.create(cm("pre"))
    with pytest.raises(errors.Conflict, match=r'ConfigMap "pre": the UID in the precondition \(stale\)'):
        api.delete(kinds.CONFIGMAP, "default", "pre", preconditions={"uid": "stale"})
    assert api.get(kinds.CONFIGMAP, "default", "pre")["metadata"]["uid"] == created["metadata"]["uid"]
    api.delete(kinds.CONFIGMAP, "default", "pre", preconditions={"uid": created["metadata"]["uid"]})
    with pytest.raises(errors.NotFound):
        api.get(kinds.CONFIGMAP, "default", "pre")


def test_status_subresource_writes_only_status(api):
    api.create(queue_obj("st", weight=2))
    try:
        q = api.get(kinds.QUEUE, "", "st")
        q["status"] = {"state": "Closed"}
        q["spec"]["weight"] = 99  # ignored by a status write
        written = api.update_status(q)
        assert (written["status"]["state"], written["spec"]["weight"]) == ("Closed", 2)
        patched = api.patch(kinds.QUEUE, "", "st", {"status": {"state": "Open"}}, status=True)
        assert patched["status"]["state"] == "Open"
    finally:
        api.delete(kinds.QUEUE, "", "st")


def test_list_selectors_pages_and_kinds_filled_in(api, monkeypatch):
    for i in range(5):
        api.create(cm(f"page-{i}", tier="a" if i % 2 else "b"))
    try:
        monkeypatch.setattr(kube_client, "LIST_PAGE", 2)  # force `continue` tokens
        items, rv = api.list_with_version(kinds.CONFIGMAP, "default", {"tier": "b"})
        assert sorted(o["metadata"]["name"] for o in items) == ["page-0", "page-2", "page-4"] and rv
        assert {(o["apiVersion"], o["kind"]) for o in items} == {("v1", "ConfigMap")}
        assert [o["metadata"]["name"] for o in api.list(kinds.CONFIGMAP, None, field_selector="metadata.name=page-3")] \
            == ["page-3"]
        assert len([o for o in api.list(kinds.CONFIGMAP) if o["metadata"]["name"].startswith("page-")]) == 5
    finally:
        for i in range(5):
            api.delete(kinds.CONFIGMAP, "default", f"page-{i}")


@pytest.mark.parametrize("action, error", [
    pytest.param("exists", errors.AlreadyExists, id="already-exists"),
    pytest.param("stale", errors.Conflict, id="stale-resource-version"),
    pytest.param("invalid", errors.Invalid, id="invalid"),
    pytest.param("unknown-kind", errors.BadRequest, id="unknown-kind"),
])
def test_errors(api, action, error):
    api.create(cm(f"err-{action}"))
    try:
        with pytest.raises(error) as info:
            if action == "exists":
                api.create(cm(f"err-{action}"))
            elif action == "stale":
                old = api.get(kinds.CONFIGMAP, "default", f"err-{action}")
                api.update(dict(old, data={"a": "1"}))
                api.update(dict(old, data={"a": "2"}))
            elif action == "invalid":
                api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "cyc"},
                            "spec": {"flows": [{"name": "a", "dependsOn": {"targets": ["a"]}}]}})
            else:
                api.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
        if error is errors.Invalid:
            assert info.value.errors and "jobflow Flow is not DAG" in str(info.value)
    finally:
        api.delete(kinds.CONFIGMAP, "default", f"err-{action}")


def test_discovery_and_version(api):
    assert api.version()["gitVersion"].startswith("v1.")
    assert api.serves("flow.volcano.sh/v1alpha1", "jobflows")
    assert api.serves("bus.volcano.sh/v1alpha1", "commands")
    assert not api.serves("bus.volcano.sh/v1alpha1", "nothings")


def test_wrong_token_and_no_server(server):
    cfg = kubeconfig.load(str(server.kubeconfig))
    bad = kube_client.HttpClient(dataclasses.replace(cfg, token="wrong"))
    with pytest.raises(status.Unauthorized):
        bad.list(kinds.JOBFLOW)
    nowhere = kube_client.HttpClient(kubeconfig.Config(server="http://127.0.0.1:9"))
    with pytest.raises(status.Unreachable, match=r'Get "http://127.0.0.1:9/apis/flow.volcano.sh/v1alpha1/jobflows'):
        nowhere.list(kinds.JOBFLOW)


def test_tls_needs_the_ca(server):
    cfg = kubeconfig.load(str(server.kubeconfig))
    if not cfg.server.startswith("https://"):
        pytest.skip("the server serves plain HTTP on loopback")
    no_ca = kube_client.HttpClient(dataclasses.replace(cfg, ca_data=None))
    with pytest.raises(status.Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
        no_ca.version()
    insecure = kube_client.HttpClient(dataclasses.replace(cfg, ca_data=None, insecure=True))
    assert insecure.version()["major"] == "1"


# ---- watch -------------------------------------------------------------------------------------------
def next_event(events: queue.Queue, name: str):
    while True:
        ev = events.get(timeout=WAIT)
        if ev.object["metadata"]["name"] == name:
            return ev


def test_watch_delivers_changes_with_old_and_stops_on_cancel(api):
    events: queue.Queue = queue.Queue()
    sub = api.watch(kinds.CONFIGMAP, events.put, namespace="default")
    try:
        api.create(cm("w1"))
        ev = next_event(events, "w1")
        assert (ev.type, ev.kind, ev.old) == (client_mod.EventType.ADDED, kinds.CONFIGMAP, None)
        assert ev.object["kind"] == "ConfigMap"
        api.patch(kinds.CONFIGMAP, "default", "w1", {"data": {"k": "v2"}})
        ev = next_event(events, "w1")
        assert ev.type == client_mod.EventType.MODIFIED and (ev.old["data"], ev.object["data"]) == ({"k": "v"},
                                                                                                    {"k": "v2"})
        api.delete(kinds.CONFIGMAP, "default", "w1")
        assert next_event(events, "w1").type == client_mod.EventType.DELETED
    finally:
        sub.cancel()
    api.create(cm("after-cancel"))
    api.delete(kinds.CONFIGMAP, "default", "after-cancel")
    marker: queue.Queue = queue.Queue()
    other = api.watch(kinds.CONFIGMAP, marker.put, namespace="default")
    try:
        api.create(cm("marker"))
        next_event(marker, "marker")  # the server has sent everything up to here to every watcher
    finally:
        other.cancel()
        api.delete(kinds.CONFIGMAP, "default", "marker")
    assert [e for e in list(events.queue) if e.object["metadata"]["name"] == "after-cancel"] == []


def test_watch_from_a_list_version_replays_and_is_narrowed_by_selectors(api):
    api.create(cm("sel-1", team="x"))
    items, rv = api.list_with_version(kinds.CONFIGMAP, "default")
    api.patch(kinds.CONFIGMAP, "default", "sel-1", {"data": {"k": "after-list"}})
    api.create(cm("sel-2", team="y"))
    events: queue.Queue = queue.Queue()
    sub = api.watch(kinds.CONFIGMAP, events.put, rv, namespace="default", label_selector={"team": "x"})
    try:
        ev = next_event(events, "sel-1")
        assert ev.type == client_mod.EventType.MODIFIED and ev.object["data"] == {"k": "after-list"}
        assert ev.old is None  # this subscription had not seen sel-1 before
        api.patch(kinds.CONFIGMAP, "default", "sel-1", {"data": {"k": "again"}})
        ev = next_event(events, "sel-1")
        assert ev.old["data"] == {"k": "after-list"}
        assert all(e.object["metadata"]["name"] != "sel-2" for e in list(events.queue))
    finally:
        sub.cancel()
        api.delete(kinds.CONFIGMAP, "default", "sel-1")
        api.delete(kinds.CONFIGMAP, "default", "sel-2")


def test_watch_resumes_when_the_server_ends_the_stream(api, monkeypatch):
    monkeypatch.setattr(watch, "SERVER_TIMEOUT", 1)  # the server closes each watch after 1 s
    events: queue.Queue = queue.Queue()
    sub = api.watch(kinds.CONFIGMAP, events.put, namespace="default")
    try:
        api.create(cm("resume-1"))
        next_event(events, "resume-1")
        time.sleep(1.5)  # the first stream has ended by now; the subscription must have re-opened it
        api.create(cm("resume-2"))
        ev = next_event(events, "resume-2")
        assert ev.type == client_mod.EventType.ADDED
    finally:
        sub.cancel()
        api.delete(kinds.CONFIGMAP, "default", "resume-1")
        api.delete(kinds.CONFIGMAP, "default", "resume-2")


def test_watch_of_every_kind(api):
    events: queue.Queue = queue.Queue()
    sub = api.watch(None, events.put)
    try:
        api.create(queue_obj("every"))
        ev = next_event(events, "every")
        assert ev.kind is kinds.QUEUE and ev.type == client_mod.EventType.ADDED
    finally:
        sub.cancel()
        api.delete(kinds.QUEUE, "", "every")


def test_bind_through_the_binding_subresource(api):
    node = api.list(kinds.NODE)[0]["metadata"]["name"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bind-me", "namespace": "default"},
           "spec": {"schedulerName": "someone-else", "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}
    api.create(pod)
    try:
        api.bind("default", "bind-me", node, annotations={"bound-by": "test"})
        got = api.get(kinds.POD, "default", "bind-me")
        assert got["spec"]["nodeName"] == node and got["metadata"]["annotations"]["bound-by"] == "test"
        assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in got["status"]["conditions"])
        with pytest.raises(errors.Conflict, match="already assigned"):
            api.bind("default", "bind-me", node)
        with pytest.raises(errors.NotFound):
            api.bind("default", "no-such-pod", node)
    finally:
        api.delete(kinds.POD, "default", "bind-me")
