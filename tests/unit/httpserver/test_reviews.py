"""Self-subject reviews: every request allowed, answered with the request; malformed ones refused
as kube-apiserver refuses them."""
import pytest

from vclite.httpserver import reviews, routes
from vclite.lib import errors

SSAR = ("authorization.k8s.io", "v1", "selfsubjectaccessreviews")


@pytest.mark.parametrize("path, plural", [
    ("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "selfsubjectaccessreviews"),
    ("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews/", "selfsubjectrulesreviews"),
    ("/apis/authentication.k8s.io/v1/selfsubjectreviews", "selfsubjectreviews"),
])
def test_routes(path, plural):
    route = routes.match(path)
    assert route.endpoint is routes.Endpoint.REVIEW and route.plural == plural


def test_an_access_review_is_allowed_and_echoes_its_spec():
    spec = {"resourceAttributes": {"verb": "create", "group": "flow.volcano.sh", "resource": "jobflows"}}
    out = reviews.answer(*SSAR, {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                 "spec": spec})
    assert out["kind"] == "SelfSubjectAccessReview" and out["spec"] == spec and out["status"]["allowed"] is True


@pytest.mark.parametrize("spec", [{}, {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/"}}])
def test_an_access_review_needs_exactly_one_kind_of_attributes(spec):
    with pytest.raises(errors.Invalid) as exc:
        reviews.answer(*SSAR, {"spec": spec})
    assert "exactly one of nonResourceAttributes or resourceAttributes must be specified" in str(exc.value)


def test_a_body_that_is_not_an_object_is_a_bad_request():
    with pytest.raises(errors.BadRequest):
        reviews.answer(*SSAR, ["spec"])


@pytest.mark.parametrize("headers, who", [
    pytest.param([], None, id="none"),
    pytest.param([("Accept", "application/json")], None, id="other-headers"),
    pytest.param([("Impersonate-User", "vclite-admin")], None, id="the-token-holder-itself"),
    pytest.param([("impersonate-user", "vclite-admin"), ("Impersonate-Group", "system:masters")], None,
                 id="itself-with-a-group-it-is-in"),
    pytest.param([("Impersonate-User", "bob")], "bob", id="someone-else"),
    pytest.param([("Impersonate-User", "vclite-admin"), ("Impersonate-Group", "devs")], "vclite-admin",
                 id="itself-in-another-group"),
    pytest.param([("Impersonate-Group", "devs")], "devs", id="a-group-without-a-user"),
    pytest.param([("Impersonate-User", "vclite-admin"), ("Impersonate-Uid", "1")], "vclite-admin", id="a-uid"),
])
def test_impersonation_is_refused_unless_of_the_token_holder(headers, who):
    refusal = reviews.impersonation_refusal(headers)
    assert (refusal[0] if refusal else None) == who
    if refusal:
        assert "impersonation (kubectl --as, --as-group) is not supported" in refusal[1]
