"""Taking over a running pod from a previous server (executor/recovery.py's adoption): the pure decision table,
processes.adopt on real processes that are not our children, and a real executor process killed with SIGKILL
while its pod runs, then a new executor on the same store and work directory that carries the pod on."""
import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import devices, exits, logtimes, processes, recovery, strays
from vclite.executor import executor as executor_mod
from vclite.lib import clock as clock_mod
from vclite.store import sqlite

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="adoption needs pidfds (Linux 5.3+)")
UID = "u1"
T0 = "2026-01-01T00:00:00Z"


def cs(name, state="running", restarts=0, code=0, last=False):
    states = {"running": {"running": {"startedAt": T0}},
              "terminated": {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                            "startedAt": T0, "finishedAt": T0}},
              "waiting": {"waiting": {"reason": "CrashLoopBackOff" if last else "ContainerCreating"}}}
    out = {"name": name, "state": states[state], "lastState": {}, "restartCount": restarts}
    if last:
        out["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": T0, "finishedAt": T0}}
    return out


def a_pod(statuses, init=(), init_statuses=(), phase="Running", deleting=False):
    md = {"name": "p", "namespace": "default", "uid": UID}
    if deleting:
        md["deletionTimestamp"] = T0
    return {"metadata": md,
            "spec": {"initContainers": [{"name": n} for n in init],
                     "containers": [{"name": s["name"]} for s in statuses]},
            "status": {"phase": phase, "startTime": T0, "containerStatuses": list(statuses),
                       "initContainerStatuses": list(init_statuses)}}


def unwritten(statuses, init=(), phase="Pending"):
    """A pod whose start was never written: Pending, no startTime."""
    pod = a_pod(statuses, init=init, phase=phase)
    del pod["status"]["startTime"]
    return pod


@pytest.mark.parametrize("pod, live, recorded, unknown, plan", [
    pytest.param(a_pod([cs("a")]), {"u1/a/0": 7}, set(), False, {"a": 7}, id="running-with-its-wrapper"),
    pytest.param(a_pod([cs("a", restarts=2)]), {"u1/a/2": 7}, set(), False, {"a": 7}, id="the-current-run"),
    pytest.param(a_pod([cs("a", restarts=2)]), {"u1/a/1": 7}, set(), False, None, id="another-runs-wrapper"),
    pytest.param(a_pod([cs("a")]), {}, {"u1/a/0"}, False, {"a": None}, id="ended-while-no-server-ran"),
    pytest.param(a_pod([cs("a")]), {}, set(), False, None, id="gone-and-nothing-recorded"),
    pytest.param(a_pod([cs("a"), cs("b", "terminated")]), {"u1/a/0": 7}, set(), False, {"a": 7},
                 id="one-running-one-done"),
    pytest.param(a_pod([cs("a", "waiting", restarts=1, last=True)]), {}, set(), False, {},
                 id="backing-off-restarts-later"),
    pytest.param(a_pod([cs("a", "waiting")]), {}, set(), False, {}, id="never-started-is-started-by-the-runner"),
    pytest.param(a_pod([cs("a", "waiting"), cs("b")]), {"u1/a/0": 6, "u1/b/0": 7}, set(), False, {"a": 6, "b": 7},
                 id="started-after-its-status-was-written"),
    pytest.param(a_pod([cs("a", "waiting"), cs("b")]), {"u1/b/0": 7}, set(), False, {"b": 7},
                 id="one-the-kill-stopped-from-starting-is-started-later"),
    pytest.param(unwritten([cs("a", "waiting"), cs("b", "waiting")]), {"u1/a/0": 6}, {"u1/b/0"}, False,
                 {"a": 6, "b": None}, id="status-never-written"),
    pytest.param(unwritten([cs("a", "waiting")]), {}, set(), False, None, id="status-never-written-nothing-ran"),
    pytest.param(unwritten([cs("a", "waiting")], init=["i"]), {"u1/a/0": 6}, set(), False, None,
                 id="status-never-written-init-containers"),
    pytest.param(unwritten([cs("a", "waiting", restarts=1, last=True)]), {"u1/a/0": 6}, set(), False, None,
                 id="pending-but-its-status-shows-a-start"),
    pytest.param(unwritten([cs("a", "waiting")], phase="Failed"), {"u1/a/0": 6}, set(), False, None, id="finished"),
    pytest.param(a_pod([cs("a")]), {"u1/a/0": 7}, set(), True, None, id="a-group-that-is-no-wrapper"),
    pytest.param(a_pod([cs("a", "terminated")]), {"u1/a/1": 7}, set(), False, None,
                 id="a-run-whose-start-was-never-written"),
    pytest.param(a_pod([cs("a")], phase="Pending"), {"u1/a/0": 7}, set(), False, None, id="not-running"),
    pytest.param(a_pod([cs("a")], deleting=True), {"u1/a/0": 7}, set(), False, {"a": 7},
                 id="being-deleted-its-stop-goes-on"),
    pytest.param(a_pod([cs("a")], init=["i"], init_statuses=[cs("i", "terminated")]), {"u1/a/0": 7}, set(), False,
                 {"a": 7}, id="init-containers-done"),
    pytest.param(a_pod([cs("a", "waiting")], init=["i"], init_statuses=[cs("i")], phase="Pending"), {"u1/i/0": 7},
                 set(), False, None, id="in-its-init-containers"),
    pytest.param(a_pod([cs("a")], init=["i"], init_statuses=[cs("i", "terminated", code=1)]), {"u1/a/0": 7}, set(),
                 False, None, id="an-init-container-failed"),
])
def test_adoption(pod, live, recorded, unknown, plan):
    assert recovery.adoption(pod, live, recorded, unknown) == plan


