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


@pytest.mark.parametrize("args, code, message", [
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
