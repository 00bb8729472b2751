"""LocalExecutor against the in-process API: pods bound to its node run and get their status written."""
import asyncio
import os
import time

import pytest

from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.executor import logtimes, usage
from vclite.lib import clock as clock_mod
from vclite.lib import errors


def make_pod(name, script="true", node="local", restart="Never", **container):
    c = {"name": "main", "image": "busybox", **({"command": ["sh", "-c", script]} if script is not None else {}),
         **container}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "restartPolicy": restart, "terminationGracePeriodSeconds": 5,
                     "containers": [c]}}


@pytest.fixture
def env(tmp_path):
    clock = clock_mod.RealClock()
    client = inprocess.new_client(clock)
    ex = executor_mod.LocalExecutor(client, clock, ["local"], tmp_path, restart_backoff=0.05)
    return client, ex, tmp_path


def phase(client, name):
    try:
        return (client.get(kinds.POD, "default", name).get("status") or {}).get("phase")
    except errors.NotFound:
        return None


async def drive(ex, until, limit=1000):
    """Pop and sync keys, awaiting briefly between rounds, until `until()` holds."""
    ex.start()
    for _ in range(limit):
        while (key := ex.queue.get()) is not None:
            ex.sync(key)
        if until():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


def test_pod_runs_to_succeeded_with_container_statuses(env):
    client, ex, workdir = env
    client.create(make_pod("hello", 'echo hi from $HOSTNAME'))
    asyncio.run(drive(ex, lambda: phase(client, "hello") == "Succeeded"))
    status = client.get(kinds.POD, "default", "hello")["status"]
    (cs,) = status["containerStatuses"]
    assert cs["name"] == "main" and cs["ready"] is False and cs["restartCount"] == 0
    assert cs["state"]["terminated"]["exitCode"] == 0 and cs["state"]["terminated"]["reason"] == "Completed"
    assert status["podIP"] == status["hostIP"] == "127.0.0.1"
    assert status["startTime"]
    conds = {c["type"]: c["status"] for c in status["conditions"]}
    assert conds == {"PodReadyToStartContainers": "False", "PodScheduled": "True", "Initialized": "True",
                     "Ready": "False", "ContainersReady": "False"}
    assert ex.log_path("default", "hello", "main").read_text() == "hi from hello\n"
    assert ex.log_path("default", "hello", "main") == workdir / "default" / "hello" / "logs" / "main.log"
    assert ex.running_count() == 0


def test_failed_pod_and_other_nodes_pods_are_left_alone(env):
    client, ex, workdir = env
    client.create(make_pod("elsewhere", 'touch "$VC_POD_DIR/ran"', node="other-node"))
    client.create(make_pod("bad", "exit 7"))
    asyncio.run(drive(ex, lambda: phase(client, "bad") == "Failed"))
    term = client.get(kinds.POD, "default", "bad")["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (7, "Error")
    assert "status" not in client.get(kinds.POD, "default", "elsewhere") or \
        not client.get(kinds.POD, "default", "elsewhere")["status"].get("phase")
    assert not (workdir / "default" / "elsewhere").exists()


def test_finished_pod_is_not_run_again(env):
    client, ex, workdir = env
    client.create(make_pod("once", 'echo x >> "$VC_POD_DIR/runs"'))
    asyncio.run(drive(ex, lambda: phase(client, "once") == "Succeeded"))
    ex.queue.add("default/once")
    asyncio.run(drive(ex, lambda: True))
    assert (workdir / "default" / "once" / "runs").read_text() == "x\n"


def test_container_without_command_fails_the_pod_with_nocommand(env):
    client, ex, _ = env
    client.create(make_pod("nocmd", script=None, args=["--serve"]))
    asyncio.run(drive(ex, lambda: phase(client, "nocmd") == "Failed"))
    status = client.get(kinds.POD, "default", "nocmd")["status"]
    assert status["reason"] == "NoCommand"
    assert "cannot run an image's entrypoint" in status["message"]
    assert any(e["reason"] == "Failed" and e["involvedObject"]["name"] == "nocmd" for e in client.list(kinds.EVENT))


def test_pod_waits_for_its_configmap_then_runs(env):
    client, ex, workdir = env
    ref = {"configMapKeyRef": {"name": "settings", "key": "greeting"}}
    pod = make_pod("cfg", 'echo "$GREETING" > "$VC_POD_DIR/out"', env=[{"name": "GREETING", "valueFrom": ref}])
    client.create(pod)
    asyncio.run(drive(ex, lambda: phase(client, "cfg") == "Pending"))
    waiting = client.get(kinds.POD, "default", "cfg")["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "CreateContainerConfigError" and "settings" in waiting["message"]
    client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"},
                   "data": {"greeting": "hello"}})
    asyncio.run(drive(ex, lambda: phase(client, "cfg") == "Succeeded"))
    assert (workdir / "default" / "cfg" / "out").read_text() == "hello\n"


