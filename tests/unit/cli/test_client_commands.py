"""Volcano's vcctl unit cases U24–U30 (pkg/cli/jobflow, pkg/cli/jobtemplate), and the job and queue
commands, driven through the real command line against a real `vcctl server` over HTTP.

Volcano's tests compare stdout with its leading/trailing blanks trimmed; so do these. The client's
clock is injected (click context object) to show a flow "created 3 days ago".
"""
import datetime as dt
import json

import click
import pytest
import yaml
from click.testing import CliRunner

from tests import vcctl_server
from vclite.api import kinds
from vclite.cli import client_jobflow
from vclite.cli import main as main_mod
from vclite.kube import client as kube_client
from vclite.lib import clock as clock_mod
from vclite.lib import errors

JOBFLOWS_FILE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-a
  namespace: default
spec:
  jobRetainPolicy: delete   # After jobflow runs, keep the generated job. Otherwise, delete it.
  flows:
    - name: a
    - name: b
      dependsOn:
        targets: ['a']
    - name: c
      dependsOn:
        targets: ['b']
    - name: d
      dependsOn:
        targets: ['b']
    - name: e
      dependsOn:
        targets: ['c','d']
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-b
  namespace: default
spec:
  jobRetainPolicy: delete   # After jobflow runs, keep the generated job. Otherwise, delete it.
  flows:
    - name: a
    - name: b
      dependsOn:
        targets: ['a']
    - name: c
      dependsOn:
        targets: ['b']
    - name: d
      dependsOn:
        targets: ['b']
    - name: e
      dependsOn:
        targets: ['c','d']
---"""

TEMPLATE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: {name}
{namespace}spec:
  minAvailable: 1
  schedulerName: volcano
  policies:
    - event: PodEvicted
      action: RestartJob
  plugins:
    ssh: []
    env: []
    svc: []
  maxRetry: 5
  queue: default
  tasks:
    - replicas: 1
      name: "default-nginx"
      template:
        metadata:
          name: web
        spec:
          containers:
            - image: nginx:1.14.2
              command:
                - sh
                - -c
                - sleep 10s
              imagePullPolicy: IfNotPresent
              name: nginx
              resources:
                requests:
                  cpu: "1"
          restartPolicy: OnFailure
"""
# Volcano's file also sets `priorityClassName: high-priority`, a PriorityClass its fake server never
# checks; a real API server needs it to exist, so the module creates it.
TEMPLATES_FILE = (TEMPLATE.format(name="a", namespace="  namespace: default\n").replace(
    "  schedulerName: volcano\n", "  schedulerName: volcano\n  priorityClassName: high-priority\n") + "---\n" +
    TEMPLATE.format(name="b", namespace="").replace(
    "  schedulerName: volcano\n", "  schedulerName: volcano\n  priorityClassName: high-priority\n") + "---")


@pytest.fixture(scope="module")
def api(server):
    client = kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))
    client.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                   "metadata": {"name": "high-priority"}, "value": 1000})
    return client


@pytest.fixture
def vcctl(server):
    """Run `vcctl <args> -k <server kubeconfig>` in-process; `clock` shifts the client's now."""
    def run(*args, clock=None):
        result = CliRunner().invoke(main_mod.cli, [*map(str, args), "-k", str(server.kubeconfig)],
                                    obj={"clock": clock} if clock else None, catch_exceptions=False)
        return result.exit_code, result.output.strip()
    return run


def meta_name(obj: dict) -> str:
    return obj["metadata"]["name"]


def later(days: float) -> clock_mod.VirtualClock:
    return clock_mod.VirtualClock(start=clock_mod.RealClock().now() + dt.timedelta(days=days))


wait_for = vcctl_server.wait_until


def phase(api, kind, ns, name):
    try:
        obj = api.get(kind, ns, name)
    except errors.NotFound:
        return None
    state = (obj.get("status") or {}).get("state")
    return state.get("phase") if isinstance(state, dict) else state


@pytest.fixture(scope="module")
def succeeded_flow(api):
    """JobFlow test-jobflow, phase Succeed (a flow without flows succeeds at once)."""
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                "metadata": {"name": "test-jobflow", "namespace": "default"}, "spec": {"flows": []}})
    wait_for(lambda: phase(api, kinds.JOBFLOW, "default", "test-jobflow") == "Succeed", "test-jobflow to succeed")
    return "test-jobflow"


