"""A container's processes that left its process group (setsid, a daemon's double fork: a dataloader, a launcher
such as torchrun starting its workers in sessions of their own): found by the owner mark in their environment and
killed when the container ends, as a node kills everything in a container's PID namespace when its main process
ends.

The runner kills a container's process group when its main process ends; a process in a session of its own is
not in it, so it used to outlive its pod (and keep the GPU the next pod is given). The environment of each run
of a container carries VCLITE_OWNER=<pod uid>@<pod dir digest>/<container>/<run> (`mark`: after a colon, behind
the mark vclite itself inherited, so a `vcctl run` inside another's pod stays that pod's), and every process it
starts inherits it (a restarted container's new run has a mark of its own: killing the last run's strays leaves it
alone). `kill_marked` looks at the environment of every process in /proc and SIGKILLs those carrying one of the
given owners.

Never a process that is not the pod's: a pod's uid is unique, and with the digest of its directory (`pod_owner`)
unique to this vclite's pod even where another vclite runs from a copy of this one's state, so only its processes
(and what they start) carry its mark; a process is signalled through a pidfd opened before its environment is
read a second time, so a pid reused in between is never signalled; this process is never looked at. What
escapes: a process that starts its programs with an environment of its own making (`env -i`, a service
manager's) or without VCLITE_OWNER, and one running as another user (its environment cannot be read). A command
that sets VCLITE_OWNER itself, to another pod's mark, makes its processes that pod's. Without /proc or pidfds
(Linux before 5.3) nothing is swept.

A process caught in its exec: right after an exec's point of no return the kernel has not yet said where the new
environment is, and /proc/<pid>/environ reads empty for a moment. A scan that finds such a process where it may
be a container's (`maybe_mid_exec`: a program's, not a kernel thread's, an orphan, a session's leader, a child or
session member of a process of the owners asked) looks again LOOK_AGAIN later, once a sweep; nothing is killed
on an empty environment, only on the mark the second look reads.

Costs one read of /proc/<pid>/environ per process of the host; the runner sweeps at once where it must (a
container holding GPUs, a pod being stopped: the scans asked for in one step of the event loop are one look at
/proc, `sweep`, each asker then waiting for its own processes only: a pod whose process is slow to die holds up
no other), the executor in batches otherwise (a look again there is queued, not waited for).
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
import select
import signal
import time
import weakref

log = logging.getLogger("vclite.executor")
MARK = "VCLITE_OWNER"
_MARK_ENTRY = MARK.encode() + b"="
SWEEP_ROUNDS = 3   # scans while a scan finds processes (one may fork while it is killed)
LOOK_AGAIN = 0.005   # seconds after a scan that caught a process in its exec before the one look again
TICK = 0.01   # seconds between two looks of a sweep at whether its processes have exited


def pod_owner(pod_uid: str, pod_dir: str | os.PathLike[str]) -> str:
    """A pod's part of its processes' marks, `<uid>@<digest of its pod directory>`: the same pod's processes run by
    another vclite at the same time (a copy of this server's state, whose pods have the same uids, runs them
    under its own work directory) are not this one's."""
    digest = hashlib.blake2s(os.fsencode(os.path.abspath(pod_dir)), digest_size=4).hexdigest()
    return f"{pod_uid}@{digest}"


def owner(pod: str, container: str, run: int) -> str:
    """The mark of the processes of a container's run (0 the first, 1 its first restart, …); `pod`: `pod_owner`."""
    return f"{pod}/{container}/{run}"


def mark(inherited: str | None, own: str) -> str:
    """The VCLITE_OWNER value of a container's processes: its own owner behind the one vclite inherited."""
    return f"{inherited}:{own}" if inherited else own


def supported() -> bool:
    """Whether strays can be found and killed safely here (/proc, pidfds)."""
    return os.path.isdir("/proc") and hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")


def _environ(pid: str) -> bytes | None:
    """A process's environment as /proc shows it (None: unreadable, gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _marks(env: bytes) -> list[str]:
    """The owners an environment's VCLITE_OWNER names (none: no mark)."""
    at = env.find(_MARK_ENTRY)
    while at > 0 and env[at - 1] != 0:   # (the name must begin an entry: not the end of another name or value)
        at = env.find(_MARK_ENTRY, at + 1)
    if at < 0:
        return []
    end = env.find(b"\0", at)
    return env[at + len(_MARK_ENTRY):end if end >= 0 else len(env)].decode(errors="replace").split(":")


