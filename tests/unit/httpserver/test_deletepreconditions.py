"""DeleteOptions.preconditions (uid, resourceVersion) over HTTP, for several kinds and for deletecollection, as
kube-apiserver's BeforeDelete checks them: a mismatch is 409 Conflict in its words and changes nothing."""

import pytest

from tests.unit.httpserver import serving
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.lib import clock as clock_mod

TOKEN = "t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

OBJECTS = {
    "configmap": ("/api/v1/namespaces/default/configmaps", "ConfigMap",
                  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "v"}}),
    "queue": ("/apis/scheduling.volcano.sh/v1beta1/queues", "Queue.scheduling.volcano.sh",
              {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "x"},
               "spec": {"weight": 1}}),
    "jobtemplate": ("/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobtemplates", "JobTemplate.flow.volcano.sh",
                    {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "x"},
                     "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                         "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                                   "command": ["true"]}]}}}]}}),
    "namespace": ("/api/v1/namespaces", "Namespace",
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}),
    # (kube-apiserver's BeforeDelete names the stored type's first kind, core's Event, whichever group was asked)
    "event": ("/api/v1/namespaces/default/events", "Event",
              {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "x"}, "reason": "R", "message": "m",
               "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}}),
    "event-events.k8s.io": ("/apis/events.k8s.io/v1/namespaces/default/events", "Event",
                            {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "x"},
                             "eventTime": "2026-01-01T00:00:00.000000Z", "reason": "R", "action": "A", "note": "n",
                             "type": "Normal", "reportingController": "c", "reportingInstance": "i",
                             "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}),
    "secret": ("/api/v1/namespaces/default/secrets", "Secret",
               {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "stringData": {"k": "v"}}),
}


def serve(test):
    """Run `await test(client, backend)` against a fresh server on a virtual clock."""
    serving.serve(lambda client, srv, be: test(client, be), TOKEN, clock_mod.VirtualClock())


@pytest.mark.parametrize("name", list(OBJECTS))
@pytest.mark.parametrize("field, title, hint", [
    pytest.param("uid", "UID", "The object might have been deleted and then recreated", id="uid"),
    pytest.param("resourceVersion", "ResourceVersion", "The object might have been modified", id="resourceVersion"),
])
def test_a_delete_whose_precondition_fails_is_a_conflict_and_changes_nothing(name, field, title, hint):
    path, resource, obj = OBJECTS[name]

    async def test(client, be):
        made = await (await client.post(path, json=obj, headers=AUTH)).json()
        before = be.resource_version()
        for dry in ("", "?dryRun=All"):
            resp = await client.delete(f"{path}/x{dry}", headers=AUTH, json={
                "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {field: "stale"}})
            status = await resp.json()
            assert (resp.status, status["reason"]) == (409, "Conflict")
            group, _, kind = resource.partition(".")[2], None, resource.partition(".")[0]
            assert status["details"] == {"name": "x", "group": group, "kind": kind}   # (the stored type's Kind)
            assert status["message"] == (f'Operation cannot be fulfilled on {resource} "x": the {title} in the '
                                         f"precondition (stale) does not match the {title} in record "
                                         f"({made['metadata'][field]}). {hint}")
        assert be.resource_version() == before
        got = await (await client.get(f"{path}/x", headers=AUTH)).json()
        assert got["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
        resp = await client.delete(f"{path}/x", headers=AUTH, json={"preconditions": {
            "uid": made["metadata"]["uid"], "resourceVersion": made["metadata"]["resourceVersion"]}})
        assert resp.status == 200
        assert be.resource_version() != before
    serve(test)


def test_deletecollection_checks_each_item_and_stops_at_the_first_that_fails():
    path = "/api/v1/namespaces/default/configmaps"

    async def test(client, be):
        made = {}
        for name in ("a", "b", "c"):
            made[name] = await (await client.post(path, json={"apiVersion": "v1", "kind": "ConfigMap",
                                                              "metadata": {"name": name}}, headers=AUTH)).json()
        resp = await client.delete(path, headers=AUTH, json={"preconditions": {"uid": made["b"]["metadata"]["uid"]}})
        status = await resp.json()
        assert (resp.status, status["reason"]) == (409, "Conflict")
        assert 'on ConfigMap "a": the UID in the precondition' in status["message"]
        assert sorted(o["metadata"]["name"] for o in be.client.list(kinds.CONFIGMAP, "default")) == ["a", "b", "c"]
        resp = await client.delete(f"{path}?labelSelector=", headers=AUTH, json={
            "preconditions": {"uid": made["a"]["metadata"]["uid"]}})
        assert resp.status == 409   # (a goes, then b fails: one worker, in order)
        assert sorted(o["metadata"]["name"] for o in be.client.list(kinds.CONFIGMAP, "default")) == ["b", "c"]
    serve(test)


@pytest.mark.parametrize("preconditions, words", [
    pytest.param("abc", "DeleteOptions.preconditions: expected an object", id="not-an-object"),
    pytest.param({"uid": 5}, "DeleteOptions.preconditions.uid: expected a string", id="uid-not-a-string"),
    pytest.param({"name": "x"}, 'DeleteOptions.preconditions: unknown field "name"', id="unknown-field"),
])
def test_malformed_preconditions_are_a_bad_request_and_change_nothing(preconditions, words):
    path = "/api/v1/namespaces/default/configmaps"

    async def test(client, be):
        await client.post(path, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
                          headers=AUTH)
        before = be.resource_version()
        resp = await client.delete(f"{path}/x", headers=AUTH, json={"preconditions": preconditions})
        status = await resp.json()
        assert (resp.status, status["reason"]) == (400, "BadRequest") and words in status["message"]
        assert be.resource_version() == before
    serve(test)


def test_the_in_process_client_honours_preconditions_before_admission():
    client = inprocess.new_client()
    made = client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}})
    with pytest.raises(Exception, match="the UID in the precondition") as caught:
        client.delete(kinds.CONFIGMAP, "default", "x", preconditions={"uid": "other"})
    assert type(caught.value).__name__ == "Conflict"
    with pytest.raises(Exception, match="the ResourceVersion in the precondition"):
        client.delete(kinds.CONFIGMAP, "default", "x", preconditions={"resourceVersion": "1"})
    assert client.get(kinds.CONFIGMAP, "default", "x") == made
    client.delete(kinds.CONFIGMAP, "default", "x", preconditions={"uid": made["metadata"]["uid"]})
    assert client.list(kinds.CONFIGMAP, "default") == []
    # the default ServiceAccount's delete is refused by nothing, the default Queue's by admission: the
    # precondition is checked first, as kube-apiserver's BeforeDelete runs before admission
    with pytest.raises(Exception, match="the UID in the precondition"):
        client.delete(kinds.QUEUE, "", "default", preconditions={"uid": "other"})


@pytest.mark.parametrize("field", ["uid", "resourceVersion"])
def test_a_namespace_stored_without_its_finalizer_is_deleted_under_a_precondition_it_meets(field):
    """A namespace an older store kept without spec.finalizers gets it before its delete (it must empty out first):
    that write of the client's own does not fail the precondition the caller's delete met."""
    client = inprocess.new_client()
    old = client.store.create(kinds.NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "old"}})
    client.delete(kinds.NAMESPACE, "", "old", preconditions={field: old["metadata"][field]})
    assert client.get(kinds.NAMESPACE, "", "old")["metadata"].get("deletionTimestamp")


def test_a_namespace_stored_without_its_finalizer_is_left_as_it_was_when_the_precondition_fails():
    client = inprocess.new_client()
    old = client.store.create(kinds.NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "old"}})
    with pytest.raises(Exception, match="the ResourceVersion in the precondition"):
        client.delete(kinds.NAMESPACE, "", "old", preconditions={"resourceVersion": "1"})
    assert client.get(kinds.NAMESPACE, "", "old") == old
