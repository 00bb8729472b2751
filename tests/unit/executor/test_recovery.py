"""Recovering pods whose processes died with the previous vclite process: pure decisions, then a real
executor process killed with SIGKILL and a new executor on the same store and work directory."""
import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from vclite.api import core, kinds
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.executor import recovery, strays
from vclite.lib import clock as clock_mod
from vclite.store import sqlite

T0, NOW = "2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z"


def running(name, pid=42):
    return {"name": name, "state": {"running": {"startedAt": T0}}, "lastState": {}, "restartCount": 0,
            "containerID": f"vclite://{pid}"}


def terminated(name, code):
    return {"name": name, "state": {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                                   "startedAt": T0, "finishedAt": T0}}, "lastState": {},
            "restartCount": 0}


def waiting(name, reason="ContainerCreating", last_code=None):
    cs = {"name": name, "state": {"waiting": {"reason": reason}}, "lastState": {}, "restartCount": 0}
    if last_code is not None:
        cs["lastState"] = {"terminated": {"exitCode": last_code, "reason": "Error", "startedAt": T0, "finishedAt": T0}}
        cs["restartCount"] = 1
    return cs


def pod(main, init=(), statuses=(), init_statuses=(), start_time=T0):
    status = {"phase": "Running", "containerStatuses": list(statuses)}
    if start_time:
        status["startTime"] = start_time
    if init_statuses:
        status["initContainerStatuses"] = list(init_statuses)
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"initContainers": [{"name": n} for n in init], "containers": [{"name": n} for n in main]},
            "status": status}


def summary(states):
    out = []
    for st in states:
        s = st.to_status()["state"]
        (kind, detail), = s.items()
        out.append((st.name, kind, detail.get("exitCode"), detail.get("reason")))
    return out


@pytest.mark.parametrize("the_pod, phase, init, main", [
    pytest.param(pod(["a"], statuses=[running("a")]), core.PodPhase.FAILED, [],
                 [("a", "terminated", 137, "ProcessLost")], id="running-is-lost"),
    pytest.param(pod(["a", "b"], statuses=[terminated("a", 0), running("b")]), core.PodPhase.FAILED, [],
                 [("a", "terminated", 0, "Completed"), ("b", "terminated", 137, "ProcessLost")], id="one-done-one-lost"),
    pytest.param(pod(["a", "b"], statuses=[terminated("a", 0), terminated("b", 0)]), core.PodPhase.SUCCEEDED, [],
                 [("a", "terminated", 0, "Completed"), ("b", "terminated", 0, "Completed")],
                 id="all-done-before-the-crash-succeeds"),
    pytest.param(pod(["a"], init=["i"], init_statuses=[running("i")], statuses=[waiting("a", "PodInitializing")]),
                 core.PodPhase.FAILED, [("i", "terminated", 137, "ProcessLost")],
                 [("a", "waiting", None, "PodInitializing")], id="init-lost-app-never-started"),
    pytest.param(pod(["a"], statuses=[waiting("a", "CrashLoopBackOff", last_code=3)]), core.PodPhase.FAILED, [],
                 [("a", "terminated", 3, "Error")], id="backing-off-keeps-its-last-exit"),
    pytest.param(pod(["a"], statuses=[]), core.PodPhase.FAILED, [], [("a", "waiting", None, "ContainerCreating")],
                 id="no-container-status"),
    pytest.param(pod(["a", "b"], statuses=[], start_time=None), core.PodPhase.FAILED, [],
                 [("a", "terminated", 137, "ProcessLost"), ("b", "terminated", 137, "ProcessLost")],
                 id="started-by-its-mark-status-never-written"),
    pytest.param(pod(["a"], init=["i", "j"], statuses=[], start_time=None), core.PodPhase.FAILED,
                 [("i", "terminated", 137, "ProcessLost"), ("j", "waiting", None, "ContainerCreating")],
                 [("a", "waiting", None, "ContainerCreating")], id="started-by-its-mark-first-init-container"),
])
def test_lost_states_and_phase(the_pod, phase, init, main):
    i, m = recovery.lost_states(the_pod, NOW)
    assert (summary(i), summary(m)) == (init, main)
    assert recovery.lost_phase(i, m) == phase
    lost = [st.to_status()["state"]["terminated"] for st in i + m
            if st.to_status()["state"].get("terminated", {}).get("reason") == "ProcessLost"]
    for term in lost:
        assert term["message"] == recovery.CONTAINER_MESSAGE and term["finishedAt"] == NOW
        assert term["startedAt"] == (T0 if the_pod["status"].get("startTime") else NOW)
        assert term["containerID"] == ("vclite://42" if the_pod["status"].get("startTime") else "vclite://0")


