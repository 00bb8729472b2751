"""Label and field selector parsing and matching."""
import pytest

from vclite.lib import errors
from vclite.store import selectors

OBJ = {"metadata": {"name": "p1", "namespace": "ns", "labels": {"app": "web", "tier": "fe"}},
       "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}


@pytest.mark.parametrize("selector, expected", [
    pytest.param("app=web", True, id="equals"),
    pytest.param("app==web", True, id="double-equals"),
    pytest.param("app!=web", False, id="not-equals"),
    pytest.param("app=web,tier=fe", True, id="and"),
    pytest.param("app=web,tier=be", False, id="and-fails"),
    pytest.param("app in (web, api)", True, id="in"),
    pytest.param("app notin (web)", False, id="notin"),
    pytest.param("tier", True, id="exists"),
    pytest.param("!tier", False, id="not-exists"),
    pytest.param("missing!=x", True, id="not-equals-missing"),
    pytest.param({"app": "web"}, True, id="dict"),
    pytest.param({"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["fe"]}]}, True, id="label-selector-object"),
    pytest.param({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False, id="does-not-exist"),
    pytest.param("", True, id="empty"),
])
def test_label_selector(selector, expected):
    assert selectors.label_predicate(selector)(OBJ) is expected


@pytest.mark.parametrize("selector, expected", [
    pytest.param("metadata.name=p1", True, id="name"),
    pytest.param("metadata.namespace=other", False, id="namespace"),
    pytest.param("status.phase=Running,spec.nodeName=n1", True, id="two"),
    pytest.param("spec.nodeName!=n1", False, id="not-equal"),
    pytest.param("spec.nodeName=", False, id="empty-value-means-unset"),
])
def test_field_selector(selector, expected):
    assert selectors.field_predicate(selector)(OBJ) is expected


EVENT = {"involvedObject": {"kind": "JobFlow", "apiVersion": "flow.volcano.sh/v1alpha1", "name": "a,b=c"},
         "metadata": {"name": "e"}}


@pytest.mark.parametrize("selector, expected", [
    pytest.param("involvedObject.apiVersion=flow.volcano.sh/v1alpha1,involvedObject.kind=JobFlow", True,
                 id="a value with slashes (kubectl events --for)"),
    pytest.param(r"involvedObject.name=a\,b\=c", True, id="escaped comma and equals"),
    pytest.param(r"involvedObject.name=a\,b", False, id="escaped, different"),
    pytest.param("involvedObject.name!=x", True, id="not equal"),
])
def test_field_selector_values(selector, expected):
    assert selectors.field_predicate(selector, "Event")(EVENT) is expected


@pytest.mark.parametrize("kind, selector", [
    pytest.param("JobFlow", "spec.bogus=x", id="custom resource: metadata only"),
    pytest.param("JobFlow", "status.state.phase=Running", id="custom resource status"),
    pytest.param("Pod", "spec.foo=bar", id="pod field Kubernetes does not index"),
])
def test_unsupported_field_labels_are_refused(kind, selector):
    with pytest.raises(errors.BadRequest, match=f"field label not supported: {selector.split('=')[0]}"):
        selectors.field_predicate(selector, kind)


@pytest.mark.parametrize("selector, expected", [
    pytest.param("index>0", True, id="greater"), pytest.param("index<1", False, id="not less"),
    pytest.param("index>-1,index<2", True, id="range"), pytest.param("missing>0", False, id="absent label"),
    pytest.param("app>0", False, id="not an integer"),
])
def test_label_order_requirements(selector, expected):
    assert selectors.label_predicate(selector)({"metadata": {"labels": {"index": "1", "app": "web"}}}) is expected


@pytest.mark.parametrize("bad", ["app in web", "a=b=c", "===", "app notin"])
def test_bad_selectors_are_rejected(bad):
    with pytest.raises(errors.BadRequest):
        selectors.label_predicate(bad)