# ---- U24, U25 ----------------------------------------------------------------------------------------
U24 = "Name            Namespace    Phase      Age    \ntest-jobflow    default      Succeed    3d"


def test_U24_jobflow_list(vcctl, succeeded_flow):
    assert vcctl("jobflow", "list", "-n", "default", clock=later(3)) == (0, U24)


def test_U25_jobflow_get(vcctl, succeeded_flow):
    assert vcctl("jobflow", "get", "-N", "test-jobflow", clock=later(3)) == (0, U24)
    assert vcctl("jobflow", "get", "test-jobflow", clock=later(3)) == (0, U24)  # NAME as an argument too


def test_jobflow_list_all_namespaces_and_empty(vcctl, succeeded_flow):
    assert vcctl("jobflow", "list", "--all-namespaces", clock=later(3)) == (0, U24)
    assert vcctl("jobflow", "list", "-n", "nobody-here") == (0, "No resources found")


def test_a_finished_jobflow_cannot_be_suspended(vcctl, api, succeeded_flow):
    code, out = vcctl("jobflow", "suspend", succeeded_flow)
    assert (code, out) == (255, "Failed to suspend jobflow: JobFlow default/test-jobflow has finished (Succeed): "
                                "there is nothing to suspend")
    assert "flow.volcano.sh/suspend" not in (api.get(kinds.JOBFLOW, "default", succeeded_flow)["metadata"]
                                             .get("annotations") or {})
    before = api.get(kinds.JOBFLOW, "default", succeeded_flow)["metadata"]["resourceVersion"]
    assert vcctl("jobflow", "resume", succeeded_flow) == (0, "JobFlow default/test-jobflow is not suspended")
    assert api.get(kinds.JOBFLOW, "default", succeeded_flow)["metadata"]["resourceVersion"] == before


@pytest.fixture
def waiting_flow(api):
    """JobFlow waiting-flow, Pending for good (its template does not exist); its status is not written again."""
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                "metadata": {"name": "waiting-flow", "namespace": "default"}, "spec": {"flows": [{"name": "nosuch"}]}})
    wait_for(lambda: phase(api, kinds.JOBFLOW, "default", "waiting-flow") == "Pending", "waiting-flow to be Pending")
    yield "waiting-flow"
    api.delete(kinds.JOBFLOW, "default", "waiting-flow")
    wait_for(lambda: not [f for f in api.list(kinds.JOBFLOW, "default") if meta_name(f) == "waiting-flow"],
             "waiting-flow to be gone")


@pytest.mark.parametrize("annotation, command, out, after", [
    pytest.param(None, "suspend", "Suspended JobFlow: default/waiting-flow", "true", id="suspend"),
    pytest.param("true", "resume", "Resumed JobFlow: default/waiting-flow", None, id="resume"),
    # as `kubectl cordon` of a cordoned node (`node/n already cordoned`): said, exit 0, nothing written
    pytest.param("true", "suspend", "JobFlow default/waiting-flow is already suspended", "true",
                 id="suspend a suspended flow"),
    pytest.param(None, "resume", "JobFlow default/waiting-flow is not suspended", None,
                 id="resume a flow that is not suspended"),
    pytest.param("false", "resume", "JobFlow default/waiting-flow is not suspended", "false",
                 id="resume a flow whose annotation is not true"),
])
def test_suspend_and_resume_say_what_they_did(vcctl, api, waiting_flow, annotation, command, out, after):
    key = "flow.volcano.sh/suspend"
    api.patch(kinds.JOBFLOW, "default", waiting_flow, {"metadata": {"annotations": {key: annotation}}})
    before = api.get(kinds.JOBFLOW, "default", waiting_flow)["metadata"]["resourceVersion"]
    assert vcctl("jobflow", command, waiting_flow) == (0, out)
    now = api.get(kinds.JOBFLOW, "default", waiting_flow)["metadata"]
    assert (now.get("annotations") or {}).get(key) == after
    assert (now["resourceVersion"] == before) == (annotation == after)   # written only when something changed


