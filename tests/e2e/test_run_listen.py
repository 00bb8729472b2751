"""`vcctl run --listen HOST:PORT`: the run serves the Kubernetes-compatible API while it runs, so the real
kubectl watches its JobFlow and `vcctl jobflow suspend/resume` (pointed at the kubeconfig it prints) holds
and releases it from another process; a run that serves waits for a client when nothing else can move on."""
from __future__ import annotations

import re
import signal
import socket
import subprocess
import threading
import time

from tests import jobs_yaml, vcctl_server
from tests.e2e.conftest import ROOT, VCCTL

FLOW = jobs_yaml.template("slow", ["sleep", "3"]) + "---\n" + jobs_yaml.template("quick", ["true"]) + """---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
  - name: slow
  - name: quick
    dependsOn: {targets: [slow]}
"""


class Lines:
    """A process's stderr, read on a thread: `wait_for(pattern)` returns the first match."""

    def __init__(self, stream):
        self.text, self._cond = "", threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            with self._cond:
                self.text += line
                self._cond.notify_all()

    def wait_for(self, pattern, timeout=60):
        end = time.monotonic() + timeout
        with self._cond:
            while not (m := re.search(pattern, self.text)):
                left = end - time.monotonic()
                assert left > 0, f"no {pattern!r} in:\n{self.text}"
                self._cond.wait(left)
            return m


def test_kubectl_watches_and_vcctl_suspends_and_resumes_a_running_flow(tmp_path, write):
    path = write("flow.yaml", FLOW)
    workdir = tmp_path / "work"
    run = subprocess.Popen([VCCTL, "run", "--listen", "127.0.0.1:0", "--timeout", "90", "--workdir", workdir, path],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = Lines(run.stderr)
        kubeconfig = err.wait_for(r"kubeconfig: (\S+)\)").group(1)
        kubectl = vcctl_server.kubectl_runner(kubeconfig, tmp_path / "kube-cache")
        watch = subprocess.Popen([*kubectl.argv, "get", "jf", "-w", "--no-headers"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        suspended = subprocess.run([VCCTL, "jobflow", "suspend", "f", "-k", kubeconfig], capture_output=True,
                                   text=True, timeout=60)
        assert suspended.returncode == 0, suspended.stderr
        # slow finishes; quick is not started while f is suspended: nothing else can move it on
        err.wait_for("the run waits for a client of its API")
        got = kubectl("get", "vcjob", "-o", "name").stdout.split()
        assert got == ["job.batch.volcano.sh/f-slow"], got
        resumed = subprocess.run([VCCTL, "jobflow", "resume", "f", "-k", kubeconfig], capture_output=True,
                                 text=True, timeout=60)
        assert resumed.returncode == 0, resumed.stderr
        assert run.wait(timeout=60) == 0, err.text
        watch.terminate()
        seen = watch.communicate(timeout=30)[0]
    finally:
        run.kill()
    phases = [line.split()[1] for line in seen.splitlines() if line.startswith("f ")]
    assert phases[-1] == "Succeed" and "Running" in phases, seen
    assert "succeeded: JobFlow default/f Succeed" in err.text, err.text
    assert not (workdir / ".api").exists()   # (the token and the kubeconfig end with the run)


def test_bad_listen_addresses(vcctl, write):
    path = write("flow.yaml", FLOW)
    r = vcctl("run", "--listen", "localhost", path)
    assert r.code == 2 and "expected HOST:PORT with a port of 0..65535" in r.err, r
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = vcctl("run", "--listen", f"127.0.0.1:{port}", path)
    assert r.code == 1 and f"error: cannot listen on 127.0.0.1:{port}" in r.err and "nothing was run" in r.err, r


def test_ctrl_c_stops_a_run_waiting_for_a_client(tmp_path, write):
    path = write("flow.yaml", FLOW.replace("metadata: {name: f}",
                                           'metadata: {name: f, annotations: {flow.volcano.sh/suspend: "true"}}'))
    run = subprocess.Popen([VCCTL, "run", "--listen", "127.0.0.1:0", "--workdir", tmp_path / "work", path],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = Lines(run.stderr)
        err.wait_for("the run waits for a client of its API")
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130, err.text
    finally:
        run.kill()
    err.wait_for("interrupted: every pod was stopped")
    assert not (tmp_path / "work" / ".api").exists()


SLEEPER = jobs_yaml.vcjob("sleeper", ["sleep", "600"], grace=5)


def test_ctrl_c_stops_the_pods_before_the_api_so_a_watcher_sees_them_end(tmp_path, write):
    path = write("job.yaml", SLEEPER)
    run = subprocess.Popen([VCCTL, "run", "--listen", "127.0.0.1:0", "--workdir", tmp_path / "work", path],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watch = None
    try:
        err = Lines(run.stderr)
        kubeconfig = err.wait_for(r"kubeconfig: (\S+)\)").group(1)
        kubectl = vcctl_server.kubectl_runner(kubeconfig, tmp_path / "kube-cache")
        watch = subprocess.Popen([*kubectl.argv, "get", "pods", "-w", "-o",
                                  'jsonpath={.metadata.name} {.status.phase} {.status.reason}{"\\n"}'],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = Lines(watch.stdout)
        seen.wait_for(r"sleeper-t-0 Running")
        # (that line may come from kubectl's list, before its watch reaches the server: a change to the pod seen
        # in a second line says the watch is there, so the pod's end cannot be written before it watches)
        kubectl("label", "pod", "sleeper-t-0", "watched=yes")
        seen.wait_for(r"(?s)sleeper-t-0 Running.*sleeper-t-0 Running")
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130, err.text
        ended = seen.wait_for(r"sleeper-t-0 Failed (\S+)")   # (the pod's last status, written before the API closed)
    finally:
        run.kill()
        if watch is not None:
            watch.kill()
    assert ended.group(1) == "Terminated", seen.text   # (the kubelet's graceful node shutdown)
    assert not (tmp_path / "work" / ".api").exists()
