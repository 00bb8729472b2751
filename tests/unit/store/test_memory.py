"""Kubernetes storage semantics of the in-memory store."""
import datetime
import uuid

import pytest

from vclite.api import kinds
from vclite.lib import clock, errors
from vclite.store import memory


def new_store():
    return memory.MemoryStore(clock.VirtualClock())


def pod(name, ns="default", owners=(), finalizers=(), labels=None):
    md = {"name": name, "namespace": ns, "labels": labels or {}}
    if owners:
        md["ownerReferences"] = [{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
                                  "uid": o["metadata"]["uid"], "controller": True} for o in owners]
    if finalizers:
        md["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {"containers": [{"name": "c"}]}}


def job(name):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"tasks": []}}


def test_create_sets_server_fields_and_rejects_duplicates():
    s = new_store()
    p = s.create(kinds.POD, pod("a"))
    md = p["metadata"]
    assert md["uid"] and md["resourceVersion"] == "1" and md["creationTimestamp"]
    assert md["generation"] == 1 and s.create(kinds.JOB, job("j"))["metadata"]["generation"] == 1
    with pytest.raises(errors.AlreadyExists):
        s.create(kinds.POD, pod("a"))
    assert s.get(kinds.POD, "default", "a")["metadata"]["uid"] == md["uid"]


GENERATIONS = [   # kind, spec created, spec updated, whether kube-apiserver tracks its generation
    (kinds.JOB, {"queue": "a"}, {"queue": "b"}, True),   # (a custom resource)
    (kinds.PODDISRUPTIONBUDGET, {"minAvailable": 1}, {"minAvailable": 2}, True),   # (its registry strategy)
    (kinds.POD, {"containers": [{"name": "c", "image": "a"}]}, {"containers": [{"name": "c", "image": "b"}]},
     True),   # (Kubernetes 1.33+: the pod strategy's updatePodGeneration)
    (kinds.SERVICE, {"ports": [{"port": 80}]}, {"ports": [{"port": 81}]}, False),
    (kinds.RESOURCEQUOTA, {"hard": {"pods": "1"}}, {"hard": {"pods": "2"}}, False),
]


def test_generation_is_tracked_where_kube_apiserver_tracks_it():
    """A PodDisruptionBudget's generation is what its status.observedGeneration is compared with (the eviction
    API's 'still being processed', kubectl's status): created 1, bumped by a spec change, as custom resources'."""
    s = new_store()
    got, want = {}, {}
    for kind, spec, changed, tracked in GENERATIONS:
        created = s.create(kind, {"apiVersion": kind.api_version, "kind": kind.kind,
                                  "metadata": {"name": "x", "namespace": "default"}, "spec": spec})
        updated = s.update(kind, {**created, "spec": changed})
        got[kind.kind] = (created["metadata"].get("generation"), updated["metadata"].get("generation"))
        want[kind.kind] = (1, 2) if tracked else (None, None)
    assert got == want


def test_a_pods_generation_moves_with_its_spec_and_first_deletion_only():
    """Kubernetes 1.33+: 1 at create; + 1 for a spec change (not for a label, a status write or the binding,
    which kube writes past the pod strategy); + 1 when a graceful deletion first sets deletionTimestamp
    (BeforeDelete), not when a second delete shortens the grace period."""
    s = new_store()
    p = s.create(kinds.POD, pod("a"))
    steps = []
    p = s.update(kinds.POD, {**p, "metadata": {**p["metadata"], "labels": {"x": "1"}}})
    steps.append(("label", p["metadata"]["generation"]))
    p = s.update(kinds.POD, {**p, "status": {"phase": "Running"}}, subresource="status")
    steps.append(("status", p["metadata"]["generation"]))
    p = s.update(kinds.POD, {**p, "spec": {**p["spec"], "nodeName": "n1"}}, subresource="binding")
    steps.append(("binding", p["metadata"]["generation"]))
    p = s.update(kinds.POD, {**p, "spec": {**p["spec"], "activeDeadlineSeconds": 5}})
    steps.append(("spec", p["metadata"]["generation"]))
    steps.append(("delete", s.delete(kinds.POD, "default", "a", grace_period=30)["metadata"]["generation"]))
    steps.append(("delete again", s.delete(kinds.POD, "default", "a", grace_period=10)["metadata"]["generation"]))
    assert steps == [("label", 1), ("status", 1), ("binding", 1), ("spec", 2), ("delete", 3), ("delete again", 3)]


