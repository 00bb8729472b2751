"""`vcctl scheduler dry-run`'s work (scheduler_cmd.py declares the command): what would Volcano's scheduler do
with this cluster? One session, no cluster.

The state is ordinary manifests (any number of `-f` files; a directory stands for its .json, .yaml and .yml
files in name order, its subdirectories unread, as for `vcctl run`/`validate` and `kubectl apply -f DIR`):
Nodes (`status.allocatable`, labels, taints), Queues (`status.state`), PriorityClasses, PodGroups
(`status.phase`, conditions), Pods (bound ones with `spec.nodeName`, phase in `status.phase`, member of a
PodGroup by the annotation `scheduling.k8s.io/group-name`, scheduled by Volcano when `spec.schedulerName:
volcano` or, for a member of a PodGroup of the state, when it names none), HyperNodes, Numatopologies (each
node's NUMA report, which the numa-aware plugin reads), PodDisruptionBudgets (their
`status.disruptionsAllowed` and `disruptedPods`, which the pdb plugin reads), ResourceQuotas (their
`status.hard` and `status.used`, which the resourcequota plugin reads, as `kubectl get quota -o yaml` shows
them), and Namespaces (their labels, which a pod affinity term's namespaceSelector reads; a namespace the pods
use but no document declares exists without labels, as on a cluster). Any other kind is an error. Every
document is checked as `vcctl validate` checks it (admission, file:line errors, exit 2) but is used as
written, status included (a budget's or quota's status checked as a status write is; a Pod's or PodGroup's
`status.phase` must be one of its kind's phases; what a state names but lacks, a PriorityClass or a Node:
dryrunrefs.py). Objects without a namespace are in `default`.

Volcano's scheduler creates the queues `default` (weight 1, reclaimable) and `root` at start: if the
state declares no Queue `default`, that one is added (and said so in the table); `root` is implicit
(the parent of every queue without one). A PodGroup whose queue is neither declared nor `default`
is not in the session, as in Volcano (its job is skipped), and the table says so.

The session is `session.run_session` with `--conf FILE` (a volcano-scheduler.conf) or Volcano's
default configuration. A conf with a `metrics` source (Prometheus, Elasticsearch) has it read once, before the session,
for the nodes' usage (the usage and rescheduling plugins; the table's notes say what was read). That read may take
`--metrics-timeout` seconds in all (METRICS_TIMEOUT, 5, by default; Volcano's scheduler gives a round 60): a
source that accepts and never answers costs a dry run a few seconds, and the notes say it did not answer in time.
Output (`-o json`, exactly this shape; `-o yaml` the same data):
`{"binds": {"<ns>/<pod>": "<node>"}, "evictions": ["<ns>/<pod>"], "pipelined": {"<ns>/<podgroup>":
["<node>"]}, "podGroupPhases": {"<ns>/<podgroup>": "<phase>"}, "unschedulable": {"<ns>/<podgroup>":
"<message>"}}` — the phase of every PodGroup after the session, and the message of each PodGroup's
Unschedulable=True condition. With `--details` (only then: the shape above is a contract), the
plugins' details are added where there are some: `"bindAnnotations": {"<ns>/<pod>": {"<key>": "<value>"}}`
(deviceshare's chosen devices, as the binding would write them on the pod) and `"numaCpuSets":
{"<ns>/<pod>": {"node": "<node>", "cpu": "<cpuset>"}}` (numa-aware's CPUs for the pods it bound: what
Volcano's scheduler cache keeps until the kubelet pins them) and `"pendingPods": {"<ns>/<pod>": "<message>"}` (why
a pod waits that its PodGroup's message does not explain: a pod whose allocation a plugin refused — deviceshare
finding no card — while its gang is satisfied; its PodScheduled=False message). `-o table` (the default) is a readable
summary with notes, the details included.

Must not: start components or write anything; the session is pure.
"""
from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from vclite.admission import admit
from vclite.api import batch, core, kinds, meta, numatopo, scheduling, yamlio
from vclite.apiserver import inprocess
from vclite.cli import dryrunrefs, manifests, schedconfmap
from vclite.cli.scheduler_cmd import METRICS_TIMEOUT
from vclite.lib import clock as clock_mod
from vclite.lib import jsoncopy
from vclite.scheduler import conf as conf_mod
from vclite.scheduler import metricsfeed, nodemetrics
from vclite.scheduler.framework import nodes as nodes_mod
from vclite.scheduler.framework import session, snapshot
from vclite.scheduler.plugins import gpushare, vgpu
from vclite.scheduler.plugins import numa_aware
from vclite.store import memory

