"""Resource verbs over the real in-process API: create/get/list/update/patch/apply/delete, and
refusals that change nothing."""
import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.httpserver import backend, listopts, media, resources, routes
from vclite.httpserver import status as status_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors

JT = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t1"},
      "spec": {"minAvailable": 1, "tasks": [{"name": "x", "replicas": 1, "template": {"spec": {
          "restartPolicy": "Never", "containers": [{"name": "c", "image": "i", "command": ["true"]}]}}}]}}


@pytest.fixture
def be():
    return backend.Backend.of_client(inprocess.new_client(clock_mod.VirtualClock()))


def jt_route(name=None, ns="default", sub=None):
    return routes.Resource(kinds.JOBTEMPLATE, ns, name, sub)


def make(be, name, labels=None, ns="default"):
    obj = {**JT, "metadata": {"name": name, **({"labels": labels} if labels else {})}}
    return resources.create(be, jt_route(ns=ns), {}, obj)[1]


def test_create_fills_namespace_and_kind_from_the_path(be):
    code, obj = resources.create(be, jt_route(ns="team"), {}, {"metadata": {"name": "t"}, "spec": JT["spec"]})
    assert code == 201 and obj["metadata"]["namespace"] == "team" and obj["kind"] == "JobTemplate"


@pytest.mark.parametrize("body, route, message", [
    pytest.param({**JT, "metadata": {"name": "t1", "namespace": "other"}}, jt_route(), "namespace", id="namespace"),
    pytest.param({**JT, "kind": "JobFlow"}, jt_route(), "does not match", id="kind"),
    pytest.param({**JT, "apiVersion": "v1"}, jt_route(), "does not match", id="api-version"),
    pytest.param(JT, jt_route(ns=None), "namespace", id="all-namespaces-collection"),
])
def test_create_refusals_change_nothing(be, body, route, message):
    before = be.resource_version()
    with pytest.raises(errors.BadRequest, match=message):
        resources.create(be, route, {}, body)
    assert be.resource_version() == before


def test_create_invalid_is_422_and_changes_nothing(be):
    before = be.resource_version()
    bad = {**JT, "spec": {**JT["spec"], "minAvailable": -1}}
    with pytest.raises(errors.Invalid):
        resources.create(be, jt_route(), {}, bad)
    assert be.resource_version() == before


def _snapshot(be):
    """Every stored object (kind, namespace, name, resourceVersion), and the store's version."""
    store = be.client.store
    return be.resource_version(), sorted(
        (k.kind, o["metadata"].get("namespace", ""), o["metadata"]["name"], o["metadata"]["resourceVersion"])
        for k in kinds.ALL for o in store.iter(k))


DRY = {"dryRun": "All"}


def test_dry_run_create_answers_the_object_and_writes_nothing(be):
    before = _snapshot(be)
    code, obj = resources.create(be, jt_route(ns="new-ns"), DRY, JT)
    assert code == 201 and obj["metadata"]["name"] == "t1" and obj["metadata"]["namespace"] == "new-ns"
    assert obj["metadata"]["uid"] and obj["metadata"]["creationTimestamp"] and "resourceVersion" not in obj["metadata"]
    assert obj["spec"]["queue"] == "default"   # admission's defaults are applied
    assert _snapshot(be) == before             # not even the namespace is created
    with pytest.raises(errors.NotFound):
        be.client.get(kinds.JOBTEMPLATE, "new-ns", "t1")


def test_dry_run_runs_admission_and_the_store_checks(be):
    make(be, "t1")
    before = _snapshot(be)
    with pytest.raises(errors.AlreadyExists):
        resources.create(be, jt_route(), DRY, JT)
    with pytest.raises(errors.Invalid):
        resources.create(be, jt_route(), DRY, {**JT, "metadata": {"name": "t2"},
                                               "spec": {**JT["spec"], "minAvailable": -1}})
    stale = {**be.client.get(kinds.JOBTEMPLATE, "default", "t1")}
    stale["metadata"] = {**stale["metadata"], "resourceVersion": "1"}
    with pytest.raises(errors.Conflict):
        resources.update(be, jt_route("t1"), DRY, stale)
    with pytest.raises(errors.NotFound):
        resources.delete(be, jt_route("nope"), DRY, None)
    assert _snapshot(be) == before