@pytest.mark.parametrize("pod, live, marked, plan", [
    pytest.param(a_pod([cs("a", "waiting"), cs("b")]), {"u1/b/0": 7}, ["a", "b"], None,
                 id="marked-started-but-gone-unrecorded"),
    pytest.param(a_pod([cs("a", "waiting"), cs("b")]), {"u1/b/0": 7}, ["b"], {"b": 7}, id="only-the-running-marked"),
    pytest.param(unwritten([cs("a", "waiting"), cs("b", "waiting")]), {"u1/a/0": 6}, ["a", "b"], None,
                 id="status-never-written-one-gone"),
])
def test_a_container_whose_log_carries_the_start_mark_did_start(pod, live, marked, plan):
    """(its process is gone, nothing recorded how it ended: it must not be run a second time)"""
    assert recovery.adoption(pod, live, set(), False, marked) == plan


@pytest.mark.parametrize("visible, node, taken, got", [
    pytest.param("g1,g2", ("g0", "g1", "g2"), set(), {1, 2}, id="by-id"),
    pytest.param("g0", ("g0", "g0"), {0}, {1}, id="a-shared-id-takes-its-first-free-position"),
    pytest.param("", ("g0",), set(), set(), id="none"),
    pytest.param("gx", ("g0",), set(), set(), id="not-this-nodes"),
])
def test_gpu_positions_from_a_processes_environment(visible, node, taken, got):
    assert devices.positions(visible, node, taken) == got


def _orphan(argv, env=None):
    """Start `argv` as a grandchild in its own session, its parent gone: not our child. Its pid."""
    spawn = ("import subprocess, sys; p = subprocess.Popen(sys.argv[1:], start_new_session=True, "
             "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid, flush=True)")
    return int(subprocess.run([sys.executable, "-c", spawn, *argv], env=env, capture_output=True, text=True,
                              check=True).stdout)


def test_an_adopted_process_is_awaited_and_its_code_asked_at_its_end(tmp_path):
    go = tmp_path / "go"
    pid = _orphan(["sh", "-c", f'while [ ! -e "{go}" ]; do sleep 0.02; done'])
    asked = []

    async def main():
        child = processes.adopt(pid, lambda: asked.append(1) or 5)
        assert child is not None and child.pid == pid and child.returncode is None
        await asyncio.sleep(0.1)
        assert not asked, "asked only once it has exited"
        go.touch()
        return await asyncio.wait_for(child.wait(), 30), child.returncode
    assert asyncio.run(main()) == (5, 5)
    assert asked == [1]


def test_a_process_already_gone_has_exited():
    async def main():
        child = processes.adopt(2 ** 22 + 1, lambda: -9)   # (above pid_max's default: never a process)
        return child.returncode, await child.wait()
    assert asyncio.run(main()) == (-9, -9)


WRAPPED = [b"/bin/sh", b"-c", b"script", b"vclite-exit", b"u1/main/2", b"/w/.exits", b"sleep", b"30"]


