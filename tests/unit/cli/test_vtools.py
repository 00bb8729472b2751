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
