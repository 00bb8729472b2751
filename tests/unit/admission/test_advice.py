"""Warnings for valid manifests that most likely do not mean what they say."""
import pytest

from vclite.admission import advice


def _job(*pod_specs, kind="Job"):
    return {"kind": kind, "spec": {"tasks": [{"name": f"t{i}", "template": {"spec": s}}
                                             for i, s in enumerate(pod_specs)]}}


@pytest.mark.parametrize("obj, paths", [
    pytest.param(_job({"containers": []}), ["spec.tasks[0].template.spec.restartPolicy"], id="unset"),
    pytest.param(_job({"restartPolicy": ""}, {"restartPolicy": "Never"}, kind="JobTemplate"),
                 ["spec.tasks[0].template.spec.restartPolicy"], id="template-empty-and-set"),
    pytest.param(_job({"restartPolicy": "Always"}), [], id="explicit-always-is-meant"),
    pytest.param(_job({"restartPolicy": "OnFailure"}), [], id="on-failure"),
    pytest.param({"kind": "Pod", "spec": {"containers": []}}, [], id="other-kind"),
    pytest.param({"kind": "Job", "spec": {"tasks": "x"}}, [], id="mistyped-tasks"),
    pytest.param({"kind": "Job", "spec": {"tasks": [{"template": "x"}, 5]}}, [], id="mistyped-template"),
])
def test_restart_policy_unset(obj, paths):
    found = advice.advice_in(obj)
    assert [p for p, _ in found] == paths
    assert all(m == advice.RESTART_POLICY_UNSET for _, m in found)


@pytest.mark.parametrize("containers, paths", [
    pytest.param([{"name": "c"}], [], id="unset"),
    pytest.param([{"name": "c", "terminationMessagePath": "/dev/termination-log"}], [], id="kubernetes-default"),
    pytest.param([{"name": "a"}, {"name": "b", "terminationMessagePath": "/out/result"}],
                 ["spec.tasks[0].template.spec.containers[1].terminationMessagePath"], id="custom"),
    pytest.param([{"name": "c", "terminationMessagePath": 5}, "x"], [], id="mistyped-left-to-admission"),
])
def test_custom_termination_message_path(containers, paths):
    found = advice.advice_in(_job({"restartPolicy": "Never", "containers": containers}))
    assert [p for p, _ in found] == paths
    assert all("${TERMINATION_MESSAGE_PATH:-/out/result}" in m for _, m in found)
