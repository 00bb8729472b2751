"""`vcctl controller`: vclite's JobFlow and JobTemplate controllers against a Kubernetes cluster.

The third way to run vclite (ARCHITECTURE.md): Kubernetes + Volcano run the vcjobs (Volcano's job
controller, scheduler, the kubelets); this process only turns JobFlows into vcjobs and reports their
status, with every vclite JobFlow feature (probes, expressions, loops, retries, parameters …).
It connects like every vcctl client command (`-k/--kubeconfig`, `-s/--master`), checks by
discovery that the cluster serves JobFlows, JobTemplates and Volcano's jobs, and runs until SIGTERM
or Ctrl-C. `--print-crds` prints the CRDs to install first (`api/crds.py` says why Volcano's own
drop vclite's fields). With leader election (the default, as Volcano's controller manager), only the
holder of a Lease reconciles; other replicas stand by, and a holder's writes wait while its last
renewal is older than the renew deadline (`runtime/leader.py`).

Exit status: 0 after a graceful stop or after printing the CRDs; 1 if the cluster cannot be reached
or lacks an API, or the lease was lost (at once, from the lease keeper's thread); 2 for invalid
options.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import Callable

import click
import yaml

from vclite.api import crds
from vclite.apiserver import events
from vclite.cli import client_common
from vclite.cli.context import CONTEXT
from vclite.httpserver import logsetup
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.runtime import gates
from vclite.runtime import leader
from vclite.runtime import remote

log = logging.getLogger("vclite.controller")
EVENT_SOURCE = "vclite-controller"   # the source component of the leader-election Events


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


def _duration(ctx: click.Context, param: click.Parameter, value: str) -> float:
    try:
        seconds = clock_mod.parse_duration(value)
    except ValueError as e:
        raise click.BadParameter(f"{e} (a Go duration: 15s, 500ms, 1m)") from None
    if seconds <= 0:
        raise click.BadParameter(f"{value!r}: must be above 0")
    return seconds


def _election(enabled: bool, namespace: str, name: str, lease_duration: float, renew_deadline: float,
              retry_period: float) -> leader.Settings | None:
    if not enabled:
        return None
    settings = leader.Settings(namespace=namespace, name=name, identity=leader.default_identity(),
                               lease_duration=lease_duration, renew_deadline=renew_deadline,
                               retry_period=retry_period)
    problem = leader.settings_problem(settings)
    if problem:
        raise click.UsageError(f"--leader-elect-*: {problem}")
    return settings


def _exit_lost(why: str) -> None:
    """The lease is lost: stop reconciling now, whatever the controllers' loop is doing (client-go's
    OnStoppedLeading, where Volcano's controller manager exits): a supervisor restarts us as a standby."""
    log.error("stopped: the lease was lost")
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    os._exit(1)


