"""A real `vcctl server` killed with SIGKILL while a JobFlow's exit handler runs; the handler's process ends by
itself while no server runs. Started again on the same data directory, the server gives the handler's pod its
real outcome (Succeeded, its termination message) from the exit journal (executor/exits.py), not ProcessLost,
and the JobFlow ends as it would have without the crash."""
import signal

import pytest

from tests import vcctl_server
from tests.e2e.test_server_crash import EVENTS, JOBFLOWS, JOBS, PODS, TEMPLATES, Api
from vclite.executor import recovery

pytestmark = pytest.mark.e2e
NODES = ("--nodes", "1x(cpu=4,memory=8Gi)")


def template(name, script):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": name},
            "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{"name": "t", "replicas": 1, "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox",
                                                                    "command": ["sh", "-c", script]}]}}}]}}


FLOW = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
        "spec": {"jobRetainPolicy": "retain", "onExit": "notify", "flows": [{"name": "notify"}, {"name": "a"}]}}


def handler_pods(api):
    return [p for p in api.items(PODS) if p["metadata"]["name"].startswith("f-notify-")]


def test_an_exit_handler_that_ended_while_the_server_was_down_keeps_its_outcome(tmp_path):
    data_dir = tmp_path / "data"
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        api.call("POST", TEMPLATES, template("a", "exit 3"))
        api.call("POST", TEMPLATES, template("notify", 'sleep 2; echo sent > "$TERMINATION_MESSAGE_PATH"'))
        api.call("POST", JOBFLOWS, FLOW)
        vcctl_server.wait_until(lambda: any((p.get("status") or {}).get("phase") == "Running"
                                            for p in handler_pods(api)), "the exit handler's pod running")
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
    vcctl_server.wait_until(lambda: not recovery.left_behind(data_dir / "pods"),
                            "the handler's process to end by itself", timeout=30)
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        jf = vcctl_server.wait_until(
            lambda: next((o for o in api.items(JOBFLOWS)
                          if (o.get("status") or {}).get("state", {}).get("phase") in ("Succeed", "Failed")), None),
            "the JobFlow to finish")
        (pod,) = handler_pods(api)
        events = api.items(EVENTS)
    status = pod["status"]
    term = status["containerStatuses"][0]["state"]["terminated"]
    assert (status["phase"], status.get("reason"), term["exitCode"], term["reason"], term.get("message")) == \
        ("Succeeded", None, 0, "Completed", "sent\n"), status
    assert jf["status"]["state"]["phase"] == "Failed"   # (a failed: the handler ran, the JobFlow fails)
    assert jf["status"]["conditions"]["f-notify"]["phase"] == "Completed", jf["status"]["conditions"]
    assert not [e for e in events if e.get("reason") == recovery.PROCESS_LOST]


def test_a_pod_still_running_at_the_restart_is_taken_over_and_runs_on(tmp_path):
    """The other side: a container still running when the server starts again carries on (the executor takes it
    over: recovery.py's adoption) — its pod stays Running with the same container, nothing is killed, and it ends
    with its real outcome; its vcjob completes with no retry."""
    data_dir, go = tmp_path / "data", tmp_path / "go"
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "long"},
           "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{"name": "t", "replicas": 1, "template": {
               "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": [
                   "sh", "-c", f'while [ ! -e "{go}" ]; do sleep 0.05; done; echo trained > "$TERMINATION_MESSAGE_PATH"'
               ]}]}}}]}}
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        api.call("POST", JOBS, job)
        before = vcctl_server.wait_until(
            lambda: (s := api.call("GET", f"{PODS}/long-t-0").get("status") or {}).get("phase") == "Running" and s,
            "the pod running")
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
    assert recovery.left_behind(data_dir / "pods"), "its process outlived the server"
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        vcctl_server.wait_until(lambda: api.call("GET", f"{JOBS}/long").get("status", {}).get("running") == 1,
                                "the vcjob running again")
        assert api.call("GET", f"{PODS}/long-t-0")["status"] == before, "the pod runs on, unchanged"
        go.touch()
        vcctl_server.wait_until(lambda: (api.call("GET", f"{JOBS}/long").get("status") or {}).get("state", {})
                                .get("phase") == "Completed", "the vcjob completed")
        status = api.call("GET", f"{PODS}/long-t-0")["status"]
        job_status = api.call("GET", f"{JOBS}/long")["status"]
        events = api.items(EVENTS)
    term = status["containerStatuses"][0]["state"]["terminated"]
    assert (status["phase"], term["exitCode"], term["reason"], term["message"]) == \
        ("Succeeded", 0, "Completed", "trained\n"), status
    assert term["containerID"] == before["containerStatuses"][0]["containerID"]
    assert not job_status.get("retryCount"), job_status
    assert not [e for e in events if e.get("reason") == recovery.PROCESS_LOST]
    assert recovery.left_behind(data_dir / "pods") == {}
