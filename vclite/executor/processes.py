"""Start a container's process and await its exit without a thread per process.

`start(argv, ...)` returns a `Child` (pid, returncode, `await wait()`), like an asyncio subprocess.
On Linux (5.3+), the exit is awaited through a pidfd registered with the event loop: starting a
process costs a fork/exec and nothing else. Python 3.11's asyncio instead starts a thread per
process to wait for it (its ThreadedChildWatcher), which costs about half a millisecond per
process on a 2-core machine — a large part of a quick job's hop. Where pidfds are missing (other
systems, older kernels, seccomp), asyncio's subprocess is used as before.

returncode follows asyncio's and subprocess's convention: the exit code, or −N for a signal N.

`adopt(pid, code_of)` watches a process this one did not start (a container a previous server started, after
a crash: executor/recovery.py): its pidfd says when it exits, but only a parent can read how, so `code_of()` is
asked then (the exit journal's record, exits.py). No pidfd (another kernel): None, the caller cannot adopt.

`SpawnTurns.take()` (awaited by a runner before it starts a process) lets at most SPAWNS_PER_TURN starts through
per turn of the event loop: a fork of a big process costs 1–6 ms, and two hundred pods bound at once started
in one turn kept a server's requests waiting for all of them (0.1–0.3 s on a loaded machine).
Must not: know pods or containers; the runner does.
"""
from __future__ import annotations

import asyncio
import collections
import os
import subprocess
from typing import IO, Callable, Mapping, Protocol

_PIDFD_WORKS: bool | None = None   # decided at the first start
SPAWNS_PER_TURN = 4   # process starts per turn of the event loop (SpawnTurns)


class SpawnTurns:
    """At most `per_turn` callers of `take()` go on per turn of the event loop, the others in the next turns in
    the order they came: the loop's other callbacks (a server's requests) run between every few starts."""

    def __init__(self, per_turn: int = SPAWNS_PER_TURN):
        self.per_turn = per_turn
        self._used = 0   # takes let through since the last turn began
        self._turning = False   # a _next_turn is scheduled
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    async def take(self) -> None:
        loop = asyncio.get_running_loop()
        self._schedule(loop)
        if self._used < self.per_turn and not self._waiting:
            self._used += 1
            return
        turn = loop.create_future()
        self._waiting.append(turn)
        await turn   # (cancelled while waiting: skipped when its turn comes)

    def waiting(self) -> bool:
        """Are callers waiting for their turn?"""
        return any(not turn.done() for turn in self._waiting)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._turning:
            self._turning = True
            loop.call_soon(self._next_turn, loop)

    def _next_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        self._turning, self._used = False, 0
        while self._waiting and self._used < self.per_turn:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                self._used += 1
        if self._used:   # (the ones let through run in the next turn: count them there)
            self._schedule(loop)


class Child(Protocol):
    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class _PidfdChild:
    """A subprocess.Popen whose exit is reported by its pidfd becoming readable."""

    def __init__(self, popen: subprocess.Popen, pidfd: int, loop: asyncio.AbstractEventLoop):
        self._popen, self._pidfd, self._loop = popen, pidfd, loop
        self.pid = popen.pid
        self._waiters: list[asyncio.Future[int]] = []
        loop.add_reader(pidfd, self._on_exit)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def _on_exit(self) -> None:
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        code = self._popen.wait()   # the process has exited: this only reaps it
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(code)
        self._waiters.clear()

    async def wait(self) -> int:
        code = self._popen.returncode
        if code is not None:
            return code
        # a future per waiter: one waiter cancelled (a stop's timeout) does not cancel the others',
        # and the exit wakes each waiter in one turn of the loop (asyncio.shield would take three)
        waiter = self._loop.create_future()
        self._waiters.append(waiter)
        return await waiter


def _pidfd_open(pid: int) -> int | None:
    global _PIDFD_WORKS
    if _PIDFD_WORKS is False or not hasattr(os, "pidfd_open"):
        return None
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        _PIDFD_WORKS = False
        return None
    _PIDFD_WORKS = True
    return fd


async def start(argv: list[str], *, cwd: str | os.PathLike, env: Mapping[str, str] | Mapping[bytes, bytes],
                log: IO[bytes], stdin: int | None = None, pass_fds: tuple[int, ...] = ()) -> Child:
    """Start `argv` in a new session, stdin from the file descriptor `stdin` (None: /dev/null), stdout and
    stderr to `log`, `pass_fds` inherited. Raises OSError (e.g. FileNotFoundError) when the program cannot be
    started."""
    loop = asyncio.get_running_loop()
    stdin_source = subprocess.DEVNULL if stdin is None else stdin
    if _PIDFD_WORKS is not False and hasattr(os, "pidfd_open"):
        popen = subprocess.Popen(argv, stdin=stdin_source, stdout=log, stderr=subprocess.STDOUT,
                                 cwd=cwd, env=env, start_new_session=True, pass_fds=pass_fds)
        fd = _pidfd_open(popen.pid)
        if fd is not None:
            return _PidfdChild(popen, fd, loop)
        # no pidfd after all: wait for this one in a thread, later ones go through asyncio
        return _ThreadWaitedChild(popen, loop)
    return await asyncio.create_subprocess_exec(
        *argv, stdin=stdin_source, stdout=log, stderr=asyncio.subprocess.STDOUT,
        cwd=cwd, env=env, start_new_session=True, pass_fds=pass_fds)


class _AdoptedChild:
    """A process this one did not start: its exit is seen through its pidfd, its code asked of `code_of`."""

    def __init__(self, pid: int, pidfd: int | None, loop: asyncio.AbstractEventLoop, code_of: Callable[[], int]):
        self.pid, self._pidfd, self._loop, self._code_of = pid, pidfd, loop, code_of
        self._code: int | None = None
        self._exited = loop.create_future()
        if pidfd is None:   # (gone already)
            self._on_exit()
        else:
            loop.add_reader(pidfd, self._on_exit)

    @property
    def returncode(self) -> int | None:
        return self._code

    def _on_exit(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self._code = self._code_of()
        if not self._exited.done():
            self._exited.set_result(self._code)

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)


def adopt(pid: int, code_of: Callable[[], int]) -> Child | None:
    """Watch the process `pid`, not a child of this one, until it exits; then `code_of()` is its return code (as
    `start`'s: −N for a signal N). A process already gone has exited. None where pidfds are not available."""
    if pid <= 0 or not hasattr(os, "pidfd_open"):
        return None
    loop = asyncio.get_running_loop()
    try:
        fd: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        fd = None
    except OSError:
        return None
    return _AdoptedChild(pid, fd, loop, code_of)


def unwatch(child: Child) -> None:
    """Stop watching an adopted process (`adopt`) that will not be awaited."""
    if isinstance(child, _AdoptedChild) and child._pidfd is not None:
        child._loop.remove_reader(child._pidfd)
        os.close(child._pidfd)
        child._pidfd = None


class _ThreadWaitedChild:
    """The one process started before pidfds turned out to be unavailable."""

    def __init__(self, popen: subprocess.Popen, loop: asyncio.AbstractEventLoop):
        self._popen, self.pid = popen, popen.pid
        self._exited = loop.run_in_executor(None, popen.wait)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)