def test_a_suspended_jobflow_names_the_servers_kubeconfig_in_its_resume_command(server, api):
    """The server's data directory is not the default one vcctl looks in: the command must name its kubeconfig."""
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                "metadata": {"name": "held-k", "namespace": "default"},
                "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                    "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                              "command": ["true"]}]}}}]}})
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                "metadata": {"name": "held-k", "namespace": "default",
                             "annotations": {"flow.volcano.sh/suspend": "true"}},
                "spec": {"flows": [{"name": "held-k"}]}})
    said = f"vcctl jobflow resume held-k -k {server.data_dir.resolve() / 'kubeconfig'})"
    wait_for(lambda: said in json.dumps(api.get(kinds.JOBFLOW, "default", "held-k").get("status")),
             "the suspended flow's condition")
    api.delete(kinds.JOBFLOW, "default", "held-k")
    api.delete(kinds.JOBTEMPLATE, "default", "held-k")   # (other tests list the namespace's templates)


def test_create_and_delete_read_standard_input_as_a_file(server, api):
    """`-f -` (as `job run -f -`, `vcctl run -`): the documents from standard input; a skipped one names it."""
    def vcctl(*args, text):
        result = CliRunner().invoke(main_mod.cli, [*args, "-f", "-", "-k", str(server.kubeconfig)], input=text)
        return result.exit_code, result.output.strip()
    text = TEMPLATES_FILE + "\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
    code, out = vcctl("jobtemplate", "create", text=text)
    assert code == 0, out
    assert out.splitlines() == ["<stdin>: skipped Queue q (not a JobTemplate)", "Created JobTemplate: default/a",
                                "Created JobTemplate: default/b"]
    assert vcctl("jobtemplate", "delete", text=TEMPLATES_FILE) == (0, "Deleted JobTemplate: default/a\n"
                                                                      "Deleted JobTemplate: default/b")


# ---- U26, U27: create and delete by file, delete by name ----------------------------------------------
@pytest.mark.parametrize("group, kind, text", [
    pytest.param("jobflow", "JobFlow", JOBFLOWS_FILE, id="U26-U27-jobflow"),
    pytest.param("jobtemplate", "JobTemplate", TEMPLATES_FILE, id="U29-jobtemplate"),
])
def test_create_and_delete_by_file(vcctl, api, tmp_path, group, kind, text):
    path = tmp_path / "test.yaml"
    path.write_text(text)
    a, b = ("test-a", "test-b") if kind == "JobFlow" else ("a", "b")
    assert vcctl(group, "create", "-f", path) == (0, f"Created {kind}: default/{a}\nCreated {kind}: default/{b}")
    code, out = vcctl(group, "create", "-f", path)  # again: every document fails, the command does not
    assert code == 0 and out.splitlines() == [
        f'Failed to create {kind}: {kind.lower()}s.flow.volcano.sh "{a}" already exists',
        f'Failed to create {kind}: {kind.lower()}s.flow.volcano.sh "{b}" already exists']
    assert vcctl(group, "delete", "-f", path) == (0, f"Deleted {kind}: default/{a}\nDeleted {kind}: default/{b}")
    assert vcctl(group, "create", "-f", path)[0] == 0
    assert vcctl(group, "delete", "-N", a) == (0, f"Deleted {kind}: default/{a}")
    assert vcctl(group, "delete", "--name", b, "--namespace", "default") == (0, f"Deleted {kind}: default/{b}")
    res = kinds.JOBFLOW if kind == "JobFlow" else kinds.JOBTEMPLATE
    wait_for(lambda: not [o for o in api.list(res, "default") if o["metadata"]["name"] in (a, b)], "deletion")


# ---- U28: describe -----------------------------------------------------------------------------------
def test_U28_jobflow_describe_yaml(vcctl, api, succeeded_flow):
    code, out = vcctl("jobflow", "describe", "-N", "test-jobflow", "-o", "yaml")
    assert code == 0
    assert out.startswith("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n")
    doc = yaml.safe_load(out)
    assert list(doc) == ["apiVersion", "kind", "metadata", "spec", "status"]  # sigs.k8s.io/yaml sorts keys
    assert (doc["metadata"]["name"], doc["metadata"]["namespace"]) == ("test-jobflow", "default")
    assert doc["status"]["state"] == {"phase": "Succeed"} and "managedFields" not in doc["metadata"]
    stored = api.get(kinds.JOBFLOW, "default", "test-jobflow")
    stored["metadata"].pop("managedFields", None)
    assert stored["spec"] == {"flows": []} and doc["spec"] == {}   # Go: `flows,omitempty` drops the empty list
    assert doc["metadata"] == stored["metadata"] and doc["status"] == stored["status"]


