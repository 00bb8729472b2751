"""The scheduler component: the thin shell around `run_session` (Component protocol).

start() keeps informers (read-only caches) of Pods, PodGroups, Queues, Nodes, PriorityClasses,
Namespaces (their labels, for pod affinity's namespaceSelector), HyperNodes (network topology), Numatopologies
(the numa-aware plugin) and
PodDisruptionBudgets (the pdb plugin), ResourceQuotas (their status, for the resourcequota plugin),
PersistentVolumeClaims (the predicates plugin's VolumeBinding: given to a session only while a pod not placed yet
names a claim, found through a pod index, so that a session without such pods asks nothing of any pod),
and a pool of the PodGroups enqueue rejected before, by class (framework/waiting.py), updated by
each PodGroup event: a session is given the other PodGroups and the pool, so thousands of jobs
waiting for room cost it nothing per job;
an event that may give it work (triggers.py) adds the single key "session" to its queue, so bursts
coalesce into one session. With a `metrics` source in its configuration, the key "metrics" reads the
nodes' usage every `metrics.interval` off its thread (metricsfeed.py) and asks for a session when it
changed; sessions see the latest read (the usage and rescheduling plugins), and wait for the first
one at start (at most metricsfeed.FIRST_READ_WAIT). sync("session") snapshots
the caches (no copies; the session only reads them), runs one pure session and writes the results:
- a bind goes through pods/binding (spec.nodeName, PodScheduled=True and the annotations a plugin put on
  the binding — deviceshare's device ids — in one write);
- an eviction deletes the pod;
- PodGroup statuses only when they changed (the session already ignores time-only differences);
  a status whose Unschedulable condition is new or says something new is also told as a Warning
  Event `Unschedulable` on the PodGroup, as Volcano's scheduler cache records it, in its words
  (`<pending>/<tasks> tasks in gang unschedulable: <FitError>`: status.unschedulable_event; Volcano repeats
  it every session, where the event correlator only bumps its count); a status written with the group
  Running or Completed is told as a Normal Event `Scheduled` ("pod group is ready"), as Volcano's cache
  records it for each PodGroup status it writes in those phases (the correlator counts the repeats);
  Queue `status.allocated` when it changed, at most once per QUEUE_STATUS_GAP (Volcano writes it
  once per session, i.e. once a second; the last value is always written).
A sync makes at most WRITES_PER_SYNC of these writes (binds, evictions, PodGroup statuses, pod conditions,
ungates, in that order) and leaves the rest to the next syncs of the key "session" (queued at once; no session
runs before they are all made, and one runs once they are, for the changes that asked for one meanwhile; a write
failing otherwise than NotFound or Conflict drops the rest, and the retry runs a session again), so a server answers its requests between the writes of a session that placed a big gang
or enqueued hundreds of PodGroups (each a durable write), as Volcano's binds go on after its session.
The watch events of the PodGroup and Queue status writes do not wake the scheduler again (they
only report decisions already taken); evictions do, and binds and pods starting ask for a session
within triggers.STATUS_DELAY (their PodGroup was already counted Running by the binding session:
`binding_scheduled`). A pod deleted meanwhile is skipped; a PodGroup changed meanwhile (Conflict) is left to the next
session, which its change has already queued. There is no periodic session; a session that fails (a write
the API refused) is run again, its back-off capped at Volcano's schedule period (RETRY_MAX_DELAY), for ever.
With `conf_map` (`vcctl server` without --scheduler-conf), the key "conf" reads Volcano's scheduler ConfigMap
whenever it changes: a configuration that loads replaces the current one from the next session on (a
Normal Event `SchedulerConfLoaded` on the ConfigMap), one that does not is a Warning Event
`InvalidSchedulerConf` naming its problems, and the current one is kept (confmap.py). With --scheduler-conf
(`conf_fixed_by`) a change of it is only a Warning Event `SchedulerConfNotRead` naming the option.

Must not: make scheduling decisions (the session does) or import controllers or the executor.
"""
from __future__ import annotations

import collections
import enum
import logging
from typing import Any, Hashable

from vclite.api import batch, kinds, meta, scheduling
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue
from vclite.scheduler import conf as conf_mod
from vclite.scheduler import confmap, metricsfeed, nodemetrics, triggers
from vclite.scheduler.framework import session as session_mod
from vclite.scheduler.framework import snapshot
from vclite.scheduler.framework import status as status_mod
from vclite.scheduler.framework import waiting as waiting_mod

