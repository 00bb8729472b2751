"""The vcjob controller's per-job caches follow the job's generation: a spec change is seen at once."""
import copy

from vclite.apiserver import inprocess
from vclite.controllers.job import actions
from vclite.lib import clock

JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
       "spec": {"minAvailable": 1, "tasks": [{"name": "t", "replicas": 2, "template": {"spec": {
           "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}]}}


def test_spec_summary_and_podgroup_spec_are_recomputed_for_a_new_generation():
    clk = clock.VirtualClock()
    client = inprocess.new_client(clk)
    ctx = actions.Context(client, clk)
    job = client.create(JOB)
    first = ctx.summary(job)
    assert ctx.summary(job) is first and first.total == 2            # cached for the same generation
    assert ctx.wanted_podgroup_spec(job, {})["minTaskMember"] == {"t": 2}
    changed = copy.deepcopy(job)   # (what create returns is the stored object: read-only)
    changed["spec"]["tasks"][0].update(replicas=3, minAvailable=3)   # (admission defaulted minAvailable to 2)
    updated = client.update(changed)
    assert updated["metadata"]["generation"] == job["metadata"]["generation"] + 1
    assert ctx.summary(updated).total == 3                           # the new spec, not the cached one
    assert ctx.wanted_podgroup_spec(updated, {})["minTaskMember"] == {"t": 3}