@pytest.mark.parametrize("verb", ["update", "merge-patch", "json-patch", "apply"])
def test_dry_run_writes_answer_the_new_version_and_write_nothing(be, verb):
    current = make(be, "t1")
    before = _snapshot(be)
    route, labels = jt_route("t1"), {"app": "x"}
    if verb == "update":
        code, obj = resources.update(be, route, DRY, {**current, "metadata": {**current["metadata"], "labels": labels}})
    elif verb == "merge-patch":
        code, obj = resources.patch(be, route, DRY, resources.MERGE, {"metadata": {"labels": labels}})
    elif verb == "json-patch":
        code, obj = resources.patch(be, route, DRY, resources.JSON_PATCH,
                                    [{"op": "add", "path": "/metadata/labels", "value": labels}])
    else:
        code, obj = resources.apply(be, route, {**DRY, "fieldManager": "m"},
                                    {**JT, "metadata": {"name": "t1", "labels": labels}})
    assert code == 200 and obj["metadata"]["labels"] == labels
    assert obj["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    assert _snapshot(be) == before and "labels" not in be.client.get(kinds.JOBTEMPLATE, "default", "t1")["metadata"]


def test_dry_run_delete_keeps_the_object_and_its_dependents(be):
    make(be, "t1")
    before = _snapshot(be)
    code, obj = resources.delete(be, jt_route("t1"), {}, {"dryRun": ["All"], "propagationPolicy": "Foreground"})
    assert code == 200 and obj["metadata"]["name"] == "t1"
    code, lst = resources.delete_collection(be, jt_route(), DRY, None)
    assert [o["metadata"]["name"] for o in lst["items"]] == ["t1"]
    assert _snapshot(be) == before


@pytest.mark.parametrize("query, body", [
    pytest.param({"dryRun": "Yes"}, None, id="query"),
    pytest.param({}, {"dryRun": ["All", "Some"]}, id="delete-options"),
])
def test_dry_run_values_other_than_all_are_refused(be, query, body):
    make(be, "t1")
    before = _snapshot(be)
    with pytest.raises(errors.BadRequest, match='supported values: "All"'):
        if body is None:
            resources.create(be, jt_route(), query, {**JT, "metadata": {"name": "t2"}})
        else:
            resources.delete(be, jt_route("t1"), query, body)
    assert _snapshot(be) == before


def test_list_selectors_order_and_pagination(be):
    for name, app in (("c", "a"), ("a", "a"), ("b", "b")):
        make(be, name, {"app": app})
    make(be, "z", ns="other")
    code, lst = resources.list_objects(be, jt_route(), {})
    assert lst["kind"] == "JobTemplateList" and [o["metadata"]["name"] for o in lst["items"]] == ["a", "b", "c"]
    assert lst["metadata"]["resourceVersion"] == be.resource_version()
    _, lst = resources.list_objects(be, jt_route(), {"labelSelector": "app=a"})
    assert [o["metadata"]["name"] for o in lst["items"]] == ["a", "c"]
    _, lst = resources.list_objects(be, jt_route(), {"fieldSelector": "metadata.name!=a"})
    assert [o["metadata"]["name"] for o in lst["items"]] == ["b", "c"]
    _, lst = resources.list_objects(be, jt_route(ns=None), {})
    assert len(lst["items"]) == 4
    _, page1 = resources.list_objects(be, jt_route(), {"limit": "2"})
    assert [o["metadata"]["name"] for o in page1["items"]] == ["a", "b"]
    assert page1["metadata"]["remainingItemCount"] == 1
    _, page2 = resources.list_objects(be, jt_route(), {"limit": "2", "continue": page1["metadata"]["continue"]})
    assert [o["metadata"]["name"] for o in page2["items"]] == ["c"] and "continue" not in page2["metadata"]


def test_list_as_table(be):
    make(be, "a")
    _, table = resources.list_objects(be, jt_route(), {}, media.Choice("table", "v1"))
    assert table["kind"] == "Table" and table["rows"][0]["cells"][0] == "a"


def test_bad_continue_token(be):
    with pytest.raises(errors.BadRequest):
        resources.list_objects(be, jt_route(), {"continue": "!!!"})


def test_update_conflict_on_stale_resource_version(be):
    obj = make(be, "t")
    stale = {**obj, "metadata": {**obj["metadata"], "labels": {"v": "1"}}}
    resources.update(be, jt_route("t"), {}, stale)
    with pytest.raises(errors.Conflict):
        resources.update(be, jt_route("t"), {}, {**obj, "metadata": {**obj["metadata"], "labels": {"v": "2"}}})


def test_a_custom_resource_is_not_updated_without_the_version_it_replaces(be):
    """kube's generic registry: a custom resource allows no unconditional update (422 naming
    metadata.resourceVersion; 404 when it does not exist); a ConfigMap does."""
    obj = make(be, "t")
    unversioned = {**obj, "metadata": {"name": "t", "labels": {"v": "1"}}}
    for sub in (None, "status"):
        with pytest.raises(errors.Invalid) as info:
            resources.update(be, jt_route("t", sub=sub), {}, unversioned)
        assert [str(e) for e in info.value.errors] == [
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"]
    assert "labels" not in be.client.get(kinds.JOBTEMPLATE, "default", "t")["metadata"]
    with pytest.raises(errors.NotFound):
        resources.update(be, jt_route("u"), {}, {**unversioned, "metadata": {"name": "u"}})
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    cm_route = routes.Resource(kinds.CONFIGMAP, "default", None, None)
    resources.create(be, cm_route, {}, cm)
    code, out = resources.update(be, routes.Resource(kinds.CONFIGMAP, "default", "c", None), {},
                                 {**cm, "data": {"a": "2"}})
    assert code == 200 and out["data"] == {"a": "2"}


def _volcano_objects(be):
    """One of each Volcano kind with a status a client may write (routes by kind name)."""
    made = {"JobTemplate": JT,
            "JobFlow": {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
                        "spec": {"flows": []}},
            "Job": {**JT, "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
                    "spec": {**JT["spec"], "queue": "default"}},
            "Queue": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
                      "spec": {"weight": 1}},
            "PodGroup": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "p"},
                         "spec": {"minMember": 1}},
            "CronJob": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "c"},
                        "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {**JT["spec"], "queue": "default"}}}},
            "HyperNode": {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "h"},
                          "spec": {"tier": 1,
                                   "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n"}}}]}}}
    routes_by_kind = {}
    for kind_name, obj in made.items():
        kind = kinds.by_kind(kind_name) if kind_name != "Job" else kinds.JOB
        ns = "default" if kind.namespaced else None
        resources.create(be, routes.Resource(kind, ns, None, None), {}, obj)
        routes_by_kind[kind_name] = routes.Resource(kind, ns, obj["metadata"]["name"], "status")
    return routes_by_kind


