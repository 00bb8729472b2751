"""What Kubernetes clients ask of `vcctl server` beyond the kinds vclite runs: list semantics
(resourceVersionMatch), through the official Python client and the real kubectl.

One real server for the module.
"""
import shutil

import pytest

from tests import vcctl_server

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=2,memory=2Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)


@pytest.fixture(scope="module")
def core(server):
    from kubernetes import client, config
    return client.CoreV1Api(config.new_client_from_config(str(server.kubeconfig)))


def test_a_list_with_resource_version_match_exact_answers_that_version(core):
    from kubernetes import client
    body = {"metadata": {"name": "rvm"}, "data": {"k": "1"}}
    first = core.create_namespaced_config_map("default", body)
    at = first.metadata.resource_version
    core.patch_namespaced_config_map("rvm", "default", {"data": {"k": "2"}})
    then = core.list_namespaced_config_map("default", resource_version=at, resource_version_match="Exact")
    assert then.metadata.resource_version == at and [c.data for c in then.items if c.metadata.name == "rvm"] == [
        {"k": "1"}]
    now = core.list_namespaced_config_map("default", resource_version=at, resource_version_match="NotOlderThan")
    assert [c.data for c in now.items if c.metadata.name == "rvm"] == [{"k": "2"}]
    with pytest.raises(client.ApiException) as refused:
        core.list_namespaced_config_map("default", resource_version_match="Exact")
    assert refused.value.status == 422 and "resourceVersionMatch is forbidden unless resourceVersion is provided" \
        in refused.value.body


def test_kubectl_get_raw_of_a_version_the_server_has_not_reached(kubectl):
    r = kubectl("get", "--raw", "/api/v1/configmaps?resourceVersion=99999999&resourceVersionMatch=Exact", check=False)
    assert r.returncode != 0 and "Too large resource version: 99999999" in r.stderr, r.stderr


def test_kubectl_create_service_gets_kube_apiservers_defaults(kubectl):
    import json
    out = json.loads(kubectl("create", "service", "nodeport", "web", "--tcp=80:8080", "-o", "json").stdout)
    spec = out["spec"]
    assert spec["type"] == "NodePort" and spec["sessionAffinity"] == "None"
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]]
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"], spec["internalTrafficPolicy"]) == (
        ["IPv4"], "SingleStack", "Cluster")
    assert spec["ports"][0]["protocol"] == "TCP" and 30000 <= spec["ports"][0]["nodePort"] <= 32767
    # applied again without the assigned fields: they are kept, as kube-apiserver keeps them
    kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
         "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}))
    again = json.loads(kubectl("get", "svc", "web", "-o", "json").stdout)["spec"]
    assert again["clusterIP"] == spec["clusterIP"] and again["ports"][0]["nodePort"] == spec["ports"][0]["nodePort"]
    bad = kubectl("create", "service", "clusterip", "bad", "--tcp=0:80", check=False)
    assert bad.returncode != 0 and "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535" in bad.stderr
    assert kubectl("get", "svc", "bad", check=False).returncode != 0


def test_events_k8s_io_through_the_python_clients_events_v1_api_and_kubectl(server, core, kubectl):
    from kubernetes import client, config, watch
    events = client.EventsV1Api(config.new_client_from_config(str(server.kubeconfig)))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "evp"},
           "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}
    core.create_namespaced_pod("default", pod)
    started = vcctl_server.wait_until(lambda: [e for e in events.list_namespaced_event(
        "default", field_selector="regarding.name=evp").items if e.reason == "Started"], "the pod's Started event")
    ev = started[0]
    assert ev.regarding.kind == "Pod" and ev.note == "Started container main" and ev.deprecated_count == 1
    # (kube-apiserver shows a null eventTime, which this client cannot read)
    assert ev.deprecated_source.component == "kubelet" and ev.event_time is not None
    assert events.read_namespaced_event(ev.metadata.name, "default").note == ev.note
    stream = watch.Watch().stream(events.list_namespaced_event, "default", timeout_seconds=30)
    made = events.create_namespaced_event("default", client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="by-client.1"), event_time="2026-01-01T00:00:00.000000Z",
        reporting_controller="example.com/ctl", reporting_instance="ctl-1", action="Sync", reason="Synced",
        type="Normal", note="from the client", regarding=client.V1ObjectReference(kind="Pod", name="evp",
                                                                                  namespace="default")))
    assert made.note == "from the client"
    seen = next(e["object"] for e in stream if e["object"].metadata.name == "by-client.1")
    assert seen.reporting_controller == "example.com/ctl"
    as_core = core.read_namespaced_event("by-client.1", "default")
    assert (as_core.message, as_core.involved_object.name) == ("from the client", "evp")
    with pytest.raises(client.ApiException) as refused:
        events.create_namespaced_event("default", client.EventsV1Event(
            metadata=client.V1ObjectMeta(name="bad.1"), event_time="2026-01-01T00:00:00.000000Z", reason="X"))
    assert refused.value.status == 422 and "reportingController: Required value" in refused.value.body
    table = kubectl("get", "events.events.k8s.io", "--field-selector", "reason=Synced").stdout
    assert "Synced" in table and "pod/evp" in table and "from the client" in table, table
    assert "Started container main" in kubectl("events", "--for", "pod/evp").stdout


