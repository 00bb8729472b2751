"""The kubelet's heartbeat for the nodes the local executor runs (server mode).

A kubelet renews its node's Lease (`kube-node-lease/<node>`) every leaseDurationSeconds/4 (10 s of
40) and writes its node's conditions at least every nodeStatusReportFrequency (5 min) even when
nothing changed. `NodeHeartbeat` does both for every node of this executor, in one background
sync every RENEW_SECONDS (a chore timer: it never keeps `vcctl run` alive, and it runs after the
work a job hop waits for): each Lease's `spec.renewTime` is set to now (a missing Lease is
created again, owned by its Node); a node whose Ready condition's `lastHeartbeatTime` is 5 min old
gets its conditions' heartbeat times written (nodes.heartbeat_status). A cordoned node is renewed
like any other, as a kubelet renews it; a deleted node is not (its Lease goes with it, owned by
it) until a Node of that name exists again. A write that fails (a conflict with another writer)
waits for the next beat.
"""
from __future__ import annotations

import logging
from typing import Any, Hashable, Iterable

from vclite.api import kinds
from vclite.executor import nodes as nodes_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

log = logging.getLogger("vclite.executor")
RENEW_SECONDS = nodes_mod.NODE_LEASE_SECONDS / 4


class NodeHeartbeat:
    name = "node-heartbeat"
    background = True
    KEY = "heartbeat"

    def __init__(self, client: Any, clock: clock_mod.Clock, node_names: Iterable[str],
                 interval: float = RENEW_SECONDS, report_seconds: float = nodes_mod.STATUS_REPORT_SECONDS):
        self.client, self.clock = client, clock
        self.node_names = list(node_names)
        self.interval, self.report_seconds = interval, report_seconds
        self.queue = workqueue.WorkQueue(clock)

    def start(self) -> None:
        self.queue.add(self.KEY)

    def sync(self, key: Hashable) -> None:
        self.queue.add_after(self.KEY, self.interval, chore=True)   # (the next beat, whatever this one does)
        now = self.clock.now()
        for name in self.node_names:
            try:
                node = self.client.get(kinds.NODE, "", name)
            except errors.NotFound:
                continue   # a deleted node has no heartbeat
            try:
                self._renew(node, now)
                status = nodes_mod.heartbeat_status(node, now, self.report_seconds)
                if status is not None:
                    self.client.update_status({**node, "status": status})
            except (errors.Conflict, errors.NotFound, errors.AlreadyExists, errors.Forbidden) as exc:
                log.debug("node %s: heartbeat skipped (%s): the next one in %ss", name, exc, self.interval)

    def _renew(self, node: dict, now: Any) -> None:
        name = node["metadata"]["name"]
        stamp = clock_mod.format_micro_time(now)
        try:
            lease = self.client.get(kinds.LEASE, nodes_mod.NODE_LEASE_NAMESPACE, name)
        except errors.NotFound:
            self.client.create(nodes_mod.node_lease(node, stamp))
            return
        spec = {**(lease.get("spec") or {}), "holderIdentity": name,
                "leaseDurationSeconds": nodes_mod.NODE_LEASE_SECONDS, "renewTime": stamp}
        self.client.update({**lease, "spec": spec})