def test_U28_jobflow_describe_json(vcctl, succeeded_flow):
    code, out = vcctl("jobflow", "describe", "-N", "test-jobflow", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["kind", "apiVersion", "metadata", "spec", "status"]  # Go struct order
    assert list(doc["metadata"])[:2] == ["name", "namespace"]
    assert out.startswith('{\n  "kind": "JobFlow",\n  "apiVersion": "flow.volcano.sh/v1alpha1",\n  "metadata": {\n'
                          '    "name": "test-jobflow",\n    "namespace": "default",\n')


def test_describe_without_name_prints_every_object_and_unknown_format(vcctl, api, succeeded_flow):
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                "metadata": {"name": "second", "namespace": "default"}, "spec": {"flows": []}})
    try:
        code, out = vcctl("jobflow", "describe", "-o", "json")
        assert code == 0
        docs = [json.loads(part) for part in out.split("\n\n\n")]
        assert sorted(d["metadata"]["name"] for d in docs) == ["second", "test-jobflow"]
        assert vcctl("jobflow", "describe", "-N", "second", "-o", "xml") == (0, "Unsupported format: xml")
    finally:
        api.delete(kinds.JOBFLOW, "default", "second")


# ---- U29: jobtemplate list/get/describe ---------------------------------------------------------------
def test_U29_jobtemplate_list_get_describe(vcctl, api, tmp_path):
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                "metadata": {"name": "test-jobtemplate", "namespace": "default"},
                "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
                    {"name": "c", "image": "busybox", "command": ["true"]}]}}}]}})
    try:
        table = "Name                Namespace    \ntest-jobtemplate    default"
        assert vcctl("jobtemplate", "list", "-n", "default") == (0, table)
        assert vcctl("jobtemplate", "get", "-N", "test-jobtemplate") == (0, table)
        code, out = vcctl("jobtemplate", "describe", "-N", "test-jobtemplate")
        assert code == 0 and out.startswith("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata:\n")
        assert yaml.safe_load(out)["spec"]["tasks"][0]["name"] == "t"
        code, out = vcctl("jobtemplate", "describe", "-N", "test-jobtemplate", "-o", "json")
        assert list(json.loads(out)) == ["kind", "apiVersion", "metadata", "spec", "status"]
    finally:
        api.delete(kinds.JOBTEMPLATE, "default", "test-jobtemplate")


# ---- U30: flags --------------------------------------------------------------------------------------
def _group(name):
    """A `vcctl` group as click finds it (main.LazyGroup imports it on first use)."""
    return main_mod.cli.get_command(click.Context(main_mod.cli), name)


@pytest.mark.parametrize("group", ["jobflow", "jobtemplate"])
@pytest.mark.parametrize("sub, flags", [
    pytest.param("create", {"file"}, id="create"),
    pytest.param("get", {"name", "namespace"}, id="get"),
    pytest.param("list", {"namespace"}, id="list"),
    pytest.param("describe", {"name", "namespace", "format"}, id="describe"),
    pytest.param("delete", {"name", "namespace", "file"}, id="delete"),
])
def test_U30_flags(group, sub, flags):
    command = _group(group).commands[sub]
    longs = {opt[2:] for p in command.params for opt in p.opts if opt.startswith("--")}
    assert flags | {"master", "kubeconfig"} <= longs


def test_U30_only_jobflow_list_has_all_namespaces():
    def longs(group):
        return {o for p in _group(group).commands["list"].params for o in p.opts}
    assert "--all-namespaces" in longs("jobflow") and "--all-namespaces" not in longs("jobtemplate")
    assert client_jobflow.JOBTEMPLATE.all_namespaces is False


