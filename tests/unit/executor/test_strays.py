"""executor/strays.py against real processes: a process is killed only when its environment carries one of the
owners asked for, in VCLITE_OWNER itself.

The uids are this test run's own (`U1` is `U1-<random>`): a sweep kills every process of the host marked with an
owner it is given, so a fixed uid would kill the marked processes of the same test run at the same time elsewhere
(another checkout's test session) — and make it fail."""
import asyncio
import ctypes
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tests.unit.executor.test_recovery import _alive
from vclite.executor import strays

pytestmark = pytest.mark.skipif(not strays.supported(), reason="needs /proc and pidfds (Linux 5.3+)")
RUN = uuid.uuid4().hex[:12]


def uids(text: str) -> str:
    """`text` with its pod uids U1, U2, U3 made this test run's own."""
    return re.sub(r"U([123])\b", lambda m: f"U{m[1]}-{RUN}", text)


def _exec_done(pid: int) -> None:
    """Wait until the process's environment can be read: Popen returns once the exec cannot fail any more, but the
    kernel sets where the new environment is a moment later (/proc/<pid>/environ reads empty until then)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            if fh.read(1):
                return
        time.sleep(0.001)


@pytest.mark.parametrize("extra_env, killed", [
    pytest.param({"VCLITE_OWNER": "U1/main/0"}, True, id="its owner"),
    pytest.param({"VCLITE_OWNER": "outer/c/0:U1/main/0"}, True, id="its owner behind an inherited one"),
    pytest.param({"VCLITE_OWNER": "U1/main/0:inner/c/0"}, True, id="its owner before a nested run's"),
    pytest.param({"VCLITE_OWNER": "U3/x/2"}, True, id="any run of a pod asked for whole"),
    pytest.param({"VCLITE_OWNER": "U1/main/1"}, False, id="the container's next run"),
    pytest.param({"VCLITE_OWNER": "U1/other/0"}, False, id="another container of the pod"),
    pytest.param({"VCLITE_OWNER": "U2/main/0"}, False, id="another pod"),
    pytest.param({"VCLITE_OWNER": "U1/main/01"}, False, id="an owner the asked one begins"),
    pytest.param({"VCLITE_OWNER": "XU1/main/0"}, False, id="an owner ending like the asked one"),
    pytest.param({"VCLITE_OWNER": "U1"}, False, id="the uid of a pod asked for one run"),
    pytest.param({"XVCLITE_OWNER": "U1/main/0"}, False, id="another variable ending with the name"),
    pytest.param({"NOTE": "VCLITE_OWNER=U1/main/0"}, False, id="the mark in another variable's value"),
    pytest.param({}, False, id="no mark"),
])
def test_kill_marked_kills_only_the_processes_of_the_owners_asked(extra_env, killed):
    env = {k: v for k, v in os.environ.items() if k != strays.MARK}
    extra_env = {k: uids(v) for k, v in extra_env.items()}
    proc = subprocess.Popen(["sleep", "30"], env={**env, **extra_env}, start_new_session=True)
    try:
        _exec_done(proc.pid)
        fds = strays.kill_marked({uids("U1/main/0"), uids("U3")}).fds
        try:
            assert len(fds) == int(killed)
        finally:
            strays.close(fds)
        if killed:
            assert proc.wait(timeout=10) == -9
        else:
            assert proc.poll() is None and _alive(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def test_kill_marked_with_no_owner_looks_at_nothing():
    assert strays.kill_marked(set()) == strays.Scan()


@pytest.mark.parametrize("inherited, expected", [
    pytest.param(None, "U1/main/2", id="vclite not in a pod"),
    pytest.param("", "U1/main/2", id="an empty mark"),
    pytest.param("outer/c/0", "outer/c/0:U1/main/2", id="vclite in another vclite's pod"),
])
def test_mark(inherited, expected):
    assert strays.mark(inherited, strays.owner("U1", "main", 2)) == expected


@pytest.mark.parametrize("other, same", [
    pytest.param("/srv/vclite/pods/default/train", True, id="the same pod directory"),
    pytest.param("/srv/vclite/pods/../pods/default/train", True, id="the same directory written otherwise"),
    pytest.param("/srv/copy/pods/default/train", False, id="another vclite's work directory"),
    pytest.param("/srv/vclite/pods/default/eval", False, id="another pod directory"),
])
def test_pod_owner_is_the_uid_and_the_pod_directory(other, same):
    mine = strays.pod_owner("U1", "/srv/vclite/pods/default/train")
    assert mine.startswith("U1@") and "/" not in mine and ":" not in mine
    assert (strays.pod_owner("U1", other) == mine) == same


def _sleepers(owners):
    env = {k: v for k, v in os.environ.items() if k != strays.MARK}
    procs = [subprocess.Popen(["sleep", "30"], env={**env, strays.MARK: o}, start_new_session=True) for o in owners]
    for proc in procs:
        _exec_done(proc.pid)
    return procs


def test_sweeps_asked_together_are_one_scan_of_proc(monkeypatch):
    """(40 pods stopped at once: before, 40 scans of every process of the host, one after the other)"""
    owners = [uids(f"U1/main/{run}") for run in range(12)]
    procs = _sleepers(owners)
    scans = []
    real = strays.kill_marked
    monkeypatch.setattr(strays, "kill_marked", lambda asked: scans.append(set(asked)) or real(asked))

    async def stop_all():
        await asyncio.gather(*(strays.sweep({o}, 10) for o in owners))
    try:
        asyncio.run(stop_all())
        assert [p.wait(timeout=10) for p in procs] == [-9] * len(procs)
        assert scans[0] == set(owners) and len(scans) <= strays.SWEEP_ROUNDS, scans
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_a_sweep_asked_while_another_runs_kills_its_processes_too():
    first, second = uids("U1/main/0"), uids("U2/main/0")
    procs = _sleepers([first, second])

    async def one_then_another():
        running = asyncio.ensure_future(strays.sweep({first}, 10))
        await asyncio.sleep(0)   # (the first has scanned: the second is a sweep of its own)
        await asyncio.gather(running, strays.sweep({second}, 10))
    try:
        asyncio.run(one_then_another())
        assert [p.wait(timeout=10) for p in procs] == [-9, -9]
    finally:
        for p in procs:
            p.kill()
            p.wait()


# ---- a process caught in its exec (its environment reads empty for a moment) ------------------------------------
ENV, SLEEP = shutil.which("env"), shutil.which("sleep")
# A session member that starts a program with an empty environment (its pid on stdout), then sleeps.
LEADER = ("import subprocess, sys, time\n"
          "child = subprocess.Popen([sys.argv[1], '60'], env={})\n"
          "print(child.pid, flush=True); time.sleep(60)")


def _started(pid: int) -> None:
    """Wait until a process runs its program (its command line is set with its environment, at the exec's end)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if fh.read(1):
                return
        time.sleep(0.001)


def _held_in_exec(mark: str) -> subprocess.Popen:
    """A process whose environment reads empty, as one caught in its exec does, until the test writes a line to it:
    then it execs into a sleeper carrying `mark` (its pid stays the same)."""
    script = f"read line; exec {ENV} {strays.MARK}={mark} {SLEEP} 60"
    proc = subprocess.Popen(["/bin/sh", "-c", script], env={}, stdin=subprocess.PIPE, start_new_session=True)
    _started(proc.pid)
    assert strays._environ(str(proc.pid)) == b""
    return proc


def _releasing(monkeypatch, proc, mark):
    """kill_marked, letting `proc` finish its exec into the marked sleeper right after the first scan for `mark`."""
    real, scans = strays.kill_marked, []

    def scan(asked):
        found = real(asked)
        if mark not in asked:   # (an executor's sweep at its start, of nothing)
            return found
        scans.append(found)
        if len(scans) == 1:
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
            deadline = time.monotonic() + 10
            while strays._owners_of(str(proc.pid)) != [mark] and time.monotonic() < deadline:
                time.sleep(0.001)
        return found
    monkeypatch.setattr(strays, "kill_marked", scan)
    return scans


@pytest.mark.parametrize("how", ["sweep", "sweep_now"])
def test_a_process_caught_in_its_exec_is_looked_at_again_and_killed(monkeypatch, how):
    """(before: the first scan found nothing, so there was no second; the process, its exec over, lived on)"""
    mark = uids("U1/main/0")
    proc = _held_in_exec(mark)
    scans = _releasing(monkeypatch, proc, mark)
    try:
        if how == "sweep":
            asyncio.run(strays.sweep({mark}, 10))
        else:
            strays.sweep_now({mark}, 10)
        assert proc.wait(timeout=10) == -9
        assert scans[0].unsure and not scans[0].killed and len(scans[1].killed) == 1
    finally:
        proc.kill()
        proc.wait()


def test_a_look_again_is_once_a_sweep(monkeypatch):
    """A process whose environment stays empty (a program started with none): one more scan, not one a round."""
    proc = _held_in_exec("unused")
    real, scans = strays.kill_marked, []
    monkeypatch.setattr(strays, "kill_marked", lambda asked: scans.append(real(asked)) or scans[-1])
    try:
        asyncio.run(strays.sweep({uids("U1/main/0")}, 10))
        strays.sweep_now({uids("U1/main/0")}, 10)
        assert [s.unsure for s in scans] == [True, True, True, True]   # (its first scan and the look again: twice)
        assert proc.poll() is None and _alive(proc.pid)   # (nothing is killed on an empty environment)
    finally:
        proc.kill()
        proc.wait()


def _zombie():
    proc = subprocess.Popen(["true"])
    while open(f"/proc/{proc.pid}/stat").read().rpartition(")")[2].split()[0] != "Z":
        time.sleep(0.001)
    return proc


@pytest.mark.parametrize("case, expected", [
    pytest.param("leader", True, id="a session's leader (a setsid)"),
    pytest.param("member", False, id="another program's child in another program's session"),
    pytest.param("member of an owner's", True, id="the child of a process of the owner, in its session"),
    pytest.param("member of another owner's", False, id="the child of another owner's process"),
    pytest.param("zombie", False, id="a zombie"),
    pytest.param("kernel thread", False, id="a kernel thread"),
])
def test_which_empty_environment_may_be_a_process_caught_in_its_exec(case, expected):
    owner = uids("U1/main/0")
    procs = []
    try:
        if case == "leader":
            procs.append(_held_in_exec("unused"))
            pid = procs[0].pid
        elif case.startswith("member"):
            env = {k: v for k, v in os.environ.items() if k != strays.MARK}
            if case != "member":
                env[strays.MARK] = owner if case == "member of an owner's" else uids("U2/main/0")
            procs.append(subprocess.Popen([sys.executable, "-c", LEADER, SLEEP], env=env, stdout=subprocess.PIPE,
                                          start_new_session=True))
            pid = int(procs[0].stdout.readline())
            _started(pid)
            assert strays._environ(str(pid)) == b""
        elif case == "zombie":
            procs.append(_zombie())
            pid = procs[0].pid
        else:
            pid = 2
            with open("/proc/2/stat") as fh:
                if "(kthreadd)" not in fh.read():
                    pytest.skip("no kernel thread in this PID namespace")
        assert strays.maybe_mid_exec(str(pid), {owner}) is expected
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


# ---- each sweep waits for its own processes ----------------------------------------------------------------------
_PTRACE_SEIZE, _PTRACE_CONT, _PTRACE_O_TRACEEXIT = 0x4206, 7, 0x40


def _ptrace(request: int, pid: int, data: int = 0) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(request, pid, None, ctypes.c_void_p(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def test_a_sweep_does_not_wait_for_another_owners_process_slow_to_exit():
    """Two pods' sweeps in one scan; one pod's process, once killed, is held in its exit (this test traces it, and
    a tracee stops on its way out until let go): the other pod's sweep ends without it.
    (before: each sweep of a batch waited until every process the batch killed had exited, up to 10 s)"""
    slow, quick = uids("U1/main/0"), uids("U2/main/0")
    procs = _sleepers([slow, quick])
    try:
        _ptrace(_PTRACE_SEIZE, procs[0].pid, _PTRACE_O_TRACEEXIT)
    except OSError as e:
        for p in procs:
            p.kill()
            p.wait()
        pytest.skip(f"cannot trace a child here: {e}")
    held = os.pidfd_open(procs[0].pid)
    seen = {}

    async def both():
        sweeps = {asyncio.ensure_future(strays.sweep({o}, 10)): o for o in (slow, quick)}
        done, _ = await asyncio.wait(sweeps, return_when=asyncio.FIRST_COMPLETED)
        seen["first done"] = sorted(sweeps[d] for d in done)
        seen["slow one exited then"] = strays.exited(held)
        _ptrace(_PTRACE_CONT, procs[0].pid)   # (let it go: it exits)
        await asyncio.gather(*sweeps)
    try:
        asyncio.run(both())
        assert seen == {"first done": [quick], "slow one exited then": False}
        assert [p.wait(timeout=10) for p in procs] == [-9, -9]
    finally:
        os.close(held)
        for p in procs:
            p.kill()
            p.wait()


@pytest.mark.parametrize("killed, askers, expected", [
    pytest.param([{"A/c/0"}, {"B/c/0"}], [{"A/c/0"}, {"B/c/0"}], [[0], [1]], id="each its own"),
    pytest.param([{"A/c/0"}], [{"A/c/0"}, {"B/c/0"}], [[0], []], id="one with none"),
    pytest.param([{"A/c/0", "A"}], [{"A/c/0"}, {"A"}], [[0], [0]], id="one process of two askers"),
    pytest.param([{"A/c/0"}, {"A/c/0"}, {"B/c/1"}], [{"A/c/0", "B/c/1"}], [[0, 1, 2]], id="an asker of two owners"),
])
def test_shares_of_a_scan(killed, askers, expected):
    assert strays.shares([frozenset(k) for k in killed], askers) == expected
