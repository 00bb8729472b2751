"""What a kubectl user does with the nodes of a `vcctl server`: drain one, read them.

One real server with two nodes for the module. `kubectl drain` cordons a node and evicts its pods
(pods/eviction, policy/v1: the pod deleted gracefully); the vcjob's pod comes back on the other node.
A PodDisruptionBudget refuses an eviction (429) until its status allows one.
"""
import json
import shutil

import pytest

from tests import vcctl_server

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

LONG_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: long}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          command: [sh, -c, "sleep 300"]
          resources: {requests: {cpu: "1"}}
"""

# two pods that cannot share a node, and a budget that keeps both
GUARDED = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: guarded}
spec:
  schedulerName: volcano
  tasks:
  - name: main
    replicas: 2
    template:
      metadata: {labels: {app: guarded}}
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          command: [sh, -c, "sleep 300"]
          resources: {requests: {cpu: 1500m}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: guarded}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "2x(cpu=2,memory=2Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)


def _pod(kubectl, name):
    out = kubectl("get", "pod", name, "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def _running_on(kubectl, name):
    pod = _pod(kubectl, name)
    if pod and pod["status"].get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp"):
        return pod["spec"]["nodeName"]
    return None


def test_drain_moves_a_vcjobs_pod_to_the_other_node(kubectl):
    kubectl("apply", "-f", "-", input=LONG_JOB)
    first = vcctl_server.wait_until(lambda: _running_on(kubectl, "long-main-0"), "the pod running")
    drained = kubectl("drain", first, "--timeout=60s", timeout=90)
    assert "evicting pod default/long-main-0" in drained.stdout, drained    # (pods/eviction is served)
    assert "pod/long-main-0 evicted" in drained.stdout and f"node/{first} drained" in drained.stdout, drained
    try:
        node = json.loads(kubectl("get", "node", first, "-o", "json").stdout)
        assert node["spec"]["unschedulable"] is True
        second = vcctl_server.wait_until(lambda: _running_on(kubectl, "long-main-0"), "the pod running again")
        assert second != first
    finally:
        kubectl("uncordon", first)
        kubectl("delete", "vcjob", "long", "--wait=false")


def _budget(kubectl, name):
    return json.loads(kubectl("get", "pdb", name, "-o", "json").stdout)


def test_drain_is_refused_by_a_disruption_budget_until_it_allows_one(kubectl):
    kubectl("apply", "-f", "-", input=GUARDED)
    node = None
    try:
        node = vcctl_server.wait_until(lambda: _running_on(kubectl, "guarded-main-0"), "the pod running")
        vcctl_server.wait_until(lambda: _budget(kubectl, "guarded")["status"].get("currentHealthy") == 2,
                                "the budget counting both pods")
        header, row = kubectl("get", "pdb", "guarded").stdout.split("\n")[:2]
        assert header.split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
        assert row.split()[:4] == ["guarded", "2", "N/A", "0"], row
        refused = kubectl("drain", node, "--timeout=3s", check=False, timeout=60)
        assert refused.returncode != 0, refused
        assert ('error when evicting pods/"guarded-main-0" -n "default" (will retry after 5s): Cannot evict pod as it '
                "would violate the pod's disruption budget.") in refused.stderr, refused.stderr
        assert _running_on(kubectl, "guarded-main-0") == node
        kubectl("patch", "pdb", "guarded", "--type=merge", "-p", '{"spec": {"minAvailable": 1}}')
        vcctl_server.wait_until(lambda: _budget(kubectl, "guarded")["status"].get("disruptionsAllowed") == 1,
                                "the budget allowing one disruption")
        drained = kubectl("drain", node, "--timeout=60s", timeout=90)
        assert "pod/guarded-main-0 evicted" in drained.stdout and f"node/{node} drained" in drained.stdout, drained
        status = _budget(kubectl, "guarded")["status"]
        assert status["observedGeneration"] == 2 and status["disruptionsAllowed"] == 0, status
    finally:
        if node:
            kubectl("uncordon", node, check=False)
        kubectl("delete", "vcjob", "guarded", "--wait=false", check=False)
        kubectl("delete", "pdb", "guarded", check=False)


def test_the_official_python_client_reads_the_nodes(server):
    """Its V1NodeSystemInfo requires every nodeInfo field a kubelet writes."""
    from kubernetes import client, config
    api = client.CoreV1Api(config.new_client_from_config(str(server.kubeconfig)))
    listed = api.list_node().items
    assert sorted(n.metadata.name for n in listed) == ["local-0", "local-1"]
    node = api.read_node("local-0")
    assert node.status.node_info.operating_system == "linux" and node.status.node_info.kube_proxy_version == ""
    ready = [c for c in node.status.conditions if c.type == "Ready"]
    assert ready[0].status == "True" and ready[0].last_heartbeat_time.year > 1


def test_describe_node_shows_when_its_conditions_were_written(kubectl):
    out = kubectl("describe", "node", "local-1").stdout
    assert "Ready" in out and "KubeletReady" in out
    assert "0001" not in out, out
    assert "Failed to get lease" not in out and "HolderIdentity:  local-1" in out, out   # its node Lease


def test_get_nodes_wide_shows_the_hosts_os_kernel_and_runtime(kubectl):
    header, *rows = [line.split() for line in kubectl("get", "nodes", "-o", "wide").stdout.strip().splitlines()]
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                      "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert rows[0][5:7] == ["127.0.0.1", "<none>"] and rows[0][-1].startswith("vclite://"), rows


@pytest.mark.parametrize("name, body, error", [
    pytest.param("ghost", {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ghost"}},
                 'pods "ghost" not found', id="a-pod-that-does-not-exist"),
    pytest.param("ghost", {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}},
                 "name in URL does not match name in Eviction object", id="names-differ"),
])
def test_an_eviction_is_refused_as_kube_apiserver_refuses_it(kubectl, tmp_path, name, body, error):
    path = tmp_path / "eviction.json"
    path.write_text(json.dumps(body))
    r = kubectl("create", "--raw", f"/api/v1/namespaces/default/pods/{name}/eviction", "-f", str(path), check=False)
    assert r.returncode != 0 and error in r.stderr, r.stderr



def test_the_node_leases_are_renewed_as_a_kubelet_renews_them(kubectl):
    """Every leaseDurationSeconds/4 (10 s): a node lease whose renewTime moves on (also when cordoned)."""
    def renewed():
        lease = json.loads(kubectl("get", "lease", "-n", "kube-node-lease", "local-0", "-o", "json").stdout)
        return lease["spec"]["renewTime"], lease["spec"]["leaseDurationSeconds"]
    first, duration = renewed()
    assert duration == 40
    kubectl("cordon", "local-0")
    try:
        vcctl_server.wait_until(lambda: renewed()[0] > first, "the lease renewed", timeout=90)
    finally:
        kubectl("uncordon", "local-0")
