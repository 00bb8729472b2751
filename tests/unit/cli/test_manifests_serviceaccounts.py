"""`vcctl validate`/`run` and ServiceAccounts: pods (of a vcjob, a JobTemplate, a bare Pod…) that name a
ServiceAccount no file defines in its namespace are not refused on the embedded control plane — it makes the
account for the run, standing for the one the cluster has — but `warnings` says so at the field (on a
cluster kube-apiserver's ServiceAccount admission refuses them); `default` always exists."""
import pytest

from vclite.apiserver import standins
from vclite.cli import manifests

SA = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ci, namespace: NS}\n"


def job(account=None, key="serviceAccountName", kind="Job", api="batch.volcano.sh/v1alpha1", ns="default"):
    lines = [f"apiVersion: {api}", f"kind: {kind}", f"metadata: {{name: j, namespace: {ns}}}", "spec:",
             "  tasks:", "  - name: a", "    replicas: 1", "    template:", "      spec:"]
    if account:
        lines.append(f"        {key}: {account}")
    lines += ["        restartPolicy: Never", '        containers: [{name: c, image: busybox, command: ["true"]}]']
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("docs, want", [
    pytest.param([job()], [], id="none-named"),
    pytest.param([job("default")], [], id="default"),
    pytest.param([SA.replace("NS", "default"), job("ci")], [], id="defined"),
    pytest.param([job("ci")], [("spec.tasks[0].template.spec.serviceAccountName", 10, "default/ci")], id="missing"),
    pytest.param([SA.replace("NS", "other"), job("ci")],
                 [("spec.tasks[0].template.spec.serviceAccountName", 10, "default/ci")], id="another-namespace"),
    pytest.param([job("ci", key="serviceAccount")], [("spec.tasks[0].template.spec.serviceAccount", 10, "default/ci")],
                 id="deprecated-field"),
    pytest.param([job("ci", kind="JobTemplate", api="flow.volcano.sh/v1alpha1", ns="team")],
                 [("spec.tasks[0].template.spec.serviceAccountName", 10, "team/ci")], id="template"),
])
def test_service_accounts_the_pods_would_name(tmp_path, docs, want):
    path = tmp_path / "m.yaml"
    path.write_text("---\n".join(docs))
    loaded, problems = manifests.load_and_validate([str(path)])
    assert problems == []   # (the embedded control plane makes the account: the pods are not refused)
    warned = [w for w in manifests.warnings(loaded) if "ServiceAccount" in w.message]
    got = [(w.field, w.line) for w in warned]
    assert got == [(f, line + (len(docs[0].splitlines()) + 1 if len(docs) > 1 else 0)) for f, line, _ in want], \
        warned
    for w, (_, _, who) in zip(warned, want):
        ns, name = who.split("/")
        assert f'ServiceAccount "{name}" is not defined in the files given' in w.message, w.message
        assert f"in namespace {ns} for the run" in w.message and w.file == str(path)


FLOW_PATCHING_THE_ACCOUNT = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
  - name: j
    patch:
      jobSpec:
        tasks:
        - name: a
          template:
            spec:
              serviceAccountName: builder
"""


def test_a_jobflow_patch_giving_only_the_account_of_its_pods_is_warned_and_the_account_made(tmp_path):
    """A patch of a task's pod spec without containers still names the account its pods will have: it was
    missed, so `vcctl run` neither warned nor made it, and the vcjob's pods were refused until the timeout."""
    path = tmp_path / "flow.yaml"
    path.write_text(job(kind="JobTemplate", api="flow.volcano.sh/v1alpha1")
                    + "---\n" + FLOW_PATCHING_THE_ACCOUNT)
    loaded, problems = manifests.load_and_validate([str(path)])
    assert problems == []
    [warning] = [w for w in manifests.warnings(loaded) if "ServiceAccount" in w.message]
    field = "spec.flows[0].patch.jobSpec.tasks[0].template.spec.serviceAccountName"
    assert (warning.line, warning.field) == (25, field)
    assert 'ServiceAccount "builder" is not defined in the files given' in warning.message


FLOW_WITH_A_PARAMETER = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  arguments: {parameters: [{name: sa, value: builder}]}
  flows:
  - name: j
