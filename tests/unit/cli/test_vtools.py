"""Volcano's `vcancel`, `vsuspend` and `vresume` (pkg/cli/vcancel/cancel_test.go, pkg/cli/vsuspend/suspend_test.go,
pkg/cli/vresume/resume_test.go), run through their click commands against a real `vcctl server`."""
import pytest
from click.testing import CliRunner

from tests import vcctl_server
from vclite.api import kinds
from vclite.cli import vtools
from vclite.kube import client as kube_client
from vclite.lib import errors


@pytest.fixture(scope="module")
def api(server):
    return kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))


@pytest.fixture
def tool(server):
    def run(command, *args):
        result = CliRunner().invoke(command, [*args, "-k", str(server.kubeconfig)], catch_exceptions=False)
        return result.exit_code, result.output
    return run


def sleeper(api, name, namespace="default"):
    api.create({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                    "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                              "command": ["sleep", "30"],
                                                              "resources": {"requests": {"cpu": "100m"}}}]}}}]}})


def phase(api, namespace, name):
    try:
        return ((api.get(kinds.JOB, namespace, name).get("status") or {}).get("state") or {}).get("phase")
    except errors.NotFound:
        return None


@pytest.mark.parametrize("command, verb", [
    pytest.param(vtools.vcancel, "cancel", id="vcancel"),
    pytest.param(vtools.vsuspend, "suspend", id="vsuspend"),
    pytest.param(vtools.vresume, "resume", id="vresume"),
])
def test_a_missing_name_fails_as_volcanos_root_commands(tool, command, verb):
    assert tool(command) == (255, f"Failed to: job name is mandatory to {verb} a particular job\n")
    assert tool(command, "-n", "nope") == (255, 'Failed to: jobs.batch.volcano.sh "nope" not found\n')


@pytest.mark.parametrize("command", [vtools.vcancel, vtools.vsuspend, vtools.vresume])
def test_flags_are_volcanos_name_and_namespace_swapped(command):
    """TestInit{Delete,Suspend,Resume}Flags: -n is the job's name, -N its namespace (vcctl job: the reverse)."""
    flags = {p.name: (p.opts, p.default) for p in command.params}
    assert flags["name"] == (["-n", "--name"], "")
    assert flags["namespace"] == (["-N", "--namespace"], "default")
    assert flags["master"][0] == ["-s", "--master"] and flags["kubeconfig"][0] == ["-k", "--kubeconfig"]


def test_vcancel_deletes_the_job(tool, api):
    """TestCancelJobJob: `cancel job <name> successfully`, and the job is gone."""
    sleeper(api, "cancel-me", "team")
    assert tool(vtools.vcancel, "-n", "cancel-me", "-N", "team") == (0, "cancel job cancel-me successfully\n")
    vcctl_server.wait_until(lambda: phase(api, "team", "cancel-me") is None, "the job to be deleted")


def test_vsuspend_then_vresume(tool, api):
    """TestSuspendJobJob, TestResumeJob: nothing printed; the job is aborted, then runs again."""
    sleeper(api, "pause-me")
    try:
        vcctl_server.wait_until(lambda: phase(api, "default", "pause-me") == "Running", "the job to run")
        assert tool(vtools.vsuspend, "-n", "pause-me") == (0, "")
        vcctl_server.wait_until(lambda: phase(api, "default", "pause-me") == "Aborted", "the job to be aborted")
        assert tool(vtools.vresume, "--name", "pause-me", "--namespace", "default") == (0, "")
        vcctl_server.wait_until(lambda: phase(api, "default", "pause-me") in ("Restarting", "Pending", "Running"),
                                "the job to resume")
    finally:
        api.delete(kinds.JOB, "default", "pause-me")


# ---- vjobs, vqueues, vsub (cmd/cli/v*: no upstream tests; their pkg/cli code read for the shapes) -----------
def listed(name, ns="default", scheduler="volcano"):
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"schedulerName": scheduler}}


@pytest.mark.parametrize("jobs, scheduler, selector, rows", [
    pytest.param([listed("a"), listed("much-longer-name")], "", "", ["a", "much-longer-name"], id="all"),
    pytest.param([listed("a"), listed("much-longer-name", scheduler="other")], "volcano", "", ["a"],
                 id="scheduler-filter-keeps-the-widths-of-every-job"),
    pytest.param([listed("a"), listed("much-longer-name")], "", "zzz", [], id="nothing-matches-header-only"),
])
def test_vjobs_table(jobs, scheduler, selector, rows):
    lines = vtools.jobs_text(jobs, False, scheduler, selector).splitlines()
    assert lines[0].startswith(f"{'Name':<19}Creation       Phase") and len(lines) == 1 + len(rows)
    assert [ln.split()[0] for ln in lines[1:]] == rows


