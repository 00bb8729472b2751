"""`Table` output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): each kind's printer columns.

Volcano's kinds have the columns of Volcano's CRDs (additionalPrinterColumns: JobFlow Status, Age;
vcjob STATUS, minAvailable, RUNNINGS, AGE, QUEUE (priority 1); PodGroup STATUS, minMember,
RUNNINGS, AGE, QUEUE (priority 1); Queue PARENT; HyperNode Tier, TierName, NodeCount, Age; JobTemplate
none, hence the default Age), with
cells as kube-apiserver's CRD table converter makes them (missing value → null, `date` → a human
age such as `5m`). Built-in kinds have kubectl's familiar columns (pods: READY, STATUS, RESTARTS,
AGE; wide: IP, NODE, …); PersistentVolumeClaims, PersistentVolumes and StorageClasses kube-apiserver's
(access modes as RWO/ROX/RWX/RWOP, a claim's CAPACITY its bound volume's, `standard (default)`). kubectl
upper-cases headers; columns with priority > 0 show with `-o wide`.
A cell a malformed stored object cannot give is null (`cells`). Pure functions of (objects, now).
"""
from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any, Callable

from vclite.api import disruption, eventsv1, kinds, quantity, storage
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]
Cell = Callable[[Obj, datetime.datetime], Any]
CONTENT_TYPE = "application/json;as=Table;g=meta.k8s.io;v=v1"
NAME_DESCRIPTION = ("Name must be unique within a namespace. Is required when creating resources, although some "
                    "resources may allow a client to request the generation of an appropriate name automatically. "
                    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
                    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")


@dataclasses.dataclass(frozen=True)
class Column:
    name: str
    type: str
    cell: Cell
    priority: int = 0
    format: str = ""
    description: str = ""

    def definition(self) -> Obj:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description,
                "priority": self.priority}


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery duration.HumanDuration (what `AGE` cells show)."""
    return clock_mod.human_duration(seconds)


def age_of(timestamp: Any, now: datetime.datetime) -> str | None:
    if not timestamp:
        return None
    try:
        then = clock_mod.parse_time(str(timestamp))
    except (ValueError, TypeError):
        return None
    return human_duration((now - then).total_seconds())


def _get(obj: Any, path: str | tuple[str, ...]) -> Any:
    for part in path.strip(".").split(".") if isinstance(path, str) else path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def json_path(path: str, type_: str) -> Cell:
    """A CRD additionalPrinterColumn cell: the value at `path`, null when missing."""
    parts = tuple(path.strip(".").split("."))

    def cell(obj: Obj, now: datetime.datetime) -> Any:
        value = _get(obj, parts)
        if value is None:
            return None
        if type_ == "date":
            return age_of(value, now)
        if isinstance(value, (dict, list)):
            return json.dumps(value, separators=(",", ":"))
        return value
    return cell


def _age(obj: Obj, now: datetime.datetime) -> Any:
    return age_of((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _crd(name: str, path: str, type_: str, priority: int = 0) -> Column:
    return Column(name, type_, json_path(path, type_), priority)


AGE = Column("Age", "date", _age, description="CreationTimestamp is a timestamp representing the server time when "
             "this object was created.")


# ---- built-in printers (kubectl's) -----------------------------------------------------------------

def pod_status_and_ready(pod: Obj) -> tuple[str, int, int]:
    """kubectl's printPod: the STATUS text, ready containers and restarts."""
    status, spec = pod.get("status") or {}, pod.get("spec") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    restarts = ready = 0
    initializing = False
    inits = status.get("initContainerStatuses") or []
    for i, cs in enumerate(inits):
        restarts += int(cs.get("restartCount") or 0)
        state = cs.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode") == 0:
            continue
        initializing = True
        if term is not None:
            reason = f"Init:{term['reason']}" if term.get("reason") else (
                f"Init:Signal:{term['signal']}" if term.get("signal") else f"Init:ExitCode:{term.get('exitCode')}")
        elif wait is not None and wait.get("reason") and wait.get("reason") != "PodInitializing":
            reason = f"Init:{wait['reason']}"
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        break
    if not initializing:
        restarts = 0
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            state = cs.get("state") or {}
            term, wait = state.get("terminated"), state.get("waiting")
            if wait is not None and wait.get("reason"):
                reason = wait["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode')}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            ready_cond = any(c.get("type") == "Ready" and c.get("status") == "True"
                             for c in status.get("conditions") or [])
            reason = "Running" if ready_cond else "NotReady"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason, ready, restarts


