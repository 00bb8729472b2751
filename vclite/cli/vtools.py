"""Volcano's one-command tools `vcancel`, `vsuspend`, `vresume`, `vjobs`, `vqueues` and `vsub` (Volcano's
cmd/cli/v*, pkg/cli/v*): each a command of its own, installed beside `vcctl`, against the API server of the
kubeconfig or -s/--master.

Their flags are the other way round from `vcctl job`'s: `-n/--name` is the job's (or queue's) name and
`-N/--namespace` its namespace (default `default`). `vcancel` deletes the job and prints `cancel job <name>
successfully`; `vsuspend` and `vresume` ask the job controller to abort or resume it (as `vcctl job
suspend|resume`: a bus Command, or vclite's annotation where the server serves no Commands) and print nothing.
`vjobs` shows a job as `vcctl job view` (without its conditions), or without -n lists the namespace's jobs;
`vqueues` prints a queue's (or every queue's) line from its status counts; `vsub` runs a job as `vcctl job
run` does, its command split as a shell splits it, its image, namespace and scheduler defaulting to
$VOLCANO_DEFAULT_IMAGE, $VOLCANO_DEFAULT_JOB_NAMESPACE and $VOLCANO_SCHEDULER_NAME. A failure is printed as
Volcano's root commands print it, `Failed to: <error>` on stdout, with exit code 255.
"""
from __future__ import annotations

import os
import shlex
from typing import Any, Callable

import click

from vclite.api import batch, kinds, meta
from vclite.cli import client_common as common
from vclite.cli import client_job, client_queue
from vclite.cli.context import CONTEXT

Obj = dict[str, Any]


def _options(fn: Callable) -> Callable:
    fn = click.option("-n", "--name", default="", help="the name of job")(fn)
    fn = click.option("-N", "--namespace", default="default", show_default=True, help="the namespace of job")(fn)
    return common.common_options(fn)


def _tool(use: str, short: str, long: str, verb: str, body: Callable[[Any, str, str], None]) -> click.Command:
    """A root command `use`: checks the name, connects, runs `body(client, namespace, name)`."""
    @click.command(use, context_settings=CONTEXT, short_help=short, help=long)
    @_options
    def command(master: str, kubeconfig: str, namespace: str, name: str) -> None:
        def run() -> None:
            if not name:
                raise common.CommandError(f"job name is mandatory to {verb} a particular job")
            body(common.connect(master, kubeconfig), namespace, name)
        common.run_checked("", "", run)   # (a root command: `Failed to: <error>`)
    return command


def _cancel(client: Any, namespace: str, name: str) -> None:
    client.delete(kinds.JOB, namespace, name)
    click.echo(f"cancel job {name} successfully")


vcancel = _tool("vcancel", "cancel a job",
                "cancel a running, pending, or aborted job with specified name in default or specified namespace\n\n"
                "\b\nExample:\n  vcancel -n train -N research", "cancel", _cancel)
vsuspend = _tool("vsuspend", "suspend a job",
                 "suspend a running or pending job with specified name in default or specified namespace\n\n"
                 "\b\nExample:\n  vsuspend -n train -N research", "suspend",
                 lambda client, ns, name: client_job.issue(client, ns, name, batch.Action.ABORT_JOB))
vresume = _tool("vresume", "resume a job",
                "resume an aborted job with specified name in default or specified namespace\n\n"
                "\b\nExample:\n  vresume -n train -N research", "resume",
                lambda client, ns, name: client_job.issue(client, ns, name, batch.Action.RESUME_JOB))


# ---- vjobs --------------------------------------------------------------------------------------------------
def jobs_text(jobs: list[Obj], all_namespaces: bool, scheduler: str, selector: str) -> str:
    """vjobs' PrintJobs: vcctl's job table, its filters applied row by row (the header and the widths are
    those of every job listed)."""
    rows = [j for j in jobs if (not scheduler or (j.get("spec") or {}).get("schedulerName") == scheduler)
            and selector in meta.name(j)]
    return client_job.list_text(rows, all_namespaces, widths_of=jobs)


@click.command("vjobs", context_settings=CONTEXT, short_help="view job information",
               help="view information of a job with specified name or jobs from the same namespace\n\n"
                    "\b\nExamples:\n  vjobs -n train -N research\n  vjobs --all-namespaces --selector train")
@_options
@click.option("-S", "--scheduler", default="", help="list job with specified scheduler name")
@click.option("--all-namespaces", is_flag=True, help="list jobs in all namespaces")
@click.option("--selector", default="", help="fuzzy matching jobName")
@click.pass_context
def vjobs(ctx: click.Context, master: str, kubeconfig: str, namespace: str, name: str, scheduler: str,
          all_namespaces: bool, selector: str) -> None:
    now = common.clock_of(ctx).now()

    def run() -> None:
        client = common.connect(master, kubeconfig)
        if name:
            client_job.show_job(client, namespace, name, now, conditions=False)
            return
        jobs = client.list(kinds.JOB, None if all_namespaces else namespace)
        click.echo(jobs_text(jobs, all_namespaces, scheduler, selector) if jobs else "No resources found\n",
                   nl=False)
    common.run_checked("", "", run)


