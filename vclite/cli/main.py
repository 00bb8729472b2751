"""The `vcctl` entry point: command groups and their help. Each command's work lives in its own
module (run.py, manifests.py, convert …); this module only declares the interface."""
from __future__ import annotations

import json
import logging
import math
import os
import sys

import click

from vclite import __version__
from vclite.cli.context import CONTEXT


class LazyGroup(click.Group):
    """A group whose commands are imported only when used: the embedded control plane and the
    server (heavy), and the client groups (`vcctl run` and `validate` never load the HTTP client).
    `vcctl --help` lists them from `lazy_help` without importing any (importing them all took a
    second: the scheduler's plugins, NumPy, the HTTP stack); a test keeps each line equal to the
    command's own short help."""

    lazy: dict[str, str] = {
        "server": "vclite.cli.server:server", "scheduler": "vclite.cli.scheduler_cmd:scheduler",
        "controller": "vclite.cli.controller:controller",
        "jobflow": "vclite.cli.groups:jobflow", "jobtemplate": "vclite.cli.groups:jobtemplate",
        "job": "vclite.cli.groups:job", "queue": "vclite.cli.groups:queue", "pod": "vclite.cli.groups:pod",
    }
    lazy_help: dict[str, str] = {
        "controller": "Run vclite's JobFlow controllers on a Kubernetes cluster where Volcano runs the jobs.",
        "job": 'Volcano jobs (batch.volcano.sh/v1alpha1 Job, "vcjob").',
        "jobflow": "JobFlows (flow.volcano.sh/v1alpha1) on a server or cluster, as Volcano's vcctl.",
        "jobtemplate": "JobTemplates (flow.volcano.sh/v1alpha1): the job a JobFlow's flow runs.",
        "pod": "vcctl command line operation pod",
        "queue": "Queue Operations",
        "scheduler": "Volcano's scheduler, offline: ask what it would decide for a cluster state.",
        "server": "Serve the control plane to kubectl, vcctl and Kubernetes clients, durably.",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            import importlib

            module, attr = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        """click's, but a mistyped name is told the close names among every command, lazy ones included
        (click suggests among the loaded ones only)."""
        name = click.utils.make_str(args[0])
        if name[:1].isalnum() and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            import difflib

            close = sorted(difflib.get_close_matches(name, self.list_commands(ctx)))
            hint = "" if not close else f" Did you mean {close[0]!r}?" if len(close) == 1 else \
                f" (Did you mean one of: {', '.join(repr(c) for c in close)}?)"
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's command list, with the lazy commands' lines from `lazy_help` (nothing imported)."""
        width = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy_help and name not in self.commands:
                rows.append((name, click.Command(name, help=self.lazy_help[name]).get_short_help_str(width)))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, prog_name="vcctl")
def cli() -> None:
    """vclite: Volcano's batch system and JobFlow, on your machine.

    \b
    Run a JobFlow (or any Volcano manifests) on the embedded control plane:
      vcctl run examples/diamond.yaml
    Check manifests without running them:
      vcctl validate flow.yaml
    The same YAML runs unchanged on a Kubernetes cluster with Volcano.
    """


def _positive_seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not (0 < value < math.inf):
        raise click.BadParameter(f"{value:g} is not a number of seconds greater than 0")
    return value


def _params(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in values:
        name, eq, value = text.partition("=")
        if not eq or not name:
            raise click.BadParameter(f"{text!r}: expected NAME=VALUE (e.g. -p epochs=5)")
        out[name] = value
    return out


def _listen(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    if value is None:
        return None
    from vclite.cli import runlisten
    try:
        return runlisten.parse_address(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


PARAM_HELP = ("Set a JobFlow parameter (spec.arguments.parameters), as `argo submit -p`; repeatable. "
              "It must be declared by a JobFlow of the FILES.")


@cli.command(context_settings=CONTEXT)
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", callback=_params, help=PARAM_HELP)
@click.option("-q", "--quiet", is_flag=True, help="No progress output: nothing on success; a failure prints only why (on stderr).")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]),
              help="At the end, print a v1 List of every JobFlow, JobTemplate, vcjob, PodGroup and Pod "
                   "(those deleted during the run, e.g. by ttlSecondsAfterFinished, as last seen).")
@click.option("--nodes", "nodes_opt", metavar="SPEC",
              help="Nodes to run on instead of one node sized like this host: a count (`3`), "
                   "sizes (`2x(cpu=4,memory=8Gi)`), or a YAML file of Node objects (- for standard input). "
                   "Node objects among the FILES declare them too (not with --nodes).")
@click.option("--scheduler-conf", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="A volcano-scheduler.conf (actions and plugin tiers; - for standard input). If omitted: the "
                   "volcano-scheduler.conf of Volcano's ConfigMap volcano-system/volcano-scheduler-configmap "
                   "when a FILE defines it, else Volcano's default.")
@click.option("--workdir", type=click.Path(file_okay=False),
              help="Where pods' working directories and logs go (default: a new temporary directory).")
@click.option("--timeout", type=float, metavar="SECONDS", callback=_positive_seconds,
              help="Give up (exit 1) after this many seconds (e.g. 600). A run with a CronJob ends so "
                   "(exit 0 if nothing failed).")
@click.option("--listen", metavar="HOST:PORT", callback=_listen,
              help="Serve the Kubernetes-compatible API of `vcctl server` during the run (HTTPS, a token; "
                   "port 0: any free one), so kubectl and vcctl reach it from another terminal with the "
                   "kubeconfig the run prints (`kubectl get jf -w`, `vcctl jobflow suspend NAME -k PATH`). "
                   "A run that serves does not stop when nothing can move on by itself: it waits for a "
                   "client until everything finished, --timeout or Ctrl-C. Off by default.")
def run(files, params, quiet, output, nodes_opt, scheduler_conf, workdir, timeout, listen) -> None:
    """Run manifests on the embedded control plane until every JobFlow, vcjob and bare pod finishes.

    \b
    Examples:
      vcctl run examples/diamond.yaml
      vcctl run -p epochs=5 -p lr=0.01 train-flow.yaml templates.yaml
      generate-flow | vcctl run -

    A FILE of - is standard input (problems name it <stdin>); so is a --nodes or --scheduler-conf
    of -, but only one input can be read from it (exit 2 if two ask). A FILE that is a directory stands
    for its .json, .yaml and .yml files, as for kubectl apply -f DIR. Every document of every FILE is
    validated first; if any is invalid, every problem is listed (file:line: Kind/name: field:
    message; file:line:column for a character of an expression) and nothing runs (exit 2). Then the objects are applied
    (Queues and JobTemplates before the vcjobs and JobFlows that use them), each pod runs as local
    processes, and a live view shows each flow's DAG, per-job phase and task progress.

    A container sees its volumeMounts at their mountPaths (/data, /etc/volcano/worker.host) and
    writes its termination message (a JobFlow output) to its terminationMessagePath
    (/dev/termination-log), in a mount namespace of its own; the rest of the file system is this
    host's. Where the host cannot make one (no root, no user namespaces), or with
    VCLITE_MOUNT_VIEW=off, they are under $VC_POD_DIR/<mountPath> and $TERMINATION_MESSAGE_PATH.

    A CronJob (batch.volcano.sh) never finishes: its vcjobs run at their scheduled times
    (`schedule: "@every 10s"`, `"*/5 * * * *"`, ...) until --timeout or Ctrl-C; ending at
    --timeout exits 0 if nothing failed (a vcjob still running then is stopped):

    \b
      vcctl run --timeout 60 examples/cronjob.yaml

    The run serves no API unless --listen asks: then kubectl and other vcctl commands (`vcctl jobflow
    suspend`, `get -w`) reach it from another terminal, with the kubeconfig it prints, until it ends:

    \b
      vcctl run --listen 127.0.0.1:0 flow.yaml
      kubectl --kubeconfig <printed path> get jf -w

    For a control plane that outlives the run, use `vcctl server`.

    \b
    Exit status: 0 all succeeded; 1 something failed or can never run (the reason is printed);
    2 invalid input; 130 interrupted (Ctrl-C stops every pod first, then lists what was left, as a
    timeout does: what each flow waited on, each retry and when it was due).
    """
    from vclite.cli import run as run_mod  # the whole control plane: imported only to run

    code = run_mod.run(list(files), quiet, output, nodes_opt, scheduler_conf, workdir, timeout, params, listen)
    _EXIT_AT_ONCE.append(code)   # (main() then skips freeing the run's objects one by one)
    sys.exit(code)


@cli.command(context_settings=CONTEXT)
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", callback=_params, help=PARAM_HELP)
def validate(files, params) -> None:
    """Check manifests with the same admission rules `run` and a Volcano cluster apply.

    Lists every problem as file:line: Kind/name: field: message and exits 2 if there is any.
    A FILE of - is standard input (named <stdin> in the problems); a directory stands for its .json,
    .yaml and .yml files, as for kubectl apply -f DIR.
    One check goes further than a cluster: a JobFlow whose JobTemplates no FILE defines is a
    problem (on a cluster it would wait for them forever), so give the templates' files too.
    A field no schema defines (a typo such as `minAvaliable`) is a warning: it is ignored; in a
    JobFlow it is a problem (a typo such as `flow:` would run nothing and succeed).
    """
    from vclite.cli import manifests  # admission and a scratch API: not loaded by the client commands

    read, nodes, node_problems = manifests.nodes_among(manifests.read_all(list(files)), None)   # (as `run` reads them)
    docs, problems = manifests.load_and_validate(list(files), params=params, read=read)
    problems = manifests.in_file_order([*node_problems, *problems], list(files))
    for w in manifests.warnings(docs):
        click.echo(f"warning: {w}", err=True)
    if problems:
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len(problems)} problem(s) found{manifests.with_params(params)}.", err=True)
        sys.exit(2)
    click.echo(f"{len(docs) + len(nodes or ())} object(s) valid.")


@cli.command(context_settings=CONTEXT, short_help="Print the version information")
def version() -> None:
    """Print the version information

    The lines of Volcano's `vcctl version` (API Version, Version, Git SHA, Built At), then the
    Python version and OS/Arch where Volcano prints Go's. `vcctl --version` prints the version alone.

    \b
    Example:
      vcctl version
    """
    import platform

    from vclite.cli import version as version_mod

    for line in version_mod.info(__version__, platform.python_version(), sys.platform, platform.machine()):
        click.echo(line)


# Set by `run` once everything is done (pods stopped, output written, work directory handled): the
# process then ends without the interpreter's teardown, which frees the control plane's objects one
# by one — about half a millisecond per job of the flow (0.17 s after a 300-job chain).
_EXIT_AT_ONCE: list[int] = []


def exit_at_once(code: int) -> None:
    """End the process now with `code`, once what it printed is flushed (as a normal exit would)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe (`vcctl run … | head`): nothing more to say
            pass
    logging.shutdown()
    os._exit(code)


def main() -> None:
    try:
        cli(prog_name="vcctl")
    except SystemExit:
        if _EXIT_AT_ONCE:
            exit_at_once(_EXIT_AT_ONCE[-1])
        raise


if __name__ == "__main__":
    main()
