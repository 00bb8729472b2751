"""The queue controller (Volcano's pkg/controllers/queue): a Queue's `status.state`, its Open/Close
commands, and the closing and reopening of child queues with their parent.

Requests for a queue come from: the Queue added (or its parent changed) -> SyncQueue; a PodGroup of
the queue added, deleted or changing phase -> SyncQueue (skipped while the queue and its parent
are both Open: that sync could change nothing); a bus.volcano.sh Command whose target is the queue
(`vcctl queue operate -a open|close`) -> its action, after the Command is deleted (at most once).

Each request runs the state table (`decide`, Volcano's queue/state package) over the queue's state,
the action and whether PodGroups remain in the queue (any phase: a closing queue is Closed once its
PodGroups are gone); the table names the operation:
- sync: give a queue without a parent the parent `root` (as Volcano patches it), write the new
  state, then follow the parent: a queue Open under a Closing/Closed parent is marked
  `volcano.sh/closed-by-parent: "true"` and closed; a queue closed by its parent is reopened
  with it;
- open: refused while the parent is Closing/Closed (retried with back-off, 15 times, then a
  Warning event); reopens the
  children its closing closed; writes Open and marks the queue `closed-by-parent: "false"`;
- close: `root` is never closed; marks and closes the children still open; writes Closing/Closed
  with a `CloseQueue` event "Close queue succeed".
A state the table does not know (written by hand through /status) is retried as a refused open,
then gets a Warning event. Each request is retried on its own: a queue's other requests and
Commands go on meanwhile.

Talks to the cluster only through the Client protocol; watch handlers only record work.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Hashable

from vclite.api import batch, bus, kinds, meta, scheduling
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]
Act, State = batch.Action, scheduling.QueueState
CLOSED_BY_PARENT = "volcano.sh/closed-by-parent"
MAX_REQUEUE = 15        # Volcano's --max-requeue-num
BACKOFF, MAX_BACKOFF = 0.005, 1000.0   # client-go's default controller rate limiter (per item)
COMPONENT = "vc-controller-manager"
SHUT = (State.CLOSED, State.CLOSING)
OUT_OF_SYNC, COMMAND_ISSUED = "OutOfSync", "CommandIssued"


class Op(enum.Enum):
    SYNC = "sync"
    OPEN = "open"
    CLOSE = "close"


def _closing_or_closed(has_podgroups: bool) -> str:
    return str(State.CLOSING if has_podgroups else State.CLOSED)


def _sync_state(state: str, has_podgroups: bool) -> str:
    """What a SyncQueue makes of the recorded state (every state's default branch)."""
    if state in ("", State.OPEN):
        return str(State.OPEN)
    if state in SHUT:
        return _closing_or_closed(has_podgroups)
    return str(State.UNKNOWN)


def decide(state: str, action: str, has_podgroups: bool) -> tuple[Op, str] | None:
    """(operation, new state) for `action` on a queue in `state` (Volcano's queue state machine);
    None for a state it does not know. A Closed queue stays Closed on a sync even if PodGroups are
    left (only Closing waits for them); an Unknown one stays Unknown."""
    if state not in ("", *(str(s) for s in State)):
        return None
    if action == Act.OPEN_QUEUE:
        return (Op.SYNC if state in ("", State.OPEN) else Op.OPEN), str(State.OPEN)
    if action == Act.CLOSE_QUEUE:
        op = Op.CLOSE if state in ("", State.OPEN, State.UNKNOWN) else Op.SYNC
        return op, (str(State.CLOSED) if state == State.CLOSED else _closing_or_closed(has_podgroups))
    if state == State.CLOSED:
        return Op.SYNC, str(State.CLOSED)
    if state == State.UNKNOWN:
        return Op.SYNC, str(State.UNKNOWN)
    return Op.SYNC, _sync_state(state, has_podgroups)


@dataclasses.dataclass(frozen=True)
class Request:
    action: str
    command: str = ""           # "namespace/name" of the Command to consume first, if any
    event: str = OUT_OF_SYNC    # what brought it (Volcano's request event), for the failure Warning
    attempts: int = 0           # times it failed so far (each request is retried on its own)
    due: float = 0.0            # monotonic time of its next attempt


class Retry(Exception):
    """The request cannot be carried out yet (e.g. opening a queue under a closed parent)."""


class InvalidState(Retry):
    """The queue's state is none the state machine knows (retried: it may be written again)."""


def _state(queue: Obj | None) -> str:
    status = (queue or {}).get("status")
    return str(status.get("state") or "") if isinstance(status, dict) else ""


def _parent(queue: Obj) -> str:
    spec = queue.get("spec") if isinstance(queue.get("spec"), dict) else {}
    return str(spec.get("parent") or "")


def _podgroup_queue(pg: Obj) -> str:
    spec = pg.get("spec") if isinstance(pg.get("spec"), dict) else {}
    return str(spec.get("queue") or scheduling.DEFAULT_QUEUE)


class QueueController:
    name = "queue-controller"

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, recorder: events.RecordFn | None = None):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock)
        self.record = recorder or events.direct(client, clock)
        self.queues = informer_mod.Informer(client, kinds.QUEUE, self._on_queue)
        self.podgroups = informer_mod.Informer(client, kinds.PODGROUP, self._on_podgroup,
                                               indexers={"queue": _podgroup_queue})
        self.commands = informer_mod.Informer(client, kinds.COMMAND, self._on_command)
        self._requests: dict[str, list[Request]] = {}
        self._retrying: dict[str, list[Request]] = {}   # queue name -> failed requests waiting for their turn

    # ---- watch handlers (record work only) -------------------------------------------------------
    def start(self) -> None:
        self.podgroups.start()
        self.queues.start()
        self.commands.start()
        for q in self.queues.items():
            self._request(meta.name(q), Request(str(Act.SYNC_QUEUE)))
        for cmd in self.commands.items():   # issued while no controller ran: still to be done
            self._on_command(client_mod.WatchEvent(client_mod.EventType.ADDED, kinds.COMMAND, cmd, None))

    def stop(self) -> None:
        for informer in (self.commands, self.queues, self.podgroups):
            informer.stop()

    def _request(self, name: str, req: Request) -> None:
        pending = self._requests.setdefault(name, [])
        if not (req.action == Act.SYNC_QUEUE and not req.command and Request(str(Act.SYNC_QUEUE)) in pending):
            pending.append(req)
        self.queue.add(name)

    def _on_queue(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.DELETED:
            name = meta.name(ev.object)
            self._retrying.pop(name, None)
            commands = [r for r in self._requests.pop(name, []) if r.command]
            if commands:   # still consumed (deleted), as Volcano's command worker does
                self._requests[name] = commands
        elif ev.type == client_mod.EventType.ADDED or ev.old is None or _parent(ev.old) != _parent(ev.object):
            self._request(meta.name(ev.object), Request(str(Act.SYNC_QUEUE)))

    def _on_podgroup(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.MODIFIED and ev.old is not None and meta.phase(ev.old) == meta.phase(ev.object):
            return
        name = _podgroup_queue(ev.object)
        queue = self.queues.get("", name)
        if queue is None:
            return
        parent = self.queues.get("", _parent(queue)) if _parent(queue) else None
        if _state(queue) in ("", State.OPEN) and _state(parent) in ("", State.OPEN):
            return   # an Open queue under an Open parent stays as it is, whatever its PodGroups do
        self._request(name, Request(str(Act.SYNC_QUEUE)))

    def _on_command(self, ev: client_mod.WatchEvent) -> None:
        target = bus.target_name(ev.object, kinds.QUEUE)
        if ev.type == client_mod.EventType.ADDED and target is not None:
            self._request(target, Request(bus.action(ev.object), meta.key(ev.object), COMMAND_ISSUED))

    # ---- sync ------------------------------------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        name, now = str(key), self.clock.monotonic()
        retrying = self._retrying.pop(name, [])
        if any(r.due > now for r in retrying):
            self._retrying[name] = [r for r in retrying if r.due > now]
        work = [*(r for r in retrying if r.due <= now), *self._requests.pop(name, [])]
        while work:
            req = work[0]
            try:
                if req.command:
                    if not self._consume(req.command):
                        work.pop(0)
                        continue
                    work[0] = req = dataclasses.replace(req, command="")
                self._execute(name, req.action)
            except Retry as exc:
                self._retry(name, req, exc, now)
            except Exception:   # e.g. a write conflict: the runtime retries the key, with this work
                self._requests[name] = work + self._requests.get(name, [])
                raise
            work.pop(0)

    def _retry(self, name: str, req: Request, exc: Retry, now: float) -> None:
        """Again after 5 ms, 10 ms, … (client-go's per-item back-off), MAX_REQUEUE times, then a
        Warning in Volcano's words; the queue's other requests go on meanwhile."""
        attempts = req.attempts + 1
        if attempts > MAX_REQUEUE:
            why = str(exc) if isinstance(exc, InvalidState) else \
                f"sync queue {name} failed for {exc}, event is {req.event}, action is {req.action}"
            self._warn(name, req.action, why)
            return
        delay = min(BACKOFF * 2 ** (attempts - 1), MAX_BACKOFF)
        self._retrying.setdefault(name, []).append(dataclasses.replace(req, attempts=attempts, due=now + delay))
        self.queue.add_after(name, delay, chore=True)

    def _consume(self, command_key: str) -> bool:
        """Delete a Command before acting on it (at most once); False: somebody consumed it already."""
        namespace, _, name = command_key.partition("/")
        try:
            self.client.delete(kinds.COMMAND, namespace, name)
        except errors.NotFound:
            return False
        return True

    def _execute(self, name: str, action: str) -> None:
        queue = self.queues.get("", name)
        if queue is None:
            return   # deleted meanwhile
        state = _state(queue)
        decision = decide(state, action, bool(self.podgroups.by_index("queue", name)))
        if decision is None:
            raise InvalidState(f"queue {name} state {state} is invalid")
        op, new_state = decision
        if op is Op.SYNC:
            self._sync(queue, new_state)
        elif op is Op.OPEN:
            self._open(queue, new_state)
        else:
            self._close(queue, new_state)

    def _sync(self, queue: Obj, new_state: str) -> None:
        name = meta.name(queue)
        if name != scheduling.ROOT_QUEUE and not _parent(queue):
            queue = self.client.patch(kinds.QUEUE, "", name, {"spec": {"parent": scheduling.ROOT_QUEUE}})
        queue = self._write_state(queue, new_state)
        if name == scheduling.ROOT_QUEUE:
            return
        parent = self.queues.get("", _parent(queue))
        if parent is None:
            raise Retry(f"Failed to get parent queue of Queue {name}")
        shut, parent_shut = _state(queue) in SHUT, _state(parent) in SHUT
        if parent_shut and not shut:
            self._mark(queue, "true")
            self._request(name, Request(str(Act.CLOSE_QUEUE), event=""))
        elif not parent_shut and _state(parent) == State.OPEN and shut \
                and meta.annotations(queue).get(CLOSED_BY_PARENT) == "true":
            self._request(name, Request(str(Act.OPEN_QUEUE), event=""))

    def _open(self, queue: Obj, new_state: str) -> None:
        name, parent = meta.name(queue), _parent(queue)
        if _state(queue) != State.OPEN:
            if parent and parent != scheduling.ROOT_QUEUE:
                parent_obj = self.queues.get("", parent)
                if parent_obj is None:
                    raise Retry(f"Failed to get parent queue {parent} of queue {name}")
                if _state(parent_obj) in SHUT:
                    raise Retry(f"Failed to open queue {name} because its parent queue {parent} is closing or "
                                "closed. Open the parent queue first.")
            for child in self._children(name):
                if meta.annotations(child).get(CLOSED_BY_PARENT) == "true":
                    self._request(meta.name(child), Request(str(Act.OPEN_QUEUE), event=""))
        queue = self._write_state(queue, new_state)
        self._mark(queue, "false")

    def _close(self, queue: Obj, new_state: str) -> None:
        name = meta.name(queue)
        if _state(queue) not in SHUT:
            if name == scheduling.ROOT_QUEUE:
                return   # the root queue is never closed
            for child in self._children(name):
                if _state(child) not in SHUT:
                    self._mark(child, "true")
                    self._request(meta.name(child), Request(str(Act.CLOSE_QUEUE), event=""))
        if _state(queue) != new_state:
            self._write_state(queue, new_state)
            self.record(queue, "Normal", str(Act.CLOSE_QUEUE), "Close queue succeed", COMPONENT)

    # ---- writes and reads ------------------------------------------------------------------------
    def _write_state(self, queue: Obj, new_state: str) -> Obj:
        if _state(queue) == new_state:
            return queue
        return self.client.patch(kinds.QUEUE, "", meta.name(queue), {"status": {"state": new_state}}, status=True)

    def _mark(self, queue: Obj, value: str) -> Obj:
        if meta.annotations(queue).get(CLOSED_BY_PARENT) == value:
            return queue
        return self.client.patch(kinds.QUEUE, "", meta.name(queue),
                                 {"metadata": {"annotations": {CLOSED_BY_PARENT: value}}})

    def _children(self, name: str) -> list[Obj]:
        return [q for q in self.queues.items() if _parent(q) == name]

    def _warn(self, name: str, action: str, why: str) -> None:
        queue = self.queues.get("", name)
        if queue is not None:
            self.record(queue, "Warning", action, f"{action} queue failed for {why}", COMPONENT)
