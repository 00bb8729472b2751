"""Placeholders and patches (api/flowtemplate): `{{…}}` substitution into JobTemplate specs, and
`patch.jobSpec` merged as Volcano's job-template-parameter-overriding.md and PR #4491 describe —
job fields replace, tasks merge by name, volumes by mountPath, plugin arguments append — without
PR #4491's bug (maxRetry/minAvailable overwritten even when the patch does not set them)."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from vclite.api import flowtemplate

T = flowtemplate
Obj = dict[str, Any]

VALUES = T.template_values(params={"image": "busybox:1.36", "epochs": "3"},
                           outputs={"prep": "  /data/set-7\n", "eval": '{"acc": 0.9, "best": {"lr": 0.01}}'},
                           item={"name": "a", "shards": [1, 2], "gpu": True}, iteration=2)


@pytest.mark.parametrize("text, expected", [
    pytest.param("{{params.image}}", "busybox:1.36", id="param"),
    pytest.param("--epochs={{params.epochs}}", "--epochs=3", id="param-in-text"),
    pytest.param("{{ params.image }}", "busybox:1.36", id="spaces-inside-braces"),
    pytest.param("{{outputs.prep}}", "/data/set-7", id="output-stripped"),
    pytest.param("{{outputs.eval.acc}}", "0.9", id="output-json-field"),
    pytest.param("{{outputs.eval.best}}", '{"lr":0.01}', id="output-json-object"),
    pytest.param("{{item}}", '{"name":"a","shards":[1,2],"gpu":true}', id="item-object-as-json"),
    pytest.param("{{item.name}}-{{item.shards.1}}", "a-2", id="item-fields"),
    pytest.param("{{item.gpu}}", "true", id="item-boolean-as-json"),
    pytest.param("run-{{iteration}}", "run-2", id="iteration"),
    pytest.param("{{params.epochs}}{{params.epochs}}", "33", id="twice"),
    pytest.param("echo {{.Values.x}} {single} {{ }}", "echo {{.Values.x}} {single} {{ }}", id="not-placeholders"),
    pytest.param("plain", "plain", id="no-braces"),
])
def test_substitute_string(text: str, expected: str) -> None:
    assert T.substitute(text, VALUES) == expected


def test_substitute_walks_every_string_and_copies() -> None:
    spec = {"tasks": [{"name": "t", "replicas": 2, "template": {"spec": {"containers": [
        {"name": "c", "image": "{{params.image}}", "command": ["sh", "-c", "train --shard {{item.shards.0}}"],
         "env": [{"name": "{{params.epochs}}", "value": "{{outputs.prep}}"}]}]}}}],
        "{{params.image}}": True, "maxRetry": 3}
    before = copy.deepcopy(spec)
    got = T.substitute(spec, VALUES)
    assert spec == before
    container = got["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["image"] == "busybox:1.36"
    assert container["command"] == ["sh", "-c", "train --shard 1"]
    assert container["env"] == [{"name": "3", "value": "/data/set-7"}]
    assert got["{{params.image}}"] is True and got["maxRetry"] == 3  # keys and non-strings untouched
    got["tasks"][0]["template"]["spec"]["containers"].append({})
    assert len(spec["tasks"][0]["template"]["spec"]["containers"]) == 1


@pytest.mark.parametrize("obj, path, message", [
    pytest.param({"a": ["x", "{{params.nope}}"]}, "", "a[1]: unknown placeholder {{params.nope}} (known: ",
                 id="unknown-param"),
    pytest.param({"a": "{{item.missing}}"}, "spec", "spec.a: placeholder {{item.missing}}: item has no field "
                 "'missing' (object; its fields: name, shards, gpu)", id="unknown-item-field"),
    pytest.param({"a": "{{item.name.first}}"}, "", "a: placeholder {{item.name.first}}: item.name has no field "
                 "'first' (string; 'a')", id="field-of-a-string-field"),
    pytest.param("{{outputs.prep.x}}", "", "<root>: placeholder {{outputs.prep.x}}: outputs.prep is '/data/set-7', "
                 "not JSON: it has no fields", id="field-of-non-json"),
    pytest.param({"t": "{{item.shards.9}}"}, "", "t: placeholder {{item.shards.9}}: item.shards has no element '9' "
                 "(array; 2 elements)", id="index-out-of-range"),
    pytest.param({"t": "{{outputs.eval.best.momentum}}"}, "", "t: placeholder {{outputs.eval.best.momentum}}: "
                 "outputs.eval.best has no field 'momentum' (object; its fields: lr)", id="nested-output-field"),
])
def test_substitute_unknown(obj: Any, path: str, message: str) -> None:
    """A placeholder that reads a field the value lacks says where the walk stopped and what is there."""
    with pytest.raises(ValueError) as info:
        T.substitute(obj, VALUES, path=path)
    assert str(info.value).startswith(message)


def test_other_braces_are_left_alone_as_volcano_leaves_them() -> None:
    text = {"t": [{"c": "Hello {{name}}, {{ build.id }}, {{params.epochs}} {{.Values.x}}"}]}
    assert T.substitute(text, VALUES) == {"t": [{"c": "Hello {{name}}, {{ build.id }}, 3 {{.Values.x}}"}]}


def test_unknown_placeholder_lists_known_names() -> None:
    with pytest.raises(ValueError, match=r"^x: unknown placeholder \{\{params.y\}\} \(known: item, params.a\)$"):
        T.substitute({"x": "{{params.y}}"}, T.template_values({"a": "1"}, item="s"))


@pytest.mark.parametrize("kwargs, expected", [
    pytest.param({}, {}, id="nothing"),
    pytest.param({"params": {"a": "1"}}, {"params.a": "1"}, id="params"),
    pytest.param({"outputs": {"f": " x \n"}}, {"outputs.f": "x"}, id="outputs-stripped"),
    pytest.param({"item": "plain"}, {"item": "plain"}, id="string-item"),
    pytest.param({"item": 7}, {"item": "7"}, id="number-item"),
    pytest.param({"item": None}, {"item": "null"}, id="null-item"),
    pytest.param({"item": ["a", 1]}, {"item": '["a",1]'}, id="list-item"),
    pytest.param({"iteration": 0}, {"iteration": "0"}, id="iteration-zero"),
])
def test_template_values(kwargs: Obj, expected: dict[str, str]) -> None:
    assert T.template_values(**kwargs) == expected


def test_exact_key_wins_over_json_walk() -> None:
    assert T.lookup("item.a", {"item": '{"a": "json"}', "item.a": "exact"}) == "exact"
    assert T.lookup("item.a", {"item": '{"a": "json"}'}) == "json"
    assert T.lookup("item.b", {"item": '{"a": "json"}'}) is None


def test_placeholders_and_arguments() -> None:
    assert T.placeholders({"a": ["{{params.x}} {{ item.y }}", {"b": "{{iteration}}"}], "n": 3}) == {
        "params.x", "item.y", "iteration"}
    assert T.arguments({"arguments": {"parameters": [{"name": "a", "value": "1"}, {"name": "b", "value": ""}]}}) == {
        "a": "1", "b": ""}
    assert T.arguments({}) == {} and T.arguments(None) == {}


@pytest.mark.parametrize("text, expected", [
    pytest.param('["a", "b"]', ["a", "b"], id="strings"),
    pytest.param('[{"x": 1}, 2, null]', [{"x": 1}, 2, None], id="mixed"),
    pytest.param(" [] \n", [], id="empty"),
])
def test_parse_items(text: str, expected: list) -> None:
    assert T.parse_items(text) == expected


@pytest.mark.parametrize("text, message", [
    pytest.param("a, b", "withParam: not a JSON list (Expecting value: line 1 column 1 (char 0)): 'a, b'",
                 id="not-json"),
    pytest.param('{"a": 1}', "withParam: expected a JSON list, got object: '{\"a\": 1}'", id="not-a-list"),
    pytest.param(" \n", "withParam: the output is empty, not a JSON list (did the pod write its list to "
                 "$TERMINATION_MESSAGE_PATH?)", id="empty"),
    pytest.param(json.dumps(list(range(2000)))[-4096:],
                 "withParam: not a JSON list (Extra data: line 1 column 4 (char 3)); it may have been cut: a "
                 "termination message keeps only its last 4096 bytes, as the kubelet keeps them: '317, 1318, 1319, "
                 "1320, 1321, 1322, 1323, 1324, 1325, 1326, 1327, 1328, 1329, 133'", id="cut-to-the-kubelet-limit"),
])
def test_parse_items_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        T.parse_items(text)
    assert str(info.value) == message


# ---- patch.jobSpec ----------------------------------------------------------------------------

def container(name: str, **kw: Any) -> Obj:
    return {"name": name, "image": "img:1", "command": ["python", "train.py"], **kw}


def task(name: str, *containers: Obj, **kw: Any) -> Obj:
    return {"name": name, "replicas": 1, "template": {"metadata": {"name": "web"}, "spec": {
        "containers": list(containers) or [container("main")], "restartPolicy": "OnFailure"}}, **kw}


TEMPLATE = {
    "minAvailable": 1, "schedulerName": "volcano", "queue": "default", "maxRetry": 5,
    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
    "plugins": {"ssh": [], "svc": ["--publish-not-ready-addresses=false"], "env": []},
    "volumes": [{"mountPath": "/data", "volumeClaimName": "data-pvc"}],
    "tasks": [task("ps", container("ps", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                                   resources={"requests": {"cpu": "1", "memory": "1Gi"}})),
              task("worker", container("main"), replicas=2)],
}


def patched(patch: Obj) -> Obj:
    return T.apply_patch(TEMPLATE, patch)


def task_of(spec: Obj, name: str) -> Obj:
    return next(t for t in spec["tasks"] if t["name"] == name)


def test_job_fields_replace_and_absent_fields_stay() -> None:
    got = patched({"queue": "gpu", "schedulerName": "other", "priorityClassName": "high", "minSuccess": 2})
    assert (got["queue"], got["schedulerName"], got["priorityClassName"], got["minSuccess"]) == (
        "gpu", "other", "high", 2)
    # PR #4491 always overwrote maxRetry and minAvailable (to 0 when unset); here they stay.
    assert (got["maxRetry"], got["minAvailable"]) == (5, 1)


def test_a_zero_that_is_present_does_replace() -> None:
    got = patched({"maxRetry": 0, "minAvailable": 0})
    assert (got["maxRetry"], got["minAvailable"]) == (0, 0)


def test_null_in_the_patch_changes_nothing() -> None:
    assert patched({"queue": None, "tasks": None, "plugins": None, "volumes": None}) == TEMPLATE


def test_empty_patch_is_a_copy() -> None:
    got = T.apply_patch(TEMPLATE, None)
    assert got == TEMPLATE and got is not TEMPLATE
    got["tasks"][0]["replicas"] = 9
    assert TEMPLATE["tasks"][0]["replicas"] == 1
    assert T.apply_patch(TEMPLATE, {}) == TEMPLATE


def test_policies_replace_the_whole_list() -> None:
    got = patched({"policies": [{"event": "PodFailed", "action": "AbortJob"}]})
    assert got["policies"] == [{"event": "PodFailed", "action": "AbortJob"}]


def test_plugin_arguments_append_without_duplicates() -> None:
    got = patched({"plugins": {"svc": ["--publish-not-ready-addresses=false", "--disable-network-policy=true",
                                       "--disable-network-policy=true"], "pytorch": ["--master=ps"]}})
    assert got["plugins"] == {"ssh": [], "env": [], "pytorch": ["--master=ps"],
                              "svc": ["--publish-not-ready-addresses=false", "--disable-network-policy=true"]}


def test_volumes_merge_by_mount_path() -> None:
    got = patched({"volumes": [{"mountPath": "/data", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}},
                               {"mountPath": "/ckpt", "volumeClaimName": "ckpt"}]})
    # a matched volume is replaced whole: volumeClaimName does not linger next to volumeClaim
    assert got["volumes"] == [{"mountPath": "/data", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}},
                              {"mountPath": "/ckpt", "volumeClaimName": "ckpt"}]


def test_tasks_merge_by_name() -> None:
    got = patched({"tasks": [{"name": "worker", "replicas": 4, "policies": [{"event": "TaskCompleted",
                                                                              "action": "CompleteJob"}]},
                             {"name": "chief", "replicas": 1, "template": {"spec": {"containers": [container("c")]}}}]})
    assert [t["name"] for t in got["tasks"]] == ["ps", "worker", "chief"]
    worker = task_of(got, "worker")
    assert worker["replicas"] == 4 and worker["policies"] == [{"event": "TaskCompleted", "action": "CompleteJob"}]
    assert worker["template"] == TEMPLATE["tasks"][1]["template"]
    assert task_of(got, "ps") == TEMPLATE["tasks"][0]


def test_container_patched_by_name_and_sidecar_added() -> None:
    got = patched({"tasks": [{"name": "ps", "template": {"spec": {"containers": [
        {"name": "ps", "image": "img:2", "command": ["python", "serve.py"],
         "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
         "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}},
        {"name": "sidecar", "image": "proxy:1", "command": ["proxy"]}]}}}]})
    ps = task_of(got, "ps")["template"]["spec"]
    main, sidecar = ps["containers"]
    assert main["image"] == "img:2" and main["command"] == ["python", "serve.py"]  # replaced, not merged
    assert main["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}]
    assert main["resources"] == {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4"}}
    assert sidecar == {"name": "sidecar", "image": "proxy:1", "command": ["proxy"]}
    assert ps["restartPolicy"] == "OnFailure"


def test_a_matched_env_var_and_volume_mount_are_replaced_whole() -> None:
    """env by name, "Replace value": going from value to valueFrom leaves no value behind; a volumeMount
    matched by mountPath is replaced (its name, subPath, readOnly as the patch says)."""
    base = task("only", container("c", env=[{"name": "WHO", "value": "x"}, {"name": "KEEP", "value": "1"}],
                                  volumeMounts=[{"mountPath": "/d", "name": "a", "readOnly": True}]))
    patch = {"tasks": [{"name": "only", "template": {"spec": {"containers": [{"name": "c", "env": [
        {"name": "WHO", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "volumeMounts": [{"mountPath": "/d", "name": "b"}]}]}}}]}
    got = T.apply_patch({"tasks": [base]}, patch)["tasks"][0]["template"]["spec"]["containers"][0]
    assert got["env"] == [{"name": "WHO", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                          {"name": "KEEP", "value": "1"}]
    assert got["volumeMounts"] == [{"mountPath": "/d", "name": "b"}]


def test_design_doc_adding_a_volume() -> None:
    """job-template-parameter-overriding.md "Adding a Volume": pod volumes by name, mounts by mountPath;
    its task has no name, which applies to the template's only task."""
    template = {"minAvailable": 1, "tasks": [task("ml-task", container("cnn-mnist-torch"))]}
    got = T.apply_patch(template, {"tasks": [{"template": {"spec": {
        "volumes": [{"name": "data-volume", "emptyDir": {}}],
        "containers": [{"name": "cnn-mnist-torch", "volumeMounts": [{"name": "data-volume",
                                                                     "mountPath": "/app/data"}]}]}}}]})
    spec = got["tasks"][0]["template"]["spec"]
    assert spec["volumes"] == [{"name": "data-volume", "emptyDir": {}}]
    assert spec["containers"] == [container("cnn-mnist-torch", volumeMounts=[{"name": "data-volume",
                                                                              "mountPath": "/app/data"}])]