Obj = dict[str, Any]
STATE_KINDS = (kinds.NODE, kinds.HYPERNODE, kinds.NUMATOPOLOGY, kinds.QUEUE, kinds.PRIORITYCLASS, kinds.PODGROUP,
               kinds.POD, kinds.PODDISRUPTIONBUDGET, kinds.RESOURCEQUOTA)
IGNORED_KINDS = (kinds.NAMESPACE,)   # (not in the summary: only their labels are read, see _namespaces)
UNSCHEDULABLE = str(scheduling.PodGroupConditionType.UNSCHEDULABLE)


@dataclasses.dataclass
class State:
    """The cluster to schedule and what the reader should know about how it was read."""
    cluster: snapshot.ClusterState
    notes: list[str] = dataclasses.field(default_factory=list)
    added_default_queue: bool = False
    added_priority_classes: int = 0   # the system ones a cluster has (dryrunrefs.system_classes)
    # Volcano's scheduler ConfigMap among the files (schedconfmap.py): the configuration without --conf
    conf_doc: yamlio.Document | None = None


def default_queue() -> Obj:
    """The queue Volcano's scheduler creates at start (`newDefaultAndRootQueue`)."""
    return {"apiVersion": kinds.QUEUE.api_version, "kind": kinds.QUEUE.kind,
            "metadata": {"name": scheduling.DEFAULT_QUEUE},
            "spec": {"weight": 1, "reclaimable": True}, "status": {"state": str(scheduling.QueueState.OPEN)}}


# kinds a controller turns into PodGroups and pods (Volcano's examples are these): what runs them instead
WORKLOAD_KINDS = (kinds.JOB, kinds.JOBFLOW, kinds.JOBTEMPLATE, kinds.CRONJOB)
RUN_INSTEAD = ("; Volcano's controllers turn it into PodGroups and pods: `vcctl run FILE` runs it, and a state "
               "lists the PodGroups and Pods a cluster holds")


def _kind_problems(docs: list[yamlio.Document]) -> list[manifests.Problem]:
    allowed = ", ".join(k.kind for k in STATE_KINDS)
    return [manifests.Problem(d.file, d.line, manifests.describe(d), "kind",
                              f"a cluster state holds only {allowed} (and Namespace) objects"
                              + (RUN_INSTEAD if kinds.by_kind(d.kind) in WORKLOAD_KINDS else ""))
            for d in docs if kinds.by_kind(d.kind) not in STATE_KINDS + IGNORED_KINDS
            and not schedconfmap.carries_conf(d.obj)]


def _time_paths(obj: Obj) -> list[str]:
    """The fields of a state object holding a time the session reads (job order, sla, cdp)."""
    paths = [f"metadata.{k}" for k in ("creationTimestamp", "deletionTimestamp")
             if (obj.get("metadata") or {}).get(k) is not None]
    conditions = (obj.get("status") or {}).get("conditions") if obj.get("kind") == kinds.POD.kind else None
    if isinstance(conditions, list):
        paths += [f"status.conditions[{i}].lastTransitionTime" for i, c in enumerate(conditions)
                  if isinstance(c, dict) and c.get("lastTransitionTime") is not None]
    return paths


