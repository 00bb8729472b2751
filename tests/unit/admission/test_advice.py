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


@pytest.mark.parametrize("command, args, paths", [
    pytest.param(["sh", "-c", "echo hi > /dev/termination-log"], None,
                 ["spec.tasks[0].template.spec.containers[0].command[2]"], id="command-writes-the-default"),
    pytest.param(["sh", "-c"], ["echo hi >> /dev/termination-log"],
                 ["spec.tasks[0].template.spec.containers[0].args[0]"], id="args-write-the-default"),
    pytest.param(["sh", "-c", 'echo hi > "${TERMINATION_MESSAGE_PATH:-/dev/termination-log}"'], None, [],
                 id="portable"),
])
def test_a_command_writing_the_default_termination_path_by_name(command, args, paths):
    c = {"name": "c", "command": command, **({"args": args} if args else {})}
    found = advice.advice_in(_job({"restartPolicy": "Never", "containers": [c]}))
    assert [p for p, _ in found] == paths
    assert all("${TERMINATION_MESSAGE_PATH:-/dev/termination-log}" in m for _, m in found)


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


def test_no_termination_path_advice_where_containers_see_their_paths():
    """Where the host gives a container its own view (executor/mountview.py), /dev/termination-log and a path of
    the container's own are where its message goes: nothing to warn about; the question is asked only then."""
    asked = []
    containers = [{"name": "a", "command": ["sh", "-c", "echo 1 > /dev/termination-log"]},
                  {"name": "b", "terminationMessagePath": "/out/result"}, {"name": "c", "command": ["true"]}]
    assert advice.advice_in(_job({"restartPolicy": "Never", "containers": containers}),
                            lambda: asked.append(1) or True) == []
    assert len(asked) == 2
    advice.advice_in(_job({"restartPolicy": "Never", "containers": [containers[2]]}), lambda: asked.append(1) or True)
    assert len(asked) == 2


def _flow(name, **dep):
    return {"name": name, **({"dependsOn": dep} if dep else {})}


PROBE = {"taskStatusList": [{"taskName": "main", "phase": "Running"}]}


@pytest.mark.parametrize("flows, paths", [
    pytest.param([_flow("a", probe=PROBE)], ["spec.flows[0].dependsOn.probe"], id="probe-without-targets"),
    pytest.param([_flow("a", strategy="any")], ["spec.flows[0].dependsOn.strategy"], id="strategy-without-targets"),
    pytest.param([_flow("a", targets=[], probe=PROBE, strategy="all")],
                 ["spec.flows[0].dependsOn.probe", "spec.flows[0].dependsOn.strategy"], id="empty-targets"),
    pytest.param([_flow("a"), _flow("b", targets=["a"], probe=PROBE, strategy="any")], [], id="with-targets"),
    pytest.param([_flow("a", expression="b.Completed"), "x"], [], id="expression-only"),
    # with an expression, a probe or a strategy is an admission error, not this warning (it is not true)
    pytest.param([_flow("a", expression="b.Completed", probe=PROBE, strategy="any")], [], id="expression-and-probe"),
])
def test_jobflow_dependency_fields_without_targets(flows, paths):
    found = advice.advice_in({"kind": "JobFlow", "spec": {"flows": flows}})
    assert [p for p, _ in found] == paths
    assert all("there are none" in m for _, m in found)


@pytest.mark.parametrize("annotations, warned", [
    pytest.param({"flow.volcano.sh/suspend": "yes"}, True, id="yes"),
    pytest.param({"flow.volcano.sh/suspend": "1"}, True, id="one"),
    pytest.param({"flow.volcano.sh/suspend": "true"}, False, id="true"),
    pytest.param({"flow.volcano.sh/suspend": "False"}, False, id="false"),
    pytest.param({}, False, id="none"),
])
def test_a_suspend_annotation_that_does_not_suspend(annotations, warned):
    found = advice.advice_in({"kind": "JobFlow", "metadata": {"name": "f", "annotations": annotations},
                              "spec": {"flows": [{"name": "a"}]}})
    assert found == ([("metadata.annotations[flow.volcano.sh/suspend]",
                       f'"{annotations.get("flow.volcano.sh/suspend")}" is not "true": the JobFlow is not suspended '
                       '(only "true" suspends it)')] if warned else [])


TEMPLATES = {"ps": ["ps"], "pair": ["ps", "worker"], "none": []}