def _or_none(value: Any) -> Any:
    return value if value not in (None, "") else "<none>"


POD_COLUMNS = (
    Column("Ready", "string", lambda p, now: f"{pod_status_and_ready(p)[1]}/{len((p.get('spec') or {}).get('containers') or [])}",
           description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "string", lambda p, now: pod_status_and_ready(p)[0],
           description="The aggregate status of the containers in this pod."),
    Column("Restarts", "string", lambda p, now: str(pod_status_and_ready(p)[2]),
           description="The number of times the containers in this pod have been restarted."),
    AGE,
    Column("IP", "string", lambda p, now: _or_none(_get(p, "status.podIP")), 1, description="IP address of the pod."),
    Column("Node", "string", lambda p, now: _or_none(_get(p, "spec.nodeName")), 1,
           description="Name of the node the pod is assigned to."),
    Column("Nominated Node", "string", lambda p, now: _or_none(_get(p, "status.nominatedNodeName")), 1),
    Column("Readiness Gates", "string", lambda p, now: "<none>", 1),
)


def _node_status(node: Obj, now: datetime.datetime) -> str:
    ready = next((c.get("status") for c in _get(node, "status.conditions") or [] if c.get("type") == "Ready"), None)
    text = {"True": "Ready", "False": "NotReady"}.get(str(ready), "Unknown")
    return text + (",SchedulingDisabled" if _get(node, "spec.unschedulable") else "")


def _node_address(node: Obj, kind: str) -> str:
    return next((a.get("address") for a in _get(node, "status.addresses") or [] if a.get("type") == kind), "<none>")


def _node_info(node: Obj, field: str) -> str:
    return _get(node, ("status", "nodeInfo", field)) or "<unknown>"


def _node_roles(node: Obj, now: datetime.datetime) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix):] for k in (_get(node, "metadata.labels") or {}) if k.startswith(prefix))
    return ",".join(r for r in roles if r) or "<none>"


def _service_ports(svc: Obj, now: datetime.datetime) -> str:
    """`port/protocol`, `port:nodePort/protocol` when it has a node port (kubectl's makePortString)."""
    ports = [f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol') or 'TCP'}"
             for p in _get(svc, "spec.ports") or []]
    return ",".join(ports) or "<none>"


def _service_external_ip(svc: Obj, now: datetime.datetime) -> str:
    """The external name, the external IPs, or a load balancer's (`<pending>` until it has one),
    as kubectl's service printer shows them (vclite runs no load balancer)."""
    kind = _get(svc, "spec.type") or "ClusterIP"
    if kind == "ExternalName":
        return _get(svc, "spec.externalName") or "<none>"
    ips = list(_get(svc, "spec.externalIPs") or [])
    if kind == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") for i in _get(svc, "status.loadBalancer.ingress") or []]
        ips = [i for i in ingress if i] + ips
        return ",".join(ips) or "<pending>"
    return ",".join(ips) or "<none>"


def _event_object(ev: Obj, now: datetime.datetime) -> str:
    io = ev.get("involvedObject") or {}
    return f"{str(io.get('kind', '')).lower()}/{io.get('name', '')}"


def _event_last_seen(ev: Obj, now: datetime.datetime) -> Any:
    return age_of(ev.get("lastTimestamp") or ev.get("eventTime") or _get(ev, "metadata.creationTimestamp"), now)


