"""Bad input gets one clear message naming file, line and field, exit 2, and runs nothing."""
import socket

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


def estimate(text, value="xyz"):
    """`text` with a runningEstimate in its (first) job spec."""
    return text.replace("  minAvailable: 1\n", f"  minAvailable: 1\n  runningEstimate: {value}\n", 1)


def as_vcjob(text):
    """A template() as a standalone vcjob."""
    return text.replace("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate",
                        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job")


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
    pytest.param(flow("    - name: a\n") + template("a").replace("restartPolicy: Never",
                                                                   "restartPolicy: Never\n          priorityClassName: hi"),
                 'PriorityClass "hi" not found', "spec.tasks[0].template.spec.priorityClassName",
                 id="missing-priority-class"),
    pytest.param(flow("    - name: a\n      patch: {jobSpec: {queue: nope}}\n") + template("a"),
                 'the vcjob it makes from JobTemplate "a" would be refused: spec.queue: unable to find job queue',
                 "spec.flows[0].patch.jobSpec.queue", id="patch-makes-an-invalid-vcjob"),
    pytest.param(flow("    - name: a\n    - name: b\n      dependsOn: {targets: [a]}\n")
                 + template("a", command='              command: ["echo", "{{outputs.b}}"]') + template("b"),
                 "jobflow Flow is not DAG (cycle: a -> b -> a)", "spec.flows[0].name", id="cycle-through-a-template"),
    pytest.param(flow("    - name: a\n").replace("spec:\n", "spec:\n  arguments: {parameters: [{name: m, value: '1'}]}\n")
                 + template("a", command='              command: ["echo", "{{params.n}}"]'),
                 'JobTemplate "a": spec.tasks[0].template.spec.containers[0].command[1]: unknown parameter "n"',
                 "spec.flows[0].name", id="template-undeclared-parameter"),
    pytest.param(flow("    - name: a\n      withItems: [{n: 1}, {m: 2}]\n")
                 + template("a", command='              command: ["echo", "{{item.n}}"]'),
                 "item {\"m\":2} has no 'n'", "spec.flows[0].withItems[1]", id="item-without-the-field"),
    pytest.param(estimate(as_vcjob(template("a"))), 'Invalid value: "xyz": time: invalid duration "xyz"',
                 "bad.yaml:7: Job/a: spec.runningEstimate", id="vcjob-running-estimate-not-a-duration"),
    pytest.param(flow("    - name: a\n") + estimate(template("a"), "'90'"),
                 'Invalid value: "90": time: invalid duration',
                 "bad.yaml:14: JobTemplate/a: spec.runningEstimate", id="template-running-estimate-a-bare-number"),
    pytest.param(estimate(as_vcjob(template("a")), "5"),   # not "quote it": a quoted "5" is refused too
                 'Invalid value: 5: must be a duration string with a unit, such as "5s" or "5m"',
                 "bad.yaml:7: Job/a: spec.runningEstimate", id="vcjob-running-estimate-an-unquoted-number"),
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


@pytest.mark.parametrize("text, says", [
    pytest.param("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcde", "bcdef")), "excessive aliasing",
        id="alias-bomb"),
    pytest.param("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\nx: " + "9" * 5000 + "\n",
                 "cannot read '9999", id="integer-of-5000-digits"),
    pytest.param("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\nspec: {flows: 5}\n",
                 "spec.flows: Invalid value: 5: must be of type array", id="flows-a-number"),
    pytest.param("apiVersion: v1\nkind: Namespace\nmetadata: {name: a, ownerReferences: x}\n",
                 "metadata.ownerReferences: Invalid value", id="owner-references-a-string"),
    pytest.param("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  tasks:\n"
                 "  - {name: t, replicas: 3000000000, template: {spec: {containers: [{name: c, command: [\"true\"]}]}}}\n",
                 "replicas: Invalid value: 3000000000: must fit in 32 bits", id="replicas-beyond-int32"),
])
def test_hostile_yaml_is_one_problem_quickly(vcctl, write, text, says):
    r = vcctl("validate", write("bad.yaml", text), timeout=30)
    assert r.code == 2 and says in r.err and "1 problem(s) found" in r.err, r


