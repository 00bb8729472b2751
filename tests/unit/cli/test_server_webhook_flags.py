"""`vcctl server --max-queue-depth N --enable-queue-allocated-pods-check`: Volcano's admission webhook flags
(vc-webhook-manager) on a real server, driven over HTTP."""
import pytest
import yaml

from tests import jobs_yaml, vcctl_server
from vclite.api import kinds
from vclite.kube import client as kube_client
from vclite.lib import errors


def queue(name, parent=None):
    spec = {"weight": 1, **({"parent": parent} if parent else {})}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def test_queue_webhook_flags(tmp_path):
    with vcctl_server.running(tmp_path / "srv", "--nodes", "1x(cpu=4,memory=8Gi)", "--max-queue-depth", "2",
                              "--enable-queue-allocated-pods-check") as server:
        api = kube_client.HttpClient.from_kubeconfig(str(server.kubeconfig))
        api.create(queue("a"))
        api.create(queue("b", parent="a"))
        with pytest.raises(errors.Invalid) as info:
            api.create(queue("c", parent="b"))
        assert "queue c exceeds the maximum allowed depth of 2" in info.value.message
        assert api.list(kinds.QUEUE) and not [q for q in api.list(kinds.QUEUE) if q["metadata"]["name"] == "c"]

        job = yaml.safe_load(jobs_yaml.vcjob("busy", ["sleep", "300"], cpu="1"))
        job["metadata"]["namespace"] = "default"
        job["spec"]["queue"] = "b"
        api.create(job)

        def pods_allocated():
            allocated = (api.get(kinds.QUEUE, "", "b").get("status") or {}).get("allocated") or {}
            return allocated.get("pods") == "1"
        vcctl_server.wait_until(pods_allocated, "queue b's status.allocated to count the pod")
        with pytest.raises(errors.Forbidden) as info:
            api.delete(kinds.QUEUE, "", "b")
        assert "queue b cannot be deleted because it has allocated Pods: 1" in info.value.message
        api.delete(kinds.JOB, "default", "busy")