def _owners_of(pid: str) -> list[str]:
    """The owners a process's environment names (none: unreadable, a zombie's, no mark)."""
    return _marks(_environ(pid) or b"")


def marks_of(pid: int) -> list[str]:
    """The owners the process `pid`'s environment names (`mark`'s parts; none: unreadable, gone, no mark)."""
    return _owners_of(str(pid))


def _matched(marks: list[str], owners: set[str]) -> frozenset[str]:
    """The owners asked for that `marks` name: a run's owner itself, or its pod's (`pod_owner`)."""
    return frozenset({m for m in marks if m in owners} | ({m.partition("/")[0] for m in marks} & owners))


def _stat(pid: str) -> tuple[int, int] | None:
    """A process's parent and session (None: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rpartition(b")")[2].split()   # (after the command's name: it may hold spaces)
        return int(fields[1]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None


def _user_process(pid: str) -> bool:
    """Whether a process runs a program: its /proc/<pid>/exe can be read (a kernel thread has none, nor has a
    zombie; a process in its exec has its new one already, set before its new memory)."""
    try:
        os.readlink(f"/proc/{pid}/exe")
        return True
    except OSError:
        return False


def maybe_mid_exec(pid: str, owners: set[str]) -> bool:
    """Whether a process whose environment read empty may be one of `owners`' caught in its exec (right after
    the exec's point of no return the kernel has not yet said where the new environment is: /proc/<pid>/environ
    reads empty for a moment). A program's process (not a kernel thread, not a zombie) that may have come from a
    container: an orphan (its parent gone, as a killed container's processes are), a session's leader (a
    setsid: how a process leaves its container's group), or a child or session member of a process of `owners`
    or of a session whose leader is gone. Only says whether to look again: nothing is killed on it."""
    if not _user_process(pid):
        return False
    ids = _stat(pid)
    if ids is None:
        return False
    parent, session = ids
    if parent <= 1 or session == int(pid):
        return True
    if _matched(_owners_of(str(parent)), owners):
        return True
    if not os.path.exists(f"/proc/{session}"):   # (its session's leader gone: a daemon's double fork)
        return True
    return bool(_matched(_owners_of(str(session)), owners))


@dataclasses.dataclass
class Scan:
    """What one look at /proc did: the processes signalled, each a pidfd with the owners asked for that it carries
    (to close: `close(scan.fds)`), and whether a process caught in its exec may have been one of them (`unsure`:
    look again in a moment, `LOOK_AGAIN`)."""

    killed: list[tuple[int, frozenset[str]]] = dataclasses.field(default_factory=list)
    unsure: bool = False

    @property
    def fds(self) -> list[int]:
        return [fd for fd, _ in self.killed]

    def then(self, again: Scan) -> Scan:
        """This scan and the look again after it: what both killed; sure (a look again is the last)."""
        return Scan(self.killed + again.killed)


def kill_marked(owners: set[str]) -> Scan:
    """SIGKILL every live process (but this one) whose environment names one of `owners` (a run's `owner`, or a
    `pod_owner` alone: any of its runs): one look at /proc (see `Scan`)."""
    scan = Scan()
    if not owners or not supported():
        return scan
    me = str(os.getpid())
    try:
        entries = os.listdir("/proc")
    except OSError:
        return scan
    for entry in entries:
        if not entry.isdigit() or entry == me:
            continue
        env = _environ(entry)
        if env == b"":   # (a kernel thread, a zombie, or a process caught in its exec)
            scan.unsure = scan.unsure or maybe_mid_exec(entry, owners)
            continue
        if not env or not _matched(_marks(env), owners):
            continue
        try:
            fd = os.pidfd_open(int(entry))
        except OSError:   # (gone meanwhile)
            continue
        try:   # (the pidfd is the process read now: read again, it is the one marked if still alive)
            whose = _matched(_owners_of(entry), owners)
            if whose:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                scan.killed.append((fd, whose))
                continue
        except OSError:
            pass
        os.close(fd)
    return scan


def exited(fd: int) -> bool:
    """Whether the process of a pidfd has exited (its pidfd is readable then)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def shares(killed: list[frozenset[str]], askers: list[set[str]]) -> list[list[int]]:
    """Which of the processes one scan killed (the owners each carries) are each asker's: those carrying one of its
    owners (indexes into `killed`, per asker). Each asker waits for its own only."""
    return [[i for i, whose in enumerate(killed) if whose & asked] for asked in askers]


@dataclasses.dataclass
class _Batch:
    """The scans asked for at the same moment (in one step of the event loop: the pods a stop ends together), one
    look at /proc for all of them, not one each; each asker is given the pidfds of its own processes."""

    askers: list[tuple[set[str], asyncio.Future[list[int]]]] = dataclasses.field(default_factory=list)
    look_again: bool = False   # (an asker's first scan: one caught in its exec is looked at again, once a sweep)


_ASKED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batch] = weakref.WeakKeyDictionary()
_SCANNING: set[asyncio.Task[None]] = set()   # (a task the loop alone refers to may be collected before its end)


async def sweep(owners: set[str], wait: float) -> None:
    """Kill the processes of `owners` and wait, at most `wait` seconds, until each has exited (a process lets a
    GPU go as it exits); then scan again while a scan finds some (one may have forked as it was killed),
    SWEEP_ROUNDS scans at most. The scans other tasks ask for in the same step of the event loop are the same
    look at /proc (`_scan`), but each waits for its own processes only: a pod whose process is slow to die
    holds up no other."""
    if not owners:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    for round_ in range(SWEEP_ROUNDS):
        fds = await _scan(owners, look_again=round_ == 0)
        if not fds:
            return
        try:
            while not all(exited(fd) for fd in fds) and loop.time() < deadline:
                await _tick(loop)
        finally:
            close(fds)
        if loop.time() >= deadline:
            return


async def _tick(loop: asyncio.AbstractEventLoop) -> None:
    """Sleep until the next multiple of TICK on the loop's clock: the sweeps waiting meanwhile wake in the same
    step, and those whose processes have all exited then scan again together."""
    woken = loop.create_future()
    handle = loop.call_at((loop.time() // TICK + 1) * TICK, lambda: woken.done() or woken.set_result(None))
    try:
        await woken
    finally:
        handle.cancel()


async def _scan(owners: set[str], look_again: bool) -> list[int]:
    """`kill_marked(owners)` in this step's batch: the pidfds of the processes it killed that are `owners`'
    (`look_again`: and of a second look LOOK_AGAIN later, when the first caught a process in its exec)."""
    loop = asyncio.get_running_loop()
    batch = _ASKED.get(loop)
    if batch is None:   # (the task's first step is in the loop's next one: who asks until then joins)
        batch = _ASKED[loop] = _Batch()
        task = loop.create_task(_scan_batch(loop, batch))
        _SCANNING.add(task)
        task.add_done_callback(_SCANNING.discard)
    mine: asyncio.Future[list[int]] = loop.create_future()
    batch.askers.append((set(owners), mine))
    batch.look_again = batch.look_again or look_again
    return await mine


async def _scan_batch(loop: asyncio.AbstractEventLoop, batch: _Batch) -> None:
    if _ASKED.get(loop) is batch:
        del _ASKED[loop]   # (who asks from now on: the next batch)
    scan = Scan()
    try:
        owners = set().union(*(asked for asked, _ in batch.askers))
        scan = kill_marked(owners)
        if scan.unsure and batch.look_again:   # (a process caught in its exec has its environment a moment later)
            await asyncio.sleep(LOOK_AGAIN)
            scan = scan.then(kill_marked(owners))
    except Exception:   # (never leave the askers waiting)
        log.exception("sweeping the processes of %s", sorted(set().union(*(a for a, _ in batch.askers))))
    finally:
        fds = scan.fds
        split = shares([whose for _, whose in scan.killed], [asked for asked, _ in batch.askers])
        for (_, mine), share in zip(batch.askers, split):
            own = [os.dup(fds[i]) for i in share]
            if mine.done():   # (an asker cancelled: nobody waits for these)
                close(own)
            else:
                mine.set_result(own)
        close(fds)


def sweep_now(owners: set[str], wait: float) -> None:
    """`sweep`, blocking: at the executor's start (what a previous vclite process's pods left) and at the run's
    end (`stop_all`: what the containers ended since the last sweep left)."""
    deadline = time.monotonic() + wait
    for round_ in range(SWEEP_ROUNDS):
        scan = kill_marked(owners)
        if scan.unsure and round_ == 0:   # (once a sweep, as `sweep`)
            time.sleep(LOOK_AGAIN)
            scan = scan.then(kill_marked(owners))
        fds = scan.fds
        if not fds:
            return
        try:
            while not all(exited(fd) for fd in fds) and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            close(fds)
        if time.monotonic() >= deadline:
            return
