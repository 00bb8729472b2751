"""Kubeconfig loading: which file, which context, and the connection settings it names.

Resolution order (as client-go's loading rules, plus the vclite server's own kubeconfig):
1. an explicit path (`vcctl -k/--kubeconfig`);
2. `$KUBECONFIG` (a `:`-separated list, merged: the first file that defines a cluster, user,
   context or current-context wins);
3. the kubeconfig `vcctl server` writes: `$VCLITE_DATA/kubeconfig` when `$VCLITE_DATA` is set,
   else `~/.vclite/kubeconfig` — if it exists;
4. `~/.kube/config`, if it exists;
5. in-cluster service-account credentials (`$KUBERNETES_SERVICE_HOST`), if present.
`-s/--master` overrides the server address of whatever was found (alone, it is enough).

Supported user credentials: bearer `token` / `tokenFile`, `username`/`password` (basic), client
certificates (`client-certificate[-data]`, `client-key[-data]`), `exec` credential plugins
(token or client certificate), and `auth-provider` configs that carry an `id-token` or
`access-token`. Cluster settings: `server`, `certificate-authority[-data]`,
`insecure-skip-tls-verify`, `tls-server-name`. Proxies are not supported.

Pure parsing (`resolve`) is separate from file reading (`load`). No network access here.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import os
import pathlib
import subprocess
from typing import Any, Mapping

import yaml

Obj = dict[str, Any]

IN_CLUSTER_DIR = pathlib.Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(Exception):
    """The kubeconfig is missing, unreadable, or names something it does not define."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Everything needed to reach one API server as one user."""

    server: str
    context: str = ""
    namespace: str = ""                    # the context's namespace ("" if none)
    token: str | None = None
    username: str | None = None
    password: str | None = None
    client_cert: bytes | None = None       # PEM
    client_key: bytes | None = None        # PEM
    ca_data: bytes | None = None           # PEM
    insecure: bool = False
    tls_server_name: str | None = None
    exec_spec: Obj | None = None           # users[].user.exec, run lazily by `credentials()`
    source: str = ""                       # where this came from (a path, "in-cluster", "--master")


def vclite_kubeconfig_path(env: Mapping[str, str], home: pathlib.Path) -> pathlib.Path:
    """Where `vcctl server` writes its kubeconfig."""
    data = env.get("VCLITE_DATA")
    return pathlib.Path(data) / "kubeconfig" if data else home / ".vclite" / "kubeconfig"


def candidate_paths(explicit: str | None, env: Mapping[str, str], home: pathlib.Path) -> list[pathlib.Path]:
    """The kubeconfig files to merge, in precedence order; only existing ones, except an
    explicit path (which must exist: reading it reports the error)."""
    if explicit:
        return [pathlib.Path(explicit).expanduser()]
    if env.get("KUBECONFIG"):
        return [pathlib.Path(p).expanduser() for p in env["KUBECONFIG"].split(os.pathsep) if p and
                pathlib.Path(p).expanduser().exists()]
    for path in (vclite_kubeconfig_path(env, home), home / ".kube" / "config"):
        if path.exists():
            return [path]
    return []


def _named(doc: Obj, section: str, field: str) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    for entry in doc.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") is not None:
            out.setdefault(str(entry["name"]), entry.get(field) or {})
    return out


def merge(docs: list[tuple[Obj, pathlib.Path]]) -> tuple[Obj, dict[str, dict[str, tuple[Obj, pathlib.Path]]]]:
    """Merge several kubeconfigs: first definition of each named entry wins. Returns the
    preferences (current-context) and per section name -> (entry, directory of its file)."""
    current = ""
    sections: dict[str, dict[str, tuple[Obj, pathlib.Path]]] = {"clusters": {}, "users": {}, "contexts": {}}
    fields = {"clusters": "cluster", "users": "user", "contexts": "context"}
    for doc, path in docs:
        if not current and doc.get("current-context"):
            current = str(doc["current-context"])
        for section, field in fields.items():
            for name, entry in _named(doc, section, field).items():
                sections[section].setdefault(name, (entry, path.parent))
    return {"current-context": current}, sections


def _read_file(value: Any, what: str, base: pathlib.Path) -> bytes:
    """A file a kubeconfig names; relative paths are relative to the kubeconfig's directory."""
    path = pathlib.Path(str(value)).expanduser()
    path = path if path.is_absolute() else base / path
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{what}: cannot read {path}: {exc.strerror}") from exc


def _data_or_file(entry: Obj, data_key: str, file_key: str, base: pathlib.Path) -> bytes | None:
    if entry.get(data_key):
        try:
            return base64.b64decode("".join(str(entry[data_key]).split()), validate=True)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{data_key}: not valid base64: {exc}") from exc
    if entry.get(file_key):
        return _read_file(entry[file_key], file_key, base)
    return None


def _user_token(user: Obj, base: pathlib.Path) -> str | None:
    if user.get("token"):
        return str(user["token"])
    if user.get("tokenFile"):
        return _read_file(user["tokenFile"], "tokenFile", base).decode().strip() or None
    provider = (user.get("auth-provider") or {}).get("config") or {}
    return provider.get("id-token") or provider.get("access-token") or None


