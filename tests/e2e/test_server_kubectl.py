"""`vcctl server` driven by the real `kubectl` binary and the official `kubernetes` Python client.

One real server process for the module (temporary data directory, a free port, its kubeconfig
and self-signed TLS); kubectl with default validation (OpenAPI v3 downloaded), server-side apply,
`get` with Table columns, `-w`, `-o yaml|json|wide`, describe (events), logs, patch, delete with
cascade, errors; the official client's list/create/patch-status/watch; and requests without the
token, or with a wrong one, that get 401 and change nothing. The server must stop with exit 0.
"""
import base64
import json
import re
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import yaml

from tests import vcctl_server
from tests.e2e.conftest import ROOT

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]
DIAMOND = ROOT / "examples" / "diamond.yaml"
FLOWS = ("a", "b", "c", "d", "e")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)
    assert "stopped" in (srv.data_dir / "server.log").read_text()


def rows(text):
    return [line.split() for line in text.strip().splitlines()]


def wait_for(kubectl, args, predicate, what, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        out = kubectl(*args, check=False)
        if predicate(out):
            return out
        assert time.monotonic() < deadline, f"gave up waiting for {what}: {out.stdout}{out.stderr}"
        time.sleep(0.3)


def test_kubectl_runs_the_diamond(kubectl, server):
    out = kubectl("apply", "-f", DIAMOND).stdout  # default validation: needs /openapi/v3
    assert "jobflow.flow.volcano.sh/diamond created" in out
    assert all(f"jobtemplate.flow.volcano.sh/{f} created" in out for f in FLOWS)
    table = rows(kubectl("get", "jf").stdout)
    assert table[0] == ["NAME", "STATUS", "AGE"] and table[1][0] == "diamond"

    watcher = subprocess.Popen(["kubectl", "--kubeconfig", str(server.kubeconfig), "get", "jf", "diamond", "-w"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = watcher.stdout.readline()
            assert line, f"kubectl get -w ended early: {seen} {watcher.stderr.read()}"
            seen.append(line.split())
            if len(seen[-1]) > 1 and seen[-1][1] == "Succeed":
                break
        assert seen[0] == ["NAME", "STATUS", "AGE"] and seen[-1][:2] == ["diamond", "Succeed"], seen
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)

    doc = json.loads(kubectl("get", "jf", "diamond", "-o", "json").stdout)
    assert doc["status"]["state"]["phase"] == "Succeed"
    assert sorted(doc["status"]["completedJobs"]) == [f"diamond-{f}" for f in FLOWS]
    assert yaml.safe_load(kubectl("get", "jf", "diamond", "-o", "yaml").stdout)["metadata"]["name"] == "diamond"
    wide = rows(kubectl("get", "vcjob", "-o", "wide").stdout)
    assert wide[0] == ["NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE", "QUEUE"]
    assert {r[0]: r[1] for r in wide[1:]} == {f"diamond-{f}": "Completed" for f in FLOWS}
    pg = ("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: lone}\n"
          "spec: {minMember: 2, queue: default}\n")
    kubectl("apply", "-f", "-", input=pg)
    pg_rows = rows(kubectl("get", "pg", "lone", "-o", "wide").stdout)
    assert pg_rows[0] == ["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"]
    assert pg_rows[1][0] == "lone" and pg_rows[1][2] == "2" and pg_rows[1][-1] == "default"
    assert rows(kubectl("get", "q").stdout)[0] == ["NAME", "PARENT"]
    pods = rows(kubectl("get", "pods").stdout)
    assert pods[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert {r[2] for r in pods[1:]} == {"Completed"} and len(pods) == 7

    described = kubectl("describe", "jf", "diamond").stdout
    assert "Events:" in described and "create a job named diamond-e" in described
    # field selectors with slashes in values (involvedObject.apiVersion=flow.volcano.sh/v1alpha1)
    assert "create a job named diamond-e" in kubectl("events", "--for", "jf/diamond").stdout
    # `kubectl get events` lists in name order: an object's Events in the order they happened
    jobs = [m.split()[-1] for m in kubectl("get", "events", "--field-selector", "involvedObject.name=diamond", "-o",
                                           "jsonpath={range .items[*]}{.message}{'\\n'}{end}").stdout.splitlines()]
    assert jobs[:2] == ["diamond-a!", "diamond-b!"] and sorted(jobs[2:4]) == ["diamond-c!", "diamond-d!"] \
        and jobs[4:] == ["diamond-e!"], jobs   # (c and d are created at the same moment)
    out = kubectl("get", "jf", "--field-selector", "spec.flows=x", check=False)
    assert out.returncode == 1 and "field label not supported: spec.flows" in out.stderr, out.stderr
    assert "best model: d" in kubectl("logs", "diamond-e-evaluate-0").stdout
    assert kubectl("logs", "diamond-e-evaluate-0", "--tail=1").stdout == "best model: d\n"
    assert "best model: d" in kubectl("logs", "-f", "diamond-e-evaluate-0", timeout=30).stdout
    # the time of a line: when the executor saw it (a look while it ran, or the run's end, finishedAt)
    run = json.loads(kubectl("get", "pod", "diamond-e-evaluate-0", "-o", "json").stdout)[
        "status"]["containerStatuses"][0]["state"]["terminated"]
    stamped = kubectl("logs", "diamond-e-evaluate-0", "--timestamps", "--tail=1").stdout
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z best model: d\n", stamped), stamped
    assert run["startedAt"][:-1] <= stamped[:19] <= run["finishedAt"][:-1], (run, stamped)
    assert kubectl("logs", "diamond-e-evaluate-0", "--since=1h", "--tail=1").stdout == "best model: d\n"
    assert kubectl("logs", "diamond-e-evaluate-0", "--since-time=2099-01-01T00:00:00Z").stdout == ""


def test_server_side_apply_repeats_and_patches(kubectl):
    for _ in range(2):
        out = kubectl("apply", "--server-side", "-f", DIAMOND).stdout
        assert "jobtemplate.flow.volcano.sh/a serverside-applied" in out, out
    kubectl("patch", "jt", "a", "--type=merge", "-p", '{"metadata":{"labels":{"merged":"yes"}}}')
    kubectl("patch", "jt", "a", "--type=json", "-p", '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]')
    labels = json.loads(kubectl("get", "jt", "a", "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"merged": "yes", "json": "yes"}
    assert rows(kubectl("get", "jt", "-l", "json=yes").stdout)[1][0] == "a"


@pytest.mark.parametrize("verb, kind, name", [
    pytest.param("annotate", "jt", "a", id="annotate-custom-resource"),   # (a merge patch)
    pytest.param("label", "jf", "diamond", id="label-custom-resource"),
    pytest.param("annotate", "q", "default", id="annotate-cluster-scoped"),
    pytest.param("annotate", "ns", "default", id="annotate-built-in"),   # (a strategic merge patch)
])
def test_removing_the_last_label_or_annotation_leaves_no_empty_map(kubectl, verb, kind, name):
    """As on a cluster (omitempty): after `kubectl annotate x k-` of the last annotation, `-o yaml` shows
    no `annotations:` key (nor `labels:` after `kubectl label x k-`)."""
    field = "annotations" if verb == "annotate" else "labels"
    before = yaml.safe_load(kubectl("get", kind, name, "-o", "yaml").stdout)["metadata"].get(field) or {}
    for key in before:
        kubectl(verb, kind, name, f"{key}-")
    kubectl(verb, kind, name, "vclite.test/k=v")
    kubectl(verb, kind, name, "vclite.test/k-")
    assert field not in yaml.safe_load(kubectl("get", kind, name, "-o", "yaml").stdout)["metadata"]
    for key, value in before.items():
        kubectl(verb, kind, name, f"{key}={value}")
    assert (yaml.safe_load(kubectl("get", kind, name, "-o", "yaml").stdout)["metadata"].get(field) or {}) == before


@pytest.mark.parametrize("kind, name", [("jt", "a"), ("jf", "diamond"), ("vcjob", "diamond-a"), ("q", "default")])
def test_strategic_merge_patch_is_refused_for_custom_resources(kubectl, kind, name):
    """kubectl patch without --type sends a strategic merge patch: a cluster answers 415 for a custom
    resource, and so does vclite (built-in kinds take it: test_strategic_merge_patch_of_a_built_in_kind)."""
    out = kubectl("patch", kind, name, "-p", '{"metadata":{"labels":{"sm":"1"}}}', check=False)
    assert out.returncode == 1
    assert "application/strategic-merge-patch+json is not supported by" in out.stderr, out.stderr
    assert ("the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml") in out.stderr
    labels = json.loads(kubectl("get", kind, name, "-o", "json").stdout)["metadata"].get("labels") or {}
    assert "sm" not in labels


@pytest.mark.parametrize("ptype, body, words", [
    ("merge", '{"metadata":null}', "the name of the object (a based on URL) was undeterminable"),
    ("merge", '{"metadata":{"name":"b"}}', "the name of the object (b) does not match the name on the URL (a)"),
    ("json", '[{"op":"remove","path":"/metadata"}]', "the name of the object (a based on URL) was undeterminable"),
])
def test_a_patch_that_loses_or_changes_the_name_is_refused(kubectl, ptype, body, words):
    before = json.loads(kubectl("get", "jt", "a", "-o", "json").stdout)["metadata"]
    out = kubectl("patch", "jt", "a", f"--type={ptype}", "-p", body, check=False)
    assert out.returncode == 1 and f"Error from server (BadRequest): {words}" in out.stderr, out.stderr
    assert json.loads(kubectl("get", "jt", "a", "-o", "json").stdout)["metadata"] == before


def test_strategic_merge_patch_of_a_built_in_kind(kubectl):
    kubectl("create", "configmap", "smp", "--from-literal=a=1")
    assert kubectl("patch", "cm", "smp", "-p", '{"data":{"b":"2"}}').stdout.strip() == "configmap/smp patched"
    assert json.loads(kubectl("get", "cm", "smp", "-o", "json").stdout)["data"] == {"a": "1", "b": "2"}
    kubectl("delete", "cm", "smp")


def test_errors_as_kubectl_prints_them(kubectl, write):
    out = kubectl("get", "jf", "nonexist", check=False)
    assert out.returncode == 1
    assert out.stderr.strip() == 'Error from server (NotFound): jobflows.flow.volcano.sh "nonexist" not found'
    cyclic = write("cycle.yaml", "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: loop}\n"
                                 "spec:\n  flows:\n  - {name: a, dependsOn: {targets: [b]}}\n"
                                 "  - {name: b, dependsOn: {targets: [a]}}\n")
    out = kubectl("apply", "-f", cyclic, check=False)
    assert out.returncode == 1 and 'The JobFlow "loop" is invalid' in out.stderr, out.stderr
    assert "jobflow Flow is not DAG" in out.stderr
    assert kubectl("get", "jf", "loop", check=False).returncode == 1
    # Kubernetes' Priority admission: a pod naming a PriorityClass that does not exist is refused
    pod = write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: prio}\nspec:\n  priorityClassName: gold\n"
                            "  containers: [{name: c, image: busybox, command: [\"true\"]}]\n")
    out = kubectl("apply", "-f", pod, check=False)
    assert out.returncode == 1 and 'Error from server (Forbidden): error when creating' in out.stderr, out.stderr
    assert 'pods "prio" is forbidden: no PriorityClass with name gold was found' in out.stderr, out.stderr
    assert kubectl("get", "pod", "prio", check=False).returncode == 1


@pytest.mark.parametrize("api_version, kind", [("flow.volcano.sh/v1alpha1", "Jobflow"),
                                               ("flow.volcano.sh/v1alpha2", "JobFlow"),
                                               ("apps/v1", "Widget")])
@pytest.mark.parametrize("how", [["apply"], ["create"]])
def test_a_kind_the_server_does_not_serve(kubectl, api_version, kind, how):
    """A mistyped kind or version, or a kind vclite does not serve: kubectl's default validation
    (strict) finds no schema for it and the mapping names it, as on a cluster without that CRD
    (it needs /openapi/v2 to say so, not "failed to download openapi")."""
    manifest = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: typo}}\nspec: {{}}\n"
    out = kubectl(*how, "-f", "-", input=manifest, check=False)
    assert out.returncode == 1, out.stdout
    assert f'no matches for kind "{kind}" in version "{api_version}"' in out.stderr, out.stderr
    assert "ensure CRDs are installed first" in out.stderr and "openapi" not in out.stderr, out.stderr


@pytest.mark.parametrize("how", [["apply"], ["create"], ["apply", "--server-side"]])
def test_a_kind_kubernetes_has_that_vclite_does_not_run(kubectl, how):
    """A Deployment is mapped (kubectl's prune list needs apps/v1) but refused, saying why."""
    manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}\n"
    out = kubectl(*how, "-f", "-", input=manifest, check=False)
    assert out.returncode == 1 and "(MethodNotAllowed)" in out.stderr, out.stderr
    assert "vclite does not run deployments.apps" in out.stderr, out.stderr


