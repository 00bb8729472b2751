"""JobTemplate admission: the spec is a vcjob JobSpec, so it gets vcjob defaults and the vcjob CREATE rules
(queue check included) on CREATE and on UPDATE, and no update restrictions beyond them."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from vclite.admission import admit
from vclite.api import kinds
from vclite.lib import errors

from . import views

Op = admit.Operation
Obj = dict[str, Any]


def template(name: str = "a", api_version: str = "flow.volcano.sh/v1alpha1", **spec: Any) -> Obj:
    """The JobTemplate of Volcano's example/jobflow/JobTemplate.yaml, with overrides."""
    base: Obj = {
        "minAvailable": 1, "schedulerName": "volcano", "queue": "default",
        "tasks": [{"replicas": 1, "name": "default-nginx", "template": {"metadata": {"name": "web"}, "spec": {
            "containers": [{"image": "nginx:1.14.2", "command": ["sh", "-c", "sleep 10s"],
                            "imagePullPolicy": "IfNotPresent", "name": "nginx", "resources": {"requests": {"cpu": "1"}}}],
            "restartPolicy": "OnFailure"}}}],
    }
    return {"apiVersion": api_version, "kind": "JobTemplate", "metadata": {"name": name, "namespace": "default"},
            "spec": base | spec}


def bare_task(**kw: Any) -> Obj:
    return {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "command": ["true"]}]}}, **kw}


VIEW = views.default_view(views.queue("closed", "Closed"), views.queue("other"))


def refusal(op: Op, new: Obj, old: Obj | None = None, **kw: Any) -> list[str]:
    try:
        admit.admit(op, kinds.JOBTEMPLATE, new, old, VIEW, **kw)
    except errors.Invalid as e:
        return [str(fe) for fe in e.errors]
    return []


@pytest.mark.parametrize("op", [pytest.param(Op.CREATE, id="create"), pytest.param(Op.UPDATE, id="update")])
def test_only_the_crd_defaults_are_stored(op: Op) -> None:
    # as on Volcano (no JobTemplate webhook): the vcjob defaults are made when a vcjob is created,
    # after a flow's patch.jobSpec (which may change replicas, and so minAvailable)
    obj = template(tasks=[bare_task()])
    for key in ("minAvailable", "schedulerName", "queue", "maxRetry"):
        obj["spec"].pop(key, None)
    out = admit.admit(op, kinds.JOBTEMPLATE, obj, template() if op is Op.UPDATE else None, VIEW)
    assert out["spec"] == obj["spec"] | {"queue": "default", "maxRetry": 3}
    assert out["spec"]["tasks"] == [bare_task()]


def test_rules_apply_to_the_spec_as_a_vcjob_made_from_it_would_be() -> None:
    # no minAvailable stored, yet a job minAvailable above the replicas is still refused
    obj = template(tasks=[bare_task()])
    obj["spec"]["minAvailable"] = 5
    assert any("minAvailable" in e for e in refusal(Op.CREATE, obj, None))


ACCEPT_CASES = [
    pytest.param(Op.CREATE, template(), None, {}, id="volcano-example"),
    pytest.param(Op.CREATE, template(api_version="batch.volcano.sh/v1alpha1"), None, {}, id="old-apiversion"),
    pytest.param(Op.UPDATE, template(queue="other"), template(), {}, id="update-queue"),
    pytest.param(Op.UPDATE, template(tasks=[bare_task(name="x"), bare_task(name="y")]), template(), {},
                 id="update-tasks-added"),
    pytest.param(Op.UPDATE, template(maxRetry=7), template(), {}, id="update-other-fields"),
    pytest.param(Op.CREATE, template(tasks=[{"name": "t", "replicas": 1, "template": {"spec": {
        "containers": [{"name": "c", "image": "nginx"}]}}}]), None, {"require_command": False},
        id="no-command-when-switched-off"),
]


@pytest.mark.parametrize("op, new, old, kwargs", ACCEPT_CASES)
def test_accepts(op: Op, new: Obj, old: Obj | None, kwargs: dict[str, Any]) -> None:
    assert refusal(op, new, old, **kwargs) == []


