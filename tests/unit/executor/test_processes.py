"""processes.start against real processes, through each way of awaiting an exit: a pidfd, a waiting
thread (pidfds found missing after the fork), asyncio's subprocess (pidfds known missing)."""
import asyncio
import os
import signal

import pytest

from vclite.executor import processes


@pytest.fixture(params=["pidfd", "thread", "asyncio"])
def mode(request, monkeypatch):
    """Which way the exit is awaited. Without pidfd_open (another kernel or system), the module
    must fall back: the kernel feature is switched off, the processes stay real."""
    if request.param == "pidfd" and not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd_open on this system")
    if request.param != "pidfd":
        def no_pidfd(pid):
            raise OSError(38, "Function not implemented")
        monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    monkeypatch.setattr(processes, "_PIDFD_WORKS", False if request.param == "asyncio" else None)
    return request.param


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("script, code", [
    pytest.param("exit 0", 0, id="success"),
    pytest.param("exit 3", 3, id="failure"),
    pytest.param("kill -TERM $$", -signal.SIGTERM, id="signal-is-negative"),
])
def test_exit_codes(tmp_path, mode, script, code):
    async def go():
        with open(tmp_path / "log", "ab") as log:
            child = await processes.start(["sh", "-c", script], cwd=tmp_path, env=dict(os.environ), log=log)
        assert child.returncode is None or mode == "thread"   # the thread may have reaped it already
        got = await child.wait()
        return got, child.returncode
    assert run(go()) == (code, code)


def test_output_env_and_cwd(tmp_path, mode):
    async def go():
        with open(tmp_path / "log", "ab") as log:
            child = await processes.start(["sh", "-c", 'echo "$GREETING from $(pwd)"; echo err >&2'],
                                          cwd=tmp_path, env={**os.environ, "GREETING": "hi"}, log=log)
        return await child.wait()
    assert run(go()) == 0
    assert (tmp_path / "log").read_text() == f"hi from {tmp_path}\nerr\n"


def test_own_session_so_the_group_can_be_killed(tmp_path, mode):
    async def go():
        with open(tmp_path / "log", "ab") as log:
            child = await processes.start(["sleep", "30"], cwd=tmp_path, env=dict(os.environ), log=log)
        assert os.getsid(child.pid) == child.pid
        os.killpg(child.pid, signal.SIGKILL)
        return await child.wait()
    assert run(go()) == -signal.SIGKILL


def test_missing_program_raises(tmp_path, mode):
    async def go():
        with open(tmp_path / "log", "ab") as log:
            await processes.start(["/no/such/program"], cwd=tmp_path, env=dict(os.environ), log=log)
    with pytest.raises(FileNotFoundError):
        run(go())


def test_a_cancelled_waiter_leaves_the_others_waiting(tmp_path, mode):
    async def go():
        with open(tmp_path / "log", "ab") as log:
            child = await processes.start(["sh", "-c", "sleep 0.2; exit 7"], cwd=tmp_path,
                                          env=dict(os.environ), log=log)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(child.wait(), timeout=0.01)
        return await asyncio.gather(child.wait(), child.wait())
    assert run(go()) == [7, 7]
