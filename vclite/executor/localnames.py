"""Pods' DNS names, as the local executor's processes can reach them. Pure functions.

On a cluster, a pod with `spec.subdomain` (Volcano's `svc` plugin sets it to the vcjob's name, and
`spec.hostname` to the pod's) is `<hostname>.<subdomain>` in the cluster's DNS — also `….<namespace>`,
`….<namespace>.svc` and `….<namespace>.svc.cluster.local` — and the job plugins hand those names to the
containers: `MASTER_ADDR` (pytorch), `TF_CONFIG` (tensorflow), `MPI_HOST` (mpi), `VC_<TASK>_HOSTS` and the
`/etc/volcano/<task>.host` files (svc), pytorch's wait-for-master init container's command line.

Locally every pod is 127.0.0.1 and nothing serves those names, so a DDP worker could not resolve its
master. The executor stands in for the cluster's DNS the one way a local process sees it: where a
container's environment, its command line or a ConfigMap volume's file names an existing pod (by its
hostname — `spec.hostname`, else its name — and subdomain), the process is given 127.0.0.1 instead. The
pod object keeps the names (`kubectl get pod -o yaml` shows what Volcano writes). A name is replaced
whole: `w-0.job:2222` becomes `127.0.0.1:2222`; `w-0.jobs`, `x.w-0.job`, `w-0.job.other` (a namespace
with no such pod) and names of pods that do not exist are left as written.
"""
from __future__ import annotations

import re
from typing import Callable, Collection, Mapping

LOCAL_IP = "127.0.0.1"
_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
_NAME_CHAR = r"[A-Za-z0-9_-]"
# <host>.<subdomain>[.<namespace>[.svc[.cluster.local[.]]]], not part of a longer dotted name
_NAME = re.compile(rf"(?<![A-Za-z0-9_.-])({_LABEL})\.({_LABEL})(?:\.({_LABEL})(?:\.svc(?:\.cluster\.local\.?)?)?)?"
                   rf"(?!{_NAME_CHAR})(?!\.{_NAME_CHAR})", re.IGNORECASE)

HostsOf = Callable[[str, str], Collection[str]]   # (namespace, subdomain) -> the hostnames of its pods (lower case)


def hostname(pod: Mapping) -> str:
    """The pod's hostname in its subdomain: `spec.hostname`, else its name (lower case, as DNS compares)."""
    spec = pod.get("spec") or {}
    host = spec.get("hostname") if isinstance(spec, dict) else None
    return str(host or (pod.get("metadata") or {}).get("name") or "").lower()


def domain_of(pod: Mapping) -> tuple[str, str] | None:
    """(namespace, subdomain) of a pod that has a subdomain, else None (an informer index)."""
    spec = pod.get("spec")
    sub = spec.get("subdomain") if isinstance(spec, dict) else None
    if not sub or not isinstance(sub, str):
        return None
    return (pod.get("metadata") or {}).get("namespace") or "", sub.lower()


def localize(text: str, namespace: str, hosts_of: HostsOf) -> str:
    """`text` with every name of an existing pod (`hosts_of`) replaced by 127.0.0.1; a name without a
    namespace is one of `namespace`'s."""
    if "." not in text:
        return text

    def one(m: re.Match[str]) -> str:
        host, sub, ns = m.group(1).lower(), m.group(2).lower(), m.group(3)
        return LOCAL_IP if host in hosts_of(ns.lower() if ns else namespace, sub) else m.group(0)

    return _NAME.sub(one, text)


def localize_bytes(data: bytes, namespace: str, hosts_of: HostsOf) -> bytes:
    """`localize` of a file's contents when they are UTF-8 text; anything else as it is."""
    if b"." not in data:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    out = localize(text, namespace, hosts_of)
    return data if out == text else out.encode("utf-8")
