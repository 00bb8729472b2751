"""Crash test: a real `vcctl server` killed with SIGKILL mid-flow, at different moments, and restarted on
the same data directory each time. Every flow must finish (Succeed), no vcjob may be created twice
(its uid and creationTimestamp never change), no object the server accepted may be lost, and
resourceVersions keep increasing. The test prints how many restarts it survived.

Pods running at a kill keep running: the restarted executor takes their processes over (executor/recovery.py's
adoption), and a pod whose process ended by itself while no server ran has its recorded outcome (executor/exits.py;
test_server_crash_exit_handler.py). Only a pod caught between its start mark and its process's start (a kill
"just after start") can still fail with reason ProcessLost, and the jobs' `PodFailed -> RestartJob` policy reruns it.
The server is driven through its HTTP API with the kubeconfig's URL, CA and bearer token (urllib).
"""
import base64
import json
import signal
import ssl
import time
import urllib.error
import urllib.request

import pytest
import yaml

from tests import vcctl_server
from vclite.executor import recovery

pytestmark = pytest.mark.e2e
FLOWS = {"left": {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]},
         "right": {"a": [], "b": ["a"], "c": ["b"]}}
TIMEOUT = 120.0
NODES = ("--nodes", "1x(cpu=4,memory=8Gi)")


class Api:
    """Just enough of a Kubernetes client: JSON over HTTPS with the server's kubeconfig."""

    def __init__(self, server):
        cfg = yaml.safe_load(server.kubeconfig.read_text())
        cluster = cfg["clusters"][0]["cluster"]
        self.url, self.token = cluster["server"], cfg["users"][0]["user"]["token"]
        ca = cluster.get("certificate-authority-data")
        self.tls = ssl.create_default_context(cadata=base64.b64decode(ca).decode()) if ca else None

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=self.tls, timeout=30) as resp:
            return json.loads(resp.read())

    def items(self, path):
        return self.call("GET", path)["items"]


JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
JOBFLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"
TEMPLATES = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobtemplates"
PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"
KEPT = (JOBS, JOBFLOWS, TEMPLATES, "/apis/scheduling.volcano.sh/v1beta1/queues")   # never deleted by a flow


def template(name):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": name},
            "spec": {"minAvailable": 2, "maxRetry": 20, "schedulerName": "volcano",
                     "policies": [{"event": "PodFailed", "action": "RestartJob"}],
                     "tasks": [{"name": "work", "replicas": 2, "template": {"spec": {
                         "restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox",
                                         "command": ["sh", "-c", "echo start; sleep 1.5; echo done"],
                                         "resources": {"requests": {"cpu": "250m"}}}]}}}]}}


def jobflow(name, deps):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": name},
            "spec": {"jobRetainPolicy": "retain", "flows": [
                {"name": f, **({"dependsOn": {"targets": d}} if d else {})}
                for f, d in deps.items()]}}


def snapshot(api):
    """Every kept object: (path, name) -> (uid, creationTimestamp, resourceVersion)."""
    return {(path, o["metadata"]["name"]): (o["metadata"]["uid"], o["metadata"]["creationTimestamp"],
                                            int(o["metadata"]["resourceVersion"]))
            for path in KEPT for o in api.items(path)}


def flow_phases(api):
    return {o["metadata"]["name"]: (o.get("status") or {}).get("state", {}).get("phase") for o in api.items(JOBFLOWS)}


def wait(predicate, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def running_pods(api):
    return [p for p in api.items(PODS) if (p.get("status") or {}).get("phase") == "Running"]


def completed_jobs(api):
    return sum(1 for j in api.items(JOBS) if (j.get("status") or {}).get("state", {}).get("phase") == "Completed")


# Moments to kill at, each reached after the previous restart: pods of the first jobs running; a job
# completed and others running; at least three completed and pods running again; right after a start.
KILL_AT = [
    ("first pods running", lambda api: running_pods(api)),
    ("one job completed, pods running", lambda api: completed_jobs(api) >= 1 and running_pods(api)),
    ("three jobs completed, pods running", lambda api: completed_jobs(api) >= 3 and running_pods(api)),
    ("just after start", lambda api: True),
]


class History:
    """Every kept object ever observed, checked against each later observation."""

    def __init__(self):
        self.seen: dict = {}
        self.max_rv = 0

    def check(self, api):
        now = snapshot(api)
        for key, (uid, created, rv) in self.seen.items():
            assert key in now, f"{key} was accepted before a restart and is gone"
            assert now[key][:2] == (uid, created), f"{key} was created again: {self.seen[key]} -> {now[key]}"
            assert now[key][2] >= rv, f"{key} went back in time"
        self.seen.update(now)
        rv = int(api.call("GET", JOBS)["metadata"]["resourceVersion"])
        assert rv >= self.max_rv, "resourceVersions keep increasing across restarts"
        self.max_rv = rv


def finished(api):
    phases = flow_phases(api)
    return phases if phases and all(p in ("Succeed", "Failed") for p in phases.values()) else None


def test_flows_finish_across_sigkill_restarts(tmp_path, capsys):
    data_dir, history, restarts = tmp_path / "data", History(), 0
    for i, (moment, ready) in enumerate(KILL_AT):
        with vcctl_server.running(data_dir, *NODES) as srv:
            restarts += i > 0
            api = Api(srv)
            history.check(api)
            if i == 0:
                for f in sorted({f for deps in FLOWS.values() for f in deps}):
                    api.call("POST", TEMPLATES, template(f))
                for name, deps in FLOWS.items():
                    api.call("POST", JOBFLOWS, jobflow(name, deps))
            wait(lambda: ready(api), moment)
            history.check(api)
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait()
    with vcctl_server.running(data_dir, *NODES) as srv:    # the last start: everything finishes
        restarts += 1
        api = Api(srv)
        history.check(api)
        phases = wait(lambda: finished(api), "every flow to finish")
        history.check(api)
        jobs, events = api.items(JOBS), api.items(EVENTS)
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=60) == 0
    assert phases == {name: "Succeed" for name in FLOWS}, phases
    names = sorted(j["metadata"]["name"] for j in jobs)
    assert names == sorted(f"{n}-{f}" for n, d in FLOWS.items() for f in d)
    created = sorted(e["message"].rsplit(" ", 1)[1].rstrip("!") for e in events for _ in range(e.get("count", 1))
                     if e.get("reason") == "Created" and e.get("message", "").startswith("create a job named"))
    assert created == names, "the JobFlow controller created each vcjob exactly once"
    assert recovery.left_behind(data_dir / "pods") == {}, "no container process outlives the server"
    lost = sum(e.get("count", 1) for e in events if e.get("reason") == recovery.PROCESS_LOST)
    assert not lost or sum(int((j.get("status") or {}).get("retryCount", 0)) for j in jobs) >= 1, \
        "a pod lost at a kill made its job retry"
    with capsys.disabled():
        print(f"\ncrash test: survived {restarts} restarts after SIGKILL ({', '.join(m for m, _ in KILL_AT)}); "
              f"{len(jobs)} vcjobs, each created once; {lost} pod(s) failed as ProcessLost and were retried (the "
              "others running at a kill were taken over, or ended by themselves meanwhile)")
    assert restarts == len(KILL_AT)
