"""`vcctl` as a client, end to end: the real `vcctl` binary drives a real `vcctl server` process over
HTTP with the kubeconfig the server wrote — the diamond example from create to delete, jobs,
queues, and `jobflow get -w` following a flow until it succeeds."""
import json
import os
import re
import subprocess
import time

import pytest
import yaml

from tests import vcctl_server
from tests.e2e.conftest import ROOT, VCCTL, Result

pytestmark = pytest.mark.e2e
DIAMOND = ROOT / "examples" / "diamond.yaml"
FLOWS = ("a", "b", "c", "d", "e")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        yield srv


@pytest.fixture
def vcctl(server):
    def run(*args, timeout=60, env=None, kubeconfig=True):
        extra = ["-k", str(server.kubeconfig)] if kubeconfig else []
        proc = subprocess.run([VCCTL, *map(str, args), *extra], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, env=env)
        return Result(proc)
    return run


def wait_until(vcctl, args, predicate, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        r = vcctl(*args)
        if predicate(r):
            return r
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}: {r!r}")
        time.sleep(0.2)


def test_diamond_from_create_to_delete(vcctl):
    r = vcctl("jobtemplate", "create", "-f", DIAMOND)
    assert r.code == 0, r
    assert r.out.splitlines() == [f"Created JobTemplate: default/{n}" for n in FLOWS]
    assert "skipped JobFlow diamond (not a JobTemplate)" in r.err
    r = vcctl("jobflow", "create", "-f", DIAMOND)
    assert (r.code, r.out) == (0, "Created JobFlow: default/diamond\n"), r

    # follow it live until it succeeds (stdout is a pipe: one line per phase change, then the view)
    r = vcctl("jobflow", "get", "diamond", "-w", timeout=180)
    assert r.code == 0, r
    lines = r.out.splitlines()
    assert lines[0].split() == ["Name", "Namespace", "Phase", "Age"] and lines[1].split()[:2] == ["diamond", "default"]
    assert any(ln.endswith("JobFlow default/diamond: Succeed") for ln in lines), r
    for flow in FLOWS:
        assert any(ln.endswith(f"vcjob default/diamond-{flow}: Completed") for ln in lines), (flow, r)
    assert "5/5 jobs completed" in r.out

    r = vcctl("jobflow", "list")
    assert r.code == 0 and [ln.split()[:3] for ln in r.out.splitlines()] == [
        ["Name", "Namespace", "Phase"], ["diamond", "default", "Succeed"]], r
    r = vcctl("jobflow", "describe", "-N", "diamond", "-o", "json")
    doc = json.loads(r.out)
    assert list(doc)[:2] == ["kind", "apiVersion"] and sorted(doc["status"]["completedJobs"]) == [
        f"diamond-{f}" for f in FLOWS], r
    r = vcctl("jobtemplate", "list")
    assert [ln.split() for ln in r.out.splitlines()] == [["Name", "Namespace"]] + [[n, "default"] for n in FLOWS], r
    r = vcctl("jobtemplate", "describe", "-N", "b")
    assert yaml.safe_load(r.out)["status"]["jobDependsOnList"] == ["diamond-b"], r

    r = vcctl("job", "list")
    rows = {ln.split()[0]: ln.split() for ln in r.out.splitlines()[1:]}
    assert sorted(rows) == [f"diamond-{f}" for f in FLOWS], r
    assert rows["diamond-b"][2:5] == ["Completed", "Batch", "2"], r
    r = vcctl("job", "view", "-N", "diamond-b")
    assert r.code == 0 and "    Phase:\tCompleted" in r.out.splitlines(), r
    assert "Labels:     \t" in r.out and "volcano.sh/createdByJobFlow" in r.out, r

    r = vcctl("jobflow", "delete", "-N", "diamond")
    assert (r.code, r.out) == (0, "Deleted JobFlow: default/diamond\n"), r
    wait_until(vcctl, ("jobflow", "list"), lambda r: r.out == "No resources found\n", "the flow to go")
    r = vcctl("jobtemplate", "delete", "-f", DIAMOND)
    assert r.out.splitlines() == [f"Deleted JobTemplate: default/{n}" for n in FLOWS], r
    r = vcctl("jobflow", "get", "-N", "diamond")
    assert (r.code, r.out) == (255, 'Failed to get jobflow: jobflows.flow.volcano.sh "diamond" not found\n'), r