@pytest.mark.parametrize("argv, past", [
    pytest.param(WRAPPED, WRAPPED, id="the-wrapper-itself"),
    pytest.param([b"/py", b"-I", b"-S", b"/v/executor/mountview.py", b"/r", b"/", b"--bind", b"/s", b"/data", b"--",
                  *WRAPPED], WRAPPED, id="still-making-its-view"),
    pytest.param([b"/py", b"-I", b"-S", b"/v/executor/mountview.py", b"--report", b"5", b"/r", b"/", b"--",
                  *WRAPPED], WRAPPED, id="still-making-its-view-with-a-report-pipe"),
    pytest.param([b"/py", b"-I", b"-S", b"/v/executor/mountview.py", b"--report", b"x", b"/r", b"/", b"--", b"y"],
                 [b"/py", b"-I", b"-S", b"/v/executor/mountview.py", b"--report", b"x", b"/r", b"/", b"--", b"y"],
                 id="a-report-that-is-no-descriptor"),
    pytest.param([b"/py", b"-I", b"-S", b"/v/executor/mountview.py", b"/r", b"--", b"x"],
                 [b"/py", b"-I", b"-S", b"/v/executor/mountview.py", b"/r", b"--", b"x"], id="not-mountviews-arguments"),
    pytest.param([b"/py", b"-I", b"-S", b"/v/other.py", b"/r", b"/", b"--", *WRAPPED],
                 [b"/py", b"-I", b"-S", b"/v/other.py", b"/r", b"/", b"--", *WRAPPED], id="another-script"),
])
def test_a_process_still_making_its_view_is_its_wrapper(argv, past):
    """Killed with its server while mountview made the container's view (before it exec'd the wrapper), the
    process is taken for the wrapper it is about to become: a restarted server takes it over."""
    assert recovery._past_view(argv) == past


def test_a_wrapper_names_its_run_and_journal(tmp_path):
    journal = tmp_path / ".exits"
    journal.touch()
    argv = exits.wrap(["sleep", "30"], {b"PATH": os.environ["PATH"].encode()}, tmp_path, journal, "u1/main/2")
    pid = _orphan(argv)
    plain = _orphan(["sleep", "30"])
    try:
        assert recovery.wrapper_run(pid, journal) == "u1/main/2"
        assert recovery.wrapper_run(pid, tmp_path / "another") is None, "another executor's journal"
        assert recovery.wrapper_run(plain, journal) is None
    finally:
        recovery.kill_group(pid)
        recovery.kill_group(plain)


# ---- a real executor killed with SIGKILL, then another on the same store and work directory -----------------
CHILD = """
import asyncio, json, sys, pathlib
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.lib import clock as clock_mod
from vclite.store import sqlite

async def main(db, workdir, pod, gpus):
    clk = clock_mod.RealClock()
    client = inprocess.new_client(clk, store=sqlite.SqliteStore(clk, db))
    objs = json.loads(pod)
    for obj in objs if isinstance(objs, list) else [objs]:   # (a ConfigMap before its pod)
        client.create(obj)
    ex = executor_mod.LocalExecutor(client, clk, ["local"], pathlib.Path(workdir), record_exits=True,
                                    gpus={k: tuple(v) for k, v in json.loads(gpus).items()})
    ex.start()
    while True:
        while (key := ex.queue.get()) is not None:
            ex.sync(key)
        status = client.get(kinds.POD, "default", "p").get("status") or {}
        if status.get("phase") == "Running" and all("running" in c["state"] for c in status["containerStatuses"]):
            print(json.dumps(status), flush=True)
            await asyncio.sleep(3600)
        await asyncio.sleep(0.01)

asyncio.run(main(*sys.argv[1:]))
"""


def pod_of(containers, restart_policy="Never", **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeName": "local", "restartPolicy": restart_policy, "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": n, "image": "busybox", "command": ["sh", "-c", script]}
                                    for n, script in containers], **spec}}


def wait_for(tmp_path):
    """A script that runs until the file `go` exists."""
    return f'while [ ! -e "{tmp_path / "go"}" ]; do sleep 0.02; done'