@pytest.mark.parametrize("kind_name, status, field", [
    pytest.param("JobFlow", {"state": 5}, "status.state", id="jobflow-state-a-number"),
    pytest.param("JobFlow", {"conditions": {"f-a": {"phase": ["x"]}}}, "status.conditions.f-a.phase",
                 id="jobflow-condition-phase"),
    pytest.param("JobFlow", {"completedJobs": "f-a"}, "status.completedJobs", id="jobflow-list-a-string"),
    pytest.param("Job", {"state": "Running"}, "status.state", id="vcjob-state-a-string"),
    pytest.param("Job", {"taskStatusCount": {"t": {"phase": {"Running": "1"}}}},
                 "status.taskStatusCount.t.phase.Running", id="vcjob-task-count"),
    pytest.param("Queue", {"state": [1]}, "status.state", id="queue-state-a-list"),
    pytest.param("PodGroup", {"running": "2"}, "status.running", id="podgroup-running-a-string"),
    pytest.param("CronJob", {"active": 5}, "status.active", id="cronjob-active-a-number"),
    pytest.param("HyperNode", {"nodeCount": "x"}, "status.nodeCount", id="hypernode-node-count-a-string"),
    pytest.param("JobTemplate", {"jobDependsOnList": 5}, "status.jobDependsOnList", id="jobtemplate-list-a-number"),
])
def test_a_clients_status_of_a_volcano_kind_is_typed_as_its_crd(be, kind_name, status, field):
    """(a vcjob status.state of "Running" failed the job controller's every sync; a queue's state [1]
    made `vcctl queue list` fail)"""
    route = _volcano_objects(be)[kind_name]
    before = be.client.get(route.kind, route.namespace or "", route.name)
    for write in (lambda: resources.patch(be, route, {}, resources.MERGE, {"status": status}),
                  lambda: resources.update(be, route, {}, {**before, "status": status})):
        with pytest.raises(errors.Invalid) as info:
            write()
        assert [e.path for e in info.value.errors] == [field]
    assert be.client.get(route.kind, route.namespace or "", route.name) == before