def test_design_doc_new_image_for_the_only_container() -> None:
    template = {"tasks": [task("ml-task", container("cnn-mnist-torch"))]}
    got = T.apply_patch(template, {"tasks": [{"template": {"spec": {"containers": [
        {"image": "myregistry/cnn-mnist-torch-cuda:v1"}]}}}]})
    assert got["tasks"][0]["template"]["spec"]["containers"] == [
        container("cnn-mnist-torch", image="myregistry/cnn-mnist-torch-cuda:v1")]


@pytest.mark.parametrize("field, base, patch, expected", [
    pytest.param("nodeSelector", {"zone": "a", "disk": "ssd"}, {"zone": "b", "gpu": "t4"},
                 {"zone": "b", "disk": "ssd", "gpu": "t4"}, id="node-selector-merges-keys"),
    pytest.param("affinity", {"nodeAffinity": {"x": 1}, "podAffinity": {"y": 2}}, {"nodeAffinity": {"z": 3}},
                 {"nodeAffinity": {"z": 3}}, id="affinity-replaced-whole"),
    pytest.param("tolerations", [{"key": "gpu", "effect": "NoSchedule"}, {"key": "spot", "effect": "NoExecute"}],
                 [{"key": "gpu", "effect": "NoExecute"}, {"key": "arm", "operator": "Exists"}],
                 [{"key": "gpu", "effect": "NoExecute"}, {"key": "spot", "effect": "NoExecute"},
                  {"key": "arm", "operator": "Exists"}], id="tolerations-by-key"),
    pytest.param("hostAliases", [{"ip": "10.0.0.1", "hostnames": ["a"]}], [{"ip": "10.0.0.1", "hostnames": ["b"]}],
                 [{"ip": "10.0.0.1", "hostnames": ["b"]}], id="host-aliases-by-ip"),
    pytest.param("tolerations", [{"key": "k1", "operator": "Equal", "value": "v1", "effect": "NoSchedule"}],
                 [{"key": "k1", "operator": "Exists"}], [{"key": "k1", "operator": "Exists"}],
                 id="a-matched-toleration-is-replaced-whole"),   # (merged, Exists would keep value v1: invalid)
    pytest.param("volumes", [{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}],
                 [{"name": "data", "hostPath": {"path": "/tmp"}}],
                 [{"name": "data", "hostPath": {"path": "/tmp"}}, {"name": "cache", "emptyDir": {}}],
                 id="a-matched-pod-volume-is-replaced-whole"),   # (merged, it would have two sources)
    pytest.param("restartPolicy", "OnFailure", "Never", "Never", id="scalar-replaced"),
    pytest.param("dnsConfig", None, {"nameservers": ["1.1.1.1"]}, {"nameservers": ["1.1.1.1"]}, id="added"),
])
def test_pod_level_fields(field: str, base: Any, patch: Any, expected: Any) -> None:
    t = task("only")
    if base is not None:
        t["template"]["spec"][field] = base
    got = T.apply_patch({"tasks": [t]}, {"tasks": [{"name": "only", "template": {"spec": {field: patch}}}]})
    assert got["tasks"][0]["template"]["spec"][field] == expected