def _dead(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_deleting_a_running_pod_kills_its_process_group(env):
    client, ex, workdir = env
    client.create(make_pod("long", 'sleep 100 & echo $! > "$VC_POD_DIR/child.pid"; sleep 100', restart="Always"))
    pid_file = workdir / "default" / "long" / "child.pid"

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "long") == "Running" and pid_file.exists() and pid_file.read_text())
            assert ex.running_count() == 1
            client.delete(kinds.POD, "default", "long")
            await drive(ex, lambda: ex.running_count() == 0)
        finally:
            await ex.stop_all(grace=0)  # nothing left to stop unless an assertion failed

    asyncio.run(scenario())
    grandchild = int(pid_file.read_text())
    for _ in range(1000):  # killed at once; wait (up to ~10 s on a loaded machine) for it to go
        if _dead(grandchild):
            break
        time.sleep(0.01)
    assert _dead(grandchild)
    assert phase(client, "long") is None


def test_stop_all_terminates_every_pod_and_writes_final_status(env):
    client, ex, _ = env
    for name in ("a", "b"):
        client.create(make_pod(name, "sleep 100", restart="Always"))

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "a") == phase(client, "b") == "Running")
        finally:
            await ex.stop_all(grace=2)

    asyncio.run(scenario())
    assert ex.running_count() == 0
    for name in ("a", "b"):
        status = client.get(kinds.POD, "default", name)["status"]
        assert status["phase"] == "Failed"
        assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143
        # as the kubelet's graceful node shutdown says it
        assert (status["reason"], status["message"]) == (
            "Terminated", "Pod was terminated in response to imminent node shutdown.")


def test_sync_outside_an_event_loop_explains_itself(env):
    client, ex, _ = env
    client.create(make_pod("p"))
    ex.start()
    with pytest.raises(RuntimeError, match="event loop"):
        ex.sync("default/p")


def _phases_written(client, name):
    """The pod phases the API saw, in order (from a watch)."""
    seen = []
    client.watch(kinds.POD, lambda ev: seen.append((ev.object.get("status") or {}).get("phase"))
                 if ev.object["metadata"]["name"] == name else None)
    return seen


def test_a_quick_pod_goes_from_pending_to_succeeded_in_one_write(env, monkeypatch):
    monkeypatch.setattr(executor_mod, "REPORT_DELAY", 30.0)   # far longer than `true` can take
    client, ex, _ = env
    seen = _phases_written(client, "quick")
    client.create(make_pod("quick", "true"))
    asyncio.run(drive(ex, lambda: phase(client, "quick") == "Succeeded"))
    assert seen == [None, "Succeeded"]   # created, then one status write: no Running in between