def _killed_mid_run(tmp_path, pod, gpus=None):
    """A first executor runs `pod` (a list: objects to create first, the pod last) until its containers run, then
    is killed with SIGKILL: its status then."""
    db, workdir = tmp_path / "store.db", tmp_path / "pods"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(workdir), json.dumps(pod),
                             json.dumps(gpus or {})],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("{"), "the first executor never ran the pod"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return json.loads(line)


class Second:
    """The executor started again, on the same store and work directory, driven on an event loop."""

    def __init__(self, tmp_path, gpus=None):
        self.clk = clock_mod.RealClock()
        self.store = sqlite.SqliteStore(self.clk, tmp_path / "store.db")
        self.client = inprocess.new_client(self.clk, store=self.store)
        self.ex = executor_mod.LocalExecutor(self.client, self.clk, ["local"], tmp_path / "pods", record_exits=True,
                                             gpus=gpus)

    def pod(self):
        return self.client.get(kinds.POD, "default", "p")

    async def drive(self, until, limit=3000):
        for _ in range(limit):
            while (key := self.ex.queue.get()) is not None:
                self.ex.sync(key)
            if until():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"condition never held; the pod's status: {self.pod().get('status')}")


def _pids(status):
    return [int(c["containerID"].rpartition("/")[2]) for c in status["containerStatuses"]]


def test_a_running_pod_is_taken_over_and_ends_as_its_processes_do(tmp_path):
    script = wait_for(tmp_path) + '; echo "all done" > "$TERMINATION_MESSAGE_PATH"; echo bye'
    before = _killed_mid_run(tmp_path, pod_of([("main", script), ("side", script)]))
    pids = _pids(before)
    second = Second(tmp_path)
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            assert second.pod()["status"] == before, "nothing about the pod changed: it runs on"
            assert all(recovery.live_groups({pid}) for pid in pids), "its processes were not killed"
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
        asyncio.run(main())
        status = second.pod()["status"]
        for c, was in zip(status["containerStatuses"], before["containerStatuses"]):
            term = c["state"]["terminated"]
            assert (term["exitCode"], term["reason"], term["message"]) == (0, "Completed", "all done\n")
            assert term["startedAt"] == was["state"]["running"]["startedAt"]
        assert status["startTime"] == before["startTime"] and "reason" not in status
        assert (tmp_path / "pods/default/p/logs/main.log").read_text() == "bye\n"
        assert "ProcessLost" not in {e["reason"] for e in second.client.list(kinds.EVENT)}
    finally:
        second.store.close()
        for pid in pids:
            recovery.kill_group(pid)


def test_an_adopted_container_that_fails_is_restarted_by_its_policy(tmp_path):
    flag = tmp_path / "failed-once"
    script = (wait_for(tmp_path) + f'; if [ ! -e "{flag}" ]; then touch "{flag}"; exit 3; fi; echo second run')
    before = _killed_mid_run(tmp_path, pod_of([("main", script)], restart_policy="OnFailure"))
    second = Second(tmp_path)
    second.ex.restart_backoff = 0.05
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
        asyncio.run(main())
        (c,) = second.pod()["status"]["containerStatuses"]
        assert (c["restartCount"], c["lastState"]["terminated"]["exitCode"], c["state"]["terminated"]["exitCode"]) == \
            (1, 3, 0)
        assert (tmp_path / "pods/default/p/logs/main.log").read_text() == "second run\n"
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


def test_an_adopted_pod_deleted_is_stopped(tmp_path):
    before = _killed_mid_run(tmp_path, pod_of([("main", "trap 'exit 0' TERM; " + wait_for(tmp_path))]))
    (pid,) = _pids(before)
    second = Second(tmp_path)
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            second.client.delete(kinds.POD, "default", "p")
            await second.drive(lambda: not second.client.list(kinds.POD))
        asyncio.run(main())
        for _ in range(500):
            if not recovery.live_groups({pid}):
                break
            time.sleep(0.01)
        assert not recovery.live_groups({pid}), "its processes were stopped"
    finally:
        second.store.close()
        recovery.kill_group(pid)