BAD_PATCHES = [
    pytest.param({"tasks": [{"replicas": 2}]}, "patch.jobSpec.tasks[0]: no name; an element without name is "
                 "allowed only when the template and the patch both have exactly one (template: 2, patch: 1)",
                 id="nameless-task-ambiguous"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"containers": [{"image": "x"}, {"image": "y"}]}}}]},
                 "patch.jobSpec.tasks[0].template.spec.containers[0]: no name; an element without name is allowed "
                 "only when the template and the patch both have exactly one (template: 1, patch: 2)",
                 id="nameless-containers-ambiguous"),
    pytest.param({"volumes": [{"volumeClaimName": "x"}, {"mountPath": "/y"}]},
                 "patch.jobSpec.volumes[0]: no mountPath; an element without mountPath is allowed only when the "
                 "template and the patch both have exactly one (template: 1, patch: 2)", id="volume-without-path"),
    pytest.param({"tasks": {"name": "ps"}}, "patch.jobSpec.tasks: expected a list, got object", id="tasks-not-a-list"),
    pytest.param({"tasks": ["ps"]}, "patch.jobSpec.tasks[0]: expected an object, got string", id="task-not-an-object"),
    pytest.param({"plugins": ["ssh"]}, "patch.jobSpec.plugins: expected an object of plugin name -> [arguments], "
                 "got array", id="plugins-not-an-object"),
    pytest.param({"plugins": {"ssh": "x"}}, "patch.jobSpec.plugins.ssh: expected a list of arguments, got string",
                 id="plugin-args-not-a-list"),
]