def test_a_longer_pod_is_reported_running_before_it_ends(env, monkeypatch):
    monkeypatch.setattr(executor_mod, "REPORT_DELAY", 0.01)
    client, ex, _ = env
    seen = _phases_written(client, "slow")
    client.create(make_pod("slow", "sleep 2"))
    asyncio.run(drive(ex, lambda: phase(client, "slow") == "Succeeded"))
    assert seen == [None, "Running", "Succeeded"]


def test_a_pod_made_again_under_its_name_does_not_take_the_old_ones_directories(env):
    client, ex, workdir = env
    ex.start()
    client.create(make_pod("again", "echo one", node="local"))
    asyncio.run(drive(ex, lambda: phase(client, "again") == "Succeeded"))
    client.delete(kinds.POD, "default", "again")
    client.create(make_pod("again", "echo two", node="local"))
    asyncio.run(drive(ex, lambda: phase(client, "again") == "Succeeded"))
    assert ex.log_path("default", "again", "main").read_text() == "two\n"


@pytest.mark.parametrize("script, restart", [
    ("sleep 100", "Never"),
    ("trap 'exit 0' TERM; sleep 100 & wait", "Never"),     # a clean exit on SIGTERM is still a failure
    ("sleep 100", "Always"),                               # no restart after the deadline
])
def test_a_pod_past_its_active_deadline_is_stopped_and_failed_as_the_kubelet_does(env, script, restart):
    client, ex, _ = env
    pod = make_pod("slow", script, restart=restart)
    pod["spec"]["activeDeadlineSeconds"] = 1
    client.create(pod)

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "slow") == "Failed", limit=3000)
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    status = client.get(kinds.POD, "default", "slow")["status"]
    assert (status["reason"], status["message"]) == (
        "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
    assert "terminated" in status["containerStatuses"][0]["state"]
    assert ex.running_count() == 0
    reasons = [e.get("reason") for e in client.list(kinds.EVENT, "default")]
    assert reasons.count("DeadlineExceeded") == 1


def test_a_pod_that_ends_within_its_active_deadline_is_not_touched(env):
    client, ex, _ = env
    pod = make_pod("quick", "true")
    pod["spec"]["activeDeadlineSeconds"] = 30
    client.create(pod)
    asyncio.run(drive(ex, lambda: phase(client, "quick") == "Succeeded"))
    assert "reason" not in client.get(kinds.POD, "default", "quick")["status"]


def test_the_logs_of_running_containers_get_time_samples_and_a_restart_keeps_them_with_their_run(env, monkeypatch):
    client, ex, workdir = env
    monkeypatch.setattr(logtimes, "SAMPLE_INTERVAL", 0.05)
    script = ('if [ -f "$VC_POD_DIR/ran" ]; then echo second; sleep 0.4; else touch "$VC_POD_DIR/ran"; '
              'echo first; sleep 0.4; echo more; sleep 0.4; exit 1; fi')
    client.create(make_pod("slow", script, restart="OnFailure"))
    client.create(make_pod("quick", "echo hi"))
    asyncio.run(drive(ex, lambda: phase(client, "slow") == "Succeeded" and phase(client, "quick") == "Succeeded"))
    current, previous = ex.log_path("default", "slow", "main"), ex.log_path("default", "slow", "main", previous=True)
    assert previous.read_text() == "first\nmore\n" and current.read_text() == "second\n"
    before = logtimes.read_samples(previous)
    assert [size for size, _ in before] == [6, 11]   # after "first\n", then after "more\n"
    assert before[1][1] - before[0][1] >= 0.3
    assert [size for size, _ in logtimes.read_samples(current)] == [7]
    assert before[1][1] <= logtimes.read_samples(current)[0][1]
    assert not logtimes.times_path(ex.log_path("default", "quick", "main")).exists()   # it ended before a look
    asyncio.run(drive(ex, lambda: len(ex.queue) == 0))   # no pod runs: the looks stop


def test_a_deleted_running_pod_stays_terminating_until_its_container_has_stopped(env):
    """Graceful deletion: the API keeps the pod (deletionTimestamp) while its container handles SIGTERM;
    the executor then writes its final status and removes it (delete with grace period 0)."""
    client, ex, workdir = env
    script = 'trap "echo stopping; sleep 0.3; exit 0" TERM; echo up; while true; do sleep 0.05; done'
    client.create(make_pod("graceful", script))
    log = workdir / "default" / "graceful" / "logs" / "main.log"
    seen = []
    client.watch(kinds.POD, lambda ev: seen.append((ev.type, (ev.object.get("status") or {}).get("phase"),
                                                    bool(ev.object["metadata"].get("deletionTimestamp")))))

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "graceful") == "Running" and "up" in log.read_text())
            marked = client.delete(kinds.POD, "default", "graceful")
            assert marked["metadata"]["deletionGracePeriodSeconds"] == 5   # its terminationGracePeriodSeconds
            assert phase(client, "graceful") == "Running"   # still there, Terminating
            await drive(ex, lambda: phase(client, "graceful") is None)
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert "stopping" in log.read_text()   # it got SIGTERM and its grace period
    assert seen[-2:] == [("MODIFIED", "Succeeded", True), ("DELETED", "Succeeded", True)]   # final status, then gone