def test_deleting_a_kind_vclite_does_not_run_finds_nothing(kubectl, write):
    manifest = write("mixed.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}\n---\n"
                                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mixed}\n")
    kubectl("create", "cm", "mixed")
    out = kubectl("delete", "-f", manifest, "--ignore-not-found")
    assert out.stdout == 'configmap "mixed" deleted\n', out
    assert 'deployments.apps "web" not found' in kubectl("delete", "deploy", "web", check=False).stderr


def test_kubectl_auth_can_i_and_whoami(kubectl):
    """The token's holder may do everything (system:masters on a cluster): `kubectl auth` asks the
    server (self-subject reviews, sent as protobuf) and says so."""
    out = kubectl("auth", "can-i", "create", "jobflows")
    assert out.stdout == "yes\n", out.stderr
    assert kubectl("auth", "can-i", "delete", "pods", "-n", "team", "--subresource=log").stdout == "yes\n"
    assert kubectl("auth", "can-i", "get", "/metrics").stdout == "yes\n"
    assert rows(kubectl("auth", "can-i", "--list").stdout)[1] == ["*.*", "[]", "[]", "[*]"]
    assert rows(kubectl("auth", "whoami").stdout) == [["ATTRIBUTE", "VALUE"], ["Username", "vclite-admin"],
                                                      ["Groups", "[system:masters", "system:authenticated]"]]


