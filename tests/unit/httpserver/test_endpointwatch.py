"""The Endpoints and EndpointSlice watch feed (httpserver/endpointwatch.py) over the real in-process API:
after any sequence of Service and Pod changes (relabelled pods, changed selectors, deletions) what it has
sent is what a list computes from scratch, and a pod event recomputes only the Services selecting the pod
from that Service's own pods."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.httpserver import absent, backend, endpoints, endpointwatch
from vclite.lib import clock


def service(name, selector):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": selector, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def pod(name, labels):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x", "command": ["true"]}]}}


def running(client, name, ready=True):
    p = client.get(kinds.POD, "default", name)
    return client.update_status({**p, "status": {"phase": "Running", "podIP": "127.0.0.1", "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}})


def relabel(client, name, labels):
    p = client.get(kinds.POD, "default", name)
    return client.update({**p, "metadata": {**p["metadata"], "labels": labels}})


def reselect(client, name, selector):
    s = client.get(kinds.SERVICE, "default", name)
    return client.update({**s, "spec": {**s["spec"], "selector": selector}})


def open_feed(client, kind_name):
    kind = next(k for k in absent.ALL if k.kind == kind_name)
    feed = endpointwatch.EndpointsFeed(client, backend.Backend.of_client(client).select, kind, "default", None, None)
    feed.open(None)
    return feed


def from_scratch(client, kind_name):
    pods = client.list(kinds.POD, "default")
    compute = endpoints.all_of if kind_name == "Endpoints" else endpoints.all_slices
    return {o["metadata"]["name"]: endpointwatch._without_version(o)
            for o in compute(client.list(kinds.SERVICE, "default"), pods)}


def shown(feed):
    return {key[1]: obj for objs in feed.sent.values() for key, obj in objs.items()}


STEPS = [
    ("run", "a1"), ("run", "b1"), ("relabel", "a1", {"app": "b"}), ("reselect", "a", {"app": "b", "tier": "x"}),
    ("relabel", "b1", {"app": "b", "tier": "x"}), ("ready", "b1", False), ("delete-pod", "a2"),
    ("reselect", "b", {"tier": "x"}), ("delete-svc", "a"), ("relabel", "a1", {}), ("run", "c1"),
]


@pytest.mark.parametrize("kind_name", ["Endpoints", "EndpointSlice"])
def test_what_the_watch_sent_is_what_a_list_computes_after_every_change(kind_name):
    client = inprocess.new_client(clock.VirtualClock())
    client.create(service("a", {"app": "a"}))
    client.create(service("b", {"app": "b"}))
    client.create(service("none", {}))   # (no selector: no Endpoints)
    for name, labels in (("a1", {"app": "a"}), ("a2", {"app": "a"}), ("b1", {"app": "b"}), ("c1", {"app": "c"})):
        client.create(pod(name, labels))
    feed = open_feed(client, kind_name)
    assert shown(feed) == from_scratch(client, kind_name)
    for step in STEPS:
        what, name, *rest = step
        if what == "run":
            running(client, name)
        elif what == "ready":
            running(client, name, rest[0])
        elif what == "relabel":
            relabel(client, name, rest[0])
        elif what == "reselect":
            reselect(client, name, rest[0])
        elif what == "delete-pod":
            client.delete(kinds.POD, "default", name)
        else:
            client.delete(kinds.SERVICE, "default", name)
        assert shown(feed) == from_scratch(client, kind_name), step


def test_a_pod_event_recomputes_only_the_services_selecting_it_from_their_own_pods(monkeypatch):
    client = inprocess.new_client(clock.VirtualClock())
    for s in "abc":
        client.create(service(s, {"app": s}))
        for i in range(10):
            client.create(pod(f"{s}{i}", {"app": s}))
    feed = open_feed(client, "Endpoints")
    seen = []
    real = endpoints.of_service

    def spy(svc, pods, apiserver=None, matches=None):
        pods = list(pods)
        seen.append((svc["metadata"]["name"], len(pods)))
        return real(svc, pods, apiserver, matches)
    monkeypatch.setattr(endpoints, "of_service", spy)
    running(client, "a3")
    relabel(client, "b0", {"app": "c"})   # (leaves b, joins c)
    assert seen == [("a", 10), ("b", 9), ("c", 11)]
    assert [a["targetRef"]["name"] for a in shown(feed)["a"]["subsets"][0]["addresses"]] == ["a3"]


@pytest.mark.parametrize("kind_name", ["Endpoints", "EndpointSlice"])
def test_a_services_selector_is_parsed_once_per_version_not_at_each_recompute(monkeypatch, kind_name):
    """Pod events recompute a Service many times; its selector is parsed when the feed loads it and again only
    when the Service changes (a new selector), and what is sent is still what a list computes."""
    client = inprocess.new_client(clock.VirtualClock())
    client.create(service("a", {"app": "a"}))
    client.create(service("b", {"app": "b"}))
    for name, labels in (("a1", {"app": "a"}), ("a2", {"app": "a"}), ("b1", {"app": "b"})):
        client.create(pod(name, labels))
    parsed = []
    real = endpoints.selectors.label_predicate

    def counted(selector):
        if selector:   # (not the watch's own label selector: none here)
            parsed.append(selector)
        return real(selector)
    monkeypatch.setattr(endpoints.selectors, "label_predicate", counted)
    feed = open_feed(client, kind_name)
    loaded = list(parsed)
    for ready in (True, False, True):
        for name in ("a1", "a2", "b1"):
            running(client, name, ready)
    after_pods = list(parsed)
    reselect(client, "a", {"app": "b"})
    running(client, "b1", False)
    assert (loaded, after_pods, parsed) == (["app=a", "app=b"], ["app=a", "app=b"], ["app=a", "app=b", "app=b"])
    monkeypatch.setattr(endpoints.selectors, "label_predicate", real)
    assert shown(feed) == from_scratch(client, kind_name)
