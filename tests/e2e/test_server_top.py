"""`kubectl top` against a real `vcctl server`: the metrics API (metrics.k8s.io/v1beta1, as metrics-server
serves it) from what the local executor measures of a pod's processes — a busy one and a sleeping one —
read by the real kubectl and by the official Python client."""
import re
import shutil

import pytest

from tests.e2e.test_server_kubectl import wait_for
from tests.e2e.test_server_portforward import start_pod

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

BUSY = ["python3", "-c", "b = bytearray(48 * 2**20)\nwhile True: pass"]
IDLE = ["sleep", "600"]


@pytest.fixture(scope="module")
def pods(kubectl):
    start_pod(kubectl, "busy", BUSY)
    start_pod(kubectl, "idle", IDLE)
    kubectl("label", "pod", "busy", "app=burn")
    return kubectl


def rows(out: str) -> dict[str, list[str]]:
    lines = out.strip().splitlines()
    return {line.split()[0]: line.split()[1:] for line in lines[1:]}


def millicores(text: str) -> int:
    return int(text.removesuffix("m"))


def mebibytes(text: str) -> int:
    return int(text.removesuffix("Mi"))


def busy_shows(out) -> bool:
    """The busy pod's CPU is clearly above the idle one's (it may get only part of a core on a loaded machine), and
    its sample was taken after its allocation (on a loaded machine one can show the loop's CPU from before it)."""
    got = rows(out.stdout) if out.returncode == 0 else {}
    return "busy" in got and millicores(got["busy"][0]) >= 100 and mebibytes(got["busy"][1]) >= 48


def test_top_pod_shows_what_the_processes_use(pods):
    out = wait_for(pods, ["top", "pod"], busy_shows, "the busy pod's CPU").stdout
    assert out.split("\n")[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    got = rows(out)
    assert set(got) == {"busy", "idle"}
    assert mebibytes(got["busy"][1]) >= 48
    assert millicores(got["idle"][0]) <= 20 and mebibytes(got["idle"][1]) < 48


def test_top_pod_by_container_by_label_and_in_every_namespace(pods):
    by_container = pods("top", "pod", "busy", "--containers").stdout.strip().splitlines()
    assert by_container[0].split() == ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert by_container[1].split()[:2] == ["busy", "main"]
    assert set(rows(pods("top", "pod", "-l", "app=burn").stdout)) == {"busy"}
    assert pods("top", "pod", "-l", "app=nope").stderr.strip() == "No resources found in default namespace."
    assert {"busy", "idle"} <= {line.split()[1] for line in pods("top", "pod", "-A").stdout.splitlines()[1:]}


def test_top_node_is_the_sum_of_its_pods(pods):
    out = wait_for(pods, ["top", "node"], lambda o: o.returncode == 0 and millicores(
        next(iter(rows(o.stdout).values()))[0]) >= 100, "the node's CPU").stdout
    assert out.split("\n")[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    [(name, (cpu, cpu_pct, memory, _))] = rows(out).items()
    assert re.fullmatch(r"\d+%", cpu_pct) and mebibytes(memory) >= 48


def test_a_pod_with_no_metrics_is_not_found_as_metrics_server_says(pods):
    proc = pods("top", "pod", "nope", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'Error from server (NotFound): podmetrics.metrics.k8s.io "default/nope" not found'
    refused = pods("create", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", "-f", "-",
                   input="{}", check=False)
    assert (refused.returncode, refused.stderr.strip()) == (1, "Error from server (MethodNotAllowed): the server "
                                                            "does not allow POST on "
                                                            "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")


def test_the_official_python_client_reads_the_metrics_api(pods, server):
    kubernetes = pytest.importorskip("kubernetes")
    api = kubernetes.client.CustomObjectsApi(kubernetes.config.new_client_from_config(str(server.kubeconfig)))
    listed = api.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods")
    busy = next(i for i in listed["items"] if i["metadata"]["name"] == "busy")
    assert busy["kind"] == "PodMetrics" and busy["window"].endswith("s")
    [container] = busy["containers"]
    assert container["name"] == "main" and container["usage"]["cpu"].endswith("n")
    assert int(container["usage"]["memory"].removesuffix("Ki")) >= 48 * 1024
    nodes = api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
    assert [n["kind"] for n in nodes["items"]] == ["NodeMetrics"]