def _time_problems(docs: list[yamlio.Document]) -> list[manifests.Problem]:
    """Times that are no RFC 3339 time (a cluster's apiserver never stores one; a written state may)."""
    problems = []
    for d in docs:
        if not isinstance(d.obj, dict):
            continue
        for path in _time_paths(d.obj):
            value: Any = d.obj
            for part in path.replace("[", ".").replace("]", "").split("."):
                value = value[int(part)] if isinstance(value, list) else value[part]
            try:
                ok = isinstance(value, str) and clock_mod.parse_time(value) is not None
            except ValueError:
                ok = False
            if not ok:
                problems.append(manifests.Problem(d.file, d.line_of(path), manifests.describe(d), path,
                                                  f"Invalid value: {value!r}: not an RFC 3339 time"))
    return problems


def _status_problems(docs: list[yamlio.Document]) -> list[manifests.Problem]:
    """The status a state's PodDisruptionBudgets and ResourceQuotas carry, checked as a status write is
    (the session reads it as written; a create into the scratch API drops it)."""
    problems = []
    for d in docs:
        kind = kinds.by_kind(d.kind)
        if kind is None or not isinstance(d.obj, dict):
            continue
        problems += [manifests.Problem(d.file, d.line_of(e.path), manifests.describe(d), e.path, e.message)
                     for e in admit.status_errors(kind, d.obj)]
    return problems


PHASES = {kinds.POD.kind: tuple(str(p) for p in core.PodPhase),
          kinds.PODGROUP.kind: tuple(str(p) for p in scheduling.PodGroupPhase)}


def _phase_problems(docs: list[yamlio.Document]) -> list[manifests.Problem]:
    """A Pod's or PodGroup's `status.phase` that is none of its kind's phases. The API takes any string there
    (only controllers write it), but a state is written by hand and the session reads the phase: a typo
    (`Runing`, `Inqeue`) would silently change what it decides."""
    problems = []
    for d in docs:
        allowed = PHASES.get(d.kind)
        status = d.obj.get("status") if allowed and isinstance(d.obj, dict) else None
        phase = status.get("phase") if isinstance(status, dict) else None
        if phase is not None and phase != "" and phase not in allowed:
            supported = ", ".join(f'"{p}"' for p in sorted(allowed))
            problems.append(manifests.Problem(d.file, d.line_of("status.phase"), manifests.describe(d), "status.phase",
                                              f"Unsupported value: {json.dumps(phase)}: supported values: {supported}"))
    return problems


def _validate(docs: list[yamlio.Document]) -> list[manifests.Problem]:
    """Admission problems, as `vcctl validate` finds them on a scratch API — except that the state
    may declare the queues the scratch API starts with (`default`, `root`)."""
    clock = clock_mod.RealClock()
    store = memory.MemoryStore(clock)
    scratch = inprocess.new_client(clock, require_command=False, store=store, existing_state=True)
    for d in docs:
        if d.kind == kinds.QUEUE.kind and store.peek(kinds.QUEUE, "", d.name) is not None:
            store.delete(kinds.QUEUE, "", d.name)
    return manifests.apply_all(scratch, docs)


def load_state(paths: list[str]) -> State:
    """The cluster state of the files, or manifests.InvalidManifests listing every problem (file:line)."""
    docs = manifests.load(paths)
    problems = _kind_problems(docs) or (_validate(docs) + _time_problems(docs) + _status_problems(docs)
                                        + _phase_problems(docs) + dryrunrefs.priority_class_problems(docs))
    conf_doc = schedconfmap.find(docs)
    if conf_doc is not None:
        problems += [manifests.Problem(conf_doc.file, line, manifests.describe(conf_doc), schedconfmap.FIELD, message)
                     for line, message in schedconfmap.parse(conf_doc)[1]]
    # a status that admission checks on create (a Node's) is checked by both: each problem is said once
    problems = list(dict.fromkeys(problems))
    if problems:
        raise manifests.InvalidManifests(problems)
    state = build_state([d.obj for d in docs])
    state.conf_doc = conf_doc
    return state


