"""The HyperNode a network-topology job (and each of its partitions) was placed in, kept across sessions.

Volcano keeps `JobInfo.AllocatedHyperNode` and each SubJob's in its scheduler cache, for the life of
the scheduler process (scheduler/cache UpdateJobStatus → updateJobInfo; since v1.14.0 nothing
writes or reads the PodGroup annotation `volcano.sh/job-allocated-hypernode`, whose constant is
left). vclite keeps them in `Session.memory` (the scheduler shell's, for its life; a dry run starts
empty), per job uid, with Volcano's rules:
- every allocate (`prune`), and when a session first looks at a job: the entries of jobs that are
  gone are dropped (so a server whose last network-topology job is long gone keeps nothing of it);
- when a session first looks at a job (removeInvalidAllocatedHyperNode): an entry of another
  PodGroup of the same name is dropped; a HyperNode that no longer exists, or that of a job or
  partition without allocated pods (Allocated, Binding, Bound, Running), is forgotten;
- a forgotten or never known one is recovered (recoverAllocatedHyperNode, as after a restart): a
  partition's, the lowest HyperNode holding the nodes of its allocated pods; the job's, the lowest
  holding all of its allocated pods; and kept;
- when allocate commits a job (it is ready: recorder.UpdateDecisionToJob), the job's becomes the
  lowest common ancestor of what it was and the HyperNode chosen for the job (the virtual top for a
  job limited by its partitions only), each placed partition's the LCA of what it was and the
  HyperNode chosen for it; the default partition of a job with its own networkTopology (Volcano's
  default SubJob carries the job's) takes the job's choice.
So a job placed within a tier-2 HyperNode whose pods all landed in one tier-1 child keeps the tier-2
one: its later pods are scored against it (network-topology-aware's BatchNodeOrder), as upstream.

Partitions are named as actions/topology.py names them: "" the default one, else
`<policy>/<values joined by "-">`.

Must not: write to the API; keep anything but these names between sessions.
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import TYPE_CHECKING, Callable

import numpy as np

from vclite.api import meta
from vclite.scheduler.framework import hypernodes as hypernodes_mod
from vclite.scheduler.framework import tasks as tasks_mod

if TYPE_CHECKING:
    from vclite.scheduler.framework import jobs as jobs_mod
    from vclite.scheduler.framework import session as session_mod

KEY = "network-topology/allocated-hypernodes"   # Session.memory's entry: job uid -> Entry
TOP = hypernodes_mod.TOP


@dataclasses.dataclass
class Entry:
    podgroup: str                                            # the PodGroup's uid
    job: str = ""                                            # the job's HyperNode ("" none)
    parts: dict[str, str] = dataclasses.field(default_factory=dict)   # partition name -> its HyperNode


@dataclasses.dataclass
class _Scratch:
    checked: set[str] = dataclasses.field(default_factory=set)            # jobs validated this session
    groups: dict[str, dict[str, frozenset]] = dataclasses.field(default_factory=dict)   # `groups`' memo
    pending: dict[str, tuple[str, dict[str, str]]] = dataclasses.field(default_factory=dict)  # uncommitted


_SESSIONS: "weakref.WeakKeyDictionary[session_mod.Session, _Scratch]" = weakref.WeakKeyDictionary()


def _scratch(ssn: "session_mod.Session") -> _Scratch:
    s = _SESSIONS.get(ssn)
    if s is None:
        s = _SESSIONS[ssn] = _Scratch()
    return s


def groups(ssn: "session_mod.Session", job: "jobs_mod.JobInfo",
           compute: Callable[["jobs_mod.JobInfo"], dict[str, frozenset]]) -> dict[str, frozenset]:
    """The job's partitions with a network topology (`compute`: actions/topology.topology_groups),
    once per session: they follow the pods' labels, which a session does not change."""
    memo = _scratch(ssn).groups
    g = memo.get(job.uid)
    if g is None:
        g = memo[job.uid] = compute(job)
    return g


def lca(ssn: "session_mod.Session", a: str, b: str) -> str:
    return ssn.topology.lca(a, b)


def lowest_holding(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", uids: frozenset | set | None = None) -> str:
    """The lowest HyperNode holding the nodes of the job's allocated pods (`uids`: only those); ""
    when none is placed."""
    index = ssn.nodes.index
    rows = [index[t.node] for s in tasks_mod.ALLOCATED_STATUS for t in (job.index.get(s) or {}).values()
            if t.node in index and (uids is None or t.uid in uids)]
    if not rows:
        return ""
    return ssn.topology.lowest_holding(np.array(rows, dtype=np.intp))


def prune(ssn: "session_mod.Session") -> None:
    """Forget the entries of jobs the session no longer has (nothing to do, a dict lookup, without any)."""
    store: dict[str, Entry] | None = ssn.memory.get(KEY)
    if store:
        for uid in [u for u in store if u not in ssn.jobs]:
            del store[uid]


def entry(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", groups: dict[str, frozenset]) -> Entry:
    """The job's entry, checked and recovered once per session (module docstring). `groups`: the
    job's partitions with a network topology, by name, with their tasks."""
    store: dict[str, Entry] = ssn.memory.setdefault(KEY, {})
    scratch = _scratch(ssn)
    e = store.get(job.uid)
    if job.uid in scratch.checked and e is not None:
        return e
    if not scratch.checked:   # the first look of the session: forget the jobs that are gone
        prune(ssn)
    scratch.checked.add(job.uid)
    pg_uid = meta.uid(job.podgroup) if isinstance(job.podgroup, dict) else ""
    if e is None or e.podgroup != pg_uid:
        e = store[job.uid] = Entry(pg_uid)
    tree = ssn.topology
    if e.job and (e.job not in tree.tier or not lowest_holding(ssn, job)):
        e.job = ""
    for name in list(e.parts):
        if e.parts[name] not in tree.tier or name not in groups or not lowest_holding(ssn, job, groups[name]):
            del e.parts[name]
    for name, uids in groups.items():
        if name not in e.parts:
            found = lowest_holding(ssn, job, uids)
            if found:
                e.parts[name] = found
    if not e.job:
        e.job = lowest_holding(ssn, job)
    return e


def job_hypernode(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", groups: dict[str, frozenset]) -> str:
    """The job's allocated HyperNode ("" none) for the gradients' search root."""
    return entry(ssn, job, groups).job


def part_hypernode(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", groups: dict[str, frozenset],
                   name: str) -> str:
    """A partition's allocated HyperNode as kept ("" none)."""
    return entry(ssn, job, groups).parts.get(name, "")


def propose(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", chosen: str, parts: dict[str, str]) -> None:
    """What allocate's last search for the job chose (recorder.SaveJobDecision / SaveSubJobDecision);
    kept only if the job's statement is committed (`commit`)."""
    _scratch(ssn).pending[job.uid] = (chosen, dict(parts))


def forget_proposal(ssn: "session_mod.Session", job: "jobs_mod.JobInfo") -> None:
    _scratch(ssn).pending.pop(job.uid, None)


def commit(ssn: "session_mod.Session", job: "jobs_mod.JobInfo", groups: dict[str, frozenset]) -> None:
    """The job's statement was committed: its and its partitions' HyperNodes take the proposal in."""
    proposal = _scratch(ssn).pending.pop(job.uid, None)
    if proposal is None:
        return
    chosen, parts = proposal
    e = entry(ssn, job, groups)
    e.job = lca(ssn, e.job, chosen) if chosen else e.job
    for name, hn in parts.items():
        e.parts[name] = lca(ssn, e.parts.get(name, ""), hn)