def test_acting_as_another_user_is_refused_not_answered_as_the_token_holder(kubectl):
    """`--as` names a user vclite does not have: refused (a `yes` would be the token holder's answer)."""
    out = kubectl("auth", "can-i", "delete", "pods", "--as=bob", check=False)
    assert out.returncode != 0 and "yes" not in out.stdout, out
    assert 'users "bob" is forbidden' in out.stderr and "impersonation" in out.stderr, out.stderr
    assert "vclite-admin" in kubectl("auth", "whoami", "--as=vclite-admin").stdout


def one_pod_template(name, *command):
    """A JobTemplate of one task with one pod running `command` (a program and its arguments)."""
    return f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {{name: {name}}}
spec:
  minAvailable: 1
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{{name: c, image: busybox, command: {json.dumps(list(command))}}}]
"""


DRY_JT = one_pod_template("dry", "sh", "-c", "sleep 1")


def test_server_dry_run_and_diff(kubectl, write):
    """--dry-run=server (dryRun=All): admitted, answered, never stored; `kubectl diff` uses it."""
    path = write("dry.yaml", DRY_JT)
    for how in (["apply"], ["create"], ["apply", "--server-side"]):
        out = kubectl(*how, "--dry-run=server", "-f", path)
        assert "jobtemplate.flow.volcano.sh/dry" in out.stdout and "(server dry run)" in out.stdout, out.stdout
    assert kubectl("get", "jt", "dry", check=False).returncode == 1, "a dry run must store nothing"
    invalid = write("dry-bad.yaml", DRY_JT.replace("replicas: 1", "replicas: -1"))
    out = kubectl("apply", "--dry-run=server", "-f", invalid, check=False)
    assert out.returncode == 1 and 'The JobTemplate "dry" is invalid' in out.stderr, out.stderr
    kubectl("apply", "-f", path)
    assert kubectl("diff", "-f", path).stdout == ""
    changed = write("dry2.yaml", DRY_JT.replace("sleep 1", "sleep 3"))
    out = kubectl("diff", "-f", changed, check=False)
    assert out.returncode == 1, out.stderr   # 1: differences found
    assert "-          - sleep 1" in out.stdout and "+          - sleep 3" in out.stdout, out.stdout
    out = kubectl("delete", "jt", "dry", "--dry-run=server")
    assert out.stdout.strip() == 'jobtemplate.flow.volcano.sh "dry" deleted (server dry run)'
    live = json.loads(kubectl("get", "jt", "dry", "-o", "json").stdout)
    assert live["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][-1] == "sleep 1"
    kubectl("delete", "jt", "dry")


def test_deleting_a_namespace_takes_its_content(kubectl, write):
    kubectl("create", "namespace", "gone")
    kubectl("-n", "gone", "apply", "-f", write("dry-gone.yaml", DRY_JT))
    kubectl("-n", "gone", "create", "configmap", "cfg", "--from-literal=a=1")
    assert kubectl("delete", "namespace", "gone").stdout.strip() == 'namespace "gone" deleted'   # (waits)
    assert kubectl("get", "namespace", "gone", check=False).returncode == 1
    for kind in ("jt", "cm"):
        out = kubectl("-n", "gone", "get", kind)
        assert out.stdout == "" and "No resources found in gone namespace." in out.stderr, (kind, out.stderr)
    out = kubectl("delete", "namespace", "default", check=False)
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in out.stderr, out.stderr


TYPO_JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: typo}
spec:
  schedulerName: nobody   # (never scheduled: test_metrics_after_work counts the module's scheduled pods)
  minAvaliable: 1
  tasks:
    - name: a
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, command: ["true"], imagee: busybox}]
"""


@pytest.mark.parametrize("how", [["apply"], ["create"], ["apply", "--server-side"]])
def test_strict_field_validation_refuses_unknown_fields(kubectl, write, how):
    """kubectl's default --validate=strict: the server refuses fields the schema does not define, as
    kube-apiserver does; --validate=false keeps them."""
    path = write("typo.yaml", TYPO_JOB)
    out = kubectl(*how, "-f", path, check=False)
    assert out.returncode == 1, out.stdout
    assert ('Job in version "v1alpha1" cannot be handled as a Job: strict decoding error: unknown field '
            '"spec.minAvaliable", unknown field "spec.tasks[0].template.spec.containers[0].imagee"') in out.stderr
    assert kubectl("get", "vcjob", "typo", check=False).returncode == 1, "nothing may be created"


@pytest.mark.parametrize("validate, warned", [("warn", True), ("false", False)])
def test_unknown_fields_kept_with_warn_or_without_validation(kubectl, write, validate, warned):
    """--validate=warn: created, each unknown field named in a Warning kubectl prints; false: silent."""
    out = kubectl("apply", f"--validate={validate}", "-f", write("typo.yaml", TYPO_JOB.replace("typo", "typo-kept")))
    assert "job.batch.volcano.sh/typo-kept created" in out.stdout
    warnings = ['Warning: unknown field "spec.minAvaliable"',
                'Warning: unknown field "spec.tasks[0].template.spec.containers[0].imagee"']
    assert [ln for ln in out.stderr.splitlines() if ln.startswith("Warning:")] == (warnings if warned else [])
    job = json.loads(kubectl("get", "vcjob", "typo-kept", "-o", "json").stdout)
    assert job["spec"]["minAvaliable"] == 1
    kubectl("delete", "vcjob", "typo-kept")


