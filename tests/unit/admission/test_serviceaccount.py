"""ServiceAccounts and kube-apiserver's ServiceAccount admission of pods."""
from __future__ import annotations

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
DEFAULT_SA = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "team"}}


def pod(**spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


@pytest.mark.parametrize("spec, stored, expect", [
    pytest.param({}, (NS, DEFAULT_SA), "default", id="defaulted"),
    pytest.param({}, (), "default", id="namespace-made-on-demand"),
    pytest.param({"serviceAccount": "default"}, (NS, DEFAULT_SA), "default", id="deprecated-field"),
])
def test_a_pod_gets_its_account(spec, stored, expect):
    out = admit.admit(Op.CREATE, kinds.POD, pod(**spec), None, views.DictView(*stored))["spec"]
    assert (out["serviceAccountName"], out["serviceAccount"]) == (expect, expect)


@pytest.mark.parametrize("spec, stored, error, words", [
    pytest.param({"serviceAccountName": "ci"}, (NS, DEFAULT_SA), errors.Forbidden,
                 'pods "p" is forbidden: error looking up service account team/ci: serviceaccount "ci" not found',
                 id="missing-account"),
    pytest.param({}, (NS,), errors.Forbidden, 'serviceaccount "default" not found', id="namespace-without-default"),
    pytest.param({"serviceAccountName": "CI_bot"}, (NS,), errors.Invalid,
                 'spec.serviceAccountName: Invalid value: "CI_bot"', id="not-a-name"),
    pytest.param({"serviceAccountName": 7}, (NS,), errors.Invalid, "spec.serviceAccountName", id="not-a-string"),
])
def test_a_pod_naming_a_bad_or_missing_account_is_refused(spec, stored, error, words):
    with pytest.raises(error, match=None) as caught:
        admit.admit(Op.CREATE, kinds.POD, pod(**spec), None, views.DictView(*stored))
    assert words in str(caught.value)


def test_existing_pods_of_a_dry_run_keep_their_account():
    class Existing(views.DictView):
        existing_state = True
    out = admit.admit(Op.CREATE, kinds.POD, pod(serviceAccountName="ci"), None, Existing(NS))
    assert out["spec"]["serviceAccountName"] == "ci"


@pytest.mark.parametrize("sa, field", [
    pytest.param({"secrets": [{"name": 3}]}, "secrets[0].name", id="secret-name"),
    pytest.param({"imagePullSecrets": "regcred"}, "imagePullSecrets", id="pull-secrets"),
    pytest.param({"automountServiceAccountToken": "yes"}, "automountServiceAccountToken", id="automount"),
])
def test_a_bad_service_account_is_refused(sa, field):
    obj = {**DEFAULT_SA, "metadata": {"name": "ci", "namespace": "team"}, **sa}
    with pytest.raises(errors.Invalid) as caught:
        admit.admit(Op.CREATE, kinds.SERVICEACCOUNT, obj, None, views.DictView(NS))
    assert caught.value.errors[0].path == field
