"""Kubeconfig resolution: which file, which context, which credentials."""
import base64
import pathlib
import sys

import pytest
import yaml

from vclite.kube import kubeconfig

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def doc(current="c1", clusters=None, users=None, contexts=None):
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [{"name": n, "cluster": c} for n, c in (clusters or {"k1": {"server": "https://h1:6443"}}).items()],
        "users": [{"name": n, "user": u} for n, u in (users or {"u1": {"token": "t1"}}).items()],
        "contexts": [{"name": n, "context": c} for n, c in
                     (contexts or {"c1": {"cluster": "k1", "user": "u1"}}).items()],
    }


def write(path: pathlib.Path, data) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


# ---- which file ------------------------------------------------------------------------------------
@pytest.mark.parametrize("explicit, env, existing, want", [
    pytest.param("/x/explicit", {"KUBECONFIG": "a"}, ["a", ".vclite/kubeconfig"], ["/x/explicit"], id="explicit-wins"),
    pytest.param(None, {"KUBECONFIG": "a:b:missing"}, ["a", "b", ".vclite/kubeconfig"], ["a", "b"],
                 id="KUBECONFIG-list-existing-only"),
    pytest.param(None, {}, [".vclite/kubeconfig", ".kube/config"], [".vclite/kubeconfig"], id="vclite-server-next"),
    pytest.param(None, {"VCLITE_DATA": "data"}, ["data/kubeconfig", ".vclite/kubeconfig"], ["data/kubeconfig"],
                 id="VCLITE_DATA-dir"),
    pytest.param(None, {}, [".kube/config"], [".kube/config"], id="kube-config-last"),
    pytest.param(None, {}, [], [], id="nothing"),
])
def test_candidate_paths(tmp_path, explicit, env, existing, want):
    for rel in existing:
        write(tmp_path / rel, {})
    env = {k: ":".join(str(tmp_path / p) for p in v.split(":")) for k, v in env.items()}
    got = kubeconfig.candidate_paths(explicit, env, tmp_path)
    assert got == [pathlib.Path(w) if w.startswith("/") else tmp_path / w for w in want]


# ---- what it says ----------------------------------------------------------------------------------
def resolve(tmp_path, data, context=None, master=None):
    path = write(tmp_path / "config", data)
    return kubeconfig.load(str(path), master=master, context=context, env={}, home=tmp_path)


@pytest.mark.parametrize("data, context, master, want", [
    pytest.param(doc(), None, None, {"server": "https://h1:6443", "token": "t1", "context": "c1"}, id="current-context"),
    pytest.param(doc(contexts={"c1": {"cluster": "k1", "user": "u1"}, "c2": {"cluster": "k2", "user": "u2",
                                                                            "namespace": "team"}},
                     clusters={"k1": {"server": "https://h1"}, "k2": {"server": "http://h2:8080/"}},
                     users={"u1": {"token": "t1"}, "u2": {"username": "me", "password": "pw"}}),
                 "c2", None, {"server": "http://h2:8080", "token": None, "username": "me", "password": "pw",
                              "namespace": "team"}, id="explicit-context-basic-auth-trailing-slash"),
    pytest.param(doc(), None, "http://127.0.0.1:1234", {"server": "http://127.0.0.1:1234", "token": "t1"},
                 id="master-overrides-server-keeps-credentials"),
    pytest.param(doc(clusters={"k1": {"server": "https://h", "insecure-skip-tls-verify": True,
                                      "tls-server-name": "api.internal"}}), None, None,
                 {"insecure": True, "tls_server_name": "api.internal"}, id="insecure-and-server-name"),
    pytest.param(doc(clusters={"k1": {"server": "https://h", "certificate-authority-data": b64(PEM)}},
                     users={"u1": {"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY")}}),
                 None, None, {"ca_data": PEM, "client_cert": b"CERT", "client_key": b"KEY", "token": None},
                 id="inline-certificates"),
    pytest.param(doc(users={"u1": {"auth-provider": {"name": "oidc", "config": {"id-token": "idt"}}}}), None, None,
                 {"token": "idt"}, id="auth-provider-id-token"),
    pytest.param(doc(current="", contexts={"only": {"cluster": "k1", "user": "u1"}}), None, None,
                 {"context": "only"}, id="single-context-without-current"),
])
def test_resolve(tmp_path, data, context, master, want):
    cfg = resolve(tmp_path, data, context, master)
    assert {k: getattr(cfg, k) for k in want} == want


def test_files_named_relative_to_the_kubeconfig(tmp_path):
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.crt").write_bytes(PEM)
    (tmp_path / "pki" / "token").write_text("from-file\n")
    data = doc(clusters={"k1": {"server": "https://h", "certificate-authority": "pki/ca.crt"}},
               users={"u1": {"tokenFile": "pki/token"}})
    cfg = resolve(tmp_path, data)
    assert (cfg.ca_data, cfg.token) == (PEM, "from-file")


