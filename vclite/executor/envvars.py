"""A container's environment and command line, resolved as the kubelet resolves them. Pure functions.

- `env` entries in order after `envFrom`: literal `value`; `valueFrom.fieldRef` (metadata.name,
  namespace, uid, labels['k'], annotations['k'], spec.nodeName, spec.serviceAccountName,
  status.podIP / hostIP -> 127.0.0.1); `valueFrom.configMapKeyRef` / `secretKeyRef` and `envFrom`
  `configMapRef` / `secretRef` from the ConfigMaps and Secrets the shell passes in (one mapping:
  a Secret under `secret/<name>` — a ConfigMap's name cannot hold `/` — as `binaryData`;
  `optional: true` skips a missing one). resourceFieldRef is not available locally: it raises
  ConfigError, as does a missing non-optional ConfigMap, Secret or key (the kubelet's words).
- `$(VAR)` expansion exactly as Kubernetes (third_party/forked/golang/expansion): `$$` is `$`,
  `$(NAME)` is NAME's value if defined, else left as written. An env value sees the variables
  defined before it (and the injected ones: VC_POD_DIR, …); command and args see them all.
- A container runs `command + args`; there is no image here, so a container without `command`
  cannot run (`missing_commands`).
This module does no I/O and knows nothing of processes or the API client.
"""
from __future__ import annotations

import base64
import re
from typing import Any, Mapping

Obj = dict[str, Any]

LOCAL_IP = "127.0.0.1"
CONFIG_ERROR = "CreateContainerConfigError"
NO_COMMAND = "NoCommand"

_META_MAP = re.compile(r"metadata\.(labels|annotations)\[['\"](.+)['\"]\]")
_SIMPLE_FIELDS = {
    "metadata.name": lambda p: p.get("metadata", {}).get("name", ""),
    "metadata.namespace": lambda p: p.get("metadata", {}).get("namespace", ""),
    "metadata.uid": lambda p: p.get("metadata", {}).get("uid", ""),
    "spec.nodeName": lambda p: p.get("spec", {}).get("nodeName", ""),
    "spec.serviceAccountName": lambda p: p.get("spec", {}).get("serviceAccountName", "") or "default",
    "status.podIP": lambda p: LOCAL_IP,
    "status.podIPs": lambda p: LOCAL_IP,
    "status.hostIP": lambda p: LOCAL_IP,
    "status.hostIPs": lambda p: LOCAL_IP,
}


class ConfigError(Exception):
    """A container's configuration cannot be resolved (the kubelet's CreateContainerConfigError)."""

    reason = CONFIG_ERROR

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def expand(text: str, mapping: Mapping[str, str]) -> str:
    """Kubernetes `$(VAR)` expansion of `text` against `mapping`."""
    if "$" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "$" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
            else:
                name = text[i + 2:close]
                out.append(mapping[name] if name in mapping else f"$({name})")
                i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def field_ref(pod: Obj, path: str) -> str:
    """The value of a downward-API fieldPath for `pod`; ConfigError if the path is not supported."""
    if path in _SIMPLE_FIELDS:
        return str(_SIMPLE_FIELDS[path](pod) or "")
    m = _META_MAP.fullmatch(path)
    if m:
        return str((pod.get("metadata", {}).get(m[1]) or {}).get(m[2], ""))
    raise ConfigError(f"fieldRef {path!r} is not supported")


def config_map_data(cm: Obj) -> dict[str, bytes]:
    """A ConfigMap's `data` and `binaryData` as bytes by key."""
    out = {k: str(v).encode() for k, v in (cm.get("data") or {}).items()}
    for k, v in (cm.get("binaryData") or {}).items():
        out[k] = base64.b64decode(v)
    return out


SECRET_PREFIX = "secret/"


def source_name(ref_kind: str, name: str) -> str:
    """The key of a ConfigMap (`configMap`) or Secret (`secret`) among a pod's config sources."""
    return SECRET_PREFIX + name if ref_kind == "secret" else name


def _source(sources: Mapping[str, Obj], ref_kind: str, name: str, optional: bool) -> Obj | None:
    found = sources.get(source_name(ref_kind, name))
    if found is None and not optional:
        raise ConfigError(f'{ref_kind.lower()} "{name}" not found')
    return found


