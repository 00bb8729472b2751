"""`vcctl controller`: vclite's JobFlow and JobTemplate controllers against a Kubernetes cluster.

The third way to run vclite (ARCHITECTURE.md): Kubernetes + Volcano run the vcjobs (Volcano's job
controller, scheduler, the kubelets); this process only turns JobFlows into vcjobs and reports their
status, with every vclite JobFlow feature (probes, expressions, loops, retries, parameters …).
It connects like every vcctl client command (`-k/--kubeconfig`, `-s/--master`), checks by
discovery that the cluster serves JobFlows, JobTemplates and Volcano's jobs, and runs until SIGTERM
or Ctrl-C. `--print-crds` prints the CRDs to install first (`api/crds.py` says why Volcano's own
drop vclite's fields).

Exit status: 0 after a graceful stop or after printing the CRDs; 1 if the cluster cannot be reached
or lacks an API; 2 for invalid options.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import sys

import click
import yaml

from vclite.api import crds
from vclite.cli import client_common
from vclite.cli.context import CONTEXT
from vclite.httpserver import logsetup
from vclite.lib import errors
from vclite.runtime import gates
from vclite.runtime import remote

log = logging.getLogger("vclite.controller")


def _controllers(values: tuple[str, ...]) -> frozenset[str]:
    """The --controllers value, limited to what this command runs (a usage error otherwise)."""
    try:
        enabled = gates.enabled(values)
    except gates.GateError as e:
        raise click.UsageError(str(e)) from None
    named = {item.lstrip("+-") for item in gates.items(values)} - {"*"}
    foreign = sorted(named - set(remote.CONTROLLERS))
    if foreign:
        verb = "runs" if len(foreign) == 1 else "run"
        raise click.UsageError(f"--controllers: {', '.join(foreign)} {verb} in Volcano on a cluster; "
                               f"vcctl controller runs {' and '.join(remote.CONTROLLERS)}")
    chosen = enabled & set(remote.CONTROLLERS)
    if not chosen:
        raise click.UsageError("--controllers: that enables no controller: nothing to run")
    return frozenset(chosen)


async def _serve(client, controllers: frozenset[str]) -> None:
    loop = asyncio.get_running_loop()
    on_loop = remote.LoopThreadClient(client, loop)
    rt = remote.ControllerRuntime(on_loop, controllers=controllers)

    def on_signal(signame: str) -> None:
        log.info("received %s: stopping", signame)
        rt.request_stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    try:
        rt.start()
        log.info("reconciling JobFlows and JobTemplates on %s (%s)", client.config.server,
                 ", ".join(sorted(controllers)))
        await rt.serve()
    finally:
        on_loop.cancel_watches()
        await rt.shutdown()
        client.close()
        log.info("stopped")


@click.command(context_settings=CONTEXT)
@client_common.common_options
@click.option("--controllers", "controllers_opt", multiple=True, metavar="LIST",
              help="Which of jobflow-controller and jobtemplate-controller to run, as Volcano's controller "
                   "manager takes the flag (`*`, `NAME`, `-NAME`). Default: both.")
@click.option("--print-crds", is_flag=True,
              help="Print the JobFlow and JobTemplate CRDs to install on the cluster (YAML), and exit.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Logs on stderr: plain lines or one JSON object per line.")
def controller(master: str, kubeconfig: str, controllers_opt: tuple[str, ...], print_crds: bool,
               log_format: str) -> None:
    """Run vclite's JobFlow controllers on a Kubernetes cluster where Volcano runs the jobs.

    This is how flows scale past one machine: Volcano schedules and runs the vcjobs, vclite turns
    each JobFlow into vcjobs as their dependencies allow and reports the flow's status, with every
    vclite JobFlow feature. Set-up, once per cluster:

    \b
      vcctl controller --print-crds | kubectl apply -f -
      # Volcano's own JobFlow controllers must not run too: start Volcano's controller manager with
      #   --controllers=*,-jobflow-controller,-jobtemplate-controller
      vcctl controller --kubeconfig ~/.kube/config

    Then `kubectl apply -f flow.yaml` and `kubectl get jf -w` as usual. Run one controller per
    cluster (there is no leader election). Stops on SIGTERM or Ctrl-C.
    """
    controllers = _controllers(controllers_opt)
    if print_crds:
        click.echo(yaml.safe_dump_all(crds.definitions(), sort_keys=False), nl=False)
        return
    logsetup.configure(log_format)
    try:
        client = client_common.connect(master, kubeconfig)
        missing = remote.missing_apis(client)
    except (errors.ApiError, OSError, client_common._config_error()) as e:
        click.echo(f"error: cannot use the cluster: {e}", err=True)
        sys.exit(1)
    if missing:
        for line in missing:
            click.echo(f"error: {line}", err=True)
        click.echo("Install vclite's CRDs with `vcctl controller --print-crds | kubectl apply -f -`, and Volcano "
                   "(https://volcano.sh) for its jobs.", err=True)
        sys.exit(1)
    asyncio.run(_serve(client, controllers))
