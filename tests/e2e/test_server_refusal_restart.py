"""A JobFlow whose vcjob a ResourceQuota refuses, across a stop of a real `vcctl server`: the refusal window
(163.8 s, then the flow fails) counts only time the control plane ran, so a flow refused shortly before a long
stop is not failed on its first try after the restart, and is made once the quota has room.

A long stop is stood for by moving the stored `refusedSince` back 1000 s while the server is stopped (what a
1000 s stop leaves in the data directory: the controller sees only that time and its clock); the server is
stopped, edited on disk and started again for real."""
import datetime as dt
import json
import sqlite3

import pytest

from tests import vcctl_server
from tests.e2e.test_server_crash import Api
from vclite.lib import clock
from vclite.runtime import runtime

pytestmark = pytest.mark.e2e
NODES = ("--nodes", "1x(cpu=4,memory=8Gi)")
JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
JOBFLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"
TEMPLATES = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobtemplates"
QUOTAS = "/api/v1/namespaces/default/resourcequotas"


def jobflow(name):
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": name},
            "spec": {"jobRetainPolicy": "retain", "flows": [{"name": "a"}]}}


TEMPLATE = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "a"},
            "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [{"name": "t", "replicas": 1, "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox",
                                                                    "command": ["true"]}]}}}]}}


def quota(jobs):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
            "spec": {"hard": {"count/jobs.batch.volcano.sh": str(jobs)}}}


def condition(api, flow, job):
    jf = api.call("GET", f"{JOBFLOWS}/{flow}")
    return (jf.get("status") or {}).get("state", {}).get("phase"), \
        ((jf.get("status") or {}).get("conditions") or {}).get(job) or {}


def backdate_refusal(data_dir, flow, job, seconds):
    """The stopped server's stored JobFlow, its vcjob's `refusedSince` moved `seconds` back; the new value."""
    db = sqlite3.connect(str(data_dir / runtime.STORE_FILE))
    try:
        (data,) = db.execute("SELECT data FROM objects WHERE kind = 'JobFlow' AND namespace = 'default' AND "
                             "name = ?", (flow,)).fetchone()
        obj = json.loads(data)
        cond = obj["status"]["conditions"][job]
        since = clock.parse_time(cond["refusedSince"])
        cond["refusedSince"] = clock.format_micro_time(since - dt.timedelta(seconds=seconds))
        db.execute("UPDATE objects SET data = ? WHERE kind = 'JobFlow' AND namespace = 'default' AND name = ?",
                   (json.dumps(obj), flow))
        db.commit()
        return cond["refusedSince"]
    finally:
        db.close()


def test_a_long_stop_does_not_fail_a_refused_flow(tmp_path):
    data_dir = tmp_path / "data"
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        api.call("POST", QUOTAS, quota(0))
        api.call("POST", TEMPLATES, TEMPLATE)
        api.call("POST", JOBFLOWS, jobflow("f"))
        vcctl_server.wait_until(lambda: condition(api, "f", "f-a")[1].get("reason") == "CreateRefused",
                                "the vcjob refused")
    stored = backdate_refusal(data_dir, "f", "f-a", 1000)
    with vcctl_server.running(data_dir, *NODES) as srv:
        api = Api(srv)
        # g is queued after f (the controller queues every stored JobFlow at its start): once g was refused,
        # f has been tried since the restart
        api.call("POST", JOBFLOWS, jobflow("g"))
        vcctl_server.wait_until(lambda: condition(api, "g", "g-a")[1].get("reason") == "CreateRefused",
                                "the second flow refused")
        phase, cond = condition(api, "f", "f-a")
        assert (phase, cond.get("reason"), cond.get("refusedSince")) == ("Pending", "CreateRefused", stored), cond
        q = api.call("GET", f"{QUOTAS}/q")
        api.call("PUT", f"{QUOTAS}/q", {**q, "spec": {"hard": {"count/jobs.batch.volcano.sh": "2"}}})
        vcctl_server.wait_until(lambda: condition(api, "f", "f-a")[0] == "Succeed", "the flow to succeed")
        assert {j["metadata"]["name"] for j in api.items(JOBS)} == {"f-a", "g-a"}
