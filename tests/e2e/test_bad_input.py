"""Bad input gets one clear message naming file, line and field, exit 2, and runs nothing."""
import pytest

TEMPLATE = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  queue: {queue}
  tasks:
    - name: main
      replicas: {replicas}
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
{command}
"""
GOOD_COMMAND = '              command: ["sh", "-c", "touch $VC_POD_DIR/../../ran-{name}"]'


def template(name, replicas=1, queue="default", command=None):
    cmd = GOOD_COMMAND.format(name=name) if command is None else command
    return "---" + TEMPLATE.format(name=name, replicas=replicas, queue=queue, command=cmd)


def flow(flows):
    return "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\nspec:\n  flows:\n" + flows


CASES = [
    pytest.param(flow("    - name: a\n      dependsOn: {targets: [b]}\n    - name: b\n      dependsOn: {targets: [a]}\n")
                 + template("a") + template("b"), "jobflow Flow is not DAG", "spec.flows", id="cycle"),
    pytest.param(flow("    - name: a\n      dependsOn: {targets: [x]}\n") + template("a"),
                 "vertex is not defined: x", "spec.flows[0].dependsOn.targets[0]", id="unknown-target"),
    pytest.param(flow("    - name: a\n    - name: a\n") + template("a"), "must be unique", "spec.flows[1].name",
                 id="duplicate-flow-name"),
    pytest.param(flow("    - name: a\n    - name: b\n") + template("a"), 'JobTemplate "b" not found',
                 "spec.flows[1].name", id="missing-template"),
    pytest.param(flow("    - name: a\n    - name: b\n      dependsOn: {targets: [‘a’]}\n") + template("a")
                 + template("b"), "quote", "spec.flows[1].dependsOn.targets[0]", id="curly-quotes"),
    pytest.param(flow("    - name: a\n") + template("a", replicas=-1), "replicas", "spec.tasks[0].replicas",
                 id="negative-replicas"),
    pytest.param(flow("    - name: a\n") + template("a", command=""), "no command",
                 "spec.tasks[0].template.spec.containers[0].command", id="no-command"),
    pytest.param(flow("    - name: a\n") + template("a", command='              args: ["-c", "true"]'), "no command",
                 "spec.tasks[0].template.spec.containers[0].command", id="args-without-command"),
    pytest.param("---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: shut}\n"
                 "spec: {weight: 1}\nstatus: {state: Closed}\n" + flow("    - name: a\n") + template("a", queue="shut"),
                 "queue", "spec.queue", id="closed-queue"),
    pytest.param(flow("    - name: a\n") + template("a") + "---\nkind: [unclosed\n", "", "", id="invalid-yaml"),
]


@pytest.mark.parametrize("text, message, field", CASES)
def test_bad_input_is_rejected_before_anything_runs(vcctl, write, tmp_path, text, message, field):
    path = write("bad.yaml", text)
    work = tmp_path / "work"
    r = vcctl("run", "--quiet", "--workdir", work, path)
    assert r.code == 2, r
    assert "bad.yaml:" in r.err, r
    assert message in r.err, r
    assert field in r.err, r
    assert "nothing was run" in r.err
    assert "1 problem(s) found" in r.err, r   # one clear message, no knock-on errors
    assert not list(tmp_path.rglob("ran-*")), "no pod may run when any document is invalid"
    v = vcctl("validate", path)
    assert v.code == 2 and message in v.err, v


def test_validate_lists_every_problem_of_every_file(vcctl, write):
    """Structural problems (unreadable YAML, a document without apiVersion) do not hide the admission
    problems of the documents that could be read, in the same file or another."""
    cycle = write("cycle.yaml", flow("    - name: a\n      dependsOn: {targets: [b]}\n    - name: b\n"
                                     "      dependsOn: {targets: [a]}\n") + template("a") + template("b"))
    broken = write("broken.yaml", "apiVersion: v1\nkind: [oops\n")
    mixed = write("mixed.yaml", "kind: JobTemplate\nmetadata: {name: x}\n" + template("c", replicas=-1))
    v = vcctl("validate", cycle, broken, mixed)
    assert v.code == 2, v
    for expected in ("cycle.yaml:", "jobflow Flow is not DAG", "broken.yaml:3", "invalid YAML",
                     "mixed.yaml:1", "apiVersion: Required value", "mixed.yaml:", "spec.tasks[0].replicas"):
        assert expected in v.err, (expected, v.err)
    assert "4 problem(s) found" in v.err, v.err