def _key_value(namespace: str, ref: Obj, sources: Mapping[str, Obj], ref_kind: str) -> str | None:
    name, key, optional = ref.get("name", ""), ref.get("key", ""), bool(ref.get("optional"))
    found = _source(sources, ref_kind, name, optional)
    if found is None:
        return None
    data = config_map_data(found)
    if key not in data:
        if optional:
            return None
        raise ConfigError(f"couldn't find key {key} in {'Secret' if ref_kind == 'secret' else 'ConfigMap'} "
                          f"{namespace}/{name}")
    return data[key].decode(errors="replace")


def _env_from(container: Obj, sources: Mapping[str, Obj]) -> dict[str, str]:
    out: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix") or ""
        ref_kind, ref = ("secret", source["secretRef"]) if "secretRef" in source else \
            ("configmap", source.get("configMapRef"))
        ref = ref or {}
        found = _source(sources, ref_kind, ref.get("name", ""), bool(ref.get("optional")))
        if found is None:
            continue
        for k, v in config_map_data(found).items():
            if "=" not in k:
                out[prefix + k] = v.decode(errors="replace")
    return out


def _env_value(pod: Obj, item: Obj, sources: Mapping[str, Obj]) -> str | None:
    src = item.get("valueFrom")
    if not src:
        return str(item.get("value", "") if item.get("value") is not None else "")
    if "fieldRef" in src:
        return field_ref(pod, (src["fieldRef"] or {}).get("fieldPath", ""))
    namespace = pod.get("metadata", {}).get("namespace", "")
    if "configMapKeyRef" in src:
        return _key_value(namespace, src["configMapKeyRef"] or {}, sources, "configmap")
    if "secretKeyRef" in src:
        return _key_value(namespace, src["secretKeyRef"] or {}, sources, "secret")
    raise ConfigError(f"env {item.get('name')}: valueFrom {sorted(src)} is not supported by the local executor")


def container_env(pod: Obj, container: Obj, config_maps: Mapping[str, Obj],
                  injected: Mapping[str, str] | None = None) -> dict[str, str]:
    """The container's variables: `injected` first, then envFrom, then env (later wins), expanded.

    `injected` (VC_POD_DIR, …) can be referenced as `$(NAME)`, and overridden by the pod's env."""
    env: dict[str, str] = dict(injected or {})
    env.update(_env_from(container, config_maps))
    for item in container.get("env") or []:
        name = item.get("name")
        if not name:
            continue
        value = _env_value(pod, item, config_maps)
        if value is None:
            continue
        env[name] = expand(value, env) if not item.get("valueFrom") else value
    return env


def argv(container: Obj, env: Mapping[str, str]) -> list[str]:
    """`command + args` with `$(VAR)` expanded against `env`."""
    return [expand(str(a), env) for a in list(container.get("command") or []) + list(container.get("args") or [])]


def missing_commands(pod: Obj) -> list[str]:
    """Names of init and app containers that have no `command` (the local executor cannot run them)."""
    spec = pod.get("spec") or {}
    return [c.get("name", "") for c in list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
            if not c.get("command")]


def no_command_message(pod: Obj, names: list[str]) -> str:
    spec = pod.get("spec") or {}
    by_name = {c.get("name"): c for c in list(spec.get("initContainers") or []) + list(spec.get("containers") or [])}
    quoted = ", ".join(f'"{n}"' for n in names)
    subject = f"container {quoted} has" if len(names) == 1 else f"containers {quoted} have"
    what = "args but no command" if all((by_name.get(n) or {}).get("args") for n in names) else "no command"
    return (f"{subject} {what}: vclite runs containers as local processes and "
            f"cannot run an image's entrypoint; give each container a command, "
            f"e.g. command: [sh, -c, \"...\"]")


def referenced_config_maps(pod: Obj) -> dict[str, bool]:
    """The ConfigMaps and Secrets (`secret/<name>`) the pod reads (env, envFrom, volumes) ->
    whether every reference is optional."""
    spec = pod.get("spec") or {}
    refs: dict[str, bool] = {}

    def note(ref: Obj | None, ref_kind: str = "configmap", name_field: str = "name") -> None:
        if ref and ref.get(name_field):
            key = source_name(ref_kind, ref[name_field])
            refs[key] = refs.get(key, True) and bool(ref.get("optional"))

    for c in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        for item in c.get("env") or []:
            note((item.get("valueFrom") or {}).get("configMapKeyRef"))
            note((item.get("valueFrom") or {}).get("secretKeyRef"), "secret")
        for source in c.get("envFrom") or []:
            note(source.get("configMapRef"))
            note(source.get("secretRef"), "secret")
    for vol in spec.get("volumes") or []:
        note(vol.get("configMap"))
        note(vol.get("secret"), "secret", "secretName")
    return refs
