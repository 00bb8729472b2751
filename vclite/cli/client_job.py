"""`vcctl job run|list|view|suspend|resume|delete` against an API server, as Volcano's vcctl
(pkg/cli/job): the same flags, messages and output formats.

suspend/resume: where the server serves `bus.volcano.sh/v1alpha1` `commands` (Volcano, vclite's
server) they create a Command object (`<job>-abortjob-…` owned by the job), as Volcano's vcctl
does; against a server without them they set the annotation `vclite.volcano.sh/command:
AbortJob|ResumeJob` that vclite's vcjob controller also consumes (controllers/job/commands.py).
`job view` also says why a waiting job waits (its PodGroup's Unschedulable condition).
`job run --command` (vclite extension) gives the container a command: vclite runs pods as local
processes and cannot run an image's default entrypoint.
"""
from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any

import click

from vclite.api import batch, bus, kinds, meta, quantity, scheduling
from vclite.cli import client_common as common
from vclite.cli import stdinput
from vclite.cli.context import CONTEXT
from vclite.controllers.job import commands
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
JOB_TYPE_LABEL = "volcano.sh/job-type"
LIST_HEADERS = ("Name", "Creation", "Phase", "JobType", "Replicas", "Min", "Pending", "Running", "Succeeded",
                "Failed", "Unknown", "RetryCount")
LIST_WIDTHS = (15, 12, 12, 12, 6, 10, 10, 12, 10, 12, 10)   # after the Name column


# ---- pure: building and printing ------------------------------------------------------------------
def parse_resources(spec: str) -> dict[str, str]:
    """`cpu=1000m,memory=100Mi` -> {"cpu": "1000m", ...} (util.PopulateResourceListV1)."""
    if not spec:
        return {}
    out = {}
    for statement in spec.split(","):
        parts = statement.split("=")
        if len(parts) != 2:
            raise common.CommandError(f"invalid argument syntax {statement}, expected <resource>=<value>")
        try:
            quantity.parse(parts[1])
        except ValueError as exc:
            raise common.CommandError(str(exc)) from exc
        out[parts[0]] = parts[1]
    return out


def launch_job(name: str, namespace: str, image: str, min_available: int, replicas: int, requests: dict[str, str],
               limits: dict[str, str], scheduler: str, command: str | None) -> Obj:
    """The vcjob `job run` creates from flags (constructLaunchJobFlagsJob)."""
    container: Obj = {"image": image, "name": name, "imagePullPolicy": "IfNotPresent",
                      "resources": {k: v for k, v in (("limits", limits), ("requests", requests)) if v}}
    if command:
        container["command"] = ["sh", "-c", command]
    return {
        "apiVersion": kinds.JOB.api_version, "kind": kinds.JOB.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minAvailable": min_available, "schedulerName": scheduler, "tasks": [{
            "replicas": replicas,
            "template": {"metadata": {"name": name, "labels": {"job.volcano.sh": name}},
                         "spec": {"restartPolicy": "Never", "containers": [container]}}}]},
    }


def _status_int(job: Obj, field: str) -> int:
    return common.stored_int(job, "status", field)


def list_text(jobs: list[Obj], all_namespaces: bool, widths_of: list[Obj] | None = None) -> str:
    """PrintJobs: fixed-width columns after Name (and Namespace with --all-namespaces), as wide as the
    longest name of `widths_of` (default: `jobs`; `vjobs` measures the jobs before its filters)."""
    measured = jobs if widths_of is None else widths_of
    name_w = max([len("Name")] + [len(meta.name(j)) for j in measured]) + 3
    ns_w = max([len("Namespace")] + [len(meta.namespace(j)) for j in measured]) + 3
    widths = (name_w, *LIST_WIDTHS)
    lines = []

    def line(cells: list[str], namespace: str | None) -> str:
        text = "".join(c.ljust(w) for c, w in zip(cells, widths))
        return (namespace.ljust(ns_w) if namespace is not None else "") + text

    lines.append(line(list(LIST_HEADERS), "Namespace" if all_namespaces else None))
    for job in jobs:
        when = common.stored_time(job, "metadata", "creationTimestamp")
        replicas = sum(common.stored_int(job, "spec", "tasks", "replicas", value=t.get("replicas"))
                       for t in (job.get("spec") or {}).get("tasks") or [] if isinstance(t, dict))
        cells = [meta.name(job), when.astimezone().strftime("%Y-%m-%d") if when else "0001-01-01", meta.phase(job),
                 meta.labels(job).get(JOB_TYPE_LABEL) or "Batch", str(replicas)]
        cells += [str(_status_int(job, f)) for f in ("minAvailable", "pending", "running", "succeeded", "failed",
                                                    "unknown", "retryCount")]
        lines.append(line(cells, meta.namespace(job) if all_namespaces else None))
    return "".join(ln + "\n" for ln in lines)