EVENT_COLUMNS = (
    Column("Last Seen", "string", _event_last_seen),
    Column("Type", "string", lambda e, now: e.get("type")),
    Column("Reason", "string", lambda e, now: e.get("reason")),
    Column("Object", "string", _event_object),
    Column("Subobject", "string", lambda e, now: _get(e, "involvedObject.fieldPath") or "", 1),
    Column("Source", "string", lambda e, now: _get(e, "source.component") or "", 1),
    Column("Message", "string", lambda e, now: e.get("message")),
    Column("First Seen", "string", lambda e, now: age_of(e.get("firstTimestamp"), now), 1),
    Column("Count", "string", lambda e, now: str(e.get("count") or 1), 1),
    Column("Name", "string", lambda e, now: _get(e, "metadata.name"), 1, "name", NAME_DESCRIPTION),
)

# ---- storage (kube-apiserver's printPersistentVolumeClaim, printPersistentVolume, printStorageClass) -----------

_MODE_ABBREVIATIONS = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                       ("ReadWriteOncePod", "RWOP"))


def access_modes_text(modes: Any) -> str:
    """kube's GetAccessModesAsString: `RWO,ROX,RWX,RWOP`, each once, in that order."""
    have = set(modes or ())
    return ",".join(short for mode, short in _MODE_ABBREVIATIONS if mode in have)


def _storage_text(rl: Any) -> str:
    """A ResourceList's `storage` as Quantity.String() prints it ("0" when missing)."""
    value = (rl or {}).get("storage")
    return _canonical(value) if value is not None else "0"


def _phase(obj: Obj) -> str:
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return _get(obj, "status.phase") or ""


def _attributes_class(obj: Obj, now: datetime.datetime) -> str:
    return _get(obj, "spec.volumeAttributesClassName") or "<unset>"


def _volume_mode(obj: Obj, now: datetime.datetime) -> str:
    return _get(obj, "spec.volumeMode") or "<unset>"


def _claim_capacity(pvc: Obj, now: datetime.datetime) -> str:
    return _storage_text(_get(pvc, "status.capacity")) if _get(pvc, "spec.volumeName") else ""


def _claim_modes(pvc: Obj, now: datetime.datetime) -> str:
    return access_modes_text(_get(pvc, "status.accessModes")) if _get(pvc, "spec.volumeName") else ""


def _volume_claim(pv: Obj, now: datetime.datetime) -> str:
    ref = _get(pv, "spec.claimRef")
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if isinstance(ref, dict) else ""


def _class_name(sc: Obj, now: datetime.datetime) -> str:
    name = (sc.get("metadata") or {}).get("name") or ""
    return f"{name} (default)" if storage.is_default_class(sc) else name


STORAGE_COLUMNS: dict[str, tuple[Column, ...]] = {
    kinds.PERSISTENTVOLUMECLAIM.kind: (
        Column("Status", "string", lambda c, now: _phase(c)),
        Column("Volume", "string", lambda c, now: _get(c, "spec.volumeName") or ""),
        Column("Capacity", "string", _claim_capacity),
        Column("Access Modes", "string", _claim_modes),
        Column("StorageClass", "string", lambda c, now: storage.claim_class(c)),
        Column("VolumeAttributesClass", "string", _attributes_class), AGE,
        Column("VolumeMode", "string", _volume_mode, 1)),
    kinds.PERSISTENTVOLUME.kind: (
        Column("Capacity", "string", lambda v, now: _storage_text(_get(v, "spec.capacity"))),
        Column("Access Modes", "string", lambda v, now: access_modes_text(_get(v, "spec.accessModes"))),
        Column("Reclaim Policy", "string", lambda v, now: _get(v, "spec.persistentVolumeReclaimPolicy") or ""),
        Column("Status", "string", lambda v, now: _phase(v)),
        Column("Claim", "string", _volume_claim),
        Column("StorageClass", "string", lambda v, now: storage.volume_class(v)),
        Column("VolumeAttributesClass", "string", _attributes_class),
        Column("Reason", "string", lambda v, now: _get(v, "status.reason") or ""), AGE,
        Column("VolumeMode", "string", _volume_mode, 1)),
    kinds.STORAGECLASS.kind: (
        Column("Provisioner", "string", lambda c, now: c.get("provisioner") or ""),
        Column("ReclaimPolicy", "string", lambda c, now: c.get("reclaimPolicy") or "Delete"),
        Column("VolumeBindingMode", "string", lambda c, now: c.get("volumeBindingMode") or "Immediate"),
        Column("AllowVolumeExpansion", "string", lambda c, now: bool(c.get("allowVolumeExpansion"))), AGE),
}


