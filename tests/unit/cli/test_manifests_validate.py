"""validate on a given API: the documents are created there once; a flow's vcjob checks store nothing."""
import dataclasses

import pytest

from vclite.api import kinds, yamlio
from vclite.apiserver import inprocess
from vclite.cli import manifests

TEMPLATE = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: train}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          containers: [{name: c, image: busybox, command: ["true"]}]
"""


def flow(patch_replicas: int) -> str:
    return TEMPLATE + f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: f}}
spec:
  flows:
    - name: train
      patch: {{jobSpec: {{tasks: [{{name: main, replicas: {patch_replicas}}}]}}}}
"""


def test_documents_are_created_on_the_given_api_and_the_vcjob_checks_store_nothing():
    client = inprocess.new_client()
    problems = manifests.validate(yamlio.load_string(flow(2), "flow.yaml"), client=client)
    assert problems == []
    assert [o["metadata"]["name"] for o in client.list(kinds.JOBTEMPLATE)] == ["train"]
    assert [o["metadata"]["name"] for o in client.list(kinds.JOBFLOW)] == ["f"]
    assert client.list(kinds.JOB) == []   # (the patched vcjob was admitted as a dry run)


def test_a_patch_the_vcjob_admission_refuses_is_reported_and_nothing_else_is_stored():
    client = inprocess.new_client()
    problems = manifests.validate(yamlio.load_string(flow(-1), "flow.yaml"), client=client)
    assert [(p.field, p.line) for p in problems] == [("spec.flows[0].patch.jobSpec.tasks[0].replicas", 20)]
    assert client.list(kinds.JOB) == []


def template(name: str, command: str = '["true"]', extra: str = "", spec: str = "", task: str = "main") -> str:
    return f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
{spec}  tasks:
    - name: {task}
      replicas: 1
      template:
        spec:
          restartPolicy: Never{extra}
          containers: [{{name: c, image: busybox, command: {command}}}]
"""


def jobflow(flows: str, head: str = "", name: str = "f") -> str:
    return f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: {name}}}
spec:
{head}  flows:
{flows}"""


def located(text: str, params: dict[str, str] | None = None) -> list[str]:
    """`line: field: message` of every problem of `text` (the document lines as written)."""
    docs = yamlio.load_string(text.removeprefix("---\n"), "f.yaml")
    problems = [*manifests.set_params(docs, params or {}), *manifests.validate(docs)]
    return [p if isinstance(p, str) else f"{p.line}: {p.field}: {p.message}" for p in problems]


ARGS = "  arguments: {parameters: [{name: m, value: '1'}]}\n"

# A JobFlow admission refuses: the problems of its flows' templates, patches and items are reported
# too (each once), but for the flows it found at fault — and the JobFlow's own problem is not repeated.
REFUSED = [
    pytest.param(jobflow("    - name: a\n      dependsOn: {targets: [zz]}\n    - name: b\n"
                         "      patch: {jobSpec: {queue: nope}}\n    - name: c\n", ARGS)
                 + template("a") + template("b") + template("c", '["echo", "{{params.x}}"]'),
                 ["8: spec.flows[0].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: zz",
                  '11: spec.flows[2].name: JobTemplate "c": spec.tasks[0].template.spec.containers[0].command[1]: '
                  'unknown parameter "x" (spec.arguments.parameters declares: m)',
                  '10: spec.flows[1].patch.jobSpec.queue: the vcjob it makes from JobTemplate "b" would be refused: '
                  'spec.queue: unable to find job queue: queues.scheduling.volcano.sh "nope" not found'],
                 id="undefined-target"),
    pytest.param(jobflow("    - name: a\n      withItems: [{p: 1}]\n      retry: {limit: 99}\n    - name: b\n"
                         "      withItems: [{p: 1}]\n") + template("a", '["echo", "{{item.q}}"]')
                 + template("b", '["echo", "{{item.q}}"]'),
                 ["8: spec.flows[0].retry.limit: Invalid value: 99: should be less than or equal to 20",
                  "10: spec.flows[1].withItems[0]: flow \"b\": item {\"p\":1} has no 'q', which {{item.q}} reads"],
                 id="a-flow-at-fault-is-not-checked-again"),
    pytest.param(jobflow("    - name: a\n    - name: a\n    - name: b\n") + template("b"),
                 ['7: spec.flows[1].name: jobflow Flow names must be unique: "a"',
                  '6: spec.flows[0].name: JobTemplate "a" not found in namespace "default": no file given defines '
                  "it (a flow runs the JobTemplate of the same name)"], id="duplicate-name-missing-template"),
    # a JobFlow name its label value cannot hold: the vcjobs would carry it, so they are not checked
    pytest.param(jobflow("    - name: a\n    - name: b\n      patch: {jobSpec: {queue: nope}}\n", ARGS, name="x" * 58)
                 + template("a", '["echo", "{{params.y}}"]') + template("b"),
                 ["3: metadata.name: the vcjobs it creates would carry label volcano.sh/createdByJobFlow=",
                  '7: spec.flows[0].name: JobTemplate "a": spec.tasks[0].template.spec.containers[0].command[1]: '
                  'unknown parameter "y" (spec.arguments.parameters declares: m)'],
                 id="bad-name-templates-checked-vcjobs-not"),
    pytest.param(jobflow("    - name: a\n      dependsOn: {targets: [b]}\n    - name: b\n"
                         "      dependsOn: {targets: [a]}\n    - name: c\n")
                 + template("a") + template("b") + template("c", '["echo", "{{outputs.a}}"]'),
                 ["7: spec.flows[0].dependsOn.targets: jobflow Flow is not DAG (cycle: a -> b -> a)"],
                 id="cycle-not-reported-again"),
]


