"""The JobFlow controllers against a Kubernetes cluster (`vcctl controller`): a Loop over a remote API.

The JobFlow and JobTemplate controllers, with the Event recorder, run the same code as in the
embedded control plane, over any Client — in practice `kube.client.HttpClient`, talking to a
real cluster where Volcano runs the vcjobs (its job controller, scheduler and kubelets), or to a
`vcctl server` started without its own JobFlow controllers. Nothing else runs here: no scheduler,
no executor, no vcjob controller.

Watch handlers of an HTTP client run on its threads; `LoopThreadClient` hands every event to the
asyncio loop's thread (`call_soon_threadsafe`), so the components see events one at a time, on the
thread that runs their syncs — the same single-threaded world they have in process.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable, Iterable

from vclite.api import kinds
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.controllers import jobtemplate as jobtemplate_controller
from vclite.controllers.jobflow import controller as jobflow_controller
from vclite.lib import clock as clock_mod
from vclite.lib import component as component_mod
from vclite.runtime import gates
from vclite.runtime import loop as loop_mod

CONTROLLERS = ("jobflow-controller", "jobtemplate-controller")   # what `vcctl controller` can run
# (group/version, plural) the cluster must serve, and what a missing one means
REQUIRED = (
    (kinds.JOBFLOW, "vclite's JobFlow CRD is not installed"),
    (kinds.JOBTEMPLATE, "vclite's JobTemplate CRD is not installed"),
    (kinds.JOB, "Volcano is not installed (it serves batch.volcano.sh/v1alpha1 jobs)"),
)
LEASES = (kinds.LEASE, "leader election needs Leases (or run with --leader-elect=false)")


class LoopThreadClient:
    """`client`, with every watch handler called on `loop`'s thread (all other calls pass through)."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop):
        self._client, self._loop = client, loop
        self._subscriptions: list[client_mod.Subscription] = []
        # Called on the loop's thread after each handler: the runtime's wake-up. A handler may only
        # have set a timer (a delayed add wakes nobody), which the sleeping loop must still see.
        self.after_event: Callable[[], None] | None = None

    def _deliver(self, handler: client_mod.WatchHandler, ev: client_mod.WatchEvent) -> None:
        handler(ev)
        if self.after_event is not None:
            self.after_event()

    def watch(self, kind: kinds.Kind | None, handler: client_mod.WatchHandler,
              resource_version: str | None = None) -> client_mod.Subscription:
        loop = self._loop

        def hand_over(ev: client_mod.WatchEvent) -> None:
            try:
                loop.call_soon_threadsafe(self._deliver, handler, ev)
            except RuntimeError:   # the loop is closed: the controllers have stopped
                pass
        sub = self._client.watch(kind, hand_over, resource_version)
        self._subscriptions.append(sub)
        return sub

    def cancel_watches(self) -> None:
        """End every watch made through this client (their threads stop delivering)."""
        for sub in self._subscriptions:
            sub.cancel()
        self._subscriptions.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def missing_apis(client: Any, leader_election: bool = False) -> list[str]:
    """What the cluster lacks for the controllers (by discovery), as sentences; empty when all is there."""
    required = REQUIRED + ((LEASES,) if leader_election else ())
    return [f"{why}: {kind.api_version} {kind.plural} is not served"
            for kind, why in required if not client.serves(kind.api_version, kind.plural)]


class ControllerRuntime(loop_mod.Loop):
    """The JobFlow and JobTemplate controllers (those `controllers` names) over `client`."""

    def __init__(self, client: Any, clock: clock_mod.Clock | None = None, controllers: Iterable[str] = CONTROLLERS,
                 max_requeues: int = 15):
        clock = clock or clock_mod.RealClock()
        self.client = client
        wanted = gates.component_names(controllers)
        self.events = events.Recorder(client, clock)
        self.jobflow_controller = jobflow_controller.JobFlowController(client, clock, recorder=self.events.record)
        self.jobtemplate_controller = jobtemplate_controller.JobTemplateController(client, clock)
        components: list[component_mod.Component] = [
            c for c in (self.jobflow_controller, self.jobtemplate_controller) if c.name in wanted]
        super().__init__(clock, components + [self.events], max_requeues)
        if isinstance(client, LoopThreadClient):
            client.after_event = self._on_add

    async def shutdown(self) -> None:
        """Write the Events noted (the controllers keep nothing else in memory)."""
        self.events.flush()
