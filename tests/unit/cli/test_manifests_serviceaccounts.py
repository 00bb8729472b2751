"""`vcctl validate`/`run` and ServiceAccounts: a vcjob or JobTemplate whose pods would name a
ServiceAccount no file defines in its namespace is refused with its file, line and field
(kube-apiserver's ServiceAccount admission would refuse the pods); `default` always exists."""
import pytest

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
    _, problems = manifests.load_and_validate([str(path)])
    got = [(p.field, p.line) for p in problems]
    assert got == [(f, line + (len(docs[0].splitlines()) + 1 if len(docs) > 1 else 0)) for f, line, _ in want], \
        problems
    for p, (_, _, who) in zip(problems, want):
        assert f"error looking up service account {who}" in p.message and p.file == str(path)


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