# Columns after NAME, per kind (events have their own full list, without a leading NAME).
COLUMNS: dict[str, tuple[Column, ...]] = {
    kinds.JOBFLOW.kind: (_crd("Status", ".status.state.phase", "string"),
                         _crd("Age", ".metadata.creationTimestamp", "date")),
    kinds.JOBTEMPLATE.kind: (AGE,),
    kinds.CRONJOB.kind: (AGE,),   # (its CRD declares no additionalPrinterColumns: kubectl shows NAME, AGE)
    kinds.JOB.kind: (_crd("STATUS", ".status.state.phase", "string"),
                     _crd("minAvailable", ".status.minAvailable", "integer"),
                     _crd("RUNNINGS", ".status.running", "integer"),
                     _crd("AGE", ".metadata.creationTimestamp", "date"),
                     _crd("QUEUE", ".spec.queue", "string", priority=1)),
    kinds.PODGROUP.kind: (_crd("STATUS", ".status.phase", "string"),
                          _crd("minMember", ".spec.minMember", "integer"),
                          _crd("RUNNINGS", ".status.running", "integer"),
                          _crd("AGE", ".metadata.creationTimestamp", "date"),
                          _crd("QUEUE", ".spec.queue", "string", priority=1)),
    kinds.QUEUE.kind: (_crd("PARENT", ".spec.parent", "string"),),
    kinds.HYPERNODE.kind: (_crd("Tier", ".spec.tier", "string"), _crd("TierName", ".spec.tierName", "string"),
                           _crd("NodeCount", ".status.nodeCount", "integer"),
                           _crd("Age", ".metadata.creationTimestamp", "date")),
    kinds.POD.kind: POD_COLUMNS,
    kinds.NODE.kind: (Column("Status", "string", _node_status), Column("Roles", "string", _node_roles), AGE,
                      Column("Version", "string", lambda n, now: _get(n, "status.nodeInfo.kubeletVersion") or ""),
                      Column("Internal-IP", "string", lambda n, now: _node_address(n, "InternalIP"), 1),
                      Column("External-IP", "string", lambda n, now: _node_address(n, "ExternalIP"), 1),
                      Column("OS-Image", "string", lambda n, now: _node_info(n, "osImage"), 1),
                      Column("Kernel-Version", "string", lambda n, now: _node_info(n, "kernelVersion"), 1),
                      Column("Container-Runtime", "string",
                             lambda n, now: _node_info(n, "containerRuntimeVersion"), 1)),
    kinds.NAMESPACE.kind: (Column("Status", "string", lambda n, now: _get(n, "status.phase") or "Active"), AGE),
    kinds.CONFIGMAP.kind: (Column("Data", "integer", lambda c, now: len(c.get("data") or {}) +
                                  len(c.get("binaryData") or {})), AGE),
    kinds.SECRET.kind: (Column("Type", "string", lambda s, now: s.get("type") or ""),
                        Column("Data", "integer", lambda s, now: len(s.get("data") or {})), AGE),
    kinds.SERVICE.kind: (Column("Type", "string", lambda s, now: _get(s, "spec.type") or "ClusterIP"),
                         Column("Cluster-IP", "string", lambda s, now: _or_none(_get(s, "spec.clusterIP"))),
                         Column("External-IP", "string", _service_external_ip),
                         Column("Port(s)", "string", _service_ports), AGE,
                         Column("Selector", "string", lambda s, now: ",".join(
                             f"{k}={v}" for k, v in sorted((_get(s, "spec.selector") or {}).items())) or "<none>", 1)),
    kinds.SERVICEACCOUNT.kind: (Column("Secrets", "integer", lambda a, now: len(a.get("secrets") or [])), AGE),
    kinds.LEASE.kind: (Column("Holder", "string", lambda lease, now: _get(lease, "spec.holderIdentity") or ""), AGE),
    # kube-apiserver's printer for PodDisruptionBudgets (pkg/printers/internalversion)
    kinds.PODDISRUPTIONBUDGET.kind: (
        Column("Min Available", "string", lambda p, now: disruption.int_or_percent_text(_get(p, "spec.minAvailable"))),
        Column("Max Unavailable", "string",
               lambda p, now: disruption.int_or_percent_text(_get(p, "spec.maxUnavailable"))),
        Column("Allowed Disruptions", "integer", lambda p, now: _get(p, "status.disruptionsAllowed") or 0), AGE),
    kinds.PRIORITYCLASS.kind: (Column("Value", "integer", lambda p, now: p.get("value", 0)),
                               Column("Global-Default", "boolean", lambda p, now: bool(p.get("globalDefault"))), AGE,
                               Column("PreemptionPolicy", "string", lambda p, now: p.get("preemptionPolicy") or "")),
}