@pytest.mark.parametrize("text, expected", REFUSED)
def test_the_flows_of_a_refused_jobflow_are_checked(text, expected):
    got = located(text)
    assert len(got) == len(expected), got
    for g, want in zip(got, expected):
        assert g.startswith(want), (g, want)


@pytest.mark.parametrize("patch, expected", [
    # a misspelt task name in a patch adds a task: what is refused of it says so
    pytest.param("{jobSpec: {tasks: [{name: mian, replicas: 2}]}}",
                 ['7: spec.flows[0].patch.jobSpec.tasks[0].template: the vcjob it makes from JobTemplate "a" would be '
                  "refused: spec.tasks[1].template: Required value (the patch's task \"mian\" names no task of the "
                  "JobTemplate (main), so it is added as a new task)"], id="unknown-task"),
    # a task of the template: no such note
    pytest.param("{jobSpec: {tasks: [{name: main, template: {spec: {containers: [{name: d, image: b}]}}}]}}",
                 ['7: spec.flows[0].patch.jobSpec.tasks[0].template.spec.containers[0].command: the vcjob it makes '
                  'from JobTemplate "a" would be refused: spec.tasks[0].template.spec.containers[1].command: '
                  'container "d" has no command: vclite runs pods as local processes and cannot run an image\'s '
                  "default entrypoint"], id="known-task"),
])
def test_a_patch_task_naming_no_task_of_the_template_is_said_to_be_added(patch, expected):
    assert located(jobflow(f"    - name: a\n      patch: {patch}\n") + template("a")) == expected


def test_a_jobflow_defined_twice_is_checked_once_at_its_own_lines():
    """The second document is not created: its flows are not checked as if they were the first's."""
    text = (jobflow("    - name: a\n      patch: {jobSpec: {queue: nope}}\n")
            + jobflow("    - name: b\n    - name: a\n      patch: {jobSpec: {queue: nope}}\n") + template("a"))
    assert [g.split(" would be refused")[0] for g in located(text)] == [
        "9: metadata.name: defined twice (first at f.yaml:1)",
        '7: spec.flows[0].patch.jobSpec.queue: the vcjob it makes from JobTemplate "a"']


