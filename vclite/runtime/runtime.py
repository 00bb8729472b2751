"""The embedded control plane: one process, one API, every component, an injected clock.

The runtime wires the parts and drives them with the shared loop (`loop.Loop`: `step`, `settle`,
`run_until`): the in-process API (admission over the memory or SQLite store), the vcjob, JobFlow,
CronJob, JobTemplate, PodGroup, Queue, Namespace, disruption (PodDisruptionBudget), ResourceQuota and
volume (claims bound, volumes provisioned and reclaimed) controllers, the scheduler, the local executor
(and, `heartbeat`, its nodes' kubelet heartbeat) and the Event recorder. `controllers` (Volcano names, see
`gates`) leaves controllers out: a server whose JobFlows are reconciled by `vcctl controller` elsewhere runs
without its own JobFlow controllers.

With `data_dir`, the control plane is durable: objects live in `<data_dir>/store.db` (a
store.sqlite.SqliteStore, owned by this process until close()) and pods' working directories and
logs under `<data_dir>/pods`. Starting again on the same directory reconciles: the default objects
and nodes are created only if missing, components re-list on start, the executor recovers pods
whose processes died with the previous process.

It must not contain any controller, scheduling or executor logic.
"""
from __future__ import annotations

import functools
import logging
import pathlib
import tempfile
from typing import Any, Iterable

from vclite.admission import resgroups
from vclite.api import core, kinds
from vclite.apiserver import decoding
from vclite.apiserver import events
from vclite.apiserver import inprocess
from vclite.apiserver import standins
from vclite.controllers import disruption as disruption_controller
from vclite.controllers import garbagecollector
from vclite.controllers import hypernode as hypernode_controller
from vclite.controllers import resourcequota as resourcequota_controller
from vclite.controllers import jobtemplate as jobtemplate_controller
from vclite.controllers.cronjob import controller as cronjob_controller
from vclite.controllers import namespace as namespace_controller
from vclite.controllers import podgroup as podgroup_controller
from vclite.controllers import queue as queue_controller
from vclite.controllers import volume as volume_controller
from vclite.controllers.job import controller as job_controller
from vclite.controllers.jobflow import controller as jobflow_controller
from vclite.executor import devices
from vclite.executor import executor as executor_mod
from vclite.executor import heartbeat as heartbeat_mod
from vclite.executor import nodes as nodes_mod
from vclite.lib import clock as clock_mod
from vclite.lib import component as component_mod
from vclite.lib import errors
from vclite.runtime import gates
from vclite.runtime import loop as loop_mod
from vclite.scheduler import conf as scheduler_conf
from vclite.scheduler import scheduler as scheduler_mod
from vclite.store import sqlite as sqlite_store

log = logging.getLogger("vclite.runtime")
STORE_FILE = "store.db"
PODS_DIR = "pods"
Interrupted, SyncFailure = loop_mod.Interrupted, loop_mod.SyncFailure   # (where callers have always found them)