def _container_events(client, name):
    return [(e["type"], e["reason"], e["message"], e["involvedObject"].get("fieldPath"), e["source"]["component"],
             e.get("count", 1))
            for e in sorted(client.list(kinds.EVENT, "default"), key=lambda e: e["metadata"]["name"])
            if e["involvedObject"]["name"] == name]


def test_containers_have_the_kubelets_events(env):
    """Started at each start, BackOff before a restart (counted when repeated), Killing when the pod is
    deleted: the kubelet's reasons and words, about the container's field path (no Pulled nor Created: no
    image, and a process is made and started in one step)."""
    client, ex, workdir = env
    uid = client.create(make_pod("flaky", '[ -e "$VC_POD_DIR/once" ] && exec sleep 100; touch "$VC_POD_DIR/once"; '
                                          'exit 1', restart="OnFailure"))["metadata"]["uid"]

    async def scenario():
        try:
            await drive(ex, lambda: ("Started", 2) in [(e[1], e[5]) for e in _container_events(client, "flaky")])
            client.delete(kinds.POD, "default", "flaky")
            await drive(ex, lambda: ex.running_count() == 0)
        finally:
            await ex.stop_all(grace=0)
    asyncio.run(scenario())
    main = "spec.containers{main}"
    assert _container_events(client, "flaky") == [
        ("Normal", "Started", "Started container main", main, "kubelet", 2),
        ("Warning", "BackOff", f"Back-off restarting failed container main in pod flaky_default({uid})", main,
         "kubelet", 1),
        ("Normal", "Killing", "Stopping container main", main, "kubelet", 1)]


GROW = ("import sys, time\n"
        "b = bytearray(int(sys.argv[1]) * 2**20)\n"
        "print('allocated', flush=True)\n"
        "time.sleep(float(sys.argv[2]))\n")


@pytest.mark.parametrize("allocate_mib, limit, reason, exit_code", [
    pytest.param(150, "64Mi", "OOMKilled", 137, id="over-its-limit: OOMKilled"),
    pytest.param(8, "256Mi", "Completed", 0, id="under-its-limit: runs to its end"),
])
def test_a_container_over_its_memory_limit_is_oomkilled(env, allocate_mib, limit, reason, exit_code):
    """As a node's cgroup: the container's processes use more than resources.limits.memory -> killed,
    terminated OOMKilled with exit code 137 (looked at every half second)."""
    import sys
    client, ex, _ = env
    client.create(make_pod("mem", None, command=[sys.executable, "-c", GROW, str(allocate_mib), "1.5"],
                           resources={"limits": {"memory": limit}}))
    asyncio.run(drive(ex, lambda: phase(client, "mem") in ("Succeeded", "Failed")))
    (cs,) = client.get(kinds.POD, "default", "mem")["status"]["containerStatuses"]
    assert (cs["state"]["terminated"]["reason"], cs["state"]["terminated"]["exitCode"]) == (reason, exit_code)
    if reason == "OOMKilled":
        assert phase(client, "mem") == "Failed" and "memory limit (64Mi)" in cs["state"]["terminated"]["message"]