ENDED_AT = "2026-01-01T00:05:00Z"


def policy(the_pod, restart_policy):
    return {**the_pod, "spec": {**the_pod["spec"], "restartPolicy": restart_policy}}


@pytest.mark.parametrize("the_pod, ended, phase, lost, init, main", [
    pytest.param(pod(["a"], statuses=[running("a")]), {("a", 0): (0, ENDED_AT, "sent")}, core.PodPhase.SUCCEEDED,
                 False, [], [("a", "terminated", 0, "Completed")], id="ended-by-itself-succeeds"),
    pytest.param(pod(["a"], statuses=[running("a")]), {("a", 0): (3, ENDED_AT, "")}, core.PodPhase.FAILED, False,
                 [], [("a", "terminated", 3, "Error")], id="ended-by-itself-with-an-error"),
    pytest.param(pod(["a", "b"], statuses=[running("a"), running("b")]), {("a", 0): (0, ENDED_AT, "")},
                 core.PodPhase.FAILED, True, [], [("a", "terminated", 0, "Completed"),
                                                  ("b", "terminated", 137, "ProcessLost")], id="one-ended-one-lost"),
    pytest.param(pod(["a"], statuses=[running("a")]), {("a", 1): (0, ENDED_AT, "")}, core.PodPhase.FAILED, True,
                 [], [("a", "terminated", 137, "ProcessLost")], id="another-runs-record-is-not-this-one"),
    pytest.param(policy(pod(["a"], statuses=[running("a")]), "OnFailure"), {("a", 0): (3, ENDED_AT, "")},
                 core.PodPhase.FAILED, True, [], [("a", "terminated", 137, "ProcessLost")],
                 id="an-exit-the-kubelet-restarts-lost-the-next-run"),
    pytest.param(policy(pod(["a"], statuses=[running("a")]), "OnFailure"), {("a", 0): (0, ENDED_AT, "")},
                 core.PodPhase.SUCCEEDED, False, [], [("a", "terminated", 0, "Completed")], id="on-failure-exit-0"),
    pytest.param(pod(["a"], init=["i"], init_statuses=[running("i")], statuses=[waiting("a", "PodInitializing")]),
                 {("i", 0): (0, ENDED_AT, "")}, core.PodPhase.FAILED, True, [("i", "terminated", 0, "Completed")],
                 [("a", "waiting", None, "PodInitializing")], id="init-ended-app-never-started-is-lost"),
    pytest.param(pod(["a"], statuses=[], start_time=None), {("a", 0): (0, ENDED_AT, "")}, core.PodPhase.SUCCEEDED,
                 False, [], [("a", "terminated", 0, "Completed")], id="status-never-written-ended-by-itself"),
])
def test_a_recorded_end_wins_over_process_lost(the_pod, ended, phase, lost, init, main):
    the_pod = policy(the_pod, the_pod["spec"].get("restartPolicy", "Never"))
    i, m = recovery.lost_states(the_pod, NOW, lambda c, run: ended.get((c, run)))
    assert (summary(i), summary(m)) == (init, main)
    assert recovery.lost_phase(i, m) == phase and recovery.processes_lost(i, m) == lost
    for st in i + m:
        term = st.to_status()["state"].get("terminated") or {}
        if term.get("reason") in ("Completed", "Error"):
            # (never before its start: one the status never showed started "now", as a lost one)
            assert term["finishedAt"] == (ENDED_AT if the_pod["status"].get("startTime") else NOW)
            assert term.get("message", "") == ended[(st.name, 0)][2]


@pytest.mark.parametrize("the_pod, started", [
    pytest.param(pod(["a"], statuses=[running("a")]), True, id="running"),
    pytest.param(pod(["a"], statuses=[waiting("a")], start_time=None), False, id="creating"),
    pytest.param(pod(["a"], statuses=[waiting("a", "CrashLoopBackOff", 1)], start_time=None), True, id="backoff"),
    pytest.param(pod(["a"], statuses=[waiting("a")]), True, id="start-time-set"),
    pytest.param({"metadata": {"name": "p"}, "spec": {}}, False, id="no-status"),
])
def test_was_started(the_pod, started):
    assert recovery.was_started(the_pod) is started


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def test_left_behind_finds_orphaned_session_leaders_but_never_our_own_children(tmp_path):
    pod_dir = tmp_path / "default" / "p"
    env = {**os.environ, "VC_POD_DIR": str(pod_dir)}
    spawn = ("import subprocess; p = subprocess.Popen(['sleep', '30'], start_new_session=True, "
             "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid, flush=True)")
    orphan = int(subprocess.run([sys.executable, "-c", spawn], env=env, capture_output=True, text=True).stdout)
    child = subprocess.Popen(["sleep", "30"], env=env, start_new_session=True)
    other = subprocess.Popen(["sleep", "30"], env={**env, "VC_POD_DIR": "/elsewhere/default/p"},
                             start_new_session=True)
    try:
        found = recovery.left_behind(tmp_path)
        assert found == {str(pod_dir): [orphan]}
        recovery.kill_group(orphan)
        for _ in range(200):
            if not _alive(orphan):
                break
            time.sleep(0.01)
        assert not _alive(orphan)
        assert child.poll() is None and other.poll() is None
    finally:
        for p in (child, other):
            p.kill()
            p.wait()
        recovery.kill_group(orphan)


