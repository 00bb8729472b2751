"""`vcctl pod list`: Volcano's pkg/cli/pod/pod_test.go cases, and kubectl's pod status as Volcano's
printPod words it.

TestListPod's cases run the real command line against a real `vcctl server` over HTTP, each in a
namespace of its own holding the case's pods (created as upstream's buildPod makes them: one
container, phase Running, condition Ready, created "3 days ago" by the injected clock). Upstream's
fake server answers every request with the case's pods; the real server selects, so each case also
has a pod that the selection must leave out. The printer, sort and merge tests are pure.
"""
import dataclasses
import datetime as dt

import click
import pytest
from click.testing import CliRunner

from vclite.api import kinds
from vclite.cli import client_common as common
from vclite.cli import client_pod
from vclite.cli import main as main_mod
from vclite.kube import client as kube_client
from vclite.lib import clock as clock_mod

NOW = dt.datetime(2026, 1, 10, 12, 0, 0, tzinfo=dt.timezone.utc)
JOB_NAME, QUEUE_LABEL, QUEUE_ANNOTATION = "volcano.sh/job-name", "volcano.sh/queue-name", \
    "scheduling.volcano.sh/queue-name"


def ago(**kw) -> str:
    return (NOW - dt.timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_pod(namespace, name, labels=None, annotations=None):
    """Upstream's buildPod: one container, Running, Ready condition, created three days ago."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                         "annotations": dict(annotations or {}), "creationTimestamp": ago(days=3)},
            "spec": {"containers": [{"name": "my-container", "image": "nginx"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


# ---- TestListPod, against a real server ---------------------------------------------------------------
@pytest.fixture(scope="module")
def api(server):
    return kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))


def three_days_later() -> clock_mod.VirtualClock:
    return clock_mod.VirtualClock(start=clock_mod.RealClock().now() + dt.timedelta(days=3))


@pytest.fixture
def vcctl(server):
    def run(*args):
        result = CliRunner().invoke(main_mod.cli, [*map(str, args), "-k", str(server.kubeconfig)],
                                    obj={"clock": three_days_later()}, catch_exceptions=False)
        return result.exit_code, result.output.strip()   # (upstream trims the output too)
    return run


def put_pods(api, namespace, pods):
    """Create each (name, labels, annotations) as a pod of `namespace`, then give it buildPod's status
    (a pod for the default scheduler is never placed here, so nothing changes it afterwards)."""
    for name, labels, annotations in pods:
        pod = build_pod(namespace, name, labels, annotations)
        status = pod.pop("status")
        api.create(pod)
        api.patch(kinds.POD, namespace, name, {"status": status}, status=True)


ONE_POD_TABLE = ("Name          Ready      Status         Restart  Age       \n"
                 "my-pod        0/1        Running        0        3d")
THREE_PODS_TABLE = ("Name           Ready      Status         Restart  Age       \n"
                    "my-pod1        0/1        Running        0        3d        \n"
                    "my-pod2        0/1        Running        0        3d        \n"
                    "my-pod3        0/1        Running        0        3d")
ONE_OF_QUEUE_TABLE = ("Name           Ready      Status         Restart  Age       \n"
                      "my-pod1        0/1        Running        0        3d")
# A pod no vcjob made and that names no queue: no selection of these cases may show it.
STRANGER = ("stranger", {}, {})


@pytest.mark.parametrize("pods, job, queue, code, want", [
    pytest.param([("my-pod", {JOB_NAME: "my-job1"}, {}), STRANGER], "", "", 0, ONE_POD_TABLE, id="normal-case"),
    pytest.param([("my-pod", {JOB_NAME: "my-job1"}, {}), ("other-job-pod", {JOB_NAME: "my-job2"}, {}), STRANGER],
                 "my-job1", "", 0, ONE_POD_TABLE, id="job-name-filter"),
    pytest.param([("my-pod1", {QUEUE_LABEL: "my-queue1"}, {}),
                  ("my-pod2", {JOB_NAME: "my-job2", QUEUE_LABEL: "my-queue1"}, {}),
                  ("my-pod3", {}, {QUEUE_ANNOTATION: "my-queue1"}),
                  ("other-queue-pod", {JOB_NAME: "my-job3", QUEUE_LABEL: "my-queue2"}, {}), STRANGER],
                 "", "my-queue1", 0, THREE_PODS_TABLE, id="queue-name-filter"),
    pytest.param([("my-pod1", {JOB_NAME: "my-job1", QUEUE_LABEL: "my-queue1"}, {}),
                  ("my-pod2", {JOB_NAME: "my-job2", QUEUE_LABEL: "my-queue1"}, {})],
                 "my-job1", "my-queue1", 0, ONE_OF_QUEUE_TABLE, id="queue-and-job-name-filter"),
    pytest.param([("my-pod1", {JOB_NAME: "my-job1", QUEUE_LABEL: "my-queue1"}, {})], "my-job1", "my-queue2", 255,
                 "Failed to list pod: the input vcjob my-job1 does not match the queue my-queue2",
                 id="queue-and-job-name-filter-do-not-match"),
    pytest.param([STRANGER], "", "", 0, "No resources found", id="no-vcjob-pods"),
    pytest.param([("my-pod", {JOB_NAME: "my-job1"}, {})], "nosuchjob", "my-queue1", 0, "No resources found",
                 id="a-job-without-pods-matches-any-queue"),
])
def test_list_pod(vcctl, api, request, pods, job, queue, code, want):
    namespace = request.node.callspec.id
    put_pods(api, namespace, pods)
    args = ["pod", "list", "-n", namespace] + (["-j", job] if job else []) + (["-q", queue] if queue else [])
    assert vcctl(*args) == (code, want)


def test_list_pod_all_namespaces_adds_the_namespace_column(vcctl, api):
    put_pods(api, "team-b", [("worker-0", {JOB_NAME: "w"}, {}), STRANGER])
    put_pods(api, "team-a", [("worker-1", {JOB_NAME: "w"}, {}), ("worker-0", {JOB_NAME: "w"}, {})])
    code, out = vcctl("pod", "list", "-j", "w", "--all-namespaces")
    assert code == 0
    assert out.splitlines() == [
        "Namespace     Name            Ready      Status         Restart  Age       ",
        "team-a        worker-0        0/1        Running        0        3d        ",
        "team-a        worker-1        0/1        Running        0        3d        ",
        "team-b        worker-0        0/1        Running        0        3d"]
    assert vcctl("pod", "list", "-j", "w")[1] == "No resources found"   # (-n default)


@pytest.mark.parametrize("args, message", [
    pytest.param(("-j", "my job"), 'Failed to list pod: values[0][volcano.sh/job-name]: Invalid value: "my job": '
                 "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                 "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')", id="job-not-a-label"),
    pytest.param(("-s", "http://127.0.0.1:9"), 'Failed to list pod: Get "http://127.0.0.1:9/api/v1/namespaces/'
                 'default/pods?labelSelector=volcano.sh%2Fjob-name', id="master-unreachable"),
])
def test_list_pod_failures_print_volcanos_message_and_exit_255(vcctl, args, message):
    code, out = vcctl("pod", "list", *args)
    assert code == 255 and out.startswith(message), out


def test_pod_list_flags_are_volcanos():
    command = main_mod.cli.get_command(click.Context(main_mod.cli), "pod").commands["list"]
    opts = {p.name: (tuple(p.opts), p.get_default(click.Context(command))) for p in command.params
            if p.name != "help"}
    assert opts == {"master": (("-s", "--master"), ""), "kubeconfig": (("-k", "--kubeconfig"), ""),
                    "queue": (("-q", "--queue"), ""), "job": (("-j", "--job"), ""),
                    "namespace": (("-n", "--namespace"), "default"), "all_namespaces": (("--all-namespaces",), False)}
    text = CliRunner().invoke(main_mod.cli, ["pod", "list", "--help"]).output
    assert text.splitlines()[2] == "  list pod information created by vcjob" and "vcctl pod list -j " in text


# ---- printPod: kubectl's pod status, as a table ----------------------------------------------------------
def cs(name="c", restarts=0, ready=False, last_finished=None, started=None, **state):
    out = {"name": name, "restartCount": restarts, "ready": ready, "state": state}
    if last_finished:
        out["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": last_finished}}
    if started is not None:
        out["started"] = started
    return out


def pod(containers=1, inits=(), statuses=(), init_statuses=(), phase="Running", reason=None, conditions=(),
        deleted=False, created=ago(days=3)):
    md = {"name": "p", "namespace": "default"}
    if created:
        md["creationTimestamp"] = created
    if deleted:
        md["deletionTimestamp"] = ago(seconds=1)
    status = {"phase": phase, "conditions": list(conditions), "containerStatuses": list(statuses),
              "initContainerStatuses": list(init_statuses)}
    if reason:
        status["reason"] = reason
    return {"metadata": md, "status": status,
            "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)], "initContainers": list(inits)}}


READY = {"type": "Ready", "status": "True"}
INITIALIZED = {"type": "Initialized", "status": "True"}
SIDECAR = {"name": "side", "restartPolicy": "Always"}


@pytest.mark.parametrize("the_pod, ready, status, restarts", [
    pytest.param(pod(conditions=[READY]), "0/1", "Running", "0", id="upstream-buildPod"),
    pytest.param(pod(statuses=[cs(ready=True, running={})]), "1/1", "Running", "0", id="running-ready"),
    pytest.param(pod(phase="Pending", statuses=[cs(waiting={"reason": "ContainerCreating"})]), "0/1",
                 "ContainerCreating", "0", id="waiting-reason"),
    pytest.param(pod(statuses=[cs(restarts=3, last_finished=ago(minutes=10), waiting={"reason": "CrashLoopBackOff"})]),
                 "0/1", "CrashLoopBackOff", "3 (10m ago)", id="crashloop-restarts-with-age"),
    pytest.param(pod(statuses=[cs(restarts=2, running={})]), "0/1", "Running", "2", id="restarts-without-last-state"),
    pytest.param(pod(phase="Succeeded", statuses=[cs(terminated={"reason": "Completed", "exitCode": 0})]), "0/1",
                 "Completed", "0", id="completed"),
    pytest.param(pod(phase="Failed", statuses=[cs(terminated={"exitCode": 2})]), "0/1", "ExitCode:2", "0",
                 id="exit-code"),
    pytest.param(pod(phase="Failed", statuses=[cs(terminated={"exitCode": 137, "signal": 9})]), "0/1", "Signal:9",
                 "0", id="signal"),
    pytest.param(pod(phase="Failed", reason="Evicted"), "0/1", "Evicted", "0", id="pod-reason"),
    pytest.param(pod(phase=""), "0/1", "", "0", id="no-phase"),
    pytest.param(pod(phase="Pending", conditions=[{"type": "PodScheduled", "reason": "SchedulingGated"}]), "0/1",
                 "SchedulingGated", "0", id="scheduling-gated"),
    pytest.param(pod(containers=2, conditions=[READY], statuses=[
        cs("c0", ready=True, running={}), cs("c1", terminated={"reason": "Completed", "exitCode": 0})]),
        "1/2", "Running", "0", id="completed-but-one-runs-ready"),
    pytest.param(pod(containers=2, statuses=[
        cs("c0", ready=True, running={}), cs("c1", terminated={"reason": "Completed", "exitCode": 0})]),
        "1/2", "NotReady", "0", id="completed-but-one-runs-not-ready"),
    pytest.param(pod(containers=2, statuses=[
        cs("c0", waiting={"reason": "ImagePullBackOff"}), cs("c1", ready=True, running={})]),
        "1/2", "ImagePullBackOff", "0", id="first-container-wins"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}, {"name": "i1"}],
                     init_statuses=[cs("i0", waiting={})]), "0/1", "Init:0/2", "0", id="init-waiting"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}, {"name": "i1"}],
                     init_statuses=[cs("i0", terminated={"exitCode": 0}), cs("i1", running={})]),
                 "0/1", "Init:1/2", "0", id="init-second-running"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}], init_statuses=[
        cs("i0", waiting={"reason": "PodInitializing"})]), "0/1", "Init:0/1", "0", id="init-pod-initializing"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}], init_statuses=[
        cs("i0", waiting={"reason": "ImagePullBackOff"})]), "0/1", "Init:ImagePullBackOff", "0",
        id="init-waiting-reason"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}], init_statuses=[
        cs("i0", restarts=4, last_finished=ago(seconds=30), terminated={"reason": "Error", "exitCode": 1})]),
        "0/1", "Init:Error", "4 (30s ago)", id="init-failed-reason-counts-its-restarts"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}], init_statuses=[
        cs("i0", terminated={"exitCode": 3})]), "0/1", "Init:ExitCode:3", "0", id="init-exit-code"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}], init_statuses=[
        cs("i0", terminated={"exitCode": 1, "signal": 15})]), "0/1", "Init:Signal:15", "0", id="init-signal"),
    pytest.param(pod(phase="Pending", inits=[{"name": "i0"}], conditions=[INITIALIZED],
                     init_statuses=[cs("i0", waiting={})], statuses=[cs(ready=True, running={})]),
                 "1/1", "Init:0/1", "0", id="initialized-condition-counts-the-containers-keeps-the-init-reason"),
    pytest.param(pod(inits=[{"name": "i0"}, SIDECAR], init_statuses=[
        cs("i0", restarts=2, terminated={"exitCode": 0}),
        cs("side", restarts=1, ready=True, started=True, running={})], statuses=[cs(ready=True, running={})]),
        "2/2", "Running", "1", id="sidecar-counts-and-only-its-restarts-stay"),
    pytest.param(pod(phase="Pending", inits=[SIDECAR], init_statuses=[
        cs("side", started=False, waiting={})]), "0/2", "Init:0/1", "0", id="sidecar-not-started"),
    pytest.param(pod(deleted=True, statuses=[cs(ready=True, running={})]), "1/1", "Terminating", "0",
                 id="deleted-running"),
    pytest.param(pod(deleted=True, phase="Succeeded", statuses=[cs(terminated={"reason": "Completed"})]), "0/1",
                 "Completed", "0", id="deleted-after-it-ended"),
    pytest.param(pod(deleted=True, reason="NodeLost"), "0/1", "Unknown", "0", id="deleted-node-lost"),
])
def test_pod_info(the_pod, ready, status, restarts):
    info = client_pod.pod_info(the_pod, NOW)
    assert (info.ready, info.status, info.restarts, info.age) == (ready, status, restarts, "3d")


def test_pod_info_age_unknown_without_creation_timestamp():
    assert client_pod.pod_info(pod(created=None), NOW).age == "<unknown>"


# ---- PrintPods, sortPods, appendIfNotExists --------------------------------------------------------------
def info(namespace, name):
    return client_pod.pod_info(build_pod(namespace, name), NOW)


def test_print_pods_all_namespaces():
    lines = client_pod.pods_text([info("team-a", "worker-0"), info("team-b", "worker-0")], True).splitlines()
    assert len(lines) == 3 and lines[0].startswith("Namespace")
    assert lines[1].startswith("team-a") and "worker-0" in lines[1]
    assert lines[2].startswith("team-b") and "worker-0" in lines[2]


def test_print_pods_without_namespace_column():
    out = client_pod.pods_text([info("team-a", "worker-0")], False)
    assert "Namespace" not in out and out.startswith("Name")


@pytest.mark.parametrize("infos, header", [
    pytest.param([info("a", "w")], "Namespace  Name     Ready      Status         Restart  Age       ",
                 id="single-char-namespace"),
    pytest.param([], "Namespace  Name  Ready  Status  Restart  Age  ", id="empty-list"),
])
def test_print_pods_header_driven_width(infos, header):
    assert client_pod.pods_text(infos, True).split("\n")[0] == header


def test_print_pods_widths_follow_the_widest_value():
    long = dataclasses.replace(info("default", "a-much-longer-pod-name"), restarts="12 (5m ago)")
    assert client_pod.pods_text([info("default", "p"), long], False).splitlines() == [
        "Name                          Ready      Status         Restart            Age       ",
        "p                             0/1        Running        0                  3d        ",
        "a-much-longer-pod-name        0/1        Running        12 (5m ago)        3d        "]


def names(pods):
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]


def test_sort_pods():
    pods = [build_pod("team-b", "worker-1"), build_pod("team-a", "worker-1"), build_pod("team-b", "worker-0"),
            build_pod("team-a", "worker-0")]
    assert names(client_pod.sort_pods(pods)) == ["team-a/worker-0", "team-a/worker-1", "team-b/worker-0",
                                                 "team-b/worker-1"]


def test_append_if_not_exists():
    got = client_pod.append_if_not_exists([build_pod("team-a", "worker-0")],
                                          [build_pod("team-a", "worker-0"), build_pod("team-b", "worker-0")])
    assert names(got) == ["team-a/worker-0", "team-b/worker-0"]


@pytest.mark.parametrize("labels, agree", [
    pytest.param([{QUEUE_LABEL: "q"}, {QUEUE_LABEL: "q"}], True, id="all-in-q"),
    pytest.param([{QUEUE_LABEL: "q"}, {}], True, id="a-pod-without-the-label-agrees"),
    pytest.param([{QUEUE_LABEL: "q"}, {QUEUE_LABEL: "other"}], False, id="one-elsewhere"),
    pytest.param([], True, id="no-pods"),
])
def test_labels_agree(labels, agree):
    pods = [build_pod("default", f"p{i}", labels=lb) for i, lb in enumerate(labels)]
    assert client_pod.labels_agree(pods, QUEUE_LABEL, "q") is agree


def test_job_selector():
    assert client_pod.job_selector("my-job1") == "volcano.sh/job-name in (my-job1)"
    with pytest.raises(common.CommandError, match=r"must be no more than 63 characters; a valid label"):
        client_pod.job_selector("x" * 64 + "-")