# YAML 1.1 plain scalars read as kubectl reads them: where a string was expected, say how it was written
UNQUOTED = [
    pytest.param(jobflow("    - name: a\n      when: params.n == '1'\n",
                         "  arguments: {parameters: [{name: n, value: '1'}]}\n") + template("a"), {},
                 ['5: spec.arguments.parameters[0].name: Invalid value: false: must be of type string: the unquoted '
                  'YAML value n is read as the boolean false; quote it ("n")'], id="parameter-name"),
    pytest.param(jobflow("    - name: a\n", "  arguments: {parameters: [{name: n, value: '1'}]}\n") + template("a"),
                 {"n": "3"},
                 ['5: spec.arguments.parameters[0].name: Invalid value: false: must be of type string: the unquoted '
                  'YAML value n is read as the boolean false; quote it ("n")'], id="parameter-name-set-by-p"),
    pytest.param(jobflow("    - name: a\n", "  arguments:\n    parameters:\n      - name: m\n        value: off\n")
                 + template("a"), {},
                 ['8: spec.arguments.parameters[0].value: Invalid value: false: must be of type string: the unquoted '
                  'YAML value off is read as the boolean false; quote it ("off")'], id="parameter-value"),
    pytest.param(jobflow("    - name: a\n      dependsOn: {targets: [y]}\n    - name: y\n") + template("a"), {},
                 ['7: spec.flows[0].dependsOn.targets[0]: Invalid value: true: must be of type string: the unquoted '
                  'YAML value y is read as the boolean true; quote it ("y")',
                  '8: spec.flows[1].name: Invalid value: true: must be of type string: the unquoted YAML value y is '
                  'read as the boolean true; quote it ("y")'], id="target"),
    pytest.param(jobflow("    - name: a\n") + template("a", spec="  queue: no\n"), {},
                 ['12: spec.queue: Invalid value: false: must be of type string: the unquoted YAML value no is read '
                  'as the boolean false; quote it ("no")'], id="template-queue-not-taken-for-empty"),
    pytest.param(jobflow("    - name: a\n") + template("a", task="n"), {},
                 ['13: spec.tasks[0].name: Invalid value: false: must be of type string: the unquoted YAML value n is '
                  'read as the boolean false; quote it ("n")'], id="task-name-not-taken-for-empty"),
    pytest.param(jobflow("    - name: a\n") + template("a", "[echo, yes, 010]"), {},
                 ['18: spec.tasks[0].template.spec.containers[0].command[1]: Invalid value: "boolean": '
                  'spec.tasks[0].template.spec.containers[0].command[1] in body must be of type string: "boolean": '
                  'the unquoted YAML value yes is read as the boolean true; quote it ("yes")',
                  '18: spec.tasks[0].template.spec.containers[0].command[2]: Invalid value: "integer": '
                  'spec.tasks[0].template.spec.containers[0].command[2] in body must be of type string: "integer": '
                  'the unquoted YAML value 010 is read as the number 8; quote it ("010")'],
                 id="command-elements"),
]


@pytest.mark.parametrize("text, params, expected", UNQUOTED)
def test_a_string_written_unquoted_is_named_as_written(text, params, expected):
    assert located(text, params) == [e.replace("\n", "") for e in expected]


def test_a_parameter_set_with_p_is_a_string_whatever_it_reads_as_in_yaml():
    text = jobflow("    - name: a\n", "  arguments: {parameters: [{name: \"n\", value: '1'}]}\n") \
        + template("a", '["echo", "{{params.n}}"]')
    docs = yamlio.load_string(text.removeprefix("---\n"), "f.yaml")
    assert manifests.set_params(docs, {"n": "no"}) == []
    assert manifests.validate(docs) == []
    assert docs[0].obj["spec"]["arguments"]["parameters"] == [{"name": "n", "value": "no"}]


def misread(flow_fields: str, templates: str) -> list[str]:
    """`line: field: message` of each warning about a withItems value of flow `a`."""
    docs = yamlio.load_string((jobflow("    - name: a\n" + flow_fields) + templates).removeprefix("---\n"), "f.yaml")
    return [f"{w.line}: {w.field}: {w.message}" for w in manifests.warnings(docs) if ".withItems[" in w.field]


Y = '7: spec.flows[0].withItems[0]: {{item}} gives "true": the unquoted YAML value y is read as the boolean true; ' \
    'quote it ("y") if the text was meant'
YA = '7: spec.flows[0].withItems[0].a: {{item.a}} gives "true": the unquoted YAML value y is read as the boolean ' \
     'true; quote it ("y") if the text was meant'
OCTAL = '7: spec.flows[0].withItems[0].b[0]: {{item.b.0}} gives "8": the unquoted YAML value 010 is read as the ' \
        'number 8; quote it ("010") if the text was meant'