@pytest.mark.parametrize("group, sub, short", [
    ("job", "run", "run job by parameters from the command line"), ("job", "list", "list job information"),
    ("job", "view", "show job information"), ("job", "suspend", "abort a job"), ("job", "resume", "resume a job"),
    ("job", "delete", "delete a job"), ("queue", "create", "creates queue"), ("queue", "delete", "delete queue"),
    ("queue", "operate", "operate queue"), ("queue", "list", "lists all the queue"), ("queue", "get", "get a queue"),
])
def test_job_and_queue_help_keeps_volcanos_line_and_teaches_with_an_example(group, sub, short):
    command = _group(group).commands[sub]
    assert command.get_short_help_str(limit=100) == short
    text = CliRunner().invoke(main_mod.cli, [group, sub, "--help"]).output
    lines = text.splitlines()
    assert lines[2] == f"  {short}" and any(f"{ln.strip()} ".startswith(f"vcctl {group} {sub} ") for ln in lines), text
    if group == "queue" and sub != "list":
        assert "-n is the queue's name" in " ".join(text.split()), text


# ---- errors, as Volcano prints them ---------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    pytest.param(("jobflow", "get"), "Failed to get jobflow: name is mandatory to get the particular jobflow details",
                 id="jobflow-get-no-name"),
    pytest.param(("jobtemplate", "get"),
                 "Failed to get jobtemplate: name is mandatory to get the particular job template details",
                 id="jobtemplate-get-no-name"),
    pytest.param(("jobflow", "delete"), "Failed to delete jobflow: jobflow name must be specified",
                 id="jobflow-delete-no-name"),
    pytest.param(("jobtemplate", "delete"), "Failed to delete jobtemplate: job template name must be specified",
                 id="jobtemplate-delete-no-name"),
    pytest.param(("jobflow", "get", "-N", "nope"), 'Failed to get jobflow: jobflows.flow.volcano.sh "nope" not found',
                 id="not-found"),
    pytest.param(("jobflow", "create", "-f", "/nonexistent.yaml"),
                 "Failed to create jobflow: open /nonexistent.yaml: no such file or directory", id="no-file"),
    pytest.param(("job", "view"),
                 "Failed to view job: job name (specified by --name or -N) is mandatory to view a particular job",
                 id="job-view-no-name"),
    pytest.param(("job", "suspend"), "Failed to suspend job: job name is mandatory to suspend a particular job",
                 id="job-suspend-no-name"),
    pytest.param(("job", "run"), "Failed to run job: job name cannot be left blank", id="job-run-no-name"),
    pytest.param(("job", "run", "-N", "x", "-R", "cpu"),
                 "Failed to run job: invalid argument syntax cpu, expected <resource>=<value>", id="job-run-bad-requests"),
    pytest.param(("queue", "operate", "-n", "default"), "Failed to operate queue: action can not be null",
                 id="queue-operate-no-action"),
    pytest.param(("queue", "operate", "-n", "default", "-a", "drain"),
                 "Failed to operate queue: action drain invalid, valid actions are open, close and update",
                 id="queue-operate-bad-action"),
    pytest.param(("queue", "operate", "-n", "default", "-a", "update"),
                 "Failed to operate queue: when update queue default, weight must be specified, the value must be "
                 "greater than 0", id="queue-update-no-weight"),
    pytest.param(("queue", "delete"), "Failed to delete queue: queue name must be specified", id="queue-delete-no-name"),
    # pkg/cli/queue/operate_test.go "Abnormal Case Operate Queue Failed For Name Not Specified"
    pytest.param(("queue", "operate", "-a", "close"), "Failed to operate queue: queue name must be specified",
                 id="queue-operate-no-name"),
    pytest.param(("queue", "get"), "Failed to get queue: name is mandatory to get the particular queue details",
                 id="queue-get-no-name"),
])
def test_failures_print_volcanos_message_and_exit_255(vcctl, args, message):
    assert vcctl(*args) == (255, message)


def test_invalid_object_reports_the_admission_message(vcctl, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: cyclic}\n"
                    "spec:\n  flows:\n  - name: a\n    dependsOn: {targets: [a]}\n")
    code, out = vcctl("jobflow", "create", "-f", path)
    assert code == 0 and out.startswith('Failed to create JobFlow: JobFlow.flow.volcano.sh "cyclic" is invalid: ')
    assert "jobflow Flow is not DAG" in out


