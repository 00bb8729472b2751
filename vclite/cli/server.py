"""`vcctl server`: the durable control plane, served over a Kubernetes-compatible HTTP API.

Builds the runtime on the data directory (objects, pod logs, token, kubeconfig, certificates),
then serves it (`httpserver.server.serve`) until SIGTERM or SIGINT. Prints the URL and the
kubeconfig path on stdout once listening. Exit status: 0 after a graceful stop; 1 if the server
cannot start (data directory in use, address in use, a certificate that cannot be loaded);
2 for invalid options (e.g. --plain-http on a non-loopback address, an unknown --controllers name, a bad
--nodes value; the data directory is not created nor touched) or
an invalid --scheduler-conf (each problem printed as file:line: message; nothing is started).
"""
from __future__ import annotations

import os
import pathlib
import shlex
import sys
from typing import TYPE_CHECKING, Any

import click

from vclite.admission import base
from vclite.cli import stdinput
from vclite.cli.context import CONTEXT
from vclite.runtime import gates

if TYPE_CHECKING:   # (the control plane and the HTTP stack load only when the server starts: `--help` is quick)
    from vclite.runtime import runtime as runtime_mod
    from vclite.scheduler import conf as scheduler_conf_mod

DATA_ENV = "VCLITE_DATA"


def default_data_dir() -> pathlib.Path:
    env = os.environ.get(DATA_ENV)
    return pathlib.Path(env).expanduser() if env else pathlib.Path.home() / ".vclite"


def resume_flags(data_dir: pathlib.Path) -> str:
    """What a suspended JobFlow's resume command adds so that it reaches this server: nothing where vcctl finds
    the kubeconfig by itself (the default data directory, or $VCLITE_DATA's), else `-k <its kubeconfig>` (quoted for
    a POSIX shell: the command is pasted)."""
    found = default_data_dir().expanduser().resolve()
    return "" if data_dir.resolve() == found else f"-k {shlex.quote(str(data_dir / 'kubeconfig'))}"


def build_runtime(data_dir: pathlib.Path, nodes: list[dict] | None,
                  conf: scheduler_conf_mod.SchedulerConf | None,
                  controllers: frozenset[str] = frozenset(gates.KNOWN),
                  conf_source: str | None = None, webhook: Any = None) -> runtime_mod.Runtime:
    """`conf_source`: `--scheduler-conf FILE` when given (the ConfigMap is then not read, and told so);
    `webhook`: the admission webhook's flags (admission/base.WebhookConfig)."""
    from vclite.lib import clock as clock_mod
    from vclite.runtime import runtime as runtime_mod

    # without --scheduler-conf, Volcano's scheduler ConfigMap configures the scheduler whenever it changes
    return runtime_mod.Runtime(clock_mod.RealClock(), nodes=nodes, scheduler_config=conf, data_dir=data_dir,
                               controllers=controllers, heartbeat=True, scheduler_conf_map=True,
                               scheduler_conf_source=conf_source, webhook=webhook)


def _announce(url: str, kubeconfig: pathlib.Path) -> None:
    click.echo(f"vclite server listening on {url}")
    click.echo(f"kubeconfig: {kubeconfig}")
    click.echo(f"  kubectl --kubeconfig {shlex.quote(str(kubeconfig))} get jobflows")
    sys.stdout.flush()


@click.command(context_settings=CONTEXT)
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=pathlib.Path),
              help=f"Where objects, pod logs, the token and the kubeconfig live (default: ${DATA_ENV} or ~/.vclite).")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Address to listen on (always TLS beyond loopback).")
@click.option("--port", default=6443, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port; the kubeconfig names the one chosen).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False, path_type=pathlib.Path),
              help="Serving certificate (PEM; its file is written into the kubeconfig as the CA). "
                   "Default: a self-signed CA and certificate generated in the data directory.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=pathlib.Path),
              help="Private key of --tls-cert (PEM).")
@click.option("--plain-http", is_flag=True,
              help="Serve plain HTTP (loopback only). kubectl sends no token over plain HTTP, so it cannot "
                   "use such a server; by default a self-signed certificate is generated.")
@click.option("--nodes", "nodes_opt", metavar="SPEC",
              help="Nodes to run on instead of one node sized like this host: a count (`3`), "
                   "sizes (`2x(cpu=4,memory=8Gi)`), or a YAML file of Node objects (- for standard input).")
