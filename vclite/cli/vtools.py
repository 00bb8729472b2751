"""Volcano's one-command job tools `vcancel`, `vsuspend` and `vresume` (Volcano's cmd/cli/v*, pkg/cli/v*):
each a command of its own, installed beside `vcctl`, against the API server of the kubeconfig or -s/--master.

Their flags are the other way round from `vcctl job`'s: `-n/--name` is the job's name and `-N/--namespace`
its namespace (default `default`). `vcancel` deletes the job and prints `cancel job <name> successfully`;
`vsuspend` and `vresume` ask the job controller to abort or resume it (as `vcctl job suspend|resume`: a bus
Command, or vclite's annotation where the server serves no Commands) and print nothing. A failure is printed
as Volcano's root commands print it, `Failed to: <error>` on stdout, with exit code 255.
"""
from __future__ import annotations

from typing import Any, Callable

import click

from vclite.api import batch, kinds
from vclite.cli import client_common as common
from vclite.cli import client_job
from vclite.cli.context import CONTEXT


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
