"""The metrics API `kubectl top` reads (httpserver/usagemetrics.py): metrics-server's objects and quantities,
from what the executor measured."""
import pytest

from vclite.executor.usage import ContainerUsage
from vclite.httpserver import routes, usagemetrics

NOW = "2026-01-01T00:00:00Z"


def pod(ns, name, node="n1", containers=("a", "b"), labels=None):
    return {"metadata": {"namespace": ns, "name": name, **({"labels": labels} if labels else {})},
            "spec": {"nodeName": node, "containers": [{"name": c} for c in containers]}}


@pytest.mark.parametrize("cores, resident, seconds, cpu, memory, window", [
    pytest.param(0.25, 10 * 2**20, 12.5, "250000000n", "10240Ki", "12.5s", id="quarter-core"),
    pytest.param(0.0, 1023, 0.0, "0n", "0Ki", "0s", id="nothing"),
    pytest.param(1.5, 2**30, 61.0, "1500000000n", "1048576Ki", "61s", id="over-a-minute-in-seconds"),
    pytest.param(-0.1, -5, -1.0, "0n", "0Ki", "0s", id="never-negative"),
])
def test_quantities_as_metrics_server_writes_them(cores, resident, seconds, cpu, memory, window):
    assert (usagemetrics.cpu_quantity(cores), usagemetrics.memory_quantity(resident),
            usagemetrics.duration(seconds)) == (cpu, memory, window)


PODS = [pod("default", "p1", labels={"app": "x"}), pod("default", "idle"), pod("other", "p2", node="n2"),
        pod("default", "p3", containers=("a",))]
NODES = [{"metadata": {"name": n}} for n in ("n1", "n2", "n3")]
USED = {"default/p1": {"b": ContainerUsage(0.5, 2048, 3.0), "a": ContainerUsage(0.25, 1024, 4.0)},
        "other/p2": {"a": ContainerUsage(1.0, 4096, 2.0)},
        "default/p3": {"a": ContainerUsage(0.0, 0, 1.0), "sidecar": ContainerUsage(0.0, 1024, 1.0)}}


@pytest.mark.parametrize("route, names", [
    pytest.param(routes.Usage("pods", "default", None), ["p1", "p3"], id="a-namespace-running-pods-only"),
    pytest.param(routes.Usage("pods", None, None), ["p1", "p2", "p3"], id="all-namespaces"),
    pytest.param(routes.Usage("pods", "default", "p1"), ["p1"], id="one"),
    pytest.param(routes.Usage("pods", "default", "idle"), [], id="a-pod-not-running"),
    pytest.param(routes.Usage("pods", "other", "p1"), [], id="another-namespace"),
    pytest.param(routes.Usage("nodes", None, None), ["n1", "n2", "n3"], id="nodes"),
    pytest.param(routes.Usage("nodes", None, "n2"), ["n2"], id="a-node"),
])
def test_what_a_route_selects(route, names):
    items = usagemetrics.select(route, PODS, NODES, USED, NOW)
    assert [i["metadata"]["name"] for i in items] == names


def test_a_pods_metrics_its_containers_in_the_pods_order():
    [got] = usagemetrics.select(routes.Usage("pods", "default", "p1"), PODS, NODES, USED, NOW)
    assert got == {"kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                   "metadata": {"name": "p1", "namespace": "default", "creationTimestamp": NOW,
                                "labels": {"app": "x"}},
                   "timestamp": NOW, "window": "4s",
                   "containers": [{"name": "a", "usage": {"cpu": "250000000n", "memory": "1Ki"}},
                                  {"name": "b", "usage": {"cpu": "500000000n", "memory": "2Ki"}}]}


def test_a_nodes_usage_is_the_sum_of_its_pods():
    got = {n["metadata"]["name"]: n["usage"] for n in usagemetrics.select(routes.Usage("nodes", None, None), PODS,
                                                                             NODES, USED, NOW)}
    assert got == {"n1": {"cpu": "750000000n", "memory": "4Ki"}, "n2": {"cpu": "1000000000n", "memory": "4Ki"},
                   "n3": {"cpu": "0n", "memory": "0Ki"}}


def test_not_found_in_metrics_servers_words():
    assert usagemetrics.not_found(routes.Usage("pods", "default", "x")) == ("podmetrics", "default/x")
    assert usagemetrics.not_found(routes.Usage("nodes", None, "n")) == ("nodemetrics", "n")