def test_a_container_that_ended_while_no_server_ran_is_restarted_by_its_policy(tmp_path):
    count = tmp_path / "runs"
    script = wait_for(tmp_path) + f'; echo run >> "{count}"; exit 1'
    before = _killed_mid_run(tmp_path, pod_of([("main", script)], restart_policy="OnFailure"))
    (tmp_path / "go").touch()
    for _ in range(1000):   # (it ends by itself; its wrapper records how)
        if not recovery.left_behind(tmp_path / "pods"):
            break
        time.sleep(0.01)
    second = Second(tmp_path)
    second.ex.restart_backoff = 0.05
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: count.exists() and len(count.read_text().split()) >= 3)
            await second.ex.stop_all(grace=0)
        asyncio.run(main())
        (c,) = second.pod()["status"]["containerStatuses"]
        assert c["restartCount"] >= 2, c
        assert "ProcessLost" not in {e["reason"] for e in second.client.list(kinds.EVENT)}
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


def test_exec_and_the_memory_limit_carry_on_in_an_adopted_container(tmp_path):
    """kubectl exec runs in a taken-over container (its env and working directory); its memory limit is still
    watched: a container that grows past it after the restart ends OOMKilled, as it would have before."""
    grow = tmp_path / "grow"
    hog = f'import time; b = bytearray(200 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(60)'
    script = (f'while [ ! -e "{grow}" ]; do sleep 0.02; done; exec {sys.executable} -c \'{hog}\'')
    pod = pod_of([("main", script)])
    pod["spec"]["containers"][0]["env"] = [{"name": "MY_ENV", "value": "from-the-spec"}]
    pod["spec"]["containers"][0]["resources"] = {"limits": {"memory": "64Mi"}}
    before = _killed_mid_run(tmp_path, pod)
    second = Second(tmp_path)
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            session = await second.ex.exec("default", "p", "main", ["sh", "-c", "echo $MY_ENV; pwd"], stdin=False,
                                           stdout=True, stderr=False, tty=False)
            out = [(await session.outputs[0][1].readline()).strip() for _ in range(2)]
            await session.wait()
            grow.touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Failed")
            return out
        out = asyncio.run(main())
        assert out == [b"from-the-spec", str(tmp_path / "pods/default/p").encode()]
        term = second.pod()["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (term["reason"], term["exitCode"]) == ("OOMKilled", 137)
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


def test_an_adopted_pods_gpus_stay_its_own(tmp_path):
    """The GPUs a taken-over container's environment names are held for it: a new pod asking for more than the rest
    is refused, as it would have been before the restart; the adopted container keeps seeing its GPU."""
    gpus = {"local": ("G0", "G1")}
    script = wait_for(tmp_path) + '; echo "$CUDA_VISIBLE_DEVICES"'
    pod = pod_of([("main", script)])
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    before = _killed_mid_run(tmp_path, pod, gpus)
    second = Second(tmp_path, gpus)
    big = pod_of([("main", "true")])
    big["metadata"]["name"] = "big"
    big["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 2}}
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            second.client.create(big)
            await second.drive(lambda: (second.client.get(kinds.POD, "default", "big").get("status") or {})
                               .get("phase") == "Failed")
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
        asyncio.run(main())
        assert second.client.get(kinds.POD, "default", "big")["status"]["reason"] == devices.ADMISSION_REASON
        assert (tmp_path / "pods/default/p/logs/main.log").read_text() == "G0\n"
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


QUICK_CHILD = """
import asyncio, json, sys, pathlib
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.lib import clock as clock_mod
from vclite.store import sqlite

async def main(db, workdir, pod):
    clk = clock_mod.RealClock()
    client = inprocess.new_client(clk, store=sqlite.SqliteStore(clk, db))
    client.create(json.loads(pod))
    ex = executor_mod.LocalExecutor(client, clk, ["local"], pathlib.Path(workdir), record_exits=True)
    ex.start()
    log = pathlib.Path(workdir) / "default" / "p" / "logs" / "main.log"
    while not log.exists():   # synced until its process is started: then no more syncs, no status written
        while (key := ex.queue.get()) is not None:
            ex.sync(key)
        await asyncio.sleep(0)
    print("started", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main(*sys.argv[1:]))
"""


def test_a_pod_started_just_before_the_kill_its_status_not_yet_written_is_taken_over(tmp_path):
    """The server was killed between a pod's process start and its status's write: the process still runs at
    the restart, so the pod is taken over (before: killed, ProcessLost) and runs once, to its end."""
    count = tmp_path / "runs"
    pod = pod_of([("main", f'echo run >> "{count}"; ' + wait_for(tmp_path) + '; echo done > "$TERMINATION_MESSAGE_PATH"')])
    proc = subprocess.Popen([sys.executable, "-c", QUICK_CHILD, str(tmp_path / "store.db"), str(tmp_path / "pods"),
                             json.dumps(pod)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    second = Second(tmp_path)
    assert not recovery.was_started(second.pod()), "its status says nothing"
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.pod()["status"].get("phase") == "Running")
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
        asyncio.run(main())
        status = second.pod()["status"]
        term = status["containerStatuses"][0]["state"]["terminated"]
        assert (term["exitCode"], term["message"]) == (0, "done\n")
        assert term["startedAt"] <= term["finishedAt"] and status["startTime"] <= term["startedAt"]
        assert count.read_text() == "run\n", "run once only"
    finally:
        second.store.close()
        for pid in recovery.left_behind(tmp_path / "pods").values():
            for p in pid:
                recovery.kill_group(p)


@pytest.mark.parametrize("marks, run", [
    pytest.param(["u1@ab/main/2"], "u1/main/2", id="its-own"),
    pytest.param(["outer@cd/x/0", "u1@ab/main/0"], "u1/main/0", id="behind-an-inherited-mark"),
    pytest.param(["u1@ff/main/0"], None, id="another-directorys-pod-of-the-same-uid"),
    pytest.param(["u1@ab"], None, id="no-run"),
    pytest.param([], None, id="no-mark"),
])
def test_the_run_a_process_left_in_a_session_of_its_own_belongs_to(marks, run):
    assert recovery.marked_run(marks, "u1@ab", "u1") == run


def test_a_pod_whose_container_started_a_daemon_or_had_an_exec_is_taken_over(tmp_path):
    """A container's process in a session of its own (a daemon started with setsid, as sshd or torchrun's workers
    are; a `kubectl exec` under way) left behind with the wrapper does not stop the take-over: it is left alone
    while its container runs and killed when it ends, as before the crash."""
    daemon = 'setsid sleep 300 </dev/null >/dev/null 2>&1 & '
    before = _killed_mid_run(tmp_path, pod_of([("main", daemon + wait_for(tmp_path) + "; echo bye")]))
    (pid,) = _pids(before)
    leaders = recovery.left_behind(tmp_path / "pods")[str(tmp_path / "pods/default/p")]
    assert len(leaders) == 2, "the wrapper and the daemon, each a session of its own"
    (other,) = set(leaders) - {pid}
    second = Second(tmp_path)
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            assert second.pod()["status"] == before, "taken over: nothing about the pod changed"
            assert recovery.live_groups({other}), "the daemon runs on with its container"
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
            await second.ex.stop_all(grace=0)
        asyncio.run(main())
        assert not recovery.live_groups({other}), "the daemon went with its container"
        assert "ProcessLost" not in {e["reason"] for e in second.client.list(kinds.EVENT)}
    finally:
        second.store.close()
        for group in leaders:
            recovery.kill_group(group)


def test_a_pod_whose_config_map_was_deleted_while_it_ran_is_taken_over(tmp_path):
    """A ConfigMap a running container's environment names, deleted before the crash: the container runs on (as a
    kubelet lets it) with the environment and command line it was started with, exec'd commands too."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
          "data": {"x": "from-the-map"}}
    pod = pod_of([("main", wait_for(tmp_path) + '; echo "$X $(X)"')])
    pod["spec"]["containers"][0]["env"] = [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "x"}}}]
    pod["spec"]["initContainers"] = [{"name": "init", "image": "busybox", "command": ["true"],
                                      "envFrom": [{"configMapRef": {"name": "cm"}}]}]
    before = _killed_mid_run(tmp_path, [cm, pod])
    second = Second(tmp_path)
    second.client.delete(kinds.CONFIGMAP, "default", "cm")
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            assert second.pod()["status"] == before, "taken over: nothing about the pod changed"
            session = await second.ex.exec("default", "p", "main", ["sh", "-c", "echo $X"], stdin=False,
                                           stdout=True, stderr=False, tty=False)
            out = (await session.outputs[0][1].readline()).strip()
            await session.wait()
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
            return out
        assert asyncio.run(main()) == b"from-the-map"
        assert (tmp_path / "pods/default/p/logs/main.log").read_text() == "from-the-map from-the-map\n"
        assert "ProcessLost" not in {e["reason"] for e in second.client.list(kinds.EVENT)}
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


def test_processes_left_behind_for_a_pod_that_no_longer_exists_are_killed(tmp_path):
    """A pod force-deleted while no server ran its node (`kubectl delete --force`, a server started with other
    --nodes) has no pod to take over or fail: what its containers left behind is killed at the next start, as a
    kubelet's housekeeping kills containers whose pod the API no longer has. A pod of another node is left alone."""
    workdir = tmp_path / "pods"
    gone, other = workdir / "default" / "gone", workdir / "default" / "elsewhere"
    for d in (gone, other):
        d.mkdir(parents=True)

    def left(pod_dir, uid):
        env = {**os.environ, "VC_POD_DIR": str(pod_dir),
               "VCLITE_OWNER": f"outer@00/x/0:{strays.pod_owner(uid, pod_dir)}/main/0"}
        return _orphan(["sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & sleep 300"], env)
    leader, kept = left(gone, "ug"), left(other, "uo")
    time.sleep(0.2)   # (the daemons' setsid)
    groups = recovery.left_behind(workdir)
    assert len(groups[str(gone)]) == 2 and len(groups[str(other)]) == 2
    second = Second(tmp_path)
    elsewhere = pod_of([("main", "sleep 300")])
    elsewhere["metadata"].update(name="elsewhere", uid="uo")
    elsewhere["spec"]["nodeName"] = "another-node"
    second.client.create(elsewhere)
    try:
        async def main():
            second.ex.start()
        asyncio.run(main())
        assert recovery.live_groups(set(groups[str(gone)])) == set(), "the gone pod's processes, daemon too"
        assert recovery.live_groups(set(groups[str(other)])) == set(groups[str(other)]), "another node's pod's"
    finally:
        second.store.close()
        for group in groups[str(gone)] + groups[str(other)] + [leader, kept]:
            recovery.kill_group(group)


def test_a_record_written_by_a_wrapper_that_opened_the_journal_before_the_start_is_not_lost(tmp_path):
    """A wrapper taken over may append its record at any time, also through the journal it opened just before the
    restarted executor's start: the journal is not replaced under it while wrappers run (the record would go into
    the replaced file, and the container end as killed, 137)."""
    before = _killed_mid_run(tmp_path, pod_of([("main", wait_for(tmp_path))]))
    (pid,) = _pids(before)
    second = Second(tmp_path)
    uid = second.pod()["metadata"]["uid"]
    journal = tmp_path / "pods" / exits.JOURNAL
    try:
        with open(journal, "a") as opened_before:   # (as the wrapper's `>>"$j"` just before the start)
            async def main():
                second.ex.start()
                await second.drive(lambda: second.ex.running_count() == 1)
                opened_before.write(f"{uid}/main/0 7 1.0\n")
                opened_before.flush()
                recovery.kill_group(pid)   # (its record already written: what it reads is the record's)
                await second.drive(lambda: second.pod()["status"]["phase"] == "Failed")
            asyncio.run(main())
        term = second.pod()["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (term["exitCode"], term["reason"]) == (7, "Error"), term
    finally:
        second.store.close()
        recovery.kill_group(pid)


def test_the_journal_keeps_the_records_of_other_nodes_pods(tmp_path):
    """A pod of a node this server does not run (another --nodes) may be taken over by a later server that runs it:
    its containers' recorded ends stay in the journal when it is started again."""
    second = Second(tmp_path)
    elsewhere = pod_of([("main", "true")])
    elsewhere["spec"]["nodeName"] = "another-node"
    uid = second.client.create(elsewhere)["metadata"]["uid"]
    journal = tmp_path / "pods" / exits.JOURNAL
    journal.parent.mkdir(parents=True)
    journal.write_text(f"{uid}/main/0 3 1.00\ngone-uid/main/0 0 1.00\n")
    try:
        async def main():
            second.ex.start()
        asyncio.run(main())
        assert set(exits.read(journal)) == {f"{uid}/main/0"}
    finally:
        second.store.close()


def test_a_pod_being_deleted_at_the_crash_gets_the_rest_of_its_grace_period(tmp_path):
    """A pod deleted gracefully, its container still stopping (a checkpoint saved on SIGTERM) when the server is
    killed: the next start takes its stop over with what is left of its grace period — SIGTERM, time to finish —
    instead of a SIGKILL at once, and the pod then goes."""
    saved = tmp_path / "saved"
    pod = pod_of([("main", f"trap 'echo saved > \"{saved}\"; exit 0' TERM; " + wait_for(tmp_path))])
    pod["spec"]["terminationGracePeriodSeconds"] = 60
    before = _killed_mid_run(tmp_path, pod)
    second = Second(tmp_path)
    second.client.delete(kinds.POD, "default", "p")   # (as if deleted just before the kill: its grace runs)
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: not second.client.list(kinds.POD))
        asyncio.run(main())
        assert saved.read_text() == "saved\n", "its SIGTERM handler ran"
        assert not recovery.live_groups(set(_pids(before)))
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


def test_what_an_adopted_container_wrote_while_no_server_ran_takes_the_time_of_its_last_write(tmp_path):
    """`kubectl logs --timestamps`/`--since`: lines written while no server ran are not stamped with the time the
    restarted server first looks (later than they were written, by as long as it was down) but with the log's last
    write before it (never early)."""
    before = _killed_mid_run(tmp_path, pod_of([("main", "echo early; " + wait_for(tmp_path))]))
    log = tmp_path / "pods/default/p/logs/main.log"
    for _ in range(3000):   # (its echo may come after the status says Running, on a loaded machine)
        if log.read_bytes() == b"early\n":
            break
        time.sleep(0.01)
    logtimes.times_path(log).unlink(missing_ok=True)   # (no look of the first executor's at it)
    os.utime(log, (1_000_000.0, 1_000_000.0))   # (written long before the restart)
    second = Second(tmp_path)
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
        asyncio.run(main())
        assert logtimes.read_samples(log)[-1] == (len(b"early\n"), 1_000_000.0)
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)


@pytest.mark.parametrize("index, size, mtime, got", [
    pytest.param("", 6, 50.0, [(6, 50.0)], id="no-index-yet"),
    pytest.param("4 40.000000\n", 6, 50.0, [(4, 40.0), (6, 50.0)], id="grown-since"),
    pytest.param("6 40.000000\n", 6, 50.0, [(6, 40.0)], id="nothing-new"),
    pytest.param("4 60.000000\n", 6, 50.0, [(4, 60.0), (6, 60.0)], id="never-before-the-last-sample"),
])
def test_a_logs_catch_up_sample(tmp_path, index, size, mtime, got):
    log = tmp_path / "main.log"
    log.write_bytes(b"x" * size)
    os.utime(log, (mtime, mtime))
    if index:
        logtimes.times_path(log).write_text(index)
    assert logtimes.catch_up(log) == (log.stat().st_ino, size)
    assert logtimes.read_samples(log) == got


def test_a_container_in_a_view_of_its_own_is_taken_over_and_restarted_in_it(tmp_path):
    """A container that sees its volume at /data and writes /dev/termination-log (mountview.py): its wrapper runs
    inside the view; taken over, it ends with its message, and its restart gets the view again."""
    from vclite.executor import mountview
    if mountview.available() is not None:
        pytest.skip(f"no mount namespace on this host: {mountview.available()}")
    script = (wait_for(tmp_path) + '; n=$(cat /data/n 2>/dev/null || echo 0); echo $((n+1)) > /data/n; '
              'echo "run $n" > /dev/termination-log; [ "$n" -ge 1 ]')
    pod = pod_of([("main", script)], restart_policy="OnFailure", volumes=[{"name": "data", "emptyDir": {}}])
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    before = _killed_mid_run(tmp_path, pod)
    second = Second(tmp_path)
    second.ex.restart_backoff = 0.05
    try:
        async def main():
            second.ex.start()
            await second.drive(lambda: second.ex.running_count() == 1)
            assert second.pod()["status"] == before, "taken over: nothing about the pod changed"
            (tmp_path / "go").touch()
            await second.drive(lambda: second.pod()["status"]["phase"] == "Succeeded")
        asyncio.run(main())
        (c,) = second.pod()["status"]["containerStatuses"]
        assert (c["restartCount"], c["lastState"]["terminated"]["message"], c["state"]["terminated"]["message"]) == \
            (1, "run 0\n", "run 1\n")
        assert "ProcessLost" not in {e["reason"] for e in second.client.list(kinds.EVENT)}
    finally:
        second.store.close()
        for pid in _pids(before):
            recovery.kill_group(pid)
