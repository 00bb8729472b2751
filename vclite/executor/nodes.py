"""The Node objects the local executor serves, sized from this host or from the `--nodes` option.

`host_node(name)` is a v1 Node as big as this machine (cpu = os.cpu_count(), memory = MemTotal,
110 pods, ephemeral-storage = its temporary filesystem's size), Ready, with every `nodeInfo` field a
kubelet writes (clients such as the official Python one refuse a Node without them); `stamped(node,
now, previous)` gives its conditions the times a kubelet's heartbeat writes.
`parse_nodes_option(value)` turns the CLI's `--nodes` value into Node objects; it accepts exactly
three forms (see NODES_HELP). Every node runs its pods on this same host: the
sizes are what the scheduler packs against, not a promise of isolation.
This module builds objects only: it never writes to the API and never starts processes.
"""
from __future__ import annotations

import datetime
import functools
import os
import platform
import re
import shutil
import tempfile
from typing import Any

from vclite import __version__
from vclite.admission import common, shapes, statuswrites
from vclite.api import core, quantity, yamlio
from vclite.executor import devices
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]

DEFAULT_PODS = 110
EPHEMERAL_STORAGE = "ephemeral-storage"
NAME_PREFIX = "local"
MAX_NODES = 100_000
_STANDARD = ("cpu", "memory", "pods", "ephemeral-storage")

NODES_HELP = """\
--nodes accepts one of:
  N                              N nodes named local-0 … local-<N-1>, each the size of this host,
                                 its GPUs shared out among them (e.g. --nodes 3)
  [COUNTx](RES,…)[+[COUNTx](RES,…)…]
                                 groups of nodes with the given sizes, named local-0, local-1, … in
                                 order; RES is name=quantity (cpu, memory, pods, ephemeral-storage,
                                 hugepages-*, or an extended resource such as nvidia.com/gpu);
                                 cpu, memory and ephemeral-storage default to this
                                 host's, pods to 110
                                 (e.g. --nodes '4x(cpu=8,memory=32Gi)+2x(cpu=32,nvidia.com/gpu=4)')
  PATH                           a YAML file of Node objects (kind: Node)
                                 (e.g. --nodes nodes.yaml; `--nodes -` reads it from
                                 standard input)"""


def _bad(value: str, why: str) -> ValueError:
    return ValueError(f"invalid --nodes value {value!r}: {why}\n{NODES_HELP}")


def host_cpu() -> str:
    return str(os.cpu_count() or 1)


def host_memory() -> str:
    """Total memory as a quantity: /proc/meminfo MemTotal (`…Ki`), else pages × page size."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1])}Ki"
    except (OSError, ValueError, IndexError):
        pass
    try:
        return str(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return "4Gi"


def _arch() -> str:
    m = platform.machine().lower()
    return {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(m, m or "unknown")


def _first_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _os_image() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        return ""


@functools.cache
def node_info() -> dict[str, str]:
    """A kubelet's `status.nodeInfo` for this host: every field the API requires, "" where unknown
    (kube-proxy does not run; the system UUID needs root to read)."""
    return {"machineID": _first_line("/etc/machine-id"), "systemUUID": "",
            "bootID": _first_line("/proc/sys/kernel/random/boot_id"), "kernelVersion": platform.release(),
            "osImage": _os_image(), "containerRuntimeVersion": f"vclite://{__version__}",
            "kubeletVersion": "vclite", "kubeProxyVersion": "", "operatingSystem": "linux",
            "architecture": _arch()}


def stamped(node_obj: Obj, now: str, previous: Obj | None = None) -> Obj:
    """`node_obj` whose conditions have the heartbeat time `now`; a condition keeps `previous`'s
    transition time while its status is the same, as a kubelet's heartbeat does (else `now`)."""
    before = {c.get("type"): c for c in ((previous or {}).get("status") or {}).get("conditions") or []}
    conditions = []
    for cond in (node_obj.get("status") or {}).get("conditions") or []:
        old = before.get(cond.get("type")) or {}
        moved = old.get("status") != cond.get("status") or not old.get("lastTransitionTime")
        conditions.append({**cond, "lastHeartbeatTime": now,
                           "lastTransitionTime": now if moved else old["lastTransitionTime"]})
    return {**node_obj, "status": {**(node_obj.get("status") or {}), "conditions": conditions}}


