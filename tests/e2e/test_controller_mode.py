"""`vcctl controller` (the real-cluster mode) against a real `vcctl server` that runs without its own
JobFlow controllers (`--controllers *,-jobflow-controller,-jobtemplate-controller`, as Volcano's
controller manager would be started beside it): the server plays the cluster (vcjob controller,
scheduler, pods), the controller process turns the JobFlow into vcjobs over HTTPS, kubectl watches.
"""
import shutil
import signal
import subprocess
import time

import pytest
import yaml

from tests import vcctl_server
from tests.e2e.conftest import ROOT

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]
DIAMOND = ROOT / "examples" / "diamond.yaml"
VCCTL = vcctl_server.VCCTL
WITHOUT_JOBFLOWS = "*,-jobflow-controller,-jobtemplate-controller"


def kubectl(server, *args, check=True):
    proc = subprocess.run(["kubectl", "--kubeconfig", str(server.kubeconfig), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, f"kubectl {' '.join(map(str, args))}: {proc.stderr}"
    return proc.stdout


def test_the_controller_process_runs_the_flow_the_server_only_stores(tmp_path):
    with vcctl_server.running(tmp_path / "server", "--nodes", "1x(cpu=4,memory=8Gi)",
                              "--controllers", WITHOUT_JOBFLOWS) as srv:
        kubectl(srv, "apply", "-f", DIAMOND)
        time.sleep(1.5)
        assert kubectl(srv, "get", "vcjob", "-o", "name").strip() == ""   # nobody reconciles JobFlows yet
        assert kubectl(srv, "get", "jf", "diamond", "-o", "jsonpath={.status.state.phase}") == ""
        log = open(tmp_path / "controller.log", "w")
        ctl = subprocess.Popen([VCCTL, "controller", "--kubeconfig", str(srv.kubeconfig)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 120
            while kubectl(srv, "get", "jf", "diamond", "-o", "jsonpath={.status.state.phase}") != "Succeed":
                assert ctl.poll() is None, (tmp_path / "controller.log").read_text()
                assert time.monotonic() < deadline, "the flow did not finish"
                time.sleep(0.3)
            jobs = kubectl(srv, "get", "vcjob", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.state.phase} "
                                                      "{end}").split()
            assert sorted(jobs) == [f"diamond-{f}=Completed" for f in "abcde"]
            events = kubectl(srv, "get", "events", "--field-selector", "involvedObject.kind=JobFlow")
            assert "create a job named diamond-e!" in events
            template = yaml.safe_load(kubectl(srv, "get", "jt", "a", "-o", "yaml"))
            assert template["status"]["jobDependsOnList"] == ["diamond-a"]
        finally:
            ctl.send_signal(signal.SIGTERM)
            code = ctl.wait(timeout=30)
            log.close()
        text = (tmp_path / "controller.log").read_text()
        assert code == 0, text
        assert "reconciling JobFlows and JobTemplates on https://127.0.0.1:" in text and "stopped" in text


# Shorter terms than the defaults (15s, 10s, 2s), still ones a loaded machine keeps: the leader must renew
# within the renew deadline or exit (as it must). With 2s a starved test machine lost the new leader mid-flow
# ("no answer from the API server within 2s": the server, starting pods, answered nothing for 2-3 s), leaving
# no replica to run the flow; 6s leaves twice the longest such stall seen.
FAST_ELECTION = ["--leader-elect-lease-duration", "8s", "--leader-elect-renew-deadline", "6s",
                 "--leader-elect-retry-period", "1s"]


def _logs(*logs):
    return "".join(f"\n--- {log.name}:\n{log.read_text() if log.exists() else ''}" for log in logs)


def _wait_for(predicate, what, timeout=60, alive=(), logs=()):
    """Wait for `predicate`; fail at once, with the replicas' logs, if one of `alive` exits meanwhile."""
    deadline = time.monotonic() + timeout
    while not predicate():
        for proc in alive:
            assert proc.poll() is None, f"{what}: a replica exited ({proc.returncode}){_logs(*logs)}"
        assert time.monotonic() < deadline, f"{what}{_logs(*logs)}"
        time.sleep(0.2)


def _replica(srv, log):
    return subprocess.Popen([VCCTL, "controller", "-k", str(srv.kubeconfig), *FAST_ELECTION], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"))


def _lease(srv):
    return yaml.safe_load(kubectl(srv, "get", "lease", "-n", "volcano-system", "vclite-controller", "-o", "yaml"))


def test_replicas_one_leads_a_paused_leader_loses_the_lease_a_stopped_one_hands_it_over(tmp_path):
    with vcctl_server.running(tmp_path / "server", "--nodes", "1x(cpu=4,memory=8Gi)",
                              "--controllers", WITHOUT_JOBFLOWS) as srv:
        a_log, b_log, c_log = logs = [tmp_path / f"{name}.log" for name in "abc"]
        replicas = []
        try:
            replicas.append(_replica(srv, a_log))
            _wait_for(lambda: "reconciling" in a_log.read_text(), "the first replica did not lead",
                      alive=replicas, logs=logs)
            replicas.append(_replica(srv, b_log))
            _wait_for(lambda: "standing by: Lease volcano-system/vclite-controller is held by" in b_log.read_text(),
                      "the second replica did not stand by", alive=replicas, logs=logs)
            a_id = _lease(srv)["spec"]["holderIdentity"]
            assert f"as {a_id}" in a_log.read_text() and "reconciling" not in b_log.read_text()
            # a stops renewing (paused past its term): b takes over; a, woken, finds it lost the lease
            replicas[0].send_signal(signal.SIGSTOP)
            _wait_for(lambda: "reconciling" in b_log.read_text(), "the standby did not take over", timeout=30,
                      alive=replicas[1:], logs=logs)
            replicas[0].send_signal(signal.SIGCONT)
            assert replicas[0].wait(timeout=30) == 1, _logs(*logs)
            # (why its last renewal failed depends on where the pause caught it: before a request, the lease
            # it reads is held by b; in the middle of one, the request's own deadline has passed)
            lost = a_log.read_text().split("lost the lease: not renewed within 6s: ", 1)
            assert len(lost) == 2 and lost[1].startswith(
                ("Lease volcano-system/vclite-controller is held by", "no answer from the API server")), lost
            spec = _lease(srv)["spec"]
            b_id = spec["holderIdentity"]
            assert b_id != a_id and spec["leaseTransitions"] == 1
            kubectl(srv, "apply", "-f", DIAMOND)
            _wait_for(lambda: kubectl(srv, "get", "jf", "diamond", "-o", "jsonpath={.status.state.phase}") == "Succeed",
                      "the new leader did not run the flow", timeout=120, alive=replicas[1:], logs=logs)
            # a graceful stop releases the lease: a new replica leads at once, not a term later
            replicas.append(_replica(srv, c_log))
            _wait_for(lambda: "standing by" in c_log.read_text(), "the third replica did not stand by",
                      alive=replicas[1:], logs=logs)
            replicas[1].send_signal(signal.SIGTERM)
            assert replicas[1].wait(timeout=30) == 0, _logs(*logs)
            _wait_for(lambda: "reconciling" in c_log.read_text(), "the third replica did not take over", timeout=30,
                      alive=replicas[2:], logs=logs)
            assert _lease(srv)["spec"]["leaseTransitions"] == 2
            events = kubectl(srv, "get", "events", "-n", "volcano-system")
            assert events.count("LeaderElection") == 3 and f"{a_id} became leader" in events
        finally:
            for r in replicas:
                if r.poll() is None:
                    r.send_signal(signal.SIGCONT)
                    r.kill()
                r.wait()


def test_leader_election_can_be_turned_off(tmp_path):
    with vcctl_server.running(tmp_path / "server", "--controllers", WITHOUT_JOBFLOWS) as srv:
        log = tmp_path / "controller.log"
        ctl = subprocess.Popen([VCCTL, "controller", "-k", str(srv.kubeconfig), "--leader-elect=false"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        try:
            _wait_for(lambda: "reconciling" in log.read_text(), "the controller did not start")
            assert "leading" not in log.read_text()
            spaces = kubectl(srv, "get", "lease", "-A", "-o", "jsonpath={.items[*].metadata.namespace}").split()
            assert set(spaces) <= {"kube-node-lease"}, spaces   # the nodes' leases only: no election lease
        finally:
            ctl.send_signal(signal.SIGTERM)
            assert ctl.wait(timeout=30) == 0


@pytest.mark.parametrize("args, code, message", [
    (["--leader-elect-renew-deadline", "20s"], 2, "the lease duration must be greater than the renew deadline"),
    (["--leader-elect-retry-period", "9s"], 2, "greater than 1.2 × the retry period"),
    (["--leader-elect-retry-period", "soon"], 2, "a Go duration"),
    (["--leader-elect=maybe"], 2, "'maybe' is not a valid boolean"),
    (["--controllers", "job-controller"], 2, "job-controller runs in Volcano on a cluster"),
    (["--controllers", "-jobflow-controller,-jobtemplate-controller"], 2, "enables no controller"),
    (["--controllers", "jobflow-controler"], 2, "unknown controller 'jobflow-controler'"),
    (["--kubeconfig", "/nonexistent/kubeconfig"], 1, "cannot use the cluster: cannot read kubeconfig"),
    (["--master", "https://127.0.0.1:1"], 1, "cannot use the cluster"),
])
def test_bad_invocations(args, code, message):
    proc = subprocess.run([VCCTL, "controller", *args], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == code and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("gate", [[], ["--controllers", "*, -jobtemplate-controller"]])
def test_print_crds_prints_the_two_definitions(gate):
    out = subprocess.run([VCCTL, "controller", *gate, "--print-crds"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    docs = list(yaml.safe_load_all(out))
    assert [d["metadata"]["name"] for d in docs] == ["jobflows.flow.volcano.sh", "jobtemplates.flow.volcano.sh"]
    assert all(d["kind"] == "CustomResourceDefinition" for d in docs)
