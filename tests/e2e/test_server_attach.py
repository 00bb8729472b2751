"""`kubectl attach` (and `kubectl run -i`, which attaches) against a real `vcctl server`, with the real
kubectl binary (its WebSocket attach, v5.channel.k8s.io): a running container's output from the moment
kubectl joins to the container's end, stdin into a container with `stdin: true` (kept open between
clients, or closed after one with `stdinOnce`), stdin to a container without it dropped, and the
refusals kubectl prints as against a cluster."""
import json
import os
import re
import select
import shutil
import subprocess
import time

import pytest

from tests.e2e.test_server_kubectl import wait_for

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
      command: ["sh", "-c", SCRIPT]
"""
TICKER = ('i=0; while [ ! -e stop ]; do i=$((i+1)); echo "tick $i"; echo "err $i" >&2; sleep 0.05; done; '
          'echo bye')
READER = "while read l; do echo got $l; done; echo stdin-closed"


def start_pod(kubectl, name, script, phase="Running", **container):
    spec = POD.replace("NAME", name).replace("SCRIPT", json.dumps(script))
    for key, value in container.items():
        spec += f"      {key}: {json.dumps(value)}\n"
    kubectl("apply", "-f", "-", input=spec)
    wait_for(kubectl, ["get", "pod", name, "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == phase,
             f"pod {name} is not {phase}")


def attach(kubectl, *args, stdin=subprocess.DEVNULL):
    return subprocess.Popen([*kubectl.argv, "attach", "-q", *args], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def read_line(proc, timeout=30):
    """The next line kubectl prints (a readiness wait for output, not an assertion on time)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "kubectl printed nothing"
    return proc.stdout.readline().decode()


def test_the_output_from_where_kubectl_joins_until_the_container_ends(kubectl, server):
    """Not the history: the first line kubectl prints is newer than the log's last line before it
    joined; stdout and stderr (merged, as in the log); the end is the container's, and kubectl exits 0."""
    start_pod(kubectl, "ticker", TICKER)
    wait_for(kubectl, ["logs", "ticker"], lambda out: "tick 3" in out.stdout, "no output")
    before = int(re.findall(r"tick (\d+)", kubectl("logs", "ticker").stdout)[-1])
    proc = attach(kubectl, "ticker")
    try:
        first = read_line(proc)
        lines = [first] + [read_line(proc) for _ in range(5)]
        (server.data_dir / "pods" / "default" / "ticker" / "stop").touch()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    numbers = [int(n) for line in lines for n in re.findall(r"(?:tick|err) (\d+)", line)]
    assert numbers[0] > before, (before, lines)
    assert {line.split()[0] for line in lines} == {"tick", "err"}
    assert proc.returncode == 0 and out.decode().endswith("bye\n") and err == b""
    wait_for(kubectl, ["get", "pod", "ticker", "-o", "jsonpath={.status.phase}"],
             lambda out: out.stdout == "Succeeded", "the pod did not end")
    out = kubectl("attach", "ticker", check=False)
    assert out.returncode == 1 and "cannot attach a container in a completed pod; current phase is Succeeded" \
        in out.stderr, out.stderr


def test_stdin_goes_to_a_container_with_stdin_and_stays_open_between_clients(kubectl):
    """`stdin: true`: what kubectl reads goes to the container; kubectl's stdin ending detaches it (exit
    0), the container reads on, and the next client's lines reach it too."""
    start_pod(kubectl, "reader", READER, stdin=True)
    for word in ("hello", "again"):
        proc = attach(kubectl, "-i", "reader", stdin=subprocess.PIPE)
        try:
            proc.stdin.write(f"{word}\n".encode())
            proc.stdin.flush()
            assert read_line(proc) == f"got {word}\n"
            proc.stdin.close()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    assert kubectl("get", "pod", "reader", "-o", "jsonpath={.status.phase}").stdout == "Running"
    assert kubectl("logs", "reader").stdout == "got hello\ngot again\n"


