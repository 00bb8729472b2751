"""Volcano's `ssh` job plugin: one key pair per job, in the Secret `<job>-ssh`, mounted into every pod.

Flags (Go syntax): `--ssh-key-file-path` (default /root/.ssh), `--ssh-private-key` /
`--ssh-public-key` (use these instead of a generated RSA 2048 key), `--ssh-port` (default 22; out
of 1..65535 falls back to 22). The Secret holds `id_rsa` (PEM, "RSA PRIVATE KEY"), `id_rsa.pub` and
`authorized_keys` (OpenSSH form) and `config`: `StrictHostKeyChecking no`, `UserKnownHostsFile
/dev/null`, and a `Host <pod>` / `HostName <pod>.<job>` / `Port` entry per pod (one per task when
its template sets a hostname). Each container and init container mounts it at the key path (items
under `.ssh/`, mode 0600; 0644 when the path is not /root/.ssh). The Secret is the job's: made when
the job is first synced, deleted with the job's other plugin objects.
"""
from __future__ import annotations

import base64
from typing import Any

from vclite.api import batch, meta
from vclite.lib import goflags

Obj = dict[str, Any]
NAME = "ssh"
ABSOLUTE_PATH = "/root/.ssh"
RELATIVE_PATH = ".ssh"
KEYS = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")
FLAGS = batch.PLUGIN_FLAGS[NAME]   # (ssh-key-file-path defaults to ABSOLUTE_PATH)


def flags(args: Any) -> dict[str, Any]:
    f = goflags.parse(args if isinstance(args, list) else [], FLAGS)[0]
    if not 0 < f["ssh-port"] <= 65535:
        f["ssh-port"] = 22
    return f


def secret_name(job: Obj) -> str:
    return f"{meta.name(job)}-{NAME}"


def ssh_config(job: Obj, port: int) -> str:
    out = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
    for task in (job.get("spec") or {}).get("tasks") or []:
        tspec = (task.get("template") or {}).get("spec") or {}
        for i in range(int(task.get("replicas", 0) or 0)):
            host = tspec.get("hostname") or f"{meta.name(job)}-{task.get('name', '')}-{i}"
            out += f"Host {host}\n  HostName {host}.{tspec.get('subdomain') or meta.name(job)}\n  Port {port}\n"
            if tspec.get("hostname"):
                break
    return out


def _generated_key_pair() -> tuple[bytes, bytes]:
    from cryptography.hazmat.primitives import serialization   # (only jobs with this plugin pay the import)
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private, public + b"\n"


def secret(job: Obj, args: Any) -> Obj:
    """The Secret `<job>-ssh` (a new key pair unless the flags give one)."""
    f = flags(args)
    if f["ssh-private-key"]:
        private, public = f["ssh-private-key"].encode(), f["ssh-public-key"].encode()
    else:
        private, public = _generated_key_pair()
    data = dict(zip(KEYS, (private, public, public, ssh_config(job, f["ssh-port"]).encode())))
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": secret_name(job), "namespace": meta.namespace(job),
                         "ownerReferences": [meta.owner_ref(job)]},
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}


def mount(pod: Obj, job: Obj, args: Any) -> None:
    """Volcano's mountRsaKey: the Secret as a volume, mounted (subPath .ssh) in every container."""
    f = flags(args)
    name = secret_name(job)
    mode = 0o600 if f["ssh-key-file-path"] == ABSOLUTE_PATH else 0o644
    spec = pod.setdefault("spec", {})
    spec["volumes"] = [*(spec.get("volumes") or []), {"name": name, "secret": {
        "secretName": name, "items": [{"key": k, "path": f"{RELATIVE_PATH}/{k}"} for k in KEYS],
        "defaultMode": mode}}]
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            c["volumeMounts"] = [*(c.get("volumeMounts") or []),
                                 {"mountPath": f["ssh-key-file-path"], "subPath": RELATIVE_PATH, "name": name}]
