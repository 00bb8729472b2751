"""`vcctl server` answers while its control plane works: a vcjob of many pods is created, bound and started over
many turns of the event loop, and requests are served between them (runtime/loop.py's budget and turns, the
job controller's CREATES_PER_SYNC, the scheduler's WRITES_PER_SYNC, the executor's SpawnTurns).

By order only, never by time: a pod list served while the job is worked on shows some of its pods but not all
(created, then bound) — a server that did the whole job in one go could only show none or all of them.
"""
import base64
import http.client
import json
import ssl
import urllib.parse

import pytest
import yaml

from tests import vcctl_server

pytestmark = pytest.mark.e2e
PODS = 96   # six syncs of the job controller's creates, three of the scheduler's binds


def _connect(kubeconfig):
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    url = urllib.parse.urlsplit(cluster["server"])
    ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=120)
    headers = {"Authorization": f"Bearer {cfg['users'][0]['user']['token']}", "Content-Type": "application/json"}

    def call(method, path, body=None):
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    return call


def test_pods_listed_while_a_big_job_starts_show_it_part_created_and_part_bound(tmp_path):
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "big"},
           "spec": {"schedulerName": "volcano", "minAvailable": PODS, "tasks": [{
               "name": "t", "replicas": PODS, "template": {"spec": {"restartPolicy": "Never", "containers": [{
                   "name": "c", "image": "busybox", "command": ["true"],
                   "resources": {"requests": {"cpu": "10m", "memory": "1Mi"}}}]}}}]}}
    with vcctl_server.running(tmp_path / "server", "--nodes", "1x(cpu=64,memory=64Gi,pods=500)") as srv:
        call = _connect(srv.kubeconfig)
        code, body = call("POST", "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs", job)
        assert code == 201, body
        seen = []   # (pods listed, of them bound), one per list served
        while not seen or seen[-1][1] < PODS:
            code, pods = call("GET", "/api/v1/namespaces/default/pods")
            assert code == 200, pods
            items = pods["items"]
            seen.append((len(items), sum(1 for p in items if p["spec"].get("nodeName"))))
            assert len(seen) < 100_000, seen[-5:]
        vcctl_server.stop_cleanly(srv)
    assert any(0 < made < PODS for made, _ in seen), f"no list served while the pods were being created: {seen}"
    assert any(0 < bound < PODS for _, bound in seen), f"no list served while the pods were being bound: {seen}"