@pytest.mark.parametrize("patch, message", BAD_PATCHES)
def test_bad_patches(patch: Obj, message: str) -> None:
    with pytest.raises(ValueError) as info:
        patched(patch)
    assert str(info.value) == message


def test_patch_is_not_an_object() -> None:
    with pytest.raises(ValueError, match="patch.jobSpec: expected an object, got array"):
        T.apply_patch(TEMPLATE, [])  # type: ignore[arg-type]


def test_inputs_are_not_mutated() -> None:
    template, patch = copy.deepcopy(TEMPLATE), {"tasks": [{"name": "ps", "template": {"spec": {"containers": [
        {"name": "ps", "env": [{"name": "Z", "value": "9"}]}]}}}], "plugins": {"ssh": ["--x"]}}
    before = copy.deepcopy(patch)
    got = T.apply_patch(template, patch)
    assert template == TEMPLATE and patch == before
    got["tasks"][0]["template"]["spec"]["containers"][0]["env"].clear()
    got["plugins"]["ssh"].clear()
    assert template == TEMPLATE and patch == before


def test_placeholder_paths_name_the_first_use_of_each():
    spec = {"queue": "{{params.q}}", "tasks": [{"name": "t", "template": {"spec": {"containers": [
        {"command": ["sh", "-c", "echo {{item}} {{params.q}}"]}]}}}], "plugins": {"svc": ["{{item.x}}"]}}
    assert flowtemplate.placeholder_paths(spec, "spec") == {
        "params.q": "spec.queue", "item": "spec.tasks[0].template.spec.containers[0].command[2]",
        "item.x": "spec.plugins.svc[0]"}
    assert flowtemplate.placeholder_paths(["{{a}}", "{{item}}"]) == {"item": "[1]"}
    assert flowtemplate.placeholder_paths(["{{a}}", "{{ b.c }}", "{{item}}"], "", flowtemplate.OTHER_BRACES) == \
        {"a": "[0]", "b.c": "[1]"}     # the text left alone, for warnings


