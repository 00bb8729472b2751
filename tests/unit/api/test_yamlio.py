"""Manifest loading (objects, document numbers, field lines, every structural problem at once) and
YAML / JSON output."""
from __future__ import annotations

import enum
import json
import textwrap

import pytest
import yaml

from vclite.api import yamlio
from vclite.lib import errors


def y(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


FLOW = y("""
    # a comment before the document
    apiVersion: flow.volcano.sh/v1alpha1
    kind: JobFlow
    metadata:
      name: demo
      labels:
        volcano.sh/queue-name: default
      creationTimestamp: 2024-01-01T00:00:00Z
    spec:
      jobRetainPolicy: retain
      flows:
      - name: a
      - name: b
        dependsOn:
          targets:
          - a
""")


def test_load_string_one_document():
    [doc] = yamlio.load_string(FLOW, "flow.yaml")
    assert (doc.file, doc.index, doc.line, doc.kind, doc.name) == ("flow.yaml", 1, 2, "JobFlow", "demo")
    assert doc.obj["spec"]["flows"][1] == {"name": "b", "dependsOn": {"targets": ["a"]}}
    assert list(doc.obj) == ["apiVersion", "kind", "metadata", "spec"]


def test_timestamps_stay_strings():
    [doc] = yamlio.load_string(FLOW + "status:\n  day: 2024-01-01\n")
    assert doc.obj["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert doc.obj["status"]["day"] == "2024-01-01"


@pytest.mark.parametrize("path, line", [
    pytest.param("", 2, id="document"),
    pytest.param("kind", 3, id="top-level"),
    pytest.param("metadata.name", 5, id="nested"),
    pytest.param("metadata.labels[volcano.sh/queue-name]", 7, id="bracket-key-with-dots"),
    pytest.param("spec.flows", 11, id="sequence-field"),
    pytest.param("spec.flows[0]", 12, id="first-item"),
    pytest.param("spec.flows[1].name", 13, id="item-field"),
    pytest.param("spec.flows[1].dependsOn.targets[0]", 16, id="deep"),
    pytest.param("spec.flows[1].dependsOn.probe", 14, id="missing-leaf-gives-parent"),
    pytest.param("spec.flows[7].name", 11, id="index-out-of-range-gives-list"),
    pytest.param("spec.nothing.here", 9, id="missing-branch-gives-nearest-ancestor"),
    pytest.param("metadata.name.deeper", 5, id="through-a-scalar"),
    pytest.param("status", 2, id="missing-top-level-gives-document"),
])
def test_line_of(path, line):
    [doc] = yamlio.load_string(FLOW)
    assert doc.line_of(path) == line


MULTI_LINE = y("""
    a: one line
    literal: |
      x.Completed &&
      (y.Failed ||
      z.Bogus)
    folded: >-
      params.n == "1" &&
      outputs.a.r ==
      && true
    plain: params.n == "1" &&
      outputs.a.r ==
      && true
    quoted: "params.n == \\"1\\" &&
      outputs.a.r ==
      && true"
    after: 1
    """)


@pytest.mark.parametrize("path, word, line", [
    pytest.param("a", "line", 1, id="one-line-string"),
    pytest.param("literal", "x.Completed", 3, id="literal-first-line"),
    pytest.param("literal", "z.Bogus", 5, id="literal-third-line"),
    pytest.param("folded", "params", 7, id="folded-first-line"),
    pytest.param("folded", "&& true", 9, id="folded-third-line"),
    pytest.param("plain", "params", 10, id="plain-starts-on-the-key-line"),
    pytest.param("plain", "outputs", 11, id="plain-second-line"),
    pytest.param("plain", "&& true", 12, id="plain-third-line"),
    pytest.param("quoted", "outputs", 14, id="double-quoted-second-line"),
    pytest.param("quoted", "&& true", 15, id="double-quoted-third-line"),
])
def test_line_of_a_character_of_a_string_over_several_lines(path, word, line):
    [doc], problems = yamlio.parse_string(MULTI_LINE, objects=False)
    assert problems == []
    offset = doc.obj[path].rindex(word)
    assert doc.line_of(path, offset) == line
    assert doc.line_of("after") == 16 and doc.line_of(path) == doc.line_of(path, None)


PLAIN = y("""
    base: &b {merged: off}
    a: n
    b: "n"
    c: 010
    d: [y, 'y', 1e3, text]
    e: ~
    f: !!bool yes
    g:
      <<: *b
    """)


@pytest.mark.parametrize("path, text", [
    pytest.param("a", "n", id="plain-boolean"),
    pytest.param("b", None, id="quoted-string"),
    pytest.param("c", "010", id="plain-octal"),
    pytest.param("d[0]", "y", id="list-item"),
    pytest.param("d[1]", None, id="quoted-list-item"),
    pytest.param("d[2]", "1e3", id="plain-float"),
    pytest.param("d[3]", None, id="plain-string"),
    pytest.param("d", None, id="a-list"),
    pytest.param("d[9]", None, id="no-such-item"),
    pytest.param("a.deeper", None, id="through-a-scalar"),
    pytest.param("f", "yes", id="tagged"),
    pytest.param("g.merged", "off", id="merge-key"),   # (built by PyYAML's constructor)
])
def test_plain_text_is_how_a_non_string_scalar_was_written(path, text):
    [doc], problems = yamlio.parse_string(PLAIN, objects=False)
    assert problems == [] and doc.obj["a"] is False and doc.obj["c"] == 8 and doc.obj["g"] == {"merged": False}
    assert doc.plain_text(path) == text


@pytest.mark.parametrize("value, text, hint", [
    (False, "n", 'the unquoted YAML value n is read as the boolean false; quote it ("n")'),
    (8, "010", 'the unquoted YAML value 010 is read as the number 8; quote it ("010")'),
    (5, "5", 'the unquoted YAML value 5 is a number; quote it ("5")'),
    (True, None, "it is a boolean (true); quote the value if a string was meant"),
    (1.5, None, "it is a number (1.5); quote the value if a string was meant"),
    ("n", "n", ""),
    (None, "~", ""),
])
def test_quote_hint(value, text, hint):
    assert yamlio.quote_hint(value, text) == hint


def test_documents_numbered_by_position_and_empties_skipped():
    text = y("""
        apiVersion: v1
        kind: Namespace
        metadata: {name: one}
        ---
        ---
        # only a comment
        ---
        ~
        ---
        apiVersion: v1
        kind: Namespace
        metadata: {name: two}
        ---
    """)
    docs = yamlio.load_string(text, "ns.yaml")
    assert [(d.name, d.index, d.line) for d in docs] == [("one", 1, 1), ("two", 5, 10)]


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty-file"),
    pytest.param("# nothing\n", id="comment-only"),
    pytest.param("---\n---\n", id="separators-only"),
])
def test_nothing_to_load(text):
    assert yamlio.load_string(text) == []