@pytest.mark.parametrize("option, says", [
    (["--timeout", "-1"], "-1 is not a number of seconds greater than 0"),
    (["--timeout", "0"], "0 is not a number of seconds greater than 0"),
    (["--timeout", "nan"], "nan is not a number of seconds greater than 0"),
    (["--nodes", "NODES"], "nodes.yaml:4: Node/n1: spec.taints: Invalid value: 5: must be of type array"),
])
def test_bad_run_options_run_nothing(vcctl, write, tmp_path, option, says):
    nodes = write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: 5}\n")
    marker = tmp_path / "ran"
    flow = write("job.yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                             "  tasks:\n  - name: t\n    replicas: 1\n    template:\n      spec:\n"
                             "        restartPolicy: Never\n        containers:\n        - name: c\n"
                             f"          command: [touch, '{marker}']\n")
    args = [nodes if a == "NODES" else a for a in option]
    r = vcctl("run", "--quiet", *args, flow, timeout=60)
    assert r.code == 2 and says in r.err and "Traceback" not in r.err, r
    assert not marker.exists()


def test_an_unknown_field_is_a_warning_naming_the_closest_field(vcctl, write, tmp_path):
    path = write("typo.yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                              "  minAvaliable: 1\n  tasks:\n  - name: t\n    replicas: 1\n    template:\n      spec:\n"
                              "        restartPolicy: Never\n        containers:\n        - name: c\n"
                              "          command: [\"true\"]\n")
    v = vcctl("validate", path)
    assert v.code == 0 and "1 object(s) valid" in v.out, v
    assert ('typo.yaml:5: Job/j: spec.minAvaliable: unknown field "minAvaliable" (did you mean "minAvailable"?)'
            in v.err), v
    r = vcctl("run", "--workdir", tmp_path / "work", path)
    assert r.code == 0 and 'unknown field "minAvaliable"' in r.err, r
    q = vcctl("run", "--quiet", "--workdir", tmp_path / "work2", path)
    assert q.code == 0 and q.err == "" and q.out == "", q


def test_a_typo_that_makes_an_error_is_named_with_it(vcctl, write, tmp_path):
    """A claim whose `accessModes` is misspelt lacks its access modes (an error): the run names the typo with the
    field meant, as vcctl validate does, not only the missing field."""
    path = write("claim.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n"
                               "  accesModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n")
    r = vcctl("run", "--workdir", tmp_path / "work", path)
    assert r.code == 2 and "1 problem(s) found; nothing was run." in r.err, r
    assert ('claim.yaml:5: PersistentVolumeClaim/data: spec.accesModes: unknown field "accesModes" (did you mean '
            '"accessModes"?)') in r.err, r
    assert ("claim.yaml:4: PersistentVolumeClaim/data: spec.accessModes: Required value: at least 1 access mode is "
            "required") in r.err, r