@pytest.mark.parametrize("record_exits", [
    pytest.param(True, id="a-server-records-each-exit"),
    pytest.param(False, id="vcctl-run-never-restarts-on-its-pods-nothing-recorded"),
])
def test_exits_are_recorded_only_where_a_restart_may_recover_pods(tmp_path, record_exits):
    clock = clock_mod.RealClock()
    client = inprocess.new_client(clock)
    ex = executor_mod.LocalExecutor(client, clock, ["local"], tmp_path, record_exits=record_exits)
    pod = client.create(make_pod("rec", "exit 3"))
    asyncio.run(drive(ex, lambda: phase(client, "rec") == "Failed"))
    path = tmp_path / ".exits"
    if not record_exits:
        assert not path.exists()
    else:
        (line,) = path.read_text().splitlines()
        assert line.rsplit(" ", 1)[0] == f"{pod['metadata']['uid']}/main/0 3"


def test_a_running_pod_is_ready_once_its_readiness_gate_holds(env):
    """A 1.32 kubelet's conditions while the pod runs (PodReadyToStartContainers True), Ready held back by a
    readiness gate until something else sets its condition True (then the kubelet writes Ready True)."""
    client, ex, _ = env
    pod = make_pod("gated", "sleep 30")
    pod["spec"]["readinessGates"] = [{"conditionType": "example.com/lb"}]
    client.create(pod)

    def conds():
        return {c["type"]: (c["status"], c.get("reason")) for c in
                (client.get(kinds.POD, "default", "gated").get("status") or {}).get("conditions") or []}

    async def run():
        await drive(ex, lambda: phase(client, "gated") == "Running")
        assert conds() == {"PodReadyToStartContainers": ("True", None), "Initialized": ("True", None),
                           "Ready": ("False", "ReadinessGatesNotReady"), "ContainersReady": ("True", None),
                           "PodScheduled": ("True", None)}
        stored = client.get(kinds.POD, "default", "gated")
        gate = {"type": "example.com/lb", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
        client.update_status({**stored, "status": {**stored["status"],
                                                   "conditions": [gate, *stored["status"]["conditions"]]}})
        await drive(ex, lambda: conds().get("Ready") == ("True", None))
        await ex.stop_all(grace=0.1)
    asyncio.run(run())


def test_the_exit_journals_wrapper_is_not_counted_in_a_containers_memory(tmp_path):
    """Under a server each program runs below a /bin/sh wrapper that records its exit (exits.py), the leader of
    its process group: `kubectl top` and the memory limit count the container's processes, not the wrapper."""
    clock = clock_mod.RealClock()
    client = inprocess.new_client(clock)
    ex = executor_mod.LocalExecutor(client, clock, ["local"], tmp_path, record_exits=True)
    client.create(make_pod("top", "sleep 30"))

    async def run():
        await drive(ex, lambda: phase(client, "top") == "Running")
        (group,) = ex._runs["default/top"].runner.process_groups().values()
        assert ex._runs["default/top"].runner.wrapped_groups() == {group}
        reported = ex.container_usage()["default/top"]["main"].resident
        stats = [s for s in usage._stats("/proc", os.listdir("/proc")) if s.group == group]
        leader = next(s for s in stats if s.pid == group)
        theirs = sum(s.resident for s in stats if s.pid != group)
        assert leader.resident > 0 and abs(reported - theirs) < leader.resident / 2, (reported, theirs, leader)
        await ex.stop_all(grace=0.1)
    asyncio.run(run())
