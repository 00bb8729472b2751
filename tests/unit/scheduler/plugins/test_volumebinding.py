"""VolumeBinding's PreFilter (volumebinding.py) as the predicates plugin runs it: kube's reasons for a pod whose
claims are missing, being deleted or unbound, recorded by allocate on every node as Volcano's PrePredicate error;
and the claim events that wake the scheduler."""
from __future__ import annotations

import copy

import pytest

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.scheduler import conf, triggers
from vclite.scheduler.framework import session
from vclite.scheduler.plugins import volumebinding

from .. import objects


def claim(name, phase="Bound", volume="pv", deleting=False, ns="ns"):
    md = {"name": name, "namespace": ns, **({"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleting else {})}
    return {"metadata": md, "spec": {"volumeName": volume} if volume else {}, "status": {"phase": phase}}


def with_claims(pod, *names):
    pod["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "c"}},
                              *({"name": f"v{i}", "persistentVolumeClaim": {"claimName": n}}
                                for i, n in enumerate(names))]
    return pod


@pytest.mark.parametrize("names, claims, want", [
    pytest.param((), [], None, id="no-claim-volumes"),
    pytest.param(("a",), [claim("a")], None, id="bound"),
    pytest.param(("a",), [], 'persistentvolumeclaim "a" not found', id="missing"),
    pytest.param(("a",), [claim("a", ns="other")], 'persistentvolumeclaim "a" not found',
                 id="a-claim-of-that-name-in-another-namespace"),
    pytest.param(("a",), [claim("a", deleting=True)], 'persistentvolumeclaim "a" is being deleted', id="deleting"),
    pytest.param(("a",), [claim("a", phase="Pending", volume="")], volumebinding.UNBOUND_IMMEDIATE, id="pending"),
    pytest.param(("a",), [claim("a", volume="")], volumebinding.UNBOUND_IMMEDIATE, id="bound-without-volumeName"),
    pytest.param(("a", "b"), [claim("a", phase="Pending"), claim("b", deleting=True)],
                 'persistentvolumeclaim "b" is being deleted', id="a-deleted-claim-before-an-unbound-one"),
    pytest.param(("a", "b"), [claim("a", phase="Lost")], 'persistentvolumeclaim "b" not found',
                 id="a-missing-claim-before-an-unbound-one"),
])
def test_pre_filter(names, claims, want):
    pod = with_claims(objects.pod("ns/p", "g"), *names)
    assert volumebinding.pre_filter(pod, volumebinding.Claims(claims)) == want


def test_a_pod_without_claims_never_indexes_the_claims():
    class Untouchable(list):
        def __iter__(self):
            raise AssertionError("indexed")
    assert volumebinding.pre_filter(with_claims(objects.pod("ns/p", "g")), volumebinding.Claims(Untouchable())) is None


@pytest.mark.parametrize("claims, want", [
    pytest.param([], '0/2 nodes are unavailable: 2 plugin VolumeBinding pre-predicates failed persistentvolumeclaim '
                     '"data" not found.', id="missing"),
    pytest.param([claim("data", phase="Pending", volume="")],
                 "0/2 nodes are unavailable: 2 plugin VolumeBinding pre-predicates failed pod has unbound immediate "
                 "PersistentVolumeClaims.", id="unbound"),
    pytest.param([claim("data")], None, id="bound"),
])
def test_allocate_leaves_a_pod_of_an_unusable_claim_unscheduled_and_says_why(claims, want):
    st = objects.state(nodes=[objects.node("n1"), objects.node("n2")], podgroups=[objects.pg("ns/g", min_member=2)],
                       pods=[with_claims(objects.pod("ns/g-0", "g"), "data"), objects.pod("ns/g-1", "g")])
    st.claims = claims
    result = objects.run(st)
    if want is None:
        assert sorted(result.binds) == ["ns/g-0", "ns/g-1"]
        return
    assert result.binds == {}   # (the gang: the other pod waits too)
    assert result.pod_conditions["ns/g-0"][:2] == ("Unschedulable", want)


def test_without_claims_known_a_pod_naming_one_is_placed():
    """A dry run over manifests (ClusterState.claims None: no volume controller binds them) looks at no claim."""
    st = objects.state(nodes=[objects.node("n1")], podgroups=[objects.pg("ns/g")],
                       pods=[with_claims(objects.pod("ns/g-0", "g"), "data")])
    assert list(objects.run(st).binds) == ["ns/g-0"]


def test_volume_binding_disabled_places_it():
    st = objects.state(nodes=[objects.node("n1")], podgroups=[objects.pg("ns/g")],
                       pods=[with_claims(objects.pod("ns/g-0", "g"), "data")])
    st.claims = []
    off = conf.parse({"actions": "enqueue, allocate", "tiers": [{"plugins": [
        {"name": "gang"}, {"name": "predicates", "arguments": {"predicate.VolumeBindingEnable": False}}]}]})
    assert list(session.run_session(st, off, objects.NOW).binds) == ["ns/g-0"]


E = client_mod.EventType
PVC = claim("data", phase="Pending", volume="")


def _changed(obj, *path_value):
    out = copy.deepcopy(obj)
    *path, value = path_value
    cur = out
    for p in path[:-1]:
        cur = cur.setdefault(p, {})
    cur[path[-1]] = value
    return out


@pytest.mark.parametrize("event, wakes", [
    pytest.param((E.ADDED, PVC, None), True, id="claim-created"),
    pytest.param((E.DELETED, PVC, None), True, id="claim-deleted"),
    pytest.param((E.MODIFIED, _changed(PVC, "status", "phase", "Bound"), PVC), True, id="claim-bound"),
    pytest.param((E.MODIFIED, _changed(PVC, "metadata", "deletionTimestamp", "t"), PVC), True,
                 id="claim-deletion-began"),
    pytest.param((E.MODIFIED, _changed(PVC, "metadata", "annotations", {"a": "b"}), PVC), False,
                 id="claim-annotations-only"),
    pytest.param((E.MODIFIED, _changed(PVC, "spec", "volumeName", "pv"), PVC), False,
                 id="claim-volumeName-before-its-phase"),
])
def test_claim_events_wake_the_scheduler(event, wakes):
    type_, obj, old = event
    assert triggers.wakes_scheduler(client_mod.WatchEvent(type_, kinds.PERSISTENTVOLUMECLAIM, obj, old)) is wakes


def test_backfill_leaves_a_best_effort_pod_of_a_missing_claim_unscheduled_and_says_why():
    """backfill.go records the PrePredicate error on every node of a best-effort task (no requests) too."""
    pod = with_claims(objects.pod("ns/g-0", "g", cpu=None, mem=None), "data")
    st = objects.state(nodes=[objects.node("n1")], podgroups=[objects.pg("ns/g")], pods=[pod])
    st.claims = []
    result = objects.run(st, "enqueue, allocate, backfill")
    assert result.binds == {}
    assert result.pod_conditions["ns/g-0"][1] == ('0/1 nodes are unavailable: 1 plugin VolumeBinding pre-predicates '
                                                  'failed persistentvolumeclaim "data" not found.')
