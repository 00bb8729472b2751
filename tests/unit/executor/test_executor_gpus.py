"""LocalExecutor and GPUs against the in-process API with real processes: a GPU is one running pod's at a time,
a pod keeps its GPUs across container restarts, and a pod's GPUs are free only once its processes are gone."""
import asyncio
import sys

import pytest

from tests.unit.executor.test_executor import drive, make_pod, phase
from tests.unit.executor.test_recovery import _alive
from vclite.api import kinds
from vclite.apiserver import inprocess
from vclite.executor import executor as executor_mod
from vclite.lib import clock as clock_mod


@pytest.fixture
def env(tmp_path):
    """An executor whose node `local` has one GPU, G0."""
    clock = clock_mod.RealClock()
    client = inprocess.new_client(clock)
    ex = executor_mod.LocalExecutor(client, clock, ["local"], tmp_path, restart_backoff=0.05,
                                    gpus={"local": ("G0",)})
    return client, ex, tmp_path


def gpu_pod(name, script, restart="Never"):
    return make_pod(name, script, restart=restart, resources={"limits": {"nvidia.com/gpu": "1"}})


def log(workdir, name):
    path = workdir / "default" / name / "logs" / "main.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("force", [pytest.param(True, id="deleted forcibly"), pytest.param(False, id="gracefully")])
def test_a_pod_waits_for_the_gpu_a_deleted_pod_holds_until_its_processes_are_gone(env, force):
    """(before: the second pod failed, UnexpectedAdmissionError, while the first one's process handled SIGTERM)"""
    client, ex, workdir = env
    gone = workdir / "first-gone"
    client.create(gpu_pod("first", f'trap "sleep 0.5; touch {gone}; exit 0" TERM; echo up; '
                                   "while true; do sleep 0.05; done"))

    async def scenario():
        try:
            await drive(ex, lambda: "up" in log(workdir, "first"))
            client.delete(kinds.POD, "default", "first", grace_period=0 if force else None)
            client.create(gpu_pod("second", f'test -e {gone} && echo "gpu=$CUDA_VISIBLE_DEVICES"'))
            await drive(ex, lambda: phase(client, "second") in ("Succeeded", "Failed"))
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert phase(client, "second") == "Succeeded", client.get(kinds.POD, "default", "second")["status"]
    assert log(workdir, "second") == "gpu=G0\n"   # started after the first pod's process had ended


def waiting(client, name):
    """The waiting states of the pod's containers and init containers, by name."""
    st = client.get(kinds.POD, "default", name).get("status") or {}
    return {cs["name"]: cs["state"]["waiting"] for cs in (st.get("initContainerStatuses") or [])
            + (st.get("containerStatuses") or []) if "waiting" in cs.get("state", {})}


HELD = ("waiting for nvidia.com/gpu held by pod default/first, being stopped, to be released: requested 1, "
        "available 0")


@pytest.mark.parametrize("inits, expected", [
    pytest.param([], {"main": {"reason": "ContainerCreating", "message": HELD}}, id="app container"),
    pytest.param([{"name": "setup", "image": "busybox", "command": ["true"]}],
                 {"setup": {"reason": "ContainerCreating", "message": HELD}, "main": {"reason": "PodInitializing"}},
                 id="behind an init container"),
])
def test_a_pod_waiting_for_a_gpu_says_so_until_it_starts(env, inits, expected):
    """(before: it showed a plain Pending, no container status, as long as the deleted pod took to stop)"""
    client, ex, workdir = env
    gone, go = workdir / "first-gone", workdir / "go"
    client.create(gpu_pod("first", f'trap "while [ ! -e {go} ]; do sleep 0.02; done; touch {gone}; exit 0" TERM; '
                                   "echo up; while true; do sleep 0.05; done"))
    second = gpu_pod("second", f'test -e {gone} && echo started && sleep 30')
    second["spec"]["initContainers"] = inits
    seen = {}

    async def scenario():
        try:
            await drive(ex, lambda: "up" in log(workdir, "first"))
            client.delete(kinds.POD, "default", "first")
            client.create(second)
            await drive(ex, lambda: waiting(client, "second"))
            seen["waiting"] = (phase(client, "second"), waiting(client, "second"))
            go.touch()
            await drive(ex, lambda: phase(client, "second") == "Running")
            seen["running"] = waiting(client, "second")
            # (Running is written when the process starts: its first line may come a moment later)
            await drive(ex, lambda: "started" in log(workdir, "second"))
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert seen["waiting"] == ("Pending", expected)
    assert seen["running"] == {}
    assert log(workdir, "second") == "started\n"


def test_a_pod_asking_more_gpus_than_the_node_has_still_fails_at_once(env):
    client, ex, workdir = env
    client.create(make_pod("big", "true", resources={"limits": {"nvidia.com/gpu": "2"}}))
    asyncio.run(drive(ex, lambda: phase(client, "big") == "Failed"))
    assert client.get(kinds.POD, "default", "big")["status"]["reason"] == "UnexpectedAdmissionError"


def test_a_restarted_container_keeps_its_gpu_and_holds_it_while_backing_off(env):
    """(as the kubelet keeps a container's devices across restarts: a pod bound by hand meanwhile is refused)"""
    client, ex, workdir = env
    client.create(gpu_pod("crashy", 'n=$(cat "$VC_POD_DIR/n" 2>/dev/null || echo 0); echo $((n+1)) > "$VC_POD_DIR/n"; '
                                    'echo "gpu=$CUDA_VISIBLE_DEVICES"; [ "$n" -ge 2 ]', restart="OnFailure"))

    async def scenario():
        try:
            await drive(ex, lambda: "gpu=" in log(workdir, "crashy"))
            client.create(gpu_pod("other", "true"))
            await drive(ex, lambda: phase(client, "crashy") == "Succeeded" and phase(client, "other") == "Failed")
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert client.get(kinds.POD, "default", "crashy")["status"]["containerStatuses"][0]["restartCount"] == 2
    assert log(workdir, "crashy") == "gpu=G0\n"
    assert (workdir / "default" / "crashy" / "logs" / "main.previous.log").read_text() == "gpu=G0\n"
    assert client.get(kinds.POD, "default", "other")["status"]["reason"] == "UnexpectedAdmissionError"


def test_a_gpu_pod_ends_once_every_process_it_started_has_exited(env):
    """(the GPU goes to the next pod then: before, the pod ended as soon as its group was sent SIGKILL, while a
    child holding much memory — as a worker holds a GPU's — was still exiting)"""
    client, ex, workdir = env
    pid_file, ready = workdir / "child.pid", workdir / "ready"
    hold = f"import time; b = bytearray(b'x') * (256 << 20); open('{ready}', 'w').close(); time.sleep(60)"
    client.create(gpu_pod("trainer", f'{sys.executable} -c "{hold}" & echo $! > {pid_file}; '
                                     f"while [ ! -e {ready} ]; do sleep 0.01; done"))

    async def scenario():
        try:
            await drive(ex, lambda: phase(client, "trainer") == "Succeeded", limit=3000)
        finally:
            await ex.stop_all(grace=0)

    asyncio.run(scenario())
    assert not _alive(int(pid_file.read_text()))
