"""v1 (core) rules: how long a deleted pod gets to stop (the pod registry's CheckGracefulDelete)."""
import pytest

from vclite.api import core


def running_pod(grace=None, phase="Running", node="n1"):
    spec = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": spec, "status": {"phase": phase}}


@pytest.mark.parametrize("obj, requested, grace", [
    pytest.param(running_pod(), None, 30, id="a-node-runs-it-default-30"),
    pytest.param(running_pod(grace=5), None, 5, id="its-terminationGracePeriodSeconds"),
    pytest.param(running_pod(grace=5), 2, 2, id="the-requested-grace"),
    pytest.param(running_pod(grace=5), 0, 0, id="requested-0-at-once"),
    pytest.param(running_pod(), -3, 1, id="negative-reads-as-1"),
    pytest.param(running_pod(phase="Pending"), None, 30, id="bound-not-started-yet"),
    pytest.param(running_pod(node=None), None, 0, id="no-node-at-once"),
    pytest.param(running_pod(phase="Succeeded"), None, 0, id="succeeded-at-once"),
    pytest.param(running_pod(phase="Failed"), 10, 0, id="failed-at-once"),
])
def test_deletion_grace_of_a_pod(obj, requested, grace):
    assert core.deletion_grace(obj, requested) == grace