# A withItems value YAML reads as another type than its text is a warning only where the flow's vcjobs
# get it: a placeholder of the JobTemplate (with the flow's patch merged on) writes it, or an enclosing value.
MISREAD = [
    pytest.param("      withItems: [y, 'n', true, 7, 1e3, {a: off}]\n", template("a", '[echo, "{{item}}"]'),
                 ['7: spec.flows[0].withItems[0]: {{item}} gives "true": the unquoted YAML value y is read as the '
                  'boolean true; quote it ("y") if the text was meant',
                  '7: spec.flows[0].withItems[4]: {{item}} gives "1000.0": the unquoted YAML value 1e3 is read as the '
                  'number 1000.0; quote it ("1e3") if the text was meant',
                  '7: spec.flows[0].withItems[5].a: {{item.a}} gives "false": the unquoted YAML value off is read as '
                  'the boolean false; quote it ("off") if the text was meant'], id="item-read"),
    pytest.param("      withItems: [y, 010, 1.0]\n", template("a", '[echo, hello]'), [], id="item-not-read"),
    pytest.param("      withItems: [y]\n", template("a", '[echo, "{{ item }}"]'), [Y], id="item-read-with-spaces"),
    pytest.param("      withItems: [y]\n      patch: {jobSpec: {queue: '{{item}}'}}\n", template("a"), [Y],
                 id="item-read-by-the-patch"),
    pytest.param("      withItems: [y]\n      patch: {jobSpec: {tasks: [{name: main, template: {spec: {containers: "
                 "[{name: c, command: [echo, hi]}]}}}]}}\n", template("a", '[echo, "{{item}}"]'), [],
                 id="template-field-the-patch-replaces"),
    pytest.param("      withItems: [y]\n      patch: {jobSpec: {tasks: {name: main}}}\n",
                 template("a", '[echo, "{{item}}"]'), [Y], id="patch-of-the-wrong-shape"),
    pytest.param("      withItems: [y]\n      when: item == true\n", template("a"), [], id="read-by-when-only"),
    pytest.param("      withItems: [{a: y, b: [010]}]\n", template("a", '[echo, "{{item.a}}"]'), [YA],
                 id="field-read-other-field-not"),
    pytest.param("      withItems: [{a: y, b: [010]}]\n", template("a", '[echo, "{{item.b}}"]'), [OCTAL],
                 id="enclosing-list-read"),
    pytest.param("      withItems: [{a: y, b: [010]}]\n", template("a", '[echo, "{{item.b.0}}"]'), [OCTAL],
                 id="list-element-read"),
    pytest.param("      withItems: [{a: y, b: [010]}]\n", template("a", '[echo, "{{item}}"]'), [YA, OCTAL],
                 id="whole-item-read"),
    pytest.param("      withItems: [{ab: y}]\n", template("a", '[echo, "{{item.a}}"]'), [],
                 id="a-field-name-prefix-is-not-the-field"),
    pytest.param("      withItems: [y]\n", template("other"), [Y], id="template-not-among-the-documents"),
]


@pytest.mark.parametrize("flow_fields, templates, expected", MISREAD)
def test_a_with_items_value_yaml_reads_as_another_type_is_a_warning_where_a_vcjob_gets_it(flow_fields, templates,
                                                                                         expected):
    assert misread(flow_fields, templates) == expected