def unstamped(status: Obj | None) -> Obj:
    """A node's status without its conditions' times: what says whether it changed."""
    status = dict(status or {})
    status["conditions"] = [{k: v for k, v in c.items() if k not in ("lastHeartbeatTime", "lastTransitionTime")}
                            for c in status.get("conditions") or []]
    return status


def node(name: str, resources: dict[str, str]) -> Obj:
    """A Ready v1 Node named `name` whose capacity and allocatable are `resources` (strings)."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {core.HOSTNAME_LABEL: name, "kubernetes.io/os": "linux",
                                              "kubernetes.io/arch": _arch()}},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "vclite local executor is ready"}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "nodeInfo": dict(node_info()),
        },
    }


def host_ephemeral_storage() -> str:
    """Size of the filesystem pods write to (the temporary directory's), as a kubelet reports its
    root filesystem; "0" if it cannot be read."""
    try:
        return str(shutil.disk_usage(tempfile.gettempdir()).total)
    except OSError:
        return "0"


def host_resources() -> dict[str, str]:
    return {core.CPU: host_cpu(), core.MEMORY: host_memory(), core.PODS: str(DEFAULT_PODS),
            EPHEMERAL_STORAGE: host_ephemeral_storage()}


def host_node(name: str = "local", gpus: int | None = None) -> Obj:
    """A Node the size of this host: cpu = os.cpu_count(), memory = MemTotal, pods = 110,
    ephemeral-storage = the size of the temporary directory's filesystem, nvidia.com/gpu = its GPUs
    (devices.host_gpus; `gpus` of them when given) when it has some."""
    resources = host_resources()
    count = len(devices.host_gpus()) if gpus is None else gpus
    if count:
        resources[devices.GPU] = str(count)
    return node(name, resources)


def host_nodes(n: int) -> list[Obj]:
    """`--nodes N`: N nodes the size of this host, its GPUs shared out among them (4 GPUs, 2 nodes: 2 each; 4 GPUs,
    3 nodes: 2, 1, 1), since a GPU, unlike a cpu, cannot serve two trainings at once."""
    gpus = len(devices.host_gpus())
    return [host_node(f"{NAME_PREFIX}-{i}", gpus // n + (i < gpus % n)) for i in range(n)]


def parse_nodes_option(value: str) -> list[Obj]:
    """Node objects for `--nodes VALUE`; ValueError (showing the accepted forms) if VALUE is none of them.

    The forms are tried in order: an integer; an existing file; the group grammar (NODES_HELP)."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(str(value), "empty")
    text = value.strip()
    if re.fullmatch(r"[0-9]+", text):   # (str.isdigit() takes "²", which int() refuses)
        n = int(text)
        if not 1 <= n <= MAX_NODES:
            raise _bad(value, f"the number of nodes must be between 1 and {MAX_NODES}")
        return host_nodes(n)
    if os.path.isfile(text):
        return _from_file(text)
    if "(" in text:
        return _from_groups(value, text)
    if text.endswith((".yaml", ".yml", ".json")) or os.sep in text:
        raise _bad(value, "no such file")
    raise _bad(value, "not a number of nodes, a node group list or a file")


_GROUP = re.compile(r"(?:(?P<count>\d+)\s*x\s*)?\((?P<body>[^()]*)\)")


def _split_groups(text: str) -> list[str]:
    """Split on `+` outside parentheses (a quantity such as `1e+3` stays whole)."""
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "+" and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def _is_resource_name(name: str) -> bool:
    return name in _STANDARD or name.startswith("hugepages-") or (
        "/" in name and re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?",
                                     name) is not None)