@click.option("--scheduler-conf", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="A volcano-scheduler.conf (actions and plugin tiers; - for standard input). If omitted: the "
                   "volcano-scheduler.conf of Volcano's ConfigMap volcano-system/volcano-scheduler-configmap, read "
                   "again whenever it is applied or edited (Volcano's default until there is one).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Request and server logs on stderr: plain lines or one JSON object per line.")
@click.option("--controllers", "controllers_opt", multiple=True, metavar="LIST",
              help="Controllers to run, as Volcano's controller manager takes them: `*` for all, `NAME` to "
                   "enable, `-NAME` to disable (e.g. `*,-jobflow-controller,-jobtemplate-controller` when "
                   f"`vcctl controller` reconciles JobFlows instead). Names: {', '.join(gates.KNOWN)}. "
                   "Default: all.")
@click.option("--max-queue-depth", default=base.MAX_QUEUE_DEPTH, show_default=True, type=click.IntRange(min=1),
              metavar="N",
              help="How deep hierarchical queues may nest: a Queue whose spec.parent chain puts it more than N "
                   "levels below root is refused (`queue q exceeds the maximum allowed depth of N`). Volcano's "
                   "admission webhook flag of the same name.")
@click.option("--enable-queue-allocated-pods-check", "queue_allocated_pods_check", is_flag=True,
              help="Refuse to delete a Queue whose status.allocated still counts pods (`queue q cannot be deleted "
                   "because it has allocated Pods: 2`). Volcano's admission webhook flag, off by default; a Queue "
                   "that still has PodGroups is refused either way.")
def server(data_dir, address, port, tls_cert, tls_key, plain_http, nodes_opt, scheduler_conf, log_format,
           controllers_opt, max_queue_depth, queue_allocated_pods_check) -> None:
    """Serve the control plane to kubectl, vcctl and Kubernetes clients, durably.

    Objects survive restarts (the data directory holds them). It serves HTTPS (a self-signed
    certificate unless one is given) and every request needs the bearer token generated at first
    start; the kubeconfig written in the data directory carries both:

    \b
      vcctl server --port 6443 &
      kubectl --kubeconfig ~/.vclite/kubeconfig apply -f examples/diamond.yaml
      kubectl --kubeconfig ~/.vclite/kubeconfig get jf -w

    Stops gracefully on SIGTERM or Ctrl-C: every pod is stopped first. After a crash (kill -9),
    the next start on the same data directory takes over the pods still running: they run on.
    """
    import asyncio

    from vclite.cli import run as run_mod
    from vclite.httpserver import logsetup
    from vclite.httpserver import server as server_mod
    from vclite.store import sqlite as sqlite_store

    try:
        controllers = gates.enabled(controllers_opt)
    except gates.GateError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    logsetup.configure(log_format)
    data_dir = (data_dir or default_data_dir()).expanduser().resolve()
    options = server_mod.Options(data_dir=data_dir, address=address, port=port, tls_cert=tls_cert, tls_key=tls_key,
                                 plain_http=plain_http, announce=_announce)
    twice = stdinput.conflict({"--nodes": nodes_opt, "--scheduler-conf": scheduler_conf})
    if twice:
        click.echo(f"error: {twice}; the server was not started.", err=True)
        sys.exit(2)
    conf, problems = run_mod.load_scheduler_conf(scheduler_conf)
    if problems:   # before anything starts or touches the data directory
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len(problems)} problem(s) found in the scheduler configuration; the server was not started.",
                   err=True)
        sys.exit(2)
    try:   # options first: a refused option leaves no data directory behind
        server_mod.check_options(options)
        nodes = run_mod.nodes_of(nodes_opt)
    except (server_mod.ServeError, ValueError, OSError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    try:   # (a port in use: nothing made either)
        server_mod.check_port(options)
    except server_mod.ServeError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        click.echo(f"error: cannot create the data directory {data_dir}: {e.strerror or e}", err=True)
        sys.exit(1)
    try:
        rt = build_runtime(data_dir, nodes, conf, controllers,
                           f"--scheduler-conf {stdinput.name(scheduler_conf)}" if scheduler_conf else None,
                           base.WebhookConfig(max_queue_depth, queue_allocated_pods_check))
    except server_mod.ServeError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    except (ValueError, OSError, RuntimeError, sqlite_store.StoreError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    rt.jobflow_controller.resume_flags = resume_flags(data_dir)
    try:
        code = asyncio.run(server_mod.serve(rt, options))
    except server_mod.ServeError as e:
        click.echo(f"error: {e}", err=True)
        asyncio.run(_close(rt))
        sys.exit(1)
    sys.exit(code)


async def _close(rt: runtime_mod.Runtime) -> None:
    await rt.shutdown()
    rt.close()
