"""A real `vcctl server` killed with SIGKILL while a JobFlow's exit handler runs; the handler's process ends by
itself while no server runs. Started again on the same data directory, the server gives the handler's pod its
real outcome (Succeeded, its termination message) from the exit journal (executor/exits.py), not ProcessLost,
and the JobFlow ends as it would have without the crash."""
import signal

import pytest

from tests import vcctl_server
from tests.e2e.test_server_crash import EVENTS, JOBFLOWS, PODS, TEMPLATES, Api
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


def test_a_process_still_running_at_the_restart_is_process_lost(tmp_path):
    """The other side: a container still running when the server starts again is killed (nothing ended by
    itself, nothing recorded) and its pod fails with ProcessLost, as before."""
    data_dir = tmp_path / "data"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "long"},
           "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "600"]}]}}
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        api.call("POST", PODS, pod)
        vcctl_server.wait_until(lambda: (api.call("GET", f"{PODS}/long").get("status") or {}).get("phase") == "Running",
                                "the pod running")
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
    assert recovery.left_behind(data_dir / "pods"), "its process outlived the server"
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        status = vcctl_server.wait_until(
            lambda: (s := api.call("GET", f"{PODS}/long").get("status") or {}).get("phase") == "Failed" and s,
            "the pod failed")
    term = status["containerStatuses"][0]["state"]["terminated"]
    assert (status.get("reason"), term["reason"], term["exitCode"]) == (recovery.PROCESS_LOST, recovery.PROCESS_LOST,
                                                                        recovery.LOST_EXIT_CODE), status
    assert recovery.left_behind(data_dir / "pods") == {}