def _group_resources(value: str, body: str) -> dict[str, str]:
    res = host_resources()
    seen: set[str] = set()
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        name, eq, amount = item.partition("=")
        name, amount = name.strip(), amount.strip()
        if not eq or not name or not amount:
            raise _bad(value, f"{item!r} is not name=quantity")
        if not _is_resource_name(name):
            raise _bad(value, f"unknown resource {name!r}")
        if name in seen:
            raise _bad(value, f"resource {name!r} given twice in one group")
        seen.add(name)
        try:
            q = quantity.parse(amount)
        except ValueError as e:
            raise _bad(value, str(e)) from None
        if q < 0:
            raise _bad(value, f"{name}={amount} is negative")
        res[name] = amount
    return res


def _from_groups(value: str, text: str) -> list[Obj]:
    out: list[Obj] = []
    for group in _split_groups(text):
        m = _GROUP.fullmatch(group)
        if m is None:
            raise _bad(value, f"{group!r} is not [COUNTx](name=quantity,…)")
        count = int(m["count"]) if m["count"] is not None else 1
        if count < 1:
            raise _bad(value, f"{group!r}: a group needs at least one node")
        if len(out) + count > MAX_NODES:
            raise _bad(value, f"more than {MAX_NODES} nodes")
        resources = _group_resources(value, m["body"])
        first = len(out)
        out.extend(node(f"{NAME_PREFIX}-{first + i}", resources) for i in range(count))
    return out


def _from_file(path: str) -> list[Obj]:
    """Node objects from a YAML file; missing capacity/allocatable are filled from each other (or the
    host), the hostname label and a Ready condition are added when absent. Other fields are kept."""
    try:
        docs = yamlio.load_file(path)
    except ValueError as e:   # (each problem located: file:line)
        raise ValueError(f"--nodes {e}") from None
    except OSError as e:
        raise _bad(path, f"cannot read the file: {e}") from None
    return _from_documents(path, docs)


def nodes_from_bytes(data: bytes, filename: str) -> list[Obj]:
    """`--nodes FILE` for the bytes of a file the caller read (standard input), named `filename`."""
    docs, problems = yamlio.parse_bytes(data, filename)
    if problems:
        raise ValueError("--nodes " + "\n".join(str(p) for p in problems))
    return _from_documents(filename, docs)


def _in_file(doc: yamlio.Document, what: str, field: str, message: str, option: str = "--nodes") -> ValueError:
    """A problem of a Node file, as `vcctl validate` says one: `--nodes file:line: Node/n: field: message`
    (the file's form was understood, so the forms of --nodes are not listed again); `option` "": no prefix."""
    where = f"{doc.file}:{doc.line_of(field)}"
    prefix = f"{option} " if option else ""
    return ValueError(f"{prefix}{where}: {what}: " + (f"{field}: " if field else "") + message)


def nodes_from_documents(docs: list[yamlio.Document]) -> list[Obj]:
    """The Nodes of documents read among `vcctl run`'s FILES (v1 Nodes only), completed as a `--nodes` file's;
    ValueError `file:line: Node/n: field: message` for the first problem."""
    return _from_documents("", docs, option="")


