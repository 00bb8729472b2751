"""Volcano's vcctl e2e cases (test/e2e/vcctl/command.go, vcctl.go): `vcctl job list|suspend|resume|delete`
(in-process, as tests/unit/cli) against a real `vcctl server` process of two 2-cpu nodes, whose pods run as
local processes (`sleep`, where upstream runs nginx).

command.go's `List running jobs` compares vcctl's output with Volcano's jobcli.PrintJobs of the same jobs;
`print_jobs` below restates PrintJobs' Go format strings, independently of vclite's printer.

vcctl.go compares the whole `--help` text of cobra; vclite's vcctl is click, whose help is laid out
differently, so what is compared is what that text says: each command's one-line description, its
subcommands, and its flags (short and long names, defaults).

Not ported: cobra's global klog flags (`--log-flush-frequency`, `-v`, `--vmodule`), and the descriptions
of the job, jobflow and jobtemplate groups, which vclite words its own way.
"""

import pytest
from click.testing import CliRunner

from tests import vcctl_server
from vclite.api import kinds
from vclite.cli import main as main_mod
from vclite.kube import client as kube_client
from vclite.lib import clock as clock_mod
from vclite.lib import errors

pytestmark = pytest.mark.e2e
CLUSTER_CPUS = 4   # two nodes of 2 cpu: e2eutil.ClusterSize(ctx, OneCPU)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "2x(cpu=2,memory=8Gi)") as srv:
        yield srv


@pytest.fixture(scope="module")
def api(server):
    return kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))


@pytest.fixture(autouse=True)
def no_jobs_left(api):
    """Each case has the cluster to itself (e2eutil.CleanupTestContext): its jobs deleted, their pods gone."""
    yield
    for job in api.list(kinds.JOB):
        try:
            api.delete(kinds.JOB, job["metadata"]["namespace"], job["metadata"]["name"])
        except errors.NotFound:
            pass
    wait_for(lambda: not api.list(kinds.POD), "every pod to go")


@pytest.fixture
def vcctl(server):
    def run(*args):
        result = CliRunner().invoke(main_mod.cli, [*map(str, args), "-k", str(server.kubeconfig)],
                                    catch_exceptions=False)
        return result.exit_code, result.output
    return run


wait_for = vcctl_server.wait_until   # (e2eutil's waits)