def test_a_well_typed_status_of_a_volcano_kind_is_written(be):
    good = {"JobFlow": {"state": {"phase": "Running"}, "runningJobs": ["f-a"], "conditions": {
                "f-a": {"phase": "Running", "createTime": "2026-01-01T00:00:00Z", "vcliteExtra": [1]}}},
            "Job": {"state": {"phase": "Running"}, "running": 1, "taskStatusCount": {"t": {"phase": {"Running": 1}}},
                    "runningDuration": "2s"},
            "Queue": {"state": "Open", "running": 1, "allocated": {"cpu": "1"}},
            "PodGroup": {"phase": "Running", "running": 1, "conditions": [{"type": "Scheduled", "status": "True"}]},
            "CronJob": {"active": [{"kind": "Job", "name": "c-1"}], "lastScheduleTime": "2026-01-01T00:00:00Z"},
            "HyperNode": {"nodeCount": 1}, "JobTemplate": {"jobDependsOnList": ["f-a"]}}
    for kind_name, route in _volcano_objects(be).items():
        code, out = resources.patch(be, route, {}, resources.MERGE, {"status": good[kind_name]})
        assert code == 200 and all(out["status"][k] == v for k, v in good[kind_name].items()), kind_name
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q2"},
             "status": {"state": 5}}
    with pytest.raises(errors.Invalid):
        resources.create(be, routes.Resource(kinds.QUEUE, None, None, None), {}, queue)


def test_update_name_must_match_url(be):
    obj = make(be, "t")
    with pytest.raises(errors.BadRequest, match="name of the object"):
        resources.update(be, jt_route("other"), {}, obj)


@pytest.mark.parametrize("ctype, body, labels", [
    pytest.param(resources.MERGE, {"metadata": {"labels": {"a": "1"}}}, {"a": "1"}, id="merge"),
    pytest.param(resources.JSON_PATCH, [{"op": "add", "path": "/metadata/labels", "value": {"b": "2"}}], {"b": "2"},
                 id="json-patch"),
])
def test_patch_types(be, ctype, body, labels):
    make(be, "t")
    code, out = resources.patch(be, jt_route("t"), {}, ctype, body)
    assert code == 200 and out["metadata"]["labels"] == labels


def _without(key):
    return {"metadata": {key: {"k": None}}}


MD = {"labels": {"k": "v"}, "annotations": {"k": "v"}}
# A patch that removes the last label or annotation leaves no empty map behind (Kubernetes' omitempty:
# after `kubectl annotate x k-`, `kubectl get x -o yaml` shows no `annotations:` key); the other map stays.
EMPTIED = [
    pytest.param(kinds.JOBTEMPLATE, resources.MERGE, _without("annotations"), {"labels": {"k": "v"}},
                 id="merge-last-annotation"),
    pytest.param(kinds.JOBTEMPLATE, resources.MERGE, _without("labels"), {"annotations": {"k": "v"}},
                 id="merge-last-label"),
    pytest.param(kinds.JOBTEMPLATE, resources.MERGE, {"metadata": {"labels": {"k": None}, "annotations": {"k": None}}},
                 {}, id="merge-both"),
    pytest.param(kinds.JOBTEMPLATE, resources.MERGE, {"metadata": {"annotations": {"k": None, "j": "w"}}},
                 {**MD, "annotations": {"j": "w"}}, id="merge-not-the-last"),
    pytest.param(kinds.JOBTEMPLATE, resources.MERGE, {"metadata": {"annotations": {}}}, MD, id="merge-nothing"),
    pytest.param(kinds.JOBTEMPLATE, resources.JSON_PATCH, [{"op": "remove", "path": "/metadata/annotations/k"}],
                 {"labels": {"k": "v"}}, id="json-patch-remove"),
    pytest.param(kinds.JOBTEMPLATE, resources.JSON_PATCH, [{"op": "replace", "path": "/metadata/labels", "value": {}}],
                 {"annotations": {"k": "v"}}, id="json-patch-replace-with-empty"),
    pytest.param(kinds.CONFIGMAP, resources.STRATEGIC, _without("annotations"), {"labels": {"k": "v"}},
                 id="strategic-last-annotation"),
    pytest.param(kinds.CONFIGMAP, resources.STRATEGIC, {"metadata": {"labels": {"$patch": "replace"}}},
                 {"annotations": {"k": "v"}}, id="strategic-replace-with-empty"),
]