DELETIONS = [   # kind, finalizers, propagation, generation once deleting ("none": the kind has none)
    (kinds.JOB, ["hold"], "Background", 2),
    (kinds.JOBFLOW, ["vclite.volcano.sh/jobflow"], "Background", 2),
    (kinds.JOBTEMPLATE, ["hold"], "Background", 2),
    (kinds.PODGROUP, ["hold"], "Background", 2),
    (kinds.QUEUE, ["hold"], "Background", 2),
    (kinds.PODDISRUPTIONBUDGET, ["hold"], "Orphan", 2),
    (kinds.JOB, [], "Background", 1),          # (no finalizer: removed at once, never deleting)
    (kinds.QUEUE, [], "Orphan", 1),
    (kinds.CONFIGMAP, ["hold"], "Background", "none"),
    (kinds.SERVICE, ["hold"], "Background", "none"),
]


def test_a_first_deletion_bumps_the_generation_of_every_kind_that_has_one():
    """kube-apiserver's markAsDeleting (and BeforeDelete for a pod): the delete that first sets deletionTimestamp
    on an object its finalizers hold bumps its generation (not a second delete, not the finalizers' removal); an
    object without finalizers is removed at once, its generation as it was. (One store per row; the rows are a
    loop, not parameters, so that test_sqlite runs them against the durable store too.)"""
    got, want = [], []
    for kind, held, propagation, generation in DELETIONS:
        s = new_store()
        deleted = []
        s.watch(None, lambda ev, seen=deleted: seen.append(ev.object) if ev.type == "DELETED" else None)
        md = {"name": "x", "namespace": "default", **({"finalizers": held} if held else {})}
        s.create(kind, {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": md, "spec": {"queue": "q"}})
        steps = [s.delete(kind, "default", "x", propagation=propagation)]
        if held:
            steps.append(s.delete(kind, "default", "x"))
            steps.append(s.update(kind, {**steps[-1], "metadata": {**steps[-1]["metadata"], "finalizers": []}}))
        steps.append(deleted[0])
        got.append((kind.kind, held, [o["metadata"].get("generation", "none") for o in steps],
                    [bool(o["metadata"].get("deletionTimestamp")) for o in steps], s.list(kind, "default")))
        want.append((kind.kind, held, [generation] * len(steps), [bool(held)] * len(steps), []))
    assert got == want


def test_a_foreground_deletion_bumps_the_generation_once():
    """propagationPolicy Foreground: the foregroundDeletion finalizer and deletionTimestamp (generation + 1) on
    the owner, which waits for its dependents; a later delete changes nothing."""
    s = new_store()
    owner = s.create(kinds.JOB, job("j"))
    s.create(kinds.POD, pod("p", owners=[owner], finalizers=["hold"]))
    waiting = s.delete(kinds.JOB, "default", "j", propagation="Foreground")
    assert (waiting["metadata"]["generation"], waiting["metadata"]["finalizers"]) == (2, ["foregroundDeletion"])
    assert s.delete(kinds.JOB, "default", "j", propagation="Foreground")["metadata"]["generation"] == 2
    assert s.get(kinds.POD, "default", "p")["metadata"]["generation"] == 2   # (the dependent's own deletion)


def test_resource_versions_increase_and_stale_writes_conflict():
    s = new_store()
    p = s.create(kinds.POD, pod("a"))
    p2 = dict(p, spec={"containers": [{"name": "c2"}]})
    out = s.update(kinds.POD, p2)
    assert int(out["metadata"]["resourceVersion"]) > int(p["metadata"]["resourceVersion"])
    assert out["metadata"]["generation"] == 2   # (a spec change: Kubernetes 1.33+ tracks a Pod's)
    j = s.create(kinds.JOB, job("j"))
    assert s.update(kinds.JOB, {**j, "spec": {"tasks": [], "queue": "q"}})["metadata"]["generation"] == 2
    with pytest.raises(errors.Conflict):
        s.update(kinds.POD, p)  # carries the old resourceVersion
    assert s.get(kinds.POD, "default", "a")["spec"]["containers"][0]["name"] == "c2"


def test_status_is_written_separately_from_spec():
    s = new_store()
    p = s.create(kinds.POD, pod("a"))
    with_status = dict(p, status={"phase": "Running"}, spec={"containers": [{"name": "changed"}]})
    out = s.update(kinds.POD, with_status, subresource="status")
    assert out["status"] == {"phase": "Running"}
    assert out["spec"]["containers"][0]["name"] == "c", "a status write must not change spec"
    assert out["metadata"]["generation"] == 1
    out2 = s.update(kinds.POD, dict(out, status={"phase": "Failed"}))
    assert out2["status"] == {"phase": "Running"}, "a main-resource write must not change status"


def test_status_write_copies_the_status_unless_handed_over():
    s = new_store()
    for owned, name in ((False, "a"), (True, "b")):
        p = s.create(kinds.POD, pod(name))
        status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        out = s.update(kinds.POD, dict(p, status=status), subresource="status", owned=owned, copy_result=False)
        assert (out["status"] is status) is owned, f"owned={owned}"
        assert out["spec"] is s.peek(kinds.POD, "default", name)["spec"]   # the rest is shared with the old version
        assert s.get(kinds.POD, "default", name)["status"] == status


def test_noop_update_keeps_resource_version():
    s = new_store()
    p = s.create(kinds.POD, pod("a"))
    assert s.update(kinds.POD, p)["metadata"]["resourceVersion"] == p["metadata"]["resourceVersion"]


def test_returned_objects_are_copies():
    s = new_store()
    p = s.create(kinds.POD, pod("a"))
    p["metadata"]["labels"]["x"] = "y"
    assert "x" not in s.get(kinds.POD, "default", "a")["metadata"]["labels"]


def test_cascading_deletion_follows_owner_references():
    s = new_store()
    j = s.create(kinds.JOB, job("j"))
    p = s.create(kinds.POD, pod("j-t-0", owners=[j]))
    s.create(kinds.POD, pod("grandchild", owners=[p]))
    s.create(kinds.POD, pod("unrelated"))
    s.delete(kinds.JOB, "default", "j")
    assert [o["metadata"]["name"] for o in s.list(kinds.POD)] == ["unrelated"]


def test_orphan_propagation_keeps_dependents():
    s = new_store()
    j = s.create(kinds.JOB, job("j"))
    other = s.create(kinds.JOB, job("other"))
    s.create(kinds.POD, pod("child", owners=[j]))
    s.create(kinds.POD, pod("shared", owners=[j, other]))
    s.delete(kinds.JOB, "default", "j", propagation="Orphan")
    assert "ownerReferences" not in s.get(kinds.POD, "default", "child")["metadata"]   # (omitted, as kube-apiserver)
    assert [r["name"] for r in s.get(kinds.POD, "default", "shared")["metadata"]["ownerReferences"]] == ["other"]


def test_finalizers_delay_deletion_until_removed():
    s = new_store()
    s.create(kinds.POD, pod("a", finalizers=["example.com/f"]))
    marked = s.delete(kinds.POD, "default", "a")
    assert marked["metadata"]["deletionTimestamp"]
    assert s.get(kinds.POD, "default", "a")  # still there
    marked["metadata"]["finalizers"] = []
    s.update(kinds.POD, marked)
    with pytest.raises(errors.NotFound):
        s.get(kinds.POD, "default", "a")


def running_pod(name, grace=None, phase="Running", node="n1", **kw):
    p = pod(name, **kw)
    if node:
        p["spec"]["nodeName"] = node
    if grace is not None:
        p["spec"]["terminationGracePeriodSeconds"] = grace
    p["status"] = {"phase": phase}
    return p


def test_a_running_pod_is_deleted_gracefully_and_removed_by_its_kubelets_last_delete():
    s = new_store()
    s.create(kinds.POD, running_pod("a", grace=10))
    seen = []
    s.watch(kinds.POD, lambda ev: seen.append(ev.type))
    marked = s.delete(kinds.POD, "default", "a")
    md = marked["metadata"]
    assert md["deletionGracePeriodSeconds"] == 10 and seen == ["MODIFIED"]
    assert clock.parse_time(md["deletionTimestamp"]) == clock.parse_time(md["creationTimestamp"]) + \
        datetime.timedelta(seconds=10)   # (a virtual clock: now is the creation time)
    assert s.delete(kinds.POD, "default", "a", grace_period=20) == s.get(kinds.POD, "default", "a")   # never longer
    shorter = s.delete(kinds.POD, "default", "a", grace_period=3)["metadata"]
    assert shorter["deletionGracePeriodSeconds"] == 3
    now_failed = dict(s.get(kinds.POD, "default", "a"), status={"phase": "Failed"})
    s.update(kinds.POD, now_failed, subresource="status")   # the kubelet's final status: still there
    current = s.get(kinds.POD, "default", "a")
    labelled = {k: v for k, v in current["metadata"].items() if k != "deletionGracePeriodSeconds"}
    s.update(kinds.POD, dict(current, metadata={**labelled, "labels": {"x": "y"}}))   # (a client that drops it)
    assert s.get(kinds.POD, "default", "a")["metadata"]["deletionGracePeriodSeconds"] == 3   # kept by an update
    assert s.delete(kinds.POD, "default", "a", grace_period=0)["metadata"]["name"] == "a"
    with pytest.raises(errors.NotFound):
        s.get(kinds.POD, "default", "a")
    assert seen[-1] == "DELETED"


def test_a_gracefully_deleted_pod_with_a_finalizer_goes_once_both_are_done():
    s = new_store()
    s.create(kinds.POD, running_pod("a", finalizers=["example.com/f"]))
    s.delete(kinds.POD, "default", "a")
    held = s.get(kinds.POD, "default", "a")
    s.update(kinds.POD, dict(held, metadata={**held["metadata"], "finalizers": []}))   # the finalizer's owner is done
    assert s.get(kinds.POD, "default", "a")   # its grace period runs still
    s.update(kinds.POD, dict(s.get(kinds.POD, "default", "a"),
                             metadata={**s.get(kinds.POD, "default", "a")["metadata"], "finalizers": ["example.com/f"]}))
    s.delete(kinds.POD, "default", "a", grace_period=0)   # the kubelet's last delete: the finalizer holds it
    held = s.get(kinds.POD, "default", "a")
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0
    s.update(kinds.POD, dict(held, metadata={**held["metadata"], "finalizers": []}))
    with pytest.raises(errors.NotFound):
        s.get(kinds.POD, "default", "a")


def test_cascading_deletion_deletes_a_running_dependent_pod_gracefully():
    s = new_store()
    j = s.create(kinds.JOB, job("j"))
    s.create(kinds.POD, running_pod("j-t-0", owners=[j]))
    s.create(kinds.POD, running_pod("j-t-1", owners=[j], phase="Succeeded"))
    s.delete(kinds.JOB, "default", "j")
    (left,) = s.list(kinds.POD)
    assert left["metadata"]["name"] == "j-t-0" and left["metadata"]["deletionGracePeriodSeconds"] == 30


def test_selectors_filter_lists():
    s = new_store()
    s.create(kinds.POD, pod("a", labels={"app": "x"}))
    s.create(kinds.POD, pod("b", labels={"app": "y"}))
    s.create(kinds.POD, pod("c", ns="other", labels={"app": "x"}))
    assert [o["metadata"]["name"] for o in s.list(kinds.POD, label_selector="app=x")] == ["a", "c"]
    assert [o["metadata"]["name"] for o in s.list(kinds.POD, "default", label_selector="app=x")] == ["a"]
    assert [o["metadata"]["name"] for o in s.list(kinds.POD, field_selector="metadata.name=b")] == ["b"]


def test_watch_delivers_events_and_resumes_from_resource_version():
    s = new_store()
    seen = []
    s.watch(kinds.POD, lambda ev: seen.append((ev.type, ev.object["metadata"]["name"])))
    a = s.create(kinds.POD, pod("a"))
    s.create(kinds.JOB, job("j"))  # other kind: not delivered
    s.update(kinds.POD, dict(a, spec={"containers": [{"name": "z"}]}))
    s.delete(kinds.POD, "default", "a")
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    replay = []
    s.watch(kinds.POD, lambda ev: replay.append(ev.type), resource_version=a["metadata"]["resourceVersion"])
    assert replay == ["MODIFIED", "DELETED"]


def test_watchers_of_a_kind_and_of_every_kind_are_called_in_subscription_order():
    s = new_store()
    seen = []

    def handler(tag):
        return lambda ev: seen.append((tag, ev.kind.kind, ev.object["metadata"]["name"]))
    s.watch(None, handler("all-1"))
    s.watch(kinds.POD, handler("pods"))
    s.watch(kinds.JOB, handler("jobs"))
    late = []

    def cancels_itself(ev):
        seen.append(("once", ev.kind.kind, ev.object["metadata"]["name"]))
        once.cancel()
        late.append(s.watch(kinds.POD, handler("late")))   # subscribed during a delivery: next event on
    once = s.watch(kinds.POD, cancels_itself)
    s.watch(None, handler("all-2"))
    s.create(kinds.POD, pod("a"))
    s.create(kinds.JOB, job("j"))
    s.create(kinds.POD, pod("b"))
    assert seen == [("all-1", "Pod", "a"), ("pods", "Pod", "a"), ("once", "Pod", "a"), ("all-2", "Pod", "a"),
                    ("all-1", "Job", "j"), ("jobs", "Job", "j"), ("all-2", "Job", "j"),
                    ("all-1", "Pod", "b"), ("pods", "Pod", "b"), ("all-2", "Pod", "b"), ("late", "Pod", "b")]


def test_watch_from_expired_version_is_gone():
    s = memory.MemoryStore(clock.VirtualClock(), history=2)
    for i in range(5):
        s.create(kinds.POD, pod(f"p{i}"))
    with pytest.raises(errors.Gone):
        s.watch(kinds.POD, lambda ev: None, resource_version="1")


def test_cluster_scoped_objects_have_no_namespace():
    s = new_store()
    q = s.create(kinds.QUEUE, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                               "metadata": {"name": "q1", "namespace": "ignored"}, "spec": {"weight": 1}})
    assert "namespace" not in q["metadata"]
    assert s.get(kinds.QUEUE, "", "q1")["spec"] == {"weight": 1}


def test_generated_names_are_the_prefix_cut_to_58_and_5_characters():
    s = new_store()
    for prefix, expected_length in (("x-", 7), ("n" * 70, 63)):
        names = [s.create(kinds.POD, {**pod(""), "metadata": {"generateName": prefix, "namespace": "default"}})
                 ["metadata"]["name"] for _ in range(3)]
        assert len(set(names)) == 3
        assert all(n.startswith(prefix[:58]) and len(n) == expected_length for n in names)
        assert all(set(n[-5:]) <= set("bcdfghjklmnpqrstvwxz2456789") for n in names), names   # kube's alphabet


def test_generated_suffixes_do_not_repeat_over_a_long_run():
    s = new_store()
    names = {s.generate_name("p-") for _ in range(50_000)}
    assert len(names) == 50_000


def test_the_api_names_a_generate_name_object_before_admission_so_vcjob_rules_see_the_name():
    from vclite.apiserver import inprocess
    client = inprocess.new_client(clock.VirtualClock())
    vcjob = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
             "metadata": {"generateName": "train-", "namespace": "default"},
             "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
                 {"name": "c", "image": "busybox", "command": ["true"]}]}}}]}}
    first, second = client.create(vcjob), client.create(vcjob)
    assert first["metadata"]["name"].startswith("train-") and first["metadata"]["name"] != second["metadata"]["name"]
    assert first["metadata"]["generateName"] == "train-" and first["spec"]["queue"] == "default"   # admitted: defaults set
    bad = {**vcjob, "metadata": {"generateName": "Train_", "namespace": "default"}}
    with pytest.raises(errors.Invalid) as info:
        client.create(bad)
    assert [fe.path for fe in info.value.errors] == ["metadata.generateName"]