def select_jobs(jobs: list[Obj], queue: str, scheduler: str, selector: str) -> list[Obj]:
    """`job list`'s filters (ListJobs' filterFunc): the queue and the scheduler exactly, the selector as a part
    of the job's name."""
    return [j for j in jobs if (not queue or (j.get("spec") or {}).get("queue") == queue)
            and (not scheduler or (j.get("spec") or {}).get("schedulerName") == scheduler)
            and (not selector or selector in meta.name(j))]


def job_events(events: list[Obj], name: str) -> list[Obj]:
    """The Events `job view` prints (GetEvents): those named `<job>.<suffix>`, as the recorder names an object's
    Events, so a PodGroup's (`<job>-<uid>.…`) or a pod's are not among them."""
    return [e for e in events if meta.name(e).startswith(name + ".")]


def waiting_reason(job: Obj, podgroups: list[Obj]) -> str:
    """Why a job waits: its PodGroup's Unschedulable condition (the scheduler's message)."""
    if meta.phase(job) not in ("", batch.JobPhase.PENDING):
        return ""
    for pg in podgroups:
        ref = meta.controller_ref(pg) or {}
        if ref.get("name") != meta.name(job) or meta.namespace(pg) != meta.namespace(job):
            continue
        for cond in (pg.get("status") or {}).get("conditions") or []:
            if cond.get("type") == scheduling.PodGroupConditionType.UNSCHEDULABLE and cond.get("status") == "True":
                return cond.get("message") or cond.get("reason") or "unschedulable"
        if (pg.get("status") or {}).get("phase") == scheduling.PodGroupPhase.PENDING:
            return "waiting for the scheduler to admit its PodGroup"
    return ""