@pytest.mark.parametrize("targets, probe, paths", [
    pytest.param(["pair"], {"taskStatusList": [{"taskName": "worker"}]}, [], id="known-task"),
    pytest.param(["ps"], {"httpGetList": [{"taskName": "wroker", "port": 80}]},
                 ["spec.flows[1].dependsOn.probe.httpGetList[0].taskName"], id="typo"),
    pytest.param(["ps", "pair"], {"tcpSocketList": [{"taskName": "worker", "port": 80}]}, [],
                 id="a-task-of-any-target"),
    pytest.param(["ps", "unknown"], {"tcpSocketList": [{"taskName": "nope", "port": 80}]}, [],
                 id="a-template-not-in-the-documents-may-have-it"),
    pytest.param(["none"], {"taskStatusList": [{"taskName": "x"}, {"phase": "Running"}]},
                 ["spec.flows[1].dependsOn.probe.taskStatusList[0].taskName"], id="template-without-tasks"),
])
def test_probe_entries_naming_no_task_of_their_targets(targets, probe, paths):
    jobflow = {"kind": "JobFlow", "spec": {"flows": [_flow("first"), _flow("b", targets=targets, probe=probe)]}}
    found = advice.probe_task_advice(jobflow, TEMPLATES.get)
    assert [p for p, _ in found] == paths
    assert all("never applies" in m for _, m in found)


@pytest.mark.parametrize("kind, annotation, warned", [
    pytest.param("JobTemplate", "worker", False, id="known-task"),
    pytest.param("JobTemplate", "wroker", True, id="no-such-task"),
    pytest.param("JobTemplate", None, False, id="no-annotation"),
    pytest.param("Job", "wroker", False, id="a-vcjob-is-not-read-for-it"),
])
def test_output_task_annotation_naming_no_task(kind, annotation, warned):
    obj = _job({"restartPolicy": "Never"}, kind=kind)
    obj["spec"]["tasks"][0]["name"] = "worker"
    if annotation is not None:
        obj["metadata"] = {"annotations": {"flow.volcano.sh/output-task": annotation}}
    found = [(p, m) for p, m in advice.advice_in(obj) if "output-task" in p]
    assert bool(found) is warned
    if warned:
        assert found[0][1].startswith("no task \"wroker\" (tasks: worker)")