def test_a_file_named_twice_is_read_once(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text(jobflow("    - name: a\n").removeprefix("---\n") + template("a"))
    docs, problems = manifests.load_and_validate([str(path), str(tmp_path / "." / "f.yaml")])
    assert (len(docs), problems) == (2, [])


def _queue(name: str, parent: str | None = None) -> str:
    return f"""---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {{name: {name}}}
spec: {{weight: 1{f", parent: {parent}" if parent else ""}}}
"""


@pytest.mark.parametrize("text, created, problems", [
    pytest.param(_queue("leaf", "mid") + _queue("mid", "top") + _queue("top"), ["top", "mid", "leaf"], [],
                 id="children before their parents"),
    pytest.param(_queue("b", "root") + _queue("a"), ["b", "a"], [], id="otherwise file order"),
    pytest.param(_queue("qa", "qb") + _queue("qb", "qa"), [], [
        'q.yaml:5: Queue/qa: spec.parent: queue qa cannot use qb as parent: the parents loop (qa -> qb -> qa)',
        'q.yaml:10: Queue/qb: spec.parent: queue qb cannot use qa as parent: the parents loop (qb -> qa -> qb)'],
                 id="a loop is refused and named, not followed"),
    pytest.param(_queue("qs", "qs"), [], [
        'q.yaml:5: Queue/qs: spec.parent: queue qs cannot use itself as parent'],
                 id="a queue its own parent"),
])
def test_queues_are_created_parents_first(text, created, problems):
    docs = yamlio.load_string(text, "q.yaml")
    client = inprocess.new_client()
    assert [str(p) for p in manifests.validate(docs, client=client)] == problems
    stored = {q["metadata"]["name"] for q in client.list(kinds.QUEUE)}
    assert [n for n in (d.obj["metadata"]["name"] for d in manifests.ordered(docs)) if n in stored] == created


@pytest.mark.parametrize("files, expected, problem", [
    pytest.param(["queues.yaml", "jobs.yaml", "c.json", "b.yml", "README.md", "sub/d.yaml"],
                 ["b.yml", "c.json", "jobs.yaml", "queues.yaml"], "", id="manifests-in-name-order"),
    pytest.param(["README.md", "sub/d.yaml"], [],
                 "no .json, .yaml or .yml file in this directory (its subdirectories are not read)", id="none"),
])
def test_a_directory_stands_for_its_manifest_files_as_for_kubectl(tmp_path, files, expected, problem):
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "dir.yaml").mkdir()   # (a directory, whatever its name, is not a file to read)
    paths, problems = manifests.expand_directories(["a.yaml", str(tmp_path), "-"])
    assert paths == ["a.yaml", *[str(tmp_path / n) for n in expected], "-"]
    assert [str(p) for p in problems] == ([f"{tmp_path}: {problem}"] if problem else [])


EXPRESSIONS = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: x}
spec:
  flows:
    - name: a
    - name: b
      dependsOn:
        expression: a.Completed && (evall.Failed)
    - name: c
      dependsOn:
        expression: "a.Completed &&
          zz.Failed"
    - name: d
      dependsOn:
        expression: |
          a.Completed
            && (b.Faild)
    - name: e
      when: 'outputs.a >'
    - name: f
      dependsOn:
        expression: >
          a.Completed
          && qq.Failed
    - name: g
      when: "params.n == \\"1\\" && outputs.zz"
""" + "".join(template(n) for n in "abcdefg")


def test_an_expressions_problem_names_the_line_and_column_of_its_character_in_file_order(tmp_path):
    """Every scalar style: plain, double- and single-quoted (continued on the next line, with escapes), `|`
    and `>` blocks; the column is that of the character the message's caret points at. Listed in the order
    of the lines (admission finds the unknown flows after the malformed expressions)."""
    (tmp_path / "flow.yaml").write_text(EXPRESSIONS)
    _, problems = manifests.load_and_validate([str(tmp_path / "flow.yaml")])
    problems = [dataclasses.replace(p, file="flow.yaml") for p in problems]
    got = [str(p).split("\n")[0].split(" JobFlow/x: ")[0] + " " + p.field for p in problems]
    assert got == ["flow.yaml:9:37: spec.flows[1].dependsOn.expression",     # evall
                   "flow.yaml:13:11: spec.flows[2].dependsOn.expression",    # zz
                   "flow.yaml:18:19: spec.flows[3].dependsOn.expression",    # Faild
                   "flow.yaml:20:25: spec.flows[4].when",                    # after `>`: the end
                   "flow.yaml:25:14: spec.flows[5].dependsOn.expression",    # qq
                   "flow.yaml:27:14: spec.flows[6].when",                    # params.n: none declared
                   "flow.yaml:27:35: spec.flows[6].when"], got               # outputs.zz, after the escapes
    assert all("the column is where" not in p.message for p in problems)


def test_a_column_that_cannot_be_known_is_the_strings_start_and_the_problem_says_so():
    [doc] = yamlio.load_string(EXPRESSIONS.split("---")[0], "flow.yaml")
    doc.source.lines[8] = "        expression: something else entirely"   # (the text no longer holds the value)
    problem = manifests.at_character(doc, "spec.flows[1].dependsOn.expression", "unknown flow\n  caret", 16)
    assert (problem.line, problem.column) == (9, 21)
    assert problem.message == "unknown flow (the column is where the string starts: the character's own is " \
                              "not known)\n  caret"


def test_problems_are_listed_in_the_order_of_the_files_then_of_their_lines(tmp_path):
    """Found in passes (structure, then admission in dependency order: templates before flows), they are
    listed file by file, line by line; a -p problem, about the command line, first."""
    flows = tmp_path / "flows.yaml"
    flows.write_text(EXPRESSIONS.split("---")[0].replace("    - name: a\n", "    - name: a\n      bogus: 1\n", 1))
    templates = tmp_path / "templates.yaml"
    templates.write_text(template("a", spec="  minAvailable: -1\n") + "".join(template(n) for n in "bcdefg"))
    _, problems = manifests.load_and_validate([str(flows), str(templates)], params={"zz": "1"})
    assert isinstance(problems[0], str) and problems[0].startswith("-p zz:"), problems
    where = [(p.file, p.line, p.column) for p in problems[1:]]
    assert where == sorted(where, key=lambda w: (w[0] != str(flows), w[1], w[2])), where
    assert where[0] == (str(flows), 7, 0) and where[-1][0] == str(templates), where


def test_a_patch_placeholders_problem_names_its_line_and_column(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: pp}\nspec:\n  flows:\n"
                    "  - name: train\n    patch: {jobSpec: {queue: 'q-{{params.nope}}'}}\n" + template("train"))
    _, problems = manifests.load_and_validate([str(path)])
    assert [(p.line, p.column, p.field) for p in problems] == [(7, 33, "spec.flows[0].patch.jobSpec.queue")]


def test_warnings_are_listed_in_the_order_of_the_files_then_of_their_lines():
    """Found per check (unknown fields, then advice, then service accounts), they are listed as problems are."""
    flow_text = jobflow("    - name: a\n      dependsOn:\n        strategy: any\n        probe:\n"
                        "          taskStatusList: [{taskName: main, phase: Running}]\n"
                        "    - name: b\n")
    job_text = """---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  minAvaliable: 1
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          serviceAccountName: robot
          containers: [{name: c, image: busybox, command: ["true"]}]
