"""`kubectl exec` and `kubectl cp` against a real `vcctl server`, with the real kubectl binary (its
WebSocket exec, v5.channel.k8s.io): output and exit codes, stdin, a terminal (`-it`, under a
pseudo-terminal of the test's own), the refusals kubectl prints as against a cluster, files copied
both ways, and what an exec leaves running ending with the container."""
import os
import select
import shutil
import subprocess
import time

import pytest

from tests.e2e.test_server_kubectl import wait_for
from tests.unit.executor.test_podexec import alive

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

POD = """
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers:
    - name: main
      image: busybox
      command: ["sh", "-c", "while [ ! -e stop ]; do sleep 0.05; done"]
      env: [{name: MY_ENV, value: set-in-the-spec}]
"""


@pytest.fixture(scope="module")
def running(kubectl, server):
    """A pod whose container runs until a file `stop` appears in its directory."""
    kubectl("apply", "-f", "-", input=POD.replace("NAME", "box"))
    wait_for(kubectl, ["get", "pod", "box", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Running",
             "the pod did not start")
    return server.data_dir / "pods" / "default" / "box"


def test_output_environment_and_working_directory(kubectl, running):
    out = kubectl("exec", "box", "--", "sh", "-c", 'echo out; echo err >&2; echo "$MY_ENV"; pwd')
    assert out.stdout == f"out\nset-in-the-spec\n{running}\n" and out.stderr == "err\n"


def test_describe_shows_the_pods_events(kubectl, running):
    """Scheduled (by volcano) then Started (by the kubelet), as `kubectl describe pod` shows them on a cluster."""
    out = wait_for(kubectl, ["describe", "pod", "box"], lambda out: "Started container main" in out.stdout,
                   "no Started event").stdout
    events = [line.split() for line in out.split("Events:")[1].strip().splitlines()[2:]]
    assert [(e[0], e[1], e[3]) for e in events] == [("Normal", "Scheduled", "volcano"), ("Normal", "Started", "kubelet")]
    assert "Successfully assigned default/box to " in out


def test_the_exit_code_is_kubectls(kubectl, running):
    out = kubectl("exec", "box", "--", "sh", "-c", "exit 3", check=False)
    assert out.returncode == 3 and out.stderr == "command terminated with exit code 3\n"


def test_stdin(kubectl, running):
    assert kubectl("exec", "-i", "box", "--", "sh", "-c", "tr a-z A-Z", input="piped in\n").stdout == "PIPED IN\n"


@pytest.mark.parametrize("args, message", [
    pytest.param(["box", "-c", "nope", "--", "true"], "Error from server (BadRequest): container nope is not valid "
                                                      "for pod box", id="unknown-container"),
    pytest.param(["box", "--", "no-such-command-here"], 'error: Internal error occurred: error executing command in '
                 'container: exec: "no-such-command-here": executable file not found in $PATH', id="command-not-found"),
    pytest.param(["missing", "--", "true"], 'Error from server (NotFound): pods "missing" not found', id="no-pod"),
])
def test_refusals_as_kubectl_prints_them(kubectl, running, args, message):
    out = kubectl("exec", *args, check=False)
    assert out.returncode == 1 and out.stderr.strip() == message, out.stderr


def test_a_pod_no_node_runs_and_a_finished_one(kubectl, running):
    kubectl("apply", "-f", "-", input=POD.replace("NAME", "huge").replace(
        "image: busybox", "image: busybox\n      resources: {requests: {cpu: '500'}}"))
    out = kubectl("exec", "huge", "--", "true", check=False)
    assert out.returncode == 1 and "pod huge does not have a host assigned" in out.stderr, out.stderr
    kubectl("apply", "-f", "-", input=POD.replace("NAME", "quick").replace(
        '"while [ ! -e stop ]; do sleep 0.05; done"', '"true"'))
    wait_for(kubectl, ["get", "pod", "quick", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Succeeded",
             "the pod did not end")
    out = kubectl("exec", "quick", "--", "true", check=False)
    assert "cannot exec into a container in a completed pod; current phase is Succeeded" in out.stderr, out.stderr
    kubectl("delete", "pod", "huge", "quick")


def test_a_terminal(kubectl, running):
    """`kubectl exec -it`: a terminal that is the shell's controlling terminal (Ctrl-C interrupts the
    foreground command, not the shell), the size of kubectl's own, and the exit code."""
    master, slave = os.openpty()
    import fcntl
    import struct
    import termios
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    proc = subprocess.Popen([*kubectl.argv, "exec", "-it", "box", "--", "sh"], stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True)
    os.close(slave)
    seen = b""

    def until(text, timeout=30):
        nonlocal seen
        deadline = time.monotonic() + timeout
        while text not in seen:
            assert time.monotonic() < deadline, f"no {text!r} in {seen!r}"
            if select.select([master], [], [], 0.1)[0]:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
    try:
        until(b"# ")
        os.write(master, b"tty; stty size; echo $MY_ENV\n")
        until(b"set-in-the-spec\r\n")
        assert b"/dev/pts/" in seen and b"33 101\r\n" in seen
        os.write(master, b"sleep 30; echo after-sleep\n")
        time.sleep(0.5)
        os.write(master, b"\x03")   # Ctrl-C: the sleep (and its line) is interrupted, the shell stays
        os.write(master, b"echo still-here\n")
        until(b"still-here\r\n")
        assert b"\r\nafter-sleep\r\n" not in seen   # (only the typed line shows it)
        os.write(master, b"exit 7\n")
        assert proc.wait(timeout=30) == 7
        until(b"command terminated with exit code 7")
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_cp_both_ways(kubectl, running, tmp_path):
    (tmp_path / "up.txt").write_text("uploaded\n")
    kubectl("cp", "up.txt", "box:up.txt", cwd=tmp_path)
    assert (running / "up.txt").read_text() == "uploaded\n"
    kubectl("exec", "box", "--", "sh", "-c", "mkdir -p made && echo downloaded > made/down.txt")
    kubectl("cp", "box:made", "got", cwd=tmp_path)
    assert (tmp_path / "got" / "down.txt").read_text() == "downloaded\n"


VIEWED = """
apiVersion: v1
kind: Pod
metadata: {name: vbox}
spec:
  schedulerName: volcano
  restartPolicy: Never
  volumes: [{name: data, emptyDir: {}}]
  containers:
    - name: main
      image: busybox
      command: ["sh", "-c", "echo from-the-container > /data/mine; while [ ! -e /data/stop ]; do sleep 0.05; done"]
      volumeMounts: [{name: data, mountPath: /data}]
"""


def test_exec_and_cp_see_the_containers_mounts_at_their_paths(kubectl, server, tmp_path):
    """A container with a volume at /data (its own view of the file system: executor/mountview.py): `kubectl exec`
    and `kubectl cp` use the absolute paths a cluster's container has."""
    from vclite.executor import mountview
    if mountview.available() is not None:
        pytest.skip(f"no mount namespace on this host: {mountview.available()}")
    kubectl("apply", "-f", "-", input=VIEWED)
    wait_for(kubectl, ["exec", "vbox", "--", "cat", "/data/mine"], lambda out: out.stdout == "from-the-container\n",
             "the container's file is not at /data")
    (tmp_path / "up.txt").write_text("uploaded\n")
    kubectl("cp", "up.txt", "vbox:/data/up.txt", cwd=tmp_path)
    assert kubectl("exec", "vbox", "--", "cat", "/data/up.txt").stdout == "uploaded\n"
    kubectl("cp", "vbox:/data/mine", "got.txt", cwd=tmp_path)
    assert (tmp_path / "got.txt").read_text() == "from-the-container\n"
    assert not os.path.exists("/data/up.txt")
    kubectl("exec", "vbox", "--", "touch", "/data/stop")
    wait_for(kubectl, ["get", "pod", "vbox", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Succeeded",
             "the container did not end")


def test_what_an_exec_left_running_ends_with_the_container(kubectl, running):
    """An exec's background process outlives the exec (as in a container), not the container."""
    proc = subprocess.Popen([*kubectl.argv, "exec", "box", "--", "sh", "-c", "sleep 300 > /dev/null 2>&1 & echo $!"],
                            stdout=subprocess.PIPE, text=True)
    left = int(proc.stdout.readline())
    assert proc.wait(timeout=30) == 0 and alive(left, settle=0)
    (running / "stop").touch()
    wait_for(kubectl, ["get", "pod", "box", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Succeeded",
             "the container did not end")
    assert not alive(left)
    out = kubectl("exec", "box", "--", "true", check=False)
    assert "cannot exec into a container in a completed pod" in out.stderr