CORPUS = [
    pytest.param("a: 1\nb: 1.5\nc: true\nd: null\ne: yes\nf: '1'\ng: 0x10\nh: [1, two, 3.0]\n", id="scalars"),
    pytest.param("base: &b {cpu: 1, memory: 2}\nx: *b\ny: [*b, *b]\n", id="aliases"),
    pytest.param("base: &b {cpu: 1, memory: 2}\nx:\n  <<: *b\n  cpu: 3\n", id="merge-key"),
    pytest.param("1: one\n2.5: x\n", id="non-string-keys"),
    pytest.param("s: !!str 123\nn: !!int '7'\n", id="explicit-tags"),
    pytest.param("cmd: |\n  echo a\n  echo b\nfold: >\n  x\n  y\n", id="block-scalars"),
    pytest.param("- a\n- {b: [c, {d: e}]}\n", id="sequence-root"),
    pytest.param("set: !!set {a, b}\n", id="set-tag"),
]


@pytest.mark.parametrize("text", CORPUS)
def test_objects_read_as_pyyaml_reads_them(text):
    docs, _ = yamlio.parse_string(text)
    assert [d.obj for d in docs] == list(yaml.safe_load_all(text))


def test_merge_key_fields_are_located():
    [doc] = yamlio.parse_string("base: &b\n  cpu: 1\n  memory: 2\nx:\n  <<: *b\n  cpu: 3\n")[0]
    assert doc.obj["x"] == {"cpu": 3, "memory": 2}
    assert (doc.line_of("x.cpu"), doc.line_of("x.memory")) == (6, 3)