CHILD = """
import asyncio, sys, pathlib
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.lib import clock as clock_mod
from vclite.store import sqlite

async def main(db, workdir):
    clk = clock_mod.RealClock()
    client = inprocess.new_client(clk, store=sqlite.SqliteStore(clk, db))
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "long", "namespace": "default"},
                   "spec": {"nodeName": "local", "restartPolicy": "Never",
                            "initContainers": [{"name": "init", "image": "busybox", "command": ["sleep", "60"]}],
                            "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}})
    ex = executor_mod.LocalExecutor(client, clk, ["local"], pathlib.Path(workdir), record_exits=True)
    ex.start()
    while True:
        while (key := ex.queue.get()) is not None:
            ex.sync(key)
        status = client.get(kinds.POD, "default", "long").get("status") or {}
        running = [cs for cs in status.get("initContainerStatuses") or [] if "running" in cs["state"]]
        if running:
            print(running[0]["containerID"].rpartition("/")[2], flush=True)
            await asyncio.sleep(3600)
        await asyncio.sleep(0.01)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def _drive(ex, until, limit=500):
    ex.start()
    for _ in range(limit):
        while (key := ex.queue.get()) is not None:
            ex.sync(key)
        if until():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


def test_a_pod_in_its_init_containers_when_its_executor_was_killed_fails_with_process_lost(tmp_path):
    """(a pod whose app containers run is taken over instead: test_adoption.py)"""
    db, workdir = tmp_path / "store.db", tmp_path / "pods"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(workdir)], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip().isdigit(), "the child never reported its running container"
        pid = int(line)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _alive(pid), "the container outlives its executor (own session)"
    clk = clock_mod.RealClock()
    store = sqlite.SqliteStore(clk, db)
    try:
        client = inprocess.new_client(clk, store=store)
        ex = executor_mod.LocalExecutor(client, clk, ["local"], workdir, record_exits=True)

        def phase():
            return (client.get(kinds.POD, "default", "long").get("status") or {}).get("phase")
        asyncio.run(_drive(ex, lambda: phase() == "Failed"))
        status = client.get(kinds.POD, "default", "long")["status"]
        term = status["initContainerStatuses"][0]["state"]["terminated"]
        assert (status["reason"], term["reason"], term["exitCode"]) == ("ProcessLost", "ProcessLost", 137)
        assert "restarted" in status["message"] and "restarted" in term["message"]
        for _ in range(200):
            if not _alive(pid):
                break
            time.sleep(0.01)
        assert not _alive(pid), "the left-behind process group was killed"
        assert ex.running_count() == 0
        reasons = [e["reason"] for e in client.list(kinds.EVENT)]
        assert "ProcessLost" in reasons
    finally:
        store.close()
        recovery.kill_group(pid)


def test_a_pod_started_but_killed_before_its_status_was_written_is_not_run_again(tmp_path):
    """The server died between starting a pod's process and writing its status: after the restart, the
    pod's start mark says it ran, so it is not run a second time; its process ended by itself meanwhile, and the
    exit journal says how (exits.py): the pod has that outcome, not ProcessLost."""
    db, workdir, count = tmp_path / "store.db", tmp_path / "pods", tmp_path / "count"
    from tests.unit.executor.test_adoption import QUICK_CHILD, pod_of
    once = pod_of([("main", f"echo ran >> {count}")])   # (named p)
    proc = subprocess.Popen([sys.executable, "-c", QUICK_CHILD, str(db), str(workdir), json.dumps(once)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    for _ in range(500):   # (the process itself finishes on its own, and its wrapper records how)
        if count.exists() and not recovery.left_behind(workdir):
            break
        time.sleep(0.01)
    clk = clock_mod.RealClock()
    store = sqlite.SqliteStore(clk, db)
    try:
        client = inprocess.new_client(clk, store=store)
        assert not recovery.was_started(client.get(kinds.POD, "default", "p")), "its status says nothing"
        ex = executor_mod.LocalExecutor(client, clk, ["local"], workdir, record_exits=True)

        def phase():
            return (client.get(kinds.POD, "default", "p").get("status") or {}).get("phase")
        asyncio.run(_drive(ex, lambda: phase() in ("Failed", "Succeeded")))
        status = client.get(kinds.POD, "default", "p")["status"]
        assert (status["phase"], status.get("reason")) == ("Succeeded", None)
        term = status["containerStatuses"][0]["state"]["terminated"]
        assert (term["reason"], term["exitCode"]) == ("Completed", 0)
        assert count.read_text() == "ran\n", "run once only"
    finally:
        store.close()


def _group_alive(pgid):
    """Whether a process of the group is alive (a zombie has let its memory and devices go)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] not in (b"Z", b"X") and int(fields[2]) == pgid:
                return True
    return False


