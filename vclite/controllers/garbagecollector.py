"""The garbage collector (Volcano's pkg/controllers/garbagecollector, `gc-controller` in the `--controllers`
gate): a finished vcjob with `spec.ttlSecondsAfterFinished` is deleted that many seconds after it finished.

Finished is Completed, Failed or Terminated (not Aborted: a suspended job may be resumed); the time it
finished is its `status.state.lastTransitionTime` (a job without one is never deleted: Volcano retries it
with back-off for ever). A vcjob being deleted is left alone. When the time comes the vcjob is read again
from the API, as Volcano's final sanity check (its TTL or phase may have changed meanwhile), and deleted
with foreground propagation (its pods and PodGroup go first) under a precondition on the UID read, as
Volcano's: a vcjob deleted and made again under the same name meanwhile is not deleted (the Conflict
is retried, and the new one judged on its own TTL). A vcjob whose time has not come is looked at
again when it has (a chore: a clean-up nothing waits for, so `vcctl run` does not wait for it).

It runs on its own, as in Volcano: the vcjob controller may be disabled while it runs, and the reverse.
Talks to the cluster only through the Client protocol; the watch handler only enqueues keys.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Hashable

from vclite.api import batch, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

Obj = dict[str, Any]


def needs_cleanup(job: Obj) -> bool:
    """Volcano's needsCleanup: a TTL is set and the job is finished (Completed, Failed, Terminated)."""
    return (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None and \
        meta.phase(job) in batch.TERMINAL_PHASES


def expires_at(job: Obj) -> dt.datetime | None:
    """When a finished job's TTL runs out (its lastTransitionTime + TTL); None when it needs no clean-up or
    does not say when it finished."""
    if not needs_cleanup(job):
        return None
    finished = clock_mod.parse_time(((job.get("status") or {}).get("state") or {}).get("lastTransitionTime"))
    if finished is None:
        return None
    return finished + dt.timedelta(seconds=int(job["spec"]["ttlSecondsAfterFinished"]))


class GarbageCollector:
    name = "gc-controller"
    retries_forever = True   # (Volcano's gc-controller: handleErr re-adds rate-limited, never dropped)
    background = True   # a clean-up no other component waits for (the runtime runs it last)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.jobs = informer_mod.Informer(client, kinds.JOB, self._on_job)

    def start(self) -> None:
        self.jobs.start()
        for job in self.jobs.items():
            if needs_cleanup(job) and not meta.is_deleting(job):
                self.queue.add(meta.key(job))

    def stop(self) -> None:
        self.jobs.stop()

    def _on_job(self, ev: client_mod.WatchEvent) -> None:
        if ev.type != client_mod.EventType.DELETED and needs_cleanup(ev.object) and not meta.is_deleting(ev.object):
            self.queue.add(meta.key(ev.object))

    def _left(self, job: Obj | None) -> float | None:
        """Seconds until `job` is to be deleted (<= 0: now); None: it is not to be deleted."""
        if job is None or meta.is_deleting(job):
            return None
        expiry = expires_at(job)
        return None if expiry is None else (expiry - self.clock.now()).total_seconds()

    def sync(self, key: Hashable) -> None:
        ns, _, name = str(key).partition("/")
        left = self._left(self.jobs.get(ns, name))
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left, chore=True)
            return
        try:   # the cached version may be stale: decide on the API's (Volcano's final sanity check)
            fresh = self.client.get(kinds.JOB, ns, name)
        except errors.NotFound:
            return
        left = self._left(fresh)
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left, chore=True)
            return
        try:
            # (the UID read: a vcjob deleted and made again meanwhile is not this one, and is looked at again)
            self.client.delete(kinds.JOB, ns, name, propagation="Foreground",
                               preconditions={"uid": fresh["metadata"]["uid"]})
        except errors.NotFound:
            pass
