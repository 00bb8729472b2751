"""A re-list after 410 Expired turns into the events that bring the subscription's cache up to date."""
import pytest

from vclite.apiserver import client as client_mod
from vclite.kube import watch

A = client_mod.EventType.ADDED
M = client_mod.EventType.MODIFIED
D = client_mod.EventType.DELETED


def obj(name, rv, ns="default"):
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": str(rv)}}


@pytest.mark.parametrize("cache, listed, want", [
    pytest.param([], [], [], id="nothing"),
    pytest.param([], [obj("a", 1)], [(A, "a", None)], id="new-object-added"),
    pytest.param([obj("a", 1)], [obj("a", 1)], [], id="unchanged-silent"),
    pytest.param([obj("a", 1)], [obj("a", 2)], [(M, "a", "1")], id="changed-modified-with-old"),
    pytest.param([obj("a", 1)], [], [(D, "a", "1")], id="vanished-deleted"),
    pytest.param([obj("a", 1), obj("b", 1)], [obj("b", 3), obj("c", 4)], [(M, "b", "1"), (A, "c", None), (D, "a", "1")],
                 id="mixed"),
    pytest.param([obj("a", 1, "x")], [obj("a", 1, "y")], [(A, "a", None), (D, "a", "1")],
                 id="same-name-other-namespace"),
])
def test_diff(cache, listed, want):
    keyed = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in cache}
    got = [(t, o["metadata"]["name"], old["metadata"]["resourceVersion"] if old else None)
           for t, o, old in watch.diff(keyed, listed)]
    assert got == want
