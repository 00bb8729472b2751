"""The lines written without a terminal, end to end: `vcctl run` piped and `vcctl jobflow get NAME -w` piped against
a real `vcctl server` say the same of one flow — what a flow waits on (a probe), why a vcjob failed, what was
skipped, what the exit handler says — each once, a cause before its effect."""
import contextlib
import re
import shutil
import socket
import subprocess
import sys
import threading

import pytest

from tests import vcctl_server
from tests.jobs_yaml import template
from tests.e2e.conftest import ROOT, VCCTL

pytestmark = pytest.mark.e2e
STAMP = re.compile(r"^\[\s*\d+\.\d+s\] ")


def manifest(port):
    """serve answers HTTP after a second, for three seconds; client waits for it (a probe), then fails; after is
    skipped; notify, the exit handler, runs a second."""
    http = f'{sys.executable} -m http.server {port} --bind 127.0.0.1'
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: lines}}
spec:
  onExit: lines-notify
  flows:
    - name: lines-notify
    - name: lines-serve
    - name: lines-client
      dependsOn:
        targets: [lines-serve]
        probe:
          httpGetList: [{{taskName: t, port: {port}, path: /}}]
    - name: lines-after
      dependsOn: {{targets: [lines-client]}}
""" + "".join("---\n" + template(name, command) for name, command in (
        ("lines-serve", ["sh", "-c", f"sleep 1; timeout 3 {http} >/dev/null 2>&1; true"]),
        ("lines-client", ["sh", "-c", "exit 3"]), ("lines-after", ["true"]), ("lines-notify", ["sleep", "1"])))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lines_of(out):
    return [STAMP.sub("", ln) for ln in out.splitlines() if STAMP.match(ln)]


def check(lines):
    """What both commands write of the flow `lines`."""
    assert any(ln.startswith("JobFlow default/lines: flow lines-client: waiting for probe: lines-lines-serve")
               for ln in lines), lines
    why = "vcjob default/lines-lines-client: pod lines-lines-client-t-0: container main exited with code 3 (Error)"
    assert why in lines, lines
    failed = lines.index("vcjob default/lines-lines-client: Failed")
    assert failed < lines.index(why) < lines.index("JobFlow default/lines: Failed"), lines
    assert "JobFlow default/lines: flow lines-after: Skipped: dependsOn target lines-client was Failed" in lines or \
        any(ln.startswith("JobFlow default/lines: flow lines-after: not created") for ln in lines), lines
    assert "vcjob default/lines-lines-notify: exit handler: the JobFlow is Failed once it has run (lines-client " \
           "failed)" in lines, lines
    details = [ln for ln in lines if not ln.endswith(tuple(f": {p}" for p in (
        "Pending", "Running", "Completed", "Failed", "Succeed")))]
    assert len(details) == len(set(details)), lines   # (each said once, not again while unchanged)


def test_vcctl_run_piped(tmp_path):
    path = tmp_path / "lines.yaml"
    path.write_text(manifest(free_port()))
    proc = subprocess.run([VCCTL, "run", str(path), "--timeout", "60"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr
    check(lines_of(proc.stdout))


def test_vcctl_jobflow_get_w_piped(tmp_path):
    path = tmp_path / "lines.yaml"
    path.write_text(manifest(free_port()))
    with vcctl_server.running(tmp_path / "server", "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        def vcctl(*args, timeout=60):
            return subprocess.run([VCCTL, *map(str, args), "-k", str(srv.kubeconfig)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=timeout)
        assert vcctl("jobtemplate", "create", "-f", path).returncode == 0
        assert vcctl("jobflow", "create", "-f", path).stdout == "Created JobFlow: default/lines\n"
        proc = vcctl("jobflow", "get", "lines", "-w", timeout=120)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    check(lines_of(proc.stdout))


CRASHING = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: crashing}
spec:
  flows:
    - name: crashing-main
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: crashing-main}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: main
              image: busybox
              command: ["sh", "-c", "exit 4"]
"""
CRASH_LINE = ("pod default/crashing-crashing-main-main-0: container main is restarted by restartPolicy OnFailure, "
              "with back-off (last run: exit code 4")


