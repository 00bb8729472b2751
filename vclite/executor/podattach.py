"""`kubectl attach` for the local executor: a running container's output from where the client joins,
and its stdin (`stdin: true` in the container's spec) through a pipe the runner keeps open.

A container's process writes its stdout and stderr into its log file itself (runner.py: nothing of
vclite in between), so an attach follows that file from its end at the moment of the attach — the
output from then on, not the history; stdout and stderr merged, as in the log — looking every
FOLLOW_INTERVAL seconds, until the container's process ends (what it wrote before is sent) or the
client detaches. A restart is a new run: an attach ends with the run it joined, as with a runtime.

A container with `stdin: true` gets a pipe as its stdin (`ContainerStdin`, one per run): the runner
keeps the write end while the process runs, so the process reads what attached clients send and sees
no end of file between them (a container without it reads /dev/null, as a runtime gives it nothing).
As containerd's attach: with `stdinOnce: true`, the end of an attached client's stdin, or of its
connection, closes the container's stdin (the process reads end of file; a restart gets a new one);
without, a client's stdin ending detaches that client and the container's stdin stays open. What a
client sends to a container without stdin is dropped.

An `Attachment` is what the streaming side needs of a session (podexec.Session's shape): `stdin` (a
StreamWriter or None), `outputs` ([(stream id, reader)]), `wait()`, `resize()`, `end_stdin()`,
`kill()` — which here detaches the client, never touching the container.
Must not: know HTTP or the streaming protocol (httpserver/execstream.py speaks it).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
from typing import BinaryIO, Callable

FOLLOW_INTERVAL = 0.05   # seconds between two looks at the log of an attached container
READ_SIZE = 32 * 1024


class ContainerStdin:
    """One run's stdin: a pipe. `open()` before the process starts (it gets `read_end`), `started()`
    after, `close()` when the process has ended (or did not start)."""

    def __init__(self, once: bool):
        self.once = once
        self.read_end, self._write_end = os.pipe()
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        """The writer of the pipe's write end (non-blocking, flow-controlled: a process that reads
        nothing makes the writers wait, not the event loop)."""
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                            os.fdopen(self._write_end, "wb", 0))
        self.writer = asyncio.StreamWriter(transport, protocol, None, loop)

    def started(self) -> None:
        """The process has its copy of the read end: the runner's goes."""
        if self.read_end >= 0:
            os.close(self.read_end)
            self.read_end = -1

    @property
    def closed(self) -> bool:
        return self.writer is None or self.writer.is_closing()

    def close(self) -> None:
        """The process reads end of file (once what was written before is read)."""
        self.started()
        if self.writer is not None:
            self.writer.close()
        elif self._write_end >= 0:
            os.close(self._write_end)
        self._write_end = -1


class Attachment:
    """One client attached to one run of a container (see the module's docstring)."""

    def __init__(self, log: BinaryIO, stdin: ContainerStdin | None, output: int | None,
                 on_end: Callable[[Attachment], None]):
        """`log`: the container's log, open at the offset to follow from; `stdin`: the container's, if
        the client attaches its stdin and the container has one; `output`: the stream id the log goes
        out as (None: the client asked for no output); `on_end`: called once, when the attachment ends."""
        self._log: BinaryIO | None = log
        self._stdin = stdin
        self.stdin = stdin.writer if stdin is not None and not stdin.closed else None
        self.outputs: list[tuple[int, Attachment]] = [(output, self)] if output is not None else []
        self._on_end = on_end
        self._ended = asyncio.Event()
        self._container_ended = False

    async def read(self, n: int = -1) -> bytes:
        """The next bytes (at most `n`; -1: READ_SIZE) the container writes; b"" once it has ended (after
        what it wrote) or the client detached."""
        while self._log is not None:
            data = self._log.read(n if n >= 0 else READ_SIZE)
            if data or self._container_ended:
                if not data:
                    self._close_log()
                return data
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ended.wait(), FOLLOW_INTERVAL)
        return b""

    def container_ended(self) -> None:
        """The run's process ended (the runner says so): the rest of its output, then the end."""
        self._container_ended = True
        self._end()

    async def wait(self) -> int:
        """Until the container's run ends or the client detaches (an attach has no exit code: 0)."""
        await self._ended.wait()
        return 0

    def resize(self, width: int, height: int) -> None:
        """Nothing: a container here has no terminal."""

    def end_stdin(self) -> None:
        """The client's stdin ended: with `stdinOnce`, the container's stdin closes; otherwise the
        client is detached. Nothing for a container without stdin."""
        if self._stdin is None:
            return
        if self._stdin.once:
            self._stdin.close()
        else:
            self.kill()

    def kill(self) -> None:
        """Detach the client (the session is over or the client went away): the container runs on;
        with `stdinOnce`, its stdin, attached by this client, closes."""
        if self._stdin is not None and self._stdin.once:
            self._stdin.close()
        self._close_log()
        self._end()

    def _end(self) -> None:
        if not self._ended.is_set():
            self._ended.set()
            self._on_end(self)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
