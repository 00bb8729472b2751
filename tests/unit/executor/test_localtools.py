"""Stand-ins for image tools the host lacks (executor/localtools.py): pytorch's wait-for-master script finds its
master on a host without `nc`, whose `sh` has no `/dev/tcp`, through a real shell and a real port."""
import asyncio
import os
import pathlib
import shutil
import socket
import subprocess
import uuid

import pytest

from vclite.api import core
from vclite.controllers.job import frameworks
from vclite.executor import localtools, runner
from vclite.lib import clock

SCRIPT = "until nc -z 127.0.0.1 1 2>/dev/null; do sleep 1; done"


@pytest.fixture
def no_nc(tmp_path):
    """A PATH with a shell and `sleep` and no `nc`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "sleep"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    return str(bin_dir)


@pytest.fixture
def with_nc(tmp_path):
    bin_dir = tmp_path / "bin-nc"
    bin_dir.mkdir()
    nc = pathlib.Path(bin_dir) / "nc"
    nc.write_text("#!/bin/sh\nexit 0\n")
    nc.chmod(0o755)
    return str(bin_dir)


@pytest.fixture
def listening():
    """A port something listens on (the master)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.mark.parametrize("argv, standing_in", [
    pytest.param(["sh", "-c", SCRIPT], True, id="sh -c script calling nc"),
    pytest.param(["/bin/bash", "-c", "{ nc -z m 1 || echo > /dev/tcp/m/1; }"], True, id="bash by its path"),
    pytest.param(["sh", "-c", "rsync -a x y; echo $nc; /opt/nc -z m 1"], False, id="no nc command word"),
    pytest.param(["python", "-c", "nc -z m 1"], False, id="not a shell"),
    pytest.param(["sh", "script.sh", "nc -z"], False, id="not -c"),
    pytest.param(["sh", "-c"], False, id="no script"),
])
def test_a_shell_script_calling_nc_gets_the_stand_in_only_where_nc_is_missing(argv, standing_in, no_nc, with_nc):
    got = localtools.with_stand_ins(argv, no_nc)
    assert got == ([*argv[:2], localtools.nc_function() + argv[2], *argv[3:]] if standing_in else argv)
    assert localtools.with_stand_ins(argv, with_nc) == argv   # a host with nc runs the script as written


def _run(argv, path):
    return subprocess.run(localtools.with_stand_ins(argv, path), env={"PATH": path}, capture_output=True, text=True,
                          timeout=60)


def test_the_wait_for_master_script_sees_the_master_without_nc(no_nc, listening):
    script = frameworks._wait_for_master_script("127.0.0.1", listening, 0)
    done = _run(["sh", "-c", script], no_nc)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "Master node is ready!"), done


def test_the_wait_for_master_script_still_times_out_without_a_master(no_nc):
    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _run(["sh", "-c", frameworks._wait_for_master_script("127.0.0.1", port, 0)], no_nc)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (1, "Timeout waiting for master after 0 seconds"), done


@pytest.mark.parametrize("args, code, err", [
    pytest.param(["-z", "-w", "1", "127.0.0.1", "{port}"], 0, "", id="-w"),
    pytest.param(["-zv", "127.0.0.1", "{port}"], 0, "", id="-zv"),
    pytest.param(["-l", "1234"], 127, "only checks a port", id="listening is not stood in for"),
    pytest.param(["-z", "127.0.0.1"], 1, "", id="no port"),
])
def test_the_stand_in_checks_a_port_and_nothing_else(no_nc, listening, args, code, err):
    call = " ".join(a.format(port=listening) for a in args)
    done = _run(["sh", "-c", f"nc {call}"], no_nc)
    assert done.returncode == code and err in done.stderr, done


def test_a_worker_pods_wait_for_master_init_container_runs_locally_without_nc(tmp_path, no_nc, listening):
    """The pod as Volcano's pytorch plugin makes it (the init container's command untouched), run by the local
    executor on a PATH without nc: the init container finds the master, the worker starts."""
    script = frameworks._wait_for_master_script("127.0.0.1", listening, 0)
    path = [{"name": "PATH", "value": no_nc}]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "w", "namespace": "ns", "uid": f"uid-{uuid.uuid4()}"},
           "spec": {"nodeName": "local", "restartPolicy": "Never",
                    "initContainers": [{"name": frameworks.WAIT_FOR_MASTER, "image": "busybox:1.36.1",
                                        "command": ["sh", "-c", script], "env": path}],
                    "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", "exit 0"],
                                    "env": path}]}}
    r = runner.PodRunner(pod, tmp_path / "ns" / "w", {}, clock.RealClock(), [].append, restart_backoff=0.05)
    asyncio.run(r.run())
    log = (tmp_path / "ns" / "w" / "logs" / f"{frameworks.WAIT_FOR_MASTER}.log").read_text()
    assert (r.phase(), log.splitlines()[-1]) == (core.PodPhase.SUCCEEDED, "Master node is ready!"), log
    assert pod["spec"]["initContainers"][0]["command"] == ["sh", "-c", script]
    assert os.path.basename(pod["spec"]["initContainers"][0]["command"][0]) == "sh"