def _cm(name, value, ns="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": {"k": value}}


def test_a_snapshot_is_the_state_at_a_version_rewound_through_the_history():
    """resourceVersionMatch=Exact: creates, updates and deletes after the version are undone."""
    s = new_store()
    a = s.create(kinds.CONFIGMAP, _cm("a", "1"))
    s.create(kinds.POD, pod("p"))                          # (another kind: not in the ConfigMaps' state)
    at = int(s.resource_version)
    s.update(kinds.CONFIGMAP, {**a, "data": {"k": "2"}})
    s.create(kinds.CONFIGMAP, _cm("b", "1"))
    s.delete(kinds.CONFIGMAP, "default", "a")
    assert [(o["metadata"]["name"], o["data"]) for o in s.snapshot(kinds.CONFIGMAP, at)] == [("a", {"k": "1"})]
    assert [o["metadata"]["name"] for o in s.snapshot(kinds.CONFIGMAP, int(s.resource_version))] == ["b"]
    assert s.snapshot(kinds.CONFIGMAP, 0) == []


def test_a_snapshot_older_than_the_history_is_gone():
    s = memory.MemoryStore(clock.VirtualClock(), history=2)
    for i in range(4):
        s.create(kinds.CONFIGMAP, _cm(f"c{i}", "1"))
    assert len(s.snapshot(kinds.CONFIGMAP, 2)) == 2        # (events 3 and 4 retained: rewinds to 2)
    with pytest.raises(errors.Gone, match="The resourceVersion for the provided list is too old."):
        s.snapshot(kinds.CONFIGMAP, 1)