def test_following_a_failing_flow_exits_1_and_says_why(vcctl):
    failing = ROOT / "examples" / "failing.yaml"
    assert vcctl("jobtemplate", "create", "-f", failing).code == 0
    assert vcctl("jobflow", "create", "-f", failing).out == "Created JobFlow: default/failing\n"
    r = vcctl("jobflow", "get", "-N", "failing", "--watch", timeout=180)
    assert r.code == 1, r
    assert any(ln.endswith("JobFlow default/failing: Failed") for ln in r.out.splitlines()), r
    assert "exited" in r.out, r  # the failed pod's container and exit code, from the live view
    assert vcctl("jobflow", "delete", "-f", failing).code == 0
    assert vcctl("jobtemplate", "delete", "-f", failing).code == 0


def test_job_run_suspend_resume_delete(vcctl):
    r = vcctl("job", "run", "-N", "sleeper", "--command", "sleep 60", "-R", "cpu=500m,memory=64Mi",
              "-L", "cpu=500m,memory=64Mi")
    assert (r.code, r.out) == (0, "run job sleeper successfully\n"), r

    def job_phase(r):
        return [ln for ln in r.out.splitlines() if ln.startswith("    Phase:\t")]

    wait_until(vcctl, ("job", "view", "-N", "sleeper"), lambda r: job_phase(r) == ["    Phase:\tRunning"], "Running")
    r = vcctl("job", "suspend", "-N", "sleeper")
    assert (r.code, r.out) == (0, ""), r
    wait_until(vcctl, ("job", "view", "-N", "sleeper"), lambda r: job_phase(r) == ["    Phase:\tAborted"], "Aborted")
    r = vcctl("job", "resume", "-N", "sleeper")
    assert (r.code, r.out) == (0, ""), r
    wait_until(vcctl, ("job", "view", "-N", "sleeper"), lambda r: job_phase(r) == ["    Phase:\tRunning"],
               "Running again")
    r = vcctl("job", "delete", "-N", "sleeper")
    assert (r.code, r.out) == (0, "delete job sleeper successfully\n"), r


def test_job_that_cannot_fit_says_why(vcctl):
    r = vcctl("job", "run", "-N", "giant", "--command", "true", "-R", "cpu=64", "-L", "cpu=64")
    assert r.code == 0, r
    r = wait_until(vcctl, ("job", "view", "-N", "giant"), lambda r: "    Waiting:\t" in r.out, "a waiting reason")
    assert "cpu" in [ln for ln in r.out.splitlines() if ln.startswith("    Waiting:\t")][0], r
    assert vcctl("job", "delete", "-N", "giant").code == 0


def test_queue_create_operate_list_delete(vcctl):
    assert (vcctl("queue", "create", "-n", "batch", "-w", "4").code, 0) == (0, 0)
    r = vcctl("queue", "get", "-n", "batch")
    assert r.out.splitlines()[1].split()[:3] == ["batch", "4", "Open"], r
    assert vcctl("queue", "operate", "-n", "batch", "-a", "close").out == ""
    r = vcctl("queue", "list")
    states = {ln.split()[0]: ln.split()[2] for ln in r.out.splitlines()[1:]}
    assert states["batch"] == "Closed" and states["default"] == "Open", r
    assert vcctl("queue", "operate", "-n", "batch", "-a", "open").code == 0
    assert vcctl("queue", "operate", "-n", "batch", "-a", "update", "-w", "9").code == 0
    assert vcctl("queue", "get", "-n", "batch").out.splitlines()[1].split()[:3] == ["batch", "9", "Open"]
    r = vcctl("queue", "delete", "-n", "batch")
    assert (r.code, r.out) == (0, ""), r
    wait_until(vcctl, ("queue", "get", "-n", "batch"), lambda r: r.code == 255, "the queue to go")


