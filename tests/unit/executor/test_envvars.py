"""Environment resolution and $(VAR) expansion, as the kubelet does them (pure functions)."""
import pytest

from vclite.executor import envvars

POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "labels": {"app": "web"},
                    "annotations": {"a.b/c": "note"}},
       "spec": {"nodeName": "local", "containers": [{"name": "c", "command": ["true"]}]}}
CMS = {"cfg": {"data": {"k": "v", "other": "o"}, "binaryData": {"bin": "aGk="}},
       "secret/creds": {"binaryData": {"token": "czNjcjN0", "user": "YWxpY2U="}}}   # a Secret's data, as passed in


@pytest.mark.parametrize("text, expected", [
    pytest.param("plain", "plain", id="no-dollar"),
    pytest.param("$(A)", "1", id="defined"),
    pytest.param("x$(A)y$(B)z", "x1y2z", id="two-refs"),
    pytest.param("$(NOPE)", "$(NOPE)", id="undefined-kept"),
    pytest.param("$$(A)", "$(A)", id="escaped"),
    pytest.param("$$", "$", id="double-dollar"),
    pytest.param("$A", "$A", id="shell-style-untouched"),
    pytest.param("$(A", "$(A", id="unclosed"),
    pytest.param("end$", "end$", id="trailing-dollar"),
    pytest.param("$()", "$()", id="empty-name-undefined"),
])
def test_expand(text, expected):
    assert envvars.expand(text, {"A": "1", "B": "2"}) == expected


@pytest.mark.parametrize("item, expected", [
    pytest.param({"name": "X", "value": "lit"}, "lit", id="literal"),
    pytest.param({"name": "X", "value": "$(BASE)/data"}, "/pod/data", id="expands-injected"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, "p", id="name"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}, "ns", id="namespace"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}}, "u-1", id="uid"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}, "web", id="label"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['a.b/c']"}}}, "note",
                 id="annotation"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['none']"}}}, "", id="no-label"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}, "local", id="node"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}, "127.0.0.1", id="pod-ip"),
    pytest.param({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}, "v", id="cm-key"),
    pytest.param({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "bin"}}}, "hi", id="cm-binary"),
    pytest.param({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k", "optional": True}}},
                 None, id="cm-optional-missing"),
    pytest.param({"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}, "s3cr3t",
                 id="secret-key"),
    pytest.param({"name": "X", "valueFrom": {"secretKeyRef": {"name": "cfg", "key": "k", "optional": True}}}, None,
                 id="a ConfigMap is not a Secret"),
    pytest.param({"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "no", "optional": True}}},
                 None, id="secret-optional-key-missing"),
])
def test_env_value(item, expected):
    env = envvars.container_env(POD, {"env": [item]}, CMS, {"BASE": "/pod"})
    assert env.get("X") == expected


@pytest.mark.parametrize("item, fragment", [
    pytest.param({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k"}}},
                 'configmap "gone" not found', id="cm-missing"),
    pytest.param({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "nokey"}}},
                 "couldn't find key nokey in ConfigMap ns/cfg", id="cm-key-missing"),
    pytest.param({"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}, 'secret "s" not found',
                 id="secret-missing"),
    pytest.param({"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}},
                 "couldn't find key k in Secret ns/creds", id="secret-key-missing"),
    pytest.param({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}}, "not supported",
                 id="bad-field"),
    pytest.param({"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}, "not supported",
                 id="resource-field"),
])
def test_env_errors(item, fragment):
    with pytest.raises(envvars.ConfigError) as ei:
        envvars.container_env(POD, {"env": [item]}, CMS)
    assert fragment in ei.value.message


def test_env_order_envfrom_then_env_and_earlier_vars_only():
    container = {"envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CM_"}],
                 "env": [{"name": "B", "value": "$(A)"}, {"name": "A", "value": "a"},
                         {"name": "C", "value": "$(A)+$(CM_k)"}, {"name": "CM_other", "value": "mine"}]}
    env = envvars.container_env(POD, container, CMS)
    assert env["B"] == "$(A)"          # A was not defined yet when B was resolved
    assert env["C"] == "a+v"
    assert env["CM_other"] == "mine"   # env wins over envFrom
    assert env["CM_bin"] == "hi"


def test_env_from_a_secret():
    env = envvars.container_env(POD, {"envFrom": [{"secretRef": {"name": "creds"}, "prefix": "S_"},
                                                  {"secretRef": {"name": "gone", "optional": True}}]}, CMS)
    assert (env["S_token"], env["S_user"]) == ("s3cr3t", "alice")
    with pytest.raises(envvars.ConfigError, match='secret "gone" not found'):
        envvars.container_env(POD, {"envFrom": [{"secretRef": {"name": "gone"}}]}, CMS)


def test_argv_is_command_plus_args_expanded():
    c = {"command": ["sh", "-c"], "args": ["echo $(A) $$(A) $HOME"]}
    assert envvars.argv(c, {"A": "1"}) == ["sh", "-c", "echo 1 $(A) $HOME"]


@pytest.mark.parametrize("containers, init, missing, says", [
    pytest.param([{"name": "a", "command": ["true"]}], [], [], "", id="all-have-commands"),
    pytest.param([{"name": "a", "args": ["x"]}], [], ["a"], 'container "a" has args but no command:', id="args-only"),
    pytest.param([{"name": "a", "command": ["true"]}], [{"name": "i", "image": "busybox"}], ["i"],
                 'container "i" has no command:', id="init"),
    pytest.param([{"name": "a"}, {"name": "b", "args": ["x"]}], [], ["a", "b"],
                 'containers "a", "b" have no command:', id="two"),
])
def test_missing_commands(containers, init, missing, says):
    pod = {"spec": {"containers": containers, "initContainers": init}}
    assert envvars.missing_commands(pod) == missing
    if missing:
        msg = envvars.no_command_message(pod, missing)
        assert msg.startswith(says) and "cannot run an image's entrypoint" in msg


def test_referenced_config_maps():
    pod = {"spec": {"containers": [
        {"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "a", "key": "k", "optional": True}}}],
         "envFrom": [{"configMapRef": {"name": "b"}}]}],
        "volumes": [{"name": "v", "configMap": {"name": "a"}}, {"name": "e", "emptyDir": {}},
                    {"name": "s", "secret": {"secretName": "a", "optional": True}}]}}
    assert envvars.referenced_config_maps(pod) == {"a": False, "b": False, "secret/a": True}