COLUMNS.update(STORAGE_COLUMNS)

NAME = Column("Name", "string", lambda o, now: (o.get("metadata") or {}).get("name"), 0, "name", NAME_DESCRIPTION)
# kinds whose NAME cell says more than the name (a StorageClass's `standard (default)`)
NAME_COLUMNS = {kinds.STORAGECLASS.kind: Column("Name", "string", _class_name, 0, "name", NAME_DESCRIPTION)}


def _quota_cell(limits: bool) -> Cell:
    """kube's printResourceQuota: `name: used/hard` for each name of status.hard (sorted), the `limits.*`
    ones in the Limit column and the others in Request; quantities as Quantity.String() prints them."""
    def cell(q: Obj, now: datetime.datetime) -> str:
        hard, used = _get(q, "status.hard") or {}, _get(q, "status.used") or {}
        return ", ".join(f"{name}: {_canonical(used.get(name, '0'))}/{_canonical(hard[name])}"
                         for name in sorted(hard) if _is_limit(name) == limits)
    return cell


def _is_limit(name: str) -> bool:
    pieces = name.split(".")
    return len(pieces) > 1 and pieces[0] == "limits"


def _canonical(value: Any) -> str:
    try:
        return quantity.canonical(value)
    except ValueError:
        return str(value)


COLUMNS[kinds.RESOURCEQUOTA.kind] = (
    AGE, Column("Request", "string", _quota_cell(False), description="Request represents a minimum amount of "
                "cpu/memory that a container may consume."),
    Column("Limit", "string", _quota_cell(True), description="Limits control the maximum amount of cpu/memory "
           "that a container may use independent of contention on the node."))


def columns(kind: kinds.Kind) -> tuple[Column, ...]:
    if kind.kind == kinds.EVENT.kind:
        return EVENT_COLUMNS
    return (NAME_COLUMNS.get(kind.kind, NAME),) + COLUMNS.get(kind.kind, (AGE,))


def _row_object(obj: Obj) -> Obj:
    md = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": md}


# views whose cells are read from the stored form (kube-apiserver prints both Event versions alike)
CELLS_FROM = {kinds.EVENT_V1: eventsv1.to_core}


def cells(cols: tuple[Column, ...], obj: Obj, now: datetime.datetime) -> list[Any]:
    """A row's cells. An object stored with a field of another shape than its column reads (written straight
    into the store, or by an older vclite before admission refused it) gets null in that cell, as a CRD
    column whose path does not resolve: one such object never fails the whole list."""
    out = []
    for c in cols:
        try:
            out.append(c.cell(obj, now))
        except (AttributeError, TypeError, ValueError, KeyError, IndexError):
            out.append(None)
    return out


def table(kind: kinds.Kind, objs: list[Obj], now: datetime.datetime, resource_version: str = "",
          include_object: str = "Metadata", continue_token: str = "") -> Obj:
    """A meta.k8s.io/v1 Table of `objs`; include_object None|Metadata|Object decides each row's object."""
    cols = columns(kind)
    stored = CELLS_FROM.get(kind)
    rows = []
    for obj in objs:
        row: Obj = {"cells": cells(cols, obj if stored is None else stored(obj), now)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = _row_object(obj)
        rows.append(row)
    md: Obj = {"resourceVersion": resource_version}
    if continue_token:
        md["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": md,
            "columnDefinitions": [c.definition() for c in cols], "rows": rows}