"""
    docs = yamlio.load_string((flow_text + template("a") + template("b") + job_text).removeprefix("---\n"), "f.yaml")
    where = [(w.line, w.field) for w in manifests.warnings(docs)]
    assert [f for _, f in where] == ["spec.flows[0].dependsOn.strategy", "spec.flows[0].dependsOn.probe",
                                     "spec.minAvaliable", "spec.tasks[0].template.spec.restartPolicy",
                                     "spec.tasks[0].template.spec.serviceAccountName"], where
    assert [line for line, _ in where] == sorted(line for line, _ in where), where


SA = "\n          serviceAccountName: '{{params.sa}}'"
SA_ARGS = "  arguments: {parameters: [{name: sa, value: trainer}]}\n"


@pytest.mark.parametrize("params, expected", [
    pytest.param({}, [], id="the-declared-value"),
    pytest.param({"sa": "Bad_Name"},
                 ['7: spec.flows[0].name: the vcjob it makes from JobTemplate "a" would be refused: '
                  'spec.tasks[0].template.spec.serviceAccountName: Invalid value: "Bad_Name"'], id="a-bad-value-with-p"),
])
def test_a_template_reading_a_parameter_is_checked_with_its_value_before_the_run(params, expected):
    """`{{params.sa}}` in a JobTemplate: its vcjob is checked with the parameter's value (from the file or `-p`), so
    a value no vcjob could take is refused before anything runs, at the flow (it failed the flow once running)."""
    got = located(jobflow("    - name: a\n", SA_ARGS) + template("a", extra=SA), params)
    assert len(got) == len(expected), got
    for g, want in zip(got, expected):
        assert g.startswith(want), (g, want)


@pytest.mark.parametrize("items, messages", [
    pytest.param("[1, 3]", [], id="numbers-are-replicas"),
    pytest.param('["two"]', ['item 0: the vcjob it makes from JobTemplate "w" would be refused: '
                             'spec.tasks[0].replicas: Invalid value: "two": must be of type integer'],
                 id="text-is-refused"),
])
def test_a_template_integer_written_as_an_item_placeholder(items, messages):
    """`replicas: "{{item}}"` in a JobTemplate: each item's vcjob gets the number the item reads as."""
    text = TEMPLATE.replace("name: train", "name: w").replace("replicas: 1", 'replicas: "{{item}}"').replace(
        "  minAvailable: 1\n", "") + f"""---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: f}}
spec:
  flows:
    - name: w
      withItems: {items}
"""
    problems = manifests.validate(yamlio.load_string(text, "flow.yaml"))
    assert [p.message for p in problems] == messages


