"""The `vcctl` entry point: command groups and their help. Each command's work lives in its own
module (run.py, manifests.py, convert …); this module only declares the interface."""
from __future__ import annotations

import json
import sys

import click

from vclite import __version__
from vclite.api import convert, yamlio
from vclite.cli import client_job, client_jobflow, client_queue, manifests

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class LazyGroup(click.Group):
    """A group whose heavy commands (the embedded control plane, the server) are imported only
    when used, so client commands start fast."""

    lazy: dict[str, str] = {"server": "vclite.cli.server:server", "scheduler": "vclite.cli.scheduler_cmd:scheduler"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            import importlib

            module, attr = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


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


@cli.command(context_settings=CONTEXT)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-q", "--quiet", is_flag=True, help="No progress output; only the exit code (and -o output).")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]),
              help="At the end, print a v1 List of every JobFlow, JobTemplate, vcjob, PodGroup and Pod.")
@click.option("--nodes", "nodes_opt", metavar="SPEC",
              help="Nodes to run on instead of one node sized like this host: a count (`3`), "
                   "sizes (`2x(cpu=4,memory=8Gi)`), or a YAML file of Node objects.")
@click.option("--scheduler-conf", type=click.Path(exists=True, dir_okay=False),
              help="A volcano-scheduler.conf (actions and plugin tiers); Volcano's default if omitted.")
@click.option("--workdir", type=click.Path(file_okay=False),
              help="Where pods' working directories and logs go (default: a new temporary directory).")
@click.option("--timeout", type=float, metavar="SECONDS", help="Give up (exit 1) after this long.")
def run(files, quiet, output, nodes_opt, scheduler_conf, workdir, timeout) -> None:
    """Run manifests on the embedded control plane until every JobFlow and vcjob finishes.

    Every document of every FILE is validated first; if any is invalid, every problem is listed
    (file:line: Kind/name: field: message) and nothing runs (exit 2). Then the objects are applied
    (Queues and JobTemplates before the vcjobs and JobFlows that use them), each pod runs as local
    processes, and a live view shows each flow's DAG, per-job phase and task progress.

    \b
    Exit status: 0 all succeeded; 1 something failed or can never run (the reason is printed);
    2 invalid input; 130 interrupted (Ctrl-C stops every pod first).
    """
    from vclite.cli import run as run_mod  # the whole control plane: imported only to run

    sys.exit(run_mod.run(list(files), quiet, output, nodes_opt, scheduler_conf, workdir, timeout))


@cli.command(context_settings=CONTEXT)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def validate(files) -> None:
    """Check manifests with the same admission rules `run` and a Volcano cluster apply.

    Lists every problem as file:line: Kind/name: field: message and exits 2 if there is any.
    """
    docs, problems = manifests.load_and_validate(list(files))
    if problems:
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len(problems)} problem(s) found.", err=True)
        sys.exit(2)
    click.echo(f"{len(docs)} object(s) valid.")


def _convert(file: str, name: str | None, output: str, want_kind: str, fn) -> None:
    try:
        docs = manifests.load([file])
    except manifests.InvalidManifests as exc:
        for p in exc.problems:
            click.echo(str(p), err=True)
        sys.exit(2)
    chosen = [d for d in docs if d.obj.get("kind") == want_kind]
    if not chosen:
        click.echo(f"{file}: no {want_kind} found (found: {', '.join(sorted({str(d.obj.get('kind')) for d in docs}))})",
                   err=True)
        sys.exit(2)
    out = [fn(d.obj, name if len(chosen) == 1 else None) for d in chosen]
    if output == "json":
        click.echo(json.dumps(out[0] if len(out) == 1 else {"apiVersion": "v1", "kind": "List", "items": out},
                              indent=2))
    else:
        click.echo("---\n".join(yamlio.dump_yaml(o) for o in out), nl=False)


_file_opt = click.option("-f", "--file", "file", required=True, type=click.Path(exists=True, dir_okay=False),
                         help="The manifest file to convert.")
_name_opt = click.option("--name", help="Name of the new object (default: the source's name).")
_out_opt = click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)


@cli.group(context_settings=CONTEXT)
def jobflow() -> None:
    """JobFlows (flow.volcano.sh/v1alpha1) on a server or cluster, as Volcano's vcctl.

    \b
    Talks to the API server of the kubeconfig (-k; default: $KUBECONFIG, the `vcctl server`
    kubeconfig, ~/.kube/config), or to -s/--master.
    """


for _command in client_jobflow.build(client_jobflow.JOBFLOW):
    jobflow.add_command(_command)


@cli.group(context_settings=CONTEXT)
def jobtemplate() -> None:
    """JobTemplates (flow.volcano.sh/v1alpha1): the job a JobFlow's flow runs.

    create|list|get|describe|delete talk to a server or cluster, as Volcano's vcctl;
    from-job converts a file locally.
    """


for _command in client_jobflow.build(client_jobflow.JOBTEMPLATE):
    jobtemplate.add_command(_command)


@jobtemplate.command("from-job", context_settings=CONTEXT)
@_file_opt
@_name_opt
@_out_opt
def jobtemplate_from_job(file, name, output) -> None:
    """Turn a vcjob manifest into a JobTemplate (same spec), ready to be named by a JobFlow."""
    _convert(file, name, output, "Job", convert.job_to_template)


@cli.group(context_settings=CONTEXT)
def job() -> None:
    """Volcano jobs (batch.volcano.sh/v1alpha1 Job, "vcjob").

    run|list|view|suspend|resume|delete talk to a server or cluster, as Volcano's vcctl;
    from-template converts a file locally.
    """


for _command in client_job.build():
    job.add_command(_command)
cli.add_command(client_queue.build())


@job.command("from-template", context_settings=CONTEXT)
@_file_opt
@_name_opt
@_out_opt
def job_from_template(file, name, output) -> None:
    """Turn a JobTemplate into a standalone vcjob manifest (same spec), e.g. to run one step alone."""
    _convert(file, name, output, "JobTemplate", convert.template_to_job)


def main() -> None:
    cli(prog_name="vcctl")


if __name__ == "__main__":
    main()
