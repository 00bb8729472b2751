"""gangpreempt and gangreclaim through the real CLI: `vcctl run --scheduler-conf` with upstream's gangEvictConfig
(a bad argument is named by file and line, nothing runs), and Volcano's GP-1 and GR-1 (test/e2e/gangevict) on a real
`vcctl server --scheduler-conf` process of four 1-cpu nodes whose pods run as local processes (`sleep`, where upstream
runs nginx). Every gangevict case runs on the embedded control plane in
tests/scenarios/test_volcano_e2e_gangevict.py."""
from __future__ import annotations

import pytest

from tests import vcctl_server
from tests.scenarios.test_volcano_e2e_gangevict import GANG_EVICT_CONF
from vclite.api import kinds
from vclite.kube import client as kube_client
from vclite.lib import errors

pytestmark = pytest.mark.e2e
wait_for = vcctl_server.wait_until
PAIR = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: pair}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
    - name: main
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              command: ["true"]
              resources: {requests: {cpu: "1", memory: 1Gi}}
"""


def test_vcctl_run_with_the_gang_eviction_conf(vcctl, write, tmp_path):
    conf = write("gangevict.conf", GANG_EVICT_CONF.replace(
        "tiers:",
        "configurations:\n- name: gangpreempt\n  arguments: {maxDomains: 4, allowWholeBundle: false}\ntiers:"))
    r = vcctl("run", "-q", "--nodes", "2x(cpu=1,memory=1Gi)", "--scheduler-conf", conf, "--workdir", tmp_path / "w",
              write("pair.yaml", PAIR), timeout=120)
    assert r.code == 0, r


def test_vcctl_run_names_a_bad_gang_argument_by_file_and_line(vcctl, write, tmp_path):
    conf = write("gangevict.conf", GANG_EVICT_CONF.replace(
        "tiers:", "configurations:\n- name: gangreclaim\n  arguments:\n    maxDomains: 0\ntiers:"))
    r = vcctl("run", "--scheduler-conf", conf, "--workdir", tmp_path / "w", write("pair.yaml", PAIR), timeout=60)
    assert r.code == 2, r
    assert f"{conf}:5: action \"gangreclaim\": argument 'maxDomains': must be a positive number" in r.err, r
    assert not (tmp_path / "w").exists() or not list((tmp_path / "w").rglob("*.log")), "a pod ran"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("server")
    conf = data.parent / "gangevict.conf"
    conf.write_text(GANG_EVICT_CONF)
    with vcctl_server.running(data / "d", "--nodes", "4x(cpu=1,memory=1Gi)", "--scheduler-conf", str(conf)) as srv:
        yield srv


@pytest.fixture(scope="module")
def api(server):
    api = kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))
    for name, value in (("high", 100), ("low", 10)):
        api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                    "value": value})
    return api


@pytest.fixture(autouse=True)
def nothing_left(request):
    """Each case has the cluster to itself: its jobs and queues deleted, their pods gone."""
    yield
    if "api" not in request.fixturenames:
        return
    api = request.getfixturevalue("api")
    for job in api.list(kinds.JOB):
        api.delete(kinds.JOB, job["metadata"]["namespace"], job["metadata"]["name"])
    wait_for(lambda: not api.list(kinds.POD), "every pod to go")
    for q in api.list(kinds.QUEUE):
        if q["metadata"]["name"] not in ("default", "root"):
            try:
                api.delete(kinds.QUEUE, "", q["metadata"]["name"])
            except errors.NotFound:
                pass


def queue(api, name: str, cpu: int) -> None:
    api.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                "spec": {"weight": 1, "deserved": {"cpu": str(cpu), "memory": f"{cpu}Gi"}}})
    wait_for(lambda: (api.get(kinds.QUEUE, "", name).get("status") or {}).get("state") == "Open", "the queue to open")


def gang(name: str, queue_name: str, priority: str, replicas: int, min_available: int, preemptable: bool) -> dict:
    """createGangJob: one task of `replicas` one-cpu, 1Gi pods (a long sleep)."""
    labels = {"volcano.sh/preemptable": "true"} if preemptable else {}
    template = {"metadata": {"labels": labels}, "spec": {"restartPolicy": "Never", "containers": [{
        "name": "c", "image": "nginx", "command": ["sleep", "300"],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": min_available, "queue": queue_name, "priorityClassName": priority,
                     "schedulerName": "volcano", "tasks": [{"name": "t", "replicas": replicas, "template": template}]}}


def running(api, job: str) -> int:
    return sum(1 for p in api.list(kinds.POD, "default")
               if (p["metadata"].get("annotations") or {}).get("volcano.sh/job-name") == job
               and (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"))


def test_gp1_safe_bundle_preemption_on_a_server(api):
    queue(api, "gp-q", 4)
    api.create(gang("victim", "gp-q", "low", 4, 2, True))
    wait_for(lambda: running(api, "victim") == 4, "the victim's 4 pods to run")
    api.create(gang("preemptor", "gp-q", "high", 2, 2, False))
    wait_for(lambda: running(api, "preemptor") == 2, "the preemptor's gang to run", timeout=120)
    assert running(api, "victim") == 2


def test_gr1_safe_bundle_reclaim_on_a_server(api):
    queue(api, "q1", 2)
    queue(api, "q2", 2)
    api.create(gang("victim", "q2", "low", 4, 2, True))
    wait_for(lambda: running(api, "victim") == 4, "the victim's 4 pods to run")
    api.create(gang("reclaimer", "q1", "low", 2, 2, False))
    wait_for(lambda: running(api, "reclaimer") == 2, "the reclaimer's gang to run", timeout=120)
    assert running(api, "victim") == 2