def build_state(objects: list[Obj]) -> State:
    """Objects (as written) to the session's input: namespaces defaulted, the default queue added."""
    by_kind: dict[str, list[Obj]] = {k.kind: [] for k in STATE_KINDS}
    for obj in objects:
        if obj.get("kind") in by_kind:
            obj = jsoncopy.deep_copy(obj)
            kind = kinds.by_kind(obj["kind"])
            if kind is not None and kind.namespaced and not meta.namespace(obj):
                obj.setdefault("metadata", {})["namespace"] = "default"
            by_kind[obj["kind"]].append(obj)
    system = dryrunrefs.system_classes(by_kind[kinds.PRIORITYCLASS.kind])
    by_kind[kinds.PRIORITYCLASS.kind] += system
    state = State(snapshot.ClusterState(
        nodes=by_kind[kinds.NODE.kind], queues=by_kind[kinds.QUEUE.kind], podgroups=by_kind[kinds.PODGROUP.kind],
        pods=by_kind[kinds.POD.kind], priority_classes=by_kind[kinds.PRIORITYCLASS.kind],
        namespaces=_namespaces(objects, by_kind[kinds.POD.kind]),
        hypernodes=by_kind[kinds.HYPERNODE.kind], numatopologies=by_kind[kinds.NUMATOPOLOGY.kind],
        pdbs=by_kind[kinds.PODDISRUPTIONBUDGET.kind],
        resource_quotas=by_kind[kinds.RESOURCEQUOTA.kind]), added_priority_classes=len(system))
    queues = {meta.name(q) for q in state.cluster.queues}
    if scheduling.DEFAULT_QUEUE not in queues:
        state.cluster.queues.append(default_queue())
        state.added_default_queue = True
        queues.add(scheduling.DEFAULT_QUEUE)
        state.notes.append('Queue "default" is not declared: Volcano\'s default queue was added (weight 1).')
    state.notes.extend(_volcano_by_membership(state.cluster))
    state.notes.extend(_membership_notes(state.cluster, queues))
    state.notes.extend(dryrunrefs.notes(state.cluster))
    state.notes.extend(f"Node {meta.name(n)}: its Ready condition is not True, so it is not in the session (as in "
                       "Volcano's snapshot): nothing is placed on it, and what runs there is not seen."
                       for n in sorted(state.cluster.nodes, key=meta.name) if not nodes_mod.is_ready(n))
    state.notes.extend(_device_notes(state.cluster.nodes))
    return state


def _device_notes(nodes: list[Obj]) -> list[str]:
    """Nodes whose GPU resources or annotations deviceshare cannot read (upstream only logs them)."""
    notes = []
    for node in sorted(nodes, key=meta.name):
        for why in (gpushare.why_ignored(node), vgpu.why_ignored(node)):
            if why:
                notes.append(f"Node {meta.name(node)}: {why}: deviceshare sees no GPU there (pods asking for one "
                             "fit it only by its resources, and get no device annotation).")
        notes.extend(f"Node {meta.name(node)}: {why}."
                     for why in (*gpushare.unhealthy_problems(node), *vgpu.card_problems(node)))
    return notes


def _namespaces(objects: list[Obj], pods: list[Obj]) -> list[Obj]:
    """The Namespaces the live scheduler would see: those declared (their labels), and every other one the
    pods are in (a cluster has a Namespace for each; admission gives each its name label)."""
    declared = {meta.name(o): o for o in objects if o.get("kind") == kinds.NAMESPACE.kind and meta.name(o)}
    for pod in pods:
        declared.setdefault(meta.namespace(pod), {"apiVersion": "v1", "kind": kinds.NAMESPACE.kind,
                                                  "metadata": {"name": meta.namespace(pod)}})
    return [declared[name] for name in sorted(declared)]