@pytest.mark.parametrize("kind, ctype, body, metadata", EMPTIED)
def test_a_patch_emptying_labels_or_annotations_leaves_no_empty_map(be, kind, ctype, body, metadata):
    be.client.create({"apiVersion": kind.api_version, "kind": kind.kind, "metadata": {"name": "t", **MD},
                      **({"spec": JT["spec"]} if kind is kinds.JOBTEMPLATE else {})})
    route = routes.Resource(kind, "default", "t", None)
    _, out = resources.patch(be, route, {}, ctype, body)
    stored = be.client.get(kind, "default", "t")
    for obj in (out, stored):
        assert {k: v for k, v in obj["metadata"].items() if k in MD} == metadata


CRD_TYPES = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
ALL_TYPES = ("application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
             "application/apply-patch+yaml")


@pytest.mark.parametrize("kind, ctype, accepted", [
    *[pytest.param(k, resources.STRATEGIC, CRD_TYPES, id=f"strategic-{k.kind}") for k in kinds.ALL if k.crd],
    pytest.param(kinds.JOBFLOW, "application/xml", CRD_TYPES, id="unknown-JobFlow"),
    pytest.param(kinds.POD, "application/xml", ALL_TYPES, id="unknown-Pod"),
    *[pytest.param(k, t, None, id=f"{t.split('/')[1]}-{k.kind}") for k in (kinds.POD, kinds.NODE, kinds.PRIORITYCLASS)
      for t in (resources.STRATEGIC, resources.MERGE)],
    pytest.param(kinds.JOBFLOW, resources.MERGE, None, id="merge-JobFlow"),
])
def test_check_patch_type_as_kube_apiserver(kind, ctype, accepted):
    """A custom resource takes no strategic merge patch (apiextensions-apiserver's supported types)."""
    if accepted is None:
        resources.check_patch_type(kind, ctype)
        return
    with pytest.raises(status_mod.UnsupportedMediaType) as exc:
        resources.check_patch_type(kind, ctype)
    assert exc.value.message == ("the body of the request was in an unknown format - accepted media types include: "
                                 + accepted)


def test_strategic_merge_patch_of_a_built_in_kind(be):
    be.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    code, out = resources.patch(be, routes.Resource(kinds.CONFIGMAP, "default", "c", None), {}, resources.STRATEGIC,
                                {"metadata": {"labels": {"c": "3"}}})
    assert code == 200 and out["metadata"]["labels"] == {"c": "3"}


def test_strategic_merge_patch_of_a_custom_resource_is_415_and_changes_nothing(be):
    make(be, "t")
    before = be.resource_version()
    with pytest.raises(status_mod.UnsupportedMediaType):
        resources.patch(be, jt_route("t"), {}, resources.STRATEGIC, {"metadata": {"labels": {"c": "3"}}})
    assert be.resource_version() == before


def test_patch_cannot_rename_or_move(be):
    make(be, "t")
    before = be.resource_version()
    with pytest.raises(errors.BadRequest):
        resources.patch(be, jt_route("t"), {}, resources.MERGE, {"metadata": {"name": "other"}})
    with pytest.raises(errors.BadRequest):
        resources.patch(be, jt_route("t"), {}, resources.MERGE, {"metadata": {"namespace": "x"}})
    assert be.resource_version() == before


UNNAMED = "the name of the object \\(t based on URL\\) was undeterminable: name must be provided"


