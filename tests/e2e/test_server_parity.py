"""kube-apiserver parity of `vcctl server`, through the real kubectl and the official Python client:
the `default/kubernetes` Service and its Endpoints, ServiceAccounts (`kubectl get|create sa`,
`kubectl create token`, a pod naming a missing one refused), watches of Endpoints, and status and
Service writes kube-apiserver refuses.

One real server for the module.
"""
import base64
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from tests import vcctl_server

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

WEB_POD = """apiVersion: v1
kind: Pod
metadata: {name: w1, labels: {app: web}}
spec:
  schedulerName: volcano
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "sleep 600"]
    ports: [{containerPort: 8080}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("server"), "--nodes", "1x(cpu=2,memory=2Gi)") as srv:
        yield srv
        vcctl_server.stop_cleanly(srv)


@pytest.fixture(scope="module")
def core(server):
    from kubernetes import client, config
    return client.CoreV1Api(config.new_client_from_config(str(server.kubeconfig)))


def rows(text):
    return [line.split() for line in text.strip().splitlines()]


def test_the_kubernetes_service_and_its_endpoints_name_the_server(kubectl, server):
    port = int(server.url.rsplit(":", 1)[1])
    table = {r[0]: r[1:] for r in rows(kubectl("get", "svc").stdout)[1:]}
    assert table["kubernetes"][:4] == ["ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    assert rows(kubectl("get", "endpoints", "kubernetes").stdout)[1][1] == f"127.0.0.1:{port}"
    described = kubectl("describe", "svc", "kubernetes").stdout
    assert f"127.0.0.1:{port}" in described and "component=apiserver" in described
    uid = json.loads(kubectl("get", "svc", "kubernetes", "-o", "json").stdout)["metadata"]["uid"]
    kubectl("delete", "svc", "kubernetes")
    again = vcctl_server.wait_until(lambda: kubectl("get", "svc", "kubernetes", "-o", "json", check=False).stdout,
                                    "the kubernetes Service made again")
    assert json.loads(again)["metadata"]["uid"] != uid
    # a change of its ports (kubectl edit, patch) is undone, as the bootstrap controller reconciles it
    kubectl("patch", "svc", "kubernetes", "--type=merge", "-p",
            '{"spec":{"ports":[{"name":"https","port":8443,"targetPort":1234,"protocol":"TCP"}]}}')
    vcctl_server.wait_until(lambda: kubectl("get", "svc", "kubernetes", "-o", "jsonpath={.spec.ports[0].port}"
                                            ).stdout == "443", "the kubernetes Service's port put back")


def test_service_accounts_and_tokens(kubectl):
    names = [r[1] for r in rows(kubectl("get", "sa", "-A").stdout)[1:]]
    assert set(names) == {"default"}   # (one per namespace)
    assert kubectl("create", "sa", "ci").stdout.strip() == "serviceaccount/ci created"   # (a protobuf body)
    assert rows(kubectl("get", "sa", "ci").stdout)[0] == ["NAME", "SECRETS", "AGE"]
    token = kubectl("create", "token", "ci", "--duration=15m").stdout.strip()
    body = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert claims["sub"] == "system:serviceaccount:default:ci" and claims["exp"] - claims["iat"] == 900
    short = kubectl("create", "token", "ci", "--duration=1m", check=False)
    assert short.returncode != 0 and "may not specify a duration less than 10 minutes" in short.stderr
    missing = kubectl("create", "token", "nobody", check=False)
    assert missing.returncode != 0 and 'serviceaccounts "nobody" not found' in missing.stderr


def test_a_pod_gets_the_default_account_and_one_naming_a_missing_account_is_refused(kubectl):
    refused = kubectl("run", "p-missing", "--image=busybox", "--overrides",
                      '{"spec": {"serviceAccountName": "nobody", "schedulerName": "volcano"}}', "--", "true",
                      check=False)
    assert refused.returncode != 0 and ('pods "p-missing" is forbidden: error looking up service account '
                                        'default/nobody: serviceaccount "nobody" not found') in refused.stderr
    assert kubectl("get", "pod", "p-missing", check=False).returncode != 0
    kubectl("run", "p-default", "--image=busybox", "--overrides", '{"spec": {"schedulerName": "volcano"}}',
            "--", "true")
    spec = json.loads(kubectl("get", "pod", "p-default", "-o", "json").stdout)["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"


def test_kubectl_watches_endpoints(kubectl, tmp_path):
    out = tmp_path / "watch.txt"
    with open(out, "w") as fh:
        proc = subprocess.Popen([*kubectl.argv, "get", "endpoints", "-w"], stdout=fh, stderr=subprocess.STDOUT,
                                text=True)
        try:
            vcctl_server.wait_until(lambda: "kubernetes" in out.read_text(), "the watch's first rows")
            kubectl("create", "service", "clusterip", "web", "--tcp=80:8080")
            kubectl("apply", "-f", "-", input=WEB_POD)
            vcctl_server.wait_until(lambda: "127.0.0.1:8080" in out.read_text(), "web's address in the watch")
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    web = [r for r in rows(out.read_text()) if r[0] == "web"]
    assert web[0][1] == "<none>" and ["web", "127.0.0.1:8080"] in [r[:2] for r in web]


def test_the_python_client_watches_endpoints(core):
    from kubernetes import watch
    core.create_namespaced_service("default", {"metadata": {"name": "api"}, "spec": {
        "selector": {"app": "web"}, "ports": [{"port": 81, "targetPort": 8080}]}})
    listed = core.list_namespaced_endpoints("default")
    seen: list = []

    def follow():
        w = watch.Watch()
        for ev in w.stream(core.list_namespaced_endpoints, "default",
                           resource_version=listed.metadata.resource_version, timeout_seconds=20):
            seen.append((ev["type"], ev["object"].metadata.name))
            if ("DELETED", "api") in seen:
                w.stop()
    thread = threading.Thread(target=follow)
    thread.start()
    time.sleep(0.5)
    core.delete_namespaced_service("api", "default")
    thread.join(30)
    assert ("DELETED", "api") in seen


@pytest.mark.parametrize("args, words", [
    pytest.param(["pod", "p-still", "--subresource=status", "-p", '{"status": {"phase": "Done"}}'],
                 'status.phase: Unsupported value: "Done"', id="pod-phase"),
    pytest.param(["node", "NODE", "--subresource=status", "-p", '{"status": {"capacity": {"cpu": "-1"}}}'],
                 'status.capacity[cpu]: Invalid value: "-1": must be greater than or equal to 0', id="node-capacity"),
    pytest.param(["svc", "kubernetes", "--subresource=status", "-p",
                  '{"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}'],
                 "may only be used when `spec.type` is 'LoadBalancer'", id="service-ingress"),
    pytest.param(["svc", "kubernetes", "--type=merge", "-p", '{"spec": {"clusterIPs": ["10.96.0.9"]}}'],
                 "first value must match `clusterIP`", id="cluster-ips"),
    pytest.param(["svc", "kubernetes", "--type=merge", "-p",
                  '{"spec": {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": '
                  '{"timeoutSeconds": 100000}}}}'],
                 "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 100000", id="affinity"),
])
def test_kubectl_patches_kube_apiserver_refuses(kubectl, args, words):
    node = rows(kubectl("get", "nodes").stdout)[1][0]
    args = [node if a == "NODE" else a for a in args]
    if args[0] == "pod":   # (for no scheduler here: it stays Pending, nothing else writes it)
        kubectl("run", "p-still", "--image=busybox", "--", "true")
    before = kubectl("get", *args[:2], "-o", "json").stdout
    r = kubectl("patch", *args, check=False)
    assert r.returncode != 0 and words in r.stderr, r.stderr
    after = json.loads(kubectl("get", *args[:2], "-o", "json").stdout)
    assert after["metadata"]["resourceVersion"] == json.loads(before)["metadata"]["resourceVersion"]


def pod_json(kubectl, name):
    return json.loads(kubectl("get", "pod", name, "-o", "json").stdout)


def test_a_pods_qos_class_is_kept_by_a_status_write_without_it_and_may_not_change(kubectl):
    kubectl("run", "p-qos", "--image=busybox", "--", "true")   # (stays Pending: no default scheduler)
    assert pod_json(kubectl, "p-qos")["status"]["qosClass"] == "BestEffort"
    kubectl("patch", "pod", "p-qos", "--subresource=status", "--type=merge", "-p",
            '{"status": {"qosClass": null, "conditions": [{"type": "example.com/warm", "status": "Maybe"}]}}')
    status = pod_json(kubectl, "p-qos")["status"]
    assert status["qosClass"] == "BestEffort" and status["conditions"][0]["status"] == "Maybe", status
    r = kubectl("patch", "pod", "p-qos", "--subresource=status", "-p", '{"status": {"qosClass": "Guaranteed"}}',
                check=False)
    assert r.returncode != 0 and 'status.qosClass: Invalid value: "Guaranteed": field is immutable' in r.stderr, r


def edit(kubectl, tmp_path, name, sed):
    """`kubectl edit pod <name>` with an editor that applies a sed expression to the file."""
    return subprocess.run([*kubectl.argv, "edit", "pod", name], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "KUBE_EDITOR": f"sed -i -e '{sed}'"})


def test_kubectl_changes_a_pods_image_labels_and_annotations(kubectl, tmp_path):
    kubectl("run", "p-upd", "--image=busybox:1.36", "--", "sleep", "600")   # (stays Pending: no default scheduler)
    assert kubectl("set", "image", "pod/p-upd", "p-upd=busybox:1.37").stdout.strip() == "pod/p-upd image updated"
    kubectl("label", "pod", "p-upd", "tier=web")
    kubectl("annotate", "pod", "p-upd", "note=hello")
    r = edit(kubectl, tmp_path, "p-upd", "s/image: busybox:1.37/image: busybox:1.38/")
    assert r.returncode == 0 and "pod/p-upd edited" in r.stdout, r.stderr
    pod = pod_json(kubectl, "p-upd")
    assert pod["spec"]["containers"][0]["image"] == "busybox:1.38"
    assert pod["metadata"]["labels"]["tier"] == "web" and pod["metadata"]["annotations"]["note"] == "hello"


@pytest.mark.parametrize("how, args, words", [
    pytest.param("patch", ["--type=merge", "-p", '{"spec": {"restartPolicy": "Never"}}'],
                 '+ spec.restartPolicy: "Never"', id="restart-policy"),
    pytest.param("patch", ["--type=merge", "-p", '{"spec": {"nodeName": "elsewhere"}}'],
                 '+ spec.nodeName: "elsewhere"', id="node-name"),
    pytest.param("patch", ["--type=json", "-p", '[{"op": "add", "path": "/spec/containers/-", '
                                                 '"value": {"name": "two", "image": "busybox"}}]'],
                 "spec.containers: Forbidden: pod updates may not add or remove containers", id="container-added"),
    pytest.param("replace", [], "- spec.serviceAccountName: \"default\"", id="replace-without-account"),
    pytest.param("edit", [], '+ spec.containers[0].args[1]: "700"', id="edit-command"),
    pytest.param("apply", ["--server-side", "--force-conflicts"], '+ spec.containers[0].args[1]: "700"',
                 id="server-side-apply"),
])
def test_kubectl_cannot_change_the_rest_of_a_pods_spec(kubectl, tmp_path, request, how, args, words):
    name = "p-fixed-" + request.node.callspec.id
    kubectl("run", name, "--image=busybox:1.36", "--", "sleep", "600")
    before = pod_json(kubectl, name)
    if how == "patch":
        r = kubectl("patch", "pod", name, *args, check=False)
    elif how == "apply":
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                    "spec": {"containers": [{"name": name, "image": "busybox:1.36", "args": ["sleep", "700"]}]}}
        r = kubectl("apply", *args, "-f", "-", input=json.dumps(manifest), check=False)
    elif how == "replace":
        body = {**before, "spec": {k: v for k, v in before["spec"].items()
                                   if k not in ("serviceAccountName", "serviceAccount")}}
        r = kubectl("replace", "-f", "-", input=json.dumps(body), check=False)
    else:   # (kubectl edit keeps the refused file, the server's message at its head)
        r = edit(kubectl, tmp_path, name, "s/- \"600\"/- \"700\"/")
        assert f'pods "{name}" is invalid' in r.stderr, r.stderr
        kept = r.stderr.split('A copy of your changes has been stored to "')[1].split('"')[0]
        r.stderr = open(kept).read()
    assert r.returncode != 0, r.stdout
    assert ("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
            "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
            "negative)" in r.stderr or "add or remove containers" in words), r.stderr
    assert words in r.stderr, r.stderr
    assert pod_json(kubectl, name)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_the_system_namespaces_are_there_and_kept(kubectl):
    names = [r[0] for r in rows(kubectl("get", "ns").stdout)[1:]]
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= set(names)
    assert rows(kubectl("get", "sa", "-n", "kube-system").stdout)[1][0] == "default"
    for ns in ("kube-system", "kube-public", "default"):
        r = kubectl("delete", "ns", ns, check=False)
        assert r.returncode != 0 and f'namespaces "{ns}" is forbidden: this namespace may not be deleted' in r.stderr
    assert rows(kubectl("get", "ns", "kube-system").stdout)[1][1] == "Active"


def test_a_deleted_kube_node_lease_comes_back_with_the_next_node_lease(kubectl):
    uid = json.loads(kubectl("get", "ns", "kube-node-lease", "-o", "json").stdout)["metadata"]["uid"]
    kubectl("delete", "ns", "kube-node-lease", timeout=120)
    again = vcctl_server.wait_until(lambda: kubectl("get", "ns", "kube-node-lease", "-o", "json", check=False).stdout,
                                    "kube-node-lease made again")
    back = json.loads(again)
    assert back["metadata"]["uid"] != uid and back["status"]["phase"] == "Active"
    assert kubectl("get", "sa", "default", "-n", "kube-node-lease").returncode == 0


def test_a_running_pods_labels_and_image_change_and_it_keeps_running(kubectl):
    kubectl("apply", "-f", "-", input=WEB_POD.replace("name: w1", "name: w-run"))
    vcctl_server.wait_until(lambda: pod_json(kubectl, "w-run").get("status", {}).get("phase") == "Running",
                            "w-run running")
    kubectl("label", "pod", "w-run", "tier=web")
    kubectl("set", "image", "pod/w-run", "c=busybox:1.37")
    r = kubectl("patch", "pod", "w-run", "--type=merge", "-p", '{"spec": {"nodeName": "elsewhere"}}', check=False)
    assert r.returncode != 0 and "pod updates may not change fields other than" in r.stderr, r.stderr
    pod = pod_json(kubectl, "w-run")
    assert pod["metadata"]["labels"]["tier"] == "web" and pod["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert pod["status"]["phase"] == "Running" and pod["spec"]["nodeName"] != "elsewhere"
    kubectl("delete", "pod", "w-run", "--wait=false")
