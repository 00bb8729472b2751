"""core/v1 Event admission: fields typed as kube-apiserver decodes them, the Event in its object's namespace."""
from __future__ import annotations

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation


def event(namespace="team", **fields):
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": namespace},
            "involvedObject": {"kind": "Pod", "namespace": namespace, "name": "p"}, "reason": "R", "message": "m",
            "type": "Normal", "count": 1, **fields}


def admit_event(new, op=Op.CREATE, old=None):
    return admit.admit(op, kinds.EVENT, new, old, views.default_view())


@pytest.mark.parametrize("new", [
    pytest.param(event(), id="legacy recorder's"),
    pytest.param(event("default", involvedObject={"kind": "Queue", "name": "q", "namespace": None}),
                 id="cluster-scoped object, in default"),
    pytest.param(event(eventTime="2026-01-01T00:00:00.000000Z", source={"component": "c"},
                       series={"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}), id="new fields"),
    pytest.param(event("kube-system", eventTime="2026-01-01T00:00:00.000000Z",
                       involvedObject={"kind": "Node", "name": "n"}), id="eventTime, cluster-scoped, kube-system"),
])
def test_accepts(new):
    assert admit_event(new)["metadata"]["name"] == "e"


@pytest.mark.parametrize("new, path, message", [
    pytest.param(event(involvedObject=5), "involvedObject", "Invalid value: 5: must be of type object",
                 id="involvedObject not an object"),
    pytest.param(event(count="x"), "count", 'Invalid value: "x": must be of type integer', id="count a string"),
    pytest.param(event(reason=["R"]), "reason", "must be of type string", id="reason a list"),
    pytest.param(event(involvedObject={"kind": "Pod", "name": 3, "namespace": "team"}), "involvedObject.name",
                 "must be of type string", id="involved name a number"),
    pytest.param(event(source="kubelet"), "source", "must be of type object", id="source a string"),
    pytest.param(event(series={"count": "2"}), "series.count", "must be of type integer", id="series count"),
    pytest.param(event(involvedObject={"kind": "Pod", "name": "p", "namespace": "other"}),
                 "involvedObject.namespace", 'Invalid value: "other": does not match event.namespace',
                 id="another namespace's object"),
    pytest.param(event("team", involvedObject={"kind": "Node", "name": "n"}), "involvedObject.namespace",
                 'Invalid value: "": does not match event.namespace', id="cluster-scoped object outside default"),
    pytest.param(event("team", eventTime="2026-01-01T00:00:00.000000Z", involvedObject={"kind": "Node", "name": "n"}),
                 "involvedObject.namespace", "does not match event.namespace",
                 id="eventTime, cluster-scoped outside default and kube-system"),
    pytest.param(event("team", involvedObject=None), "involvedObject.namespace", "does not match event.namespace",
                 id="no involvedObject, outside default"),
])
def test_rejects_naming_the_field(new, path, message):
    for op, old in ((Op.CREATE, None), (Op.UPDATE, event())):
        with pytest.raises(errors.Invalid) as info:
            admit_event(new, op, old)
        assert any(e.path == path and message in e.message for e in info.value.errors), info.value.errors