class Runtime(loop_mod.Loop):
    def __init__(self, clock: clock_mod.Clock | None = None, *, nodes: list[dict] | None = None,
                 workdir: str | pathlib.Path | None = None, scheduler_config: Any = None, run_pods: bool = True,
                 require_command: bool = True, max_requeues: int = 15, restart_backoff: float = 10.0,
                 data_dir: str | pathlib.Path | None = None, controllers: Iterable[str] = gates.KNOWN,
                 heartbeat: bool = False, accounts_on_demand: bool = False, scheduler_conf_map: bool = False,
                 scheduler_conf_source: str | None = None, restarted: str = "the server",
                 webhook: Any = None, resume_advice: str | None = None):
        """`controllers`: the Volcano names of the controllers to run (`gates.enabled` reads the flag);
        `heartbeat`: the executor's nodes' Leases and conditions renewed as a kubelet's (a server);
        `accounts_on_demand` (`vcctl run`): a vcjob created makes the ServiceAccounts its pods name that its
        namespace lacks, with a Warning Event (apiserver/standins.py); a server refuses those pods, as kube.
        `scheduler_conf_map`: the scheduler follows Volcano's scheduler ConfigMap (scheduler/confmap.py), unless
        `scheduler_conf_source` (`--scheduler-conf FILE`) configures it: then a change of the ConfigMap is told
        it is not read, and to restart `restarted` without the option.
        `webhook`: Volcano's admission webhook flags (admission/base.WebhookConfig; default: its defaults).
        `resume_advice`: what a suspended JobFlow's conditions tell to do when no client can resume it (a run
        serving no API); None: the resume command."""
        self.clock = clock or clock_mod.RealClock()
        self.data_dir = pathlib.Path(data_dir) if data_dir is not None else None
        self.store: sqlite_store.SqliteStore | None = None
        if self.data_dir is not None:
            self.store = sqlite_store.SqliteStore(self.clock, self.data_dir / STORE_FILE)
        node_objs = nodes if nodes is not None else [nodes_mod.host_node()]
        try:
            self.client = inprocess.new_client(self.clock, require_command=require_command, store=self.store,
                                               webhook=webhook)
            now = clock_mod.format_time(self.clock.now()) or ""
            for node in node_objs:
                try:
                    self.client.create(nodes_mod.stamped(node, now))
                except errors.AlreadyExists:   # a durable store reopened: refresh the node's capacity
                    stored = self.client.get(kinds.NODE, "", node["metadata"]["name"])
                    status = nodes_mod.stamped(node, now, stored)["status"] if node.get("status") else None
                    if status and nodes_mod.unstamped(stored.get("status")) != nodes_mod.unstamped(status):
                        self.client.update_status({**stored, "status": status})
            if self.data_dir is not None:   # a server: kube-apiserver's namespaces, each node's Lease as a kubelet's
                self._system_namespaces()
                self._node_leases([n["metadata"]["name"] for n in node_objs])
        except BaseException:
            self.close()    # release the data directory
            raise
        self.node_names = [n["metadata"]["name"] for n in node_objs]
        if workdir:
            self.workdir = pathlib.Path(workdir)
        elif self.data_dir is not None:
            self.workdir = self.data_dir / PODS_DIR
        else:
            self.workdir = pathlib.Path(tempfile.mkdtemp(prefix="vclite-"))
        conf = scheduler_config if scheduler_config is not None else scheduler_conf.default_conf()
        self.events = events.Recorder(self.client, self.clock)
        self._report_stored_admission_conf()
        self.made_accounts: list[standins.Made] = []   # (accounts_on_demand) the ServiceAccounts made, in order
        if accounts_on_demand:
            make = functools.partial(standins.make_accounts, self.client, self.events.record)
            self.client.after_create.append(lambda kind, obj: self.made_accounts.extend(make(kind, obj)))
        typed = decoding.DecodingClient(self.client)   # (what the components read: decodable objects only)
        self.job_controller = job_controller.JobController(typed, self.clock, recorder=self.events.record)
        self.gc_controller = garbagecollector.GarbageCollector(typed, self.clock)
        self.jobflow_controller = jobflow_controller.JobFlowController(typed, self.clock,
                                                                       recorder=self.events.record,
                                                                       resume_advice=resume_advice)
        self.jobtemplate_controller = jobtemplate_controller.JobTemplateController(typed, self.clock)
        self.cronjob_controller = cronjob_controller.CronJobController(typed, self.clock,
                                                                       recorder=self.events.record)
        self.scheduler = scheduler_mod.Scheduler(typed, self.clock, conf, recorder=self.events.record,
                                                 conf_map=scheduler_conf_map, conf_fixed_by=scheduler_conf_source,
                                                 restarted=restarted)
        self.namespace_controller = namespace_controller.NamespaceController(typed, self.clock)
        self.resourcequota_controller = resourcequota_controller.ResourceQuotaController(typed, self.clock)
        self.podgroup_controller = podgroup_controller.PodGroupController(typed, self.clock)
        self.queue_controller = queue_controller.QueueController(typed, self.clock, recorder=self.events.record)
        self.hypernode_controller = hypernode_controller.HyperNodeController(typed, self.clock,
                                                                             recorder=self.events.record)
        wanted = gates.component_names(controllers)
        components: list[component_mod.Component] = [c for c in (
            self.jobflow_controller, self.cronjob_controller, self.jobtemplate_controller, self.job_controller,
            self.gc_controller, self.podgroup_controller, self.queue_controller, self.hypernode_controller)
            if c.name in wanted]
        components += [self.namespace_controller, self.resourcequota_controller]
        # kube-controller-manager's: on wherever vclite is the cluster (no --controllers name, as the namespace one)
        self.disruption_controller = disruption_controller.DisruptionController(typed, self.clock,
                                                                                recorder=self.events.record)
        components.append(self.disruption_controller)
        # (its provisioner's directories under the executor's work directory, where pods find their volumes)
        self.volume_controller = volume_controller.VolumeController(typed, self.clock, self.workdir,
                                                                    recorder=self.events.record)
        components.append(self.volume_controller)
        self.executor = None
        if run_pods:
            host_gpus = devices.host_gpus()
            gpus = devices.node_devices(node_objs, host_gpus)
            shared = devices.shared_gpus(gpus, host_gpus)
            if shared:
                log.warning("%s", shared)
            self.executor = executor_mod.LocalExecutor(typed, self.clock, self.node_names, self.workdir,
                                                       restart_backoff=restart_backoff, recorder=self.events.record,
                                                       gpus=gpus, hide_gpus=bool(host_gpus),
                                                       record_exits=self.data_dir is not None)
            components.append(self.executor)
        components += [self.scheduler, self.events]
        self.heartbeat = None
        if run_pods and heartbeat:
            self.heartbeat = heartbeat_mod.NodeHeartbeat(typed, self.clock, self.node_names)
            components.append(self.heartbeat)
        super().__init__(self.clock, components, max_requeues)

    def _system_namespaces(self) -> None:
        """kube-system, kube-public and kube-node-lease, as kube-apiserver makes them at its start (each with
        its `default` ServiceAccount); the first two may not be deleted (admission/namespace.py)."""
        for ns in core.SYSTEM_NAMESPACES:
            try:
                self.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            except errors.AlreadyExists:
                pass

    def _node_leases(self, names: list[str]) -> None:
        """`kube-node-lease/<node>` for each node that has none (kubectl describe node reads it)."""
        now = clock_mod.format_micro_time(self.clock.now())
        for name in names:
            lease = nodes_mod.node_lease(self.client.get(kinds.NODE, "", name), now)
            try:
                self.client.create(lease)
            except errors.AlreadyExists:
                pass   # (a durable store reopened: what was accepted stays as it was)

    def busy_pods(self) -> int:
        """Pods whose processes are still alive (0 without an executor)."""
        return self.executor.running_count() if self.executor is not None else 0

    def starting(self) -> bool:
        """Are pods' processes waiting for their turn to start (the executor's, a few a turn of the event loop)?"""
        return self.executor is not None and self.executor.starting()

    async def shutdown(self) -> None:
        """Stop every pod cleanly (process groups terminated, then killed); write the Events noted."""
        if self.executor is not None:
            await self.executor.stop_all()
        self.events.flush()

    def _report_stored_admission_conf(self) -> None:
        """A stored volcano-admission-configmap that admission would refuse today (an older vclite's, or written
        straight into the store) is not used: say so at start, in the log and a Warning Event on it."""
        try:
            cm = self.client.get(kinds.CONFIGMAP, resgroups.CONFIGMAP_NAMESPACE, resgroups.CONFIGMAP)
        except errors.NotFound:
            return
        problem = resgroups.stored_problem(cm)
        if problem:
            log.warning("%s", problem)
            self.events.record(cm, "Warning", resgroups.INVALID, problem, "vc-webhook-manager")

    def close(self) -> None:
        """Release the durable store (its file and lock); a no-op without data_dir. Call after
        shutdown(); the runtime must not be driven afterwards."""
        if self.store is not None:
            self.store.close()

    # ---- queries used by the CLI ----------------------------------------------------------------
    def objects(self, kind: kinds.Kind) -> list[dict]:
        return self.client.list(kind)