async def _serve(client, controllers: frozenset[str], election: leader.Settings | None,
                 on_lost: Callable[[str], None] = _exit_lost) -> int:
    """Run until stopped (0). With `election`, wait to hold the lease first; losing it calls
    `on_lost` from the keeper's thread (the process exits 1)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    rt: remote.ControllerRuntime | None = None

    def on_signal(signame: str) -> None:
        log.info("received %s: stopping", signame)
        stop.set()
        if rt is not None:
            rt.request_stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    elector = leader.Elector(client, election) if election is not None else None
    if elector is not None and not await leader.acquire(elector, stop):
        client.close()
        log.info("stopped")
        return 0
    keeper = leader.Keeper(elector, on_lost) if elector is not None else None
    if keeper is not None:
        keeper.start()   # (before anything else: renewals never wait for this loop)
        await loop.run_in_executor(None, lambda: events.record(
            client, clock_mod.RealClock(), elector.lease, "Normal", "LeaderElection",
            f"{election.identity} became leader", component=EVENT_SOURCE))
    # (a leader's writes wait for the keeper: none after a pause past the renew deadline until it renews)
    on_loop = remote.LoopThreadClient(leader.Fenced(client, keeper) if keeper is not None else client, loop)
    rt = remote.ControllerRuntime(on_loop, controllers=controllers)
    try:
        rt.start()
        log.info("reconciling JobFlows and JobTemplates on %s (%s)", client.config.server,
                 ", ".join(sorted(controllers)))
        if not stop.is_set():
            await rt.serve()
    finally:
        on_loop.cancel_watches()
        await rt.shutdown()
        if keeper is not None:
            await loop.run_in_executor(None, keeper.stop)
            await loop.run_in_executor(None, elector.release)
        client.close()
        log.info("stopped")
    return 0


@click.command(context_settings=CONTEXT)
@client_common.common_options
@click.option("--controllers", "controllers_opt", multiple=True, metavar="LIST",
              help="Which of jobflow-controller and jobtemplate-controller to run, as Volcano's controller "
                   "manager takes the flag (`*`, `NAME`, `-NAME`). Default: both.")
@click.option("--print-crds", is_flag=True,
              help="Print the JobFlow and JobTemplate CRDs to install on the cluster (YAML), and exit.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Logs on stderr: plain lines or one JSON object per line.")
@click.option("--leader-elect", type=click.BOOL, default=True, is_flag=False, flag_value=True, show_default="true",
              metavar="[true|false]",
              help="Reconcile only while holding a Lease, so replicas can stand by (as Volcano's controller "
                   "manager); --leader-elect=false runs at once, alone.")
@click.option("--leader-elect-resource-namespace", default=leader.Settings.namespace, show_default=True,
              metavar="NAMESPACE", help="Namespace of the Lease (it must exist on a cluster).")
@click.option("--leader-elect-resource-name", default=leader.Settings.name, show_default=True, metavar="NAME",
              help="Name of the Lease (not Volcano's vc-controller-manager: both hold theirs at once).")
@click.option("--leader-elect-lease-duration", default="15s", show_default=True, callback=_duration,
              metavar="DURATION", help="How long standbys wait after the last renewal they saw before taking over.")
@click.option("--leader-elect-renew-deadline", default="10s", show_default=True, callback=_duration,
              metavar="DURATION", help="How long the leader keeps trying to renew before it stops (exit 1).")
@click.option("--leader-elect-retry-period", default="2s", show_default=True, callback=_duration,
              metavar="DURATION", help="Time between attempts to acquire or renew.")
def controller(master: str, kubeconfig: str, controllers_opt: tuple[str, ...], print_crds: bool,
               log_format: str, leader_elect: bool, leader_elect_resource_namespace: str,
               leader_elect_resource_name: str, leader_elect_lease_duration: float,
               leader_elect_renew_deadline: float, leader_elect_retry_period: float) -> None:
    """Run vclite's JobFlow controllers on a Kubernetes cluster where Volcano runs the jobs.

    This is how flows scale past one machine: Volcano schedules and runs the vcjobs, vclite turns
    each JobFlow into vcjobs as their dependencies allow and reports the flow's status, with every
    vclite JobFlow feature. Set-up, once per cluster:

    \b
      vcctl controller --print-crds | kubectl apply -f -
      # Volcano's own JobFlow controllers must not run too: start Volcano's controller manager with
      #   --controllers=*,-jobflow-controller,-jobtemplate-controller
      vcctl controller --kubeconfig ~/.kube/config

    Then `kubectl apply -f flow.yaml` and `kubectl get jf -w` as usual. Run several for
    availability: only the holder of the Lease (volcano-system/vclite-controller by default)
    reconciles, the others take over when it stops renewing. Stops on SIGTERM or Ctrl-C (exit 0,
    the Lease released); exits 1 if it loses the Lease.
    """
    controllers = _controllers(controllers_opt)
    election = _election(leader_elect, leader_elect_resource_namespace, leader_elect_resource_name,
                         leader_elect_lease_duration, leader_elect_renew_deadline, leader_elect_retry_period)
    if print_crds:
        click.echo(yaml.safe_dump_all(crds.definitions(), sort_keys=False), nl=False)
        return
    logsetup.configure(log_format)
    try:
        client = client_common.connect(master, kubeconfig, typed=False)
        missing = remote.missing_apis(client, leader_election=election is not None)
    except (errors.ApiError, OSError, client_common._config_error()) as e:
        click.echo(f"error: cannot use the cluster: {e}", err=True)
        sys.exit(1)
    if missing:
        for line in missing:
            click.echo(f"error: {line}", err=True)
        click.echo("Install vclite's CRDs with `vcctl controller --print-crds | kubectl apply -f -`, and Volcano "
                   "(https://volcano.sh) for its jobs.", err=True)
        sys.exit(1)
    sys.exit(asyncio.run(_serve(client, controllers, election)))
