"""A Pod's update (not its status) may change only what kube-apiserver's ValidatePodUpdate lets change;
the rest is refused with its 422 message, and nothing changes."""
from __future__ import annotations

import copy

import pytest

from vclite.admission import admit, podannotations, podupdate
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
NOT_UPDATABLE = ("Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                 "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
                 "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                 "previously negative)\n")


def created(**spec):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "60"],
                                    "resources": {"limits": {"cpu": "1"}}}], **spec}}
    return admit.admit(Op.CREATE, kinds.POD, pod, None, views.DictView())


def update(old, change):
    new = copy.deepcopy(old)
    change(new)
    return admit.admit(Op.UPDATE, kinds.POD, new, old, views.DictView())


def setter(path, value):
    """A change setting (or with value None, removing) the field at a dotted path (`spec.containers.0.image`)."""
    *parents, last = path.split(".")

    def change(pod):
        at = pod
        for p in parents:
            at = at[int(p)] if isinstance(at, list) else at.setdefault(p, {})
        if value is None:
            at.pop(last, None)
        elif isinstance(at, list):
            at[int(last)] = value
        else:
            at[last] = value
    return change


def drop_account(pod):
    """A PUT without the account (kube reads the deprecated `serviceAccount` when `serviceAccountName` is empty)."""
    pod["spec"].pop("serviceAccountName")
    pod["spec"].pop("serviceAccount")


GATED = {"schedulingGates": [{"name": "a"}, {"name": "b"}]}
TOLERATION = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 10}
REQUIRED = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}