LIST = """apiVersion: v1
kind: List
items:
- apiVersion: batch.volcano.sh/v1alpha1
  kind: Job
  metadata: {name: l1}
  spec:
    tasks:
    - name: t
      replicas: -3
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: x, command: ["true"]}]
- kind: Job
  metadata: {name: l2}
"""


@pytest.mark.parametrize("text, expected", [
    pytest.param(LIST, ["list.yaml:10: Job/l1: spec.tasks[0].replicas: Invalid value: -3: should be greater than or "
                        "equal to 0", "list.yaml:15: document 1 (Job/l2): apiVersion: Required value"],
                 id="a-lists-malformed-item-hides-not-its-siblings"),
    pytest.param(LIST.replace("- kind: Job\n  metadata: {name: l2}\n", "- 7\n"),
                 ["list.yaml:10: Job/l1: spec.tasks[0].replicas: Invalid value: -3: should be greater than or "
                  "equal to 0", "list.yaml:15: document 1: a document must be a mapping (an API object), got a number"],
                 id="an-item-that-is-no-object"),
])
def test_every_problem_of_a_list_is_listed(tmp_path, text, expected):
    """`vcctl validate` lists every problem: a malformed item of a v1 List (as `kubectl get -o yaml` prints one)
    used to leave its well-formed siblings unchecked (the whole List was set aside)."""
    path = tmp_path / "list.yaml"
    path.write_text(text)
    _, problems = manifests.load_and_validate([str(path)])
    assert [str(p).removeprefix(f"{tmp_path}/") for p in problems] == expected


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: box}\nstatus: {capacity: {cpu: '2'}}\n"


@pytest.mark.parametrize("text, nodes_opt, nodes, problem", [
    pytest.param(NODE, None, ["box"], "", id="the-files-nodes"),
    pytest.param(NODE, "2", None, "nodes.yaml:1: Node/box: --nodes 2 declares the run's nodes", id="and-nodes"),
    pytest.param(NODE.replace("status:", "spec: {taints: [{key: k, effect: Often}]}\nstatus:"), None, None,
                 'nodes.yaml:4: Node/box: spec.taints[0].effect: Unsupported value: "Often"', id="a-bad-node"),
    pytest.param(TEMPLATE, None, None, "", id="no-node"),
])
def test_nodes_among_the_files_are_the_runs_nodes(tmp_path, text, nodes_opt, nodes, problem):
    """`vcctl run` (and `validate`) take the FILES' Nodes out of the manifests: they declare the run's nodes."""
    path = tmp_path / "nodes.yaml"
    path.write_text(text)
    (rest, _), got, problems = manifests.nodes_among(manifests.read_all([str(path)]), nodes_opt)
    assert (None if got is None else [n["metadata"]["name"] for n in got]) == nodes
    assert [d.kind for d in rest] == ([] if "kind: Node" in text else ["JobTemplate"])
    assert len(problems) == (1 if problem else 0), problems
    assert all(str(p).removeprefix(f"{tmp_path}/").startswith(problem) for p in problems), problems


CLASH_FLOW = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: c}
spec:
  flows: [{name: train}]
---
""" + TEMPLATE.lstrip()
JOB_NAMED = """---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}{namespace}}}
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{{name: c, image: busybox, command: ["true"]}}]
"""


@pytest.mark.parametrize("job, expected", [
    pytest.param(JOB_NAMED.format(name="c-train", namespace=""),
                 ["flow.yaml:21: Job/c-train: metadata.name: JobFlow c (flow.yaml:1) makes a vcjob of this name for "
                  "its flow train: it would not take this one for its own and wait for ever; "
                  "name this vcjob otherwise"],
                 id="the-flows-vcjob-name"),
    pytest.param(JOB_NAMED.format(name="c-train", namespace=", namespace: other"), [], id="another-namespace"),
    pytest.param(JOB_NAMED.format(name="c-other", namespace=""), [], id="another-name"),
])
def test_a_vcjob_named_as_a_flows_vcjob_is_a_problem(tmp_path, job, expected):
    """The JobFlow would find the vcjob not created by it and wait for ever (vcctl run stopped with no reason)."""
    path = tmp_path / "flow.yaml"
    path.write_text(CLASH_FLOW + job)
    _, problems = manifests.load_and_validate([str(path)])
    assert [str(p).replace(f"{tmp_path}/", "") for p in problems] == expected