@pytest.mark.parametrize("field, words", [
    pytest.param("jf.spec.flows.retry.backoff.maxDuration", "the time allowed for all attempts together",
                 id="retry"),
    pytest.param("jobflow.spec.flows.dependsOn.expression", "train.Completed && (eval.Failed || eval.Skipped)",
                 id="expression"),
    pytest.param("jf.spec.onExit", "the exit handler", id="exit-handler"),
    pytest.param("jobflows.status.skippedJobs", "flows that will never run", id="status"),
    pytest.param("jf.status.jobStatusList.runningHistories", "the phases it went through", id="histories"),
    pytest.param("jf.status.conditions.reason", "why it waits, was skipped, or retries", id="condition"),
])
def test_kubectl_explain_teaches_the_jobflow_fields(kubectl, field, words):
    out = kubectl("explain", field).stdout
    assert "KIND:       JobFlow" in out and words in " ".join(out.split()), out


@pytest.mark.parametrize("field, kind, fields, words", [
    pytest.param("jt", "JobTemplate", ("spec", "status"), "a flow placeholder", id="jt"),
    pytest.param("jt.spec.tasks", "JobTemplate", ("name", "replicas", "minAvailable", "template", "policies",
                                                  "dependsOn", "partitionPolicy"), "identical pods", id="jt-tasks"),
    pytest.param("jobtemplate.spec.tasks.template", "JobTemplate", (), "a Kubernetes PodTemplateSpec",
                 id="jt-template"),
    pytest.param("vcjob.spec", "Job", ("minAvailable", "queue", "maxRetry", "plugins", "minSuccess"), "the gang",
                 id="vcjob-spec"),
    pytest.param("vcjob.spec.policies", "Job", ("event", "events", "exitCode", "action", "timeout"),
                 "a task's own policies are tried first", id="vcjob-policies"),
    pytest.param("vj.spec.tasks.partitionPolicy", "Job", ("totalPartitions", "partitionSize", "minPartitions"),
                 "pods per partition", id="vj-partition"),
    pytest.param("vcjob.status", "Job", ("state", "taskStatusCount", "retryCount", "conditions"),
                 "pods being deleted", id="vcjob-status"),
    pytest.param("vcjob.status.state.phase", "Job", (), "Completed, Failed and Terminated are final",
                 id="vcjob-phase"),
    pytest.param("queue.spec", "Queue", ("weight", "capability", "reclaimable", "guarantee", "deserved", "parent",
                                         "priority"), "relative to other queues' weights", id="queue-spec"),
    pytest.param("q.status", "Queue", ("state", "inqueue", "allocated"), "PodGroups of the queue in phase Pending",
                 id="q-status"),
    pytest.param("queue-v1beta1.spec.guarantee.resource", "Queue", (), "no more than deserved", id="queue-guarantee"),
    pytest.param("podgroup.spec", "PodGroup", ("minMember", "minTaskMember", "queue", "minResources",
                                               "subGroupPolicy"), "must be placed together", id="podgroup-spec"),
    pytest.param("pg.status.conditions", "PodGroup", ("type", "status", "reason", "message", "transitionID"),
                 "Unschedulable and why", id="pg-conditions"),
    pytest.param("podgroup-v1beta1.status.phase", "PodGroup", (), "Inqueue (admitted", id="pg-phase"),
])
def test_kubectl_explain_teaches_volcanos_kinds(kubectl, field, kind, fields, words):
    out = kubectl("explain", field).stdout
    assert f"KIND:       {kind}" in out and words in " ".join(out.split()), out
    listed = [line.split("\t")[0].strip() for line in out.splitlines() if line.startswith("  ") and "\t<" in line]
    assert set(fields) <= set(listed), out
    assert "<no description>" not in out, out


def test_kubectl_explain_recursive_lists_the_flow_primitives(kubectl):
    out = kubectl("explain", "jf.spec.flows", "--recursive").stdout
    for name in ("when", "withItems", "withParam", "repeat", "retry", "patch", "probe", "strategy", "limit"):
        assert f"  {name}\t" in out, out


def test_generators_that_send_protobuf_and_a_stale_replace(kubectl, write):
    assert kubectl("create", "namespace", "team").stdout == "namespace/team created\n"
    kubectl("-n", "team", "create", "configmap", "cfg", "--from-literal=a=1")
    assert json.loads(kubectl("-n", "team", "get", "cm", "cfg", "-o", "json").stdout)["data"] == {"a": "1"}
    kubectl("create", "priorityclass", "urgent", "--value=1000")
    header, urgent = rows(kubectl("get", "pc", "urgent").stdout)
    assert header == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"], header
    assert urgent[:3] == ["urgent", "1000", "false"] and urgent[4] == "PreemptLowerPriority", urgent
    system = {r[0]: r[1] for r in rows(kubectl("get", "pc").stdout)[1:] if r[0].startswith("system-")}
    assert system == {"system-cluster-critical": "2000000000", "system-node-critical": "2000001000"}, system
    kubectl("-n", "team", "create", "secret", "generic", "creds", "--from-literal=token=abc")
    assert rows(kubectl("-n", "team", "get", "secret", "creds").stdout)[1][:3] == ["creds", "Opaque", "1"]
    assert json.loads(kubectl("-n", "team", "get", "secret", "creds", "-o", "json").stdout)["data"] == {
        "token": "YWJj"}
    bad = kubectl("-n", "team", "create", "secret", "generic", "ssh", "--type=kubernetes.io/ssh-auth",
                  "--from-literal=a=1", check=False)
    assert bad.returncode == 1 and "data[ssh-privatekey]: Required value" in bad.stderr, bad.stderr
    stale = write("stale.yaml", kubectl("-n", "team", "get", "cm", "cfg", "-o", "yaml").stdout)
    kubectl("-n", "team", "label", "cm", "cfg", "changed=yes")
    out = kubectl("replace", "-f", stale, check=False)
    assert out.returncode == 1 and "Error from server (Conflict)" in out.stderr and \
        "the object has been modified" in out.stderr, out.stderr