REJECT_CASES = [
    pytest.param(Op.CREATE, template(tasks=[]), None, "spec.tasks: No task specified in job spec", id="no-tasks"),
    pytest.param(Op.CREATE, template(tasks=[bare_task(name="t"), bare_task(name="t")], minAvailable=2), None,
                 "spec.tasks[1].name: duplicated task name t", id="duplicate-task"),
    pytest.param(Op.UPDATE, template(minAvailable=5), template(),
                 "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks",
                 id="update-checked-with-create-rules"),
    pytest.param(Op.CREATE, template(tasks=[bare_task(name="t", minAvailable=3)]), None,
                 "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: t, job: a",
                 id="template-name-stands-for-job-name"),
    pytest.param(Op.CREATE, template(tasks=[{"name": "t", "replicas": 1, "template": {"spec": {
        "containers": [{"name": "c", "image": "nginx"}]}}}]), None,
        "spec.tasks[0].template.spec.containers[0].command: container \"c\" has no command: vclite runs pods as local "
        "processes and cannot run an image's default entrypoint", id="container-no-command"),
    pytest.param(Op.CREATE, template(name="t" * 60), None,
                 "spec.tasks[0].name: create pod with name " + "t" * 60 + "-default-nginx-0 validate failed "
                 "[name part must be no more than 63 characters]", id="pod-name-too-long"),
    pytest.param(Op.CREATE, template(policies=[{"event": "PodFailed", "exitCode": 1, "action": "AbortJob"}]), None,
                 "spec.policies[0]: must not specify event and exitCode simultaneously", id="policy-rules"),
    pytest.param(Op.CREATE, template(runningEstimate="xyz"), None,
                 'spec.runningEstimate: Invalid value: "xyz": time: invalid duration "xyz": must be a duration such '
                 'as "90s", "30m" or "1h30m"', id="running-estimate-not-a-duration"),
]


@pytest.mark.parametrize("op, new, old, expected", REJECT_CASES)
def test_rejects(op: Op, new: Obj, old: Obj | None, expected: str) -> None:
    assert expected in refusal(op, new, old)


def test_input_is_not_changed() -> None:
    obj = template(tasks=[bare_task()])
    original = copy.deepcopy(obj)
    admit.admit(Op.CREATE, kinds.JOBTEMPLATE, obj, None, VIEW)
    assert obj == original


@pytest.mark.parametrize("op, new, old", [
    pytest.param(Op.CREATE, template(queue="ghost"), None, id="queue-missing"),
    pytest.param(Op.CREATE, template(queue="closed"), None, id="queue-closed"),
    pytest.param(Op.UPDATE, template(queue="closed"), template(), id="update-to-closed-queue"),
])
def test_the_queues_live_state_is_not_looked_up(op: Op, new: Obj, old: Obj | None) -> None:
    """As on Volcano (no JobTemplate webhook): a template may be applied before its queue, or outlive a
    queue's closing; the vcjob made from it is checked when it is created."""
    assert refusal(op, new, old) == []


@pytest.mark.parametrize("spec, refused", [
    pytest.param({"priorityClassName": "{{item}}"}, [], id="class-from-an-item"),
    pytest.param({"priorityClassName": "{{ params.cls }}"}, [], id="class-from-a-parameter"),
    pytest.param({"priorityClassName": "Bad_Class"}, ["spec.priorityClassName: Invalid value"],
                 id="a-plain-invalid-name-still-refused"),
    pytest.param({"priorityClassName": "{{name}}"}, ["spec.priorityClassName: Invalid value"],
                 id="other-braces-are-a-name"),
    pytest.param({"runningEstimate": "{{params.estimate}}"}, [], id="estimate-from-a-parameter"),
])
def test_a_field_holding_a_flow_placeholder_is_checked_in_the_vcjob_a_flow_makes(spec: Obj, refused: list[str]) -> None:
    got = refusal(Op.CREATE, template(**spec))
    assert len(got) == len(refused) and all(g.startswith(r) for g, r in zip(got, refused)), got