def test_default_kubeconfig_is_the_servers(vcctl, server, tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "VCLITE_DATA": str(server.data_dir)}
    env.pop("KUBECONFIG", None)
    r = vcctl("queue", "get", "-n", "default", env=env, kubeconfig=False)
    assert r.code == 0 and r.out.splitlines()[1].split()[0] == "default", r
    env.pop("VCLITE_DATA")
    r = vcctl("queue", "list", env=env, kubeconfig=False)
    assert r.code == 255 and r.out.startswith("Failed to list queue: no kubeconfig found"), r
    env["KUBECONFIG"] = str(server.kubeconfig)
    assert vcctl("queue", "list", env=env, kubeconfig=False).code == 0


def test_wrong_token_changes_nothing(vcctl, server, tmp_path):
    config = yaml.safe_load(server.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "not-the-token"
    bad = tmp_path / "kubeconfig"
    bad.write_text(yaml.safe_dump(config))
    r = vcctl("queue", "create", "-n", "intruder", "-k", bad, kubeconfig=False)
    assert r.code == 255 and "Unauthorized" in r.out, r
    assert vcctl("queue", "get", "-n", "intruder").code == 255


def fan_manifests(n):
    """JobTemplates and a JobFlow `fan`: start -> m0 … m<n-1> -> end, each a `true` job."""
    names = ["start", *(f"m{i}" for i in range(n)), "end"]
    templates = [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": name},
                  "spec": {"minAvailable": 1, "tasks": [{"name": "main", "replicas": 1, "template": {"spec": {
                      "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"],
                                                                 "resources": {"requests": {"cpu": "1"}}}]}}}]}}
                 for name in names]
    flows = [{"name": "start"}, *({"name": m, "dependsOn": {"targets": ["start"]}} for m in names[1:-1]),
             {"name": "end", "dependsOn": {"targets": names[1:-1]}}]
    jobflow = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "fan"},
               "spec": {"flows": flows}}
    return yaml.safe_dump_all(templates), yaml.safe_dump(jobflow)


def test_following_a_big_fan_draws_it_as_one_row(vcctl, tmp_path):
    """The siblings of a fan are one row counting their states (view.FAN_MIN or more); `end`'s dependency names
    the first of them."""
    templates, jobflow = fan_manifests(25)
    (tmp_path / "t.yaml").write_text(templates)
    (tmp_path / "f.yaml").write_text(jobflow)
    assert vcctl("jobtemplate", "create", "-f", tmp_path / "t.yaml").code == 0
    assert vcctl("jobflow", "create", "-f", tmp_path / "f.yaml").code == 0
    r = vcctl("jobflow", "get", "fan", "-w", timeout=180, env={**os.environ, "COLUMNS": "200"})
    assert r.code == 0, r
    view = [ln.split("  ") for ln in r.out[r.out.index("JobFlow default/fan  Succeed"):].splitlines()]
    rows = {cells[0]: [c.strip() for c in cells[1:] if c.strip()] for cells in view}
    assert rows["m0 … m24 (25 flows)"] == ["start", "25 Completed"], r.out
    assert rows["end"][:2] == ["m0, m1, m2, … 22 more", "Completed"], r.out
    assert vcctl("jobflow", "delete", "-f", tmp_path / "f.yaml").code == 0
    assert vcctl("jobtemplate", "delete", "-f", tmp_path / "t.yaml").code == 0


POD_JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
spec:
  minAvailable: {replicas}
  queue: {queue}
  tasks:
  - replicas: {replicas}
    name: t
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: ["sh", "-c", "{command}"]
          resources: {{requests: {{cpu: 100m, memory: 16Mi}}, limits: {{cpu: 100m, memory: 16Mi}}}}