def view_text(job: Obj, events: list[Obj], waiting: str, now: dt.datetime, conditions: bool = True) -> str:
    """PrintJobInfo + PrintEvents, plus `Waiting:` (vclite) when the job waits. `vjobs` prints no
    `Conditions:` (conditions=False)."""
    out = io.StringIO()

    def w(level: int, text: str) -> None:
        out.write("  " * level + text)

    md, spec, status = job.get("metadata") or {}, job.get("spec") or {}, job.get("status") or {}
    w(0, f"Name:       \t{meta.name(job)}\n")
    w(0, f"Namespace:  \t{meta.namespace(job)}\n")
    w(0, f"Labels:     \t{common.go_json_compact(md['labels'])}\n" if md.get("labels") else "Labels:     \t<none>\n")
    w(0, f"Annotations:\t{common.go_json_compact(md['annotations'])}\n" if md.get("annotations")
      else "Annotations:\t<none>\n")
    w(0, f"API Version:\t{job.get('apiVersion', '')}\n")
    w(0, f"Kind:       \t{job.get('kind', '')}\n")
    w(0, "Metadata:\n")
    w(1, f"Creation Timestamp:\t{common.go_time(md.get('creationTimestamp'))}\n")
    w(1, f"Generate Name:     \t{md.get('generateName', '')}\n")
    w(1, f"Generation:        \t{md.get('generation', 0)}\n")
    w(1, f"Resource Version:  \t{md.get('resourceVersion', '')}\n")
    w(1, f"UID:               \t{md.get('uid', '')}\n")
    w(0, "Spec:\n")
    w(1, f"Min Available:     \t{spec.get('minAvailable', 0)}\n")
    w(1, "Plugins:\n")
    plugins = spec.get("plugins") or {}
    w(2, f"Env:\t[{' '.join(map(str, plugins.get('env') or []))}]\n")
    w(2, f"Ssh:\t[{' '.join(map(str, plugins.get('ssh') or []))}]\n")
    w(1, f"Scheduler Name:    \t{spec.get('schedulerName', '')}\n")
    w(1, "Tasks:\n")
    for task in spec.get("tasks") or []:
        _task_text(w, task)
    w(0, "Status:\n")
    for field, label in (("succeeded", "Succeeded:    "), ("pending", "Pending:      "), ("running", "Running:      "),
                         ("failed", "Failed:       "), ("terminating", "Terminating:  "), ("unknown", "Unknown:      "),
                         ("retryCount", "RetryCount:   "), ("minAvailable", "Min Available:"),
                         ("version", "Version:      ")):
        if _status_int(job, field) > 0:
            w(1, f"{label}\t{_status_int(job, field)}\n")
    w(1, "State:\n")
    w(2, f"Phase:\t{meta.phase(job)}\n")
    if waiting:
        w(2, f"Waiting:\t{waiting}\n")
    if status.get("controlledResources"):
        w(1, "Controlled Resources:\n")
        for key in sorted(status["controlledResources"]):
            w(2, f"{key}: \t{status['controlledResources'][key]}\n")
    if conditions and status.get("conditions"):
        w(1, "Conditions:\n    Status\tTransitionTime\n")
        for c in status["conditions"]:
            when = c.get("lastTransitionTime")   # (a *metav1.Time: Go's %v prints a nil one `<nil>`)
            w(2, f"{c.get('status', '')} \t{common.go_time(when) if when else '<nil>'} \n")
    out.write(events_text(events, now))
    return out.getvalue()


def _task_text(w: Any, task: Obj) -> None:
    template = task.get("template") or {}
    tmd, tspec = template.get("metadata") or {}, template.get("spec") or {}
    notes = tmd.get("annotations") or {}
    w(2, f"Name:\t{task.get('name', '')}\n")
    w(2, f"Replicas:\t{task.get('replicas', 0)}\n")
    w(2, "Template:\n")
    w(3, "Metadata:\n")
    w(4, "Annotations:\n")
    w(5, f"Cri . Cci . Io / Container - Type:          \t{notes.get('cri.cci.io/container-type', '')}\n")
    w(5, f"Kubernetes . Io / Availablezone:            \t{notes.get('kubernetes.io/availablezone', '')}\n")
    w(5, f"Network . Alpha . Kubernetes . Io / Network:\t{notes.get('network.alpha.kubernetes.io/network', '')}\n")
    w(4, f"Creation Timestamp:\t{common.go_time(tmd.get('creationTimestamp'))}\n")
    w(3, "Spec:\n")
    w(4, "Containers:\n")
    for c in tspec.get("containers") or []:
        w(5, "Command:\n")
        for part in c.get("command") or []:
            w(6, f"{part}\n")
        w(5, f"Image:\t{c.get('image', '')}\n")
        w(5, f"Name: \t{c.get('name', '')}\n")
        w(5, "Ports:\n")
        for p in c.get("ports") or []:
            w(6, f"Container Port:\t{p.get('containerPort', 0)}\n")
            w(6, f"Name:          \t{p.get('name', '')}\n")
        w(5, "Resources:\n")
        res = c.get("resources") or {}
        for section, label in (("limits", "Limits:"), ("requests", "Requests:")):
            values = res.get(section) or {}
            w(6, f"{label}\n")
            w(7, f"Cpu:   \t{_quantity(values.get('cpu'))}\n")
            w(7, f"Memory:\t{_quantity(values.get('memory'))}\n")
        w(6, f"Working Dir:\t{c.get('workingDir', '')}\n")
    w(4, "Image Pull Secrets:\n")
    for s in tspec.get("imagePullSecrets") or []:
        w(5, f"Name:     \t{s.get('name', '')}\n")
    w(4, f"Restart Policy:   \t{tspec.get('restartPolicy', '')}\n")