def test_a_key_written_twice_is_refused_as_kubectl_does(vcctl, write):
    path = write("twice.yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                               "  tasks: []\n  tasks: []\n")
    v = vcctl("validate", path)
    assert v.code == 2 and 'twice.yaml:6: document 1: mapping key "tasks" already defined at line 5' in v.err, v


@pytest.mark.parametrize("patch, field", [
    ("", "spec.flows[0].name"),
    ("    patch: {jobSpec: {tasks: [{name: w, replicas: 1}]}}\n", "spec.flows[0].patch.jobSpec"),
])
def test_a_flow_whose_pod_names_would_be_too_long_is_refused_before_it_runs(vcctl, write, patch, field):
    # JobFlow 40 + flow 22 characters: the vcjob name fits in 63, its pods' names do not; on Volcano
    # the flow fails when its vcjob is created
    jf, fl = "f" * 40, "t" * 22
    path = write("long.yaml", f"apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {{name: {fl}}}\n"
                              "spec:\n  tasks:\n  - name: w\n    replicas: 2\n    template:\n      spec:\n"
                              "        restartPolicy: Never\n        containers: [{name: c, command: [\"true\"]}]\n"
                              f"---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {{name: {jf}}}\n"
                              f"spec:\n  flows:\n  - name: {fl}\n{patch}")
    v = vcctl("validate", path)
    assert v.code == 2 and f"{field}: the vcjob it makes from JobTemplate" in v.err, v
    assert "name part must be no more than 63 characters" in v.err and "1 problem(s) found" in v.err, v


def test_a_patch_element_that_cannot_apply_is_reported_at_its_own_line(vcctl, write):
    path = write("patch.yaml", "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: t}\n"
                               "spec:\n  tasks:\n  - name: w\n    replicas: 1\n    template:\n      spec:\n"
                               "        restartPolicy: Never\n        containers: [{name: c, command: [\"true\"]}]\n"
                               "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: jf}\n"
                               "spec:\n  flows:\n  - name: t\n    patch:\n      jobSpec:\n        tasks:\n"
                               "        - template:\n            spec:\n              containers:\n"
                               "              - name: c\n              - image: x\n")
    v = vcctl("validate", path)
    assert v.code == 2 and ("patch.yaml:26: JobFlow/jf: spec.flows[0].patch.jobSpec.tasks[0].template.spec."
                            "containers[1]: no name; an element without name is allowed only") in v.err, v


def test_an_error_in_a_multi_line_expression_names_the_line_and_column_it_is_on(vcctl, write):
    text = flow("    - name: a\n    - name: b\n      when: >-\n        params.x == \"1\" &&\n"
                "        outputs.a.result ==\n        && true\n      dependsOn:\n        expression: |\n"
                "          a.Completed &&\n          (a.Failed ||\n          a.Bogus)\n") + template("a") + template("b")
    path = write("multi.yaml", text)
    v = vcctl("validate", path)
    assert v.code == 2, v
    assert "multi.yaml:12:9: JobFlow/f: spec.flows[1].when: flow \"b\": expected a value, found '&&'" in v.err, v
    assert "multi.yaml:17:13: JobFlow/f: spec.flows[1].dependsOn.expression: flow \"b\": unknown outcome 'Bogus'" \
        in v.err, v


def test_an_unknown_flow_in_a_multi_line_expression_names_the_line_and_column_it_is_on(vcctl, write):
    text = flow("    - name: a\n    - name: b\n      dependsOn:\n        expression: |\n"
                "          a.Completed\n          && (q.Failed ||\n          a.Skipped)\n"
                "    - name: c\n      dependsOn: {expression: \"outputs.a == 1\"}\n") + template("a") + template("b") \
        + template("c")
    path = write("unknown.yaml", text)
    v = vcctl("validate", path)
    assert v.code == 2, v
    assert "unknown.yaml:12:15: JobFlow/f: spec.flows[1].dependsOn.expression: flow \"b\": unknown flow \"q\"" \
        in v.err, v
    # a condition's reference in an expression: said as such, not as an unknown outcome of a flow "outputs"
    assert ("spec.flows[2].dependsOn.expression: flow \"c\": outputs.a is a condition's reference: "
            "dependsOn.expression reads flow outcomes") in v.err, v


@pytest.mark.parametrize("command", ["validate", "run"])
def test_an_expressions_problem_names_the_column_of_its_character_in_every_style(vcctl, write, tmp_path, command):
    """Single-quoted with an escaped quote, double-quoted with escapes, a `>` block: the column is that of the
    character the caret points at; the problems in the order of their lines; `run` runs nothing."""
    text = flow("    - name: a\n    - name: b\n      when: 'outputs.a == ''x'' && outputs.zz'\n"
                "    - name: c\n      when: \"outputs.a == \\\"x\\\" &&\n        oops(1)\"\n"
                "    - name: d\n      dependsOn:\n        expression: >\n          a.Completed\n"
                "          && a.Faild\n") + template("a") + template("b") + template("c") + template("d")
    v = vcctl(command, "--workdir", tmp_path / "work", write("styles.yaml", text)) if command == "run" else \
        vcctl(command, write("styles.yaml", text))
    assert v.code == 2, v
    where = [line.split(": JobFlow/f: ")[0].rsplit("/", 1)[-1] for line in v.err.splitlines() if "JobFlow/f" in line]
    assert where == ["styles.yaml:9:36", "styles.yaml:12:9", "styles.yaml:17:16"], v
    assert "unknown function 'oops'" in v.err, v
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").rglob("*.log")), v


@pytest.mark.parametrize("patch, template_extra", [
    pytest.param('      patch: {jobSpec: {queue: "{{item}}"}}\n', "", id="item-in-the-patch"),
    pytest.param("", '\n          priorityClassName: "{{item.cls}}"', id="item-in-the-template"),
])
def test_every_with_items_item_is_checked_before_anything_runs(vcctl, write, tmp_path, patch, template_extra):
    """Not only the first: the second item's vcjob would be refused, so nothing runs."""
    items = '["default", "nosuch"]' if patch else '[{cls: ""}, {cls: nosuch}]'
    text = flow(f"    - name: a\n      withItems: {items}\n{patch}") + template("a").replace(
        "restartPolicy: Never", "restartPolicy: Never" + template_extra)
    path = write("items.yaml", text.replace('priorityClassName: "{{item.cls}}"', 'priorityClassName: "{{item.cls}}"'))
    v = vcctl("run", "--workdir", tmp_path / "work", path)
    assert v.code == 2 and "spec.flows[0].withItems[1]: item 1: the vcjob it makes from JobTemplate" in v.err, v
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").rglob("*.log")), "nothing ran"


def test_a_patch_that_makes_an_invalid_vcjob_is_reported_at_the_patch_element(vcctl, write):
    """The merged vcjob's field (a container appended to the template's in spec.tasks[0], a task
    appended after the template's) is traced back to the element of the patch the user wrote."""
    text = flow("    - name: a\n      patch:\n        jobSpec:\n          tasks:\n            - name: main\n"
                "              template:\n                spec:\n                  containers:\n"
                "                    - {name: Bad_Name, image: busybox, command: [\"true\"]}\n"
                "            - name: extra\n              template:\n                spec:\n"
                "                  containers: [{name: c, image: busybox}]\n") + template("a")
    path = write("patched.yaml", text)
    v = vcctl("validate", path)
    assert v.code == 2, v
    assert ("patched.yaml:15: JobFlow/f: spec.flows[0].patch.jobSpec.tasks[0].template.spec.containers[0].name: "
            'the vcjob it makes from JobTemplate "a" would be refused: spec.tasks[0].template.spec.containers[1].name: '
            'Invalid value: "Bad_Name"') in v.err, v
    assert ("patched.yaml:19: JobFlow/f: spec.flows[0].patch.jobSpec.tasks[1].template.spec.containers[0].command: "
            'the vcjob it makes from JobTemplate "a" would be refused: spec.tasks[1].template.spec.containers[0].command: '
            'container "c" has no command') in v.err, v


def test_an_unknown_field_of_a_jobflow_is_a_problem_not_a_warning(vcctl, write):
    """A typo such as `flow:` for `flows:` would run nothing and succeed: refused, as kubectl's strict
    validation refuses it; the same typo in another kind stays a warning."""
    text = "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\nspec:\n  flow:\n" \
           "    - name: a\n" + template("a")
    path = write("typo-flow.yaml", text)
    r = vcctl("run", "--quiet", path)
    assert r.code == 2, r
    assert 'typo-flow.yaml:6: JobFlow/f: spec.flow: unknown field "flow" (did you mean "flows"?)\n' in r.err, r
    assert "warning:" not in r.err and "nothing was run" in r.err


def test_a_refused_jobflow_does_not_hide_the_problems_of_its_flows(vcctl, write):
    """A JobFlow admission refuses (an undefined target in flow a) still has its other flows checked: a
    JobTemplate reading an undeclared parameter, a patch whose vcjob would be refused — each reported
    once, at its own line; the flow at fault is not checked again."""
    flows = ("    - name: a\n      dependsOn: {targets: [zz]}\n    - name: b\n      patch: {jobSpec: {queue: nope}}\n"
             "    - name: c\n")
    text = flow(flows).replace("spec:\n", "spec:\n  arguments: {parameters: [{name: m, value: '1'}]}\n", 1) \
        + template("a") + template("b") + template("c", command='              command: ["echo", "{{params.x}}"]')
    v = vcctl("validate", write("refused.yaml", text))
    assert v.code == 2, v
    for expected in ("refused.yaml:9: JobFlow/f: spec.flows[0].dependsOn.targets[0]: jobflow Flow is not DAG: "
                     "vertex is not defined: zz",
                     'refused.yaml:11: JobFlow/f: spec.flows[1].patch.jobSpec.queue: the vcjob it makes from '
                     'JobTemplate "b" would be refused: spec.queue: unable to find job queue',
                     'refused.yaml:12: JobFlow/f: spec.flows[2].name: JobTemplate "c": spec.tasks[0].template.spec.'
                     'containers[0].command[1]: unknown parameter "x" (spec.arguments.parameters declares: m)'):
        assert expected in v.err, (expected, v.err)
    assert "3 problem(s) found" in v.err, v


def test_a_parameter_name_yaml_reads_as_a_boolean_says_to_quote_it(vcctl, write):
    text = flow("    - name: a\n").replace("spec:\n", "spec:\n  arguments:\n    parameters:\n      - name: n\n"
                                          "        value: '1'\n", 1) + template("a")
    v = vcctl("validate", "-p", "n=3", write("unquoted.yaml", text))
    assert v.code == 2, v
    assert ('unquoted.yaml:8: JobFlow/f: spec.arguments.parameters[0].name: Invalid value: false: must be of type '
            'string: the unquoted YAML value n is read as the boolean false; quote it ("n")') in v.err, v
    assert "1 problem(s) found" in v.err, v   # (not also "-p n: no JobFlow declares …")


def test_files_without_objects_are_each_named(vcctl, write):
    empty, comments = write("empty.yaml", ""), write("comments.yaml", "# nothing yet\n---\n")
    v = vcctl("validate", empty, comments)
    assert v.code == 2, v
    assert f"{empty}: no objects found: the file is empty or holds only comments\n" in v.err, v
    assert f"{comments}: no objects found: the file is empty or holds only comments\n" in v.err, v
    assert "2 problem(s) found" in v.err, v


@pytest.mark.parametrize("option, code, says", [
    (["--nodes", "abc"], 2, "error: invalid --nodes value 'abc': not a number of nodes"),
    (["--nodes", "0"], 2, "error: invalid --nodes value '0': the number of nodes must be between 1 and"),
])
def test_a_bad_server_nodes_option_is_a_usage_error_and_leaves_no_data_directory(vcctl, tmp_path, option, code, says):
    data = tmp_path / "data"
    r = vcctl("server", "--data-dir", data, "--port", "0", *option, timeout=60)
    assert (r.code, r.out) == (code, "") and r.err.startswith(says) and "Traceback" not in r.err, r
    assert not data.exists()


def test_a_data_directory_that_cannot_be_created_is_named(vcctl, write):
    data = write("a-file", "") / "data"
    r = vcctl("server", "--data-dir", data, "--port", "0", timeout=60)
    assert (r.code, r.err) == (1, f"error: cannot create the data directory {data}: Not a directory\n"), r


def test_a_port_in_use_is_named_and_leaves_no_data_directory(vcctl, tmp_path):
    """`vcctl server --port P` with P taken: exit 1 naming the address, and nothing made (it used to make the data
    directory, its store, token and certificates, and only then fail to listen)."""
    data = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = vcctl("server", "--data-dir", data, "--port", str(port), timeout=60)
    assert r.code == 1 and r.err.startswith(f"error: cannot listen on 127.0.0.1:{port}: "), r
    assert "Traceback" not in r.err and not data.exists(), r