def _volcano_by_membership(cluster: snapshot.ClusterState) -> list[str]:
    """Pods of a PodGroup of the state that name no scheduler are Volcano's (`schedulerName: volcano` set on the
    state's copy), and a note says which. A state is written by hand, as the issue and Volcano's own scheduler tests
    write pods: a member of a PodGroup by its annotation, no schedulerName. On a cluster the pod would get
    `default-scheduler` and Volcano would never place it; a pod that names another scheduler still is not placed."""
    groups = {meta.key(pg) for pg in cluster.podgroups}
    taken = []
    for pod in cluster.pods:
        group = meta.annotations(pod).get(batch.GROUP_NAME)
        spec = pod.get("spec")
        if (group and isinstance(spec, dict) and not spec.get("schedulerName")
                and f"{meta.namespace(pod)}/{group}" in groups):
            spec["schedulerName"] = snapshot.DEFAULT_SCHEDULER_NAME
            taken.append(meta.key(pod))
    if not taken:
        return []
    shown = ", ".join(sorted(taken)[:3]) + (f" and {len(taken) - 3} more" if len(taken) > 3 else "")
    return [f"{len(taken)} pod(s) of a PodGroup of the state name no schedulerName ({shown}): taken as "
            f'"{snapshot.DEFAULT_SCHEDULER_NAME}"\'s (on a cluster they would get "default-scheduler", which Volcano '
            "does not schedule)."]


def _membership_notes(cluster: snapshot.ClusterState, queues: set[str]) -> list[str]:
    notes = []
    groups = set()
    for pg in sorted(cluster.podgroups, key=meta.key):
        groups.add(meta.key(pg))
        q = (pg.get("spec") or {}).get("queue") or scheduling.DEFAULT_QUEUE
        if q not in queues:
            notes.append(f'PodGroup {meta.key(pg)}: queue "{q}" does not exist, so the job is not in the session '
                         "(as in Volcano): nothing of it is scheduled and its status is not updated.")
    for pod in sorted(cluster.pods, key=meta.key):
        group = meta.annotations(pod).get(batch.GROUP_NAME)
        scheduler = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        if not group:
            if scheduler == snapshot.DEFAULT_SCHEDULER_NAME and not (pod.get("spec") or {}).get("nodeName"):
                notes.append(f"Pod {meta.key(pod)}: no {batch.GROUP_NAME} annotation, so it is not scheduled: "
                             "Volcano's controller first gives such a pod a PodGroup (podgroup-<uid>); a state "
                             "lists that PodGroup and the pod's annotation.")
            continue
        if f"{meta.namespace(pod)}/{group}" not in groups:
            notes.append(f"Pod {meta.key(pod)}: its PodGroup {meta.namespace(pod)}/{group} is not in the state: "
                         "the pod is not scheduled (it only occupies its node, if bound).")
        elif scheduler != snapshot.DEFAULT_SCHEDULER_NAME:
            notes.append(f'Pod {meta.key(pod)}: schedulerName is "{scheduler}", not '
                         f'"{snapshot.DEFAULT_SCHEDULER_NAME}": Volcano does not schedule it (it only occupies its '
                         "node, if bound).")
    return notes


def unschedulable_message(status: Obj) -> str | None:
    for c in status.get("conditions") or []:
        if c.get("type") == UNSCHEDULABLE and c.get("status") == "True":
            return c.get("message") or c.get("reason") or ""
    return None


