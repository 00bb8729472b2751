"""Pure output formatting of the vcctl client commands: Volcano's exact tables, ages and shapes."""
import datetime as dt
import pathlib
import time

import pytest

from vclite.api import batch, bus, kinds
from vclite.cli import client_common as common
from vclite.cli import client_job, client_jobflow, client_queue, vtools

NOW = dt.datetime(2026, 1, 10, 12, 0, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def utc(monkeypatch):
    """Go prints times in local time: pin the local zone to UTC for exact lines."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def ago(**kw) -> str:
    return (NOW - dt.timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("seconds, want", [
    pytest.param(-5, "<invalid>", id="future"), pytest.param(-1, "0s", id="skew"), pytest.param(0, "0s", id="zero"),
    pytest.param(119, "119s", id="under-2m"), pytest.param(120, "2m", id="2m"), pytest.param(150, "2m30s", id="2m30s"),
    pytest.param(600, "10m", id="10m"), pytest.param(179 * 60, "179m", id="179m"), pytest.param(3 * 3600, "3h", id="3h"),
    pytest.param(3 * 3600 + 300, "3h5m", id="3h5m"), pytest.param(8 * 3600, "8h", id="8h"),
    pytest.param(47 * 3600, "47h", id="47h"), pytest.param(3 * 86400, "3d", id="3d"),
    pytest.param(3 * 86400 + 7200, "3d2h", id="3d2h"), pytest.param(8 * 86400, "8d", id="8d"),
    pytest.param(800 * 86400, "2y70d", id="2y70d"), pytest.param(730 * 86400, "2y", id="2y"),
    pytest.param(9 * 365 * 86400, "9y", id="9y"),
])
def test_human_duration(seconds, want):
    assert common.human_duration(seconds) == want


def test_volcano_util_duration_prints_zero_days():
    assert common.human_duration(730 * 86400, zero_days=True) == "2y0d"


@pytest.mark.parametrize("timestamp, want", [
    pytest.param(None, "<unknown>", id="missing"), pytest.param(ago(days=3), "3d", id="3-days"),
    pytest.param(ago(seconds=5), "5s", id="5s"),
])
def test_age(timestamp, want):
    assert common.age(timestamp, NOW) == want


# ---- U24/U25/U29: the jobflow and jobtemplate tables -------------------------------------------------
def jf(name, phase=None, created=None, ns="default"):
    md = {"name": name, "namespace": ns}
    if created:
        md["creationTimestamp"] = created
    out = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": md}
    if phase:
        out["status"] = {"state": {"phase": phase}}
    return out


@pytest.mark.parametrize("res, objs, want", [
    pytest.param(client_jobflow.JOBFLOW, [jf("test-jobflow", "Succeed", ago(days=3))],
                 "Name            Namespace    Phase      Age    \ntest-jobflow    default      Succeed    3d",
                 id="U24-U25-jobflow"),
    pytest.param(client_jobflow.JOBFLOW, [jf("a", None, None), jf("longer-name", "Running", ago(seconds=30), "team")],
                 "Name           Namespace    Phase      Age          \n"
                 "a              default                 <unknown>    \n"
                 "longer-name    team         Running    30s", id="widths-from-widest-cell"),
    pytest.param(client_jobflow.JOBTEMPLATE, [jf("test-jobtemplate")],
                 "Name                Namespace    \ntest-jobtemplate    default", id="U29-jobtemplate"),
])
def test_tables(res, objs, want):
    assert client_jobflow.table(res, objs, NOW).strip() == want


# ---- U28/U29: describe shapes ------------------------------------------------------------------------
U28_YAML = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-jobflow
  namespace: default
spec: {}
status:
  state: {}"""
U28_JSON = """{
  "kind": "JobFlow",
  "apiVersion": "flow.volcano.sh/v1alpha1",
  "metadata": {
    "name": "test-jobflow",
    "namespace": "default"
  },
  "spec": {},
  "status": {
    "state": {}
  }
}"""
U29_YAML = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: test-jobtemplate
  namespace: default
spec: {}
status: {}"""
U29_JSON = """{
  "kind": "JobTemplate",
  "apiVersion": "flow.volcano.sh/v1alpha1",
  "metadata": {
    "name": "test-jobtemplate",
    "namespace": "default"
  },
  "spec": {},
  "status": {}
}"""
BARE_JT = {"metadata": {"name": "test-jobtemplate", "namespace": "default"}}  # the server omitted apiVersion/kind


@pytest.mark.parametrize("res, obj, fmt, want", [
    pytest.param(client_jobflow.JOBFLOW, jf("test-jobflow"), "yaml", U28_YAML, id="U28-yaml"),
    pytest.param(client_jobflow.JOBFLOW, jf("test-jobflow"), "json", U28_JSON, id="U28-json"),
    pytest.param(client_jobflow.JOBTEMPLATE, BARE_JT, "yaml", U29_YAML, id="U29-yaml-kind-filled-in"),
    pytest.param(client_jobflow.JOBTEMPLATE, BARE_JT, "json", U29_JSON, id="U29-json-kind-filled-in"),
    pytest.param(client_jobflow.JOBFLOW, jf("x"), "xml", "Unsupported format: xml", id="unsupported"),
])
def test_describe(res, obj, fmt, want):
    assert common.describe_text(client_jobflow.describe_shape(res, obj), fmt).strip() == want


def test_describe_drops_managed_fields_unknown_fields_and_orders_like_the_go_struct():
    obj = {"status": {"state": {"phase": "Running"}, "runningJobs": ["f-a"], "pendingJobs": ["f-b"]},
           "spec": {"jobRetainPolicy": "retain", "flows": [{"name": "a"}]}, "metadata": {
               "managedFields": [{"manager": "kubectl"}], "uid": "u", "name": "f", "namespace": "default",
               "creationTimestamp": "2026-01-01T00:00:00Z", "resourceVersion": "7"},
           "kind": "JobFlow", "apiVersion": "flow.volcano.sh/v1alpha1", "extra": 1}
    shaped = client_jobflow.describe_shape(client_jobflow.JOBFLOW, obj)
    assert list(shaped) == ["kind", "apiVersion", "metadata", "spec", "status"]   # `extra`: not in the Go type
    assert list(shaped["metadata"]) == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"]
    assert list(shaped["spec"]) == ["flows", "jobRetainPolicy"]
    assert list(shaped["status"]) == ["pendingJobs", "runningJobs", "state"]
    assert common.describe_text(shaped, "yaml").splitlines()[:2] == ["apiVersion: flow.volcano.sh/v1alpha1",
                                                                       "kind: JobFlow"]


# ---- files -------------------------------------------------------------------------------------------
def test_read_documents_and_kind_filter(tmp_path, capsys):
    path = tmp_path / "f.yaml"
    path.write_text("kind: JobFlow\nmetadata: {name: a}\n---\n# only a comment\n---\n"
                    "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: t}\n---\n"
                    "metadata: {name: untyped}\n---\n")
    docs = common.read_documents(str(path))
    assert [d["metadata"]["name"] for d in docs] == ["a", "t", "untyped"]
    flows = common.of_kind(docs, "JobFlow", "flow.volcano.sh/v1alpha1", "f.yaml")
    assert [(d["kind"], d["apiVersion"], d["metadata"]["name"]) for d in flows] == [
        ("JobFlow", "flow.volcano.sh/v1alpha1", "a"), ("JobFlow", "flow.volcano.sh/v1alpha1", "untyped")]
    assert capsys.readouterr().err == "f.yaml: skipped JobTemplate t (not a JobFlow)\n"


@pytest.mark.parametrize("data, message", [
    pytest.param(b"a: [1", r"^f\.yaml:2:1: document 1: invalid YAML: did not find expected ',' or ']'", id="bad-yaml"),
    pytest.param(b"- 1\n- 2\n", r"^f\.yaml:1: document 1 must be an object, not array$", id="not-an-object"),
    pytest.param(b"a: 1\na: 2\n", r'^f\.yaml:2: document 1: mapping key "a" already defined at line 1$',
                 id="key-twice"),
    pytest.param(b"a: 1\n---\nb: [\n---\nc: {\n", r"^f\.yaml:4:1: document 2: .* \(and 1 more problem\(s\)\)$",
                 id="first-of-several"),
    pytest.param(b"a: 1\nb: \xff\n", r"^f\.yaml:2: not UTF-8 text: invalid start byte at byte 8$", id="not-utf-8"),
])
def test_read_documents_errors_are_one_line_naming_file_and_line(tmp_path, monkeypatch, data, message):
    monkeypatch.chdir(tmp_path)
    pathlib.Path("f.yaml").write_bytes(data)
    with pytest.raises(common.CommandError, match=message):
        common.read_documents("f.yaml")


# ---- vcjob -------------------------------------------------------------------------------------------
def job(name, ns="default", phase="Running", created="2026-01-09T08:00:00Z", **status):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": created},
            "spec": {"queue": "default", "tasks": [{"name": "a", "replicas": 2}, {"name": "b", "replicas": 1}]},
            "status": {"state": {"phase": phase}, **status}}


def test_job_list_columns(utc):
    text = client_job.list_text([job("j1", minAvailable=3, running=2, pending=1, retryCount=1)], False)
    assert text.splitlines() == [
        "Name   Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   Failed    "
        "Unknown     RetryCount",
        "j1     2026-01-09     Running     Batch       3           3     1         2         0           0         "
        "0           1         "]


def test_job_list_all_namespaces_puts_namespace_first(utc):
    line = client_job.list_text([job("j1", ns="team-a")], True).splitlines()[1]
    assert line.startswith("team-a      j1     2026-01-09     Running")


@pytest.mark.parametrize("spec, want", [
    pytest.param("", {}, id="empty"),
    pytest.param("cpu=1000m,memory=100Mi", {"cpu": "1000m", "memory": "100Mi"}, id="default"),
])
def test_parse_resources(spec, want):
    assert client_job.parse_resources(spec) == want


@pytest.mark.parametrize("spec, message", [
    pytest.param("cpu", "invalid argument syntax cpu, expected <resource>=<value>", id="no-equals"),
    pytest.param("cpu=1=2", "invalid argument syntax cpu=1=2", id="two-equals"),
    pytest.param("cpu=lots", "lots", id="bad-quantity"),
])
def test_parse_resources_errors(spec, message):
    with pytest.raises(common.CommandError, match=message):
        client_job.parse_resources(spec)


def test_launch_job_is_volcanos_shape():
    got = client_job.launch_job("j", "ns", "busybox", 1, 2, {"cpu": "1"}, {}, "volcano", "echo hi")
    assert got == {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
                   "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{"replicas": 2, "template": {
                       "metadata": {"name": "j", "labels": {"job.volcano.sh": "j"}},
                       "spec": {"restartPolicy": "Never", "containers": [{
                           "image": "busybox", "name": "j", "imagePullPolicy": "IfNotPresent",
                           "resources": {"requests": {"cpu": "1"}}, "command": ["sh", "-c", "echo hi"]}]}}}]}}


def pg(job_name, phase="Pending", unschedulable=None, ns="default", queue="default"):
    status = {"phase": phase}
    if unschedulable:
        status["conditions"] = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                                 "message": unschedulable}]
    return {"metadata": {"name": f"{job_name}-pg", "namespace": ns, "ownerReferences": [
        {"kind": "Job", "name": job_name, "controller": True}]}, "spec": {"queue": queue}, "status": status}


@pytest.mark.parametrize("the_job, podgroups, want", [
    pytest.param(job("j", phase="Pending"), [pg("j", unschedulable="1/1 tasks in gang unschedulable: cpu")],
                 "1/1 tasks in gang unschedulable: cpu", id="unschedulable-message"),
    pytest.param(job("j", phase="Pending"), [pg("j")], "waiting for the scheduler to admit its PodGroup",
                 id="pending-podgroup"),
    pytest.param(job("j", phase="Running"), [pg("j", unschedulable="x")], "", id="running-does-not-wait"),
    pytest.param(job("j", phase="Pending"), [pg("other", unschedulable="x")], "", id="other-jobs-podgroup"),
    pytest.param(job("j", phase="Pending"), [pg("j", unschedulable="x", ns="elsewhere")], "", id="other-namespace"),
])
def test_waiting_reason(the_job, podgroups, want):
    assert client_job.waiting_reason(the_job, podgroups) == want


def test_view_text_has_volcanos_sections_and_the_waiting_reason(utc):
    the_job = job("j", phase="Pending", minAvailable=1)
    the_job["spec"]["tasks"][0]["template"] = {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "main", "image": "busybox", "command": ["sh", "-c", "true"], "resources": {"requests": {"cpu": "1"}}}]}}
    events = [{"type": "Warning", "reason": "PodGroupPending", "message": " not enough cpu ", "count": 3,
               "firstTimestamp": ago(minutes=5), "lastTimestamp": ago(seconds=10), "source": {"component": "vc-scheduler"}}]
    text = client_job.view_text(the_job, events, "1/1 tasks in gang unschedulable", NOW)
    lines = text.splitlines()
    assert lines[:2] == ["Name:       \tj", "Namespace:  \tdefault"]
    assert "Labels:     \t<none>" in lines and "  Creation Timestamp:\t2026-01-09 08:00:00 +0000 UTC" in lines
    assert "            sh" in lines and "              Cpu:   \t1" in lines and "              Memory:\t0" in lines
    assert lines[lines.index("  State:") + 1:lines.index("  State:") + 3] == [
        "    Phase:\tPending", "    Waiting:\t1/1 tasks in gang unschedulable"]
    assert "  Min Available:\t1" in lines
    assert lines[-3].startswith("Type           \tReason")
    assert lines[-1] == (f"{'Warning':<15}\t{'PodGroupPending':<40}\t{'10s (x3 over 5m)':<30}\t{'vc-scheduler':<40}\t"
                         "not enough cpu")


def test_view_text_prints_a_container_as_volcano_does():
    the_job = job("j")
    container = {"name": "main", "image": "busybox", "command": ["sleep", "9"],
                 "ports": [{"name": "http", "containerPort": 80}],
                 "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}
    the_job["spec"]["tasks"] = [{"name": "t", "replicas": 2,
                                 "template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}]
    lines = client_job.view_text(the_job, [], "", NOW).splitlines()
    start = lines.index("        Containers:")
    assert lines[start:lines.index("        Restart Policy:   \tNever") + 1] == [
        "        Containers:",
        "          Command:", "            sleep", "            9",
        "          Image:\tbusybox",
        "          Name: \tmain",
        "          Ports:", "            Container Port:\t80", "            Name:          \thttp",
        "          Resources:",
        "            Limits:", "              Cpu:   \t2", "              Memory:\t1Gi",
        "            Requests:", "              Cpu:   \t500m", "              Memory:\t0",
        "            Working Dir:\t",
        "        Image Pull Secrets:",
        "        Restart Policy:   \tNever",
    ]


@pytest.mark.parametrize("resources, limits, requests", [
    pytest.param({"limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": "0.5", "memory": "1.5Gi"}},
                 ("1", "1Gi"), ("500m", "1536Mi"), id="canonical-form"),
    pytest.param({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1500m", "memory": "1025Ki"}},
                 ("2", "1Gi"), ("1500m", "1025Ki"), id="already-canonical"),
    pytest.param({"limits": {"cpu": 1000, "memory": 2048}, "requests": {"cpu": 0.5, "memory": 1e3}},
                 ("1k", "2048"), ("500m", "1k"), id="numbers"),
    pytest.param({"limits": {"cpu": "1e3", "memory": "1e4"}, "requests": {"cpu": "0.5Ki", "memory": "1.500"}},
                 ("1e3", "10e3"), ("512", "1.500"), id="exponents-and-quirks"),
    pytest.param({"limits": {"cpu": None}, "requests": {}}, ("0", "0"), ("0", "0"), id="none"),
    pytest.param({"limits": {"cpu": "lots", "memory": True}}, ("lots", "true"), ("0", "0"),
                 id="no-quantity-as-written"),
])
def test_view_text_prints_quantities_as_volcanos_vcctl(resources, limits, requests):
    """Quantity.String() of each value: the canonical form, in the notation it was written in."""
    the_job = job("j")
    the_job["spec"]["tasks"] = [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
        {"name": "main", "image": "busybox", "resources": resources}]}}}]
    lines = client_job.view_text(the_job, [], "", NOW).splitlines()
    start = lines.index("          Resources:")
    assert lines[start + 1:start + 7] == [
        "            Limits:", f"              Cpu:   \t{limits[0]}", f"              Memory:\t{limits[1]}",
        "            Requests:", f"              Cpu:   \t{requests[0]}", f"              Memory:\t{requests[1]}"]


def test_view_without_events():
    assert client_job.events_text([], NOW) == "Events: \t<none>\n"


@pytest.mark.parametrize("action, generate", [
    pytest.param(batch.Action.ABORT_JOB, "j-abortjob-", id="suspend"),
    pytest.param(batch.Action.RESUME_JOB, "j-resumejob-", id="resume"),
])
def test_job_command_object(action, generate):
    the_job = job("j")
    the_job["metadata"]["uid"] = "u-1"
    cmd = bus.command_for(the_job, kinds.JOB, str(action))
    ref = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u-1", "controller": True,
           "blockOwnerDeletion": True}
    assert cmd == {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
                   "metadata": {"generateName": generate, "namespace": "default", "ownerReferences": [ref]},
                   "target": ref, "action": str(action)}


# ---- queue -------------------------------------------------------------------------------------------
def test_queue_table_counts_podgroups_by_phase():
    queues = [{"metadata": {"name": "default"}, "spec": {"weight": 1, "parent": "root"}, "status": {"state": "Open"}},
              {"metadata": {"name": "q2"}, "spec": {"weight": 5}, "status": {"state": "Closed"}}]
    pgs = [pg("a", "Running"), pg("b", "Pending"), pg("c", "Inqueue"), pg("d", "Completed"), pg("e", "Running"),
           pg("f", "Running", queue="q2"), pg("g", "Nonsense")]
    assert client_queue.queues_text(queues, pgs).splitlines() == [
        "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed",
        "default                  1       Open    root    1       1       2       0       1       ",
        "q2                       5       Closed          0       0       1       0       0       "]


def test_queue_command_object():
    cmd = bus.command_for({"metadata": {"name": "q", "uid": "u"}}, kinds.QUEUE, str(batch.Action.CLOSE_QUEUE))
    assert cmd["metadata"]["generateName"] == "q-closequeue-" and "namespace" not in cmd["metadata"]
    assert cmd["target"]["kind"] == "Queue" and cmd["action"] == "CloseQueue"


# ---- pkg/cli/util/util_test.go TestJobUtil: Volcano's util.HumanDuration ---------------------------------
@pytest.mark.parametrize("seconds, want", [
    pytest.param(-60, "<invalid>", id="InvalidTime"),
    pytest.param(-0.001, "0s", id="SmallInvalieTime"),
    pytest.param(62, "62s", id="NormalSeconds"),
    pytest.param(180, "3m", id="NormalMinutes"),
    pytest.param(190, "3m10s", id="NormalMinutesWithSecond"),
    pytest.param(121 * 60 + 56, "121m", id="BiggerMinutesWithoutSecond"),
    pytest.param(5 * 3600 + 9, "5h", id="NormalHours"),
    pytest.param(5 * 3600 + 7 * 60 + 9, "5h7m", id="NormalHoursWithMinute"),
    pytest.param(12 * 3600 + 7 * 60 + 9, "12h", id="BiggerHoursWithoutMinute"),
    pytest.param(5 * 86400 + 7 * 60 + 9, "5d", id="NormalDays"),
    pytest.param(5 * 86400 + 9 * 3600, "5d9h", id="NormalDaysWithHours"),
    pytest.param(531 * 86400 + 7 * 60 + 9, "531d", id="BiggerDayWithoutHours"),
    pytest.param((365 * 5 + 89) * 86400 + 7 * 60 + 9, "5y89d", id="NormalYears"),
    pytest.param((365 * 12 + 15) * 86400 + 7 * 60 + 9, "12y", id="BiggerYears"),
])
def test_volcano_util_human_duration(seconds, want):
    assert common.human_duration(seconds, zero_days=True) == want


# ---- pkg/cli/job/list_test.go TestListJob: filters and the exact table ---------------------------------
def bare_job(name, ns="default", queue="default", scheduler=None):
    """A Job as the upstream cases write it: no creation time, no status."""
    spec = {"queue": queue}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


LIST_HEAD = ("Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   Failed    "
             "Unknown     RetryCount")
LIST_ROW = ("0001-01-01                 Batch       0           0     0         0         0           0         0"
            "           0")


@pytest.mark.parametrize("jobs, all_ns, queue, scheduler, selector, want", [
    pytest.param([bare_job("test-job")], False, "", "", "",
                 f"Name       {LIST_HEAD}\ntest-job   {LIST_ROW}", id="Normal Case"),
    pytest.param([bare_job("test-job"), bare_job("test-queue", queue="test-queue")], False, "test-queue", "", "",
                 f"Name         {LIST_HEAD}\ntest-queue   {LIST_ROW}", id="Normal Case with queueName filter"),
    pytest.param([bare_job("test-job"), bare_job("test-queue", queue="test-queue")], False, "", "", "",
                 f"Name         {LIST_HEAD}\ntest-job     {LIST_ROW}         \ntest-queue   {LIST_ROW}",
                 id="Normal Case with namespace filter"),
    pytest.param([bare_job("test-job", ns="kube-sysyem"), bare_job("test-queue", queue="test-queue")], True, "", "", "",
                 f"Namespace     Name         {LIST_HEAD}\nkube-sysyem   test-job     {LIST_ROW}         \n"
                 f"default       test-queue   {LIST_ROW}", id="Normal Case with all namespace filter"),
    pytest.param([bare_job("test-job", ns="kube-sysyem", scheduler="test-scheduler"),
                  bare_job("test-queue", queue="test-queue", scheduler="volcano")], False, "", "volcano", "",
                 f"Name         {LIST_HEAD}\ntest-queue   {LIST_ROW}", id="Normal Case with scheduler filter"),
    pytest.param([bare_job("test-job", ns="kube-sysyem", scheduler="test-scheduler"),
                  bare_job("test-queue", queue="test-queue", scheduler="volcano")], False, "", "", "test-job",
                 f"Name       {LIST_HEAD}\ntest-job   {LIST_ROW}", id="Normal Case with selector filter"),
])
def test_upstream_list_job(jobs, all_ns, queue, scheduler, selector, want):
    """Upstream's fake server answers every list with all its jobs, so the namespace case shows both."""
    chosen = client_job.select_jobs(jobs, queue, scheduler, selector)
    assert client_job.list_text(chosen, all_ns).strip() == want


# ---- pkg/cli/job/view_test.go TestViewJob -----------------------------------------------------------------
def test_upstream_view_job(utc):
    """Long names, MaxInt32 replicas, every status count, an Event counted once without a first time and one
    counted twice: printed as Volcano's PrintJobInfo and PrintEvents print them."""
    the_job = {"metadata": {"name": "testJobWithLongLongLongName",
                            "labels": {"LabelWithLongLongLongLongName": "LongLongLongLongLabelValue"},
                            "annotations": {"AnnotationWithLongLongLongLongName": "LongLongLongLongAnnotationValue"}},
               "spec": {"tasks": [{"name": "taskWithLongLongLongLongName", "replicas": 2147483647, "template": {
                   "metadata": {}, "spec": {"containers": [{"command": ["echo", "123"],
                                                            "ports": [{"name": "placeholder"}]}],
                                            "imagePullSecrets": [{"name": "imagepull-secret"}]}}}]},
               "status": {"succeeded": 1, "pending": 3, "running": 1, "failed": 2, "unknown": 10, "terminating": 4,
                          "retryCount": 5, "minAvailable": 6, "version": 7, "controlledResources": {"svc": ""}}}
    events = [{"metadata": {"name": "testJobWithLongLongLongName.123"}, "count": 1},
              {"metadata": {"name": "testJobWithLongLongLongName.456"}, "count": 2, "firstTimestamp": ago(seconds=0)},
              {"metadata": {"name": "testJobWithLongLongLongName-uid.789"}, "count": 1}]   # (its PodGroup's)
    chosen = client_job.job_events(events, "testJobWithLongLongLongName")
    lines = client_job.view_text(the_job, chosen, "", NOW).splitlines()
    assert lines[:4] == ["Name:       \ttestJobWithLongLongLongName", "Namespace:  \t",
                         'Labels:     \t{"LabelWithLongLongLongLongName":"LongLongLongLongLabelValue"}',
                         'Annotations:\t{"AnnotationWithLongLongLongLongName":"LongLongLongLongAnnotationValue"}']
    assert "    Name:\ttaskWithLongLongLongLongName" in lines and "    Replicas:\t2147483647" in lines
    assert lines[lines.index("          Command:") + 1:lines.index("          Command:") + 3] == [
        "            echo", "            123"]
    assert lines[lines.index("          Ports:") + 1:lines.index("          Ports:") + 3] == [
        "            Container Port:\t0", "            Name:          \tplaceholder"]
    assert lines[lines.index("        Image Pull Secrets:") + 1] == "          Name:     \timagepull-secret"
    status = lines.index("Status:")
    assert lines[status:status + 15] == [
        "Status:", "  Succeeded:    \t1", "  Pending:      \t3", "  Running:      \t1", "  Failed:       \t2",
        "  Terminating:  \t4", "  Unknown:      \t10", "  RetryCount:   \t5", "  Min Available:\t6",
        "  Version:      \t7", "  State:", "    Phase:\t", "  Controlled Resources:", "    svc: \t", "Events:"]
    assert lines[-2:] == [f"{'':<15}\t{'':<40}\t{'<unknown>':<30}\t{'':<40}\t",
                          f"{'':<15}\t{'':<40}\t{'<unknown> (x2 over 0s)':<30}\t{'':<40}\t"]


@pytest.mark.parametrize("labels, want", [
    pytest.param({"b": "1", "a": "2"}, '{"a":"2","b":"1"}', id="keys-sorted"),
    pytest.param({"cmd": "a && b <c>"}, '{"cmd":"a \\u0026\\u0026 b \\u003cc\\u003e"}', id="html-escaped"),
    pytest.param({"team": "équipe"}, '{"team":"équipe"}', id="utf-8-kept"),
    pytest.param({"q": 'say "hi"'}, '{"q":"say \\"hi\\""}', id="quotes"),
])
def test_view_prints_labels_as_go_json_marshal(labels, want):
    """json.Marshal of the labels and annotations (a kubectl-applied job's last-applied-configuration holds
    `&&`)."""
    the_job = job("j")
    the_job["metadata"]["labels"] = the_job["metadata"]["annotations"] = labels
    lines = client_job.view_text(the_job, [], "", NOW).splitlines()
    assert lines[2:4] == [f"Labels:     \t{want}", f"Annotations:\t{want}"]


def test_describe_json_escapes_as_go_marshal_indent():
    assert common.go_json({"a": "x<y>&z"}) == '{\n  "a": "x\\u003cy\\u003e\\u0026z"\n}\n'


def test_view_condition_without_transition_time_prints_nil(utc):
    the_job = job("j")
    the_job["status"]["conditions"] = [{"status": "Pending"},
                                       {"status": "Running", "lastTransitionTime": "2026-01-09T08:00:00Z"}]
    lines = client_job.view_text(the_job, [], "", NOW).splitlines()
    start = lines.index("  Conditions:")
    assert lines[start:start + 4] == ["  Conditions:", "    Status\tTransitionTime", "    Pending \t<nil> ",
                                      "    Running \t2026-01-09 08:00:00 +0000 UTC "]


# ---- pkg/cli/queue/queue_test.go TestListQueue, TestListQueue_residualPg ---------------------------------
QUEUE_HEAD = "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed"


@pytest.mark.parametrize("queues, podgroups, want", [
    pytest.param([{"metadata": {"name": "test-queue"}, "spec": {"weight": 1, "parent": "root"},
                   "status": {"state": "Open"}}],
                 [pg(f"j{i}", phase, queue="test-queue") for i, phase in enumerate(
                     ["Inqueue"] + ["Pending"] * 2 + ["Running"] * 3 + ["Unknown"] * 4 + ["Completed"] * 5)],
                 f"{QUEUE_HEAD}\n"
                 "test-queue               1       Open    root    1       2       3       4       5       \n",
                 id="Single queue with formatting"),
    pytest.param([{"metadata": {"name": "testQueue1"}}, {"metadata": {"name": "testQueue2"}}],
                 [pg("a", "", queue="testQueue1"), pg("b", "", queue="testQueue2"),
                  pg("c", "Running", queue="testQueue3")],
                 f"{QUEUE_HEAD}\n"
                 "testQueue1               0                       0       0       0       0       0       \n"
                 "testQueue2               0                       0       0       0       0       0       \n",
                 id="residual podgroups of a queue that does not exist"),
])
def test_upstream_list_queue(queues, podgroups, want):
    assert client_queue.queues_text(queues, podgroups) == want


# ---- stored fields read as vcctl's Go client decodes them ---------------------------------------------------
QUEUE = {"kind": "Queue", "metadata": {"name": "q"}}


@pytest.mark.parametrize("value, expected", [
    (None, 0), (3, 3), (0, 0), (2.0, 2),
])
def test_stored_int_reads_integers(value, expected):
    obj = {**QUEUE, "spec": {} if value is None else {"weight": value}}
    assert common.stored_int(obj, "spec", "weight") == expected


@pytest.mark.parametrize("value, go_type", [
    ("heavy", "string"), ("3", "string"), (True, "bool"), (2.5, "number 2.5"), ({"a": 1}, "object"), ([1], "array"),
    (1 << 31, "number 2147483648"),
])
def test_stored_int_refuses_what_go_cannot_decode(value, go_type):
    with pytest.raises(common.CommandError) as err:
        common.stored_int({**QUEUE, "spec": {"weight": value}}, "spec", "weight")
    assert str(err.value) == (f"json: cannot unmarshal {go_type} into Go struct field Queue.spec.weight of type "
                              f"int32 (q: {value!r})")


@pytest.mark.parametrize("value, ok", [
    (None, True), ("", True), ("2026-01-02T03:04:05Z", True),
    ("yesterday", False), (5, False), ("2026-13-01", False),
])
def test_stored_time(value, ok):
    job = {"kind": "Job", "metadata": {"name": "j", "namespace": "ns", "creationTimestamp": value}}
    if ok:
        got = common.stored_time(job, "metadata", "creationTimestamp")
        assert (got is None) == (not value)
    else:
        with pytest.raises(common.CommandError,
                           match=r"Go struct field Job\.metadata\.creationTimestamp of type v1\.Time \(ns/j: "):
            common.stored_time(job, "metadata", "creationTimestamp")


@pytest.mark.parametrize("fn", [common.go_time, lambda t: common.age(t, dt.datetime.now(dt.timezone.utc))])
def test_times_printed_from_a_bad_timestamp_fail_in_gos_words(fn):
    with pytest.raises(common.CommandError, match='parsing time "soon" as "2006-01-02T15:04:05Z07:00"'):
        fn("soon")


@pytest.mark.parametrize("status, words", [
    pytest.param({"state": {"phase": 5}}, "json: cannot unmarshal number into Go struct field "
                 "JobFlow.status.state.phase of type v1alpha1.Phase", id="phase-a-number"),
    pytest.param({"state": "Running"}, "json: cannot unmarshal string into Go struct field JobFlow.status.state of "
                 "type v1alpha1.State", id="state-a-string"),
    pytest.param("weird", "json: cannot unmarshal string into Go struct field JobFlow.status of type "
                 "v1alpha1.JobFlowStatus", id="status-a-string"),
])
def test_jobflow_table_of_a_mistyped_stored_status_fails_in_gos_words(status, words):
    jf = {"kind": "JobFlow", "metadata": {"name": "f", "namespace": "default",
                                          "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": status}
    with pytest.raises(common.CommandError) as err:
        client_jobflow.table(client_jobflow.JOBFLOW, [jf], dt.datetime.now(dt.timezone.utc))
    assert str(err.value).startswith(words), err.value


def test_jobflow_table_of_a_mistyped_creation_time_fails_in_gos_words():
    jf = {"kind": "JobFlow", "metadata": {"name": "f", "namespace": "default", "creationTimestamp": 7},
          "status": {"state": {"phase": "Running"}}}
    with pytest.raises(common.CommandError, match=r"Go struct field JobFlow\.metadata\.creationTimestamp of type "
                                                  r"v1\.Time"):
        client_jobflow.table(client_jobflow.JOBFLOW, [jf], dt.datetime.now(dt.timezone.utc))


@pytest.mark.parametrize("queue, words", [
    pytest.param({"spec": {"weight": 1}, "status": {"state": {"a": 1}}}, "json: cannot unmarshal object into Go "
                 "struct field Queue.status.state of type v1beta1.QueueState", id="state-an-object"),
    pytest.param({"spec": {"weight": 1, "parent": ["x"]}}, "json: cannot unmarshal array into Go struct field "
                 "Queue.spec.parent of type string", id="parent-a-list"),
    pytest.param({"spec": "x"}, "json: cannot unmarshal string into Go struct field Queue.spec of type "
                 "v1beta1.QueueSpec", id="spec-a-string"),
    pytest.param({"status": "x"}, "json: cannot unmarshal string into Go struct field Queue.status of type "
                 "v1beta1.QueueStatus", id="status-a-string"),
])
@pytest.mark.parametrize("text", [lambda q: client_queue.queues_text([q], []), lambda q: vtools.queues_text([q])],
                         ids=["queue-list", "vqueues"])
def test_queue_lines_of_a_mistyped_stored_queue_fail_in_gos_words(queue, words, text):
    with pytest.raises(common.CommandError) as err:
        text({"kind": "Queue", "metadata": {"name": "q"}, **queue})
    assert str(err.value).startswith(words), err.value