def test_braces_that_are_not_flow_placeholders_are_left_alone_with_a_warning():
    template = {"kind": "JobTemplate", "spec": {"tasks": [{"name": "t", "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"env": [{"value": "Hi {{name}} {{params.x}} {{ param.x }}"}]}]}}}]}}
    path = "spec.tasks[0].template.spec.containers[0].env[0].value"
    assert advice.advice_in(template) == [
        (path, "{{name}} is not a flow placeholder (params, outputs, item, iteration, outcomes, workflow): it is "
               "left as it is"),
        (path, "{{param.x}} is not a flow placeholder (params, outputs, item, iteration, outcomes, workflow): it is "
               "left as it is")]
    jobflow = {"kind": "JobFlow", "spec": {"flows": [{"name": "a", "patch": {"jobSpec": {"queue": "{{q}}"}}}]}}
    assert [p for p, _ in advice.advice_in(jobflow)] == ["spec.flows[0].patch.jobSpec.queue"]


@pytest.mark.parametrize("kind, plugins, expected", [
    pytest.param("Job", {"svc": [], "ssh": [], "env": ["anything"]}, [], id="no-arguments"),
    pytest.param("Job", {"tensorflow": ["--port=5000", "--worker=w", "-ps", "p"]}, [], id="valid-flags"),
    pytest.param("Job", {"tensorflow": ["--port=5000", "--workers=w"]},
                 [("spec.plugins.tensorflow[1]", "flag provided but not defined: -workers: Volcano's tensorflow "
                   "plugin ignores this argument and every one after it (its flags: --ps, --worker, --chief, "
                   "--evaluator, --port)")], id="unknown-flag"),
    pytest.param("JobTemplate", {"ssh": ["--no-root", "--ssh-key-file-path=/home/u/.ssh"]},
                 [("spec.plugins.ssh[0]", "flag provided but not defined: -no-root")], id="flag-volcano-dropped"),
    pytest.param("Job", {"pytorch": ["--master=m", "--port", "abc"]},
                 [("spec.plugins.pytorch[1]", "invalid value 'abc' for flag -port")], id="bad-integer"),
    pytest.param("Job", {"mpi": ["--master=m", "--port"]},
                 [("spec.plugins.mpi[1]", "flag needs an argument: -port")], id="missing-value"),
    pytest.param("Job", {"svc": ["--publish-not-ready-addresses=maybe"]},
                 [("spec.plugins.svc[0]", "invalid value 'maybe' for flag -publish-not-ready-addresses")],
                 id="bad-boolean"),
    pytest.param("JobTemplate", {"pytorch": ["--port={{params.port}}"]}, [], id="placeholder-known-later"),
    pytest.param("Job", {"pytorch": "--port=1", "bogus": ["-x"]}, [], id="other-problems-said-elsewhere"),
])
def test_plugin_arguments_the_plugin_cannot_parse(kind, plugins, expected):
    """Volcano's job plugins parse their arguments with Go's flag package (ContinueOnError) and only log an
    error: the argument that fails and every one after it are silently ignored."""
    obj = {"kind": kind, "spec": {"plugins": plugins, "tasks": []}}
    found = advice.advice_in(obj)
    assert [p for p, _ in found] == [p for p, _ in expected]
    assert all(m.startswith(want) for (_, m), (_, want) in zip(found, expected)), found


@pytest.mark.parametrize("kind, spec, pod_spec, paths", [
    pytest.param("Job", {"schedulerName": "kube-scheduler"}, {"restartPolicy": "Never"}, ["spec.schedulerName"],
                 id="job-level"),
    pytest.param("JobTemplate", {}, {"restartPolicy": "Never", "schedulerName": "default-scheduler"},
                 ["spec.tasks[0].template.spec.schedulerName"], id="task-template-level"),
    pytest.param("Job", {"schedulerName": "volcano"}, {"restartPolicy": "Never", "schedulerName": "volcano"}, [],
                 id="volcano"),
    pytest.param("Job", {"schedulerName": ""}, {"restartPolicy": "Never"}, [], id="empty-is-defaulted-to-volcano"),
    pytest.param("JobTemplate", {"schedulerName": "{{params.s}}"}, {"restartPolicy": "Never"}, [],
                 id="a-flow-placeholder-is-known-later"),
])
def test_a_scheduler_other_than_volcano_never_places_the_pods_here(kind, spec, pod_spec, paths):
    obj = _job(pod_spec, kind=kind)
    obj["spec"].update(spec)
    found = [(p, m) for p, m in advice.advice_in(obj) if p.endswith("schedulerName")]
    assert [p for p, _ in found] == paths
    for _, message in found:
        assert "runs Volcano's scheduler only" in message and "stays Pending" in message


def _counted(min_success, *replicas):
    return {"kind": "Job", "spec": {"minSuccess": min_success, "tasks": [
        {"name": f"t{i}", **({"replicas": r} if r is not None else {}),
         "template": {"spec": {"restartPolicy": "Never"}}} for i, r in enumerate(replicas)]}}


@pytest.mark.parametrize("obj, warned", [
    pytest.param(_counted(5, 2, 2), True, id="more-than-all-replicas"),
    pytest.param(_counted(4, 2, 2), False, id="exactly-all"),
    pytest.param(_counted(2, None), True, id="replicas-default-1"),
    pytest.param(_counted("{{params.n}}", 1), False, id="a-placeholder-is-not-judged"),
    pytest.param(_counted(3, "two"), False, id="mistyped-replicas-are-admissions"),
])
def test_a_min_success_that_can_never_be_reached(obj, warned):
    found = [m for p, m in advice.advice_in(obj) if p == "spec.minSuccess"]
    assert bool(found) is warned
    if warned:
        assert "can never be reached" in found[0]


@pytest.mark.parametrize("flow, text, expected", [
    pytest.param("a", "{{workflow.status}}", ['JobTemplate "a": spec.queue: {{workflow.status}} is left as it is: '
                                              'flow "a" is not the exit handler (spec.onExit)'], id="not-the-handler"),
    pytest.param("h", "{{workflow.status}} {{workflow.failures.0.name}}", [], id="the-handler"),
    pytest.param("h", "{{workflow.name}}", ['JobTemplate "h": spec.queue: {{workflow.name}} is left as it is: '
                                            'workflow has no field "name" (status, failures)'], id="argo-field-not-here"),
    pytest.param("a", "{{outcomes.h}}", ['JobTemplate "a": spec.queue: {{outcomes.h}} is left as it is: '
                                         'flow "a" is not the exit handler (spec.onExit)'], id="outcomes-elsewhere"),
])
def test_a_templates_exit_handler_placeholders_elsewhere_are_left_with_a_warning(flow, text, expected):
    jobflow = {"spec": {"onExit": "h", "flows": [{"name": "a"}, {"name": "h"}]}}
    templates = {flow: {"queue": text}}
    assert [msg for _, msg in advice.template_context_advice(jobflow, templates.get)] == expected