def _from_documents(path: str, docs: list[yamlio.Document], option: str = "--nodes") -> list[Obj]:
    out: list[Obj] = []
    names: dict[str, yamlio.Document] = {}
    for doc in docs:
        obj = doc.obj
        if not isinstance(obj, dict) or obj.get("kind") != "Node" or obj.get("apiVersion") != "v1":
            kind = f"{obj.get('apiVersion')} {obj.get('kind')}" if isinstance(obj, dict) else "no object"
            raise _in_file(doc, f"document {doc.index}", "", f"is not a v1 Node ({kind}): the file holds Nodes only",
                           option)
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
        if not name or not isinstance(name, str):
            raise _in_file(doc, f"document {doc.index}", "metadata.name", "Required value: a Node needs a name",
                           option)
        what = f"Node/{name}"
        if name in names:
            first = names[name]
            raise _in_file(doc, what, "metadata.name", f"defined twice (first at {first.file}:{first.line})", option)
        names[name] = doc
        problems = shapes.check(obj, shapes.NODE, "")
        if problems:
            raise _in_file(doc, what, problems[0].path.lstrip("."), problems[0].message, option)
        for j, taint in enumerate((obj.get("spec") or {}).get("taints") or ()):
            if taint.get("effect") not in shapes.TAINT_EFFECTS:
                raise _in_file(doc, what, f"spec.taints[{j}].effect",
                               common.unsupported(taint.get("effect"), shapes.TAINT_EFFECTS), option)
        out.append(_complete(doc, obj, option))
    if not out:
        raise _bad(path, "the file holds no Node")
    return out


def _complete(doc: yamlio.Document, obj: Obj, option: str = "--nodes") -> Obj:
    obj = dict(obj)
    md = obj["metadata"] = dict(obj["metadata"])
    md["labels"] = {core.HOSTNAME_LABEL: md["name"], **(md.get("labels") or {})}
    status = obj["status"] = dict(obj.get("status") or {})
    for field in ("capacity", "allocatable"):   # (as written: one is filled from the other below)
        for res, amount in (status.get(field) or {}).items():
            try:
                quantity.parse(amount)
            except ValueError as e:
                raise _in_file(doc, f"Node/{md['name']}", f"status.{field}.{res}", str(e), option) from None
    errs = statuswrites.node_status(status)   # (a negative amount: the API would refuse the Node)
    if errs:
        raise _in_file(doc, f"Node/{md['name']}", errs[0].path, errs[0].message, option)
    cap = status.get("capacity") or status.get("allocatable") or host_resources()
    status.setdefault("capacity", dict(cap))
    status.setdefault("allocatable", dict(cap))
    if not status.get("conditions"):
        status["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                 "message": "vclite local executor is ready"}]
    status["nodeInfo"] = {**node_info(), **(status.get("nodeInfo") or {})}
    obj.setdefault("spec", {})
    return obj


NODE_LEASE_NAMESPACE = core.NODE_LEASE_NAMESPACE
NODE_LEASE_SECONDS = 40   # the kubelet's nodeLeaseDurationSeconds
STATUS_REPORT_SECONDS = 300   # the kubelet's nodeStatusReportFrequency: conditions re-written at least this often


def node_lease(node: Obj, now_micro: str) -> Obj:
    """The Lease a kubelet holds for its node (`kube-node-lease/<node>`, owned by the Node), renewed `now`.
    The server writes it when it first starts with the node; the heartbeat (heartbeat.py) renews it."""
    md = node.get("metadata") or {}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": md.get("name"), "namespace": NODE_LEASE_NAMESPACE,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": md.get("name"),
                                              "uid": md.get("uid")}]},
            "spec": {"holderIdentity": md.get("name"), "leaseDurationSeconds": NODE_LEASE_SECONDS,
                     "renewTime": now_micro}}



def heartbeat_status(node_obj: Obj, now: datetime.datetime, report_seconds: float = STATUS_REPORT_SECONDS
                     ) -> Obj | None:
    """The node's status with every condition's `lastHeartbeatTime` at `now` when the Ready condition's
    is `report_seconds` old or more (or missing), as a kubelet reports; None while it is recent."""
    status = node_obj.get("status") or {}
    conditions = status.get("conditions") or []
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    if ready is None:
        return None
    try:
        last = clock_mod.parse_time(ready.get("lastHeartbeatTime"))
    except (ValueError, TypeError, AttributeError):
        last = None   # (a time someone wrote that does not parse: written anew)
    if last is not None and (now - last).total_seconds() < report_seconds:
        return None
    stamp = clock_mod.format_time(now)
    return {**status, "conditions": [{**c, "lastHeartbeatTime": stamp} for c in conditions]}