def test_the_processes_a_previous_server_left_are_gone_when_the_executor_has_started(tmp_path):
    """(their GPUs are given again next: before, they were sent SIGKILL and the executor went on at once, while a
    process holding much memory — as a training holds a GPU's — was still exiting)"""
    workdir, ready = tmp_path / "pods", tmp_path / "ready"
    env = {**os.environ, "VC_POD_DIR": str(workdir / "default" / "long")}
    hold = (f"import time; b = bytearray(b'x') * (256 << 20); open({str(ready)!r}, 'w').close(); "
            "time.sleep(60)")
    spawn = (f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', {hold!r}], start_new_session=True, "
             "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid, flush=True)")
    leader = int(subprocess.run([sys.executable, "-c", spawn], env=env, capture_output=True, text=True).stdout)
    clk = clock_mod.RealClock()
    client = inprocess.new_client(clk)
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "long", "namespace": "default"},
                   "spec": {"nodeName": "local", "restartPolicy": "Never",
                            "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "60"]}]}})
    try:
        for _ in range(3000):   # (its memory taken: up to ~30 s on a loaded machine)
            if ready.exists():
                break
            time.sleep(0.01)
        assert _group_alive(leader)
        executor_mod.LocalExecutor(client, clk, ["local"], workdir, record_exits=True).start()
        assert not _group_alive(leader)
    finally:
        recovery.kill_group(leader)


def test_wait_gone_says_which_groups_outlived_it(tmp_path):
    alive = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert recovery.wait_gone({alive.pid}, timeout=0.05) == {alive.pid}
        alive.kill()
        alive.wait()
        assert recovery.wait_gone({alive.pid}, timeout=5) == set()
    finally:
        if alive.poll() is None:
            alive.kill()
            alive.wait()


DAEMON = ("import os, sys, time\n"
          "if os.fork(): os._exit(0)\n"
          "os.setsid()\n"
          "if os.fork(): os._exit(0)\n"
          "print(os.getpid(), flush=True)\n"
          "null = os.open(os.devnull, os.O_WRONLY); os.dup2(null, 1); os.dup2(null, 2)\n"   # (the caller reads to EOF)
          "time.sleep(60)")


@pytest.mark.skipif(not strays.supported(), reason="needs /proc and pidfds (Linux 5.3+)")
def test_a_daemon_a_previous_servers_pod_left_is_gone_when_the_executor_has_started(tmp_path):
    """(not a session leader, so not found as a left-behind group: before, it kept running — and its GPU busy);
    another server's processes of a pod of the same uid are left alone (before, its start killed them all)"""
    clk = clock_mod.RealClock()
    client = inprocess.new_client(clk)
    pod = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "long", "namespace": "default"},
                         "spec": {"nodeName": "local", "restartPolicy": "Never",
                                  "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "60"]}]}})
    pod_dir = tmp_path / "pods" / "default" / "long"
    marks = [strays.owner(strays.pod_owner(pod["metadata"]["uid"], pod_dir), "main", 3),
             strays.owner(strays.pod_owner("another-pods-uid", pod_dir.parent / "other"), "main", 0),
             # the same pod of another vclite server running at the same time (from a copy of this one's state:
             # the same uid, its pod directory under its own work directory)
             strays.owner(strays.pod_owner(pod["metadata"]["uid"], tmp_path / "copy" / "default" / "long"),
                          "main", 0)]
    daemon, *others = (int(subprocess.run([sys.executable, "-c", DAEMON], env={**os.environ, strays.MARK: mark},
                                          capture_output=True, text=True).stdout) for mark in marks)
    try:
        assert _alive(daemon) and all(_alive(pid) for pid in others)
        executor_mod.LocalExecutor(client, clk, ["local"], tmp_path / "pods").start()
        assert not _alive(daemon)
        assert all(_alive(pid) for pid in others)
    finally:
        for pid in (daemon, *others):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
