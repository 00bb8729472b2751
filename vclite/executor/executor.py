"""The local executor: the kubelet of the embedded control plane (a Component named "executor").

It watches pods (an informer: syncs read them without a copy); a pod bound (spec.nodeName) to one
of its nodes is started as host processes by a runner.PodRunner in `<workdir>/<namespace>/<pod>/`,
and every change the runner reports is written back as pod status (phase, conditions, startTime,
container statuses, pod and host IP 127.0.0.1).
- A container without a command cannot run here: the pod goes Failed at once, reason NoCommand.
- A missing ConfigMap (or key, or an unsupported env source) leaves the pod Pending with its
  containers waiting in CreateContainerConfigError; it starts when the ConfigMap appears.
- A persistentVolumeClaim volume is its claim's bound PersistentVolume's data (claims.py): a claim missing, being
  deleted or not Bound, or its volume missing, leaves the pod Pending with its containers waiting in
  ContainerCreating, the claim named, and a Warning Event FailedMount (the kubelet's); it starts when a claim or a
  volume changes so that it can.
- A pod deleted, being deleted (deletionTimestamp), moved off its node or replaced by a new pod of
  the same name has its process groups stopped (SIGTERM, SIGKILL after the grace period: a
  positive metadata.deletionGracePeriodSeconds, else spec.terminationGracePeriodSeconds, default
  30 s); a pod still present gets its final status, and a pod being deleted is then deleted with
  grace period 0 (the kubelet's last step of a graceful deletion: the API keeps a deleted pod of a
  node, Terminating, until then; its finalizers, if any, hold it longer). So is a pod being
  deleted that runs nothing here.
- A pod already Succeeded or Failed is never run again.
- What a container started that left its process group (a setsid, a daemon) is killed when the container ends
  (strays.py): by the runner, waited for, when the container had GPUs or the pod is being stopped, else here,
  SWEEP_DELAY later, with the strays of the other containers ended meanwhile (and at stop_all); a sweep that caught a
  process in its exec (its environment reads empty for a moment) is done again, once, strays.LOOK_AGAIN later.
- Each container gets its GPUs (devices.py, vgpus.py); a pod asking for more than its node's free ones fails
  (UnexpectedAdmissionError), unless pods being stopped hold the missing ones: it waits until their processes
  are gone (a GPU is never two running pods'), its containers waiting in ContainerCreating with a message that
  says so.
- A container using more memory than its resources.limits.memory is killed and ends OOMKilled (exit
  code 137), as a node's cgroup would have it: looked at every half second (memory.py).
- A pod with spec.activeDeadlineSeconds still running that long after it started is stopped as above
  (its terminationGracePeriodSeconds) and Failed with reason DeadlineExceeded, as the kubelet does.
- Status is written when something a user can see changed, except that a move to Running is
  written REPORT_DELAY late (the kubelet reports it up to a second late): a pod whose containers
  end meanwhile goes from Pending straight to Succeeded or Failed, with one write.
- On start, pods a previous vclite process ran are recovered (see recovery.py): a running pod whose app
  containers' exit-journal wrappers are still there (or recorded their ends) is taken over — a runner watches
  its processes (runner.adopt), it runs on unchanged, its GPUs are the ones its processes' environments name —;
  of the others, left-behind process groups, and the processes their containers' owner marks name (strays.py),
  are killed (and waited for), started pods get a final status with reason ProcessLost — but a container whose
  end the exit journal recorded (exits.py: it ended by itself while no server ran) ends as it did —, pods being
  deleted are deleted for good. What was left behind for a pod that no longer exists (force-deleted) is killed;
  a pod bound to a node this process does not run (another --nodes) is left as it is, its processes too.
`sync` must run inside a running asyncio event loop (processes are asyncio subprocesses). Watch
handlers only enqueue keys; the runner's change callback too. This module never imports the
controllers or the scheduler, and never decides anything a pure module (podstatus) can decide.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import pathlib
from typing import Any, Hashable

from vclite.api import core, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.executor import claims as claims_mod
from vclite.executor import devices, envvars, exits, logtimes, memory, podattach, podexec, podstatus, recovery
from vclite.executor import localnames, processes, strays, usage, vgpus
from vclite.executor import runner as runner_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
log = logging.getLogger("vclite.executor")
# A pod failed by stop_all: the kubelet's graceful node shutdown words (pkg/kubelet/nodeshutdown)
SHUTDOWN_REASON, SHUTDOWN_MESSAGE = "Terminated", "Pod was terminated in response to imminent node shutdown."
# A pod past its spec.activeDeadlineSeconds: the kubelet's words (pkg/kubelet/active_deadline.go)
DEADLINE_REASON, DEADLINE_MESSAGE = "DeadlineExceeded", "Pod was active on the node longer than the specified deadline"
EVENT_SOURCE = "kubelet"   # the source component of a pod's Events, as on a node
REPORT_DELAY = 0.02   # seconds a pod's move to Running may wait before it is written
LOG_TIMES_KEY = "\x00log-times"   # the work-queue key of the look at running containers: logs, memory (no pod's key)
STRAYS_KEY = "\x00strays"   # the work-queue key of the kill of ended containers' strays (strays.py)
# seconds a failing pod sync (a status write the API refused) waits at most before it is tried again: it never
# gives up, as a kubelet's pod worker re-syncs a failing pod every backOffPeriod (10 s) for ever
RETRY_MAX_DELAY = 10.0
DOMAIN_INDEX = "domain"   # the pods informer's index of pods by (namespace, subdomain): their DNS names
SWEEP_DELAY = 0.5   # seconds a container's end may wait for its strays' kill (one scan of /proc for all meanwhile)


@dataclasses.dataclass
class _Run:
    uid: str
    runner: runner_mod.PodRunner
    task: asyncio.Task
    stop_task: asyncio.Task | None = None
    running_since: float | None = None   # monotonic time the runner was first seen Running
    stopped_by_shutdown: bool = False    # stopped because the control plane stops (stop_all)
    deadline: float | None = None        # monotonic time spec.activeDeadlineSeconds ends
    past_deadline: bool = False          # stopped for it
    gpus: frozenset[int] = frozenset()   # positions in its node's GPUs it holds for itself (devices.py)
    adopted: bool = False                # taken over from a previous process (a deletion's grace began there)

    @property
    def settled(self) -> bool:
        return self.runner.finished and (self.stop_task is None or self.stop_task.done())


class _Releasing(Exception):
    """The pod's GPUs are held by pods being stopped: it starts once their processes are gone. The message
    says so (its containers' waiting message)."""


def gpus_held_message(holders: list[str], short: devices.NotEnough) -> str:
    """Why a pod waits for GPUs pods being stopped hold (its containers' waiting message)."""
    pods = ("pods " if len(holders) > 1 else "pod ") + ", ".join(holders)
    return (f"waiting for {devices.GPU} held by {pods}, being stopped, to be released: "
            f"requested {short.requested}, available {short.available}")


class LocalExecutor:
    name = "executor"
    retries_forever = True   # (a kubelet's pod workers: a failing sync is retried every backOffPeriod, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, node_names: list[str],
                 workdir: pathlib.Path, restart_backoff: float = 10.0, recorder: events.RecordFn | None = None,
                 gpus: dict[str, tuple[str, ...]] | None = None, hide_gpus: bool = False, record_exits: bool = False):
        """`gpus`: node name -> its GPUs (devices.node_devices); `hide_gpus`: this host has GPUs, so a
        container given none is told so (devices.py); `record_exits`: the store is durable (a server), so a
        restart may have pods to recover: containers' exits go to the exit journal (exits.py; not for `vcctl
        run`, which never starts again on its pods: the wrapper would cost each container start for nothing)."""
        self.client, self.clock = client, clock
        self.gpus = dict(gpus or {})
        self.hide_gpus = hide_gpus or bool(self.gpus)
        self.node_names = list(node_names)
        self.workdir = pathlib.Path(workdir)
        self.restart_backoff = restart_backoff
        self.queue = workqueue.WorkQueue(clock, max_delay=RETRY_MAX_DELAY)
        self._runs: dict[str, _Run] = {}
        self._spawns = processes.SpawnTurns()   # its runners' process starts, a few per turn of the event loop
        self._blocked: set[str] = set()       # pods waiting for a ConfigMap or Secret, or a claim (claims.py)
        self._gpu_waits: set[str] = set()     # pods waiting for GPUs a pod being stopped still holds
        self._lost: dict[str, str] = {}       # key -> uid of pods whose processes died with a previous process
        # key -> (uid, recovery.adoption's plan) of pods whose running processes a previous process started
        self._adopting: dict[str, tuple[str, dict[str, int | None]]] = {}
        self.exit_journal = self.workdir / exits.JOURNAL   # containers' exits, for a restart after a crash
        self._exits: dict[str, exits.Exit] = {}   # what the journal said at start (pods to recover)
        self._journal = False   # the journal was made at start: containers' exits are recorded in it
        self._record_exits = record_exits
        self._subs: list[client_mod.Subscription] = []
        self._log_sizes: dict[tuple[str, int], int] = {}   # (log path, inode) -> size at its last sample
        self._sampling = False   # a look at the logs is due (LOG_TIMES_KEY queued)
        self.pods = informer_mod.Informer(client, kinds.POD, self._on_pod,   # read-only pods
                                          indexers={DOMAIN_INDEX: localnames.domain_of})
        self.host_env = dict(os.environ)   # what every container's environment starts from
        self.record = recorder or events.direct(client, clock)   # containers' Events (Started, Killing, BackOff)
        self._cpu_samples: dict[int, tuple[float, float]] = {}   # process group -> (boot seconds, cpu seconds)
        self._unswept: set[str] = set()   # owners (strays.py) of ended containers whose strays are still to kill
        self._look_again: set[str] = set()   # owners whose last sweep caught a process in its exec (strays.py)

    # ---- watches: enqueue only ----------------------------------------------------------------
    def start(self) -> None:
        if not self._subs:
            self._subs = [self.client.watch(kind, self._on_config_map) for kind in (kinds.CONFIGMAP, kinds.SECRET)]
            self._subs += [self.client.watch(kinds.PERSISTENTVOLUMECLAIM, self._on_config_map),
                           self.client.watch(kinds.PERSISTENTVOLUME, self._on_volume)]
            self.pods.start()
            left = recovery.left_behind(self.workdir)
            recorded = set(exits.read(self.exit_journal)) if self._record_exits else set()
            killed: set[int] = set()
            owners: set[str] = set()
            later: list[str] = []
            for pod in list(self.pods.items()):  # pods bound before start
                if self._mine(pod):
                    pids = left.get(str(self.pod_dir(meta.namespace(pod), meta.name(pod))), [])
                    plan, stale = self._adoption(pod, pids, recorded)
                    if plan is not None:   # (first in the queue: what they hold is theirs before a new pod starts)
                        self._adopting[meta.key(pod)] = (meta.uid(pod), plan)
                        self.queue.add(meta.key(pod))
                        owners |= stale   # (what its runs that ended left in sessions of their own)
                        continue
                    self._note_lost(pod, pids)
                    killed.update(pids)
                    owners.add(strays.pod_owner(meta.uid(pod), self.pod_dir(meta.namespace(pod), meta.name(pod))))
                    later.append(meta.key(pod))
            for key in later:
                self.queue.add(key)
            spared, kept_uids = self._left_for_others(left, killed, owners)
            strays.sweep_now(owners, recovery.KILL_WAIT)   # (what left their groups: none runs here yet)
            alive = recovery.wait_gone(killed) if killed else set()
            if self._record_exits:
                self._start_journal(kept_uids, rewrite=not spared)
            if alive:   # (their GPUs are given to the next pods all the same)
                log.warning("process groups %s left by a previous vclite process have not exited %.0f s after "
                            "SIGKILL", sorted(alive), recovery.KILL_WAIT)

    def _left_for_others(self, left: dict[str, list[int]], killed: set[int], owners: set[str]) -> tuple[set[int],
                                                                                                         set[str]]:
        """At start, what was left behind for pods this executor does not recover: a pod that no longer exists
        (force-deleted while no server ran its node) has its groups killed (added to `killed`, their own owners to
        `owners`, to sweep); a pod of another node is left alone. Returns the wrappers left running (those and the
        ones taken over: they may append to the exit journal at any time) and the uids of other nodes' pods (their
        journal records are kept for a server that runs their node)."""
        pods = list(self.pods.items())
        known = {str(self.pod_dir(meta.namespace(pod), meta.name(pod))) for pod in pods}
        spared = {pid for _, plan in self._adopting.values() for pid in plan.values() if pid is not None}
        kept_uids: set[str] = set()
        for pod in pods:
            if not self._mine(pod):
                kept_uids.add(meta.uid(pod))
                spared.update(left.get(str(self.pod_dir(meta.namespace(pod), meta.name(pod))), []))
        for pod_dir, pids in left.items():
            if pod_dir in known:
                continue
            for pid in pids:
                log.warning("killing process group %d left by a previous vclite process for %s, whose pod no longer "
                            "exists", pid, pod_dir)
                recovery.kill_group(pid)
                pod_owner = (strays.marks_of(pid) or [""])[-1].partition("/")[0]   # (its own mark: the last)
                if pod_owner and strays.pod_owner(pod_owner.partition("@")[0], pod_dir) == pod_owner:
                    owners.add(pod_owner)   # (what it left in sessions of their own too)
            killed.update(pids)
        return spared, kept_uids

    def _adoption(self, pod: Obj, pids: list[int], recorded: set[str]) -> tuple[dict[str, int | None] | None,
                                                                                set[str]]:
        """Which containers of a pod found at start are taken over from the previous server (recovery.adoption;
        None: it is recovered as lost), and the owners (strays.py) of its runs that are not taken over but left
        processes in sessions of their own (to kill). Such a process of a run taken over — a daemon the container
        started with setsid, a `kubectl exec` — is left alone: it goes when its container ends, as before."""
        if not self._record_exits:
            return None, set()
        uid = meta.uid(pod)
        pod_owner = strays.pod_owner(uid, self.pod_dir(meta.namespace(pod), meta.name(pod)))
        live: dict[str, int] = {}
        helpers: set[str] = set()   # run keys of the processes left in sessions of their own
        unknown = False
        for pid in pids:
            run = recovery.wrapper_run(pid, self.exit_journal)
            if run is not None and run.startswith(uid + "/"):
                live[run] = pid
            elif (run := recovery.marked_run(strays.marks_of(pid), pod_owner, uid)) is not None:
                helpers.add(run)
            else:
                unknown = True
        pod_dir = self.pod_dir(meta.namespace(pod), meta.name(pod))
        marked = [name for c in (pod.get("spec") or {}).get("containers") or []
                  if runner_mod.started_here(pod_dir, uid, [name := c.get("name", "")])]
        plan = recovery.adoption(pod, live, recorded, unknown, marked)
        if plan is None:
            return None, set()
        adopted = {run for run, pid in live.items() if pid in plan.values()}
        stale = set()
        for run in helpers - adopted:
            _, container, n = run.split("/")
            stale.add(strays.owner(pod_owner, container, int(n)))
        return plan, stale

    def _start_journal(self, kept_uids: set[str], rewrite: bool) -> None:
        """Read what the exit journal says of the pods to recover, then start it again with only that and the
        records of `kept_uids` (after the kills of what was left: a wrapper killed records nothing; the new runners
        append to the new journal). Not `rewrite`: a wrapper left running may append at any time — one that opened
        the old file just before it was replaced would write into the void —, so it is only made if missing."""
        recorded = exits.read(self.exit_journal)
        lost_uids = set(self._lost.values()) | {uid for uid, _ in self._adopting.values()}
        self._exits = {k: v for k, v in recorded.items() if k.partition("/")[0] in lost_uids}
        try:
            if rewrite:
                kept = {k: v for k, v in recorded.items() if k.partition("/")[0] in kept_uids}
                exits.rewrite(self.exit_journal, {**kept, **self._exits}, lost_uids | kept_uids)
            else:
                self.exit_journal.parent.mkdir(parents=True, exist_ok=True)
                with open(self.exit_journal, "a"):
                    pass
            self._journal = True
        except OSError as e:
            log.warning("cannot write the exit journal %s (%s): a restart after a crash fails running pods "
                        "as ProcessLost", self.exit_journal, e)

    def _note_lost(self, pod: Obj, left_pids: list[int]) -> None:
        """A pod found at start that ran under a previous process: kill what is left of it and
        remember to write its final status (sync does, so a failed write is retried)."""
        for pid in left_pids:
            log.warning("pod %s: killing process group %d left by a previous vclite process", meta.key(pod), pid)
            recovery.kill_group(pid)
        if meta.is_deleting(pod) or (meta.phase(pod) not in podstatus.TERMINAL
                                     and (left_pids or recovery.was_started(pod) or self._marked_started(pod))):
            self._lost[meta.key(pod)] = meta.uid(pod)

    def _marked_started(self, pod: Obj) -> bool:
        """A process of this pod was started, though its status was never written (runner.mark_started)."""
        spec = pod.get("spec") or {}
        names = [c.get("name", "") for key in ("initContainers", "containers") for c in spec.get(key) or []]
        return runner_mod.started_here(self.pod_dir(meta.namespace(pod), meta.name(pod)), meta.uid(pod), names)

    def _mine(self, pod: Obj | None) -> bool:
        return bool(pod) and (pod.get("spec") or {}).get("nodeName") in self.node_names

    def _on_pod(self, ev: client_mod.WatchEvent) -> None:
        key = meta.key(ev.object)
        if self._mine(ev.object) or self._mine(ev.old) or key in self._runs:
            self.queue.add(key)

    def _on_config_map(self, ev: client_mod.WatchEvent) -> None:
        """A ConfigMap, Secret or PersistentVolumeClaim changed: the waiting pods of its namespace try again."""
        ns = meta.namespace(ev.object)
        for key in sorted(self._blocked):
            if key.partition("/")[0] == ns:
                self.queue.add(key)

    def _on_volume(self, ev: client_mod.WatchEvent) -> None:
        """A PersistentVolume changed (cluster-wide): every pod waiting may have been waiting for it."""
        for key in sorted(self._blocked):
            self.queue.add(key)

    def _on_runner_change(self, key: str) -> None:
        self.queue.add(key)

    # ---- queries ----------------------------------------------------------------------------------
    def pod_dir(self, namespace: str, pod: str) -> pathlib.Path:
        return self.workdir / namespace / pod

    def log_path(self, namespace: str, pod: str, container: str, previous: bool = False) -> pathlib.Path:
        """The container's log of its current run, or with `previous` of the run before."""
        path = self.pod_dir(namespace, pod) / "logs" / f"{container}.log"
        return runner_mod.previous_log_of(path) if previous else path

    def runs(self, namespace: str, pod: str) -> bool:
        """Whether the pod's containers run here, not being stopped (`kubectl port-forward` reaches them)."""
        run = self._runs.get(f"{namespace}/{pod}")
        return run is not None and run.stop_task is None

    def exec_problem(self, namespace: str, pod: str, container: str) -> str | None:
        """Why a command cannot be exec'd in the pod's container now (`kubectl exec`), or None."""
        run = self._runs.get(f"{namespace}/{pod}")
        if run is None or run.stop_task is not None:
            return f'container not found ("{container}")'
        return run.runner.exec_problem(container)

    async def exec(self, namespace: str, pod: str, container: str, argv: list[str], *, stdin: bool, stdout: bool,
                   stderr: bool, tty: bool) -> podexec.Session:
        """Start `argv` in the pod's running container (podexec.py); raises podexec.ExecError if it cannot."""
        problem = self.exec_problem(namespace, pod, container)
        if problem:
            raise podexec.ExecError(problem)
        return await self._runs[f"{namespace}/{pod}"].runner.exec(container, argv, stdin=stdin, stdout=stdout,
                                                                  stderr=stderr, tty=tty)

    def attach_problem(self, namespace: str, pod: str, container: str) -> str | None:
        """Why a client cannot attach to the pod's container now (`kubectl attach`), or None."""
        run = self._runs.get(f"{namespace}/{pod}")
        if run is None or run.stop_task is not None:
            return f"container {container} not found in pod {pod}_{namespace}"
        return run.runner.attach_problem(container)

    async def attach(self, namespace: str, pod: str, container: str, *, stdin: bool,
                     output: int | None) -> podattach.Attachment:
        """Attach to the pod's running container (podattach.py); raises podexec.ExecError if it cannot."""
        problem = self.attach_problem(namespace, pod, container)
        if problem:
            raise podexec.ExecError(problem)
        return self._runs[f"{namespace}/{pod}"].runner.attach(container, stdin=stdin, output=output)

    def container_usage(self) -> dict[str, dict[str, usage.ContainerUsage]]:
        """`namespace/pod` -> container -> what its processes use now (`kubectl top`), for every container
        running here: one pass over /proc. CPU is a rate over the time since the previous call (usage.py)."""
        groups = {key: run.runner.process_groups() for key, run in self._runs.items() if run.stop_task is None}
        wrapped = {g for key in groups for g in self._runs[key].runner.wrapped_groups()}
        found = usage.by_group((g for by_name in groups.values() for g in by_name.values()), wrapped=wrapped)
        now = usage.boot_seconds()
        out: dict[str, dict[str, usage.ContainerUsage]] = {}
        samples: dict[int, tuple[float, float]] = {}
        for key, by_name in groups.items():
            for name, group in by_name.items():
                used = found.get(group)
                if used is None or used.started is None or now is None:
                    continue    # (ended meanwhile)
                previous = self._cpu_samples.get(group)
                cores, window = usage.usage_rate(now, used, previous)
                recent = previous is not None and now - previous[0] < usage.MIN_WINDOW
                samples[group] = previous if recent and previous is not None else (now, used.cpu_seconds)
                out.setdefault(key, {})[name] = usage.ContainerUsage(cores, used.resident, window)
        self._cpu_samples = samples
        return out

    def starting(self) -> bool:
        """Are pods' processes waiting for their turn to start (processes.SpawnTurns)?"""
        return self._spawns.waiting()

    def running_count(self) -> int:
        """Pods whose run has not settled: processes alive, starting or waiting to restart, or a stop
        not yet over (its end is what lets a pod being deleted go: a run must not stop before it)."""
        return sum(1 for r in self._runs.values() if not r.settled)

    # ---- reconcile --------------------------------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        if key == LOG_TIMES_KEY:
            self._sample_logs()
            self._check_memory()
            return
        if key == STRAYS_KEY:
            self._sweep_strays()
            return
        key = str(key)
        ns, _, name = key.partition("/")
        pod = self.pods.get(ns, name)
        run = self._runs.get(key)
        if run is not None:
            if run.runner.unswept:
                self._unswept |= run.runner.unswept
                run.runner.unswept = set()
                self.queue.add_after(STRAYS_KEY, SWEEP_DELAY, chore=True)
            same = pod is not None and meta.uid(pod) == run.uid
            if not same or meta.is_deleting(pod) or not self._mine(pod):
                self._request_stop(key, run, pod if same else None)
            elif self._past_deadline(run):
                run.past_deadline = True
                events.record(self.client, self.clock, pod, "Normal", DEADLINE_REASON, DEADLINE_MESSAGE,
                              component=EVENT_SOURCE)
                self._request_stop(key, run, pod)
            if same:
                self._write_run_status(key, pod, run)
            if not run.settled:
                return
            del self._runs[key]
            self._wake_gpu_waits()
            if same:
                self._finish_deletion(pod)
                return
        adopting = self._adopting.pop(key, None)
        if adopting is not None:
            if pod is not None and meta.uid(pod) == adopting[0] and self._mine(pod) \
                    and self._adopt(key, pod, adopting[1]):
                return
            self._give_up_adoption(key, pod, adopting)   # (recovered as lost instead)
        lost_uid = self._lost.pop(key, None)
        lost = pod is not None and lost_uid == meta.uid(pod)
        if pod is None or not self._mine(pod) or meta.is_deleting(pod):
            self._blocked.discard(key)
            self._gpu_waits.discard(key)
            if pod is not None and meta.is_deleting(pod) and (lost or self._mine(pod)):
                self._finish_deletion(pod)   # nothing of it runs here (any more): it may go
            return
        if meta.phase(pod) in podstatus.TERMINAL:
            return
        if lost:
            try:
                self._write_lost(pod)
            except errors.ApiError:
                self._lost[key] = meta.uid(pod)   # retried with back-off: never start it again
                raise
            return
        self._start(key, pod)

    def _start(self, key: str, pod: Obj) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("the local executor runs pods as asyncio subprocesses: call sync() inside a "
                               "running event loop (Runtime.run_until)") from None
        try:
            device_env, held = self._devices(pod)
        except _Releasing as e:   # (started when that pod's processes are gone: _wake_gpu_waits)
            self._gpu_waits.add(key)
            self._write_waiting(pod, str(e))
            return
        except devices.NotEnough as e:   # (the kubelet's admission refusal: the pod fails, nothing runs)
            self._write_not_started(pod, core.PodPhase.FAILED, devices.ADMISSION_REASON, str(e), pod_level=True)
            return
        self._gpu_waits.discard(key)
        try:
            claims = self._claims(pod)
        except claims_mod.Unmountable as e:   # (started when a claim or a volume changes: _on_config_map, _on_volume)
            self._blocked.add(key)
            if self._write_waiting(pod, e.message):
                events.record(self.client, self.clock, pod, "Warning", claims_mod.FAILED_MOUNT,
                              e.event_message(meta.namespace(pod)), component=EVENT_SOURCE)
            return
        try:
            runner = runner_mod.PodRunner(pod, self.pod_dir(meta.namespace(pod), meta.name(pod)),
                                          self._config_maps(pod), self.clock, self._on_runner_change,
                                          self.restart_backoff, self.host_env, self._container_events(pod),
                                          device_env, self.exit_journal if self._journal else None,
                                          self._hostnames, claims, self._spawns)
            runner.prepare()
        except runner_mod.NoCommandError as e:
            self._write_not_started(pod, core.PodPhase.FAILED, envvars.NO_COMMAND, e.message, pod_level=True)
            return
        except envvars.ConfigError as e:
            self._blocked.add(key)
            self._write_not_started(pod, core.PodPhase.PENDING, envvars.CONFIG_ERROR, e.message)
            return
        self._blocked.discard(key)
        task = loop.create_task(runner.run(), name=f"pod {key}")
        run = _Run(meta.uid(pod), runner, task, gpus=held)
        task.add_done_callback(lambda t: self._task_done(key, t))
        self._runs[key] = run   # its status is written when its first container starts
        if not self._sampling:
            self._sampling = True
            self.queue.add_after(LOG_TIMES_KEY, logtimes.SAMPLE_INTERVAL, chore=True)
        seconds = podstatus.active_deadline(pod)
        if seconds is not None:
            run.deadline = self.clock.monotonic() + seconds
            self.queue.add_after(key, seconds)

    def _adopt(self, key: str, pod: Obj, plan: dict[str, int | None]) -> bool:
        """Take over the pod's run from the previous server (runner.adopt); False if it cannot be."""
        loop = asyncio.get_running_loop()
        device_env, held = self._adopted_devices(pod, plan)
        try:
            claims = self._claims(pod)
        except claims_mod.Unmountable as e:
            log.warning("pod %s: its running processes cannot be taken over (%s)", key, e.message)
            return False
        runner = runner_mod.PodRunner(pod, self.pod_dir(meta.namespace(pod), meta.name(pod)), self._config_maps(pod),
                                      self.clock, self._on_runner_change, self.restart_backoff, self.host_env,
                                      self._container_events(pod), device_env,
                                      self.exit_journal if self._journal else None, self._hostnames, claims,
                                      self._spawns)
        try:
            if not runner.adopt(plan):
                return False
        except envvars.ConfigError as e:
            log.warning("pod %s: its running processes cannot be taken over (%s)", key, e.message)
            return False
        log.info("pod %s: its running containers were taken over from the previous vclite process", key)
        task = loop.create_task(runner.run(), name=f"pod {key}")
        run = _Run(meta.uid(pod), runner, task, gpus=held, running_since=self.clock.monotonic(), adopted=True)
        task.add_done_callback(lambda t: self._task_done(key, t))
        self._runs[key] = run
        self.queue.add(key)   # (its status where the previous server had not written it yet; a pod being deleted:
        #                        its stop goes on, with what is left of its grace period: _request_stop)
        for path in runner.running_logs():   # (what it wrote while no server ran: when, as well as known)
            try:
                seen = logtimes.catch_up(path)
            except OSError as e:
                log.warning("%s: log times not written: %s", path, e)
                continue
            if seen is not None:
                self._log_sizes[(str(path), seen[0])] = seen[1]
        if not self._sampling:
            self._sampling = True
            self.queue.add_after(LOG_TIMES_KEY, logtimes.SAMPLE_INTERVAL, chore=True)
        seconds = podstatus.active_deadline(pod)
        if seconds is not None:   # (counted from the pod's start, before the restart)
            started = clock_mod.parse_time((pod.get("status") or {}).get("startTime"))
            elapsed = (self.clock.now() - started).total_seconds() if started is not None else 0.0
            left = max(seconds - elapsed, 0.0)
            run.deadline = self.clock.monotonic() + left
            self.queue.add_after(key, left)
        return True

    def _give_up_adoption(self, key: str, pod: Obj | None, adopting: tuple[str, dict[str, int | None]]) -> None:
        """A pod planned for adoption is not taken over after all (deleted meanwhile, its ConfigMap gone, no pidfds):
        what is left of it is killed, and it is recovered as lost (its status written by sync)."""
        uid, plan = adopting
        pids = {pid for pid in plan.values() if pid is not None}
        for pid in pids:
            log.warning("pod %s: killing process group %d left by a previous vclite process", key, pid)
            recovery.kill_group(pid)
        if pod is not None:
            strays.sweep_now({strays.pod_owner(uid, self.pod_dir(meta.namespace(pod), meta.name(pod)))},
                             recovery.KILL_WAIT)
        recovery.wait_gone(pids)
        self._lost[key] = uid

    def _adopted_devices(self, pod: Obj, plan: dict[str, int | None]) -> tuple[dict[str, dict[str, str]] | None,
                                                                               frozenset[int]]:
        """An adopted pod's GPUs: each running container's, as its process's environment names them (what it
        uses), held for it; a container that starts again later gets what a new pod would (devices.py)."""
        if not self.hide_gpus:
            return None, frozenset()
        node = (pod.get("spec") or {}).get("nodeName")
        ids = self.gpus.get(node, ())
        held_by_others = {i for run in self._runs.values() if run.gpus and run.runner.node == node for i in run.gpus}
        try:
            device_env, _ = self._devices(pod)
        except (_Releasing, devices.NotEnough):
            device_env = None
        device_env = dict(device_env or {})
        held: set[int] = set()
        for name, pid in plan.items():
            visible = recovery.process_env(pid, devices.VISIBLE) if pid is not None else {}
            if visible:
                device_env[name] = {**device_env.get(name, {}), **visible}
                held |= devices.positions(visible.get("CUDA_VISIBLE_DEVICES", ""), ids, held_by_others | held)
        return device_env, frozenset(held) if devices.shared_cards(pod, ids) is None else frozenset()

    def _devices(self, pod: Obj) -> tuple[dict[str, dict[str, str]] | None, frozenset[int]]:
        """Each container's GPU variables (None: a run without GPUs, nothing to set) and the positions of its
        node's GPUs the pod holds for itself (devices.py). NotEnough when too few are free; _Releasing when
        enough are, once the pods being stopped (deleted, even forcibly) have let theirs go."""
        if not self.hide_gpus:
            return None, frozenset()
        node = (pod.get("spec") or {}).get("nodeName")
        ids = self.gpus.get(node, ())
        shared = devices.shared_cards(pod, ids)
        if shared is not None:   # (Volcano's device plugin gives the cards to the containers asking for them)
            spec = pod.get("spec") or {}
            return {c.get("name", ""): devices.env(shared if devices.asks_shared(c) else [])
                    for k in ("initContainers", "containers") for c in spec.get(k) or []}, frozenset()
        held = {i for run in self._runs.values()   # (a pod whose containers all ended holds none: its
                if run.gpus and run.runner.node == node and not run.runner.finished   # status may be written)
                for i in run.gpus}
        try:
            positions = devices.assign(pod, ids, held)
        except devices.NotEnough as short:
            stopping = {key: run.gpus for key, run in self._runs.items()
                        if run.stop_task is not None and run.runner.node == node and run.gpus & held}
            devices.assign(pod, ids, held.difference(*stopping.values()))   # (NotEnough even then: refused)
            raise _Releasing(gpus_held_message(sorted(stopping), short)) from None
        by_name = {name: devices.env([ids[i] for i in got]) for name, got in positions.items()}
        if vgpus.CHOSEN in meta.annotations(pod):   # (vGPU cards: shared, held by none)
            logs = self.pod_dir(meta.namespace(pod), meta.name(pod)) / "logs"
            by_name.update(vgpus.container_env(pod, ids, devices.registered_cards(self._node(node)), str(logs)))
        return by_name, frozenset(i for got in positions.values() for i in got)

    def _wake_gpu_waits(self) -> None:
        """A run has settled: the pods waiting for GPUs try again."""
        for key in sorted(self._gpu_waits):
            self.queue.add(key)

    def _node(self, name: str | None) -> Obj:
        try:
            return self.client.get(kinds.NODE, "", name or "")
        except errors.NotFound:
            return {}

    def _container_events(self, pod: Obj) -> runner_mod.ContainerEvent:
        def on_event(field_path: str, event_type: str, reason: str, message: str) -> None:
            self.record(pod, event_type, reason, message, EVENT_SOURCE, field_path)
        return on_event

    def _sample_logs(self) -> None:
        """Note the size of each running container's log that has grown since the last look, with the
        time (logtimes.py); look again in SAMPLE_INTERVAL while any pod runs."""
        now = self.clock.now().timestamp()
        sizes: dict[tuple[str, int], int] = {}
        for run in self._runs.values():
            for path in run.runner.running_logs():
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                key = (str(path), st.st_ino)
                size = self._log_sizes.get(key, 0)
                if st.st_size > size:
                    try:
                        logtimes.append_sample(path, st.st_size, now)
                        size = st.st_size
                    except OSError as e:
                        log.warning("%s: log times not written: %s", path, e)
                sizes[key] = size
        self._log_sizes = sizes
        self._sampling = bool(self._runs)
        if self._sampling:
            self.queue.add_after(LOG_TIMES_KEY, logtimes.SAMPLE_INTERVAL, chore=True)

    def _sweep_strays(self, wait: float = 0.0) -> None:
        """Kill what the containers that ended left running outside their process groups (strays.py); with
        `wait`, wait (at most that long) until they have exited. A scan that caught a process in its exec is
        queued again, LOOK_AGAIN later, for those owners (once: not waited for on the loop)."""
        owners, self._unswept = self._unswept, set()
        again, self._look_again = self._look_again, set()
        if wait > 0:
            strays.sweep_now(owners | again, wait)
            return
        scan = strays.kill_marked(owners | again)
        strays.close(scan.fds)
        if scan.unsure and owners:   # (a process caught in its exec: looked at again, once, in a moment)
            self._look_again = owners
            self.queue.add_after(STRAYS_KEY, strays.LOOK_AGAIN, chore=True)

    def _check_memory(self) -> None:
        """Kill each running container over its memory limit (memory.py): one look at /proc for all."""
        limits: dict[int, int] = {}
        owners: dict[int, runner_mod.PodRunner] = {}
        wrapped: set[int] = set()
        for run in self._runs.values():
            for group, limit in run.runner.memory_limits().items():
                limits[group], owners[group] = limit, run.runner
            wrapped |= run.runner.wrapped_groups()
        if not limits:
            return
        for group in memory.over_limit(memory.resident_by_group(limits, wrapped=wrapped), limits):
            log.info("%s: a container used more than its memory limit: killed (OOMKilled)", owners[group].key)
            owners[group].oom_kill(group)

    def _past_deadline(self, run: _Run) -> bool:
        return (run.deadline is not None and not run.past_deadline and run.stop_task is None
                and self.clock.monotonic() >= run.deadline)

    def _hostnames(self, namespace: str, subdomain: str) -> frozenset[str]:
        """The hostnames of the pods of `subdomain` in `namespace` (localnames.py: a pod's DNS name)."""
        return frozenset(localnames.hostname(p) for p in self.pods.by_index(DOMAIN_INDEX, (namespace, subdomain)))

    def _config_maps(self, pod: Obj) -> dict[str, Obj]:
        """The ConfigMaps and Secrets (as `secret/<name>`, their data as binaryData) the pod
        references that exist (the runner reports the missing ones)."""
        out: dict[str, Obj] = {}
        for ref in envvars.referenced_config_maps(pod):
            secret = ref.startswith(envvars.SECRET_PREFIX)
            name = ref[len(envvars.SECRET_PREFIX):] if secret else ref
            try:
                found = self.client.get(kinds.SECRET if secret else kinds.CONFIGMAP, meta.namespace(pod), name)
            except errors.NotFound:
                continue
            out[ref] = {"binaryData": found.get("data") or {}} if secret else found
        return out

    def _claims(self, pod: Obj) -> dict[str, tuple[pathlib.Path, str]]:
        """Where the pod's claims' volumes are (claims.resolve: raises claims.Unmountable); {} without claims."""
        if not claims_mod.claim_volumes(pod):
            return {}

        def get(kind: kinds.Kind, namespace: str, name: str) -> Obj | None:
            try:
                return self.client.get(kind, namespace, name)
            except errors.NotFound:
                return None
        return claims_mod.resolve(pod, lambda ns, name: get(kinds.PERSISTENTVOLUMECLAIM, ns, name),
                                  lambda name: get(kinds.PERSISTENTVOLUME, "", name), self.workdir.absolute(),
                                  is_dir=lambda path: path.is_dir())

    def _task_done(self, key: str, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("pod %s: runner failed", key, exc_info=task.exception())
        self.queue.add(key)

    def _request_stop(self, key: str, run: _Run, pod: Obj | None, grace: float | None = None) -> asyncio.Task:
        if run.stop_task is None:
            if grace is None and pod is not None:
                md = pod.get("metadata") or {}
                dgps = md.get("deletionGracePeriodSeconds")
                grace = float(dgps) if isinstance(dgps, (int, float)) and dgps > 0 else None
                until = clock_mod.parse_time(md.get("deletionTimestamp")) if run.adopted else None
                if grace is not None and until is not None:   # (its grace began with the previous process)
                    grace = min(grace, max((until - self.clock.now()).total_seconds(), 0.0))
            run.stop_task = asyncio.get_running_loop().create_task(run.runner.stop(grace), name=f"stop {key}")
            run.stop_task.add_done_callback(lambda t: self.queue.add(key))
        return run.stop_task

    def _finish_deletion(self, pod: Obj) -> None:
        """The kubelet's last step of a graceful deletion: its containers have stopped, so the pod may
        go now (delete with grace period 0; its finalizers, if any, still hold it)."""
        md = pod.get("metadata") or {}
        if meta.is_deleting(pod) and (md.get("deletionGracePeriodSeconds") or not md.get("finalizers")):
            try:
                self.client.delete(kinds.POD, meta.namespace(pod), meta.name(pod), grace_period=0)
            except errors.NotFound:
                pass

    # ---- status -----------------------------------------------------------------------------------
    def _write_run_status(self, key: str, pod: Obj, run: _Run) -> None:
        r = run.runner
        reason = message = ""
        if run.task.done() and not run.task.cancelled() and run.task.exception() is not None:
            reason, message = "ExecutorError", f"the local executor failed to run the pod: {run.task.exception()}"
        phase = r.phase()
        if reason and phase not in podstatus.TERMINAL:
            phase = core.PodPhase.FAILED
        if run.past_deadline and r.finished and not reason:
            phase, reason, message = core.PodPhase.FAILED, DEADLINE_REASON, DEADLINE_MESSAGE
        if run.stopped_by_shutdown and phase == core.PodPhase.FAILED and not reason:
            reason, message = SHUTDOWN_REASON, SHUTDOWN_MESSAGE
        if phase == core.PodPhase.RUNNING and meta.phase(pod) != core.PodPhase.RUNNING:
            # Report the start REPORT_DELAY late, as the kubelet's status sync does (later still):
            # a container that ends meanwhile goes straight from Pending to Succeeded or Failed.
            now = self.clock.monotonic()
            if run.running_since is None:
                run.running_since = now
            wait = run.running_since + REPORT_DELAY - now
            if wait > 1e-6:   # (a timer set for exactly then may fire a rounding error early)
                self.queue.add_after(key, wait)
                return
        self._write(pod, phase, r.start_time, r.init, r.main, reason, message)

    def _write_lost(self, pod: Obj) -> None:
        now = clock_mod.format_time(self.clock.now()) or ""
        init, main = recovery.lost_states(pod, now, self._recorded_end(pod))
        phase = recovery.lost_phase(init, main)
        lost = recovery.processes_lost(init, main)
        start_time = (pod.get("status") or {}).get("startTime") or now
        if self._write(pod, phase, start_time, init, main, recovery.PROCESS_LOST if lost else "",
                       recovery.POD_MESSAGE if lost else "") and lost:
            events.record(self.client, self.clock, pod, "Warning", recovery.PROCESS_LOST, recovery.POD_MESSAGE,
                          component=EVENT_SOURCE)

    def _write_waiting(self, pod: Obj, message: str) -> bool:
        """Pending, its first containers waiting (ContainerCreating, or PodInitializing behind init containers)
        with `message`: why they are not created yet (a kubelet's pod whose containers it has not created shows
        ContainerCreating). The runner's first report, when they start, clears it."""
        spec = pod.get("spec") or {}
        inits = [podstatus.ContainerState(c.get("name", ""), c.get("image", "")) for c in spec.get("initContainers")
                 or []]
        later = podstatus.Reason.INITIALIZING if inits else podstatus.Reason.CREATING
        main = [podstatus.ContainerState(c.get("name", ""), c.get("image", ""), reason=later)
                for c in spec.get("containers") or []]
        for st in inits[:1] or main:
            st.wait(podstatus.Reason.CREATING, message)
        return self._write(pod, core.PodPhase.PENDING, None, inits, main, "", "", sandbox=False)

    def _recorded_end(self, pod: Obj) -> recovery.Ended:
        """How a container run of `pod` ended as the exit journal recorded it, with its termination message (read
        as the runner reads it)."""
        pod_dir, uid = self.pod_dir(meta.namespace(pod), meta.name(pod)), meta.uid(pod)
        fallback = {c.get("name", ""): c.get("terminationMessagePolicy") == "FallbackToLogsOnError"
                    for key in ("initContainers", "containers") for c in (pod.get("spec") or {}).get(key) or []}

        def ended(container: str, run: int) -> tuple[int, str, str] | None:
            ex = self._exits.get(exits.run_key(uid, container, run))
            if ex is None:
                return None
            message = runner_mod.read_message(pod_dir / "logs" / f"{container}.termination-log")
            if not message and ex.code != 0 and fallback.get(container):
                message = runner_mod.log_tail(pod_dir / "logs" / f"{container}.log")
            finished = (clock_mod.format_time(ex.finished_at) or "") if ex.finished_at is not None else ""
            return ex.code, finished, message
        return ended

    def _write_not_started(self, pod: Obj, phase: core.PodPhase, reason: str, message: str,
                           pod_level: bool = False) -> None:
        spec = pod.get("spec") or {}
        init, main = ([podstatus.ContainerState(c.get("name", ""), c.get("image", "")) for c in spec.get(k) or []]
                      for k in ("initContainers", "containers"))
        for st in init + main:
            st.wait(reason, message)
        if self._write(pod, phase, None, init, main, reason if pod_level else "", message if pod_level else ""):
            events.record(self.client, self.clock, pod, "Warning", "Failed", message, component=EVENT_SOURCE)

    def _write(self, pod: Obj, phase: core.PodPhase, start_time: str | None, init: list[podstatus.ContainerState],
               main: list[podstatus.ContainerState], reason: str, message: str, sandbox: bool = True) -> bool:
        """Write the pod's status; `sandbox`: what a kubelet's sandbox would be, up (PodReadyToStartContainers)
        unless the pod waits for what its containers are to be given (GPUs another pod still holds)."""
        now = clock_mod.format_time(self.clock.now()) or ""
        generation = (pod.get("metadata") or {}).get("generation")
        gates = tuple(str(g.get("conditionType") or "") for g in (pod.get("spec") or {}).get("readinessGates") or []
                      if isinstance(g, dict))
        status = podstatus.build_status(pod.get("status"), phase, now, start_time=start_time, init=init, main=main,
                                        reason=reason, message=message,
                                        generation=generation if isinstance(generation, int) else None,
                                        sandbox=sandbox, gates=gates)
        if status == pod.get("status"):
            return False
        self.client.update_status(dict(pod, status=status))
        return True

    # ---- shutdown ---------------------------------------------------------------------------------
    def kill_all(self) -> None:
        """SIGKILL every pod's processes now (the user will not wait out a stop's grace period)."""
        for run in self._runs.values():
            run.runner.kill()

    async def stop_all(self, grace: float | None = None) -> None:
        """Stop every pod (SIGTERM, then SIGKILL after the grace period) and write final statuses: a
        pod that fails for it says why, as the kubelet's graceful node shutdown does."""
        runs = dict(self._runs)
        for run in runs.values():
            run.stopped_by_shutdown = True
        stops = [self._request_stop(key, run, None, grace) for key, run in runs.items()]
        await asyncio.gather(*stops, *(r.task for r in runs.values()), return_exceptions=True)
        for key in runs:
            try:
                self.sync(key)
            except errors.ApiError as e:
                log.warning("pod %s: final status not written: %s", key, e)
        self._sweep_strays(wait=recovery.KILL_WAIT)   # (the run's end: nothing of its pods is left running)