def vcjob(name: str, namespace: str, replicas: int, min_available: int, cpu: str = "1", task: str = "") -> dict:
    """e2eutil.CreateJob with one task (nginx there, a long sleep here)."""
    t = {"replicas": replicas, "minAvailable": min_available, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "nginx", "command": ["sleep", "300"],
                                                  "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}}
    if task:
        t["name"] = task
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minAvailable": min_available, "tasks": [t]}}


def namespace(api, name: str) -> str:
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def phase(api, ns: str, name: str) -> str | None:
    try:
        return ((api.get(kinds.JOB, ns, name).get("status") or {}).get("state") or {}).get("phase")
    except errors.NotFound:
        return None


def running_pods(api, ns: str) -> int:
    return sum(1 for p in api.list(kinds.POD, ns) if (p.get("status") or {}).get("phase") == "Running")


def pod_gone(api, ns: str, name: str) -> bool:
    try:
        api.get(kinds.POD, ns, name)
    except errors.NotFound:
        return True
    return False


def print_jobs(jobs: list[dict]) -> str:
    """Volcano's jobcli.PrintJobs without --all-namespaces: `%-<n>s` Name (n: the longest name + 3), then
    `%-15s%-12s%-12s%-12d%-6d%-10d%-10d%-12d%-10d%-12d%-10d` (the title row with the same widths, as %s)."""
    n = max([len("Name")] + [len(j["metadata"]["name"]) for j in jobs]) + 3
    widths = (n, 15, 12, 12, 12, 6, 10, 10, 12, 10, 12, 10)

    def row(cells):
        return "".join(f"{c:<{w}}" for c, w in zip(cells, widths)) + "\n"

    out = row(("Name", "Creation", "Phase", "JobType", "Replicas", "Min", "Pending", "Running", "Succeeded",
               "Failed", "Unknown", "RetryCount"))
    for j in jobs:
        st = j.get("status") or {}
        created = clock_mod.parse_time(j["metadata"]["creationTimestamp"]).astimezone().strftime("%Y-%m-%d")
        out += row((j["metadata"]["name"], created, st["state"]["phase"],
                    (j["metadata"].get("labels") or {}).get("volcano.sh/job-type") or "Batch",
                    sum(t["replicas"] for t in j["spec"]["tasks"]),
                    *(st.get(k, 0) for k in ("minAvailable", "pending", "running", "succeeded", "failed", "unknown",
                                             "retryCount"))))
    return out


# ---- command.go -------------------------------------------------------------------------------------------
def test_list_running_jobs_prints_what_volcanos_print_jobs_prints(vcctl, api):
    ns = namespace(api, "vcctl-list")
    api.create(vcjob("test-job", ns, CLUSTER_CPUS, CLUSTER_CPUS))
    wait_for(lambda: running_pods(api, ns) == CLUSTER_CPUS, "the job's pods to run")
    wait_for(lambda: phase(api, ns, "test-job") == "Running", "the job to be Running")
    code, out = vcctl("job", "list", "--namespace", ns)
    assert code == 0
    assert out == print_jobs(api.list(kinds.JOB, ns)), out


def test_suspend_a_running_job_then_resume_the_aborted_job(vcctl, api):
    ns = namespace(api, "vcctl-suspend-running")
    api.create(vcjob("test-suspend-running-job", ns, 1, 1, task="long-live-task"))
    wait_for(lambda: phase(api, ns, "test-suspend-running-job") == "Running", "the job to be Running")
    assert vcctl("job", "suspend", "--name", "test-suspend-running-job", "--namespace", ns) == (0, "")
    wait_for(lambda: phase(api, ns, "test-suspend-running-job") == "Aborted", "the job to be Aborted")
    wait_for(lambda: pod_gone(api, ns, "test-suspend-running-job-long-live-task-0"), "the pod to go")
    assert vcctl("job", "resume", "--name", "test-suspend-running-job", "--namespace", ns) == (0, "")
    wait_for(lambda: running_pods(api, ns) == 1, "the pod to run again")
    wait_for(lambda: phase(api, ns, "test-suspend-running-job") == "Running", "the job to be Running again")


def test_suspend_a_pending_job_aborts_it_without_pods(vcctl, api):
    ns = namespace(api, "vcctl-suspend-pending")
    api.create(vcjob("test-suspend-pending-job", ns, 1, 1, cpu=f"{1000 * CLUSTER_CPUS}m", task="long-live-task"))
    wait_for(lambda: phase(api, ns, "test-suspend-pending-job") == "Pending", "the job to be Pending")
    assert vcctl("job", "suspend", "--name", "test-suspend-pending-job", "--namespace", ns) == (0, "")
    wait_for(lambda: phase(api, ns, "test-suspend-pending-job") == "Aborted", "the job to be Aborted")
    assert pod_gone(api, ns, "test-suspend-pending-job-long-live-task-0")


def test_delete_a_job_that_waited_on_tainted_nodes(vcctl, api):
    """`delete a job with all nodes taints`: every node tainted NoSchedule, the job waits; untainted, it runs;
    `vcctl job delete` and the job is gone."""
    ns = namespace(api, "vcctl-delete")
    taint = {"key": "test-taint-key", "value": "test-taint-val", "effect": "NoSchedule"}

    def set_taints(taints):
        for n in api.list(kinds.NODE):
            n["spec"] = {**(n.get("spec") or {}), "taints": taints}
            api.update(n)

    set_taints([taint])
    try:
        api.create(vcjob("test-del-job", ns, CLUSTER_CPUS, CLUSTER_CPUS // 2))
        wait_for(lambda: phase(api, ns, "test-del-job") == "Pending", "the job to be Pending")
        assert running_pods(api, ns) == 0
    finally:
        set_taints([])
    wait_for(lambda: running_pods(api, ns) == CLUSTER_CPUS, "the job's pods to run")
    wait_for(lambda: phase(api, ns, "test-del-job") == "Running", "the job to be Running")
    assert vcctl("job", "delete", "--name", "test-del-job", "--namespace", ns) == (
        0, "delete job test-del-job successfully\n")
    assert phase(api, ns, "test-del-job") is None


# ---- vcctl.go ---------------------------------------------------------------------------------------------
MASTER_KUBECONFIG = {("-k", "--kubeconfig", None), ("-s", "--master", None)}
NAME_NAMESPACE = {("-N", "--name", None), ("-n", "--namespace", "default")}


def _command(*path: str):
    cmd = main_mod.cli
    ctx = None
    for name in path:
        cmd = cmd.get_command(ctx, name)
    return cmd


@pytest.mark.parametrize("path, short, flags", [
    pytest.param(("job", "list"), "list job information", MASTER_KUBECONFIG | {
        (None, "--all-namespaces", False), ("-n", "--namespace", "default"), ("-q", "--queue", None),
        ("-S", "--scheduler", None), (None, "--selector", None)}, id="vcctl-job-list-help"),
    pytest.param(("job", "suspend"), "abort a job", MASTER_KUBECONFIG | NAME_NAMESPACE, id="vcctl-job-suspend-help"),
    pytest.param(("job", "resume"), "resume a job", MASTER_KUBECONFIG | NAME_NAMESPACE, id="vcctl-job-resume-help"),
    pytest.param(("job", "run"), "run job by parameters from the command line", MASTER_KUBECONFIG | NAME_NAMESPACE | {
        ("-f", "--filename", None), ("-i", "--image", "busybox"), ("-L", "--limits", "cpu=1000m,memory=100Mi"),
        ("-m", "--min", 1), ("-r", "--replicas", 1), ("-R", "--requests", "cpu=1000m,memory=100Mi"),
        ("-S", "--scheduler", "volcano")}, id="vcctl-job-run-help"),
    # pkg/cli/job/{view,delete}_test.go TestInitViewFlags, TestInitDeleteFlags
    pytest.param(("job", "view"), "show job information", MASTER_KUBECONFIG | NAME_NAMESPACE, id="job-view-flags"),
    pytest.param(("job", "delete"), "delete a job", MASTER_KUBECONFIG | NAME_NAMESPACE, id="job-delete-flags"),
    # pkg/cli/queue/{queue,delete,operate}_test.go TestInit*Flags (and queue/create.go's defaults: -n is the name)
    pytest.param(("queue", "create"), "creates queue", MASTER_KUBECONFIG | {
        ("-n", "--name", "test"), ("-w", "--weight", 1), ("-S", "--state", "Open")}, id="queue-create-flags"),
    pytest.param(("queue", "delete"), "delete queue", MASTER_KUBECONFIG | {("-n", "--name", None)},
                 id="queue-delete-flags"),
    pytest.param(("queue", "operate"), "operate queue", MASTER_KUBECONFIG | {
        ("-n", "--name", None), ("-w", "--weight", 0), ("-a", "--action", None)}, id="queue-operate-flags"),
    pytest.param(("queue", "list"), "lists all the queue", MASTER_KUBECONFIG, id="queue-list-flags"),
    pytest.param(("queue", "get"), "get a queue", MASTER_KUBECONFIG | {("-n", "--name", None)}, id="queue-get-flags"),
])
def test_a_job_command_has_volcanos_description_and_flags(path, short, flags):
    cmd = _command(*path)
    assert cmd.get_short_help_str(limit=100) == short
    have = set()
    for p in cmd.params:
        if p.name == "help" or not p.opts[0].startswith("-"):
            continue
        shorts = [o for o in p.opts + p.secondary_opts if not o.startswith("--")]
        longs = [o for o in p.opts if o.startswith("--")]
        if getattr(p, "is_flag", False):
            default = p.default is True
        else:
            default = p.default if p.default not in ("", ()) else None
        have.add((shorts[0] if shorts else None, longs[0], default))
    assert flags <= have, sorted(flags - have, key=str)


def test_the_job_group_has_volcanos_subcommands():
    """`vcctl job --help`: delete, list, resume, run, suspend, view (vclite adds from-template)."""
    group = _command("job")
    upstream = {"delete": "delete a job", "list": "list job information", "resume": "resume a job",
                "run": "run job by parameters from the command line", "suspend": "abort a job",
                "view": "show job information"}
    assert {n: group.get_command(None, n).get_short_help_str(limit=100) for n in upstream} == upstream


def test_the_root_has_volcanos_command_groups():
    """`vcctl --help`: job, jobflow, jobtemplate, pod, queue and version (vclite's job, jobflow and jobtemplate
    groups describe themselves in their own words; the others as Volcano's)."""
    assert {"job", "jobflow", "jobtemplate", "pod", "queue", "version"} <= set(main_mod.cli.list_commands(None))
    assert {name: _command(name).get_short_help_str(limit=100) for name in ("pod", "queue", "version")} == {
        "pod": "vcctl command line operation pod", "queue": "Queue Operations",
        "version": "Print the version information"}
