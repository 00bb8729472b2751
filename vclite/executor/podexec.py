"""`kubectl exec` for the local executor: a command run beside a running container, in its context.

A container here is host processes (runner.py), so a command exec'd "in" it is a host process
started with the container's environment (its `env`, `$VC_POD_DIR`, `$TERMINATION_MESSAGE_PATH`),
its working directory, in a session of its own, with pipes — or, for `-t`, a pseudo-terminal that
is its controlling terminal (job control works; resizes reach it). As a container runtime does,
the runner kills what was exec'd in a container when the container's process ends.

`start` returns a `Session`: `stdin` (a StreamWriter, or None), `outputs` ([(stream id, reader)]:
stdout and stderr, or the terminal's one stream), `wait()`, `resize()`, `end_stdin()`, `kill()`.
Must not: know HTTP or the streaming protocol (httpserver/execstream.py speaks it).
"""
from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import signal
import struct
import termios
from typing import Mapping

STDOUT, STDERR = 1, 2   # the stream ids of channel.k8s.io, which the outputs are tagged with
READ_SIZE = 32 * 1024


class ExecError(Exception):
    """The command could not be started (the message says why, as a container runtime would)."""


class Session:
    def __init__(self, proc: asyncio.subprocess.Process, stdin: asyncio.StreamWriter | None,
                 outputs: list[tuple[int, asyncio.StreamReader]], terminal: int | None):
        self.proc, self.stdin, self.outputs, self._terminal = proc, stdin, outputs, terminal

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def wait(self) -> int:
        """The exit code; 128 + N for a process a signal N ended, as a container's shell reports it."""
        rc = await self.proc.wait()
        if self._terminal is not None:
            os.close(self._terminal)
            self._terminal = None
        return rc if rc >= 0 else 128 - rc

    def resize(self, width: int, height: int) -> None:
        """Set the terminal's size (the process gets SIGWINCH); nothing without a terminal."""
        if self._terminal is not None:
            fcntl.ioctl(self._terminal, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

    def end_stdin(self) -> None:
        """The client's stdin ended: so does the command's."""
        if self.stdin is not None:
            self.stdin.close()

    def kill(self) -> None:
        """SIGKILL the command, if it still runs, and everything it started (its session's process group)."""
        if self.proc.returncode is None:
            self.kill_left_behind()

    def kill_left_behind(self) -> None:
        """SIGKILL what is left of its process group, even once the command has ended (what it started
        in the background lives on, as in a container, until the container ends)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def read(reader: asyncio.StreamReader) -> bytes:
    """The next bytes of an output, b"" at its end (a terminal whose last writer closed reports EIO)."""
    try:
        return await reader.read(READ_SIZE)
    except OSError as e:
        if e.errno == errno.EIO:
            return b""
        raise


def _controlling_terminal() -> None:   # (in the child, after setsid: its stdin, the terminal, becomes its own)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


async def start(argv: list[str], *, cwd: str | os.PathLike, env: Mapping[bytes, bytes], stdin: bool,
                stdout: bool, stderr: bool, tty: bool) -> Session:
    """Start `argv` (looked up in `env`'s PATH); raises ExecError if it cannot start."""
    if not argv:
        raise ExecError("you must specify at least one command for the container")
    try:
        if tty:
            return await _start_on_terminal(argv, cwd, env, stdin)
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if stdout else asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE if stderr else asyncio.subprocess.DEVNULL)
    except OSError as e:
        raise ExecError(start_error(argv[0], e)) from None
    outputs = [(sid, r) for sid, r in ((STDOUT, proc.stdout), (STDERR, proc.stderr)) if r is not None]
    return Session(proc, proc.stdin, outputs, None)


async def _start_on_terminal(argv: list[str], cwd: str | os.PathLike, env: Mapping[bytes, bytes],
                             stdin: bool) -> Session:
    """One pseudo-terminal for stdin, stdout and stderr (a terminal merges them, as on Kubernetes)."""
    master, slave = os.openpty()
    try:
        proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                                                    start_new_session=True, preexec_fn=_controlling_terminal)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_SIZE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(master), "rb", 0))
    writer = None
    if stdin:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                            os.fdopen(os.dup(master), "wb", 0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return Session(proc, writer, [(STDOUT, reader)], master)


def start_error(command: str, e: OSError) -> str:
    """The kubelet's words (an internal error, around the runtime's) for a command that does not start."""
    if e.errno == errno.ENOENT:
        why = "executable file not found in $PATH"
    elif e.errno == errno.EACCES:
        why = "permission denied"
    else:
        why = e.strerror or str(e)
    return f'Internal error occurred: error executing command in container: exec: "{command}": {why}'