def test_aliased_fields_are_located_at_their_definition():
    [doc] = yamlio.parse_string("a: &r\n  k: v\nb: *r\n")[0]
    assert (doc.line_of("a.k"), doc.line_of("b"), doc.line_of("b.k")) == (2, 3, 2)


JF = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\n"


@pytest.mark.parametrize("text, want", [
    pytest.param("- 1\n- 2\n", ["f.yaml:1: document 1: a document must be a mapping (an API object), got a list"],
                 id="not-a-mapping"),
    pytest.param("hello\n", ["f.yaml:1: document 1: a document must be a mapping (an API object), got a string"],
                 id="scalar-document"),
    pytest.param("metadata: {name: x}\n", ["f.yaml:1: document 1 (x): apiVersion: Required value",
                                           "f.yaml:1: document 1 (x): kind: Required value"], id="no-type"),
    pytest.param("apiVersion: 1\nkind: [Job]\nmetadata: {name: x}\n",
                 ['f.yaml:1: document 1 (x): apiVersion: must be a string, got a number: the unquoted YAML value 1 '
                  'is a number; quote it ("1")',
                  "f.yaml:2: document 1 (x): kind: must be a string, got a list"], id="type-not-strings"),
    pytest.param("apiVersion: v1\nkind: JobFlow\nmetadata: {name: x}\n",
                 ['f.yaml:1: document 1 (JobFlow/x): apiVersion: kind JobFlow is not served as "v1": '
                  "use flow.volcano.sh/v1alpha1 or batch.volcano.sh/v1alpha1"], id="wrong-api-version"),
    pytest.param(JF + "metadata: {}\n",
                 ["f.yaml:3: document 1 (JobFlow): metadata.name: Required value: name or generateName is required"],
                 id="no-name"),
    pytest.param(JF, ["f.yaml:1: document 1 (JobFlow): metadata.name: Required value: name or generateName "
                      "is required"], id="no-metadata"),
    pytest.param(JF + "metadata: {generateName: x-}\n", [], id="generate-name-is-enough"),
    pytest.param(JF + "metadata: [x]\n", ["f.yaml:3: document 1 (JobFlow): metadata: must be a mapping, got a list"],
                 id="metadata-not-mapping"),
    pytest.param(JF + "metadata: {name: 7}\n",
                 ['f.yaml:3: document 1 (JobFlow): metadata.name: must be a string, got a number: the unquoted YAML '
                  'value 7 is a number; quote it ("7")'],
                 id="name-not-string"),
    pytest.param("a: 1\n---\n" + JF + "metadata: {name: ok}\n---\n- x\n",
                 ["f.yaml:1: document 1: apiVersion: Required value", "f.yaml:1: document 1: kind: Required value",
                  "f.yaml:1: document 1: metadata.name: Required value: name or generateName is required",
                  "f.yaml:7: document 3: a document must be a mapping (an API object), got a list"],
                 id="every-problem-in-every-document"),
    pytest.param("x: !nope 1\n---\n- y\n",
                 ["f.yaml:1:4: document 1: invalid YAML: could not determine a constructor for the tag '!nope'",
                  "f.yaml:3: document 2: a document must be a mapping (an API object), got a list"],
                 id="unknown-tag-skips-only-its-document"),
    pytest.param("a: &x [*x]\n", ["f.yaml:1: document 1: an alias refers to a node that contains it "
                                  "(recursive anchors are not allowed)"], id="recursive-alias"),
    pytest.param(JF + "metadata: {name: x}\nspec:\n  flows: []\n  flows: [{name: a}]\n",
                 ['f.yaml:6: document 1: mapping key "flows" already defined at line 5'], id="duplicate-key"),
    pytest.param(JF + "metadata:\n  name: x\n  labels: {a: '1', a: '2'}\n",
                 ['f.yaml:5: document 1: mapping key "a" already defined at line 5'], id="duplicate-key-in-flow-style"),
])
def test_problems(text, want):
    _, problems = yamlio.parse_string(text, "f.yaml")
    assert [str(p) for p in problems] == want


