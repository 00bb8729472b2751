"""`vcctl scheduler`: the command group and `dry-run`'s interface (options, help, exit codes, output).
The work is dryrun.py's, imported when a dry run starts, so `vcctl scheduler --help` loads no scheduler."""
from __future__ import annotations

import json
import math
import sys
from typing import Any

import click

from vclite.cli import stdinput
from vclite.cli.context import CONTEXT

METRICS_TIMEOUT = 5.0   # seconds the dry run's one read of the metrics source may take (Volcano's round: 60)


def _positive(value: float) -> float:
    if not (0 < value < math.inf):
        raise click.BadParameter(f"{value:g} is not a number of seconds greater than 0")
    return value


@click.group(context_settings=CONTEXT)
def scheduler() -> None:
    """Volcano's scheduler, offline: ask what it would decide for a cluster state."""


@scheduler.command("dry-run", context_settings=CONTEXT)
@click.option("-f", "--filename", "files", multiple=True, required=True, type=click.Path(),
              help="Manifests of the cluster state: Nodes, HyperNodes, Numatopologies, Queues, PriorityClasses, "
                   "PodGroups, Pods, PodDisruptionBudgets, ResourceQuotas, Namespaces (repeatable; - for standard "
                   "input; a "
                   "directory stands for its .json, .yaml and .yml files in name order, as for `vcctl run`).")
@click.option("--conf", "conf_path", type=click.Path(dir_okay=False),
              help="A volcano-scheduler.conf (actions and plugin tiers; - for standard input). If omitted: the "
                   "volcano-scheduler.conf of Volcano's ConfigMap volcano-system/volcano-scheduler-configmap when a "
                   "-f file has it, else Volcano's default.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@click.option("--details", is_flag=True,
              help="Add the plugins' details to -o json|yaml where there are some: `bindAnnotations` (what each bind "
                   "writes on its pod: deviceshare's chosen GPUs), `numaCpuSets` (numa-aware's CPUs per pod) and "
                   "`pendingPods` (why a pod waits that its PodGroup's message does not explain: deviceshare found no "
                   "card for it). Off by default, so the answer keeps its five keys; the table always shows them.")
@click.option("--metrics-timeout", type=float, metavar="SECONDS", default=METRICS_TIMEOUT, show_default=True,
              callback=lambda ctx, param, value: _positive(value),
              help="With a `metrics` section in the conf: how long the one read of the nodes' usage may take in "
                   "all, connecting and waiting for answers included (Volcano's scheduler gives a round 60 s). A "
                   "source that has not answered by then counts as unreachable: every node's usage 0 %, as in "
                   "Volcano, and the notes say so.")
def dry_run_command(files, conf_path, output, details, metrics_timeout) -> None:
    """Run ONE scheduling session over a cluster state and print what it decided.

    \b
    Binds (pod -> node), evictions (in order), pipelined reservations (PodGroup -> nodes),
    every PodGroup's phase after the session and why each unschedulable one waits. Nothing is
    written anywhere. Exit status: 0; 2 if a file or the configuration is invalid (every problem
    is listed as file:line: message).

    \b
      vcctl scheduler dry-run -f cluster.yaml --conf volcano-scheduler.conf -o json
      vcctl scheduler dry-run -f gpu-cluster.yaml --conf deviceshare.conf -o json --details
    """
    from vclite.api import yamlio
    from vclite.cli import dryrun, manifests
    from vclite.lib import clock as clock_mod
    from vclite.scheduler import conf as conf_mod
    from vclite.scheduler import nodemetrics

    twice = stdinput.conflict({"-f": list(files), "--conf": conf_path})
    if twice:
        click.echo(f"error: {twice}; no session was run.", err=True)
        sys.exit(2)
    problems: list[Any] = []
    conf = None
    try:
        if conf_path == stdinput.STDIN:
            conf = conf_mod.load_bytes(stdinput.read(), stdinput.STDIN_NAME)
        else:
            conf = conf_mod.load_file(conf_path) if conf_path else conf_mod.default_conf()
    except OSError as exc:
        problems.append(conf_mod.Problem("", f"cannot read: {exc}", stdinput.STDIN_NAME))
    except conf_mod.ConfError as exc:
        problems.extend(exc.problems)
    try:
        state = dryrun.load_state(list(files))
    except manifests.InvalidManifests as exc:
        problems.extend(exc.problems)
    if problems or conf is None:
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len(problems)} problem(s) found; no session was run.", err=True)
        sys.exit(2)
    conf_name = stdinput.name(conf_path) if conf_path else "Volcano's default"
    if state.conf_doc is not None:   # Volcano's scheduler ConfigMap among the files
        from vclite.cli import schedconfmap

        where = schedconfmap.describe(state.conf_doc)
        if conf_path:
            click.echo(f"warning: {where}: its {schedconfmap.KEY} is not used: --conf {conf_name} is", err=True)
        else:
            conf = schedconfmap.parse(state.conf_doc)[0]   # (its problems were the state's)
            conf_name = (f"{state.conf_doc.file}:{state.conf_doc.line} "
                         f"(ConfigMap {schedconfmap.NAMESPACE}/{schedconfmap.NAME})")
    if nodemetrics.enabled(conf.metrics):   # (a source that accepts and never answers holds the read this long)
        click.echo(f"reading the nodes' usage from {conf.metrics.get('address')} (at most "
                   f"{metrics_timeout:g}s: --metrics-timeout)…", err=True)
    out = dryrun.dry_run(state, conf, clock_mod.RealClock().now(), details or output == "table", metrics_timeout)
    if output in ("json", "yaml"):
        for note in state.notes:   # (the table shows them; the answer's keys are a contract: on stderr)
            click.echo(f"note: {note}", err=True)
    if output == "json":
        click.echo(json.dumps(out, indent=2))
    elif output == "yaml":
        click.echo(yamlio.dump_yaml(out), nl=False)
    else:
        click.echo(dryrun.render_table(state, conf_name, conf, out), nl=False)
