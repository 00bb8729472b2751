"""`vcctl pod list` against an API server, as Volcano's vcctl (pkg/cli/pod): the pods vcjobs made
(label `volcano.sh/job-name`), of one vcjob (-j), or of one queue (-q: a vcjob's pods by their label
`volcano.sh/queue-name`, other pods by their annotation `scheduling.volcano.sh/queue-name`), with
kubectl's Ready, Status and Restart, in Volcano's table (each column as wide as its widest value
plus 8, or its header plus 2).

The row of a pod (`pod_info`) is kubectl's printPod as Volcano copied it: a pure function of the
pod and `now`. This module must not know other kinds' columns.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Iterable

import click

from vclite.admission import common as admission_common
from vclite.api import batch, kinds, meta, scheduling
from vclite.cli import client_common as common
from vclite.cli.context import CONTEXT
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]
COLUMN_SPACING = 8   # after the widest value of a column
HEADER_SPACING = 2   # after a header wider than every value of its column
NODE_LOST = "NodeLost"   # k8s.io/kubernetes/pkg/util/node.NodeUnreachablePodReason
TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclasses.dataclass(frozen=True)
class PodInfo:
    """One row of `vcctl pod list` (Volcano's PodInfo)."""

    namespace: str
    name: str
    ready: str
    status: str
    restarts: str
    age: str


COLUMNS = (("Namespace", "namespace"), ("Name", "name"), ("Ready", "ready"), ("Status", "status"),
           ("Restart", "restarts"), ("Age", "age"))


# ---- pure: one pod's row (kubectl's printPod) -------------------------------------------------------
@dataclasses.dataclass
class _Restarts:
    """Restarts counted over some containers, and when the last of them ended (lastState.terminated)."""

    count: int = 0
    last: dt.datetime | None = None

    def add(self, cs: Obj) -> None:
        self.count += int(cs.get("restartCount") or 0)
        ended = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
        when = clock_mod.parse_time(ended) if ended else None
        if when is not None and (self.last is None or when > self.last):
            self.last = when


def _state(cs: Obj) -> tuple[Obj | None, Obj | None, Obj | None]:
    state = cs.get("state") or {}
    return state.get("waiting"), state.get("running"), state.get("terminated")


def _exit_text(term: Obj) -> str:
    signal = int(term.get("signal") or 0)
    return f"Signal:{signal}" if signal else f"ExitCode:{int(term.get('exitCode') or 0)}"


def _condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def _init_containers(pod: Obj, reason: str, restarts: _Restarts, sidecar_restarts: _Restarts,
                     sidecars: set[str]) -> tuple[str, int, bool]:
    """Walk the init containers until the first one still initializing: (reason, ready sidecars,
    initializing)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ready = 0
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts.add(cs)
        sidecar = cs.get("name") in sidecars
        if sidecar:
            sidecar_restarts.add(cs)
        waiting, _, term = _state(cs)
        if term is not None and int(term.get("exitCode") or 0) == 0:
            continue
        if sidecar and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if term is not None:
            reason = f"Init:{term['reason']}" if term.get("reason") else f"Init:{_exit_text(term)}"
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        return reason, ready, True
    return reason, ready, False


def _containers(pod: Obj, reason: str, restarts: _Restarts) -> tuple[str, int]:
    """The app containers, last first (the first one's state wins): (reason, ready containers)."""
    status = pod.get("status") or {}
    ready, has_running = 0, False
    for cs in reversed(status.get("containerStatuses") or []):
        restarts.add(cs)
        waiting, running, term = _state(cs)
        if waiting is not None and waiting.get("reason"):
            reason = waiting["reason"]
        elif term is not None and term.get("reason"):
            reason = term["reason"]
        elif term is not None:
            reason = _exit_text(term)
        elif cs.get("ready") and running is not None:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        ready_condition = _condition(status, "Ready")
        reason = "Running" if ready_condition and ready_condition.get("status") == "True" else "NotReady"
    return reason, ready


def pod_info(pod: Obj, now: dt.datetime) -> PodInfo:
    """Volcano's printPod (kubectl's printers.go): Ready `ready/total` (restartable init containers
    count), Status the pod's reason as kubectl words it, Restart `n` or `n (<age> ago)`."""
    md, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        reason = "SchedulingGated"
    init_specs = spec.get("initContainers") or []
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or []) + sum(1 for c in init_specs if c.get("restartPolicy") == "Always")

    restarts, sidecar_restarts = _Restarts(), _Restarts()
    reason, ready, initializing = _init_containers(pod, reason, restarts, sidecar_restarts, sidecars)
    initialized = _condition(status, "Initialized")
    if not initializing or (initialized is not None and initialized.get("status") == "True"):
        restarts = sidecar_restarts
        reason, running = _containers(pod, reason, restarts)
        ready += running

    if md.get("deletionTimestamp") and status.get("reason") == NODE_LOST:
        reason = "Unknown"
    elif md.get("deletionTimestamp") and status.get("phase") not in TERMINAL_PHASES:
        reason = "Terminating"

    restart_text = str(restarts.count)
    if restarts.count and restarts.last is not None:
        restart_text = f"{restarts.count} ({clock_mod.human_duration((now - restarts.last).total_seconds())} ago)"
    return PodInfo(meta.namespace(pod), meta.name(pod), f"{ready}/{total}", reason, restart_text,
                   common.age(md.get("creationTimestamp"), now))


# ---- pure: the table and the selection ----------------------------------------------------------------
def pods_text(infos: Iterable[PodInfo], show_namespace: bool) -> str:
    """Volcano's PrintPods: the Namespace column only with --all-namespaces; every line padded to
    the full width (so it ends in spaces). No rows prints the header alone."""
    columns = COLUMNS if show_namespace else COLUMNS[1:]
    rows = [[getattr(info, field) for _, field in columns] for info in infos]
    widths = [max([len(header) + HEADER_SPACING] + [len(row[i]) + COLUMN_SPACING for row in rows])
              for i, (header, _) in enumerate(columns)]
    return "".join("".join(cell.ljust(w) for cell, w in zip(line, widths)) + "\n"
                   for line in [[h for h, _ in columns], *rows])


def sort_pods(pods: Iterable[Obj]) -> list[Obj]:
    """By namespace, then name (the queue path merges two lists)."""
    return sorted(pods, key=lambda p: (meta.namespace(p), meta.name(p)))


def append_if_not_exists(existing: list[Obj], more: Iterable[Obj]) -> list[Obj]:
    """`existing` followed by each pod of `more` not already there (same namespace and name)."""
    out = list(existing)
    seen = {(meta.namespace(p), meta.name(p)) for p in out}
    for pod in more:
        key = (meta.namespace(pod), meta.name(pod))
        if key not in seen:
            seen.add(key)
            out.append(pod)
    return out


def with_label(pods: Iterable[Obj], key: str, value: str) -> list[Obj]:
    return [p for p in pods if key in meta.labels(p) and meta.labels(p)[key] == value]


def with_annotation(pods: Iterable[Obj], key: str, value: str) -> list[Obj]:
    return [p for p in pods if key in meta.annotations(p) and meta.annotations(p)[key] == value]


def labels_agree(pods: Iterable[Obj], key: str, value: str) -> bool:
    """No pod has label `key` with another value (a pod without it agrees), as matchPodsLabel."""
    return all(meta.labels(p).get(key, value) == value for p in pods)


def job_selector(job: str) -> str:
    """`volcano.sh/job-name in (<job>)`; a job name that is no label value is refused in
    apimachinery's labels.NewRequirement words."""
    problems = admission_common.label_value(job)
    if problems:
        raise common.CommandError(f"values[0][{batch.JOB_NAME}]: "
                                  f"{admission_common.invalid(job, '; '.join(problems))}")
    return f"{batch.JOB_NAME} in ({job})"


# ---- command body -------------------------------------------------------------------------------------
def select(client: Any, namespace: str | None, job: str, queue: str) -> list[Obj]:
    """ListPods' three paths: by job (its label; -q must then agree with the pods' queue label), by
    queue (every pod of the namespace, filtered), or every vcjob's pod."""
    if job:
        pods = client.list(kinds.POD, namespace, label_selector=job_selector(job))
        if queue and not labels_agree(pods, batch.QUEUE_NAME, queue):
            raise common.CommandError(f"the input vcjob {job} does not match the queue {queue}")
        return pods
    if queue:
        everything = client.list(kinds.POD, namespace)
        return append_if_not_exists(with_label(everything, batch.QUEUE_NAME, queue),
                                    with_annotation(everything, scheduling.QUEUE_NAME_ANNOTATION, queue))
    return client.list(kinds.POD, namespace, label_selector=batch.JOB_NAME)


def _list(client: Any, namespace: str, all_namespaces: bool, job: str, queue: str, now: dt.datetime) -> None:
    pods = select(client, None if all_namespaces else namespace, job, queue)
    if not pods:
        click.echo("No resources found")
        return
    click.echo(pods_text([pod_info(p, now) for p in sort_pods(pods)], all_namespaces), nl=False)


# ---- the command ----------------------------------------------------------------------------------------
LIST_HELP = """list pod information created by vcjob

One line per pod a vcjob made (label volcano.sh/job-name) in namespace -n (every namespace with
--all-namespaces, which adds a Namespace column): Ready (ready/total containers), Status (as
kubectl words it: Running, Completed, Init:0/1, CrashLoopBackOff, Terminating, ...), Restart and
Age. -j keeps the pods of one vcjob; with -q too, the vcjob must be in that queue. -q alone keeps
the pods of one queue: a vcjob's (label volcano.sh/queue-name) and any other pod naming it
(annotation scheduling.volcano.sh/queue-name). `No resources found` when none matches.

\b
Examples:
  vcctl pod list
  vcctl pod list -j train -n research
  vcctl pod list -q research --all-namespaces
"""


@click.command("list", context_settings=CONTEXT, short_help="list pod information created by vcjob", help=LIST_HELP)
@common.common_options
@click.option("-q", "--queue", default="", help="list pod with specified queue name")
@click.option("-j", "--job", default="", help="list pod with specified job name")
@common.namespace_option("pod")
@click.option("--all-namespaces", is_flag=True, help="list pods in all namespaces")
@click.pass_context
def list_(ctx, master, kubeconfig, queue, job, namespace, all_namespaces):
    now = common.clock_of(ctx).now()
    common.run_checked("list", "pod", lambda: _list(common.connect(master, kubeconfig), namespace, all_namespaces,
                                                    job, queue, now))


def build() -> click.Group:
    """The `vcctl pod` group."""
    group = click.Group("pod", context_settings=CONTEXT, help="""vcctl command line operation pod

\b
The pods of vcjobs on a server or cluster, as Volcano's vcctl:
  vcctl pod list -j train
""")
    group.add_command(list_)
    return group