# Syntax messages are libyaml's (PyYAML's pure-Python parser words some differently): prefixes.
@pytest.mark.parametrize("text, want", [
    pytest.param("a: b: c\n", ["f.yaml:1:5: document 1: invalid YAML: mapping values are not allowed"], id="syntax"),
    pytest.param(JF + "metadata: {name: x}\n---\nkey: [unclosed\n", ["f.yaml:6:1: document 2: invalid YAML: "],
                 id="syntax-in-second-document"),
    pytest.param("- x\n---\nk: [\n", ["f.yaml:1: document 1: a document must be a mapping (an API object), got a list",
                                     "f.yaml:4:1: document 2: invalid YAML: "], id="problems-before-a-syntax-error-kept"),
    pytest.param("a: b: c\n---\n- x\n", ["f.yaml:1:5: document 1: invalid YAML: mapping values",
                                         "f.yaml:3: document 2: a document must be a mapping"],
                 id="syntax-in-an-implicit-first-document-then-the-next"),
    pytest.param("---\nk: [\n---\n- x\n---\nk: {\n---\n- y\n",
                 ["f.yaml:3:1: document 1: invalid YAML: ", "f.yaml:4: document 2: a document must be a mapping",
                  "f.yaml:7:1: document 3: invalid YAML: ", "f.yaml:8: document 4: a document must be a mapping"],
                 id="a-syntax-error-ends-its-document-not-the-file"),
    pytest.param("- x\n---\nk: *nope\n---\n- y\n",
                 ["f.yaml:1: document 1: a document", "f.yaml:3:4: document 2: invalid YAML: found undefined alias",
                  "f.yaml:5: document 3: a document must be a mapping"], id="undefined-alias"),
    pytest.param("a: 1\n\tb: 2\n", ["f.yaml:2:"], id="tab-indent"),
])
def test_syntax_problems(text, want):
    _, problems = yamlio.parse_string(text, "f.yaml")
    assert len(problems) == len(want)
    for p, prefix in zip(problems, want):
        assert str(p).startswith(prefix), str(p)


@pytest.mark.parametrize("text, says", [
    pytest.param("a:\n\t- b\n", "cannot start any token (while scanning for the next token): a tab; YAML indents "
                 "with spaces only", id="tab-starting-a-line"),
    pytest.param("a: 1\n\tb: 2\n", "found a tab character that violates indentation (while scanning a plain "
                 "scalar)", id="said-already"),
])
def test_a_tab_at_fault_is_named(text, says):
    [problem] = yamlio.parse_string(text, "f.yaml")[1]
    assert str(problem).startswith("f.yaml:2:1: document 1: invalid YAML: ") and str(problem).endswith(says), problem


def test_documents_after_a_syntax_error_keep_their_lines():
    docs, problems = yamlio.parse_string("a: [\n---\n" + JF + "metadata:\n  name: later\n", "f.yaml")
    assert [(d.name, d.index, d.line, d.line_of("metadata.name")) for d in docs] == [("later", 2, 3, 6)]
    assert [p.document for p in problems] == [1]