def test_server_side_apply_conflicts_with_the_manager_of_a_kubectl_create(kubectl):
    """kube-apiserver records every write's manager: the field kubectl create set is kubectl-create's."""
    kubectl("create", "configmap", "owned", "--from-literal=a=1")
    config = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned"}, "data": {"a": "2"}}'
    refused = kubectl("apply", "--server-side", "-f", "-", input=config, check=False)
    assert refused.returncode != 0 and 'conflict with "kubectl-create" using v1: .data.a' in refused.stderr, \
        refused.stderr
    kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=config)
    import json
    cm = json.loads(kubectl("get", "cm", "owned", "-o", "json", "--show-managed-fields").stdout)
    assert cm["data"] == {"a": "2"}
    assert {(e["manager"], e["operation"]) for e in cm["metadata"]["managedFields"]} == {("kubectl", "Apply")}


def test_kubectl_apply_then_apply_server_side_of_a_service_does_not_conflict_over_its_defaults(kubectl):
    """(client-side apply owns spec.ports; the server added protocol and targetPort: not a change.)"""
    manifest = ("apiVersion: v1\nkind: Service\nmetadata: {name: both}\nspec:\n  selector: {app: x}\n  ports:\n"
                "  - {name: http, port: 80, targetPort: 8080}\n  - {name: https, port: 443}\n")
    kubectl("apply", "-f", "-", input=manifest)
    assert "unchanged" in kubectl("apply", "-f", "-", input=manifest).stdout
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", input=manifest).stdout


STUBBORN_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: fg}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 5
        containers:
        - name: main
          image: busybox
          command: [sh, -c, "trap '' TERM; sleep 300"]
"""


def test_kubectl_delete_cascade_foreground_keeps_the_vcjob_until_its_pod_is_gone(kubectl):
    import json
    kubectl("apply", "-f", "-", input=STUBBORN_JOB)
    vcctl_server.wait_until(lambda: json.loads(kubectl("get", "pod", "fg-main-0", "-o", "json", check=False).stdout
                                               or "{}").get("status", {}).get("phase") == "Running", "the pod running")
    kubectl("delete", "vcjob", "fg", "--cascade=foreground", "--wait=false")
    job = json.loads(kubectl("get", "vcjob", "fg", "-o", "json").stdout)   # (its pod ignores SIGTERM for 5 s)
    assert "foregroundDeletion" in job["metadata"]["finalizers"] and job["metadata"]["deletionTimestamp"]
    kubectl("wait", "--for=delete", "vcjob/fg", "--timeout=90s", timeout=120)
    assert kubectl("get", "pod", "fg-main-0", check=False).returncode != 0


def test_kubectl_describe_service_shows_the_endpoints_of_its_running_pods(kubectl):
    import json
    kubectl("apply", "-f", "-", input="""\
apiVersion: v1
kind: Pod
metadata: {name: ep-pod, labels: {app: ep}}
spec:
  schedulerName: volcano
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, command: [sleep, "300"], ports: [{containerPort: 18080, name: http}]}
---
apiVersion: v1
kind: Service
metadata: {name: ep}
spec:
  selector: {app: ep}
  ports: [{port: 80, targetPort: http}]
""")
    try:
        vcctl_server.wait_until(lambda: json.loads(kubectl("get", "pod", "ep-pod", "-o", "json").stdout)["status"].get(
            "phase") == "Running", "the pod running")
        vcctl_server.wait_until(lambda: "127.0.0.1:18080" in kubectl("describe", "svc", "ep").stdout,
                                "the endpoint in kubectl describe")
        assert "127.0.0.1:18080" in kubectl("get", "endpoints", "ep").stdout
    finally:
        kubectl("delete", "pod", "ep-pod", "--wait=false")
