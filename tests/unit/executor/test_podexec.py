"""podexec.start against real processes: pipes or a pseudo-terminal, the given environment and working
directory, exit codes as a container reports them, commands that do not start, and kill."""
import asyncio
import os
import signal
import time

import pytest

from vclite.executor import podexec

ENV = {b"PATH": os.environ["PATH"].encode(), b"MY_ENV": b"from-the-container"}


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


async def drain(session):
    out = {}
    for sid, reader in session.outputs:
        data = b""
        while chunk := await podexec.read(reader):
            data += chunk
        out[sid] = data
    return out, await session.wait()


@pytest.mark.parametrize("script, stdin, outputs, code", [
    pytest.param("echo out; echo err >&2; echo $MY_ENV; pwd", None,
                 {podexec.STDOUT: b"out\nfrom-the-container\n<cwd>\n", podexec.STDERR: b"err\n"}, 0, id="env-and-cwd"),
    pytest.param("cat; exit 4", b"typed\n", {podexec.STDOUT: b"typed\n", podexec.STDERR: b""}, 4, id="stdin-exit-code"),
    pytest.param("kill -KILL $$", None, {podexec.STDOUT: b"", podexec.STDERR: b""}, 128 + signal.SIGKILL,
                 id="signal-is-128-plus"),
])
def test_a_command_over_pipes(tmp_path, script, stdin, outputs, code):
    async def go():
        s = await podexec.start(["sh", "-c", script], cwd=tmp_path, env=ENV, stdin=stdin is not None, stdout=True,
                                stderr=True, tty=False)
        if stdin is not None:
            s.stdin.write(stdin)
            s.stdin.close()
        return await drain(s)
    got, rc = run(go())
    want = {sid: data.replace(b"<cwd>", str(tmp_path).encode()) for sid, data in outputs.items()}
    assert (got, rc) == (want, code)


def test_only_the_streams_asked_for(tmp_path):
    async def go():
        s = await podexec.start(["sh", "-c", "echo out; echo err >&2"], cwd=tmp_path, env=ENV, stdin=False,
                                stdout=True, stderr=False, tty=False)
        assert s.stdin is None
        return await drain(s)
    assert run(go()) == ({podexec.STDOUT: b"out\n"}, 0)


def test_a_terminal_is_the_controlling_terminal_and_takes_resizes(tmp_path):
    async def go():
        s = await podexec.start(["sh", "-c", "read line; tty; stty size; echo $line"], cwd=tmp_path, env=ENV,
                                stdin=True, stdout=True, stderr=True, tty=True)
        assert [sid for sid, _ in s.outputs] == [podexec.STDOUT]   # (one stream: a terminal merges them)
        s.resize(101, 33)
        s.stdin.write(b"hello\n")
        return await drain(s)
    got, rc = run(go())
    lines = got[podexec.STDOUT].replace(b"\r\n", b"\n").splitlines()
    assert rc == 0 and lines[0] == b"hello" and lines[1].startswith(b"/dev/pts/") and lines[2:] == [b"33 101",
                                                                                                      b"hello"]


@pytest.mark.parametrize("argv, words", [
    pytest.param(["no-such-command-here"], 'exec: "no-such-command-here": executable file not found in $PATH',
                 id="not-found"),
    pytest.param([], "you must specify at least one command", id="no-command"),
])
@pytest.mark.parametrize("tty", [False, True])
def test_a_command_that_cannot_start(tmp_path, argv, words, tty):
    with pytest.raises(podexec.ExecError, match=words.replace("$", r"\$")):
        run(podexec.start(argv, cwd=tmp_path, env=ENV, stdin=True, stdout=True, stderr=True, tty=tty))


def test_kill_ends_the_command_and_what_it_started(tmp_path):
    async def go():
        s = await podexec.start(["sh", "-c", "sleep 60 & echo $!; wait"], cwd=tmp_path, env=ENV, stdin=False,
                                stdout=True, stderr=False, tty=False)
        child = int((await s.outputs[0][1].readline()).decode())
        s.kill()
        return child, await drain(s)
    child, (_, rc) = run(go())
    assert rc == 128 + signal.SIGKILL and not alive(child)


def alive(pid, settle=10.0):
    """Running (not gone, not a zombie its new parent has yet to reap), after up to `settle` seconds
    for a process sent SIGKILL to finish exiting."""
    deadline = time.monotonic() + settle
    while True:
        try:
            stat = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
        except FileNotFoundError:
            return False
        if stat[0] in ("Z", "X") or (stat[20] == "0" and stat[0] != "S"):   # (exited, or exiting: no memory left)
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.01)
