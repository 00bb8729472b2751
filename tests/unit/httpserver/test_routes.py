"""The path routing table: what each request path names."""
import pytest

from vclite.api import kinds
from vclite.httpserver import absent, routes

E = routes.Endpoint
R = routes.Resource
S = routes.Static
U = routes.Usage
A = routes.Absent
DEPLOYMENT = absent.find("apps", "v1", "deployments")
ENDPOINTS = absent.find("", "v1", "endpoints")


@pytest.mark.parametrize("path, expected", [
    pytest.param("/api", S(E.API), id="api"),
    pytest.param("/api/", S(E.API), id="api-trailing-slash"),
    pytest.param("/apis", S(E.APIS), id="apis"),
    pytest.param("/version/", S(E.VERSION), id="version-trailing-slash"),
    pytest.param("/api/v1", S(E.GROUP_VERSION, "", "v1"), id="core-group-version"),
    pytest.param("/apis/flow.volcano.sh", S(E.GROUP, "flow.volcano.sh"), id="group"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1", S(E.GROUP_VERSION, "flow.volcano.sh", "v1alpha1"), id="gv"),
    pytest.param("/openapi/v3", S(E.OPENAPI_V3), id="openapi-root"),
    pytest.param("/openapi/v3/apis/batch.volcano.sh/v1alpha1", S(E.OPENAPI_V3_GV, "batch.volcano.sh", "v1alpha1"),
                 id="openapi-gv"),
    pytest.param("/openapi/v3/api/v1", S(E.OPENAPI_V3_GV, "", "v1"), id="openapi-core"),
    pytest.param("/healthz", S(E.HEALTHZ), id="healthz"),
    pytest.param("/readyz/ping", S(E.READYZ), id="readyz-sub-check"),
    pytest.param("/livez", S(E.LIVEZ), id="livez"),
    pytest.param("/metrics", S(E.METRICS), id="metrics"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows",
                 R(kinds.JOBFLOW, "default", None), id="namespaced-collection"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/jobflows", R(kinds.JOBFLOW, None, None), id="all-namespaces"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/namespaces/ns1/jobflows/f1", R(kinds.JOBFLOW, "ns1", "f1"),
                 id="namespaced-item"),
    pytest.param("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/j1/status",
                 R(kinds.JOB, "default", "j1", "status"), id="status-subresource"),
    pytest.param("/apis/scheduling.volcano.sh/v1beta1/queues/default", R(kinds.QUEUE, None, "default"),
                 id="cluster-item"),
    pytest.param("/apis/scheduling.volcano.sh/v1beta1/queues/q1/status", R(kinds.QUEUE, None, "q1", "status"),
                 id="cluster-status"),
    pytest.param("/api/v1/namespaces/default/pods/p1/log", R(kinds.POD, "default", "p1", "log"), id="pod-log"),
    pytest.param("/api/v1/namespaces/default/pods/p1/attach", R(kinds.POD, "default", "p1", "attach"),
                 id="pod-attach"),
    pytest.param("/api/v1/namespaces", R(kinds.NAMESPACE, None, None), id="namespaces"),
    pytest.param("/api/v1/namespaces/default", R(kinds.NAMESPACE, None, "default"), id="namespace-object"),
    pytest.param("/api/v1/namespaces/default/status", R(kinds.NAMESPACE, None, "default", "status"),
                 id="namespace-status"),
    pytest.param("/api/v1/namespaces/default/events", R(kinds.EVENT, "default", None), id="events"),
    pytest.param("/api/v1/nodes/local", R(kinds.NODE, None, "local"), id="node"),
    pytest.param("/apis/metrics.k8s.io", S(E.GROUP, "metrics.k8s.io"), id="metrics-group"),
    pytest.param("/apis/metrics.k8s.io/v1beta1", S(E.GROUP_VERSION, "metrics.k8s.io", "v1beta1"), id="metrics-gv"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/pods", U("pods", None, None), id="pod-metrics-all-namespaces"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", U("pods", "ns", None), id="pod-metrics"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p", U("pods", "ns", "p"), id="a-pods-metrics"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/nodes", U("nodes", None, None), id="node-metrics"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/nodes/n1/", U("nodes", None, "n1"), id="a-nodes-metrics"),
    # kinds vclite does not run, served empty for kubectl (absent.py)
    pytest.param("/apis/apps", S(E.GROUP, "apps"), id="absent-group"),
    pytest.param("/apis/apps/v1", S(E.GROUP_VERSION, "apps", "v1"), id="absent-group-version"),
    pytest.param("/apis/apps/v1/deployments", A(DEPLOYMENT, None, None), id="absent-all-namespaces"),
    pytest.param("/apis/apps/v1/namespaces/ns/deployments", A(DEPLOYMENT, "ns", None), id="absent-list"),
    pytest.param("/apis/apps/v1/namespaces/ns/deployments/d", A(DEPLOYMENT, "ns", "d"), id="absent-object"),
    pytest.param("/api/v1/namespaces/ns/endpoints", A(ENDPOINTS, "ns", None), id="absent-core-kind"),
    pytest.param("/api/v1/persistentvolumes/pv1", R(kinds.PERSISTENTVOLUME, None, "pv1"), id="served-cluster-kind"),
    pytest.param("/apis/storage.k8s.io/v1/storageclasses/standard", R(kinds.STORAGECLASS, None, "standard"),
                 id="storageclass-served"),
    pytest.param("/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs", R(kinds.JOB, "ns", None),
                 id="volcano-jobs-still-volcanos"),
])
def test_known_paths(path, expected):
    assert routes.match(path) == expected


@pytest.mark.parametrize("path", [
    pytest.param("/", id="root"),
    pytest.param("/apis/nosuch.group/v1/things", id="unknown-group"),
    pytest.param("/apis/flow.volcano.sh/v9/jobflows", id="unknown-version"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/namespaces/default/widgets", id="unknown-plural"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/jobflows/f1", id="namespaced-item-without-namespace"),
    pytest.param("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/queues", id="cluster-kind-in-namespace"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows/f1/scale", id="unknown-subresource"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobtemplates/t/log", id="log-not-pod"),
    pytest.param("/apis/scheduling.k8s.io/v1/priorityclasses/p/status", id="no-status-subresource"),
    pytest.param("/api/v2/pods", id="core-v2"),
    pytest.param("/openapi/v2/apis", id="openapi-v2-has-no-sub-paths"),
    pytest.param("/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows/f1/status/x", id="too-deep"),
    pytest.param("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobflows", id="alias-group-not-served"),
    pytest.param("/apis/metrics.k8s.io/v1", id="metrics-unknown-version"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/namespaces/ns/nodes", id="node-metrics-in-a-namespace"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/pods/p", id="pod-metrics-without-namespace"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p/x", id="metrics-too-deep"),
    pytest.param("/apis/metrics.k8s.io/v1beta1/namespaces/ns", id="metrics-namespace-alone"),
    pytest.param("/apis/apps/v1/deployments/d", id="absent-namespaced-object-without-namespace"),
    pytest.param("/apis/apps/v1/namespaces/ns/deployments/d/scale", id="absent-subresource"),
    pytest.param("/apis/apps/v2/deployments", id="absent-unknown-version"),
])
def test_unknown_paths(path):
    assert routes.match(path) is None


def test_every_kind_has_a_collection_path():
    for k in kinds.ALL:
        prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
        ns = "/namespaces/default" if k.namespaced else ""
        assert routes.match(f"{prefix}{ns}/{k.plural}") == routes.Resource(k, "default" if k.namespaced else None, None)


@pytest.mark.parametrize("path, named", [
    ("/api/v1/watch/namespaces/default/pods", "/api/v1/namespaces/default/pods"),
    ("/api/v1/watch/pods", "/api/v1/pods"),
    ("/api/v1/watch/namespaces/default/pods/p", "/api/v1/namespaces/default/pods/p"),
    ("/apis/flow.volcano.sh/v1alpha1/watch/namespaces/ns/jobflows",
     "/apis/flow.volcano.sh/v1alpha1/namespaces/ns/jobflows"),
    ("/api/v1/watch", None),
    ("/api/v1/pods", None),
    ("/apis/flow.volcano.sh/v1alpha1/jobflows", None),
])
def test_the_deprecated_watch_paths_name_the_resources(path, named):
    assert routes.unwatched(path) == named
