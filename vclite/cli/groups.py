"""The `vcctl jobflow|jobtemplate|job|queue|pod` groups: Volcano's vcctl client commands (client_*.py)
and the local converters between a vcjob and a JobTemplate. Loaded by main.LazyGroup only when one
of these groups is used (or help lists them)."""
from __future__ import annotations

import dataclasses
import json
import sys

import click

from vclite.api import convert, yamlio
from vclite.cli import client_job, client_jobflow, client_pod, client_queue
from vclite.cli.context import CONTEXT


def _convert(file: str, name: str | None, output: str, want_kind: str, fn) -> None:
    from vclite.cli import manifests  # (admission and a scratch API: the client commands never need them)

    try:
        docs = manifests.load([file])
    except manifests.InvalidManifests as exc:
        for p in exc.problems:
            click.echo(str(p), err=True)
        sys.exit(2)
    file = manifests.source_name(file)
    chosen = [d for d in docs if d.obj.get("kind") == want_kind]
    if not chosen:
        click.echo(f"{file}: no {want_kind} found (found: {', '.join(sorted({str(d.obj.get('kind')) for d in docs}))})",
                   err=True)
        sys.exit(2)
    if name and len(chosen) > 1:
        click.echo(f"{file}: --name names one object, but the file has {len(chosen)} of kind {want_kind} "
                   f"({', '.join(manifests.describe(d) for d in chosen)}); give a file with one, or omit --name",
                   err=True)
        sys.exit(2)
    out = [fn(d.obj, name) for d in chosen]
    bad_name = name and _name_problems(out[0], name)
    if bad_name:
        click.echo(f"--name: Invalid value: {json.dumps(name)}: {'; '.join(bad_name)}", err=True)
        sys.exit(2)
    problems = _spec_problems(chosen, out)
    if problems:
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len(problems)} problem(s) found; nothing was converted.", err=True)
        sys.exit(2)
    if output == "json":
        click.echo(json.dumps(out[0] if len(out) == 1 else {"apiVersion": "v1", "kind": "List", "items": out},
                              indent=2))
    else:
        click.echo("---\n".join(yamlio.dump_yaml(o) for o in out), nl=False)


def _spec_problems(sources: list, converted: list[dict]) -> list:
    """Admission's problems of each conversion's JobTemplate side (the vcjob rules without the queue's
    state, which is the cluster's), at the lines of the source file: a spec the API would refuse is not
    converted."""
    from vclite.cli import manifests

    templates = [dataclasses.replace(d, obj=o if o.get("kind") == "JobTemplate" else d.obj)
                 for d, o in zip(sources, converted)]
    return manifests.in_file_order(manifests.validate(templates, require_command=False),
                                   list(dict.fromkeys(d.file for d in sources)))


def _name_problems(converted: dict, name: str) -> list[str]:
    """What is wrong with `--name` as the name of the converted object's kind (admission's words)."""
    from vclite.admission import common
    from vclite.api import kinds

    kind = kinds.by_kind(converted.get("kind", ""))
    return common.name_errors(kind, name) if kind is not None else []


_file_opt = click.option("-f", "--file", "file", required=True,
                         type=click.Path(exists=True, dir_okay=False, allow_dash=True),
                         help="The manifest file to convert (- for standard input).")
_name_opt = click.option("--name", help="Name of the new object (default: the source's name); only when the file "
                                      "has one object to convert.")
_out_opt = click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)


@click.group(context_settings=CONTEXT)
def jobflow() -> None:
    """JobFlows (flow.volcano.sh/v1alpha1) on a server or cluster, as Volcano's vcctl.

    \b
    Talks to the API server of the kubeconfig (-k; default: $KUBECONFIG, the `vcctl server`
    kubeconfig, ~/.kube/config), or to -s/--master.
    """


for _command in client_jobflow.build(client_jobflow.JOBFLOW):
    jobflow.add_command(_command)


@click.group(context_settings=CONTEXT)
def jobtemplate() -> None:
    """JobTemplates (flow.volcano.sh/v1alpha1): the job a JobFlow's flow runs.

    create|list|get|describe|delete talk to a server or cluster, as Volcano's vcctl;
    from-job converts a file locally.
    """


for _command in client_jobflow.build(client_jobflow.JOBTEMPLATE):
    jobtemplate.add_command(_command)


def _converter(group: click.Group, command: str, source_kind: str, fn, doc: str) -> click.Command:
    """`vcctl <group> <command> -f FILE [--name] [-o]`: convert each `source_kind` of FILE with `fn`."""
    @group.command(command, context_settings=CONTEXT, help=doc)
    @_file_opt
    @_name_opt
    @_out_opt
    def convert_file(file, name, output) -> None:
        _convert(file, name, output, source_kind, fn)
    return convert_file


jobtemplate_from_job = _converter(
    jobtemplate, "from-job", "Job", convert.job_to_template,
    "Turn a vcjob manifest into a JobTemplate (same spec), ready to be named by a JobFlow.")


@click.group(context_settings=CONTEXT)
def job() -> None:
    """Volcano jobs (batch.volcano.sh/v1alpha1 Job, "vcjob").

    run|list|view|suspend|resume|delete talk to a server or cluster, as Volcano's vcctl;
    from-template converts a file locally.
    """


for _command in client_job.build():
    job.add_command(_command)
queue = client_queue.build()
pod = client_pod.build()


job_from_template = _converter(
    job, "from-template", "JobTemplate", convert.template_to_job,
    "Turn a JobTemplate into a standalone vcjob manifest (same spec), e.g. to run one step alone.")


