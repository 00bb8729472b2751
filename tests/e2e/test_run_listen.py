"""`vcctl run --listen HOST:PORT`: the run serves the Kubernetes-compatible API while it runs, so the real
kubectl watches its JobFlow and `vcctl jobflow suspend/resume` (pointed at the kubeconfig it prints) holds
and releases it from another process; a run that serves waits for a client when nothing else can move on, and
its scheduler follows Volcano's scheduler ConfigMap applied with kubectl (unless --scheduler-conf is given)."""
from __future__ import annotations

import re
import shlex
import signal
import socket
import subprocess
import threading
import time

from tests import jobs_yaml, vcctl_server
from tests.e2e import test_scheduler_conf as scheduler_conf
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


def test_a_flow_suspended_in_its_file_is_told_the_command_that_resumes_it_through_the_runs_api(tmp_path, write):
    """Its flows' lines name `vcctl jobflow resume` with the run's kubeconfig (no client finds it by itself); the
    stop (--timeout) says no client resumed it."""
    path = write("flow.yaml", FLOW.replace("metadata: {name: f}",
                                           'metadata: {name: f, annotations: {flow.volcano.sh/suspend: "true"}}'))
    r = subprocess.run([VCCTL, "run", "--listen", "127.0.0.1:0", "--timeout", "2", "--workdir", tmp_path / "work",
                        path], cwd=ROOT, capture_output=True, text=True, timeout=120)
    kubeconfig = re.search(r"kubeconfig: (\S+)\)", r.stderr).group(1)
    assert r.returncode == 1, r
    assert f"JobFlow default/f: flow slow: dependencies are met; the JobFlow is suspended (vcctl jobflow resume f -k " \
           f"{kubeconfig})" in r.stdout, r
    assert 'JobFlow default/f is suspended (annotation flow.volcano.sh/suspend: "true"): no client resumed it while ' \
           "the run served its API; remove the annotation to run it" in r.stderr, r


