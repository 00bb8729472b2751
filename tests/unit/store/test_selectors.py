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


@pytest.mark.parametrize("bad", ["app in web", "a=b=c", "===", "app notin"])
def test_bad_selectors_are_rejected(bad):
    with pytest.raises(errors.BadRequest):
        selectors.label_predicate(bad)
