"""A vcjob whose `spec.volumes[].volumeClaim` the API refuses (kube-apiserver finds the claim invalid, or a
ResourceQuota has no room for it): the job stays Pending with Volcano's PVCError Event, and its retry is a chore —
only a change of the job or of the quota can let the claim in — so `vcctl run` stops as stuck at once and says
why, instead of counting the retries as progress for minutes (the job controller's 15 back-offs)."""
from __future__ import annotations

import pytest

from vclite.api import kinds
from vclite.lib import clock
from vclite.runtime import runtime

NS = "default"


@pytest.fixture
def rt(tmp_path):
    r = runtime.Runtime(clock.VirtualClock(), workdir=tmp_path / "work", run_pods=False)
    r.start()
    yield r
    r.close()


def vcjob(storage: str) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
            "spec": {"minAvailable": 1, "schedulerName": "volcano",
                     "volumes": [{"mountPath": "/scratch", "volumeClaim": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}}],
                     "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                         "restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}}


QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": NS},
         "spec": {"hard": {"persistentvolumeclaims": "0"}}}


@pytest.mark.parametrize("storage, quota, said", [
    ("-5Mi", False, 'spec.resources[storage]: Invalid value: "-5Mi": must be greater than zero'),
    ("1Gi", True, "exceeded quota: q"),
])
def test_a_refused_claim_keeps_the_job_pending_and_its_retry_is_a_chore(rt, storage, quota, said):
    if quota:
        rt.client.create(QUOTA)
        rt.settle()
    rt.client.create(vcjob(storage))
    for _ in range(5):
        rt.step()
    job = rt.client.get(kinds.JOB, NS, "j")
    assert job["status"]["state"]["phase"] == "Pending"
    assert rt.client.list(kinds.PERSISTENTVOLUMECLAIM, NS) == [] and rt.client.list(kinds.PODGROUP, NS) == []
    errors = [e["message"] for e in rt.client.list(kinds.EVENT, NS) if e["reason"] == "PVCError"]
    assert errors and errors[0].startswith("Failed to create PVC, err: ") and said in errors[0], errors
    assert rt.next_timer() is not None   # (the retry is still due: a server keeps trying)
    assert not rt.awaits_progress()