def test_the_commands_a_run_prints_work_when_pasted_into_a_shell_with_a_workdir_path_that_needs_quotes(
        tmp_path, write):
    """The kubeconfig lives under the workdir: a space or a quote in its path is quoted in every command printed
    (the resume command of a suspended flow, the suspend and kubectl lines), so a pasted command reaches the run."""
    path = write("flow.yaml", FLOW.replace("metadata: {name: f}",
                                           'metadata: {name: f, annotations: {flow.volcano.sh/suspend: "true"}}'))
    workdir = tmp_path / "my work's dir"
    run = subprocess.Popen([VCCTL, "run", "--listen", "127.0.0.1:0", "--timeout", "90", "--workdir", workdir, path],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = Lines(run.stdout), Lines(run.stderr)
        suspend = err.wait_for(r"\n  (vcctl jobflow suspend NAME -k .*)\n").group(1)
        kubeconfig = str(workdir / ".api" / "kubeconfig")
        assert shlex.split(suspend)[-2:] == ["-k", kubeconfig], suspend
        assert shlex.split(err.wait_for(r"\n  (kubectl --kubeconfig .*)\n").group(1))[1:3] == [
            "--kubeconfig", kubeconfig], err.text
        resume = out.wait_for(r"the JobFlow is suspended \((vcctl jobflow resume .*)\)\n").group(1)
        pasted = subprocess.run(["sh", "-c", shlex.quote(VCCTL) + resume.removeprefix("vcctl")], capture_output=True,
                                text=True, timeout=60)
        assert pasted.returncode == 0, (resume, pasted.stderr)
        assert run.wait(timeout=60) == 0, err.text
    finally:
        run.kill()
    assert "succeeded: JobFlow default/f Succeed" in err.text, err.text


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


def _serving_run(tmp_path, path, *extra):
    """`vcctl run --listen` of `path` on two nodes of 4 cpus; (the process, its stderr, kubectl on its API)."""
    run = subprocess.Popen([VCCTL, "run", "--listen", "127.0.0.1:0", "--nodes", scheduler_conf.NODES, *extra,
                            "--workdir", tmp_path / "work", path],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = Lines(run.stderr)
    kubeconfig = err.wait_for(r"kubeconfig: (\S+)\)").group(1)
    return run, err, vcctl_server.kubectl_runner(kubeconfig, tmp_path / "kube-cache")


HELD = FLOW.replace("metadata: {name: f}", 'metadata: {name: f, annotations: {flow.volcano.sh/suspend: "true"}}')


def test_a_serving_run_follows_the_scheduler_configmap_applied_with_kubectl(tmp_path, write):
    """As `vcctl server` does: Volcano's default spreads the pair, binpack applied with kubectl packs the next."""
    run, err, kubectl = _serving_run(tmp_path, write("flow.yaml", HELD))   # (the held flow keeps the run serving)
    try:
        def nodes_of(job: str) -> set[str]:
            def placed():
                out = kubectl("get", "pods", "-l", f"volcano.sh/job-name={job}", "-o",
                              "jsonpath={.items[*].spec.nodeName}").stdout.split()
                return set(out) if len(out) == 2 else None
            return vcctl_server.wait_until(placed, f"the pods of {job} placed")

        kubectl("apply", "-f", "-", input=scheduler_conf.PAIR.replace("name: pair", "name: spread"))
        assert len(nodes_of("spread")) == 2
        kubectl("create", "namespace", "volcano-system")
        kubectl("apply", "-f", "-", input=scheduler_conf._scheduler_configmap(scheduler_conf.BINPACK_CONF))
        loaded = vcctl_server.wait_until(lambda: kubectl(
            "get", "events", "-n", "volcano-system", "--field-selector", "reason=SchedulerConfLoaded", "-o",
            "jsonpath={.items[*].message}").stdout, "the conf loaded")
        assert loaded.startswith("loaded volcano-scheduler.conf (actions: enqueue"), loaded
        kubectl("apply", "-f", "-", input=scheduler_conf.PAIR.replace("name: pair", "name: packed"))
        assert len(nodes_of("packed")) == 1
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130, err.text
    finally:
        run.kill()


def test_a_serving_run_with_a_conf_option_tells_the_configmap_it_is_not_read(tmp_path, write):
    conf = write("binpack.conf", scheduler_conf.BINPACK_CONF)
    run, err, kubectl = _serving_run(tmp_path, write("flow.yaml", HELD), "--scheduler-conf", conf)
    try:
        kubectl("create", "namespace", "volcano-system")
        kubectl("apply", "-f", "-", input=scheduler_conf._scheduler_configmap(scheduler_conf.BAD_CONF))
        told = vcctl_server.wait_until(lambda: kubectl(
            "get", "events", "-n", "volcano-system", "--field-selector", "reason=SchedulerConfNotRead", "-o",
            "jsonpath={.items[*].message}").stdout, "the warning")
        assert told == f"not read: --scheduler-conf {conf} configures the scheduler (restart the run without it " \
                       "for this ConfigMap to)"
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130, err.text
    finally:
        run.kill()


def test_a_suspended_standalone_vcjob_waits_for_its_resume(tmp_path, write):
    """`vcctl job suspend` aborts a standalone vcjob: a run that serves its API does not end there (Aborted is
    resumable), and `vcctl job resume` lets it run to Completed (the run then ends 0)."""
    path = write("job.yaml", jobs_yaml.vcjob("j", ["sleep", "5"]))
    run = subprocess.Popen([VCCTL, "run", "--listen", "127.0.0.1:0", "--timeout", "90", "--workdir",
                            tmp_path / "work", path], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        err = Lines(run.stderr)
        kubeconfig = err.wait_for(r"kubeconfig: (\S+)\)").group(1)
        kubectl = vcctl_server.kubectl_runner(kubeconfig, tmp_path / "kube-cache")
        suspended = subprocess.run([VCCTL, "job", "suspend", "-N", "j", "-k", kubeconfig], capture_output=True,
                                   text=True, timeout=60)
        assert suspended.returncode == 0, suspended.stdout + suspended.stderr
        err.wait_for("the run waits for a client of its API")
        assert run.poll() is None, err.text   # (it used to end here: Aborted counted as finished, exit 1)
        phase = kubectl("get", "vcjob", "j", "-o", "jsonpath={.status.state.phase}").stdout
        assert phase == "Aborted", phase
        resumed = subprocess.run([VCCTL, "job", "resume", "-N", "j", "-k", kubeconfig], capture_output=True,
                                 text=True, timeout=60)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert run.wait(timeout=60) == 0, err.text
    finally:
        run.kill()
    assert "succeeded: vcjob default/j Completed" in err.text, err.text