def decisions(cluster: snapshot.ClusterState, result: session.SessionResult, details: bool = False) -> Obj:
    """The dry run's answer, JSON-shaped (the exact shape documented above; `details`: with the
    annotations binds carry, if any)."""
    phases: dict[str, str] = {}
    unschedulable: dict[str, str] = {}
    for pg in sorted(cluster.podgroups, key=meta.key):
        key = meta.key(pg)
        status = result.podgroup_status.get(key) or pg.get("status") or {}
        phases[key] = status.get("phase") or str(scheduling.PodGroupPhase.PENDING)
        message = unschedulable_message(status)
        if message is not None:
            unschedulable[key] = message
    out = {"binds": dict(sorted(result.binds.items())), "evictions": list(result.evictions),
           "pipelined": {k: list(v) for k, v in sorted(result.pipelined.items())},
           "podGroupPhases": phases, "unschedulable": unschedulable}
    if details and result.bind_annotations:
        out["bindAnnotations"] = {k: dict(sorted(v.items())) for k, v in sorted(result.bind_annotations.items())}
    pending = _pending_pods(cluster, result, unschedulable) if details else {}
    if pending:
        out["pendingPods"] = pending
    return out


def _pending_pods(cluster: snapshot.ClusterState, result: session.SessionResult,
                  unschedulable: dict[str, str]) -> dict[str, str]:
    """Pod -> why it waits (its PodScheduled=False message), for the pods whose PodGroup's message does not say
    it: a pod whose allocation a plugin refused (deviceshare: no card) while its gang is satisfied."""
    group_of = {meta.key(p): f"{meta.namespace(p)}/{meta.annotations(p).get(batch.GROUP_NAME)}"
                for p in cluster.pods}
    return {pod: message for pod, (_, message, _) in sorted(result.pod_conditions.items())
            if group_of.get(pod) not in unschedulable}




def read_usage(state: State, conf: conf_mod.SchedulerConf, now: Any, within: float = METRICS_TIMEOUT) -> None:
    """The nodes' usage from the conf's `metrics` source, read once as of `now` (the usage and rescheduling
    plugins) within `within` seconds, and a note of what was read."""
    if not nodemetrics.enabled(conf.metrics):
        readers = sorted({p.name for tier in conf.tiers for p in tier} & {"usage", "rescheduling"})
        if readers:
            state.notes.append(f"{' and '.join(readers)} configured without a metrics source (the conf's `metrics` "
                               "section: type, address): no node has any usage, so "
                               f"{'it has' if len(readers) == 1 else 'they have'} no say, as in Volcano")
        return
    if state.cluster.node_usage is not None:
        return
    names = [meta.name(n) for n in state.cluster.nodes]
    failures: list[str] = []
    started = time.monotonic()
    try:
        usage = metricsfeed.read(conf.metrics, names, lambda: now, failures, within)
    except (OSError, ValueError) as e:
        state.cluster.node_usage = {}
        state.notes.append(f"node usage not read from {conf.metrics['address']} ({e}): no node has any, as in "
                           "Volcano before its first successful read" + _late(started, within))
        return
    state.cluster.node_usage = usage
    period = nodemetrics.NODE_METRICS_PERIOD
    read = ", ".join(f"{n} cpu {u.cpu_avg.get(period, 0.0):g}% memory {u.mem_avg.get(period, 0.0):g}%"
                     for n, u in sorted(usage.items()))
    state.notes.append(f"node usage ({period} averages) from {conf.metrics['address']}: {read or 'no nodes'}")
    if failures:
        state.notes.append(f"{len(failures)} of {2 * len(names)} usage queries to {conf.metrics['address']} failed, "
                           f"each value counted 0 as in Volcano (first: {failures[0]})" + _late(started, within))


def _late(started: float, within: float) -> str:
    """What a note adds when the read used up its time: the source did not answer in time."""
    if time.monotonic() - started < within:
        return ""
    return (f"; the source did not answer within {within:g}s, all this dry run waits for it (--metrics-timeout; "
            f"Volcano's scheduler waits up to {nodemetrics.ROUND_DEADLINE:g}s a round)")