@pytest.mark.parametrize("verb, ctype, body", [
    pytest.param("patch", resources.MERGE, {"metadata": None}, id="merge-metadata-null"),
    pytest.param("patch", resources.MERGE, {"metadata": {"name": None}}, id="merge-name-null"),
    pytest.param("patch", resources.JSON_PATCH, [{"op": "remove", "path": "/metadata"}], id="json-patch-remove"),
    pytest.param("patch", resources.STRATEGIC, {"metadata": None}, id="strategic-metadata-null"),
    pytest.param("update", None, {"metadata": {}}, id="put-without-name"),
])
def test_an_update_or_patch_that_loses_the_name_is_refused_and_changes_nothing(be, verb, ctype, body):
    """As kube-apiserver's checkName: the written object must carry the name of the URL (an apply
    configuration may leave it out)."""
    kind = kinds.CONFIGMAP if ctype == resources.STRATEGIC else kinds.JOBTEMPLATE
    current = be.client.create({"apiVersion": kind.api_version, "kind": kind.kind,
                                "metadata": {"name": "t", "namespace": "default", "labels": {"k": "v"}},
                                **({"spec": JT["spec"]} if kind is kinds.JOBTEMPLATE else {})})
    before = be.resource_version()
    route = routes.Resource(kind, "default", "t", None)
    with pytest.raises(errors.BadRequest, match=UNNAMED):
        if verb == "patch":
            resources.patch(be, route, {}, ctype, body)
        else:
            resources.update(be, route, {}, {k: v for k, v in current.items() if k != "metadata"} | body)
    assert be.resource_version() == before and be.client.get(kind, "default", "t")["metadata"]["labels"] == {"k": "v"}


def test_patch_unknown_type_is_415(be):
    make(be, "t")
    with pytest.raises(status_mod.UnsupportedMediaType):
        resources.patch(be, jt_route("t"), {}, "application/xml", {})


def test_status_patch_writes_only_status(be):
    make(be, "t")
    _, out = resources.patch(be, jt_route("t", sub="status"), {}, resources.MERGE,
                             {"status": {"jobDependsOnList": ["x"]}, "metadata": {"labels": {"no": "pe"}}})
    assert out["status"] == {"jobDependsOnList": ["x"]} and "labels" not in out["metadata"]


def test_apply_creates_then_updates(be):
    code, created = resources.apply(be, jt_route("t1"), {"fieldManager": "kubectl"}, JT)
    assert code == 201 and created["metadata"]["managedFields"][0]["manager"] == "kubectl"
    code, again = resources.apply(be, jt_route("t1"), {"fieldManager": "kubectl"}, JT)
    assert code == 200 and again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_apply_status_of_missing_object_is_404(be):
    with pytest.raises(errors.NotFound):
        resources.apply(be, jt_route("t1", sub="status"), {"fieldManager": "m"}, JT)


def test_delete_with_preconditions_and_options(be):
    obj = make(be, "t")
    with pytest.raises(errors.Conflict, match="the UID in the precondition \\(not-it\\) does not match"):
        resources.delete(be, jt_route("t"), {}, {"preconditions": {"uid": "not-it"}})
    with pytest.raises(errors.BadRequest):
        resources.delete(be, jt_route("t"), {}, {"propagationPolicy": "Sideways"})
    code, gone = resources.delete(be, jt_route("t"), {}, {"propagationPolicy": "Background",
                                                          "preconditions": {"uid": obj["metadata"]["uid"]}})
    assert code == 200 and gone["metadata"]["name"] == "t"
    with pytest.raises(errors.NotFound):
        resources.get_object(be, jt_route("t"), {})


def test_delete_collection_by_label(be):
    make(be, "a", {"x": "1"})
    make(be, "b", {"x": "2"})
    _, out = resources.delete_collection(be, jt_route(), {"labelSelector": "x=1"}, None)
    assert [o["metadata"]["name"] for o in out["items"]] == ["a"]
    _, lst = resources.list_objects(be, jt_route(), {})
    assert [o["metadata"]["name"] for o in lst["items"]] == ["b"]


def test_cluster_scoped_queue(be):
    route = routes.Resource(kinds.QUEUE, None, None)
    q = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1", "namespace": "x"},
         "spec": {"weight": 1}}
    code, obj = resources.create(be, route, {}, q)
    assert code == 201 and "namespace" not in obj["metadata"]
    _, lst = resources.list_objects(be, route, {})
    assert {o["metadata"]["name"] for o in lst["items"]} >= {"q1", "default", "root"}


