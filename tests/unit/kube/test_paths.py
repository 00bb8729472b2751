"""REST paths for every kind, selectors and query strings."""
import pytest

from vclite.api import kinds
from vclite.kube import paths


@pytest.mark.parametrize("kind, namespace, want", [
    pytest.param(kinds.JOBFLOW, "default", "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows", id="jobflow"),
    pytest.param(kinds.JOBFLOW, None, "/apis/flow.volcano.sh/v1alpha1/jobflows", id="jobflow-all-namespaces"),
    pytest.param(kinds.JOBFLOW, "", "/apis/flow.volcano.sh/v1alpha1/jobflows", id="empty-namespace-is-all"),
    pytest.param(kinds.JOB, "ns1", "/apis/batch.volcano.sh/v1alpha1/namespaces/ns1/jobs", id="vcjob"),
    pytest.param(kinds.QUEUE, "default", "/apis/scheduling.volcano.sh/v1beta1/queues", id="queue-cluster-scoped"),
    pytest.param(kinds.POD, "a", "/api/v1/namespaces/a/pods", id="core-namespaced"),
    pytest.param(kinds.NODE, None, "/api/v1/nodes", id="core-cluster-scoped"),
    pytest.param(kinds.PRIORITYCLASS, None, "/apis/scheduling.k8s.io/v1/priorityclasses", id="priorityclass"),
    pytest.param(kinds.NAMESPACE, None, "/api/v1/namespaces", id="namespaces"),
])
def test_collection(kind, namespace, want):
    assert paths.collection(kind, namespace) == want


@pytest.mark.parametrize("kind, namespace, name, sub, want", [
    pytest.param(kinds.JOBFLOW, "default", "f", None, "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows/f",
                 id="item"),
    pytest.param(kinds.JOB, "default", "j", "status", "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/j/status",
                 id="status-subresource"),
    pytest.param(kinds.QUEUE, "ignored", "q1", "status", "/apis/scheduling.volcano.sh/v1beta1/queues/q1/status",
                 id="cluster-scoped-ignores-namespace"),
    pytest.param(kinds.POD, "default", "p", "log", "/api/v1/namespaces/default/pods/p/log", id="pod-log"),
    pytest.param(kinds.NAMESPACE, None, "team-a", None, "/api/v1/namespaces/team-a", id="namespace-object"),
    pytest.param(kinds.JOB, "default", "a/b c", None, "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/a%2Fb%20c",
                 id="name-is-quoted"),
])
def test_item(kind, namespace, name, sub, want):
    assert paths.item(kind, namespace, name, sub) == want


def test_item_without_a_name_is_refused():
    with pytest.raises(ValueError, match="JobFlow name is required"):
        paths.item(kinds.JOBFLOW, "default", "")


@pytest.mark.parametrize("selector, want", [
    pytest.param(None, None, id="none"),
    pytest.param("", None, id="empty-string"),
    pytest.param("a=1,b!=2", "a=1,b!=2", id="string-kept"),
    pytest.param({"volcano.sh/createdByJobFlow": "default.f"}, "volcano.sh/createdByJobFlow=default.f", id="mapping"),
    pytest.param({"a": "1", "b": "2"}, "a=1,b=2", id="mapping-several"),
    pytest.param({}, None, id="empty-mapping"),
])
def test_label_selector(selector, want):
    assert paths.label_selector(selector) == want


@pytest.mark.parametrize("query, want", [
    pytest.param({}, "/p", id="no-query"),
    pytest.param({"watch": True, "resourceVersion": None}, "/p?watch=true", id="none-left-out-bool-lowercase"),
    pytest.param({"labelSelector": "a=1,b=2", "limit": 500}, "/p?labelSelector=a%3D1%2Cb%3D2&limit=500", id="encoded"),
    pytest.param({"fieldSelector": "metadata.name=x"}, "/p?fieldSelector=metadata.name%3Dx", id="field-selector"),
])
def test_with_query(query, want):
    assert paths.with_query("/p", query) == want