def resolve(prefs: Obj, sections: dict[str, dict[str, tuple[Obj, pathlib.Path]]], context: str | None = None,
            master: str | None = None, source: str = "") -> Config:
    """The Config for `context` (default: current-context) of merged kubeconfig data."""
    name = context or prefs.get("current-context") or ""
    if not name:
        if len(sections["contexts"]) == 1:
            name = next(iter(sections["contexts"]))
        elif not master:
            raise ConfigError(f"{source}: no current-context is set; choose one with --context")
    ctx, _ = sections["contexts"].get(name, ({}, pathlib.Path(".")))
    if name and name not in sections["contexts"] and not master:
        raise ConfigError(f'{source}: context "{name}" is not defined')
    cluster_name, user_name = str(ctx.get("cluster") or ""), str(ctx.get("user") or "")
    cluster, cbase = sections["clusters"].get(cluster_name, ({}, pathlib.Path(".")))
    if cluster_name and cluster_name not in sections["clusters"] and not master:
        raise ConfigError(f'{source}: context "{name}" names cluster "{cluster_name}", which is not defined')
    user, ubase = sections["users"].get(user_name, ({}, pathlib.Path(".")))
    if user.get("auth-provider") and not _user_token(user, ubase):
        raise ConfigError(f'{source}: user "{user_name}": auth-provider '
                          f'"{user["auth-provider"].get("name")}" without an id-token is not supported')
    server = master or str(cluster.get("server") or "")
    if not server:
        raise ConfigError(f'{source}: cluster "{cluster_name}" has no server address')
    return Config(
        server=server.rstrip("/"), context=name, namespace=str(ctx.get("namespace") or ""),
        token=_user_token(user, ubase), username=user.get("username"), password=user.get("password"),
        client_cert=_data_or_file(user, "client-certificate-data", "client-certificate", ubase),
        client_key=_data_or_file(user, "client-key-data", "client-key", ubase),
        ca_data=_data_or_file(cluster, "certificate-authority-data", "certificate-authority", cbase),
        insecure=bool(cluster.get("insecure-skip-tls-verify")), tls_server_name=cluster.get("tls-server-name"),
        exec_spec=user.get("exec") or None, source=source)


def _read_yaml(path: pathlib.Path) -> Obj:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"kubeconfig {path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    except yaml.YAMLError as exc:   # one line: where, then what (PyYAML's text spans several lines)
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        raise ConfigError(f"kubeconfig {where} is not valid YAML: {what}" + (f" ({context})" if context else "")) \
            from exc
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"kubeconfig {path} is not a mapping")
    return doc


def in_cluster(env: Mapping[str, str], directory: pathlib.Path = IN_CLUSTER_DIR) -> Config | None:
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    token_path = directory / "token"
    if not host or not port or not token_path.exists():
        return None
    host = f"[{host}]" if ":" in host else host
    ca = directory / "ca.crt"
    ns = directory / "namespace"
    return Config(server=f"https://{host}:{port}", token=token_path.read_text().strip(),
                  ca_data=ca.read_bytes() if ca.exists() else None,
                  namespace=ns.read_text().strip() if ns.exists() else "", source="in-cluster")


def load(kubeconfig: str | None = None, master: str | None = None, context: str | None = None,
         env: Mapping[str, str] | None = None, home: pathlib.Path | None = None) -> Config:
    """The Config vcctl uses, following the resolution order in the module docstring."""
    env = os.environ if env is None else env
    home = pathlib.Path.home() if home is None else home
    paths = candidate_paths(kubeconfig, env, home)
    if not paths:
        found = in_cluster(env)
        if found is not None:
            return dataclasses.replace(found, server=master.rstrip("/")) if master else found
        if master:
            return Config(server=master.rstrip("/"), source="--master")
        raise ConfigError("no kubeconfig found: start `vcctl server` (it writes "
                          f"{vclite_kubeconfig_path(env, home)}), or pass -k/--kubeconfig or -s/--master "
                          "(`vcctl run` serves no API unless run with --listen HOST:PORT: then pass -k with the "
                          "kubeconfig it prints)")
    docs = [(_read_yaml(p), p) for p in paths]
    prefs, sections = merge(docs)
    return resolve(prefs, sections, context, master, source=":".join(str(p) for p in paths))


def run_exec(spec: Obj, server: str, env: Mapping[str, str] | None = None) -> tuple[str | None, bytes | None,
                                                                                      bytes | None]:
    """Run an exec credential plugin; its (token, client certificate PEM, client key PEM)."""
    command = spec.get("command")
    if not command:
        raise ConfigError("exec credential plugin without a command")
    full_env = dict(os.environ if env is None else env)
    for item in spec.get("env") or []:
        full_env[str(item.get("name"))] = str(item.get("value", ""))
    info = {"apiVersion": spec.get("apiVersion", "client.authentication.k8s.io/v1"), "kind": "ExecCredential",
            "spec": {"interactive": False, "cluster": {"server": server}}}
    full_env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    try:
        proc = subprocess.run([str(command), *map(str, spec.get("args") or [])], env=full_env,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"exec credential plugin {command}: {exc}") from exc
    if proc.returncode != 0:
        raise ConfigError(f"exec credential plugin {command} exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    try:
        status = json.loads(proc.stdout).get("status") or {}
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"exec credential plugin {command} printed no ExecCredential: {exc}") from exc
    cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
    return status.get("token"), cert.encode() if cert else None, key.encode() if key else None