def test_a_v1_list_is_read_as_its_items():
    text = ("apiVersion: v1\nkind: List\nitems:\n- " + JF.replace("\n", "\n  ") + "metadata: {name: a}\n"
            "- " + JF.replace("\n", "\n  ") + "metadata:\n    name: 7\n")
    docs, problems = yamlio.parse_string(text, "f.yaml")
    assert [(d.name, d.kind, d.index, d.line) for d in docs] == [("a", "JobFlow", 1, 4), ("", "JobFlow", 1, 7)]
    assert [str(p) for p in problems] == [
        'f.yaml:10: document 1 (JobFlow): metadata.name: must be a string, got a number: the unquoted YAML value 7 is '
        'a number; quote it ("7")']


def test_other_lists_are_not_expanded():
    docs, problems = yamlio.parse_string("apiVersion: v1\nkind: PodList\nitems: []\nmetadata: {name: x}\n", "f.yaml")
    assert len(docs) == 1 and 'kind "PodList" of apiVersion "v1" is not served' in str(problems[0])


def test_unserved_kind_lists_what_is_served():
    with pytest.raises(yamlio.ManifestError) as e:
        yamlio.load_string("apiVersion: v1\nkind: jobflow\nmetadata: {name: x}\n", "f.yaml")
    [p] = e.value.problems
    assert (p.line, p.path, p.kind, p.name) == (2, "kind", "jobflow", "x")
    assert 'kind "jobflow" of apiVersion "v1" is not served (did you mean "JobFlow"?)' in p.message
    assert "JobFlow (flow.volcano.sh/v1alpha1)" in p.message and "Queue (scheduling.volcano.sh/v1beta1)" in p.message