"""


def pod_rows(r):
    """`vcctl pod list` output as {name: cells}, checking every cell starts under its header (Volcano's
    left-aligned columns, each as wide as its widest value plus 8)."""
    lines = r.out.splitlines()
    headers = lines[0].split()
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    rows = {}
    for line in lines[1:]:
        cells = line.split()
        assert [m.start() for m in re.finditer(r"\S+", line)] == starts, r
        rows[cells[headers.index("Name")]] = dict(zip(headers, cells))
    return headers, rows


def test_pod_list_shows_vcjobs_pods_by_job_queue_and_namespace(vcctl, tmp_path):
    assert vcctl("queue", "create", "-n", "podq").code == 0
    jobs = [("sleeper", "default", "podq", 2, "sleep 120"), ("quick", "default", "default", 1, "true"),
            ("elsewhere", "pods-e2e", "default", 1, "sleep 120")]
    for name, namespace, queue, replicas, command in jobs:
        path = tmp_path / f"{name}.yaml"
        path.write_text(POD_JOB.format(name=name, namespace=namespace, queue=queue, replicas=replicas,
                                       command=command))
        assert vcctl("job", "run", "-f", path).code == 0
    try:
        def settled(r):
            return r.code == 0 and len(r.out.splitlines()) == 5 and all(
                row["Status"] in ("Running", "Completed") for row in pod_rows(r)[1].values())

        r = wait_until(vcctl, ("pod", "list", "--all-namespaces"), settled, "every pod running or completed")
        headers, rows = pod_rows(r)
        assert headers == ["Namespace", "Name", "Ready", "Status", "Restart", "Age"], r
        assert [(v["Namespace"], k) for k, v in rows.items()] == [
            ("default", "quick-t-0"), ("default", "sleeper-t-0"), ("default", "sleeper-t-1"),
            ("pods-e2e", "elsewhere-t-0")], r   # sorted by namespace, then name
        assert [rows["sleeper-t-0"][c] for c in ("Ready", "Status", "Restart")] == ["1/1", "Running", "0"], r
        assert [rows["quick-t-0"][c] for c in ("Ready", "Status", "Restart")] == ["0/1", "Completed", "0"], r

        r = vcctl("pod", "list")
        headers, rows = pod_rows(r)
        assert headers == ["Name", "Ready", "Status", "Restart", "Age"] and sorted(rows) == [
            "quick-t-0", "sleeper-t-0", "sleeper-t-1"], r
        assert sorted(pod_rows(vcctl("pod", "list", "-j", "sleeper"))[1]) == ["sleeper-t-0", "sleeper-t-1"]
        assert sorted(pod_rows(vcctl("pod", "list", "-q", "podq"))[1]) == ["sleeper-t-0", "sleeper-t-1"]
        assert sorted(pod_rows(vcctl("pod", "list", "-q", "podq", "-j", "sleeper"))[1]) == ["sleeper-t-0",
                                                                                           "sleeper-t-1"]
        assert sorted(pod_rows(vcctl("pod", "list", "-n", "pods-e2e"))[1]) == ["elsewhere-t-0"]
        r = vcctl("pod", "list", "-j", "sleeper", "-q", "default")
        assert (r.code, r.out) == (255, "Failed to list pod: the input vcjob sleeper does not match the queue "
                                        "default\n"), r
        r = vcctl("pod", "list", "-n", "nosuchnamespace")
        assert (r.code, r.out) == (0, "No resources found\n"), r
    finally:
        for name, namespace, *_ in jobs:
            vcctl("job", "delete", "-N", name, "-n", namespace)
        vcctl("queue", "delete", "-n", "podq")


def test_version(vcctl):
    r = vcctl("version", kubeconfig=False)
    lines = r.out.splitlines()
    assert r.code == 0 and [ln.split(": ")[0] for ln in lines] == [
        "API Version", "Version", "Git SHA", "Built At", "Python Version", "Python OS/Arch"], r
    assert lines[0] == "API Version: v1alpha1" and lines[1] == vcctl("--version", kubeconfig=False).out.replace(
        "vcctl, version ", "Version: ").rstrip("\n"), r