def test_kubectl_create_service_sends_protobuf(kubectl):
    kubectl("create", "service", "nodeport", "web", "--tcp=80:8080", "--node-port=30080")
    kubectl("create", "service", "clusterip", "named", "--tcp=443:https")
    kubectl("create", "service", "externalname", "ext", "--external-name=example.com")
    table = {r[0]: r[1:] for r in rows(kubectl("get", "svc", "web", "named", "ext").stdout)[1:]}
    assert table["web"][0] == "NodePort" and table["web"][1].startswith("10.96."), table   # (an allocated address)
    assert table["web"][2:4] == ["<none>", "80:30080/TCP"], table
    assert table["ext"][:3] == ["ExternalName", "<none>", "example.com"], table
    spec = json.loads(kubectl("get", "svc", "named", "-o", "json").stdout)["spec"]
    assert spec["ports"] == [{"name": "443-https", "port": 443, "protocol": "TCP", "targetPort": "https"}]
    assert spec["selector"] == {"app": "named"} and spec["sessionAffinity"] == "None"
    kubectl("delete", "svc", "web", "named", "ext")


def test_delete_cascades_to_vcjobs_and_pods(kubectl):
    wait_for(kubectl, ["get", "jf", "diamond", "-o", "jsonpath={.status.state.phase}"],
             lambda p: p.stdout == "Succeed", "the diamond to succeed")
    assert 'jobflow.flow.volcano.sh "diamond" deleted' in kubectl("delete", "jf", "diamond").stdout
    wait_for(kubectl, ["get", "vcjob,pods", "-o", "name"], lambda p: p.returncode == 0 and p.stdout == "",
             "vcjobs and pods to be collected")


def test_official_python_client(server):
    from kubernetes import client, config, watch
    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    api = client.CustomObjectsApi(api_client)
    group, version, ns = "flow.volcano.sh", "v1alpha1", "default"
    jt = {"apiVersion": f"{group}/{version}", "kind": "JobTemplate", "metadata": {"name": "py-jt"},
          "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
              "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}}
    created = api.create_namespaced_custom_object(group, version, ns, "jobtemplates", jt)
    with pytest.raises(client.ApiException) as exc:
        api.create_namespaced_custom_object(group, version, ns, "jobtemplates", jt)
    assert exc.value.status == 409 and json.loads(exc.value.body)["reason"] == "AlreadyExists"
    listed = api.list_namespaced_custom_object(group, version, ns, "jobtemplates")
    assert "py-jt" in [i["metadata"]["name"] for i in listed["items"]]
    patched = api.patch_namespaced_custom_object_status(group, version, ns, "jobtemplates", "py-jt",
                                                        {"status": {"jobDependsOnList": ["x"]}})
    assert patched["status"] == {"jobDependsOnList": ["x"]}
    events = []
    stream = watch.Watch().stream(api.list_namespaced_custom_object, group, version, ns, "jobtemplates",
                                  resource_version=created["metadata"]["resourceVersion"], timeout_seconds=2)
    for ev in stream:
        events.append((ev["type"], ev["object"]["metadata"]["name"]))
    assert ("MODIFIED", "py-jt") in events
    pods = client.CoreV1Api(api_client).list_namespaced_pod(ns)
    assert isinstance(pods.items, list)


def _tls(server):
    """TLS verified against the CA the server wrote into its kubeconfig."""
    cluster = yaml.safe_load(server.kubeconfig.read_text())["clusters"][0]["cluster"]
    return ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())


def _request(server, method, path, token, body=None):
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(server.url + path, method=method, headers=headers,
                                 data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(req, context=_tls(server), timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.parametrize("token", [pytest.param(None, id="no-token"), pytest.param("wrong", id="wrong-token")])
def test_requests_without_the_token_get_401_and_change_nothing(server, kubectl, token):
    q = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "intruder"},
         "spec": {"weight": 1}}
    for method, path, body in (("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", q),
                               ("DELETE", "/apis/scheduling.volcano.sh/v1beta1/queues/default", None),
                               ("GET", "/api/v1/namespaces/default/pods", None),
                               ("GET", "/no/such/thing", None)):
        code, st = _request(server, method, path, token, body)
        assert (code, st["reason"], st["message"]) == (401, "Unauthorized", "Unauthorized"), (method, path, st)
        assert set(st) == {"kind", "apiVersion", "metadata", "status", "message", "reason", "code"}
    assert kubectl("get", "q", "intruder", check=False).returncode == 1
    assert rows(kubectl("get", "q", "default").stdout)[1][0] == "default"
    out = subprocess.run(["kubectl", "--kubeconfig", str(server.kubeconfig), "--token", token or "x", "get", "q"],
                         capture_output=True, text=True, timeout=60)
    # kubectl words it after the request that met the 401: discovery, or the list itself
    assert out.returncode == 1 and "You must be logged in to the server" in out.stderr, out.stderr
    assert _request(server, "GET", "/version", server.token())[0] == 200  # the right token still works


def test_metrics_after_work(server):
    req = urllib.request.Request(server.url + "/metrics", headers={"Authorization": f"Bearer {server.token()}"})
    with urllib.request.urlopen(req, context=_tls(server), timeout=10) as resp:
        text = resp.read().decode()
    assert "vclite_scheduler_pods_scheduled_total 6" in text, text
    assert "vclite_scheduler_session_duration_seconds_count" in text
    assert 'vclite_apiserver_request_total{code="401"' in text