@contextlib.contextmanager
def watched_flow(tmp_path, path, name, limit, before=None):
    """A `vcctl server` given the JobTemplates and JobFlow of `path`, and `vcctl jobflow get NAME -w` piped from it:
    yields (vcctl, proc); the watch is killed after `limit` seconds (a line that never comes ends the reads, and the
    test fails) and at the end. `before(kubectl)`: what happens between the JobFlow's creation and the watch's start
    (a late start)."""
    with vcctl_server.running(tmp_path / "server", "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        def vcctl(*args):
            return subprocess.run([VCCTL, *map(str, args), "-k", str(srv.kubeconfig)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=60)
        assert vcctl("jobtemplate", "create", "-f", path).returncode == 0
        assert vcctl("jobflow", "create", "-f", path).returncode == 0
        if before is not None:
            before(vcctl_server.kubectl_runner(srv.kubeconfig, tmp_path / "kube-cache"))
        proc = subprocess.Popen([VCCTL, "jobflow", "get", name, "-w", "-k", str(srv.kubeconfig)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        timer = threading.Timer(limit, proc.kill)
        timer.start()
        try:
            yield vcctl, proc
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_vcctl_jobflow_get_w_piped_says_a_crash_loop_once_as_run_does(tmp_path):
    path = tmp_path / "crashing.yaml"
    path.write_text(CRASHING)
    seen = []
    with watched_flow(tmp_path, path, "crashing", 90) as (vcctl, proc):
        for line in proc.stdout:
            seen.append(STAMP.sub("", line.rstrip("\n")))
            if seen[-1].startswith(CRASH_LINE):
                break
        assert vcctl("jobflow", "delete", "-N", "crashing").returncode == 0
        out, _ = proc.communicate(timeout=60)
    lines = seen + [STAMP.sub("", ln) for ln in out.splitlines()]
    assert sum(ln.startswith(CRASH_LINE) for ln in lines) == 1, lines
    assert "JobFlow default/crashing was deleted" in lines, lines


def restarting(go, marker):
    """A flow of one vcjob whose first pod waits for the file `go`, then fails; its PodFailed → RestartJob policy
    restarts the job, whose next pod succeeds (`marker` says it ran once)."""
    script = f"if [ -e {marker} ]; then exit 0; fi; while [ ! -e {go} ]; do sleep 0.05; done; touch {marker}; exit 1"
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: restarting}}
spec:
  flows:
    - name: main
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: main}}
spec:
  minAvailable: 1
  schedulerName: volcano
  maxRetry: 3
  policies:
    - {{event: PodFailed, action: RestartJob}}
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - {{name: main, image: busybox, command: ["sh", "-c", "{script}"]}}
"""


def test_vcctl_jobflow_get_w_piped_writes_every_phase_of_a_restart_in_order(tmp_path):
    """Restarting, Pending, Running again come within a moment of the pod's failure: each has its line, in order,
    as `vcctl run` writes them (lines from reads of the last state said Running, then Completed)."""
    go, marker = tmp_path / "go", tmp_path / "ran-once"
    path = tmp_path / "restarting.yaml"
    path.write_text(restarting(go, marker))
    seen = []
    with watched_flow(tmp_path, path, "restarting", 120) as (vcctl, proc):
        for line in proc.stdout:   # (the first pod runs, seen by the watch: then it may fail)
            seen.append(STAMP.sub("", line.rstrip("\n")))
            if seen[-1] == "vcjob default/restarting-main: Running":
                go.touch()
                break
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (seen, out, err)
    lines = seen + lines_of(out)
    phases = [ln.split(": ", 1)[1] for ln in lines if ln.startswith("vcjob default/restarting-main: ")
              and ln.split(": ", 1)[1] in ("Pending", "Running", "Restarting", "Completed", "Failed")]
    assert phases[phases.index("Running"):] == ["Running", "Restarting", "Pending", "Running", "Completed"], lines


def chained(go):
    """A flow of two vcjobs, second after first; second runs until the file `go` exists."""
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: late}}
spec:
  flows:
    - name: first
    - name: second
      dependsOn: {{targets: [first]}}
---
""" + template("first", ["true"]) + "---\n" + template(
        "second", ["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.05; done"])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("finished", [pytest.param(True, id="after-the-flow-finished"),
                                      pytest.param(False, id="mid-flow")])
def test_vcctl_jobflow_get_w_piped_started_late_lists_in_the_order_things_happened(tmp_path, finished):
    """Started late, the listed objects' lines come in the order they reached their phase, not by their current
    resourceVersion: the first vcjob, labelled after it ended (written again), still comes before the second and
    the JobFlow's end; then the live changes."""
    go = tmp_path / "go"
    path = tmp_path / "late.yaml"
    path.write_text(chained(go))

    def phase(kubectl, kind, name):
        return kubectl("get", kind, name, "-o", "jsonpath={.status.state.phase}", check=False).stdout

    def before(kubectl):
        if finished:
            go.touch()
        vcctl_server.wait_until(lambda: phase(kubectl, "jobflow", "late") == "Succeed" if finished else
                                phase(kubectl, "vcjob", "late-second") == "Running", "the flow's progress")
        kubectl("label", "vcjob", "late-first", "seen=yes")   # (written again after it ended: a newer version)
    with watched_flow(tmp_path, path, "late", 90, before) as (_, proc):
        seen = []
        for line in proc.stdout:
            seen.append(STAMP.sub("", line.rstrip("\n")))
            if seen[-1] == "vcjob default/late-second: Running":
                go.touch()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (seen, out, err)
    phases = [ln for ln in seen if ln.startswith(("vcjob ", "JobFlow ")) and ": " in ln]
    expected = ["vcjob default/late-first: Completed", "vcjob default/late-second: Completed",
                "JobFlow default/late: Succeed"]
    if not finished:
        expected = ["JobFlow default/late: Running", "vcjob default/late-first: Completed",
                    "vcjob default/late-second: Running", *expected[1:]]
    assert phases == expected, seen