def dry_run(state: State, conf: conf_mod.SchedulerConf, now: Any, details: bool = False,
            metrics_timeout: float = METRICS_TIMEOUT) -> Obj:
    """The session's answer (`details`: with the plugins' details, see the module docstring); the metrics
    source, if any, is read within `metrics_timeout` seconds."""
    read_usage(state, conf, now, metrics_timeout)
    kept: dict = {}   # (the plugins' process-long state: numa-aware's CPU choices are read from it)
    out = decisions(state.cluster, session.run_session(dataclasses.replace(state.cluster, memory=kept), conf, now),
                    details)
    numa = numa_aware.assignments(kept)
    if details and numa:
        out["numaCpuSets"] = {pod: {"node": node, **{res: numatopo.format_cpuset(cpus) for res, cpus in sets.items()}}
                              for pod, (node, sets) in numa.items()}
    return out


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns, two spaces of indent, three between columns."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    return "\n".join("  " + "   ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [headers, *rows])


def render_table(state: State, conf_name: str, conf: conf_mod.SchedulerConf, out: Obj) -> str:
    c = state.cluster
    queues = len(c.queues) - (1 if state.added_default_queue else 0)
    lines = [f"State: {len(c.nodes)} node(s), {queues} queue(s), {len(c.podgroups)} PodGroup(s), "
             f"{len(c.pods)} pod(s), {len(c.priority_classes) - state.added_priority_classes} PriorityClass(es)"
             + (f", {len(c.hypernodes)} HyperNode(s)" if c.hypernodes else "")
             + (f", {len(c.numatopologies)} Numatopology(ies)" if c.numatopologies else "")
             + (f", {len(c.pdbs)} PodDisruptionBudget(s)" if c.pdbs else "")
             + (f", {len(c.resource_quotas)} ResourceQuota(s)." if c.resource_quotas else "."),
             f"Configuration: {conf_name} (actions: {', '.join(conf.action_names)}).", ""]
    lines.append(f"BINDS ({len(out['binds'])})")
    if out["binds"]:
        lines.append(_table(["POD", "NODE"], [[k, v] for k, v in out["binds"].items()]))
    for pod_key, annotations in (out.get("bindAnnotations") or {}).items():
        lines.append(f"  {pod_key} is bound with: " + ", ".join(f"{k}={v}" for k, v in annotations.items()))
    lines.append("")
    if out.get("numaCpuSets"):
        lines.append(f"NUMA CPU SETS ({len(out['numaCpuSets'])}, numa-aware's choice)")
        lines.append(_table(["POD", "NODE", "CPUS"], [[k, v["node"], v.get("cpu", "")]
                                                       for k, v in out["numaCpuSets"].items()]))
        lines.append("")
    lines.append(f"EVICTIONS ({len(out['evictions'])}, in order)")
    lines.extend(f"  {k}" for k in out["evictions"])
    lines.append("")
    before = {meta.key(pg): (pg.get("status") or {}).get("phase") or "Pending" for pg in c.podgroups}
    queue_of = {meta.key(pg): (pg.get("spec") or {}).get("queue") or scheduling.DEFAULT_QUEUE for pg in c.podgroups}
    rows = []
    for key, phase in out["podGroupPhases"].items():
        shown = phase if before[key] == phase else f"{before[key]} -> {phase}"
        pipelined = ", ".join(out["pipelined"].get(key, [])) or "-"
        rows.append([key, queue_of[key], shown, pipelined])
    lines.append(f"PODGROUPS ({len(rows)})")
    if rows:
        lines.append(_table(["PODGROUP", "QUEUE", "PHASE", "PIPELINED ON"], rows))
    if out["unschedulable"]:
        lines += ["", "WHY PENDING (Unschedulable condition)"]
        lines.extend(f"  {k}: {v}" for k, v in out["unschedulable"].items())
    if out.get("pendingPods"):
        lines += ["", "WHY PENDING (pods whose PodGroup is not waiting)"]
        lines.extend(f"  {k}: {v}" for k, v in out["pendingPods"].items())
    if state.notes:
        lines += ["", "NOTES"]
        lines.extend(f"  - {n}" for n in state.notes)
    return "\n".join(lines) + "\n"