@pytest.mark.parametrize("spec, change", [
    pytest.param({}, setter("spec.containers.0.image", "busybox:1.37"), id="image"),
    pytest.param({}, setter("metadata.labels", {"app": "x"}), id="labels"),
    pytest.param({}, setter("metadata.annotations", {"note": "x"}), id="annotations"),
    pytest.param({}, setter("spec.activeDeadlineSeconds", 30), id="deadline-set"),
    pytest.param({"activeDeadlineSeconds": 30}, setter("spec.activeDeadlineSeconds", 20), id="deadline-lowered"),
    pytest.param({"tolerations": [TOLERATION]}, setter("spec.tolerations", [{**TOLERATION, "tolerationSeconds": 5},
                                                                           {"key": "x", "operator": "Exists"}]),
                 id="toleration-added-and-seconds-changed"),
    pytest.param(GATED, setter("spec.schedulingGates", [{"name": "b"}]), id="gate-removed"),
    pytest.param({"terminationGracePeriodSeconds": -1}, setter("spec.terminationGracePeriodSeconds", 1),
                 id="negative-grace-to-one"),
    pytest.param({}, setter("spec.containers.0.resources.requests.cpu", "1000m"), id="same-quantity"),
    pytest.param({}, setter("spec.restartPolicy", None), id="default-left-out"),
    pytest.param({}, setter("spec.dnsPolicy", "ClusterFirst"), id="default-written"),
    pytest.param({}, setter("spec.hostNetwork", False), id="zero-value"),
    pytest.param({}, setter("spec.serviceAccountName", None), id="deprecated-account-kept"),
    pytest.param({}, setter("spec.priority", None), id="priority-left-out"),
    pytest.param({"nodeSelector": {"a": "1"}, **GATED}, setter("spec.nodeSelector", {"a": "1", "b": "2"}),
                 id="gated-node-selector-added"),
    pytest.param({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": REQUIRED}},
                  **GATED},
                 setter("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                        [{"matchExpressions": [*REQUIRED["nodeSelectorTerms"][0]["matchExpressions"],
                                               {"key": "rack", "operator": "Exists"}]}]),
                 id="gated-affinity-expression-added"),
    pytest.param(GATED, setter("spec.affinity", {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": REQUIRED}}), id="gated-affinity-set"),
])
def test_what_an_update_may_change(spec, change):
    update(created(**spec), change)


@pytest.mark.parametrize("spec, change, field, words", [
    pytest.param({}, drop_account, "spec", "spec.serviceAccountName", id="account-dropped"),
    pytest.param({}, setter("spec.nodeName", "n1"), "spec", '+ spec.nodeName: "n1"', id="node-name"),
    pytest.param({}, setter("spec.containers.0.command", ["true"]), "spec", "spec.containers[0].command",
                 id="command"),
    pytest.param({}, setter("spec.containers.0.resources.limits.cpu", "2"), "spec",
                 '+ spec.containers[0].resources.limits.cpu: "2"', id="resources"),
    pytest.param({}, setter("spec.restartPolicy", "Never"), "spec", '+ spec.restartPolicy: "Never"', id="restart"),
    pytest.param({}, setter("spec.nodeSelector", {"a": "1"}), "spec", "- spec.nodeSelector: <unset>",
                 id="not-gated-selector"),
    pytest.param({}, setter("spec.containers", [{"name": "c", "command": ["true"]}, {"name": "d", "command": ["x"]}]),
                 "spec.containers", "Forbidden: pod updates may not add or remove containers", id="container-added"),
    pytest.param({}, setter("spec.containers.0.image", " busybox"), "spec.containers[0].image",
                 'Invalid value: " busybox": must not have leading or trailing whitespace', id="image-space"),
    pytest.param({"activeDeadlineSeconds": 30}, setter("spec.activeDeadlineSeconds", 40),
                 "spec.activeDeadlineSeconds", "Invalid value: 40: must be less than or equal to previous value",
                 id="deadline-raised"),
    pytest.param({"activeDeadlineSeconds": 30}, setter("spec.activeDeadlineSeconds", None),
                 "spec.activeDeadlineSeconds",
                 'Invalid value: "null": must not update from a positive integer to nil value', id="deadline-unset"),
    pytest.param({"tolerations": [TOLERATION]}, setter("spec.tolerations", [{**TOLERATION, "value": "w"}]),
                 "spec.tolerations", "Forbidden: existing toleration can not be modified except its tolerationSeconds",
                 id="toleration-changed"),
    pytest.param(GATED, setter("spec.schedulingGates", [{"name": "a"}, {"name": "c"}]), "spec.schedulingGates[1].name",
                 "Forbidden: only deletion is allowed, but found new scheduling gate 'c'", id="gate-added"),
    pytest.param({"terminationGracePeriodSeconds": 10}, setter("spec.terminationGracePeriodSeconds", 1), "spec",
                 "spec.terminationGracePeriodSeconds", id="grace"),
    pytest.param({"nodeSelector": {"a": "1"}, **GATED}, setter("spec.nodeSelector", {"a": "2"}), "spec.nodeSelector",
                 "only additions to spec.nodeSelector are allowed (no mutations or deletions)", id="gated-selector"),
    pytest.param({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": REQUIRED}},
                  **GATED},
                 setter("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                        [{"matchExpressions": []}, {"matchFields": []}]),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                 "no additions/deletions to non-empty NodeSelectorTerms list are allowed", id="gated-terms-added"),
    pytest.param({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": REQUIRED}},
                  **GATED},
                 setter("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                        [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]),
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]",
                 "only additions are allowed (no mutations or deletions)", id="gated-expression-changed"),
    pytest.param({"nodeName": "n1"}, setter("metadata.annotations", {podannotations.MIRROR_ANNOTATION: "x"}),
                 f"metadata.annotations[{podannotations.MIRROR_ANNOTATION}]",
                 "Forbidden: may not add mirror pod annotation", id="mirror-added"),
    pytest.param({}, setter("metadata.annotations", {podannotations.APPARMOR_PREFIX + "c": "runtime/default"}),
                 f"metadata.annotations[{podannotations.APPARMOR_PREFIX}c]",
                 "Forbidden: may not add AppArmor annotations", id="apparmor-added"),
])
def test_what_an_update_may_not_change(spec, change, field, words):
    old = created(**spec)
    kept = copy.deepcopy(old)
    with pytest.raises(errors.Invalid) as e:
        update(old, change)
    assert [fe.path for fe in e.value.errors] == [field]
    assert words in e.value.errors[0].message, e.value.errors[0].message
    assert old == kept


def test_the_refusal_reads_as_kube_apiservers_and_shows_what_differs():
    with pytest.raises(errors.Invalid) as e:
        update(created(), drop_account)
    assert str(e.value) == ('Pod "p" is invalid: spec: ' + NOT_UPDATABLE + '  - spec.serviceAccountName: "default"\n'
                            "  + spec.serviceAccountName: <unset>")


def test_an_update_keeps_the_account_under_both_names_and_defaults_what_it_leaves_out():
    old = created(serviceAccountName="default")
    new = update(old, lambda p: [p["spec"].pop(k) for k in ("serviceAccountName", "restartPolicy", "schedulerName")])
    assert (new["spec"]["serviceAccountName"], new["spec"]["serviceAccount"]) == ("default", "default")
    assert (new["spec"]["restartPolicy"], new["spec"]["schedulerName"]) == ("Always", "default-scheduler")


@pytest.mark.parametrize("image, policy", [
    ("busybox", "Always"), ("busybox:latest", "Always"), ("busybox:1.36", "IfNotPresent"),
    ("registry:5000/busybox", "Always"), ("busybox@sha256:00", "IfNotPresent"), (None, "IfNotPresent"),
])
def test_the_default_pull_policy_compared(image, policy):
    assert podupdate.canonical_spec({"containers": [{"name": "c", "image": image}]})["containers"][0][
        "imagePullPolicy"] == policy


@pytest.mark.parametrize("spec, field, words", [
    pytest.param({"nodeName": "n1", "schedulingGates": [{"name": "a"}]}, "spec.nodeName",
                 "Forbidden: cannot be set until all schedulingGates have been cleared", id="gated-with-node"),
    pytest.param({"ephemeralContainers": [{"name": "debug", "image": "busybox"}]}, "spec.ephemeralContainers",
                 "Forbidden: cannot be set on create", id="ephemeral-containers"),
])
def test_what_a_pod_may_not_be_created_with(spec, field, words):
    with pytest.raises(errors.Invalid) as e:
        created(**spec)
    assert [(fe.path, fe.message) for fe in e.value.errors] == [(field, words)]


def test_a_pod_may_be_created_on_a_node_or_gated():
    assert created(nodeName="n1")["spec"]["nodeName"] == "n1"
    assert created(schedulingGates=[{"name": "a"}])["spec"]["schedulingGates"] == [{"name": "a"}]