# ---- patch_origin: a merged field traced back to the patch -------------------------------------

@pytest.mark.parametrize("patch, merged_path, origin", [
    pytest.param({"queue": "gpu"}, "queue", "patch.jobSpec.queue", id="job-field-replaced"),
    pytest.param({"queue": "gpu"}, "maxRetry", None, id="job-field-of-the-template"),
    pytest.param({"policies": [{"event": "PodFailed", "action": "AbortJob"}]}, "policies[0].action",
                 "patch.jobSpec.policies[0].action", id="replaced-list"),
    pytest.param({"tasks": [{"name": "worker", "replicas": 4}]}, "tasks[1].replicas",
                 "patch.jobSpec.tasks[0].replicas", id="matched-task-field"),
    pytest.param({"tasks": [{"name": "worker", "replicas": 4}]}, "tasks[1].minAvailable", None,
                 id="matched-task-field-the-patch-lacks"),
    pytest.param({"tasks": [{"name": "worker", "replicas": 4}]}, "tasks[0].replicas", None, id="unpatched-task"),
    pytest.param({"tasks": [{"name": "worker", "replicas": 4}]}, "tasks[1].name", None, id="matched-task-key"),
    pytest.param({"tasks": [{"name": "worker"}, {"name": "chief", "replicas": -1}]}, "tasks[2].replicas",
                 "patch.jobSpec.tasks[1].replicas", id="appended-task"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"containers": [{"name": "side", "image": "x"}]}}}]},
                 "tasks[0].template.spec.containers[1].image",
                 "patch.jobSpec.tasks[0].template.spec.containers[0].image", id="appended-container"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"containers": [{"name": "ps", "image": "x"}]}}}]},
                 "tasks[0].template.spec.containers[0].image",
                 "patch.jobSpec.tasks[0].template.spec.containers[0].image", id="merged-container-field"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"containers": [{"name": "ps", "image": "x"}]}}}]},
                 "tasks[0].template.spec.containers[0].env[0].name", None, id="merged-container-template-field"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"containers": [
        {"name": "ps", "env": [{"name": "B", "value": "9"}, {"name": "Z", "value": "1"}]}]}}}]},
                 "tasks[0].template.spec.containers[0].env[2].value",
                 "patch.jobSpec.tasks[0].template.spec.containers[0].env[1].value", id="appended-env-var"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"nodeSelector": {"a.b/c": "x"}}}}]},
                 "tasks[0].template.spec.nodeSelector[a.b/c]",
                 "patch.jobSpec.tasks[0].template.spec.nodeSelector[a.b/c]", id="label-key-with-dots"),
    pytest.param({"volumes": [{"mountPath": "/data", "volumeClaimName": "Bad"}]}, "volumes[0].volumeClaimName",
                 "patch.jobSpec.volumes[0].volumeClaimName", id="matched-volume-replaced-whole"),
    pytest.param({"volumes": [{"mountPath": "/ckpt", "volumeClaimName": "Bad"}]}, "volumes[1].volumeClaimName",
                 "patch.jobSpec.volumes[0].volumeClaimName", id="appended-volume"),
    pytest.param({"plugins": {"svc": ["--x"]}}, "plugins.svc[1]", "patch.jobSpec.plugins.svc", id="plugin-argument"),
    pytest.param({"tasks": [{"name": "ps", "template": {"spec": {"affinity": {"nodeAffinity": {}}}}}]},
                 "tasks[0].template.spec.affinity.nodeAffinity",
                 "patch.jobSpec.tasks[0].template.spec.affinity.nodeAffinity", id="atomic-section"),
    pytest.param({"queue": "gpu"}, "tasks[9].name", None, id="no-such-merged-field"),
])
def test_patch_origin(patch: Obj, merged_path: str, origin: str | None) -> None:
    assert T.patch_origin(TEMPLATE, patch, T.apply_patch(TEMPLATE, patch), merged_path) == origin