# ---- vqueues ------------------------------------------------------------------------------------------------
QUEUE_COLUMNS = ("Name", "Weight", "State", "Inqueue", "Pending", "Running", "Unknown")


def queues_text(queues: list[Obj]) -> str:
    """vqueues' PrintQueues: each queue's own status counts (Volcano's queue controller no longer writes them,
    nor does vclite's: 0)."""
    def line(cells: list[str]) -> str:
        return f"{cells[0]:<25}" + "".join(f"{c:<8}" for c in cells[1:]) + "\n"

    out = [line(list(QUEUE_COLUMNS))]
    for q in queues:
        weight, state, _ = client_queue.queue_fields(q)
        out.append(line([meta.name(q), str(weight), state]
                        + [str(common.stored_int(q, "status", f))
                           for f in ("inqueue", "pending", "running", "unknown")]))
    return "".join(out)


@click.command("vqueues", context_settings=CONTEXT, short_help="view queue information",
               help="view information of a queue with specified name or queues from the same namespace\n\n"
                    "\b\nExamples:\n  vqueues\n  vqueues -n research")
@common.common_options
@click.option("-n", "--name", default="", help="the name of queue")
def vqueues(master: str, kubeconfig: str, name: str) -> None:
    def run() -> None:
        client = common.connect(master, kubeconfig)
        queues = [client.get(kinds.QUEUE, "", name)] if name else client.list(kinds.QUEUE)
        click.echo(queues_text(queues) if queues else "No resources found\n", nl=False)
    common.run_checked("", "", run)


# ---- vsub ---------------------------------------------------------------------------------------------------
def split_command(command: str) -> list[str]:
    """The container's command as google/shlex splits `-c` (quotes and escapes as a POSIX shell reads them)."""
    try:
        return shlex.split(command)
    except ValueError as exc:
        raise common.CommandError("EOF found after escape character" if "escaped" in str(exc)
                                  else "EOF found when expecting closing quote") from exc


def _env_default(variable: str, default: str) -> str:
    return os.environ.get(variable) or default


@click.command("vsub", context_settings=CONTEXT, short_help="submit a job",
               help="submit a job with specified name and arguments. yaml/json file is not accepted, you may "
                    "refer to kubectl.\n\n\b\nExample:\n  vsub -n train -r 2 -m 2 -R cpu=1 -c 'python train.py'")
@common.common_options
@click.option("-i", "--image", default="", help="the container image of job, overwrite the value of "
                                                "'VOLCANO_DEFAULT_IMAGE' (default \"busybox\")")
@click.option("-N", "--namespace", default="", help="the namespace of job, overwrite the value of "
                                                    "'VOLCANO_DEFAULT_JOB_NAMESPACE' (default \"default\")")
@click.option("-n", "--name", default="", help="the name of job")
@click.option("-m", "--min", "min_", default=1, show_default=True, type=int, help="the minimal available tasks of job")
@click.option("-r", "--replicas", default=1, show_default=True, type=int, help="the total tasks of job")
@click.option("-R", "--requests", default="cpu=1000m,memory=100Mi", show_default=True,
              help="the resource request of the task")
@click.option("-L", "--limits", default="cpu=1000m,memory=100Mi", show_default=True,
              help="the resource limit of the task")
@click.option("-S", "--scheduler", default="", help="the scheduler for this job, overwrite the value of "
                                                    "'VOLCANO_SCHEDULER_NAME' (default \"volcano\")")
@click.option("-c", "--command", default="", help="the command of job")
def vsub(master: str, kubeconfig: str, image: str, namespace: str, name: str, min_: int, replicas: int,
         requests: str, limits: str, scheduler: str, command: str) -> None:
    image = image or _env_default("VOLCANO_DEFAULT_IMAGE", "busybox")
    namespace = namespace or _env_default("VOLCANO_DEFAULT_JOB_NAMESPACE", "default")
    scheduler = scheduler or _env_default("VOLCANO_SCHEDULER_NAME", "volcano")

    def run() -> None:
        if not name:
            raise common.CommandError("job name cannot be left blank")
        job = client_job.launch_job(name, namespace, image, min_, replicas, client_job.parse_resources(requests),
                                    client_job.parse_resources(limits), scheduler, None)
        argv = split_command(command) if command else []
        if argv:
            job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"] = argv
        created = common.connect(master, kubeconfig).create(job)
        click.echo(f"run job {meta.name(created)} successfully")
    common.run_checked("", "", run)