"""


@pytest.mark.parametrize("template_account, patch_account, cli, want", [
    pytest.param("'{{params.sa}}'", None, {}, [(10, "builder")], id="the-templates-parameter"),
    pytest.param("'{{params.sa}}'", None, {"sa": "ci"}, [(10, "ci")], id="set-with-p"),
    pytest.param(None, "'{{params.sa}}-bot'", {}, [(20, "builder-bot")], id="the-patchs-parameter"),
    pytest.param("'{{params.nope}}'", None, {}, [], id="an-undeclared-parameter-is-the-flows-problem"),
    pytest.param("'{{item}}'", None, {}, [], id="known-only-at-run-time"),
])
def test_an_account_named_by_a_parameter_is_the_parameters_value(tmp_path, template_account, patch_account, cli,
                                                                 want):
    """`serviceAccountName: "{{params.sa}}"` names the account the JobFlow's parameter (or `-p`) gives: it was
    skipped as a placeholder, so `vcctl run` made no account and the pods were refused until the timeout (or
    forever without one)."""
    flow = FLOW_WITH_A_PARAMETER
    if patch_account:
        flow += ("    patch: {jobSpec: {tasks: [{name: a, template: {spec: {serviceAccountName: "
                 f"{patch_account}}}}}}}]}}}}\n")
    path = tmp_path / "flow.yaml"
    path.write_text(job(template_account, kind="JobTemplate", api="flow.volcano.sh/v1alpha1") + "---\n" + flow)
    loaded, problems = manifests.load_and_validate([str(path)], params=cli)
    assert [p.message for p in problems] == ([] if "nope" not in (template_account or "") else [
        'JobTemplate "j": spec.tasks[0].template.spec.serviceAccountName: unknown parameter "nope" '
        '(spec.arguments.parameters declares: sa)'])
    warned = [w for w in manifests.warnings(loaded) if "ServiceAccount" in w.message]
    assert [(w.line, w.message.split('"')[1]) for w in warned] == want, warned


def test_a_bare_pod_naming_an_undefined_account_runs_and_is_warned_at_its_field(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  schedulerName: volcano\n"
                    "  serviceAccountName: reader\n  restartPolicy: Never\n"
                    '  containers: [{name: c, image: busybox, command: ["true"]}]\n')
    loaded, problems = manifests.load_and_validate([str(path)])
    assert problems == []
    [warning] = [w for w in manifests.warnings(loaded) if "ServiceAccount" in w.message]
    assert (warning.line, warning.field) == (6, "spec.serviceAccountName")


def test_a_file_may_define_the_default_account_and_a_node_with_a_bad_capacity_is_refused_at_its_line(tmp_path):
    good = tmp_path / "sa.yaml"
    good.write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default}\n"
                    "imagePullSecrets: [{name: regcred}]\n")
    _, problems = manifests.load_and_validate([str(good)])
    assert problems == []
    bad = tmp_path / "node.yaml"
    bad.write_text('apiVersion: v1\nkind: Node\nmetadata: {name: n9}\nstatus:\n  capacity:\n    cpu: "-4"\n')
    _, [problem] = manifests.load_and_validate([str(bad)])
    assert (problem.line, problem.field) == (6, "status.capacity[cpu]")
    assert "must be greater than or equal to 0" in problem.message


LOOPING_FLOW = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
  - name: pick
  - name: j
    withItems: [trainer, evaluator]
"""


@pytest.mark.parametrize("template_account, patch_account, want", [
    pytest.param("'sa-{{item}}'", None, [(10, "sa-{{item}}")], id="an-item"),
    pytest.param("'{{outputs.pick}}'", None, [(10, "{{outputs.pick}}")], id="an-output"),
    pytest.param(None, "'{{item}}-bot'", [(33, "{{item}}-bot")], id="the-patchs-item"),
    pytest.param("'{{iteration}}'", None, [], id="not-a-placeholder-of-this-flow-left-as-written"),
])
def test_an_account_named_only_when_the_vcjob_is_made_is_warned_at_its_field(tmp_path, template_account,
                                                                            patch_account, want):
    """The embedded control plane makes it when it creates the vcjob (apiserver/standins.py): said before the run."""
    flow = LOOPING_FLOW
    if patch_account:
        flow += ("    patch: {jobSpec: {tasks: [{name: a, template: {spec: {serviceAccountName: "
                 f"{patch_account}}}}}}}]}}}}\n")
    path = tmp_path / "flow.yaml"
    path.write_text(job(template_account, kind="JobTemplate", api="flow.volcano.sh/v1alpha1") + "---\n"
                    + job(kind="JobTemplate", api="flow.volcano.sh/v1alpha1").replace("name: j,", "name: pick,")
                    + "---\n" + flow)
    loaded, problems = manifests.load_and_validate([str(path)])
    assert problems == []
    warned = [w for w in manifests.warnings(loaded) if "ServiceAccount" in w.message]
    assert [(w.line, w.message.split('"')[1]) for w in warned] == want, warned
    for w in warned:
        assert "is named only when the JobFlow makes the vcjob: the embedded control plane then makes each " \
               "account it names that namespace default lacks, for the run" in w.message


@pytest.mark.parametrize("patch_account, name, want", [
    pytest.param(None, "sa-trainer", (10, "JobTemplate/j", "spec.tasks[0].template.spec.serviceAccountName"),
                 id="the-templates-field"),
    pytest.param("'{{item}}-bot'", "trainer-bot",
                 (22, "JobFlow/f", "spec.flows[1].patch.jobSpec.tasks[0].template.spec.serviceAccountName"),
                 id="the-patch-wins"),
    pytest.param(None, "other", (0, "Job/f-j-0", "spec.tasks[0].template.spec.serviceAccountName"),
                 id="no-field-could-write-it"),
])
def test_an_account_made_during_the_run_is_warned_at_the_field_that_wrote_its_name(tmp_path, patch_account, name,
                                                                                   want):
    flow = LOOPING_FLOW
    if patch_account:
        flow += ("    patch: {jobSpec: {tasks: [{name: a, template: {spec: {serviceAccountName: "
                 f"{patch_account}}}}}}}]}}}}\n")
    path = tmp_path / "flow.yaml"
    path.write_text(job("'sa-{{item}}'", kind="JobTemplate", api="flow.volcano.sh/v1alpha1") + "---\n" + flow)
    loaded = manifests.load([str(path)])
    made = standins.Made({"metadata": {"name": "f-j-0", "namespace": "default", "labels": {
        "volcano.sh/createdByJobFlow": "default.f", "volcano.sh/createdByJobTemplate": "default.j"}}},
        "spec.tasks[0].template.spec.serviceAccountName", name)
    w = manifests.made_account_warning(loaded, made)
    assert (w.line, w.what, w.field) == want
    assert w.message == (f'ServiceAccount "{name}" is not defined in the files given: the embedded control plane '
                         "made one in namespace default for the run when it created vcjob default/f-j-0 (on a "
                         "cluster it must exist, or its pods are refused)")