def _quantity(value: Any) -> str:
    """A resource quantity as Volcano's vcctl prints it (Quantity.String(): `1000m` -> `1`); none is `0`. A
    value that is no quantity (admission refuses them; a Go client could not read the job) as it is."""
    if value is None:
        return "0"
    try:
        return quantity.canonical(value)
    except ValueError:
        return value if isinstance(value, str) else json.dumps(value)


def vcctl_duration(timestamp: str | None, now: dt.datetime) -> str:
    """Volcano's util.TranslateTimestampSince (its HumanDuration differs only in printing `<n>y0d`)."""
    return common.age(timestamp, now, zero_days=True)


def events_text(events: list[Obj], now: dt.datetime) -> str:
    if not events:
        return "Events: \t<none>\n"
    out = [f"Events:\n{'Type':<15}\t{'Reason':<40}\t{'Age':<30}\t{'Form':<40}\tMessage\n",
           f"{'-------':<15}\t{'-------':<40}\t{'-------':<30}\t{'-------':<40}\t-------\n"]
    for e in events:
        first = vcctl_duration(e.get("firstTimestamp") or (e.get("metadata") or {}).get("creationTimestamp"), now)
        count = int(e.get("count") or 0)
        interval = f"{vcctl_duration(e.get('lastTimestamp'), now)} (x{count} over {first})" if count > 1 else first
        source = e.get("source") or {}
        origin = ", ".join([source.get("component", "")] + ([source["host"]] if source.get("host") else []))
        out.append(f"{e.get('type', ''):<15}\t{e.get('reason', ''):<40}\t{interval:<30}\t{origin:<40}\t"
                   f"{str(e.get('message', '')).strip()}\n")
    return "".join(out)


def job_from_file(path: str, docs: list[Obj], namespace: str, namespace_given: bool) -> Obj:
    """The vcjob `job run -f` creates: the file's first Job (a document without `kind` counts as one,
    as Volcano reads the file into a Job). A document of another kind is refused, naming it, rather
    than sent as a Job; further Jobs are not run (Volcano reads only the first), which is said on
    stderr. The job goes to its own namespace, else to -n; an explicit -n naming another one is
    refused, as kubectl refuses it."""
    if not docs:
        raise common.CommandError(f"failed to unmarshal file, err: {path} holds no job")
    jobs = [d for d in docs if d.get("kind") in (None, "", kinds.JOB.kind)]
    if not jobs:
        found = ", ".join(f"{d.get('kind')}/{meta.name(d)}" for d in docs)
        raise common.CommandError(f"{path}: no {kinds.JOB.kind} ({kinds.JOB.api_version}) in the file, "
                                  f"found {found}")
    job = dict(jobs[0], apiVersion=jobs[0].get("apiVersion") or kinds.JOB.api_version, kind=kinds.JOB.kind)
    skipped = [d for d in docs if d is not jobs[0]]
    if skipped:
        click.echo(f"{path}: only the first Job ({meta.name(job)}) is run; skipped "
                   + ", ".join(f"{d.get('kind') or kinds.JOB.kind} {meta.name(d)}" for d in skipped), err=True)
    md = dict(job.get("metadata") or {})
    own = md.get("namespace")
    if own and namespace_given and own != namespace:
        raise common.CommandError(f'the namespace from the provided object "{own}" does not match the namespace '
                                  f'"{namespace}". You must pass \'--namespace={own}\' to perform this operation.')
    md["namespace"] = own or namespace
    job["metadata"] = md
    return job


# ---- command bodies --------------------------------------------------------------------------------
def issue(client: Any, namespace: str, name: str, action: batch.Action) -> None:
    """Ask the controller to run `action` on a job: a Command on Volcano, the annotation on vclite."""
    job = client.get(kinds.JOB, namespace, name)
    if client.serves("bus.volcano.sh/v1alpha1", "commands"):
        client.request("POST", f"/apis/bus.volcano.sh/v1alpha1/namespaces/{namespace}/commands",
                       bus.command_for(job, kinds.JOB, str(action)))
    else:
        client.patch(kinds.JOB, namespace, name, commands.set_patch(action))