@pytest.mark.parametrize("data, context, message", [
    pytest.param(doc(current="", contexts={"c1": {"cluster": "k1", "user": "u1"}, "c2": {"cluster": "k1"}}), None,
                 "no current-context", id="no-current-context-several"),
    pytest.param(doc(), "nope", 'context "nope" is not defined', id="unknown-context"),
    pytest.param(doc(contexts={"c1": {"cluster": "gone", "user": "u1"}}), None,
                 'names cluster "gone", which is not defined', id="unknown-cluster"),
    pytest.param(doc(clusters={"k1": {}}), None, 'cluster "k1" has no server address', id="no-server"),
    pytest.param(doc(users={"u1": {"auth-provider": {"name": "gcp", "config": {}}}}), None,
                 'auth-provider "gcp" without an id-token is not supported', id="auth-provider-unsupported"),
    pytest.param(doc(clusters={"k1": {"server": "https://h", "certificate-authority-data": "!!notbase64"}}), None,
                 "certificate-authority-data: not valid base64", id="bad-base64"),
    pytest.param(doc(clusters={"k1": {"server": "https://h", "certificate-authority": "missing.crt"}}), None,
                 "certificate-authority: cannot read", id="missing-ca-file"),
])
def test_resolve_errors(tmp_path, data, context, message):
    with pytest.raises(kubeconfig.ConfigError, match=message):
        resolve(tmp_path, data, context)


def test_kubeconfig_list_merges_first_definition_wins(tmp_path):
    first = write(tmp_path / "a", doc(current="", users={"u1": {"token": "first"}}, contexts={},
                                      clusters={"k1": {"server": "https://first"}}))
    second = write(tmp_path / "b", doc(current="c1", users={"u1": {"token": "second"}},
                                       clusters={"k1": {"server": "https://second"}}))
    cfg = kubeconfig.load(env={"KUBECONFIG": f"{first}:{second}"}, home=tmp_path)
    assert (cfg.server, cfg.token, cfg.context) == ("https://first", "first", "c1")


def test_vclite_server_kubeconfig_is_the_default(tmp_path):
    write(tmp_path / ".vclite" / "kubeconfig", doc(clusters={"k1": {"server": "https://127.0.0.1:6553"}}))
    write(tmp_path / ".kube" / "config", doc(clusters={"k1": {"server": "https://cluster"}}))
    assert kubeconfig.load(env={}, home=tmp_path).server == "https://127.0.0.1:6553"


def test_nothing_found_says_what_to_do(tmp_path):
    with pytest.raises(kubeconfig.ConfigError, match="no kubeconfig found: start `vcctl server`") as e:
        kubeconfig.load(env={}, home=tmp_path)
    # (a `vcctl jobflow suspend` from a second terminal reaches a `vcctl run` only with --listen: the message says so)
    assert str(e.value).endswith("(`vcctl run` serves no API unless run with --listen HOST:PORT: then pass -k with "
                                 "the kubeconfig it prints)")


def test_master_alone_is_enough(tmp_path):
    cfg = kubeconfig.load(master="http://127.0.0.1:8080/", env={}, home=tmp_path)
    assert (cfg.server, cfg.token, cfg.source) == ("http://127.0.0.1:8080", None, "--master")


def test_in_cluster_service_account(tmp_path):
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_bytes(PEM)
    (tmp_path / "namespace").write_text("jobs")
    cfg = kubeconfig.in_cluster({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}, tmp_path)
    assert (cfg.server, cfg.token, cfg.ca_data, cfg.namespace) == ("https://10.0.0.1:443", "sa-token", PEM, "jobs")
    assert kubeconfig.in_cluster({}, tmp_path) is None


@pytest.mark.parametrize("data, message", [
    pytest.param(b"clusters: [unclosed", "kubeconfig {path}:1:20 is not valid YAML: expected ',' or ']', but got "
                 "'<stream end>' (while parsing a flow sequence)", id="not-yaml"),
    pytest.param(b"clusters: []\nusers: \xff\n", "kubeconfig {path} is not UTF-8 text: invalid start byte at byte 20",
                 id="not-utf-8"),
])
def test_an_unreadable_kubeconfig_is_a_one_line_config_error(tmp_path, data, message):
    path = tmp_path / "bad"
    path.write_bytes(data)
    with pytest.raises(kubeconfig.ConfigError) as caught:
        kubeconfig.load(str(path), env={}, home=tmp_path)
    assert str(caught.value) == message.format(path=path)


# ---- exec credential plugins (a real plugin process) ------------------------------------------------
PLUGIN = """
import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": sys.argv[1] + "@" + info["spec"]["cluster"]["server"] + os.environ["EXTRA"]}}))
"""


def test_exec_plugin_token(tmp_path):
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    spec = {"command": sys.executable, "args": [str(script), "tok"], "env": [{"name": "EXTRA", "value": "!"}]}
    assert kubeconfig.run_exec(spec, "https://h") == ("tok@https://h!", None, None)


def test_exec_plugin_failure_is_reported(tmp_path):
    spec = {"command": sys.executable, "args": ["-c", "import sys; print('denied', file=sys.stderr); sys.exit(3)"]}
    with pytest.raises(kubeconfig.ConfigError, match="exited 3: denied"):
        kubeconfig.run_exec(spec, "https://h")


def test_exec_plugin_output_must_be_an_exec_credential(tmp_path):
    spec = {"command": sys.executable, "args": ["-c", "print('hello')"]}
    with pytest.raises(kubeconfig.ConfigError, match="printed no ExecCredential"):
        kubeconfig.run_exec(spec, "https://h")