log = logging.getLogger(__name__)
Obj = dict[str, Any]
KEY = "session"
QUEUE_STATUS_KEY = "queue-status"   # a deferred Queue status write: no session
METRICS_KEY = "metrics"   # look at the node usage read (metricsfeed.py): a session when it changed
CONF_KEY = "conf"   # read Volcano's scheduler ConfigMap again (confmap.py; with conf_map only)
_UNREAD = object()   # (no ConfigMap text read yet)
WATCHED = (kinds.POD, kinds.PODGROUP, kinds.QUEUE, kinds.NODE, kinds.PRIORITYCLASS, kinds.NAMESPACE, kinds.HYPERNODE,
           kinds.NUMATOPOLOGY, kinds.PODDISRUPTIONBUDGET, kinds.RESOURCEQUOTA, kinds.PERSISTENTVOLUMECLAIM)
QUEUE_STATUS_GAP = triggers.STATUS_DELAY   # seconds between two writes of Queue status.allocated
LIVE, FINISHED_IN = "live", "finished-in"   # pod indexes: not finished; finished, by PodGroup key
NOT_PLACED_WITH_CLAIMS = "claims"   # pod index: not bound to a node yet, with persistentVolumeClaim volumes
ACTIVE = "active"   # PodGroup index: not waiting for room (waiting ones are in the scheduler's Pool)
EVENT_COMPONENT = "volcano"   # the source.component of the scheduler's Events (Volcano's scheduler name)
UNSCHEDULABLE = str(scheduling.PodGroupConditionType.UNSCHEDULABLE)
SCHEDULED = str(scheduling.PodGroupConditionType.SCHEDULED)
POD_GROUP_READY = "pod group is ready"   # Volcano's PodGroupReady: the message of its Normal Event Scheduled
# phases Volcano's cache counts as unschedulable (RecordJobStatusEvent): no Scheduled Event for them
_WAITING_PHASES = frozenset(str(p) for p in (scheduling.PodGroupPhase.PENDING, scheduling.PodGroupPhase.INQUEUE,
                                             scheduling.PodGroupPhase.UNKNOWN))
# seconds a failing session (a write the API refused) waits at most before the next: Volcano's default
# --schedule-period, the session it runs whatever the last one did (a failing key is never dropped)
RETRY_MAX_DELAY = 1.0
WRITES_PER_SYNC = 32   # a session's writes one sync makes at most (the rest in the next syncs)


def _live(pod: Obj) -> bool | None:
    return None if snapshot.finished(pod) else True


def _claims_unplaced(pod: Obj) -> bool | None:
    """(a session needs the claims only while such a pod exists: without, VolumeBinding is not even asked)"""
    spec = pod.get("spec") or {}
    if spec.get("nodeName") or snapshot.finished(pod):
        return None
    return True if any(isinstance(v, dict) and v.get("persistentVolumeClaim") for v in spec.get("volumes") or ()) \
        else None


def _finished_in(pod: Obj) -> str | None:
    if not snapshot.finished(pod):
        return None
    group = meta.annotations(pod).get(batch.GROUP_NAME)
    return f"{meta.namespace(pod)}/{group}" if group else None


def _active(pg: Obj) -> bool | None:
    return None if waiting_mod.class_of(pg) is not None else True


def _split(key: str) -> tuple[str, str]:
    """(namespace, name) of a `meta.key`."""
    ns, _, name = key.rpartition("/")
    return ns, name