@pytest.mark.parametrize("query, body, grace", [
    pytest.param({}, None, None, id="none: the pod's own"),
    pytest.param({"gracePeriodSeconds": "0"}, None, 0, id="query"),
    pytest.param({}, {"kind": "DeleteOptions", "gracePeriodSeconds": 5}, 5, id="body"),
    pytest.param({"gracePeriodSeconds": "7"}, {"gracePeriodSeconds": 3}, 3, id="the body wins"),
])
def test_grace_period_of_delete_options(query, body, grace):
    assert resources.grace_period(query, body) == grace


@pytest.mark.parametrize("query, body, words", [
    pytest.param({"gracePeriodSeconds": "soon"}, None, 'invalid value for gracePeriodSeconds: "soon"', id="query"),
    pytest.param({}, {"gracePeriodSeconds": "5"}, "gracePeriodSeconds: expected an integer, got '5'", id="body-string"),
    pytest.param({}, {"gracePeriodSeconds": True}, "expected an integer", id="body-bool"),
])
def test_a_bad_grace_period_is_refused_and_deletes_nothing(be, query, body, words):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i", "command": ["true"]}]}}
    be.client.create(pod)
    route = routes.Resource(kind=kinds.POD, namespace="default", name="p")
    with pytest.raises(errors.BadRequest, match=words):
        resources.delete(be, route, query, body)
    assert be.client.get(kinds.POD, "default", "p")["metadata"].get("deletionTimestamp") is None


def _pod(spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize("route, created, warned", [
    pytest.param(routes.Resource(kinds.POD, "default", None), _pod({"schedulerName": "default-scheduler"}), True,
                 id="default-scheduler"),
    pytest.param(routes.Resource(kinds.POD, "default", None), _pod({}), True, id="no-scheduler-name"),
    pytest.param(routes.Resource(kinds.POD, "default", "p"), _pod({"schedulerName": "other"}), True,
                 id="server-side-apply-create"),
    pytest.param(routes.Resource(kinds.POD, "default", None), _pod({"schedulerName": "volcano"}), False,
                 id="volcano"),
    pytest.param(routes.Resource(kinds.POD, "default", None), _pod({"nodeName": "local-0"}), False,
                 id="bound-already"),
    pytest.param(routes.Resource(kinds.POD, "default", "p", "binding"), {"kind": "Binding"}, False, id="binding"),
    pytest.param(jt_route(), JT, False, id="not-a-pod"),
])
def test_a_pod_no_scheduler_here_will_run_is_created_with_a_warning(route, created, warned):
    got = resources.creation_warnings(route, created)
    assert bool(got) == warned
    if warned:
        assert got[0].startswith('pod "p" will stay Pending: schedulerName ') and "schedulerName: volcano" in got[0]
        assert got[0].isascii()   # a Warning header


def test_the_pages_of_a_list_read_the_state_the_first_page_read(be):
    """(kube-apiserver's paging: a consistent list, or 410 when that state is gone.)"""
    for name in "abc":
        make(be, name)
    _, page1 = resources.list_objects(be, jt_route(), {"limit": "2"})
    make(be, "bb")                                       # (after the first page: not in this list)
    be.client.delete(kinds.JOBTEMPLATE, "default", "c")  # (after the first page: still in it)
    _, page2 = resources.list_objects(be, jt_route(), {"limit": "2", "continue": page1["metadata"]["continue"]})
    assert [o["metadata"]["name"] for o in page2["items"]] == ["c"]
    assert page2["metadata"]["resourceVersion"] == page1["metadata"]["resourceVersion"]
    be.client.store._history.clear()   # as if the history had rolled over
    make(be, "d")
    with pytest.raises(errors.Gone, match="The provided continue parameter is too old"):
        resources.list_objects(be, jt_route(), {"limit": "2", "continue": page1["metadata"]["continue"]})


def test_a_get_at_a_version_the_store_has_not_reached_is_too_large(be):
    make(be, "a")
    assert resources.get_object(be, jt_route(name="a"), {"resourceVersion": be.resource_version()})[0] == 200
    with pytest.raises(listopts.TooLargeResourceVersion, match="Too large resource version"):
        resources.get_object(be, jt_route(name="a"), {"resourceVersion": str(int(be.resource_version()) + 1)})