@pytest.mark.parametrize("api_version, kind, says", [
    pytest.param("apps/v1", "Deployment", "vclite runs no Kubernetes workload controller: write the pods as a Volcano "
                 "Job (batch.volcano.sh/v1alpha1, one gang) or as Pods with schedulerName: volcano", id="deployment"),
    pytest.param("apps/v1", "ReplicaSet", "no Kubernetes workload controller", id="replicaset"),
    pytest.param("v1", "ReplicationController", "no Kubernetes workload controller", id="replicationcontroller"),
    pytest.param("rbac.authorization.k8s.io/v1", "Role", "vclite has one user, who may do everything (no RBAC)",
                 id="role"),
    pytest.param("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "(no RBAC)", id="clusterrolebinding"),
    pytest.param("argoproj.io/v1alpha1", "WorkflowTemplate", "Argo's controller runs it, not vclite: a JobFlow",
                 id="argo"),
    pytest.param("sparkoperator.k8s.io/v1beta1", "SparkApplication", "its operator runs it, not vclite", id="spark"),
    pytest.param("batch/v1", "Job", "Kubernetes' job controller runs it, not vclite: write it as Volcano's Job or "
                 "CronJob (batch.volcano.sh/v1alpha1), whose spec differs in more than apiVersion: a Job's pod "
                 "template goes under spec.tasks[].template", id="kubernetes-job-not-just-another-apiversion"),
    pytest.param("batch/v1", "CronJob", "a CronJob's spec.jobTemplate.spec is a Volcano Job's spec",
                 id="kubernetes-cronjob"),
    pytest.param("networking.k8s.io/v1", "NetworkPolicy", "no network isolation or ingress: leave this document out",
                 id="networkpolicy-of-the-svc-plugin-guide"),
    pytest.param("storage.k8s.io/v1", "CSIDriver", "vclite serves PersistentVolumeClaims, PersistentVolumes and "
                 "StorageClasses (its provisioner makes a directory per claim), not this kind", id="csidriver"),
    pytest.param("storage.k8s.io/v1", "VolumeAttachment", "not this kind of storage.k8s.io", id="volumeattachment"),
])
def test_a_kind_vclite_knows_it_does_not_run_says_why_and_what_instead(api_version, kind, says):
    _, [problem] = yamlio.parse_string(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n", "f.yaml")
    assert problem.path == "kind" and problem.line == 2
    assert problem.message.startswith(f'kind "{kind}" of apiVersion "{api_version}" is not served: ')
    assert says in problem.message and "served: Job" not in problem.message   # the reason, not the list


def test_manifest_error_is_a_value_error_listing_every_problem():
    with pytest.raises(ValueError) as e:
        yamlio.load_string("- 1\n---\n- 2\n", "f.yaml")
    assert isinstance(e.value, yamlio.ManifestError)
    assert [p.document for p in e.value.problems] == [1, 2]
    assert str(e.value).splitlines() == [str(p) for p in e.value.problems]


@pytest.mark.parametrize("problem, text", [
    pytest.param(yamlio.Problem("flow.yaml", 12, "Required value", 2, "JobFlow", "demo", "spec.flows[0].name"),
                 "flow.yaml:12: document 2 (JobFlow/demo): spec.flows[0].name: Required value", id="full"),
    pytest.param(yamlio.Problem("f.yaml", 3, "bad", 1, "Job"), "f.yaml:3: document 1 (Job): bad", id="kind-only"),
    pytest.param(yamlio.Problem("f.yaml", 3, "bad", column=7), "f.yaml:3:7: bad", id="column"),
    pytest.param(yamlio.Problem("f.yaml", 0, "cannot read"), "f.yaml: cannot read", id="no-line"),
])
def test_problem_str(problem, text):
    assert str(problem) == text


def test_locate_field_errors():
    [doc] = yamlio.load_string(FLOW, "flow.yaml")
    [p] = doc.locate([errors.FieldError("spec.flows[1].dependsOn.targets[0]", "vertex is not defined: a")])
    assert str(p) == "flow.yaml:16: document 1 (JobFlow/demo): spec.flows[1].dependsOn.targets[0]: " \
                     "vertex is not defined: a"


def test_load_file_and_files(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(FLOW)
    b = tmp_path / "b.yaml"
    b.write_bytes("\ufeff".encode() + b"apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n")  # BOM
    assert [d.name for d in yamlio.load_file(str(a))] == ["demo"]
    docs = yamlio.load_files([str(a), str(b)])
    assert [(d.file, d.name) for d in docs] == [(str(a), "demo"), (str(b), "ns")]


def test_load_files_collects_problems_of_all_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- 1\n")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"a: 1\nb: caf\xe9\n")
    missing = tmp_path / "missing.yaml"
    with pytest.raises(yamlio.ManifestError) as e:
        yamlio.load_files([str(bad), str(missing), str(latin)])
    got = [(p.file, p.line) for p in e.value.problems]
    assert got == [(str(bad), 1), (str(missing), 0), (str(latin), 2)]
    assert "cannot read: No such file or directory" in e.value.problems[1].message
    assert "not UTF-8" in e.value.problems[2].message


def test_ten_thousand_documents():
    one = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: v\n"
    text = "---\n".join(one.format(i=i) for i in range(10_000))
    docs = yamlio.load_string(text, "big.yaml")
    assert len(docs) == 10_000
    last = docs[-1]
    assert (last.index, last.name, last.line, last.line_of("data.k")) == (10_000, "cm-9999", 69994, 69999)


def test_ten_thousand_documents_with_problems_all_reported():
    text = "---\n".join(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namee: cm-{i}\n" for i in range(10_000))
    with pytest.raises(yamlio.ManifestError) as e:
        yamlio.load_string(text)
    assert len(e.value.problems) == 10_000
    assert e.value.problems[-1].line == 5 * 9999 + 3


class Phase(enum.StrEnum):
    RUNNING = "Running"


def test_dump_yaml_as_kubectl_prints():
    obj = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
           "metadata": {"name": "test-jobflow", "namespace": "default"}, "spec": {}, "status": {"state": {}}}
    assert yamlio.dump_yaml(obj) == ("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n"
                                     "  name: test-jobflow\n  namespace: default\nspec: {}\nstatus:\n  state: {}\n")


@pytest.mark.parametrize("obj, want", [
    pytest.param({"b": 1, "a": [1, 2]}, "b: 1\na:\n- 1\n- 2\n", id="insertion-order-block-style"),
    pytest.param({"cmd": "echo a\necho b\n"}, "cmd: |\n  echo a\n  echo b\n", id="multiline-literal"),
    pytest.param({"phase": Phase.RUNNING}, "phase: Running\n", id="str-enum"),
    pytest.param({"t": "2024-01-01T00:00:00Z", "n": "1", "b": "true"},
                 "t: '2024-01-01T00:00:00Z'\n'n': '1'\nb: 'true'\n", id="strings-that-look-typed-are-quoted"),
    pytest.param({"v": ["y", "N", "1e3", "0o17", "1:30", "yy"]}, "v:\n- 'y'\n- 'N'\n- '1e3'\n- '0o17'\n- 1:30\n- yy\n",
                 id="strings-kubectl-would-read-typed-are-quoted"),
    pytest.param({"long": "x" * 200}, "long: " + "x" * 200 + "\n", id="no-wrapping"),
    pytest.param({"u": "café"}, "u: café\n", id="unicode"),
])
def test_dump_yaml(obj, want):
    assert yamlio.dump_yaml(obj) == want


def test_dump_yaml_shared_objects_have_no_aliases():
    shared = {"cpu": "1"}
    text = yamlio.dump_yaml({"a": shared, "b": [shared, shared]})
    assert "&" not in text and "*" not in text
    assert yaml.safe_load(text) == {"a": shared, "b": [shared, shared]}


def test_dump_json_two_space_indent_in_order():
    obj = {"kind": "JobFlow", "apiVersion": "flow.volcano.sh/v1alpha1",
           "metadata": {"name": "test-jobflow", "namespace": "default"}, "spec": {}, "status": {"state": {}}}
    text = yamlio.dump_json(obj)
    assert text == json.dumps(obj, indent=2) + "\n"
    assert text.splitlines()[:3] == ["{", '  "kind": "JobFlow",', '  "apiVersion": "flow.volcano.sh/v1alpha1",']


def test_dump_then_load_round_trips():
    [doc] = yamlio.load_string(FLOW)
    [again] = yamlio.load_string(yamlio.dump_yaml(doc.obj))
    assert again.obj == doc.obj



@pytest.mark.parametrize("text, value", [
    pytest.param("y", True, id="y-is-true"), pytest.param("N", False, id="N-is-false"),
    pytest.param("yes", True, id="yes"), pytest.param("off", False, id="off"),
    pytest.param("1e3", 1000.0, id="exponent-without-a-dot"), pytest.param("1.5e3", 1500.0, id="exponent-unsigned"),
    pytest.param("1e-3", 0.001, id="negative-exponent"), pytest.param("+.5", 0.5, id="signed-fraction"),
    pytest.param("0o17", 15, id="0o-octal"), pytest.param("017", 15, id="leading-zero-octal"),
    pytest.param("08", 8.0, id="not-octal-is-a-float"), pytest.param("0x1F", 31, id="hex"),
    pytest.param("1_000", 1000, id="underscores"), pytest.param("1:30", "1:30", id="no-sexagesimal"),
    pytest.param("2026-01-01", "2026-01-01", id="dates-stay-strings"), pytest.param("yy", "yy", id="a-word"),
    pytest.param("'y'", "y", id="quoted-stays-a-string"), pytest.param("-.inf", float("-inf"), id="minus-infinity"),
])
def test_plain_scalars_read_as_kubectl_reads_them(text, value):
    """go-yaml v2 (sigs.k8s.io/yaml, kubectl), not PyYAML: a file means the same to vcctl and to a cluster."""
    got = yamlio.load_string(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\nv: {text}\ny: 1\n")[0].obj
    assert got["v"] == value and type(got["v"]) is type(value)
    assert got["y"] == 1, "keys are read as PyYAML reads them"