TTL_JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "short-lived"},
           "spec": {"ttlSecondsAfterFinished": 3, "tasks": [{"name": "main", "replicas": 1, "template": {"spec": {
               "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}}]}}


def test_a_finished_vcjob_is_deleted_after_its_ttl(kubectl, write):
    """A server keeps running clean-up timers (a stuck `vcctl run` stops without waiting for them).
    (After the metrics test, which counts the pods scheduled.)"""
    kubectl("apply", "-f", write("ttl.yaml", yaml.safe_dump(TTL_JOB)))
    wait_for(kubectl, ["get", "vcjob", "short-lived", "--ignore-not-found", "-o", "name"],
             lambda p: p.returncode == 0 and p.stdout == "", "the vcjob to be deleted after its TTL")


def test_json_logs_plain_http_and_a_data_dir_in_use(tmp_path):
    with vcctl_server.running(tmp_path / "data", "--plain-http", "--log-format", "json") as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        req = urllib.request.Request(srv.url + "/api/v1/namespaces",
                                     headers={"Authorization": f"Bearer {srv.token()}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.loads(resp.read())["kind"] == "NamespaceList"
        second = subprocess.run([vcctl_server.VCCTL, "server", "--data-dir", str(tmp_path / "data"), "--port", "0"],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 1 and "error:" in second.stderr, second.stderr
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=30) == 0
    records = [json.loads(line) for line in (tmp_path / "data" / "server.log").read_text().splitlines()]
    request = next(r for r in records if r.get("path") == "/api/v1/namespaces")
    assert (request["code"], request["verb"], request["resource"]) == (200, "LIST", "namespaces")
    assert {"time", "level", "msg", "duration_ms", "user_agent"} <= set(request)
    assert [r["msg"] for r in records][-1] == "stopped"
    refused = subprocess.run([vcctl_server.VCCTL, "server", "--data-dir", str(tmp_path / "d2"), "--address",
                              "0.0.0.0", "--plain-http"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "only served on a loopback address" in refused.stderr


# (after test_metrics_after_work, which counts the pods scheduled before it)
RETRIED = """
apiVersion: v1
kind: Pod
metadata: {name: retried}
spec:
  schedulerName: volcano
  restartPolicy: OnFailure
  containers:
    - name: main
      image: busybox
      command: ["sh", "-c", "n=$(cat $VC_POD_DIR/n 2>/dev/null || echo 0); echo run $n; echo $((n+1)) > $VC_POD_DIR/n; [ $n = 1 ]"]
"""


def test_logs_of_the_current_run_and_previous(kubectl):
    kubectl("apply", "-f", "-", input=RETRIED)
    wait_for(kubectl, ["get", "pod", "retried", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Succeeded",
             "the pod did not succeed")
    assert kubectl("get", "pod", "retried", "-o", "jsonpath={.status.containerStatuses[0].restartCount}").stdout == "1"
    assert kubectl("logs", "retried").stdout == "run 1\n"
    assert kubectl("logs", "retried", "--previous").stdout == "run 0\n"
    kubectl("delete", "pod", "retried")
    kubectl("apply", "-f", "-", input=RETRIED.replace("OnFailure", "Never"))
    wait_for(kubectl, ["get", "pod", "retried", "-o", "jsonpath={.status.phase}"], lambda out: out.stdout == "Failed",
             "the pod made again did not fail")   # (its directory kept the counter file: run 2)
    assert kubectl("logs", "retried").stdout == "run 2\n"
    out = kubectl("logs", "retried", "-p", check=False)
    assert out.returncode == 1 and 'previous terminated container "main" in pod "retried" not found' in out.stderr
    kubectl("delete", "pod", "retried")


GRACEFUL = """
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  schedulerName: volcano
  restartPolicy: Never
  terminationGracePeriodSeconds: 20
  containers:
    - name: main
      image: busybox
      command: ["sh", "-c", "trap 'echo stopping; sleep 2; exit 0' TERM; echo up; while true; do sleep 0.1; done"]
"""


def test_deleting_a_running_pod_is_graceful(kubectl):
    """Terminating (deletionTimestamp) while the container handles SIGTERM, logs readable meanwhile;
    then gone. `--grace-period=0 --force` removes it at once."""
    for name in ("slow-stop", "forced"):
        kubectl("apply", "-f", "-", input=GRACEFUL.replace("NAME", name))
        wait_for(kubectl, ["logs", name], lambda out: out.stdout == "up\n", f"{name} did not start")
    kubectl("delete", "pod", "slow-stop", "--wait=false")
    row = rows(kubectl("get", "pod", "slow-stop").stdout)[1]
    assert row[2] == "Terminating", row
    assert kubectl("get", "pod", "slow-stop", "-o", "jsonpath={.metadata.deletionGracePeriodSeconds}").stdout == "20"
    wait_for(kubectl, ["logs", "slow-stop"], lambda out: "stopping" in out.stdout, "no SIGTERM seen in the log")
    wait_for(kubectl, ["get", "pod", "slow-stop", "--ignore-not-found"], lambda out: out.stdout == "",
             "the pod was not removed once its container stopped")
    out = kubectl("delete", "pod", "forced", "--grace-period=0", "--force")
    assert 'pod "forced" force deleted' in out.stdout, out.stdout
    assert kubectl("get", "pod", "forced", "--ignore-not-found").stdout == ""


GENERATIONS = "{.metadata.generation} {.status.observedGeneration} {.status.conditions[*].observedGeneration}"


def test_a_pods_observed_generation_follows_its_spec_as_on_kubernetes_1_33(kubectl):
    """metadata.generation 1 at create, + 1 for a spec change and for the deletion; the kubelet (the executor)
    reports the generation its status was made from in status.observedGeneration and its conditions'."""
    pod = GRACEFUL.replace("NAME", "generations").replace("sleep 2", "sleep 5")
    kubectl("apply", "-f", "-", input=pod)
    wait_for(kubectl, ["logs", "generations"], lambda out: out.stdout == "up\n", "generations did not start")
    seen = [wait_for(kubectl, ["get", "pod", "generations", "-o", f"jsonpath={GENERATIONS}"],
                     lambda out: out.stdout == "1 1 1 1 1 1 1", "observedGeneration 1").stdout]
    kubectl("patch", "pod", "generations", "-p", '{"spec": {"activeDeadlineSeconds": 3600}}')
    seen.append(wait_for(kubectl, ["get", "pod", "generations", "-o", f"jsonpath={GENERATIONS}"],
                         lambda out: out.stdout == "2 2 2 2 2 2 2", "observedGeneration 2 after a spec change").stdout)
    kubectl("label", "pod", "generations", "seen=yes")   # (metadata only: no new generation)
    kubectl("delete", "pod", "generations", "--wait=false")
    seen.append(wait_for(kubectl, ["get", "pod", "generations", "-o", f"jsonpath={GENERATIONS}"],
                         lambda out: out.stdout.startswith("3 3"), "observedGeneration 3 while terminating").stdout)
    assert seen == ["1 1 1 1 1 1 1", "2 2 2 2 2 2 2", "3 3 3 3 3 3 3"]
    assert kubectl("get", "pod", "generations", "-o", "jsonpath={.status.observedGeneration}",
                   check=False).stdout in ("3", ""), "(gone, or still terminating with the same generation)"


def test_a_pods_conditions_are_a_1_32_kubelets_for_kubectl_wait_and_describe(kubectl):
    """PodReadyToStartContainers first, PodScheduled last, as `kubectl describe pod` lists a 1.32 kubelet's; `kubectl
    wait --for=condition=PodReadyToStartContainers` while it runs; Ready False reason PodCompleted once it ended."""
    kubectl("apply", "-f", "-", input=GRACEFUL.replace("NAME", "conditions").replace(
        "while true; do sleep 0.1; done", "sleep 2"))
    out = kubectl("wait", "--for=condition=PodReadyToStartContainers", "pod/conditions", "--timeout=60s")
    assert "condition met" in out.stdout, out.stdout
    described = kubectl("describe", "pod", "conditions").stdout
    table = described[described.index("Conditions:"):].split("\n")[2:7]
    assert [line.split()[0] for line in table] == ["PodReadyToStartContainers", "Initialized", "Ready",
                                                   "ContainersReady", "PodScheduled"], described
    wait_for(kubectl, ["get", "pod", "conditions", "-o", "jsonpath={.status.phase}"],
             lambda o: o.stdout == "Succeeded", "conditions to succeed")
    jsonpath = "{range .status.conditions[*]}{.type}={.status}/{.reason};{end}"
    assert kubectl("get", "pod", "conditions", "-o", f"jsonpath={jsonpath}").stdout == (
        "PodReadyToStartContainers=False/;Initialized=True/PodCompleted;Ready=False/PodCompleted;"
        "ContainersReady=False/PodCompleted;PodScheduled=True/;")


ORPHANED = one_pod_template("kept", "true") + """---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: orphaned}
spec:
  flows: [{name: kept}]
"""


def test_delete_cascade_orphan_keeps_the_vcjobs_of_a_jobflow(kubectl):
    """--cascade=orphan (propagationPolicy Orphan), as Kubernetes' garbage collector: the JobFlow goes,
    its vcjob and the vcjob's pod stay, without the ownerReference to the JobFlow (D14, §2.6).
    (After test_metrics_after_work, which counts the pods scheduled before it.)"""
    kubectl("apply", "-f", "-", input=ORPHANED)
    wait_for(kubectl, ["get", "jf", "orphaned", "-o", "jsonpath={.status.state.phase}"],
             lambda p: p.stdout == "Succeed", "the flow to succeed")
    out = kubectl("delete", "jf", "orphaned", "--cascade=orphan")   # (waits until it is gone)
    assert out.stdout.strip() == 'jobflow.flow.volcano.sh "orphaned" deleted'
    assert kubectl("get", "jf", "orphaned", check=False).returncode == 1
    job = json.loads(kubectl("get", "vcjob", "orphaned-kept", "-o", "json").stdout)
    assert "ownerReferences" not in job["metadata"] and job["status"]["state"]["phase"] == "Completed"
    pod = json.loads(kubectl("get", "pod", "orphaned-kept-t-0", "-o", "json").stdout)
    assert [r["name"] for r in pod["metadata"]["ownerReferences"]] == ["orphaned-kept"]
    kubectl("delete", "vcjob", "orphaned-kept")
    kubectl("delete", "jt", "kept")


COUNTED = one_pod_template("passes", "true") + "---\n" + one_pod_template("fails", "false") + """---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: good}
spec:
  flows: [{name: passes}]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: bad}
spec:
  flows: [{name: passes}, {name: fails, dependsOn: {targets: [passes]}}]
"""


def test_volcano_jobflow_phase_counters(kubectl):
    """Volcano's counters (D4), by namespace, once per JobFlow that reached the phase. (After
    test_metrics_after_work, which counts the pods scheduled before it.)"""
    kubectl("create", "namespace", "counted")
    kubectl("-n", "counted", "apply", "-f", "-", input=COUNTED)
    for name, phase in (("good", "Succeed"), ("bad", "Failed")):
        wait_for(kubectl, ["-n", "counted", "get", "jf", name, "-o", "jsonpath={.status.state.phase}"],
                 lambda p, phase=phase: p.stdout == phase, f"{name} to end {phase}")
    kubectl("-n", "counted", "label", "jf", "good", "bad", "seen=yes")   # (syncs again: counted once all the same)
    text = kubectl("get", "--raw", "/metrics").stdout
    assert "# TYPE volcano_jobflow_succeed_phase_count counter" in text
    assert "# TYPE volcano_jobflow_failed_phase_count counter" in text
    assert 'volcano_jobflow_succeed_phase_count{jobflow_namespace="counted"} 1\n' in text, text
    assert 'volcano_jobflow_failed_phase_count{jobflow_namespace="counted"} 1\n' in text, text
    kubectl("delete", "namespace", "counted")


def test_a_flow_applied_before_its_templates_records_no_warning(kubectl):
    """examples/retry.yaml has the JobFlow first: its templates follow within moments, so no
    JobTemplateNotFound Warning (Volcano warns after 15 retries, D11). (After test_metrics_after_work.)"""
    kubectl("apply", "-f", ROOT / "examples" / "retry.yaml")
    wait_for(kubectl, ["get", "jf", "retry", "-o", "jsonpath={.status.state.phase}"],
             lambda p: p.stdout == "Succeed", "the flow to succeed")
    events = kubectl("events", "--for", "jf/retry").stdout
    assert "create a job named retry-fetch" in events and "JobTemplateNotFound" not in events, events
    kubectl("delete", "-f", ROOT / "examples" / "retry.yaml")


HYPERNODES = """\
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: rack-0}
spec:
  tier: 1
  tierName: rack
  members:
  - {type: Node, selector: {regexMatch: {pattern: "^node-"}}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: spine}
spec:
  tier: 2
  members:
  - {type: HyperNode, selector: {exactMatch: {name: rack-0}}}
"""


def test_hypernodes_are_served_under_their_names_and_refused_as_upstream(kubectl):
    out = kubectl("apply", "-f", "-", input=HYPERNODES).stdout   # default validation: /openapi/v3 knows the kind
    assert "hypernode.topology.volcano.sh/rack-0 created" in out, out
    # the HyperNode controller counts members as upstream: the regex matches no node (the server's is
    # local-0), the spine's exactMatch member counts by name
    kubectl("wait", "--for=jsonpath={.status.nodeCount}=1", "hn/spine", "--timeout=20s")
    kubectl("wait", "--for=jsonpath={.status.nodeCount}=0", "hn/rack-0", "--timeout=20s")
    table = rows(kubectl("get", "hn").stdout)
    assert table[0] == ["NAME", "TIER", "TIERNAME", "NODECOUNT", "AGE"]
    assert [r[:2] for r in table[1:]] == [["rack-0", "1"], ["spine", "2"]] and table[1][2] == "rack"
    assert [r[-2] for r in table[1:]] == ["0", "1"], table
    assert rows(kubectl("get", "hypernodes", "spine", "-o", "name").stdout) == [["hypernode.topology.volcano.sh/spine"]]
    bad = HYPERNODES.split("---")[0].replace('"^node-"', '"node-(["').replace("rack-0", "rack-1")
    refused = kubectl("apply", "-f", "-", input=bad, check=False)
    assert refused.returncode != 0 and "member regexMatch pattern is invalid" in refused.stderr, refused.stderr
    assert "exactly one of exactMatch, regexMatch, labelMatch" in kubectl("explain", "hn.spec.members").stdout


PRUNE_SET = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: prune-keep, labels: {set: prune-e2e}}
data: {a: "1"}
"""
PRUNE_GONE = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: prune-gone, labels: {set: prune-e2e}}
data: {a: "1"}
"""


def test_apply_prune_with_kubectls_default_allowlist(kubectl, write):
    """kubectl looks up every kind of its default prune list (Deployments, Endpoints, batch/v1 Jobs, …):
    vclite serves those it does not run empty and read only."""
    out = kubectl("apply", "-l", "set=prune-e2e", "--prune", "-f", write("both.yaml", PRUNE_SET + PRUNE_GONE)).stdout
    assert "configmap/prune-gone created" in out
    out = kubectl("apply", "-l", "set=prune-e2e", "--prune", "-f", write("one.yaml", PRUNE_SET)).stdout
    assert "configmap/prune-keep unchanged" in out and "configmap/prune-gone pruned" in out, out
    assert "NotFound" in kubectl("get", "cm", "prune-gone", check=False).stderr
    kubectl("delete", "cm", "prune-keep")
    assert "No resources found" in kubectl("get", "deployments,jobs.v1.batch,ingresses").stderr
    created = kubectl("create", "deployment", "web", "--image=nginx", check=False)
    assert created.returncode == 1 and "vclite does not run deployments.apps" in created.stderr
    assert "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs" in kubectl("get", "jobs", "-v=6").stderr
    dump = kubectl("cluster-info", "dump", "--namespaces", "default")   # reads DaemonSets, Deployments, …
    assert '"kind": "NodeList"' in dump.stdout and '"kind": "DeploymentList"' in dump.stdout


def test_health_checks_as_kubectl_get_raw_reads_them(kubectl):
    verbose = kubectl("get", "--raw", "/readyz?verbose").stdout
    assert verbose.startswith("[+]ping ok\n") and verbose.endswith("readyz check passed\n"), verbose
    assert kubectl("get", "--raw", "/livez/ping").stdout == "ok"
    assert "NotFound" in kubectl("get", "--raw", "/readyz/etcd", check=False).stderr


def test_kubectl_run_without_volcanos_scheduler_is_warned_that_the_pod_stays_pending(kubectl):
    out = kubectl("run", "no-sched", "--image=busybox", "--restart=Never", "--", "true")
    assert "pod/no-sched created" in out.stdout
    assert 'Warning: pod "no-sched" will stay Pending: schedulerName default-scheduler does not run here' in \
        out.stderr, out.stderr
    quiet = kubectl("run", "with-sched", "--image=busybox", "--restart=Never",
                    '--overrides={"spec": {"schedulerName": "volcano"}}', "--", "true")
    assert "Warning" not in quiet.stderr, quiet.stderr
    kubectl("delete", "pod", "no-sched", "with-sched", "--wait=false")


def test_client_side_apply_of_a_jobflow_too_big_for_its_last_applied_annotation(kubectl, write):
    """Kubernetes limits an object's annotations to 256 KiB: kubectl apply's copy of a 4,000-flow
    JobFlow is refused as on a cluster; server-side apply and create keep no such copy."""
    flows = [{"name": f"step-with-a-longish-name-{i}",
              **({"dependsOn": {"targets": [f"step-with-a-longish-name-{i - 1}"]}} if i else {})} for i in range(4000)]
    path = write("big.yaml", yaml.safe_dump({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                                             "metadata": {"name": "big"}, "spec": {"flows": flows}}))
    out = kubectl("apply", "--dry-run=server", "-f", path, check=False)
    assert out.returncode == 1, out.stdout
    assert 'The JobFlow "big" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes' in \
        out.stderr, out.stderr[-500:]
    assert "created (server dry run)" in kubectl("create", "--dry-run=server", "-f", path).stdout
    assert "serverside-applied (server dry run)" in kubectl("apply", "--server-side", "--dry-run=server",
                                                            "-f", path).stdout


NUMATOPOLOGY = """\
apiVersion: nodeinfo.volcano.sh/v1alpha1
kind: Numatopology
metadata: {name: node-numa}
spec:
  policies: {CPUManagerPolicy: static, TopologyManagerPolicy: single-numa-node}
  numares:
    cpu: {allocatable: "0-7", capacity: 8}
  cpuDetail:
    "0": {numa: 0, socket: 0, core: 0}
    "4": {numa: 1, socket: 1, core: 2}
"""


def test_numatopologies_are_served_and_a_bad_cpuset_is_refused(kubectl):
    out = kubectl("apply", "-f", "-", input=NUMATOPOLOGY).stdout
    assert "numatopology.nodeinfo.volcano.sh/node-numa created" in out, out
    table = rows(kubectl("get", "numatopologies").stdout)
    assert table[0] == ["NAME", "AGE"] and table[1][0] == "node-numa", table
    assert rows(kubectl("get", "numatopo", "node-numa", "-o", "name").stdout) == [
        ["numatopology.nodeinfo.volcano.sh/node-numa"]]
    refused = kubectl("apply", "-f", "-", input=NUMATOPOLOGY.replace('"0-7"', '"0-x"'), check=False)
    assert refused.returncode != 0 and "spec.numares.cpu.allocatable" in refused.stderr, refused.stderr
    assert "cpuset list" in kubectl("explain", "numatopo.spec.numares").stdout
    kubectl("delete", "numatopo", "node-numa")


def _watch_event(line):
    doc = json.loads(line)
    return doc["type"], doc["object"]["metadata"]["name"]


@pytest.mark.parametrize("output, parse", [
    pytest.param(["-o", "json"], _watch_event, id="json"),
    pytest.param([], lambda line: tuple(line.split()[:2]), id="table"),
])
def test_a_deleted_object_in_kubectl_get_watch_with_output_watch_events(kubectl, write, output, parse):
    """kubectl's `get -w --output-watch-events` wraps each object as {"type", "object"} (`-o json`, one line each) or
    adds an EVENT column: the object's deletion reads DELETED, from the server's watch event."""
    name = "watched-" + (output[-1] if output else "table")
    kubectl("apply", "-f", write(f"{name}.yaml", one_pod_template(name, "true")))
    watcher = subprocess.Popen([*kubectl.argv, "get", "jobtemplate", name, "-w", "--output-watch-events", *output],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and ("DELETED", name) not in seen:
            line = watcher.stdout.readline()
            assert line, f"kubectl get -w ended early: {seen} {watcher.stderr.read()}"
            if line.split()[0] == "EVENT":
                continue   # (the table's header)
            seen.append(parse(line))
            if seen == [("ADDED", name)]:
                kubectl("delete", "jobtemplate", name)
        assert seen == [("ADDED", name), ("DELETED", name)], seen
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
