"""LocalExecutor against real processes: what a container starts outside its process group (a setsid'd sleeper,
a daemon's double fork) is killed when the container ends, as a node kills a container's whole PID namespace —
at once when the pod is deleted or holds a GPU, soon after otherwise, and at the latest when the run stops; never
another pod's."""
import asyncio
import sys

import pytest

from tests.unit.executor.test_executor import drive, make_pod, phase
from tests.unit.executor import test_strays
from tests.unit.executor.test_recovery import _alive
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.executor import strays
from vclite.lib import errors
from vclite.lib import clock as clock_mod

pytestmark = pytest.mark.skipif(not strays.supported(), reason="needs /proc and pidfds (Linux 5.3+)")

SETSID = "import os, sys, time; os.setsid(); open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
DAEMON = ("import os, sys, time\n"
          "if os.fork(): os._exit(0)\n"
          "os.setsid()\n"
          "if os.fork(): os._exit(0)\n"
          "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)")
STARTS = {"setsid": SETSID, "daemon": DAEMON}


@pytest.fixture
def env(tmp_path):
    clock = clock_mod.RealClock()
    client = inprocess.new_client(clock)
    ex = executor_mod.LocalExecutor(client, clock, ["local"], tmp_path, restart_backoff=0.05,
                                    gpus={"local": ("G0", "G1")})
    return client, ex, tmp_path


def stray_pod(name, workdir, start, then="true", gpus=0):
    """A pod that leaves a sleeper outside its process group (its pid in <workdir>/<name>.pid), then runs `then`."""
    pid_file = workdir / f"{name}.pid"
    script = (f"{sys.executable} -c \"$START\" {pid_file} & while [ ! -s {pid_file} ]; do sleep 0.01; done; "
              f"{then}")
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return make_pod(name, script, env=[{"name": "START", "value": STARTS[start]}], resources=resources)


def stray(workdir, name):
    path = workdir / f"{name}.pid"
    return int(path.read_text()) if path.exists() and path.read_text() else None


def exists(client, name):
    try:
        client.get(kinds.POD, "default", name)
        return True
    except errors.NotFound:
        return False


def gone(pid):
    return pid is not None and not _alive(pid)


@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize("gpus", [pytest.param(0, id="cpu"), pytest.param(1, id="gpu")])
def test_a_containers_stray_is_killed_when_it_ends(env, start, gpus):
    """(before: the sleeper outlived its pod, and the run; a GPU pod's kept the GPU in use)"""
    client, ex, workdir = env
    client.create(stray_pod("job", workdir, start, gpus=gpus))
    seen = {}

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "job") == "Succeeded")
            seen["at the end"] = gone(stray(workdir, "job"))   # (a GPU's: before its GPU goes to another pod)
            await drive(ex, lambda: gone(stray(workdir, "job")))   # (a CPU pod's: in the executor's next sweep)
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert seen["at the end"] is bool(gpus)


@pytest.mark.parametrize("start", list(STARTS))
def test_a_deleted_pods_stray_is_gone_with_it_and_another_pods_stays(env, start):
    client, ex, workdir = env
    client.create(stray_pod("a", workdir, start, then="sleep 60"))
    client.create(stray_pod("b", workdir, start, then="sleep 60"))
    seen = {}

    async def scenario():
        try:
            await drive(ex, lambda: stray(workdir, "a") and stray(workdir, "b"))
            client.delete(kinds.POD, "default", "a")
            await drive(ex, lambda: not exists(client, "a"))   # (gone: not a pod whose status is not written yet)
            seen["a"], seen["b"] = gone(stray(workdir, "a")), gone(stray(workdir, "b"))
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert seen == {"a": True, "b": False}
    assert gone(stray(workdir, "b"))   # (the run's stop: every pod's)


def test_a_stray_of_a_pod_still_running_is_killed_when_the_run_stops(env):
    client, ex, workdir = env
    client.create(stray_pod("job", workdir, "daemon", then="sleep 60"))

    async def scenario():
        try:
            await drive(ex, lambda: stray(workdir, "job"))
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert gone(stray(workdir, "job"))


def test_a_restarted_containers_stray_does_not_outlive_its_run(env):
    """(a GPU container restarted keeps its GPU: its last run's stray must not keep using it)"""
    client, ex, workdir = env
    pod = stray_pod("crashy", workdir, "setsid", gpus=1,
                    then='n=$(cat "$VC_POD_DIR/n" 2>/dev/null || echo 0); echo $((n+1)) > "$VC_POD_DIR/n"; '
                         f'cp {workdir}/crashy.pid {workdir}/crashy-$n.pid; [ "$n" -ge 1 ]')
    pod["spec"]["restartPolicy"] = "OnFailure"
    client.create(pod)
    seen = {}

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "crashy") == "Succeeded")
            seen["first run's"] = gone(stray(workdir, "crashy-0"))
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert seen["first run's"] is True


def test_the_sweep_of_a_restarted_containers_last_run_leaves_its_new_run_alone(env):
    """(each run has a mark of its own: the sweep after the first run's end, SWEEP_DELAY later, comes while the
    second one runs)"""
    client, ex, workdir = env
    script = ('n=$(cat "$VC_POD_DIR/n" 2>/dev/null || echo 0); echo $((n+1)) > "$VC_POD_DIR/n"; '
              f'{sys.executable} -c "$START" {workdir}/run-$n.pid & '
              f'while [ ! -s {workdir}/run-$n.pid ]; do sleep 0.01; done; '
              '[ "$n" = 0 ] && exit 1; '
              f"p=$(cat {workdir}/run-0.pid); "
              "while [ -e /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status; do sleep 0.02; done; echo outlived")
    client.create(make_pod("crashy", script, restart="OnFailure", env=[{"name": "START", "value": SETSID}]))

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "crashy") in ("Succeeded", "Failed"))
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    cs = client.get(kinds.POD, "default", "crashy")["status"]["containerStatuses"][0]
    assert (phase(client, "crashy"), cs["restartCount"], cs["state"]["terminated"]["exitCode"]) == ("Succeeded", 1, 0)
    assert (workdir / "default" / "crashy" / "logs" / "main.log").read_text() == "outlived\n"
    assert gone(stray(workdir, "run-1"))


def test_a_process_caught_in_its_exec_by_the_executors_sweep_is_looked_at_again(env, monkeypatch):
    """A CPU pod's strays are the executor's sweep's; a process of the pod caught in its exec (its environment reads
    empty) is looked at again a moment later, and killed then.
    (before: that sweep found nothing, and there was no other)"""
    client, ex, workdir = env
    created = client.create(make_pod("job", "true"))
    mark = strays.owner(strays.pod_owner(created["metadata"]["uid"], ex.pod_dir("default", "job")), "main", 0)
    proc = test_strays._held_in_exec(mark)
    scans = test_strays._releasing(monkeypatch, proc, mark)
    seen = {}

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "job") == "Succeeded")
            await drive(ex, lambda: len(scans) >= 2 or proc.poll() is not None)
            seen["killed"] = proc.wait(timeout=10) == -9
        finally:
            await ex.stop_all(grace=0)

    try:
        asyncio.run(scenario())
        assert seen == {"killed": True} and scans[0].unsure and len(scans[1].killed) == 1
    finally:
        proc.kill()
        proc.wait()