def _owned_by(obj, owner):
    obj["metadata"]["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                           "blockOwnerDeletion": True}]
    return obj


def test_foreground_deletion_keeps_the_owner_until_its_dependents_are_gone():
    s = new_store()
    owner = s.create(kinds.JOB, job("j"))
    s.create(kinds.CONFIGMAP, _owned_by(_cm("held", "1"), owner))
    s.create(kinds.CONFIGMAP, {**_owned_by(_cm("slow", "1"), owner), "metadata": {
        **_owned_by(_cm("slow", "1"), owner)["metadata"], "finalizers": ["example.com/keep"]}})
    other = s.create(kinds.JOB, job("other"))
    shared = _owned_by(_cm("shared", "1"), owner)
    shared["metadata"]["ownerReferences"].append({**shared["metadata"]["ownerReferences"][0], "name": "other",
                                                  "uid": other["metadata"]["uid"]})
    s.create(kinds.CONFIGMAP, shared)
    waiting = s.delete(kinds.JOB, "default", "j", propagation="Foreground")
    assert waiting["metadata"]["finalizers"] == ["foregroundDeletion"] and waiting["metadata"]["deletionTimestamp"]
    assert s.peek(kinds.CONFIGMAP, "default", "held") is None                # deleted
    assert s.peek(kinds.CONFIGMAP, "default", "slow")["metadata"]["deletionTimestamp"]   # held by its finalizer
    assert [r["name"] for r in s.peek(kinds.CONFIGMAP, "default", "shared")["metadata"]["ownerReferences"]] == [
        "other"]                                                             # another owner keeps it
    assert s.peek(kinds.JOB, "default", "j") is not None                     # waits for "slow"
    slow = s.get(kinds.CONFIGMAP, "default", "slow")
    s.update(kinds.CONFIGMAP, {**slow, "metadata": {**slow["metadata"], "finalizers": []}})
    assert s.peek(kinds.JOB, "default", "j") is None                         # the last dependent gone: so is it


def test_foreground_deletion_of_an_object_without_dependents_is_at_once():
    s = new_store()
    s.create(kinds.JOB, job("j"))
    s.delete(kinds.JOB, "default", "j", propagation="Foreground")
    assert s.peek(kinds.JOB, "default", "j") is None


def test_a_failing_watch_handler_does_not_keep_the_event_from_the_others():
    """The write is stored whatever a handler does: every other subscriber still gets the event (else its
    cache stays wrong for good), and the handler's error reaches the writer once all have had it."""
    s = new_store()
    seen: list[str] = []

    def broken(ev):
        raise RuntimeError("a handler's bug")
    s.watch(kinds.POD, broken)
    s.watch(kinds.POD, lambda ev: seen.append(ev.object["metadata"]["name"]))
    with pytest.raises(RuntimeError, match="a handler's bug"):
        s.create(kinds.POD, pod("a"))
    assert seen == ["a"]
    assert [o["metadata"]["name"] for o in s.list(kinds.POD)] == ["a"]


def test_created_objects_get_distinct_random_version_4_uuids_in_their_canonical_text():
    s = new_store()
    uids = [s.create(kinds.JOB, job(f"j{i}"))["metadata"]["uid"] for i in range(100)]
    assert len(set(uids)) == 100
    for text in uids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122