def _run(client: Any, flags: dict[str, Any]) -> None:
    if not flags["name"] and not flags["filename"]:
        raise common.CommandError("job name cannot be left blank")
    requests, limits = parse_resources(flags["requests"]), parse_resources(flags["limits"])
    if flags["filename"]:
        path = flags["filename"]
        if path != stdinput.STDIN and ".yaml" not in path and ".yml" not in path:
            raise common.CommandError("only support yaml file")
        job = job_from_file(stdinput.name(path), common.read_documents(path), flags["namespace"],
                            flags["namespace_given"])
    else:
        job = launch_job(flags["name"], flags["namespace"], flags["image"], flags["min"], flags["replicas"],
                         requests, limits, flags["scheduler"], flags["command"])
    created = client.create(job)
    click.echo(f"run job {meta.name(created)} successfully")


def _list(client: Any, namespace: str, all_namespaces: bool, queue: str, scheduler: str, selector: str) -> None:
    jobs = select_jobs(client.list(kinds.JOB, None if all_namespaces else namespace), queue, scheduler, selector)
    if not jobs:
        click.echo("No resources found")
        return
    click.echo(list_text(jobs, all_namespaces), nl=False)


def show_job(client: Any, namespace: str, name: str, now: dt.datetime, conditions: bool = True) -> None:
    """`job view`'s body (and `vjobs -n NAME`'s, without conditions)."""
    if not name:
        raise common.CommandError("job name (specified by --name or -N) is mandatory to view a particular job")
    job = client.get(kinds.JOB, namespace, name)
    try:
        events = job_events(client.list(kinds.EVENT, namespace), meta.name(job))
    except errors.ApiError as exc:
        click.echo(f"Failed to list events: {exc.message}", err=True)
        events = []
    podgroups = client.list(kinds.PODGROUP, namespace)
    click.echo(view_text(job, events, waiting_reason(job, podgroups), now, conditions), nl=False)


# ---- the commands ----------------------------------------------------------------------------------
def _name_ns(fn: Any) -> Any:
    return common.name_option("job")(common.namespace_option("job")(common.common_options(fn)))


RUN_HELP = """run job by parameters from the command line

Creates a vcjob of one task of -r pods (image -i, requests -R, limits -L) that scheduler -S
starts once -m of them fit, in namespace -n; or the first Job of a YAML file (-f; -n then
applies only when the file names no namespace; -f - reads it from standard input). Prints
`run job <name> successfully`. On vclite, which runs each container as a local process, give
the container's command with --command.

\b
Examples:
  vcctl job run -N train -r 4 -m 4 -R cpu=2,memory=4Gi -L cpu=2,memory=4Gi --command 'python train.py'
  vcctl job run -f job.yaml
  generate-job | vcctl job run -f -
"""


@click.command("run", context_settings=CONTEXT, help=RUN_HELP, short_help="run job by parameters from the command line")
@common.common_options
@click.option("-i", "--image", default="busybox", show_default=True, help="the container image of job")
@common.namespace_option("job")
@common.name_option("job")
@click.option("-m", "--min", "min_", default=1, show_default=True, type=int, help="the minimal available tasks of job")
@click.option("-r", "--replicas", default=1, show_default=True, type=int, help="the total tasks of job")
@click.option("-R", "--requests", default="cpu=1000m,memory=100Mi", show_default=True,
              help="the resource request of the task")
@click.option("-L", "--limits", default="cpu=1000m,memory=100Mi", show_default=True,
              help="the resource limit of the task")
@click.option("-S", "--scheduler", default="volcano", show_default=True, help="the scheduler for this job")
@click.option("-f", "--filename", default="", help="the yaml file of job (- for standard input)")
@click.option("--command", default=None, help="the container's command, run with `sh -c` (vclite extension: "
                                              "vclite runs containers as local processes)")