def test_stdin_once_closes_the_containers_stdin_after_the_client(kubectl):
    start_pod(kubectl, "once", "tr a-z A-Z; echo stdin-closed", stdin=True, stdinOnce=True)
    out = kubectl("attach", "-q", "-i", "once", input="shout\n")
    assert out.stdout == "SHOUT\nstdin-closed\n"
    wait_for(kubectl, ["get", "pod", "once", "-o", "jsonpath={.status.phase}"],
             lambda out: out.stdout == "Succeeded", "the container did not end at its stdin's end")


def test_stdin_to_a_container_without_it_goes_nowhere_and_the_output_goes_on(kubectl, server):
    """As containerd's attach: the container reads /dev/null, the attach lasts until the container ends."""
    start_pod(kubectl, "deaf", 'while [ ! -e go ]; do sleep 0.05; done; read x; echo "read [$x]"')
    proc = attach(kubectl, "-i", "deaf", stdin=subprocess.PIPE)
    try:
        proc.stdin.write(b"typed\n")
        proc.stdin.close()
        time.sleep(0.5)   # (time for kubectl to send its stdin and its end: a detached client would exit 0, silent)
        assert proc.poll() is None
        (server.data_dir / "pods" / "default" / "deaf" / "go").touch()
        out = proc.stdout.read()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out) == (0, b"read []\n")


def test_kubectl_run_with_stdin_attaches(kubectl):
    """`kubectl run -i` makes a pod with stdin and stdinOnce, attaches to it, and exits with its code."""
    out = kubectl("run", "upper", "-i", "--rm", "--restart=Never", "--image=busybox",
                  '--overrides={"spec": {"schedulerName": "volcano"}}', "--command", "--", "sh", "-c",
                  "tr a-z A-Z; exit 3", input="from kubectl run\n", check=False)
    assert out.returncode == 3 and out.stdout.startswith("FROM KUBECTL RUN\n"), out


@pytest.mark.parametrize("pod, args, message", [
    pytest.param(None, ["missing"], 'Error from server (NotFound): pods "missing" not found', id="no-pod"),
    pytest.param("huge", ["huge"], "Error from server (BadRequest): pod huge does not have a host assigned",
                 id="pending-no-node"),
    pytest.param("initing", ["initing", "-c", "main"],
                 "error: unable to upgrade connection: container main not found in pod initing_default",
                 id="pending-container-not-started"),
])
def test_refusals_as_kubectl_prints_them(kubectl, pod, args, message):
    if pod == "huge":
        kubectl("apply", "-f", "-", input=POD.replace("NAME", "huge").replace("SCRIPT", '"sleep 60"').replace(
            "image: busybox", "image: busybox\n      resources: {requests: {cpu: '500'}}"))
    elif pod == "initing":
        kubectl("apply", "-f", "-", input=POD.replace("NAME", "initing").replace("SCRIPT", '"sleep 60"').replace(
            "  containers:", "  initContainers:\n    - {name: setup, image: busybox, command: [sleep, '60']}\n"
                             "  containers:"))
        wait_for(kubectl, ["get", "pod", "initing", "-o", "jsonpath={.status.initContainerStatuses[0].state}"],
                 lambda out: "running" in out.stdout, "the init container did not start")
    out = kubectl("attach", "-q", *args, check=False)
    assert out.returncode == 1 and out.stderr.strip() == message, out.stderr
    if pod:
        kubectl("delete", "pod", pod, "--grace-period=0")


def test_a_terminal_is_refused_with_what_to_do(kubectl):
    """`kubectl attach -it` from a terminal, to a container with `tty: true`: no container has a terminal
    here, so the server says so (kubectl asks for one whenever the container's spec has it)."""
    start_pod(kubectl, "withtty", READER, stdin=True, tty=True)
    master, slave = os.openpty()
    proc = subprocess.Popen([*kubectl.argv, "attach", "-q", "-it", "withtty"], stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        assert proc.wait(timeout=30) == 1
        while select.select([master], [], [], 0.5)[0]:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert b"Error from server (BadRequest): container main has no terminal" in seen, seen