def test_vqueues_table():
    queues = [{"metadata": {"name": "default"}, "spec": {"weight": 1}, "status": {"state": "Open", "pending": 2}},
              {"metadata": {"name": "q"}}]
    assert vtools.queues_text(queues) == (
        "Name                     Weight  State   Inqueue Pending Running Unknown \n"
        "default                  1       Open    0       2       0       0       \n"
        "q                        0               0       0       0       0       \n")


@pytest.mark.parametrize("command, argv", [
    pytest.param("sleep 30", ["sleep", "30"], id="words"),
    pytest.param("sh -c 'echo a && echo b'", ["sh", "-c", "echo a && echo b"], id="quoted"),
    pytest.param(r'echo "a \"b\""', ["echo", 'a "b"'], id="escaped-quote"),
])
def test_vsub_splits_the_command(command, argv):
    assert vtools.split_command(command) == argv


def test_vsub_runs_a_job_with_its_defaults_from_the_environment(server, api):
    env = {"VOLCANO_DEFAULT_JOB_NAMESPACE": "subs", "VOLCANO_DEFAULT_IMAGE": "alpine"}
    result = CliRunner().invoke(vtools.vsub, ["-n", "sub1", "-c", "sh -c 'exit 0'", "-R", "cpu=100m",
                                              "-L", "cpu=100m", "-k", str(server.kubeconfig)], env=env)
    assert (result.exit_code, result.output) == (0, "run job sub1 successfully\n")
    job = api.get(kinds.JOB, "subs", "sub1")
    container = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"], job["spec"]["schedulerName"]) == (
        "alpine", ["sh", "-c", "exit 0"], "volcano")
    vcctl_server.wait_until(lambda: phase(api, "subs", "sub1") == "Completed", "the job to complete")
    api.delete(kinds.JOB, "subs", "sub1")


@pytest.mark.parametrize("args, message", [
    pytest.param((), "Failed to: job name cannot be left blank", id="no-name"),
    pytest.param(("-n", "x", "-R", "cpu"), "Failed to: invalid argument syntax cpu, expected <resource>=<value>",
                 id="bad-requests"),
    pytest.param(("-n", "x", "-c", "echo 'open"), "Failed to: EOF found when expecting closing quote",
                 id="unclosed-quote"),
])
def test_vsub_failures_send_nothing(tool, api, args, message):
    before = len(api.list(kinds.JOB))
    assert tool(vtools.vsub, *args) == (255, message + "\n")
    assert len(api.list(kinds.JOB)) == before


def test_vjobs_views_a_job_without_conditions_and_lists_the_namespace(tool, api):
    sleeper(api, "viewed", "vj")
    try:
        vcctl_server.wait_until(lambda: phase(api, "vj", "viewed") == "Running", "the job to run")
        code, out = tool(vtools.vjobs, "-n", "viewed", "-N", "vj")
        lines = out.splitlines()
        assert code == 0 and lines[:2] == ["Name:       \tviewed", "Namespace:  \tvj"], out
        assert "    Phase:\tRunning" in lines and "  Conditions:" not in lines
        code, out = tool(vtools.vjobs, "-N", "vj")
        rows = [ln.split() for ln in out.splitlines()[1:]]
        assert code == 0 and [(r[0], r[2]) for r in rows] == [("viewed", "Running")], out
        assert tool(vtools.vjobs, "-N", "nobody") == (0, "No resources found\n")
    finally:
        api.delete(kinds.JOB, "vj", "viewed")


def test_vqueues_lists_and_gets(tool):
    code, out = tool(vtools.vqueues)
    assert code == 0 and out.splitlines()[0].split() == list(vtools.QUEUE_COLUMNS)
    assert {ln.split()[0] for ln in out.splitlines()[1:]} >= {"default", "root"}
    code, out = tool(vtools.vqueues, "-n", "default")
    assert code == 0 and out.splitlines()[1].split()[:3] == ["default", "1", "Open"]
    assert tool(vtools.vqueues, "-n", "nope") == (255, 'Failed to: queues.scheduling.volcano.sh "nope" not found\n')