def test_patch_origin_of_the_keyless_task_of_a_one_task_template() -> None:
    one = {"tasks": [task("main", container("main"))]}
    patch = {"tasks": [{"template": {"spec": {"containers": [{"name": "main", "image": "Bad Image"}]}}}]}
    got = T.patch_origin(one, patch, T.apply_patch(one, patch), "tasks[0].template.spec.containers[0].image")
    assert got == "patch.jobSpec.tasks[0].template.spec.containers[0].image"


GEN = '{"items": [{"name": "a"}, {"name": "b"}], "meta": {"runs": [[1, 2], [3]]}, "n": 2}'


@pytest.mark.parametrize("path, expected", [
    pytest.param(("items",), [{"name": "a"}, {"name": "b"}], id="field"),
    pytest.param(("meta", "runs"), [[1, 2], [3]], id="nested-field"),
    pytest.param(("meta", "runs", "1"), [3], id="list-index"),
])
def test_parse_items_at_a_path(path: tuple[str, ...], expected: list) -> None:
    """withParam: "{{outputs.gen.items}}": the list under a field (or an index) of a JSON output."""
    assert T.parse_items(GEN, "withParam of flow each", path, "outputs.gen") == expected


@pytest.mark.parametrize("text, path, message", [
    pytest.param(GEN, (), "withParam of flow each: expected a JSON list, got object: '" + GEN[:80] + "' (a list "
                 'under a field is looped over as withParam: "{{outputs.gen.items}}")', id="object-holding-a-list"),
    pytest.param('{"n": 1}', (), "withParam of flow each: expected a JSON list, got object: '{\"n\": 1}'",
                 id="object-without-a-list"),
    pytest.param(GEN, ("itemz",), "withParam of flow each: outputs.gen has no field 'itemz' (object; its fields: "
                 "items, meta, n)", id="missing-field"),
    pytest.param(GEN, ("meta", "runs", "5"), "withParam of flow each: outputs.gen.meta.runs has no element '5' "
                 "(array; 2 elements)", id="index-out-of-range"),
    pytest.param(GEN, ("n", "x"), "withParam of flow each: outputs.gen.n has no field 'x' (number; '2')",
                 id="field-of-a-number"),
    pytest.param(GEN, ("n",), "withParam of flow each: expected a JSON list at outputs.gen.n, got number: '2'",
                 id="not-a-list-at-the-path"),
    pytest.param(GEN, ("meta",), "withParam of flow each: expected a JSON list at outputs.gen.meta, got object: "
                 "'{\"runs\":[[1,2],[3]]}' (a list under a field is looped over as withParam: "
                 '"{{outputs.gen.meta.runs}}")', id="object-at-the-path"),
])
def test_parse_items_at_a_path_rejects(text: str, path: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError) as info:
        T.parse_items(text, "withParam of flow each", path, "outputs.gen")
    assert str(info.value) == message