class Scheduler:
    name = "scheduler"
    retries_forever = True   # (Volcano runs a session every schedule period, whatever the last one did)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, conf: conf_mod.SchedulerConf | None = None,
                 scheduler_name: str = snapshot.DEFAULT_SCHEDULER_NAME, recorder: events.RecordFn | None = None,
                 conf_map: bool = False, conf_fixed_by: str | None = None, restarted: str = "the server"):
        """`conf_map`: follow Volcano's scheduler ConfigMap (confmap.py): its configuration replaces `conf`
        whenever it changes and loads (`vcctl server` without --scheduler-conf). `conf_fixed_by` (with
        `conf_map`): what configures the scheduler instead (`--scheduler-conf FILE`): the ConfigMap is not read,
        and a Warning Event on it says so, and what to start again without it (`restarted`)."""
        self.client, self.clock = client, clock
        self.conf_fixed_by, self.restarted = conf_fixed_by, restarted
        self.record = recorder or events.direct(client, clock)
        self.conf = conf if conf is not None else conf_mod.default_conf()
        self.scheduler_name = scheduler_name
        self.reads_quotas = triggers.reads_quotas(self.conf)   # (else ResourceQuota events wake nothing)
        self.queue = workqueue.WorkQueue(clock, max_delay=RETRY_MAX_DELAY)
        self.last_result: session_mod.SessionResult | None = None
        self._own_writes: set[str] = set()
        self._writing = False
        # a session's result whose writes go on, with the writes still to make (WRITES_PER_SYNC)
        self._left: tuple[session_mod.SessionResult, collections.deque[tuple[_Write, str, Any]]] | None = None
        self._requests: dict = {}  # pod requests memo across sessions (snapshot.ClusterState.request_cache)
        # plugins' state for the life of the scheduler (snapshot.ClusterState.memory)
        self._memory: dict = {snapshot.STARTED_AT: clock.now()}
        # node usage from the conf's `metrics` source (the usage and rescheduling plugins), if any
        self.metrics = metricsfeed.Feed(self.conf.metrics, clock) if nodemetrics.enabled(self.conf.metrics) else None
        self._queues_written_at = float("-inf")   # clock.monotonic() of the last Queue status write
        self._queues_pending: session_mod.SessionResult | None = None   # its result, when deferred
        self.informers = {kind.kind: informer_mod.Informer(client, kind, self._on_event) for kind in WATCHED}
        self.informers[kinds.POD.kind] = informer_mod.Informer(
            client, kinds.POD, self._on_event, indexers={LIVE: _live, FINISHED_IN: _finished_in,
                                                          NOT_PLACED_WITH_CLAIMS: _claims_unplaced})
        # PodGroups enqueue rejected before, by class, kept current by their events (waiting.py)
        self.waiting = waiting_mod.Pool() if waiting_mod.enabled(self.conf) else None
        if self.waiting is not None or conf_map:   # (a ConfigMap may turn the pool on later)
            self.informers[kinds.PODGROUP.kind] = informer_mod.Informer(
                client, kinds.PODGROUP, self._on_event, indexers={ACTIVE: _active})
        self.configmaps = informer_mod.Informer(client, kinds.CONFIGMAP, self._on_configmap) if conf_map else None
        self._conf_text: object = _UNREAD   # the ConfigMap's text last read (loaded or not; None: no such key)

    def start(self) -> None:
        for informer in self.informers.values():
            informer.start()
        if self.configmaps is not None:
            self.configmaps.start()
            self.queue.add(CONF_KEY)   # (first: a stored ConfigMap configures the first session)
        if self.waiting is not None:
            for pg in self.informers[kinds.PODGROUP.kind].list():
                self.waiting.update(meta.key(pg), pg)
        if self.metrics is not None:
            self.queue.add(METRICS_KEY)   # (first: its first read is what the first session waits for)
        self.queue.add(KEY)

    def _on_event(self, ev: client_mod.WatchEvent) -> None:
        if self.waiting is not None and ev.kind.kind == kinds.PODGROUP.kind:
            self.waiting.update(meta.key(ev.object), None if ev.type == client_mod.EventType.DELETED else ev.object)
        if self._writing and ev.type == client_mod.EventType.MODIFIED and ev.kind.kind != kinds.POD.kind:
            return  # an in-process client delivers the events of our own writes during the write.
            # Our binds still wake us (the next session sees them Bound and moves the PodGroup to
            # Running, as Volcano), and so do evictions (they free resources for pipelined pods).
        rv = (ev.object.get("metadata") or {}).get("resourceVersion")
        if rv in self._own_writes:
            self._own_writes.discard(rv)  # the result of a decision already taken: nothing new
            return
        wake = triggers.urgency(ev, self.scheduler_name, self.reads_quotas)
        if wake == triggers.Wake.NOW:
            self.queue.add(KEY)
        elif wake == triggers.Wake.LATER:
            self.queue.add_after(KEY, triggers.STATUS_DELAY)

    def _on_configmap(self, ev: client_mod.WatchEvent) -> None:
        if (meta.namespace(ev.object), meta.name(ev.object)) == confmap.REF:
            self.queue.add(CONF_KEY)

    def _read_conf_map(self) -> None:
        """Use the ConfigMap's configuration if it changed and loads; else keep the current one and say why
        (a Warning Event on the ConfigMap, once per text). A deleted ConfigMap leaves the configuration as it is."""
        configmap = self.configmaps.get(*confmap.REF) if self.configmaps is not None else None
        got = confmap.read(configmap)
        if configmap is None or got.text == self._conf_text:
            return
        self._conf_text = got.text
        if self.conf_fixed_by is not None:
            self.record(configmap, "Warning", confmap.NOT_READ,
                        f"not read: {self.conf_fixed_by} configures the scheduler (restart {self.restarted} without it "
                        "for this ConfigMap to)", EVENT_COMPONENT)
            return
        if got.conf is None:
            log.warning("scheduler configuration of ConfigMap %s/%s not loaded: %s", *confmap.REF, got.problem)
            self.record(configmap, "Warning", confmap.INVALID, got.problem or "", EVENT_COMPONENT)
            return
        self._reconfigure(got.conf)
        log.info("scheduler configuration loaded from ConfigMap %s/%s (actions: %s)", *confmap.REF,
                 ", ".join(got.conf.action_names))
        self.record(configmap, "Normal", confmap.LOADED,
                    f"loaded {confmap.KEY} (actions: {', '.join(got.conf.action_names)})", EVENT_COMPONENT)

    def _reconfigure(self, conf: conf_mod.SchedulerConf) -> None:
        """Run the next sessions with `conf`: what the shell keeps for a configuration made again from it."""
        self.conf = conf
        self.reads_quotas = triggers.reads_quotas(conf)
        self.metrics = metricsfeed.Feed(conf.metrics, self.clock) if nodemetrics.enabled(conf.metrics) else None
        if self.metrics is not None:
            self.queue.add(METRICS_KEY)
        if not waiting_mod.enabled(conf):
            self.waiting = None
        elif self.waiting is None:
            self.waiting = waiting_mod.Pool()
            for pg in self.informers[kinds.PODGROUP.kind].list():
                self.waiting.update(meta.key(pg), pg)
        self.queue.add(KEY)

    def _wrote(self, obj: Obj) -> Obj:
        """Remember the resourceVersion of our own write, so its watch event does not wake us."""
        self._own_writes.add(obj["metadata"]["resourceVersion"])
        return obj

    def _session_pods(self, podgroups: list[Obj]) -> list[Obj]:
        """The pods a session can see a difference from (snapshot: a finished pod matters only to its
        own PodGroup), found through the informer's indexes: proportional to what runs, not to the
        finished pods a long flow keeps."""
        pods = self.informers[kinds.POD.kind]
        groups = self.informers[kinds.PODGROUP.kind]
        finished_in = pods.index_values(FINISHED_IN)
        if len(finished_in) < len(podgroups):   # look up whichever side is smaller
            keys = [k for k in finished_in if groups.get(*_split(k)) is not None]
        else:
            keys = [meta.key(pg) for pg in podgroups]
        return [*pods.by_index(LIVE, True), *(p for key in keys for p in pods.by_index(FINISHED_IN, key))]

    def sync(self, key: Hashable) -> None:
        if key == CONF_KEY:
            self.last_result = None   # (no session ran: nothing scheduled)
            self._read_conf_map()
            return
        if key == METRICS_KEY:
            self.last_result = None   # (no session ran: nothing scheduled)
            if self.metrics is None:
                return   # (a configuration loaded since has no metrics source)
            nodes = [meta.name(n) for n in self.informers[kinds.NODE.kind].list()]
            changed, again = self.metrics.poll(nodes)
            if changed:
                self.queue.add(KEY)
            self.queue.add_after(METRICS_KEY, again, chore=True)   # (bookkeeping: no run waits for it)
            return
        if key == KEY and self._left is not None:
            self.last_result = None   # (no session ran: the last one's binds go on)
            self._write(*self._left)
            if self._left is None:   # (done: a session now, for what asked for one meanwhile — this key was theirs)
                self.queue.add(KEY)
            return
        if key == KEY and self.metrics is not None and self.metrics.holds_sessions():
            self.last_result = None
            self.queue.add_after(KEY, metricsfeed.POLL)   # (the first usage read is under way)
            return
        if key == QUEUE_STATUS_KEY:
            self.last_result = None   # (no session ran: nothing scheduled)
            if self._queues_pending is not None:
                self._write_queues(self._queues_pending)
            return
        cached = {kind: informer.list() for kind, informer in self.informers.items()
                  if kind not in (kinds.POD.kind, kinds.PODGROUP.kind)}   # read-only objects
        groups = self.informers[kinds.PODGROUP.kind]
        podgroups = groups.list() if self.waiting is None else groups.by_index(ACTIVE, True)
        state = snapshot.ClusterState(
            nodes=cached["Node"], queues=cached["Queue"], podgroups=podgroups,
            pods=self._session_pods(podgroups), priority_classes=cached["PriorityClass"], namespaces=cached["Namespace"],
            hypernodes=cached["HyperNode"], numatopologies=cached["Numatopology"], pdbs=cached["PodDisruptionBudget"],
            resource_quotas=cached["ResourceQuota"],
            # (None when no pod to place names a claim: the predicates plugin then asks nothing of any pod)
            claims=cached["PersistentVolumeClaim"] if self.informers[kinds.POD.kind].index_values(
                NOT_PLACED_WITH_CLAIMS) else None,
            request_cache=self._requests, waiting=self.waiting, memory=self._memory,
            node_usage=self.metrics.usage if self.metrics is not None else None)
        result = session_mod.run_session(state, self.conf, self.clock.now(), self.scheduler_name,
                                         binding_scheduled=True)
        self.last_result = result
        if result.recheck_at is not None:   # a plugin's deadline (sla): look again then
            self.queue.add_after(KEY, max(0.0, (result.recheck_at - self.clock.now()).total_seconds()))
        self._write(result, collections.deque(_writes_of(result)))

    def _write(self, result: session_mod.SessionResult, writes: collections.deque[tuple[_Write, str, Any]]) -> None:
        """A session's `writes` (_writes_of), WRITES_PER_SYNC at most: the rest left for the next sync, queued; once
        every one is made, its Queue statuses."""
        self._writing = True
        self._left = (result, writes)
        try:
            for _ in range(min(WRITES_PER_SYNC, len(writes))):
                what, key, value = writes.popleft()
                if what is _Write.BIND:
                    self._bind({key: value}, result.bind_annotations)
                elif what is _Write.EVICT:
                    self._evict([key])
                elif what is _Write.PODGROUP:
                    self._write_podgroups({key: value}, result.unschedulable_events)
                elif what is _Write.CONDITION:
                    self._write_pod_conditions({key: value})
                else:
                    self._ungate([key])
            if writes:
                self.queue.add(KEY)
                return
            self._left = None
            self._write_queues(result)
        except BaseException:
            self._left = None   # (the retry runs a session again)
            raise
        finally:
            self._writing = False
            if len(self._own_writes) > 10_000:
                self._own_writes.clear()  # versions whose events never came back (async clients)

    def _write_queues(self, result: session_mod.SessionResult) -> None:
        """Queue `status.allocated`, at most once per QUEUE_STATUS_GAP: it is bookkeeping (no decision
        reads it) and sessions run far more often than Volcano's one a second. A change not written
        yet is kept (the latest session's) and written once the gap has passed — a chore of its own
        key, not a session — so the last value is always written."""
        if not result.queue_allocated:
            self._queues_pending = None   # (the stored status is what the latest session computed)
            return
        wait = self._queues_written_at + QUEUE_STATUS_GAP - self.clock.monotonic()
        if wait > 1e-6:   # (a timer set for exactly then may fire a rounding error early)
            self._queues_pending = result
            self.queue.add_after(QUEUE_STATUS_KEY, wait, chore=True)   # (bookkeeping: decides nothing)
            return
        self._queues_pending = None
        self._queues_written_at = self.clock.monotonic()
        for name, patch in result.queue_status.items():
            try:
                self._wrote(self.client.patch(kinds.QUEUE, "", name, {"status": patch}, status=True))
            except errors.NotFound:
                continue

    def _bind(self, binds: dict[str, str], annotations: dict[str, dict[str, str]] | None = None) -> None:
        pods = self.informers[kinds.POD.kind]
        for pod_key, node in binds.items():
            ns, name = pod_key.split("/", 1)
            try:
                self.client.bind(ns, name, node, (annotations or {}).get(pod_key))
            except (errors.NotFound, errors.Conflict):
                continue   # deleted, or bound meanwhile: the next session sees it as it is
            pod = pods.get(ns, name)
            if pod is not None:   # (as Volcano's cache, after each bind)
                self.record(pod, "Normal", "Scheduled", f"Successfully assigned {ns}/{name} to {node}",
                            EVENT_COMPONENT)

    def _ungate(self, keys: list[str]) -> None:
        """Remove Volcano's queue-allocation gate from pods whose queue has room (cache.RemoveVolcanoSchGate:
        only while it is their one gate)."""
        pods = self.informers[kinds.POD.kind]
        for key in keys:
            seen = pods.get(*_split(key))
            gates = ((seen or {}).get("spec") or {}).get("schedulingGates") or []
            if [g.get("name") for g in gates if isinstance(g, dict)] != [scheduling.QUEUE_ALLOCATION_GATE]:
                continue   # gone, or another gate came meanwhile
            spec = {k: v for k, v in seen["spec"].items() if k != "schedulingGates"}
            try:
                self.client.update(dict(seen, spec=spec))
            except (errors.NotFound, errors.Conflict):
                continue   # the next session sees it as it is

    def _evict(self, evictions: list[str]) -> None:
        for pod_key in evictions:
            ns, name = pod_key.split("/", 1)
            try:
                self.client.delete(kinds.POD, ns, name)
            except errors.NotFound:
                continue

    def _write_podgroups(self, updates: dict[str, Obj], told: dict[str, str]) -> None:
        """Write the changed statuses over the PodGroup versions the session saw (the cached ones: one changed
        since — other work runs between the syncs of a big session's writes — is a Conflict, left to the next
        session, which its change has queued);
        `told`: the Unschedulable Events' messages, in Volcano's words (not the condition's)."""
        groups = self.informers[kinds.PODGROUP.kind]
        for key, status in updates.items():
            seen = groups.get(*_split(key))
            if seen is None:
                continue
            pg = dict(seen, status=status)
            try:
                written = self._wrote(self.client.update_status(pg))
            except (errors.NotFound, errors.Conflict):
                continue
            message = _unschedulable(status)
            if message is not None and message != _unschedulable(seen.get("status") or {}):
                self.record(written, "Warning", UNSCHEDULABLE, told.get(key) or message, EVENT_COMPONENT)
            if status.get("phase") not in _WAITING_PHASES:
                self.record(written, "Normal", SCHEDULED, POD_GROUP_READY, EVENT_COMPONENT)


    def _write_pod_conditions(self, updates: dict[str, tuple[str, str, str]]) -> None:
        """A waiting pod's PodScheduled=False condition (and the node it is nominated to, if pipelined),
        and a Warning Event FailedScheduling saying the same, as Volcano's cache writes them (status.py)."""
        if not updates:
            return
        pods = self.informers[kinds.POD.kind]
        now = clock_mod.format_time(self.clock.now()) or ""
        for key, (reason, message, nominated) in updates.items():
            seen = pods.get(*_split(key))
            if seen is None or (seen.get("spec") or {}).get("nodeName"):
                continue   # gone, or bound meanwhile
            status = {**(seen.get("status") or {}),
                      "conditions": status_mod.pod_unscheduled_conditions(seen, reason, message, now)}
            if nominated:
                status["nominatedNodeName"] = nominated
            try:
                self._wrote(self.client.update_status(dict(seen, status=status)))
            except (errors.NotFound, errors.Conflict):
                continue
            self.record(seen, "Warning", "FailedScheduling", message, EVENT_COMPONENT)


class _Write(enum.Enum):
    BIND = "bind"
    EVICT = "evict"
    PODGROUP = "podgroup"
    CONDITION = "condition"
    UNGATE = "ungate"


def _writes_of(result: session_mod.SessionResult) -> list[tuple[_Write, str, Any]]:
    """A session's writes in the order they are made: (what, key, value)."""
    return [*((_Write.BIND, key, node) for key, node in result.binds.items()),
            *((_Write.EVICT, key, None) for key in result.evictions),
            *((_Write.PODGROUP, key, status) for key, status in result.podgroup_status.items()),
            *((_Write.CONDITION, key, value) for key, value in result.pod_conditions.items()),
            *((_Write.UNGATE, key, None) for key in result.ungate)]


def _unschedulable(status: Obj) -> str | None:
    """The message of a PodGroup status's true Unschedulable condition, if it has one."""
    for cond in status.get("conditions") or []:
        if cond.get("type") == UNSCHEDULABLE and cond.get("status") == "True":
            return cond.get("message", "")
    return None
