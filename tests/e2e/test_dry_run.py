"""`vcctl scheduler dry-run` as users run it: every scenario STATE file (tests/scenarios/states/) through
the real command with -o json, the other output formats, and bad input (exit 2, file:line)."""
from __future__ import annotations

import concurrent.futures
import subprocess

import pytest
import yaml

from tests.e2e.conftest import ROOT, VCCTL, Result
from tests.scenarios import test_state_files as states

CASES = states.case_ids()
DETAILS = ("bindAnnotations", "numaCpuSets")   # (only with --details)


def _dry_run(*args: str) -> Result:
    return Result(subprocess.run([VCCTL, "scheduler", "dry-run", *args], cwd=ROOT, capture_output=True, text=True,
                                 timeout=120))


@pytest.fixture(scope="module")
def outputs() -> dict[str, Result]:
    """Every case's dry run, a few processes at a time (each is a separate `vcctl`)."""
    def one(case_id: str) -> Result:
        return _dry_run("-f", str(states.STATES / f"{case_id}.yaml"), "--conf", str(states.conf_of(case_id)),
                        "-o", "json")
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(CASES, pool.map(one, CASES)))


@pytest.mark.parametrize("case_id", CASES)
def test_scenario_through_the_cli(outputs, case_id):
    r = outputs[case_id]
    assert r.code == 0, r
    got = r.json()
    assert list(got) == ["binds", "evictions", "pipelined", "podGroupPhases", "unschedulable"]   # (the contract)
    want = {k: v for k, v in states.expected(case_id).items() if k not in DETAILS}
    assert not states.mismatches(want, got), (states.mismatches(want, got), r)


@pytest.mark.parametrize("case_id", [c for c in CASES if set(DETAILS) & set(states.expected(c))])
def test_details_on_request(case_id):
    r = _dry_run("-f", str(states.STATES / f"{case_id}.yaml"), "--conf", str(states.conf_of(case_id)), "-o", "json",
                 "--details")
    assert r.code == 0, r
    got = r.json()
    assert set(DETAILS) & set(got), got
    assert not states.mismatches(states.expected(case_id), got), (states.mismatches(states.expected(case_id), got), r)


def test_yaml_and_table_outputs(outputs):
    path, conf = states.STATES / "MSG-01.yaml", states.conf_of("MSG-01")
    as_yaml = _dry_run("-f", str(path), "--conf", str(conf), "-o", "yaml")
    assert as_yaml.code == 0, as_yaml
    assert yaml.safe_load(as_yaml.out) == outputs["MSG-01"].json()
    table = _dry_run("-f", str(path), "--conf", str(conf))
    assert table.code == 0, table
    assert "WHY PENDING" in table.out and "2/3 tasks in gang unschedulable" in table.out, table
    assert "ns/big" in table.out and "Inqueue" in table.out, table


def test_table_says_why_a_job_is_not_in_the_session():
    r = _dry_run("-f", str(states.STATES / "ENQ-04.yaml"))   # Volcano's default configuration
    assert r.code == 0, r
    assert 'PodGroup c1/pg1: queue "c1" does not exist, so the job is not in the session' in r.out, r
    assert 'Queue "default" is not declared: Volcano\'s default queue was added' in r.out, r


BAD_STATE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: ns}
spec:
  schedulerName: volcano
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: two}}
"""


@pytest.mark.parametrize("files, conf, where", [
    pytest.param({"state.yaml": BAD_STATE}, None, "state.yaml:14: Pod/p1: spec.containers[0].resources.requests.cpu",
                 id="bad quantity in a pod"),
    pytest.param({"state.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n"}, None,
                 "state.yaml:1: Job/j: kind: a cluster state holds only Node, HyperNode, Numatopology, Queue, PriorityClass, PodGroup, Pod",
                 id="a kind a state does not hold"),
    pytest.param({"state.yaml": "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n"}, None,
                 "state.yaml:1: JobFlow/f: kind: a cluster state holds only Node, HyperNode, Numatopology, Queue, PriorityClass, "
                 "PodGroup, Pod, PodDisruptionBudget, ResourceQuota (and Namespace) objects; Volcano's controllers turn it into PodGroups and pods: "
                 "`vcctl run FILE` runs it, and a state lists the PodGroups and Pods a cluster holds\n",
                 id="a workload, as Volcano's examples"),
    pytest.param({"state.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, None,
                 "state.yaml:1: ConfigMap/c: kind: a cluster state holds only Node, HyperNode, Numatopology, Queue, PriorityClass, "
                 "PodGroup, Pod, PodDisruptionBudget, ResourceQuota (and Namespace) objects\n",
                 id="another kind: no hint"),
    pytest.param({"state.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1\n"}, None, "state.yaml:4",
                 id="YAML syntax"),
    pytest.param({"state.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
                  "sched.conf": 'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: nodeorderr\n'},
                 "sched.conf", 'sched.conf:5: unknown plugin "nodeorderr" (known: ', id="bad configuration"),
])
def test_bad_input_exits_2_naming_file_and_line(tmp_path, files, conf, where):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = ["-f", str(tmp_path / "state.yaml"), "-o", "json"]
    if conf:
        args += ["--conf", str(tmp_path / conf)]
    r = _dry_run(*args)
    assert r.code == 2, r
    assert r.out == "", r
    assert f"{tmp_path}/{where}" in r.err, r
    assert "no session was run" in r.err, r


LAZY = ("numpy", "vclite.cli.groups", "vclite.kube.client", "vclite.kube.kubeconfig", "http.client")


def test_heavy_commands_are_lazy():
    """`vcctl scheduler` and the client groups are imported only when used: `validate` loads
    neither numpy nor the HTTP client (it starts in about half the time)."""
    code = ("import sys; from click.testing import CliRunner; from vclite.cli import main; "
            "r = CliRunner().invoke(main.cli, ['validate', 'examples/diamond.yaml']); "
            f"print(r.exit_code, *[m in sys.modules for m in {LAZY!r}])")
    proc = subprocess.run([str(ROOT / ".venv/bin/python"), "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.split() == ["0", *["False"] * len(LAZY)], proc


def _dry_run_with_input(text: str, *args: str) -> Result:
    return Result(subprocess.run([VCCTL, "scheduler", "dry-run", *args], cwd=ROOT, capture_output=True, text=True,
                                 timeout=120, input=text))


@pytest.mark.parametrize("conf, code, says", [
    pytest.param('actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n', 0, "Configuration: <stdin>",
                 id="a-configuration"),
    pytest.param('actions: "allocate"\ntiers:\n- plugins:\n  - name: nodeorderr\n', 2,
                 '<stdin>:4: unknown plugin "nodeorderr"', id="a-bad-configuration"),
])
def test_conf_dash_reads_standard_input(tmp_path, conf, code, says):
    (tmp_path / "state.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    r = _dry_run_with_input(conf, "-f", str(tmp_path / "state.yaml"), "--conf", "-")
    assert r.code == code and says in r.out + r.err, r


def test_only_one_input_reads_standard_input():
    r = _dry_run_with_input("", "-f", "-", "--conf", "-")
    assert r.code == 2 and "standard input (-) can be read only once, but -f and --conf both ask for it" in r.err, r