@pytest.mark.parametrize("group, sub", [("job", "run"), ("jobtemplate", "create"), ("jobflow", "create")])
@pytest.mark.parametrize("data, says", [
    pytest.param(b"metadata: {name: x\n", "x.yaml:2:1: document 1: invalid YAML: ", id="not-yaml"),
    pytest.param(b"metadata:\n  name: \xff\n", "x.yaml:2: not UTF-8 text: ", id="not-utf-8"),
])
def test_an_unreadable_file_is_one_line_naming_its_line_and_sends_nothing(vcctl, api, tmp_path, group, sub, data,
                                                                         says):
    path = tmp_path / "x.yaml"
    path.write_bytes(data)
    before = {k: len(api.list(k, "default")) for k in (kinds.JOB, kinds.JOBTEMPLATE, kinds.JOBFLOW)}
    code, out = vcctl(group, sub, "-f", path)
    assert code == 255 and out.startswith(f"Failed to {sub} {group}: {path.parent}/{says}"), out
    assert len(out.splitlines()) == 1, out
    assert {k: len(api.list(k, "default")) for k in before} == before


def test_wrong_token_is_unauthorized(server, tmp_path):
    config = yaml.safe_load(server.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "wrong"
    bad = tmp_path / "bad-kubeconfig"
    bad.write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(main_mod.cli, ["jobflow", "list", "-k", str(bad)])
    assert result.exit_code == 255
    assert result.output.startswith("Failed to list jobflow: the server has asked for the client to provide credentials")


def test_master_overrides_the_kubeconfig_server(server, tmp_path):
    result = CliRunner().invoke(main_mod.cli, ["queue", "get", "-n", "default", "-k", str(server.kubeconfig),
                                               "-s", "http://127.0.0.1:9"])
    assert result.exit_code == 255 and result.output.startswith('Failed to get queue: Get "http://127.0.0.1:9/apis/')


# ---- job ---------------------------------------------------------------------------------------------
def test_job_run_list_view_delete(vcctl, api):
    assert vcctl("job", "run", "-N", "sleepy", "--command", "sleep 30", "-R", "cpu=100m,memory=10Mi",
                 "-L", "cpu=100m,memory=10Mi") == (0, "run job sleepy successfully")
    wait_for(lambda: phase(api, kinds.JOB, "default", "sleepy") == "Running", "sleepy to run")
    code, out = vcctl("job", "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["Name", "Creation", "Phase", "JobType", "Replicas", "Min", "Pending",
                                              "Running", "Succeeded", "Failed", "Unknown", "RetryCount"]
    row = [ln.split() for ln in lines[1:] if ln.split()[0] == "sleepy"][0]
    assert row[2:6] == ["Running", "Batch", "1", "1"]
    assert vcctl("job", "list", "-q", "nosuchqueue") == (0, "No resources found")
    assert vcctl("job", "list", "--selector", "leep")[1].splitlines()[1].startswith("sleepy ")
    code, out = vcctl("job", "view", "-N", "sleepy")
    assert code == 0 and out.splitlines()[:2] == ["Name:       \tsleepy", "Namespace:  \tdefault"]
    assert "    Phase:\tRunning" in out.splitlines()
    assert vcctl("job", "delete", "-N", "sleepy") == (0, "delete job sleepy successfully")
    assert vcctl("job", "delete", "-N", "sleepy")[0] == 255


JOB_DOC = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: {name}
{namespace}spec:
  minAvailable: 1
  tasks:
  - replicas: 1
    name: t
    template:
      spec:
        restartPolicy: Never
        containers: [{{name: c, image: busybox, command: ["true"]}}]
"""


@pytest.mark.parametrize("text, args, want, created", [
    pytest.param("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: fq}\n", (),
                 "Failed to run job: {path}: no Job (batch.volcano.sh/v1alpha1) in the file, found Queue/fq",
                 None, id="another-kind"),
    pytest.param(JOB_DOC.format(name="fns", namespace="  namespace: other\n"), ("-n", "default"),
                 'Failed to run job: the namespace from the provided object "other" does not match the namespace '
                 "\"default\". You must pass '--namespace=other' to perform this operation.", None,
                 id="explicit-namespace-differs"),
    pytest.param(JOB_DOC.format(name="fown", namespace="  namespace: other\n"), (),
                 "run job fown successfully", ("other", "fown"), id="own-namespace"),
    pytest.param(JOB_DOC.format(name="fflag", namespace=""), ("-n", "other"),
                 "run job fflag successfully", ("other", "fflag"), id="namespace-from-flag"),
    pytest.param("kind: Queue\nmetadata: {name: fq}\n---\n" + JOB_DOC.format(name="ffirst", namespace="") + "---\n"
                 + JOB_DOC.format(name="fsecond", namespace=""), (),
                 "{path}: only the first Job (ffirst) is run; skipped Queue fq, Job fsecond\n"
                 "run job ffirst successfully",
                 ("default", "ffirst"), id="first-job-of-several"),
    # pkg/cli/job/run_test.go "CreateJobWithFile": the file holds the Job as JSON (json.Marshal), named .yaml
    pytest.param(json.dumps(yaml.safe_load(JOB_DOC.format(name="fjson", namespace=""))), (),
                 "run job fjson successfully", ("default", "fjson"), id="json-in-a-yaml-file"),
])
def test_job_run_file(vcctl, api, tmp_path, text, args, want, created):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    before = {(j["metadata"]["namespace"], j["metadata"]["name"]) for j in api.list(kinds.JOB)}
    try:
        assert vcctl("job", "run", "-f", path, *args) == (0 if created else 255, want.format(path=path))
        after = {(j["metadata"]["namespace"], j["metadata"]["name"]) for j in api.list(kinds.JOB)}
        assert after - before == ({created} if created else set())
    finally:
        if created:
            api.delete(kinds.JOB, *created)


@pytest.mark.parametrize("text, want, created", [
    pytest.param(JOB_DOC.format(name="fstdin", namespace=""), "run job fstdin successfully", ("default", "fstdin"),
                 id="a-job"),
    pytest.param("kind: Job\nmetadata: {name: x\n", "Failed to run job: <stdin>:3:1: document 1: invalid YAML", None,
                 id="broken-yaml"),
    pytest.param("kind: Queue\nmetadata: {name: fq}\n", "Failed to run job: <stdin>: no Job", None, id="no-job"),
])
def test_job_run_file_dash_reads_standard_input(server, api, text, want, created):
    """As `vcctl run -`: `-f -` is standard input, named <stdin> in problems (not refused as `not a yaml file`)."""
    before = {(j["metadata"]["namespace"], j["metadata"]["name"]) for j in api.list(kinds.JOB)}
    result = CliRunner().invoke(main_mod.cli, ["job", "run", "-f", "-", "-k", str(server.kubeconfig)], input=text)
    try:
        assert result.exit_code == (0 if created else 255) and result.output.startswith(want), result.output
        after = {(j["metadata"]["namespace"], j["metadata"]["name"]) for j in api.list(kinds.JOB)}
        assert after - before == ({created} if created else set())
    finally:
        if created:
            api.delete(kinds.JOB, *created)


def test_job_view_says_why_a_job_waits(vcctl, api):
    assert vcctl("job", "run", "-N", "huge", "--command", "true", "-R", "cpu=64", "-L", "cpu=64")[0] == 0
    try:
        def waiting():
            out = vcctl("job", "view", "-N", "huge")[1]
            return [ln for ln in out.splitlines() if ln.startswith("    Waiting:\t")]
        line = wait_for(waiting, "an Unschedulable condition")[0]
        assert "cpu" in line, line
    finally:
        api.delete(kinds.JOB, "default", "huge")


def test_job_suspend_and_resume_set_the_command_annotation(vcctl, api):
    assert vcctl("job", "run", "-N", "pausable", "--command", "sleep 30", "-R", "cpu=100m", "-L", "cpu=100m")[0] == 0
    try:
        wait_for(lambda: phase(api, kinds.JOB, "default", "pausable") == "Running", "pausable to run")
        assert vcctl("job", "suspend", "-N", "pausable") == (0, "")
        wait_for(lambda: phase(api, kinds.JOB, "default", "pausable") == "Aborted", "pausable to be aborted")
        assert vcctl("job", "resume", "-n", "default", "-N", "pausable") == (0, "")
        wait_for(lambda: phase(api, kinds.JOB, "default", "pausable") in ("Restarting", "Pending", "Running"),
                 "pausable to resume")
    finally:
        api.delete(kinds.JOB, "default", "pausable")


# ---- queue -------------------------------------------------------------------------------------------
def queue_row(vcctl, name):
    code, out = vcctl("queue", "get", "-n", name)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed"
    return lines[1].split()


def test_queue_create_get_operate_list_delete(vcctl, api):
    assert vcctl("queue", "create", "-n", "q1", "-w", "3") == (0, "")
    assert queue_row(vcctl, "q1")[:3] == ["q1", "3", "Open"]
    assert vcctl("queue", "operate", "-n", "q1", "-a", "close") == (0, "")
    assert queue_row(vcctl, "q1")[:3] == ["q1", "3", "Closed"]
    assert vcctl("queue", "operate", "-n", "q1", "-a", "open") == (0, "")
    assert vcctl("queue", "operate", "-n", "q1", "-a", "update", "-w", "5") == (0, "")
    assert queue_row(vcctl, "q1")[:3] == ["q1", "5", "Open"]
    code, out = vcctl("queue", "list")
    assert code == 0 and {ln.split()[0] for ln in out.splitlines()[1:]} >= {"default", "root", "q1"}
    assert vcctl("queue", "delete", "-n", "q1") == (0, "")
    wait_for(lambda: vcctl("queue", "get", "-n", "q1")[0] == 255, "q1 to be deleted")


def test_queue_created_closed(vcctl, api):
    assert vcctl("queue", "create", "-n", "q2", "-S", "Closed") == (0, "")
    try:
        assert queue_row(vcctl, "q2")[:3] == ["q2", "1", "Closed"]
    finally:
        api.delete(kinds.QUEUE, "", "q2")


def test_get_says_when_a_jobflow_is_suspended(server, api):
    """Volcano's table (Phase: Pending or Running) on stdout; a suspended JobFlow gets a line on stderr saying so
    and how to resume it — none once it is resumed."""
    api.create({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                "metadata": {"name": "held", "namespace": "default",
                             "annotations": {"flow.volcano.sh/suspend": "true"}},
                "spec": {"flows": [{"name": "no-such-template"}]}})

    def get():
        result = CliRunner().invoke(main_mod.cli, ["jobflow", "get", "held", "-k", str(server.kubeconfig)],
                                    catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr
    # (the flow the resume starts is in nextFlows once the controller has seen the JobFlow)
    wait_for(lambda: (api.get(kinds.JOBFLOW, "default", "held").get("status") or {}).get("nextFlows"),
             "the controller to write the status")
    code, out, err = get()
    assert code == 0 and out.splitlines()[1].split()[:2] == ["held", "default"], out
    assert err == ("JobFlow default/held is suspended: no new job of it starts until it is resumed "
                   "(vcctl jobflow resume held); next: no-such-template\n")
    CliRunner().invoke(main_mod.cli, ["jobflow", "resume", "held", "-k", str(server.kubeconfig)])
    assert get()[2] == ""
    api.delete(kinds.JOBFLOW, "default", "held")


@pytest.mark.parametrize("obj, note", [
    pytest.param({"metadata": {"name": "f", "namespace": "team", "annotations": {"flow.volcano.sh/suspend": "True"}},
                  "status": {"state": {"phase": "Running"}}},
                 "JobFlow team/f is suspended: no new job of it starts until it is resumed "
                 "(vcctl jobflow resume f -n team)", id="another-namespace"),
    pytest.param({"metadata": {"name": "f", "annotations": {"flow.volcano.sh/suspend": "true"}},
                  "status": {"state": {"phase": "Running"}, "nextFlows": ["b", "c"]}},
                 "JobFlow default/f is suspended: no new job of it starts until it is resumed "
                 "(vcctl jobflow resume f); next: b, c", id="what-starts-next"),
    pytest.param({"metadata": {"name": "f", "namespace": "default", "annotations": {"flow.volcano.sh/suspend": "true"}},
                  "status": {"state": {"phase": "Failed"}}}, "", id="finished"),
    pytest.param({"metadata": {"name": "f", "namespace": "default"}}, "", id="not-suspended"),
])
def test_suspended_note(obj, note):
    assert client_jobflow.suspended_note(obj) == note