@click.pass_context
def run(ctx, master, kubeconfig, image, namespace, name, min_, replicas, requests, limits, scheduler, filename,
        command):
    given = ctx.get_parameter_source("namespace") is not click.core.ParameterSource.DEFAULT
    flags = {"name": name, "namespace": namespace, "namespace_given": given, "image": image, "min": min_,
             "replicas": replicas, "requests": requests, "limits": limits, "scheduler": scheduler,
             "filename": filename, "command": command}
    common.run_checked("run", "job", lambda: _run(common.connect(master, kubeconfig), flags))


@click.command("list", context_settings=CONTEXT, short_help="list job information", help="""list job information

One line per vcjob of namespace -n (every namespace with --all-namespaces): creation date, phase,
job type, replicas, minAvailable and pods by phase. `No resources found` when none matches.

\b
Examples:
  vcctl job list
  vcctl job list --all-namespaces -q research --selector train
""")
@common.common_options
@click.option("-q", "--queue", default="", help="list job with specified queue name")
@common.namespace_option("job")
@click.option("-S", "--scheduler", default="", help="list job with specified scheduler name")
@click.option("--all-namespaces", is_flag=True, help="list jobs in all namespaces")
@click.option("--selector", default="", help="fuzzy matching jobName")
def list_(master, kubeconfig, queue, namespace, scheduler, all_namespaces, selector):
    common.run_checked("list", "job", lambda: _list(common.connect(master, kubeconfig), namespace, all_namespaces,
                                                    queue, scheduler, selector))


@click.command("view", context_settings=CONTEXT, short_help="show job information", help="""show job information

The job's spec, status and events, as Volcano's vcctl prints them, and (vclite) `Waiting:` with
the scheduler's reason while the job waits for resources.

\b
Example:
  vcctl job view -N train -n research
""")
@_name_ns
@click.pass_context
def view(ctx, name, namespace, master, kubeconfig):
    now = common.clock_of(ctx).now()
    common.run_checked("view", "job", lambda: show_job(common.connect(master, kubeconfig), namespace, name, now))


ACTION_HELP = {
    "suspend": """abort a job

Asks the job controller to abort the job: its pods are stopped, the job goes Aborting then
Aborted and keeps its spec until `vcctl job resume`. Prints nothing on success, as Volcano.

\b
Example:
  vcctl job suspend -N train -n research
""",
    "resume": """resume a job

Asks the job controller to run an aborted job again: its pods are created anew. Prints nothing on
success, as Volcano.

\b
Example:
  vcctl job resume -N train -n research
""",
}


def _action_command(sub: str, help_text: str, action: batch.Action) -> click.Command:
    @click.command(sub, context_settings=CONTEXT, short_help=help_text, help=ACTION_HELP[sub])
    @_name_ns
    def cmd(name, namespace, master, kubeconfig):
        def body() -> None:
            if not name:
                raise common.CommandError(f"job name is mandatory to {sub} a particular job")
            issue(common.connect(master, kubeconfig), namespace, name, action)
        common.run_checked(sub, "job", body)
    return cmd


@click.command("delete", context_settings=CONTEXT, short_help="delete a job", help="""delete a job

Deletes the vcjob (its pods and PodGroup go with it) and prints `delete job <name> successfully`.

\b
Example:
  vcctl job delete -N train -n research
""")
@_name_ns
def delete(name, namespace, master, kubeconfig):
    def body() -> None:
        if not name:
            raise common.CommandError("job name is mandatory to delete a particular job")
        common.connect(master, kubeconfig).delete(kinds.JOB, namespace, name)
        click.echo(f"delete job {name} successfully")
    common.run_checked("delete", "job", body)


def build() -> list[click.Command]:
    """The client commands of `vcctl job`, ready to be added to its click group."""
    return [run, list_, view, _action_command("suspend", "abort a job", batch.Action.ABORT_JOB),
            _action_command("resume", "resume a job", batch.Action.RESUME_JOB), delete]
